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
