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
//! # Map of the source
//!
//! Each folder is one stage of the pipeline or one concept:
//!
//! - `spec/`: text to a validated spec: lexer, parser, validation, element
//!   types, tiles, the attribute table, errors and their reports.
//! - `algebra/`: the tile step of the spec, written once (`tiling.rs`),
//!   and what is carried through it: the layout's mixed-radix digits (dim,
//!   place, radix, extent, stride), from which the evaluators, both index
//!   programs that `layout!` and the C export print, the relayout walk and
//!   the bitcast terms are compiled; the programs of layouts with no
//!   digits folded level by level; the levels `render` draws; division by
//!   constants fixed at run time.
//! - `eval/`: the forms a layout is evaluated in: [programs](program)
//!   and how code spells them, closed forms, compact code, places, the
//!   run-time [`Layout`], [`Ranked`], the type of `layout!` values, what
//!   the two have in common ([`AnyLayout`]), and the one codec of the
//!   bytes that carry them from compile time.
//! - [`bitcast`]: whether a reshape or a transpose moves no data.
//! - [`relayout`]: whole arrays packed, unpacked and converted: walks and
//!   routes, plans, the strategies that pick a kernel for each block
//!   (`gather`, `scatter`), the portable kernels (`kernels/`) and the
//!   architecture-specific ones behind one dispatch point (`arch/`, the
//!   only `unsafe` code).
//! - [`tensor`]: a layout and its storage, read and written by element or
//!   by tile.
//! - [`render`]: pictures, walk-throughs and C code made from a layout.
//! - `xla/`: what comes from XLA itself: the [HLO reader](hlo) and the
//!   [TPU tile chooser](tpu).
//! - `fixed.rs`: the fixed-capacity list behind every bounded sequence.
//!
//! Modules build on modules below them, never in a circle
//! (`tests/runtime_map.rs` checks): `spec/` makes a [`Layout`] from
//! `eval/`'s forms, which know nothing of the text they came from.
//!
//! # Features
//!
//! As in serde, ndarray and half, `std` is on by default, and a `no_std`
//! crate depends with `default-features = false` (see `examples/firmware`):
//!
//! - `std` (default): links `std`; turns on `alloc`.
//! - `alloc`: `Vec<T>` and `Box<[T]>` as tensor storage, and
//!   `Tensor::iter_mut`.
//! - `half`: `half`'s `bf16` and `f16` as element types.
//! - `ndarray`: packs from and unpacks into `ndarray` arrays (turns on `alloc`).
//! - `rayon`: `Threads::Pool`, relayouts on rayon's thread pool (turns on `std`).
//! - `portable-atomic`: for targets without compare-and-swap atomics.
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
// docs.rs builds with every feature and `--cfg docsrs` on nightly, where
// each feature-gated item is labelled with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The core needs only `core`; these link what the features ask for.
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod algebra;
pub mod bitcast;
mod eval;
mod fixed;
pub mod relayout;
pub mod render;
mod spec;
pub mod tensor;
mod xla;

pub use eval::program;
pub use xla::{hlo, tpu};

pub use algebra::fold::Shape;
pub use eval::codec::Tables as __Tables;
pub use eval::folded::Folded;
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub use eval::folded::{
    Arg as __Arg, FoldedSpec as __FoldedSpec, FoldedTile as __FoldedTile, Step as __Step,
    MAX_STEPS as __MAX_STEPS,
};
pub use eval::layout::{Index, Layout};
/// Used by `layout!` values' `offset`; not public API.
#[doc(hidden)]
pub use eval::outside::{dim_of as __dim_of, inside as __inside, outside_dims as __outside_dims};
pub use eval::ranked::{RankError, Ranked, RankedInverse};
pub use eval::static_layout::StaticLayout;
pub use eval::AnyLayout;
pub use relayout::api::{Options, Threads};
pub use relayout::bits::BitElement;
pub use relayout::error::RelayoutError;
pub use relayout::iter::{Offsets, Slots};
pub use relayout::plan::{Chunk, Chunks, ChunksMut, RelayoutPlan};
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub use spec::attributes::WrittenAttribute as __WrittenAttribute;
pub use spec::element::ElementType;
pub use spec::error::{Error, ErrorKind, Snippet, Span};
pub use spec::padding::{PadValue, PaddingValue};
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub use spec::parser::__parse_with_programs;
pub use spec::parser::parse;
pub use spec::report::{Excerpt, ParseError, Report, SpecError, MAX_ERRORS};
pub use spec::tile::{Tile, TileDim};
pub use spec::validate::LayoutBuilder;

/// The largest rank (number of dims) of a shape.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, MAX_RANK};
/// let ones = |n: usize| vec!["1"; n].join(",");
/// assert!(parse(&format!("f32[{}]", ones(MAX_RANK))).is_ok());
/// assert!(parse(&format!("f32[{}]", ones(MAX_RANK + 1))).is_err());
/// ```
pub const MAX_RANK: usize = 16;
/// The most tiling levels in one `T(...)(...)`.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, MAX_TILING_LEVELS};
/// let levels = |n: usize| format!("f32[4]{{0:T{}}}", "(1)".repeat(n));
/// assert!(parse(&levels(MAX_TILING_LEVELS)).is_ok());
/// assert!(parse(&levels(MAX_TILING_LEVELS + 1)).is_err());
/// ```
pub const MAX_TILING_LEVELS: usize = 8;
/// The most dims in one tile.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, MAX_TILE_RANK};
/// // A tile of more dims than the shape tiles size-1 dims put in front.
/// let tile = |n: usize| format!("f32[4]{{0:T({})}}", vec!["1"; n].join(","));
/// assert!(parse(&tile(MAX_TILE_RANK)).is_ok());
/// assert!(parse(&tile(MAX_TILE_RANK + 1)).is_err());
/// ```
pub const MAX_TILE_RANK: usize = 16;
/// The most dims the shape may reach while tiles are applied.
///
/// # Examples
///
/// Each level of a 16-dim tile on a 16-dim shape adds 16 dims: three
/// levels reach 64, a fourth would pass the limit.
///
/// ```
/// use xla_layout::{parse, MAX_TILED_RANK};
/// let ones = vec!["1"; 16].join(",");
/// let order: Vec<String> = (0..16).rev().map(|d| d.to_string()).collect();
/// let spec = |levels: usize| {
///     format!("f32[{ones}]{{{}:T{}}}", order.join(","), format!("({ones})").repeat(levels))
/// };
/// assert_eq!(16 + 3 * 16, MAX_TILED_RANK);
/// assert!(parse(&spec(3)).is_ok());
/// let err = parse(&spec(4)).unwrap_err();
/// assert!(err.to_string().contains("more than 64 dims"));
/// ```
pub const MAX_TILED_RANK: usize = 64;
/// The most steps in one folded index program.
///
/// # Examples
///
/// ```
/// use xla_layout::MAX_PROGRAM_STEPS;
/// let l = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
/// let steps = l.offset_program().program().steps().len();
/// assert!(0 < steps && steps <= MAX_PROGRAM_STEPS);
/// // Enough room to evaluate any program.
/// let mut scratch = [0; MAX_PROGRAM_STEPS];
/// assert_eq!(l.offset_program().eval(&[1, 2, 3, 4, 5], &mut scratch), l.offset(&[1, 2, 3, 4, 5]));
/// ```
pub const MAX_PROGRAM_STEPS: usize = 256;
/// The most padding checks in one inverse program.
///
/// # Examples
///
/// ```
/// use xla_layout::MAX_CHECKS;
/// // Rows padded from 3 to 4 and columns from 5 to 6: `row < 3`, `column < 5`.
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let inverse = l.inverse_program();
/// let checks = inverse.checks();
/// assert!(checks.len() <= MAX_CHECKS);
/// assert_eq!(checks.iter().map(|c| c.bound).collect::<Vec<_>>(), [3, 5]);
/// ```
pub const MAX_CHECKS: usize = MAX_TILING_LEVELS * MAX_TILE_RANK + 1;
/// The largest `S(n)`: XLA keeps the memory space in a signed byte, so
/// `S(128)` would come back from XLA as `S(-128)`.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, MAX_MEMORY_SPACE};
/// assert_eq!(parse("f32[2]{0:S(127)}").unwrap().memory_space(), MAX_MEMORY_SPACE);
/// assert!(parse("f32[2]{0:S(128)}").is_err());
/// ```
pub const MAX_MEMORY_SPACE: u64 = 127;
/// The widest `E(n)`, in bits.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, MAX_ELEMENT_BITS};
/// let l = parse("f32[2]{0:E(4096)}").unwrap();
/// assert_eq!(l.element_bits(), MAX_ELEMENT_BITS);
/// assert!(parse("f32[2]{0:E(4097)}").is_err());
/// ```
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
