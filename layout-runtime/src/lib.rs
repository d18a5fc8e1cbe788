//! The core of `xla-layout`: one implementation of XLA's layout language.
//!
//! This crate parses and validates spec strings such as
//! `bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}`, folds their tiles into
//! straight-line [index programs](program), and evaluates them. The
//! `layout!` macro of the `xla-layout` crate calls the same functions at
//! compile time, so the two can never disagree.
//!
//! It is `no_std` and allocates nothing: every structure has a fixed
//! capacity, given by the limits below; exceeding one is an error that names it.
//!
//! # Examples
//!
//! ```
//! let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
//! assert_eq!(l.offset(&[2, 3]), 17);
//! assert_eq!(l.index_of(17).as_deref(), Some(&[2, 3][..]));
//! assert_eq!(l.to_string(), "f32[3,5]{1,0:T(2,2)}");
//! ```
#![no_std]
#![deny(unsafe_code)]

mod attributes;
mod closed;
mod code;
mod divide;
mod element;
mod error;
mod fixed;
mod fold;
mod folded;
pub mod hlo;
mod layout;
mod lexer;
mod outside;
mod padding;
mod parser;
pub mod program;
mod ranked;
mod raw;
pub mod relayout;
pub mod render;
mod report;
mod simplify;
mod spelling;
mod static_layout;
pub mod tensor;
mod tile;
pub mod tpu;
mod validate;

/// Used by `layout!`; not public API.
#[doc(hidden)]
pub use attributes::WrittenAttribute as __WrittenAttribute;
pub use element::ElementType;
pub use error::{Error, ErrorKind, Snippet, Span};
pub use fold::Shape;
pub use folded::Folded;
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub use folded::{
    Arg as __Arg, FoldedSpec as __FoldedSpec, FoldedTile as __FoldedTile, Step as __Step,
    MAX_STEPS as __MAX_STEPS,
};
pub use layout::{Index, Layout};
/// Used by `layout!` values' `offset`; not public API.
#[doc(hidden)]
pub use outside::{dim_of as __dim_of, inside as __inside, outside_dims as __outside_dims};
pub use padding::{PadValue, PaddingValue};
pub use parser::parse;
pub use program::{Check, InverseProgram, OffsetProgram, Op, Program, StepId, Term, Value};
pub use ranked::{RankError, Ranked, RankedInverse};
pub use raw::Tables as __Tables;
pub use relayout::{
    BitElement, Chunk, Chunks, ChunksMut, Offsets, RelayoutError, RelayoutPlan, Slots,
};
pub use report::{Excerpt, ParseError, Report, SpecError, MAX_ERRORS};
pub use static_layout::StaticLayout;
pub use tensor::{AnyLayout, Storage, StorageMut, Tensor, TiledLayout};
pub use tile::{Tile, TileDim};
pub use validate::LayoutBuilder;

/// The largest rank (number of dims) of a shape.
pub const MAX_RANK: usize = 16;
/// The most tiling levels in one `T(...)(...)`.
pub const MAX_TILING_LEVELS: usize = 8;
/// The most dims in one tile.
pub const MAX_TILE_RANK: usize = 16;
/// The most dims the shape may reach while tiles are applied.
pub const MAX_TILED_RANK: usize = 64;
/// The most steps in one folded index program.
pub const MAX_PROGRAM_STEPS: usize = 256;
/// The most padding checks in one inverse program.
pub const MAX_CHECKS: usize = MAX_TILING_LEVELS * MAX_TILE_RANK + 1;
/// The largest `S(n)`: XLA keeps the memory space in a signed byte, so
/// `S(128)` would come back from XLA as `S(-128)`.
pub const MAX_MEMORY_SPACE: u64 = 127;
/// The widest `E(n)`, in bits.
pub const MAX_ELEMENT_BITS: u32 = 4096;

/// Resolves a dim number that may count from the end (`-1` is the last dim).
///
/// # Examples
///
/// ```
/// assert_eq!(xla_layout::resolve_dim(3, -1), Some(2));
/// assert_eq!(xla_layout::resolve_dim(3, 3), None);
/// assert_eq!(xla_layout::resolve_dim(3, -4), None);
/// ```
pub const fn resolve_dim(rank: usize, dim: isize) -> Option<usize> {
    let d = if dim < 0 {
        match rank.checked_add_signed(dim) {
            Some(d) => d,
            None => return None,
        }
    } else {
        dim.unsigned_abs()
    };
    if d < rank {
        Some(d)
    } else {
        None
    }
}
