//! The macro's expansion, in process, on the hostile-input generator's specs.
//!
//! A proc-macro crate exports nothing but macros, so these are unit tests
//! calling [`expand`](crate::expand::expand) directly, with the tokens the
//! facade's `layout!` passes (`$crate; ...`). The generator and mutator are
//! the facade tests' own (`tests/common/specgen.rs`), so `parse` and the macro
//! see the same inputs. Whatever the input, the expansion must not panic, and
//! it must agree with `layout_runtime::parse` on whether the spec is valid:
//! a valid spec expands to code with no `compile_error!`, an invalid one to
//! `compile_error!` and nothing that would raise a second error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::expand::expand;

#[path = "../../tests/common/rng.rs"]
mod rng;
#[path = "../../tests/common/specgen.rs"]
#[allow(dead_code)]
mod specgen;

use specgen::{generate, mutate, Rng};

/// Inputs per run; each is expanded as a literal, and as bare tokens where
/// the text tokenizes. Fewer than `parse` gets in `tests/hostile_fuzz.rs`:
/// an expansion prints a whole item with `quote`, some 40 times the cost of
/// a parse in a debug build, so 100,000 would add most of a minute to CI.
const INPUTS: usize = 25_000;

/// Expands `tokens`, turning a panic into an error message.
fn expand_quietly(tokens: TokenStream) -> Result<String, String> {
    catch_unwind(AssertUnwindSafe(|| expand(tokens).to_string())).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default()
    })
}

/// The ways `layout!` is written, around one spec literal.
fn forms(rng: &mut Rng, spec: &str) -> TokenStream {
    let lit = Literal::string(spec);
    match rng.pick(8) {
        0 => quote!(xla_layout; pub struct Fuzzed = #lit),
        1 => {
            let widths: Vec<Literal> = (0..rng.pick(4))
                .map(|_| Literal::usize_unsuffixed(*rng.choose(&[0, 1, 2, 7, 128, usize::MAX])))
                .collect();
            quote!(xla_layout; #lit, padded_dimensions = [#(#widths),*])
        }
        _ => quote!(xla_layout; #lit),
    }
}

/// Checks one spec by both forms; `Ok(true)` when `parse` accepts it.
fn check(rng: &mut Rng, spec: &str) -> Result<bool, String> {
    let valid = layout_runtime::parse(spec).is_ok();
    let tokens = forms(rng, spec);
    let padded = tokens.to_string().contains("padded_dimensions");
    let out =
        expand_quietly(tokens).map_err(|p| format!("{spec:?}: literal form panicked: {p}"))?;
    let failed = out.contains("compile_error");
    // `padded_dimensions` may reject a valid spec, never accept an invalid one.
    if failed == valid && !(padded && failed) {
        return Err(format!(
            "{spec:?}: parse says valid={valid}, expansion says failed={failed}"
        ));
    }
    if failed && !out.contains("Invalid") && !out.contains("compile_error") {
        return Err(format!("{spec:?}: an error without the fallback value"));
    }
    // Bare tokens: whatever tokenizes goes through `Source`'s printing and span map.
    if let Ok(bare) = spec.parse::<TokenStream>() {
        let out = expand_quietly(quote!(xla_layout; #bare))
            .map_err(|p| format!("{spec:?}: bare-token form panicked: {p}"))?;
        // Printing tokens changes spacing only, which never changes validity,
        // so a valid spec must stay valid. Not checked: text with literals or
        // comments, which print differently.
        if valid && out.contains("compile_error") && !spec.contains(['"', '\'', '/', '.']) {
            return Err(format!(
                "{spec:?}: valid, but its bare-token form fails: {out}"
            ));
        }
    }
    Ok(valid)
}

#[test]
fn expansion_never_panics_on_generated_and_mutated_specs() {
    let mut rng = Rng::new(0x00ba_d5ec_0f0b_1e55);
    let started = Instant::now();
    let (mut valid, mut failures) = (0usize, Vec::new());
    let mut parent = generate(&mut rng).text;
    for i in 0..INPUTS {
        let spec = if i % 3 == 0 {
            parent = generate(&mut rng).text;
            parent.clone()
        } else {
            let donor = generate(&mut rng).text;
            mutate(&mut rng, &parent, &donor)
        };
        match check(&mut rng, &spec) {
            Ok(v) => valid += usize::from(v),
            Err(e) => failures.push(e),
        }
        if failures.len() == 20 {
            break;
        }
    }
    let elapsed = started.elapsed();
    println!(
        "{INPUTS} inputs ({valid} valid) expanded in {elapsed:.2?} ({:.2?} each)",
        elapsed / u32::try_from(INPUTS).unwrap_or(u32::MAX)
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(valid > INPUTS / 10, "only {valid} valid specs");
}

#[test]
fn malformed_macro_input_is_an_error_not_a_panic() {
    // Token shapes the facade never sends but a hand-written call could.
    let cases = [
        quote!(),
        quote!(xla_layout),
        quote!(xla_layout;),
        quote!(::xla_layout; "f32[2]"),
        quote!(xla_layout; "f32[2]", padded_dimensions),
        quote!(xla_layout; "f32[2]", padded_dimensions = [18446744073709551616]),
        quote!(xla_layout; "f32[2]", padded_dimensions = [-1]),
        quote!(xla_layout; "f32[2]", padded_dimensions = [2], padded_dimensions = [2]),
        quote!(xla_layout; "f32[2]", bogus = [2]),
        quote!(xla_layout; pub struct = "f32[2]"),
        quote!(xla_layout; struct X = ),
        quote!(xla_layout; b"f32[2]"),
        quote!(xla_layout; c"f32[2]"),
        quote!(xla_layout; r#"f32[2]"#),
        quote!(xla_layout; 'x'),
        quote!(xla_layout; f32[2] {1 0}),
        quote!(xla_layout; f32[2]{0:T(2)} extra tokens),
    ];
    for tokens in cases {
        let shown = tokens.to_string();
        let out = expand_quietly(tokens).unwrap_or_else(|p| panic!("`{shown}` panicked: {p}"));
        assert!(
            out.contains("compile_error") || shown.contains("r#"),
            "`{shown}` expanded without an error: {out}"
        );
    }
    // A raw string holds an ordinary spec.
    let raw = expand_quietly(quote!(xla_layout; r#"f32[2]"#)).unwrap();
    assert!(!raw.contains("compile_error"), "{raw}");
}

#[test]
fn huge_and_hostile_literals_expand_without_panicking() {
    let long_digits = "9".repeat(100_000);
    let deep = format!("f32[2]{{0:P{}{}}}", "(".repeat(10_000), ")".repeat(10_000));
    let many_dims = format!("f32[{}]", vec!["1"; 5000].join(","));
    let many_levels = format!("f32[2]{{0:T{}}}", "(1)".repeat(5000));
    let cases = [
        String::new(),
        "\0".into(),
        "f32[2]\0".into(),
        "f32[\u{202e}2]".into(),
        "😀[2]".into(),
        format!("f32[{long_digits}]"),
        deep,
        many_dims,
        many_levels,
        "f32[18446744073709551615]".into(),
        "u8[18446744073709551615]".into(),
        "pred[18446744073709551615]{0:E(1)}".into(),
    ];
    for spec in cases {
        let started = Instant::now();
        let out = expand_quietly(quote!(xla_layout; #spec))
            .unwrap_or_else(|p| panic!("{spec:.40?} panicked: {p}"));
        let valid = layout_runtime::parse(&spec).is_ok();
        assert_eq!(!out.contains("compile_error"), valid, "{spec:.40?}");
        println!("{:>8} bytes: {:.2?}", spec.len(), started.elapsed());
    }
}

#[test]
fn bare_tokens_with_angle_brackets_expand_like_the_literal() {
    // `<` and `>` are not delimiters to Rust: the commas inside `<1,0>` must
    // not end the spec as a top-level comma would.
    let out = expand_quietly(quote!(xla_layout; f32[3,5]<1,0:T(2,2)>)).unwrap();
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn a_trailing_comma_after_the_spec_is_accepted() {
    let out = expand_quietly(quote!(xla_layout; "f32[2]",)).unwrap();
    assert!(!out.contains("compile_error"), "{out}");
}

/// The value of the first `const NAME: type = value;` in printed tokens.
fn constant<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    let rest = &out[out.find(&format!("const {name} :"))?..];
    let value = &rest[rest.find('=')? + 1..rest.find(';')?];
    Some(value.trim())
}

#[test]
fn every_limit_is_a_compile_error_naming_it() {
    let ones = |n: usize| vec!["1"; n].join(",");
    let row_major = |n: usize| {
        (0..n)
            .rev()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let tile16 = format!("({})", ones(16));
    let cases = [
        (format!("f32[{}]", ones(17)), "(the rank limit)"),
        (format!("f32[{}]", ones(5000)), "(the rank limit)"),
        (format!("f32[2]{{0:T{}}}", "(1)".repeat(9)), "more than 8 tiling levels (the limit)"),
        (format!("f32[2]{{0:T{}}}", "(1)".repeat(5000)), "more than 8 tiling levels (the limit)"),
        (format!("f32[2]{{0:T({})}}", ones(17)), "(the tile rank limit)"),
        (format!("f32[{}]{{{}:T{}}}", ones(16), row_major(16), tile16.repeat(4)), "(the tiled rank limit)"),
        (
            "u8[1054,99,948,18,1120]{4,3,2,1,0:T(8,2,15,3,28,16,30)(20,15,23,*,28,15,*,4,*,12,12,4,4)\
             (2,2,3,2,2,5,13,14,15,22,8,2,9,6,*,8)(2,*,6,10,10,3,13,7,*,*,24,6)(2,5)(*,6,2,6,*,*,15,2)\
             (3,12,2,2,*,2,2,*,3,3,*,24)(*,2,*,6)}"
                .to_string(),
            "(the program limit)",
        ),
        ("s4[3]{0:E(4097)}".to_string(), "the largest allowed is 4096"),
        ("u8[2]{0:S(128)}".to_string(), "the largest allowed is 127"),
        ("u8[18446744073709551616]".to_string(), "the largest allowed is 18446744073709551615"),
        ("u8[4294967296,4294967296]".to_string(), "storage in slots does not fit in `usize`"),
        ("s16[18446744073709551615]".to_string(), "storage in bytes does not fit in `usize`"),
        ("f32[?]".to_string(), "unbounded dynamic dim `?`"),
    ];
    for (spec, message) in cases {
        let out =
            expand_quietly(quote!(xla_layout; #spec)).unwrap_or_else(|p| panic!("{spec:.60}: {p}"));
        assert!(out.contains("compile_error"), "{spec:.60}: no error");
        assert!(
            out.contains(message),
            "{spec:.60}: no `{message}` in {out:.300}"
        );
    }
    // Valid values at the edges expand, and their constants are exact (the
    // storage bytes follow from these in `Folded`, whose values at the same
    // edges `tests/edges_sizes.rs` checks).
    for (spec, name, value) in [
        (
            "u8[18446744073709551615]",
            "STORAGE_LEN",
            "18446744073709551615",
        ),
        (
            "pred[18446744073709551615]{0:E(1)}",
            "STORAGE_LEN",
            "18446744073709551615",
        ),
        ("pred[18446744073709551615]{0:E(1)}", "ELEMENT_BITS", "1"),
        (
            "u8[2]{0:L(18446744073709551615)}",
            "STORAGE_LEN",
            "18446744073709551615",
        ),
        ("f32[3]{0:E(128)}", "ELEMENT_BITS", "128"),
        ("s4[3]{0:E(4096)}", "ELEMENT_BITS", "4096"),
    ] {
        let out = expand_quietly(quote!(xla_layout; #spec)).unwrap();
        assert_eq!(constant(&out, name), Some(value), "{spec}: {out:.300}");
    }
}

/// `assert_bitcast!` on generated and damaged pairs of specs, with and
/// without a `transpose = [..]`: an expansion to nothing or a
/// `compile_error!`, never a panic.
#[test]
fn assert_bitcast_never_panics() {
    let mut rng = Rng::new(0xB17C);
    let (mut passed, mut failed) = (0, 0);
    for _ in 0..2_000 {
        let a = generate(&mut rng);
        let b = generate(&mut rng);
        let from = a.text.clone();
        let to = match rng.pick(3) {
            0 => b.text.clone(),
            1 => mutate(&mut rng, &a.text, &b.text),
            _ => a.text.clone(),
        };
        let (from, to) = (Literal::string(&from), Literal::string(&to));
        let tokens = if rng.one_in(2) {
            let perm: Vec<Literal> = (0..rng.pick(5))
                .map(|_| Literal::usize_unsuffixed(rng.pick(6)))
                .collect();
            quote!(#from, #to, transpose = [#(#perm),*])
        } else {
            quote!(#from, #to)
        };
        let text = catch_unwind(AssertUnwindSafe(|| {
            crate::bitcast::expand(tokens.clone()).to_string()
        }))
        .unwrap_or_else(|_| panic!("assert_bitcast!({tokens}) panicked"));
        if text.is_empty() {
            passed += 1;
        } else {
            assert!(text.contains("compile_error"), "{tokens}: {text}");
            failed += 1;
        }
    }
    assert!(
        passed > 100 && failed > 100,
        "{passed} passed, {failed} failed"
    );
}
