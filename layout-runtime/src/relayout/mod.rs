//! Bulk relayout: whole arrays between row-major buffers and tiled storage.
//!
//! [`pack`] lays a row-major array out in a layout's storage, [`unpack`]
//! reads it back, and [`convert`] moves storage from one layout to another
//! of the same dims and element type directly, without a row-major copy in
//! between. Each takes its options last: [`Options`] (the padding's fill
//! value and the [`Threads`]) for the two that write a layout's storage,
//! [`Threads`] for `unpack`. `layout!` values have the same methods
//! ([`StaticLayout`](crate::StaticLayout)), so code moves between the two
//! unchanged. [`slots`] walks storage in memory order (each slot's logical
//! position, or padding) and [`offsets`] walks logical order (each element's
//! offset). Nothing here allocates or panics: a wrong buffer length or
//! element type is a [`RelayoutError`], returned before anything is written.
//!
//! Every storage slot is written: padding (inside tiles, and the `L(n)` tail)
//! gets the fill value of [`Options`], `T::default()` unless one is given,
//! so no stale data survives in storage. Unpacking never reads padding.
//!
//! # Speed
//!
//! Without `*` mixing dims, each dim of a layout's final tiled shape is one
//! digit of one logical index, so a relayout is a strided N-d copy. It walks
//! the storage being written (being read, for unpack) in memory order, tests
//! bounds once per block rather than per element, and copies each block of
//! the two innermost digits with a kernel for its shape: `copy_from_slice`
//! runs for `T(8,128)` rows, interleaving loops the compiler vectorizes for
//! the 2, 4 or 8 rows of `(2,1)`, `(4,1)`, `(8,1)`, and row-split transposes
//! for column-major arrays. Layouts outside the digit form (a `*` that mixes
//! split dims, or padding inside a split inner tile) go slot by slot through
//! the folded index programs: correct, and slower.
//!
//! On x86-64, destinations larger than the cache are written with streaming
//! (non-temporal) stores, whole cache lines at a time, staged through a small
//! buffer on the stack: a plain store that misses the cache reads the line
//! from memory first, which costs a third of the bandwidth. Transposes of
//! 4-byte units (`f32`, or two `bf16` that stay together on both sides) run
//! four by four in SSE2 registers, and `(4,1)` tiles of bytes interleave in
//! them; where a dim ends inside such a unit, the whole units still move
//! so and the last unit's elements one by one. Larger transposes go in
//! 16x16 tiles of units with AVX2, each a cache line of both sides, and
//! rows that lie at different places in their lines (a ragged width) are
//! put together a few lines at a time before they are streamed (with
//! AVX-512 VBMI, each tile's pieces join the pieces before them in
//! registers, a line at a time, and a tile row of `(2,1)`, `(4,1)` or
//! whole-element tiles unpacked into such rows goes in one call, every
//! row's lines joined so). With VBMI, a tile row of `(2,1)` and `(4,1)`
//! tiles packs in one call too, 64 bytes of each row a step, with the
//! next tile row asked for while this one is read. Sub-byte tiles
//! whose groups are 4 bytes (`s4` in `(8,1)`) move in AVX-512BW registers
//! where the CPU has them: eight rows into their groups 64 columns at a
//! time, and transposed tiles 16x16 groups at a time, packed and
//! transposed together (into storage off a line, joined to the groups
//! before them with VBMI; the narrower widths through the 16x16 tiles of
//! units). These kernels are inline assembly in one module, the crate's
//! only `unsafe` code; other targets use the portable loops.
//!
//! # Plans and threads
//!
//! [`pack_plan`], [`unpack_plan`] and [`convert_plan`] check a relayout once
//! and return a [`RelayoutPlan`] that runs on any buffers of the right
//! lengths, whole or as [`chunks`](crate::RelayoutPlan::chunks) of about equal
//! work with disjoint destination ranges, one per thread of your own; with
//! the `rayon` feature, `Threads::Pool` in the options runs those chunks on
//! rayon's pool.
//!
//! # Sub-byte elements
//!
//! Layouts of fewer than 8 bits per element (`s4`, `u2`, `pred` with `E(1)`,
//! ...) store slots packed in bytes; use [`pack_bits`], [`unpack_bits`] and
//! [`convert_bits`], with the same options, with one [`BitElement`] (`u8`,
//! `i8`, `bool`) per logical value, the element as a byte (an `s4` of -3 is `-3i8` or `0xfdu8`); a
//! value its element type does not hold in its bits is refused, never cut to
//! its low bits. `E(1)`, `E(2)` and `E(4)` are supported. Slot `k` of an `E(n)`
//! layout holds bits `(k*n) % 8 .. (k*n) % 8 + n` of byte `k*n / 8`, bit 0
//! being the least significant: the first slot of a byte is in its low-order
//! bits. That is XLA's order since February 2025 (its `PackIntN`, changed to
//! match LLVM's; before that XLA put the first element in the high-order bits).
//!
//! [`pack`]: crate::Layout::pack
//! [`unpack`]: crate::Layout::unpack
//! [`convert`]: crate::Layout::convert
//! [`BitElement`]: crate::BitElement
//! [`Options`]: crate::Options
//! [`RelayoutPlan`]: crate::RelayoutPlan
//! [`slots`]: crate::Layout::slots
//! [`offsets`]: crate::Layout::offsets
//! [`pack_plan`]: crate::Layout::pack_plan
//! [`unpack_plan`]: crate::Layout::unpack_plan
//! [`convert_plan`]: crate::Layout::convert_plan
//! [`pack_bits`]: crate::Layout::pack_bits
//! [`unpack_bits`]: crate::Layout::unpack_bits
//! [`convert_bits`]: crate::Layout::convert_bits
//!
//! # Examples
//!
//! ```
//! use xla_layout::{Options, Threads};
//! let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
//! let logical: Vec<f32> = (0..15).map(|x| x as f32).collect();
//! let mut storage = vec![f32::NAN; l.storage_len()];
//! l.pack(&logical, &mut storage, Options::default()).unwrap();
//! assert_eq!(&storage[..8], &[0.0, 1.0, 5.0, 6.0, 2.0, 3.0, 7.0, 8.0]);
//! assert_eq!(storage[9], 0.0); // padding, filled with the default
//!
//! let mut back = vec![0.0; 15];
//! l.unpack(&storage, &mut back, Threads::One).unwrap();
//! assert_eq!(back, logical);
//! ```

// The items live at the crate root, one path each (`xla_layout::Options`);
// this module holds their docs and the crates its features bring.
pub(crate) mod api;
// The only module allowed `unsafe`: the architecture-specific kernels,
// behind safe functions that check their bounds first.
#[allow(unsafe_code)]
mod arch;
#[cfg(feature = "ndarray")]
mod array;
pub(crate) mod bits;
mod digits;
pub(crate) mod error;
mod gather;
pub(crate) mod iter;
mod kernels;
mod parallel;
pub(crate) mod plan;
mod route;
mod scatter;
mod walk;

use api::Threads;
use error::RelayoutError;
pub(crate) use iter::{fill_padding, Run};

/// The `half` crate, whose `bf16` and `f16` are element types like any other
/// (feature `half`).
#[cfg(feature = "half")]
#[cfg_attr(docsrs, doc(cfg(feature = "half")))]
pub use half;
/// The `ndarray` crate, for [`Layout::pack_array`](crate::Layout::pack_array)
/// and [`Layout::unpack_array`](crate::Layout::unpack_array) (feature `ndarray`).
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub use ndarray;
