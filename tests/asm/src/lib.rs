//! Pairs of functions with one signature, `(i, j, ...) -> usize`: `generated_*`
//! calls `offset` of a `layout!`, `hand_*` is the best formula a person would
//! write for the same layout. `tests/asm_check.rs` compiles this crate in
//! release mode with `--emit asm` and compares the assembly of each pair.

#![no_std]

/// Defines both functions of every pair, unmangled so the assembly names them.
macro_rules! pairs {
    ($($spec:literal => $generated:ident, $hand:ident |$($arg:ident),+| $formula:expr;)*) => {
        $(
            #[doc = concat!("`offset` of `layout!(\"", $spec, "\")`.")]
            #[no_mangle]
            pub fn $generated($($arg: usize),+) -> usize {
                xla_layout::layout!($spec).offset([$($arg),+])
            }

            #[doc = concat!("The offset in `", $spec, "`, written by hand.")]
            #[no_mangle]
            pub fn $hand($($arg: usize),+) -> usize {
                $formula
            }
        )*
    };
}

include!("pairs.rs");
