//! Every pair of `tests/asm/src/pairs.rs` as two inlinable functions, for
//! the benchmarks that compare generated with hand-written addressing:
//! `#[path = "common/pairs.rs"] mod pairs;`.

#![allow(dead_code, clippy::unreadable_literal)]

macro_rules! pairs {
    ($($spec:literal => $generated:ident, $hand:ident |$($arg:ident),+| $formula:expr;)*) => {
        $(
            #[inline]
            pub fn $generated($($arg: usize),+) -> usize {
                xla_layout::layout!($spec).offset([$($arg),+])
            }

            #[inline]
            pub fn $hand($($arg: usize),+) -> usize {
                $formula
            }
        )*
    };
}

include!("../../tests/asm/src/pairs.rs");
