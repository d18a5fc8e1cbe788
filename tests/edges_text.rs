//! Text no spec should hold: the empty string, NUL and control characters,
//! non-ASCII letters, digits and spaces, unsupported constructs nested deep,
//! and inputs of a megabyte. Each gets a named error with a span on character
//! boundaries inside the input, or the layout the text means.
//!
//! The megabyte inputs print how long `parse` took (`--nocapture` shows it);
//! nothing asserts on time, since machines are noisy, but a quadratic parser
//! would take minutes here instead of milliseconds.

use std::time::Instant;

use xla_layout::{parse, ErrorKind, ParseError};

/// The first error of `spec`, its kind and the text its span covers, after
/// checking every span lies inside the input on character boundaries.
fn first_error(spec: &str) -> (ErrorKind, &str) {
    let err = parse(spec).expect_err(spec);
    check_spans(spec, &err);
    (*err.first().kind(), &spec[err.first().span().range()])
}

fn check_spans(spec: &str, err: &ParseError) {
    for e in err {
        let s = e.span();
        assert!(
            s.start <= s.end && s.end <= spec.len(),
            "{s:?} in {} bytes",
            spec.len()
        );
        assert!(
            spec.is_char_boundary(s.start) && spec.is_char_boundary(s.end),
            "{s:?}"
        );
    }
}

/// The kind `Expected { expected, .. }`, whatever was found.
fn expects(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Expected { expected, .. } => expected,
        other => panic!("not `Expected`: {other:?}"),
    }
}

#[test]
fn empty_and_blank_input() {
    for spec in ["", "   ", "\n\t\r "] {
        let (kind, text) = first_error(spec);
        assert_eq!(expects(kind), "an element type such as `f32`");
        assert_eq!(text, "");
        assert_eq!(
            kind.to_string(),
            "expected an element type such as `f32`, found end of input"
        );
    }
}

#[test]
fn nul_bytes() {
    let (kind, text) = first_error("\0");
    assert_eq!(
        (expects(kind), text),
        ("an element type such as `f32`", "\0")
    );
    let (kind, text) = first_error("f32\0[2]");
    assert_eq!((expects(kind), text), ("`[` and the dims", "\0"));
    let (kind, text) = first_error("f32[2\0]");
    assert_eq!((expects(kind), text), ("`,` or `]`", "\0"));
    let (kind, text) = first_error("f32[2]{0}\0");
    assert_eq!((expects(kind), text), ("end of input", "\0"));
    // The excerpt shows control characters as spaces, keeping it one line.
    let spec = "f32[2]\0\u{1b}[31m\n";
    let report = parse(spec).unwrap_err().report(spec).to_string();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 3, "{report:?}");
    assert_eq!(lines[1], "  | f32[2]  [31m ");
    assert_eq!(lines[2], "  |       ^");
}

#[test]
fn messages_escape_control_characters() {
    // rustc and terminals receive the message: a raw ESC or NUL in it can
    // restyle the terminal or cut the text, as the excerpt already avoids.
    for spec in ["f32[2]\0", "f32[2]\u{1b}[31m", "f32[\u{7}2]"] {
        let report = parse(spec).unwrap_err().report(spec).to_string();
        assert!(
            !report.contains(|c: char| c.is_control() && c != '\n'),
            "{report:?}"
        );
    }
}

#[test]
fn control_characters() {
    for c in ['\u{1}', '\u{7}', '\u{8}', '\u{7f}', '\u{9b}'] {
        let spec = format!("f32[{c}2]");
        let (kind, text) = first_error(&spec);
        assert_eq!(expects(kind), "a dim size or `]`", "{c:?}");
        assert_eq!(text, c.to_string());
    }
    // White space is Unicode's: tab, line feed, vertical tab, form feed,
    // carriage return, NEL, no-break and ideographic spaces all separate tokens.
    for c in [
        '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{85}', '\u{a0}', '\u{3000}',
    ] {
        let spec =
            format!("{c}f32{c}[{c}2{c},{c}3{c}]{c}{{{c}0{c},1{c}:{c}T{c}({c}2{c},{c}2{c}){c}}}{c}");
        assert_eq!(
            parse(&spec).map(|l| l.to_string()),
            Ok("f32[2,3]{0,1:T(2,2)}".into()),
            "{c:?}"
        );
    }
}

#[test]
fn non_ascii_text() {
    // Letters, digits and signs from outside ASCII are never read as the
    // ASCII they look like; the span covers the whole character.
    let cases = [
        ("é32[2]", "an element type such as `f32`", "é"),
        ("f32[２]", "a dim size or `]`", "２"),
        ("f32[٣]", "a dim size or `]`", "٣"),
        (
            "f32[2]{0:Ｔ(2)}",
            "an attribute (`T`, `L`, `E`, `S`) or `}`",
            "Ｔ",
        ),
        ("f32[2]{0:T(2)}😀", "end of input", "😀"),
        ("f32[\u{200b}2]", "a dim size or `]`", "\u{200b}"),
        (
            "\u{feff}f32[2]",
            "an element type such as `f32`",
            "\u{feff}",
        ),
        (
            "f32[2]{0:T(2)\u{202e}}",
            "an attribute (`T`, `L`, `E`, `S`) or `}`",
            "\u{202e}",
        ),
        ("f32[2]{0:T(2\u{2212}1)}", "`,` or `)`", "\u{2212}"),
    ];
    for (spec, want, text) in cases {
        let (kind, got) = first_error(spec);
        assert_eq!((expects(kind), got), (want, text), "{spec}");
    }
    // A non-ASCII word is one token: the error shows the whole (truncated) word.
    let spec = format!("f32{}[2]", "é".repeat(40));
    let (kind, text) = first_error(&spec);
    assert_eq!(expects(kind), "`[` and the dims");
    assert_eq!(text, "é");
}

#[test]
fn unknown_and_non_array_types() {
    assert!(matches!(
        first_error("f33[2]").0,
        ErrorKind::UnknownElementType { .. }
    ));
    assert!(matches!(
        first_error("token[]").0,
        ErrorKind::NotAnArray { .. }
    ));
    assert!(matches!(
        first_error("OPAQUE[]").0,
        ErrorKind::NotAnArray { .. }
    ));
    assert_eq!(first_error("(f32[2], f32[3])"), (ErrorKind::Tuple, "("));
    assert_eq!(first_error("f32[2], f32[3]"), (ErrorKind::Tuple, ","));
    // A type name of a megabyte is far from every name: no suggestion, no slowness.
    let name = "f".repeat(1 << 20);
    let spec = format!("{name}[2]");
    match first_error(&spec).0 {
        ErrorKind::UnknownElementType {
            name: shown,
            suggestion,
        } => {
            assert_eq!(suggestion, None);
            assert_eq!(shown.to_string(), format!("{}...", "f".repeat(24)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn dynamic_and_negative_dims() {
    assert_eq!(first_error("f32[?]"), (ErrorKind::UnboundedDim, "?"));
    let bounded = xla_layout::parse("f32[<=5]").unwrap();
    assert!(bounded.is_dynamic_dim(0));
    assert_eq!(bounded.to_string(), "f32[<=5]{0}");
    assert!(matches!(
        first_error("f32[<=18446744073709551616]").0,
        ErrorKind::IntegerTooLarge {
            what: "dim bound",
            ..
        }
    ));
    assert_eq!(
        first_error("f32[-18446744073709551616]"),
        (ErrorKind::NegativeDim, "-18446744073709551616")
    );
    // Whatever the magnitude, the sign is what is wrong.
    let spec = "f32[-340282366920938463463374607431768211456]";
    assert_eq!(first_error(spec).0, ErrorKind::NegativeDim);
}

#[test]
fn unsupported_attributes_nested_deep() {
    for (attr, name) in [
        ("P", "P(...)"),
        ("SC", "SC(...)"),
        ("M", "M(...)"),
        ("D", "D(...)"),
        ("#", "#(...)"),
        ("*", "*(...)"),
    ] {
        for depth in [1, 10_000] {
            let group = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
            let spec = format!("f32[2]{{0:{attr}{group}}}");
            let (kind, text) = first_error(&spec);
            assert!(
                matches!(kind, ErrorKind::UnsupportedAttribute { name: n, .. } if n == name),
                "{kind:?}"
            );
            assert_eq!(text, format!("{attr}{group}"));
        }
    }
    // Unclosed: the group runs to the end of the input.
    let spec = format!("f32[2]{{0:P{}", "(".repeat(10_000));
    let (kind, text) = first_error(&spec);
    assert_eq!((expects(kind), text), ("`)`", ""));
    // A rejected attribute does not hide the mistakes after it.
    let err = parse("f32[2]{0:P((1))L(0)}").unwrap_err();
    assert_eq!(err.len(), 2);
    assert_eq!(
        *err.iter().nth(1).unwrap().kind(),
        ErrorKind::TailAlignmentZero
    );
}

/// Parses `spec`, prints the time it took, and returns the answer.
fn timed(label: &str, spec: &str) -> Result<xla_layout::Layout, ParseError> {
    let started = Instant::now();
    let result = parse(spec);
    println!(
        "{label:<40} {:>8} bytes  {:>10.2?}",
        spec.len(),
        started.elapsed()
    );
    if let Err(e) = &result {
        check_spans(spec, e);
    }
    result
}

#[test]
fn megabyte_inputs_answer_quickly() {
    const MB: usize = 1 << 20;
    let pad = " ".repeat(MB);
    assert!(timed("white space around a spec", &format!("{pad}f32[2]{pad}")).is_ok());
    let r = timed("garbage after a spec", &format!("f32[2]{}", "x".repeat(MB)));
    assert_eq!(expects(*r.unwrap_err().first().kind()), "end of input");
    let r = timed("one megabyte number", &format!("f32[{}]", "7".repeat(MB)));
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::IntegerTooLarge { .. }
    ));
    let r = timed("dims", &format!("f32[{}]", vec!["1"; MB / 2].join(",")));
    assert_eq!(
        *r.unwrap_err().first().kind(),
        ErrorKind::RankTooLarge { limit: 16 }
    );
    let r = timed(
        "minor_to_major entries",
        &format!("f32[2]{{{}}}", vec!["0"; MB / 2].join(",")),
    );
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::MinorToMajorLength { rank: 1, .. }
    ));
    let r = timed(
        "tiling levels",
        &format!("f32[2]{{0:T{}}}", "(1)".repeat(MB / 3)),
    );
    assert_eq!(
        *r.unwrap_err().first().kind(),
        ErrorKind::TooManyLevels { limit: 8 }
    );
    let r = timed(
        "empty tiles",
        &format!("f32[2]{{0:T{}}}", "()".repeat(MB / 2)),
    );
    assert_eq!(
        *r.unwrap_err().first().kind(),
        ErrorKind::TooManyLevels { limit: 8 }
    );
    let r = timed(
        "repeated attributes",
        &format!("f32[2]{{0:{}}}", "L(1)".repeat(MB / 4)),
    );
    let err = r.unwrap_err();
    assert_eq!(err.len(), xla_layout::MAX_ERRORS);
    assert_eq!(
        *err.first().kind(),
        ErrorKind::DuplicateAttribute { name: "L" }
    );
    let r = timed(
        "nested unsupported attribute",
        &format!("f32[2]{{0:P{}{}}}", "(".repeat(MB / 2), ")".repeat(MB / 2)),
    );
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::UnsupportedAttribute { name: "P(...)", .. }
    ));
    let r = timed(
        "many unsupported attributes",
        &format!("f32[2]{{0:{}}}", "P(1)".repeat(MB / 4)),
    );
    assert_eq!(r.unwrap_err().len(), xla_layout::MAX_ERRORS);
    let r = timed(
        "attribute letters",
        &format!("f32[2]{{0:{}}}", "T".repeat(MB)),
    );
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::Expected { .. }
    ));
    let r = timed("non-ASCII", &"é".repeat(MB / 2));
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::Expected { .. }
    ));
    let r = timed("NUL bytes", &format!("f32[2]{}", "\0".repeat(MB)));
    assert!(matches!(
        r.unwrap_err().first().kind(),
        ErrorKind::Expected { .. }
    ));
    // The caret excerpt of a megabyte spec is rendered in one pass too.
    let spec = format!("f32[2]{{0:L(0)}}{}", " ".repeat(MB));
    let started = Instant::now();
    let report = parse(&spec).unwrap_err().report(&spec).to_string();
    println!(
        "{:<40} {:>8} bytes  {:>10.2?}",
        "report of a megabyte spec",
        spec.len(),
        started.elapsed()
    );
    assert!(report.starts_with("error: `L(0)` is not an alignment"));
}
