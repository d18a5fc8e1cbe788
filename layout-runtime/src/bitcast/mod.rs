//! Bitcasts: whether a reshape or a transpose between two laid-out shapes
//! moves no data.
//!
//! XLA replaces such a reshape or transpose by a bitcast, which costs
//! nothing. Its own test reads `minor_to_major` only; here tiles, their
//! padding, `*`, `E(n)` and `L(n)` all count. A change is a bitcast when
//! every element keeps its storage slot (the element at each row-major
//! position of `from` is at the same slot in `to`), both storages take the
//! same number of bytes, and the element type and size stay the same.
//! `S(n)`, the memory space, is metadata and not compared.
//!
//! Every pair is answered exactly, from the layouts' digits, not from their
//! elements, so a pair of `bf16[8192,8192]` layouts takes microseconds.
//! Each side's map is written as terms `floor(L / A) mod B * S` of the
//! row-major position `L`, normalised, and compared term by term (see
//! `terms.rs`). Where the tiles cut a dim's digits off its boundaries
//! (`T(3,4)(2,3)` splits `e mod 4` by 3, or a `*` mixes two dims before a
//! split), the map is regular terms above each dim's period (the product
//! of the tile dims that split it) plus an atom, a function on the box of
//! positions below the periods; two maps are compared on that box and one
//! period past it along each coordinate (see `period.rs`). That is
//! tile-sized work, independent of the array's dims, except where a
//! reshape's dims cross (`[4, 6]` read as `[6, 4]`) and are themselves
//! tiled off their boundaries: there the box also counts the rows of a
//! crossing dim (about 28000 points for `T(3,4)(2,3)` on `[3001, 4001]`
//! read as `[4001, 3001]`), still far below their elements.
//! [`reshape_layout`] finds a layout under which a reshape is a bitcast, and
//! `xla_layout::assert_bitcast!` asks the same question at compile time.
//!
//! # Examples
//!
//! ```
//! use xla_layout::{bitcast, parse};
//! // Splitting the major dim of a tiled layout moves nothing ...
//! let from = parse("f32[24,256]{1,0:T(8,128)}").unwrap();
//! assert!(bitcast::reshape(&from, &parse("f32[3,8,256]{2,1,0:T(8,128)}").unwrap()).is_ok());
//! // ... but merging the dims of a tile into a larger tile does: with the
//! // same storage size and `minor_to_major`, column 128 is elsewhere.
//! let from = parse("f32[2,4,256]{2,1,0:T(4,128)}").unwrap();
//! let err = bitcast::reshape(&from, &parse("f32[8,256]{1,0:T(8,128)}").unwrap()).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "element `[0, 0, 128]` (row-major position `128`) moves: it is at slot `512` in `from` \
//!      and at slot `1024` as `[0, 128]` in `to`"
//! );
//! ```

mod period;
mod terms;

use core::fmt;

use crate::{ElementType, Index, Layout, LayoutBuilder, Tile, MAX_RANK};
use period::Side;
use terms::{Compared, Form};

/// The first element a reshape or transpose moves, named on both sides.
///
/// # Examples
///
/// ```
/// use xla_layout::{bitcast::{self, Mismatch}, parse};
/// let from = parse("f32[2,3]").unwrap();
/// let to = parse("f32[3,2]{0,1}").unwrap();
/// let Err(Mismatch::Moved(m)) = bitcast::reshape(&from, &to) else { panic!() };
/// assert_eq!((m.position, &*m.from_index, &*m.to_index), (1, &[0, 1][..], &[0, 1][..]));
/// assert_eq!((m.from_slot, m.to_slot), (1, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Moved {
    /// Its row-major position in `from`'s dims.
    pub position: usize,
    /// Its index in `from`.
    pub from_index: Index,
    /// Its index in `to`: the same row-major position for a reshape, the
    /// permuted index for a transpose.
    pub to_index: Index,
    /// Its storage slot in `from`.
    pub from_slot: usize,
    /// Its storage slot in `to`.
    pub to_slot: usize,
}

/// Why a reshape or transpose is not a bitcast, or cannot be one.
///
/// Every pair gets an exact answer: a bitcast, or one of these, with the
/// first moving element found exactly whatever the tiles.
///
/// # Examples
///
/// ```
/// use xla_layout::{bitcast::{self, Mismatch}, parse};
/// let err = bitcast::reshape(&parse("f32[4]").unwrap(), &parse("f32[4]{0:T(8)}").unwrap());
/// assert_eq!(err, Err(Mismatch::StorageBytes { from: 16, to: 32 }));
/// ```
// `Moved` holds two indices; without an allocator they stay inline, and a
// check makes one `Mismatch` at most.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mismatch {
    /// The element types differ.
    ElementType {
        /// `from`'s element type.
        from: ElementType,
        /// `to`'s element type.
        to: ElementType,
    },
    /// The elements take different numbers of bits (`E(n)`).
    ElementBits {
        /// Bits per element in `from`.
        from: u32,
        /// Bits per element in `to`.
        to: u32,
    },
    /// A reshape between different numbers of elements.
    ElementCount {
        /// Elements of `from`.
        from: usize,
        /// Elements of `to`.
        to: usize,
    },
    /// The storages take different numbers of bytes.
    StorageBytes {
        /// Storage bytes of `from`.
        from: usize,
        /// Storage bytes of `to`.
        to: usize,
    },
    /// An element moves: the first in row-major order of `from`.
    Moved(Moved),
    /// A transpose between different ranks.
    Rank {
        /// Rank of `from`.
        from: usize,
        /// Rank of `to`.
        to: usize,
    },
    /// A transpose's `perm` does not list one entry per dim.
    PermLength {
        /// Entries in `perm`.
        len: usize,
        /// Rank of both sides.
        rank: usize,
    },
    /// An entry of `perm` is no dim of `from`.
    PermEntry {
        /// Its position in `perm`.
        at: usize,
        /// Its value.
        value: usize,
        /// Rank of `from`.
        rank: usize,
    },
    /// An entry of `perm` repeats an earlier one.
    PermRepeat {
        /// Its position in `perm`.
        at: usize,
        /// The dim it repeats.
        dim: usize,
    },
    /// A dim of `to` is not the dim of `from` that `perm` names.
    PermutedDim {
        /// The dim of `to`.
        dim: usize,
        /// Its size.
        to: usize,
        /// The size of dim `perm[dim]` of `from`.
        from: usize,
        /// `perm[dim]`.
        source: usize,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Mismatch::ElementType { from, to } => write!(
                f,
                "element type `{from}` becomes `{to}`; a bitcast keeps the element type"
            ),
            Mismatch::ElementBits { from, to } => write!(
                f,
                "elements take `{from}` bits in `from` and `{to}` in `to`; a bitcast keeps the element size"
            ),
            Mismatch::ElementCount { from, to } => write!(
                f,
                "`from` has `{from}` elements and `to` has `{to}`; a reshape keeps the number of elements"
            ),
            Mismatch::StorageBytes { from, to } => write!(
                f,
                "`from` takes `{from}` bytes of storage and `to` takes `{to}`; a bitcast keeps the storage size"
            ),
            Mismatch::Moved(m) => write!(
                f,
                "element `{:?}` (row-major position `{}`) moves: it is at slot `{}` in `from` and at slot `{}` as `{:?}` in `to`",
                m.from_index, m.position, m.from_slot, m.to_slot, m.to_index
            ),
            Mismatch::Rank { from, to } => write!(
                f,
                "`from` has rank `{from}` and `to` has rank `{to}`; a transpose keeps the rank"
            ),
            Mismatch::PermLength { len, rank } => write!(
                f,
                "`perm` has `{len}` entries, expected `{rank}`: one per dim"
            ),
            Mismatch::PermEntry { at, value, rank } => write!(
                f,
                "`perm[{at}]` is `{value}`, expected a dim of `from` below `{rank}`"
            ),
            Mismatch::PermRepeat { at, dim } => write!(
                f,
                "`perm[{at}]` repeats dim `{dim}`; each dim must appear exactly once"
            ),
            Mismatch::PermutedDim {
                dim,
                to,
                from,
                source,
            } => write!(
                f,
                "dim `{dim}` of `to` is `{to}`, expected `{from}`: dim `{source}` of `from`, as `perm[{dim}]` says"
            ),
        }
    }
}

/// A laid-out shape as the comparison reads it: `to` of a transpose is
/// read on `from`'s dims.
struct Desc<'a> {
    dims: [usize; MAX_RANK],
    m2m: [usize; MAX_RANK],
    rank: usize,
    tiles: &'a [Tile],
}

impl<'a> Desc<'a> {
    fn of(l: &'a Layout) -> Self {
        let mut d = Desc {
            dims: [0; MAX_RANK],
            m2m: [0; MAX_RANK],
            rank: l.rank(),
            tiles: l.tiles(),
        };
        d.dims[..l.rank()].copy_from_slice(l.dims());
        d.m2m[..l.rank()].copy_from_slice(l.minor_to_major());
        d
    }

    fn dims(&self) -> &[usize] {
        &self.dims[..self.rank]
    }

    fn m2m(&self) -> &[usize] {
        &self.m2m[..self.rank]
    }
}

/// Element type, element size and storage size: what must hold before any
/// element is compared.
fn same_storage(from: &Layout, to: &Layout) -> Result<(), Mismatch> {
    if from.element_type() != to.element_type() {
        return Err(Mismatch::ElementType {
            from: from.element_type(),
            to: to.element_type(),
        });
    }
    if from.element_bits() != to.element_bits() {
        return Err(Mismatch::ElementBits {
            from: from.element_bits(),
            to: to.element_bits(),
        });
    }
    if from.len() != to.len() {
        return Err(Mismatch::ElementCount {
            from: from.len(),
            to: to.len(),
        });
    }
    if from.storage_bytes() != to.storage_bytes() {
        return Err(Mismatch::StorageBytes {
            from: from.storage_bytes(),
            to: to.storage_bytes(),
        });
    }
    Ok(())
}

/// The first row-major position of `from` whose slot differs in `to`
/// (read on `from`'s dims), or `None`: from the terms where both maps are
/// sums of digits and they tell where they part, else from the periods.
fn first_moved(from: &Layout, to: &Desc<'_>) -> Option<usize> {
    if from.is_empty() {
        return None;
    }
    let from_desc = Desc::of(from);
    let forms = (
        Form::new(from_desc.dims(), from_desc.m2m(), from_desc.tiles),
        Form::new(to.dims(), to.m2m(), to.tiles),
    );
    if let (Some(a), Some(b)) = forms {
        match a.first_difference(&b) {
            Compared::Same => return None,
            Compared::Differ(l) => return Some(l),
            Compared::Unknown => {}
        }
    }
    period::first_difference(
        &Side::new(from_desc.dims(), from_desc.m2m(), from_desc.tiles),
        &Side::new(to.dims(), to.m2m(), to.tiles),
        from.len(),
    )
}

/// Whether reshaping `from` into `to` is a bitcast: the element at each
/// row-major position of `from` has the same storage slot in `to`, both
/// storages take the same number of bytes, and the element type and size
/// (`E(n)`) are the same.
///
/// Every pair is decided exactly, from the layouts' digits and periods
/// (see the [module docs](self)): the time does not grow with the number
/// of elements. Tiles that cut a dim's digits off its boundaries
/// (`f32[3000,4000]{1,0:T(3,4)(2,3)}` splits `e mod 4` by 3) cost the
/// evaluation of a tile-sized box of positions, here 3 by 4.
///
/// # Errors
///
/// The [`Mismatch`]: different element types or sizes, element counts or
/// storage sizes, or else the first element (in `from`'s row-major order)
/// that moves, with its index and slot on both sides.
///
/// # Examples
///
/// ```
/// use xla_layout::{bitcast, parse};
/// // The TPU's bf16 layout: dropping the size-1 dim moves nothing.
/// let from = parse("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}").unwrap();
/// let to = parse("bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}").unwrap();
/// assert_eq!(bitcast::reshape(&from, &to), Ok(()));
/// // Tiles that split `e mod 4` by 3: decided on a 3 by 4 box.
/// let from = parse("f32[3000,4000]{1,0:T(3,4)(2,3)}").unwrap();
/// let to = parse("f32[1000,3,4000]{2,1,0:T(3,4)(2,3)}").unwrap();
/// assert_eq!(bitcast::reshape(&from, &to), Ok(()));
/// // Read by `minor_to_major` alone, this is a bitcast too, but the
/// // tiles hold 4 rows instead of 8.
/// let from = parse("f32[8,256]{1,0:T(8,128)}").unwrap();
/// let to = parse("f32[2,4,256]{2,1,0:T(4,128)}").unwrap();
/// assert_eq!(
///     bitcast::reshape(&from, &to).unwrap_err().to_string(),
///     "element `[0, 128]` (row-major position `128`) moves: it is at slot `1024` in `from` \
///      and at slot `512` as `[0, 0, 128]` in `to`"
/// );
/// ```
pub fn reshape(from: &Layout, to: &Layout) -> Result<(), Mismatch> {
    same_storage(from, to)?;
    match first_moved(from, &Desc::of(to)) {
        None => Ok(()),
        Some(position) => {
            let from_index = Index::unravel(position, from.dims());
            let to_index = Index::unravel(position, to.dims());
            Err(Mismatch::Moved(Moved {
                position,
                from_index,
                to_index,
                from_slot: from.offset(&from_index),
                to_slot: to.offset(&to_index),
            }))
        }
    }
}

/// Whether XLA's `transpose` of `from` into `to` is a bitcast: output dim
/// `i` is dim `perm[i]` of `from`, so the element at index `e` of `from`
/// must have the same slot as the one at `[e[perm[0]], e[perm[1]], ...]`
/// of `to`; storage sizes, element types and sizes as for [`reshape`].
///
/// # Errors
///
/// A `perm` that is no permutation of `from`'s dims, or dims of `to` that
/// are not the permuted dims of `from`; otherwise as [`reshape`], the first
/// moving element named in `from`'s row-major order.
///
/// # Examples
///
/// ```
/// use xla_layout::{bitcast, parse};
/// // A transpose that only relabels dims: the data stays where it is.
/// let from = parse("f32[128,256]{1,0:T(8,128)}").unwrap();
/// let to = parse("f32[256,128]{0,1:T(8,128)}").unwrap();
/// assert_eq!(bitcast::transpose(&from, &to, &[1, 0]), Ok(()));
/// assert_eq!(
///     bitcast::transpose(&from, &to, &[1, 1]).unwrap_err().to_string(),
///     "`perm[1]` repeats dim `1`; each dim must appear exactly once"
/// );
/// ```
pub fn transpose(from: &Layout, to: &Layout, perm: &[usize]) -> Result<(), Mismatch> {
    let rank = from.rank();
    if to.rank() != rank {
        return Err(Mismatch::Rank {
            from: rank,
            to: to.rank(),
        });
    }
    if perm.len() != rank {
        return Err(Mismatch::PermLength {
            len: perm.len(),
            rank,
        });
    }
    let mut seen = [usize::MAX; MAX_RANK];
    for (at, &value) in perm.iter().enumerate() {
        if value >= rank {
            return Err(Mismatch::PermEntry { at, value, rank });
        }
        if seen[value] != usize::MAX {
            return Err(Mismatch::PermRepeat { at, dim: value });
        }
        seen[value] = at;
    }
    for (dim, (&size, &source)) in to.dims().iter().zip(perm).enumerate() {
        if from.dims()[source] != size {
            return Err(Mismatch::PermutedDim {
                dim,
                to: size,
                from: from.dims()[source],
                source,
            });
        }
    }
    same_storage(from, to)?;
    // `to` read on `from`'s dims: its dim `i` is dim `perm[i]` there, and
    // its physical order, hence its tiling, is unchanged.
    let mut desc = Desc::of(to);
    for (i, &p) in perm.iter().enumerate() {
        desc.dims[p] = to.dims()[i];
    }
    for (slot, &i) in desc.m2m.iter_mut().zip(to.minor_to_major()) {
        *slot = perm[i];
    }
    match first_moved(from, &desc) {
        None => Ok(()),
        Some(position) => {
            let from_index = Index::unravel(position, from.dims());
            let mut permuted = [0usize; MAX_RANK];
            for (slot, &p) in permuted.iter_mut().zip(perm) {
                *slot = from_index[p];
            }
            let to_index = Index::from_slice(&permuted[..rank]);
            Err(Mismatch::Moved(Moved {
                position,
                from_index,
                to_index,
                from_slot: from.offset(&from_index),
                to_slot: to.offset(&to_index),
            }))
        }
    }
}

/// A layout of `to_dims` under which reshaping `from` is a [bitcast](reshape),
/// or `None` when this finds none.
///
/// Whatever it returns passes [`reshape`]. For an untiled `from` it finds
/// one whenever some `minor_to_major` on `to_dims` gives one. A tiled `from`
/// keeps its tiles (and `E(n)`, `L(n)`, `S(n)`) when the reshape splits or
/// merges dims outside the tiled minor dims; where no tiled layout fits but
/// the map is dense, an untiled one is returned.
///
/// It tries `from`'s tiles with the new dims in `from`'s physical order
/// (each where the dim of `from` holding its lowest digit is), then
/// ordered by the slot of the last element along each, then both untiled.
/// In an untiled layout that slot is `(size - 1) * stride`, which grows
/// with every step towards the major end, so that order is the only
/// `minor_to_major` that can work. Size-1 dims, which have no stride, go
/// most major.
///
/// # Examples
///
/// ```
/// use xla_layout::{bitcast, parse};
/// let from = parse("f32[24,256]{1,0:T(8,128)}").unwrap();
/// let to = bitcast::reshape_layout(&from, &[3, 8, 256]).unwrap();
/// assert_eq!(to.to_string(), "f32[3,8,256]{2,1,0:T(8,128)}");
/// let from = parse("f32[4,6]{0,1}").unwrap();
/// assert_eq!(bitcast::reshape_layout(&from, &[2, 2, 6]).unwrap().to_string(), "f32[2,2,6]{1,0,2}");
/// // Merging across the padded tile dim: no layout of `[24, 256]` can.
/// assert!(bitcast::reshape_layout(&parse("f32[4,6,256]{2,1,0:T(8,128)}").unwrap(), &[24, 256]).is_none());
/// ```
pub fn reshape_layout(from: &Layout, to_dims: &[usize]) -> Option<Layout> {
    if to_dims.len() > MAX_RANK || crate::algebra::tiling::product(to_dims) != Some(from.len()) {
        return None;
    }
    let rank = to_dims.len();
    let mut orders = [[0usize; MAX_RANK]; 2];
    orders[0] = order(from, to_dims, Order::Inherited);
    orders[1] = order(from, to_dims, Order::LastSlot);
    let candidate = |m2m: &[usize], tiled: bool| {
        let mut b = LayoutBuilder::new(from.element_type(), to_dims).minor_to_major(m2m);
        if tiled {
            for t in from.tiles() {
                b = b.tile(t.dims());
            }
        }
        b.keep_attributes(&from.attributes, |_| true);
        b.build().ok().filter(|l| reshape(from, l).is_ok())
    };
    let tiled = !from.tiles().is_empty();
    [(0, tiled), (1, tiled), (0, false), (1, false)]
        .into_iter()
        .find_map(|(o, t)| candidate(&orders[o][..rank], t))
}

/// How [`order`] places the new dims.
#[derive(Clone, Copy)]
enum Order {
    /// Where the dim of `from` that holds the new dim's lowest digit is in
    /// `from`'s physical order: splits and merges keep their place, so
    /// tiles on the minor dims still fit.
    Inherited,
    /// By the slot of the last element along each new dim.
    LastSlot,
}

/// A `minor_to_major` of `to_dims` for a layout of `from`'s elements.
fn order(from: &Layout, to_dims: &[usize], how: Order) -> [usize; MAX_RANK] {
    let rank = to_dims.len();
    let mut keys = [(0usize, 0usize, 0usize); MAX_RANK];
    let mut after = 1usize;
    for d in (0..rank).rev() {
        // An empty array has no slots; any order is a bitcast of it. A
        // size-1 dim has no stride: most major, where it moves nothing.
        keys[d] = if to_dims[d] <= 1 || from.is_empty() {
            (usize::MAX, 0, d)
        } else {
            match how {
                Order::Inherited => (physical_place(from, after), after, d),
                Order::LastSlot => {
                    let last = (to_dims[d] - 1).saturating_mul(after);
                    (from.offset(&Index::unravel(last, from.dims())), 0, d)
                }
            }
        };
        after = after.saturating_mul(to_dims[d]);
    }
    let keys = &mut keys[..rank];
    // Among equal keys (size-1 dims), the later dim is the more minor.
    keys.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(&a.2)));
    let mut m2m = [0usize; MAX_RANK];
    for (slot, key) in m2m.iter_mut().zip(keys.iter()) {
        *slot = key.2;
    }
    m2m
}

/// The place in `from`'s `minor_to_major` of the dim that row-major
/// position `position` steps first.
fn physical_place(from: &Layout, position: usize) -> usize {
    let mut after = 1usize;
    for d in (0..from.rank()).rev() {
        let size = from.dims()[d];
        if size > 1 && position < after.saturating_mul(size) {
            return from
                .minor_to_major()
                .iter()
                .position(|&x| x == d)
                .unwrap_or(0);
        }
        after = after.saturating_mul(size);
    }
    from.rank()
}

/// The greatest common divisor, for the periods and the terms alike.
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// What the unit tests of the periods and the terms share.
#[cfg(test)]
mod testing {
    extern crate std;

    use std::format;
    use std::vec::Vec;

    /// `f32` layouts of each of `dims`, in a few `minor_to_major` orders,
    /// under each of `tiles` that applies: what the periods and the terms
    /// are compared against brute force on.
    pub(super) fn small_layouts(dims: &[&[usize]], tiles: &[&str]) -> Vec<crate::Layout> {
        let join = |v: &[usize]| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut out = Vec::new();
        for dims in dims {
            let orders: Vec<Vec<usize>> = match dims.len() {
                1 => std::vec![std::vec![0]],
                2 => std::vec![std::vec![1, 0], std::vec![0, 1]],
                _ => std::vec![std::vec![2, 1, 0], std::vec![0, 2, 1], std::vec![1, 0, 2]],
            };
            for m2m in &orders {
                for t in tiles {
                    let sep = if t.is_empty() { "" } else { ":" };
                    let spec = format!("f32[{}]{{{}{sep}{t}}}", join(dims), join(m2m));
                    if let Ok(l) = crate::parse(&spec) {
                        out.push(l);
                    }
                }
            }
        }
        out
    }
}
