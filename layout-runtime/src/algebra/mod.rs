//! The algebra of a laid-out shape: its tiled shape as mixed-radix digits,
//! and the tiles folded level by level into index programs, simplified as
//! they grow, with division by constants fixed at run time.
//!
//! Tiling a dim splits it into a quotient and a remainder; nesting tiles
//! splits those again. When every split lands on a whole digit of the
//! coordinate it splits (a tile that divides the one it nests in, or is
//! at least as large), each dim of the tiled shape holds one digit of one
//! logical coordinate, `(x / place) % radix`, and storage is the tiled
//! shape in row-major order; a `*` over whole adjacent dims makes digits of
//! their row-major index. [`tiling`] is the one place the tile step is
//! written, and [`digits`] derives the digits through it from the
//! description (dims, `minor_to_major`, tiles); the evaluators in
//! [`eval`](crate::eval), the relayout walk and both index programs that
//! `layout!` and the C export print ([`fold`]) are compiled from what it
//! says, and [`fold`] derives them once for a parse and hands them on.
//! Layouts without digits fold symbolic values through the same step, and
//! [`render`](crate::render) draws and narrates the levels it yields.

mod digits;
pub(crate) mod divide;
pub(crate) mod fold;
mod simplify;
pub(crate) mod tiling;

pub(crate) use digits::{digits, Digit, Digits, MAX_DIGITS};
