//! Snapshots of the macro's expansion for representative specs.
//!
//! Each test expands one `layout!` input in process, pretty-prints it with
//! `prettyplease` and compares it with `tests/snapshots/<name>.rs.snap`. A
//! change to the generated code shows up as a reviewable diff of those files.
//! After an intended change, re-bless them with
//! `BLESS=1 cargo test -p layout-macros snapshots` and review `git diff`.
//!
//! The facade passes its `$crate` as the first token; here it is the plain
//! identifier `xla_layout`, so paths print as `xla_layout::__private::...`.

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::expand;

/// Expands `input` and pretty-prints the result as a Rust file. An
/// expression expansion is wrapped in `fn f() { let _ = ...; }`.
fn pretty(input: TokenStream, expression: bool) -> String {
    let out = expand(input);
    let file = if expression {
        quote!(fn f() { let _ = #out; })
    } else {
        out
    };
    match syn::parse2::<syn::File>(file.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        // Not valid Rust: the raw tokens make a snapshot that can never
        // match a good one, and show what went wrong.
        Err(e) => format!("// does not parse as a file: {e}\n{file}\n"),
    }
}

/// Compares the expansion of `layout!(#args)` with its snapshot, or
/// rewrites the snapshot under `BLESS=1`.
fn check(name: &str, args: &TokenStream, expression: bool) {
    let actual = format!(
        "// layout!({args})\n\n{}",
        pretty(quote!(xla_layout; #args), expression)
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.rs.snap"));
    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        fs::create_dir_all(path.parent().expect("snapshot path has a parent"))
            .expect("create tests/snapshots");
        fs::write(&path, &actual).expect("write snapshot");
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "expansion snapshot {} is stale{}\n\
         if the change is intended, run `BLESS=1 cargo test -p layout-macros snapshots` \
         and review the diff",
        path.display(),
        first_difference(&expected, &actual)
    );
}

/// Where two texts first differ, as a short hint for the failure message.
fn first_difference(expected: &str, actual: &str) -> String {
    if expected.is_empty() {
        return " (no snapshot yet)".to_owned();
    }
    let (mut e, mut a) = (expected.lines(), actual.lines());
    let mut line = 1;
    loop {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return String::new(),
            (x, y) => {
                let mut hint = format!("; first difference at line {line}:");
                let _ = write!(hint, "\n  snapshot:  {}", x.unwrap_or("<end of file>"));
                let _ = write!(hint, "\n  expansion: {}", y.unwrap_or("<end of file>"));
                return hint;
            }
        }
    }
}

#[test]
fn untiled_row_major() {
    check("untiled_row_major", &quote!("f32[4,6]"), true);
}

#[test]
fn column_major() {
    check("column_major", &quote!("f32[10,20]{0,1}"), true);
}

#[test]
fn figure_1() {
    check("figure_1", &quote!("f32[3,5]{1,0:T(2,2)}"), true);
}

#[test]
fn bf16_tpu_tiling() {
    check(
        "bf16_tpu_tiling",
        &quote!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}"),
        true,
    );
}

#[test]
fn combining() {
    check(
        "combining",
        &quote!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"),
        true,
    );
}

#[test]
fn named_figure_2() {
    check(
        "named_figure_2",
        &quote!(pub struct Figure2 = "bf16[4,8]{1,0:T(2,4)(2,1)}"),
        false,
    );
}

#[test]
fn padded_dimensions() {
    check(
        "padded_dimensions",
        &quote!("f32[2,3]{0,1}", padded_dimensions = [3, 5]),
        true,
    );
}

#[test]
fn two_errors() {
    check("two_errors", &quote!("f32[3,5]{1,1:T(0,2)}"), true);
}

#[test]
fn named_tile() {
    check(
        "named_tile",
        &quote!(pub struct Weights = "bf16[16,256]{1,0:T(8,128)(2,1)}", tile = WeightsTile),
        false,
    );
}
