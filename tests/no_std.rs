//! The `no_std` guard: `tests/no-std` is a `#![no_std] #![no_main]` binary
//! with its own `#[panic_handler]` that uses `layout!` and `parse`. If any
//! crate it depends on links `std`, checking it fails with E0152 (duplicate
//! lang item `panic_impl`).

mod nested;

#[test]
fn builds_without_std() {
    if let Err(report) = nested::cargo("check", "no-std") {
        panic!("{report}");
    }
}

/// Without the `alloc` feature (off here with the other defaults), a `Vec`
/// is no tensor storage; the error says which feature makes it one.
#[test]
fn vec_storage_without_alloc_names_the_feature() {
    let report = nested::cargo_with("check", "no-std", &["--features", "vec-storage"])
        .expect_err("a tensor over a `Vec` checked without the `alloc` feature");
    assert!(
        report.contains("E0277") && report.contains("the `alloc` feature of `xla-layout`"),
        "the error does not name the `alloc` feature:\n{report}"
    );
}
