//! What a person sees of a bad spec after `?`: `main` returning
//! `Box<dyn Error>` prints the error's `Debug`, so it must show the mistakes
//! found and nothing else, and the caret report must be one step away.

use std::error::Error;

use xla_layout::{parse, Layout, ParseError, RelayoutError, SpecError};

fn via_question_mark(spec: &str) -> Result<Layout, Box<dyn Error>> {
    Ok(parse(spec)?)
}

fn debug_of(spec: &str) -> String {
    format!(
        "{:?}",
        via_question_mark(spec).expect_err("the spec is invalid")
    )
}

#[test]
fn debug_shows_only_the_mistakes_found() {
    let one = debug_of("f32[3,5]{1,0:T(2,0)}");
    assert!(one.contains("TileDimZero { level: 1 }"), "{one}");
    // The unused slots of the fixed-capacity array must not show.
    assert!(!one.contains("TailAlignmentZero"), "{one}");
    assert_eq!(one.matches("kind:").count(), 1, "{one}");

    let two = debug_of("f32[3,5]{1,1:T(0,2)}");
    assert_eq!(two.matches("kind:").count(), 2, "{two}");
    assert!(!two.contains("TailAlignmentZero"), "{two}");

    // A real `L(0)` mistake still shows, once.
    let tail = debug_of("f32[2]{0:L(0)}");
    assert_eq!(tail.matches("TailAlignmentZero").count(), 1, "{tail}");
}

#[test]
fn display_reads_as_a_sentence() {
    let err = via_question_mark("f32[3,5]{1,0:T(2,0)}").unwrap_err();
    assert_eq!(
        err.to_string(),
        "tile dim `0` at level 1 must be positive or `*` (at byte 17)"
    );
    // Reporters that walk `source()` would repeat the message.
    assert!(err.source().is_none());
}

/// The README's one line: the caret report through `?`.
fn load(spec: String) -> Result<Layout, Box<dyn Error>> {
    Ok(parse(&spec).map_err(|e| e.with_spec(spec))?)
}

#[test]
fn with_spec_prints_the_caret_report() {
    let err = load("f32[3,5]{1,1:T(0,2)}".to_owned()).unwrap_err();
    let expected =
        "dim `1` appears twice in `minor_to_major`; each dim must appear exactly once\n  \
                    | f32[3,5]{1,1:T(0,2)}\n  \
                    |            ^\n\
                    tile dim `0` at level 1 must be positive or `*`\n  \
                    | f32[3,5]{1,1:T(0,2)}\n  \
                    |                ^";
    assert_eq!(err.to_string(), expected);
    assert_eq!(format!("{err:?}"), expected);
    assert!(load("f32[3,5]{1,0:T(2,2)}".to_owned()).is_ok());
}

#[test]
fn every_error_type_is_a_std_error() {
    fn is_error<E: Error + Send + Sync + 'static>() {}
    is_error::<ParseError>();
    is_error::<xla_layout::Error>();
    is_error::<RelayoutError>();
    is_error::<xla_layout::render::SliceError>();
    is_error::<SpecError<String>>();
    is_error::<SpecError<&'static str>>();
}
