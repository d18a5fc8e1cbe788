//! The golden specs every test draws from, written once: SPEC.md §5's table
//! and §6's TPU formats.
//!
//! `layout!` needs each spec as a literal, so the table is a macro that hands
//! its rows to another macro; [`SECTION_5`] is the same rows as data.

/// Calls `$callback! { (spec, [index], offset, storage slots), ... }` with
/// SPEC.md §5's table.
macro_rules! section_5_rows {
    ($callback:ident) => {
        $callback! {
            ("f32[3,5]{1,0:T(2,2)}", [2, 3], 17, 24),
            ("f32[8,8]{1,0:T(2,4)(2,1,1,1)}", [6, 5], 51, 64),
            ("f32[8]{0:T(2,2)}", [5], 9, 16),
            ("f32[3]{0:T(8,128)}", [2], 2, 1024),
            ("bf16[2048]{0:T(1024)(128)(2,1)}", [128], 1, 2048),
            ("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}", [0, 2, 0], 256, 2048),
            ("u32[]{:T(128)}", [], 0, 128),
        }
    };
}
// Only the crates that expand `layout!` on the rows use the macro itself.
#[allow(unused_imports)]
pub(crate) use section_5_rows;

/// One row of SPEC.md §5: spec, index, offset, storage slots.
pub type Row = (&'static str, &'static [usize], usize, usize);

macro_rules! rows_as_data {
    ($(($spec:literal, [$($i:expr),*], $offset:expr, $slots:expr)),* $(,)?) => {
        &[$(($spec, &[$($i),*], $offset, $slots)),*]
    };
}

/// SPEC.md §5's table as data.
pub const SECTION_5: &[Row] = section_5_rows!(rows_as_data);

/// SPEC.md §6's TPU formats, one spec each, and the combining example of §4.
pub const SECTION_6: &[&str] = &[
    "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
    "f32[16,256]{1,0:T(8,128)}",
    "f32[2,256]{1,0:T(2,128)}",
    "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
    "s8[16,256]{1,0:T(8,128)(4,1)}",
    "pred[32,128]{1,0:T(32,128)(32,1)E(1)}",
    "s4[64,128]{1,0:T(8,128)(8,1)E(4)S(1)}",
    "s4[1,1023]{1,0:T(2,1024)E(4)}",
];

/// Every golden spec: §5's, then §6's.
pub fn specs() -> impl Iterator<Item = &'static str> {
    SECTION_5
        .iter()
        .map(|row| row.0)
        .chain(SECTION_6.iter().copied())
}
