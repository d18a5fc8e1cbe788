//! First-level tiles: each tile's storage is one contiguous slice.

use core::slice;

use super::{Storage, StorageMut, Tensor};
use crate::AnyLayout;
use crate::{Layout, LayoutBuilder, StaticLayout, TileDim, MAX_RANK, MAX_TILE_RANK};

/// How a layout's storage splits into first-level tiles.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Slots per tile.
    len: usize,
    /// Tiles, in storage order.
    count: usize,
    /// How each tile's in-bounds extent follows from its origin.
    extents: Extents,
}

/// The first tiling level as it bounds a tile: the physical dims (most
/// major first), and the runs of them each tile dim covers, a `*` run
/// merged with the next dim. Worked out once per walk over the tiles, so a
/// tile's extent is a few divisions.
#[derive(Clone, Copy, Debug)]
struct Extents {
    /// The logical dim at each physical position, and its size.
    dim: [u8; MAX_RANK],
    size: [usize; MAX_RANK],
    rank: u8,
    /// Each tile dim's run of physical positions (`first..=last`) and its
    /// tile size; positions outside every run are one value per tile.
    runs: [(u8, u8, usize); MAX_TILE_RANK],
    run_count: u8,
    /// The layout is one tile: its extent is the dims.
    whole: bool,
}

impl Extents {
    fn new(l: &Layout, tiled: bool) -> Extents {
        let mut e = Extents {
            dim: [0; MAX_RANK],
            size: [0; MAX_RANK],
            rank: l.rank() as u8,
            runs: [(0, 0, 0); MAX_TILE_RANK],
            run_count: 0,
            whole: !tiled,
        };
        // `minor_to_major` names the most minor dim first.
        for (p, &d) in l.minor_to_major().iter().rev().enumerate() {
            e.dim[p] = d as u8;
            e.size[p] = l.dims()[d];
        }
        let Some(first) = l.tiles().first().filter(|_| tiled) else {
            return e;
        };
        // The tile's dims cover the most minor physical dims; dims a tile
        // has beyond the rank cover size-1 dims, bounding nothing.
        let rank = l.rank();
        let dims = first.dims();
        let mut start: Option<usize> = None;
        for (i, t) in dims.iter().enumerate() {
            let Some(p) = (rank + i).checked_sub(dims.len()) else {
                continue;
            };
            let run_start = *start.get_or_insert(p);
            if let TileDim::Size(t) = *t {
                e.runs[usize::from(e.run_count)] = (run_start as u8, p as u8, t);
                e.run_count += 1;
                start = None;
            }
        }
        e
    }

    /// Writes the tile's in-bounds extent per logical dim, from its
    /// origin, to `out`; `false` if its elements form no box (a `*` run
    /// the tile starts or ends inside a row of).
    fn of(&self, origin: &[usize], out: &mut [usize]) -> bool {
        let rank = usize::from(self.rank);
        if self.whole {
            for p in 0..rank {
                out[usize::from(self.dim[p])] = self.size[p];
            }
            return true;
        }
        out.fill(1);
        for &(first, last, tile) in &self.runs[..usize::from(self.run_count)] {
            let (first, last) = (usize::from(first), usize::from(last));
            if first == last {
                // One dim (no `*`), the common case: no division.
                let d = usize::from(self.dim[first]);
                out[d] = tile.min(self.size[first] - origin[d]);
                continue;
            }
            let positions = first..=last;
            // The run's dims as one number, row-major: the tile covers
            // `start..end` of it.
            let (start, len) = positions.clone().fold((0, 1), |(at, len), p| {
                (
                    at * self.size[p] + origin[usize::from(self.dim[p])],
                    len * self.size[p],
                )
            });
            let end = start.saturating_add(tile).min(len);
            // The most major position where the first and last element
            // differ: a box spans it, and every position more minor whole.
            let (mut a, mut b, mut below, mut split) = (start, end - 1, 1, None);
            let mut whole_below = 1;
            for p in positions.rev() {
                let size = self.size[p];
                if a % size != b % size {
                    split = Some((p, a % size, b % size));
                    whole_below = below;
                }
                a /= size;
                b /= size;
                below *= size;
            }
            let Some((p, from, to)) = split else {
                continue; // one element of the run
            };
            if start % whole_below != 0 || end % whole_below != 0 {
                return false;
            }
            out[usize::from(self.dim[p])] = to - from + 1;
            for q in p + 1..=last {
                out[usize::from(self.dim[q])] = self.size[q];
            }
        }
        true
    }
}

/// A tile's own layout: the tile's extents laid out by the remaining tiling
/// levels, and how many tiles there are; `None` when the layout has no
/// tiles, or a later level reaches past one first-level tile.
fn first_level(l: &Layout) -> Option<(Layout, usize)> {
    let (first, rest) = l.tiles().split_first()?;
    let k = first
        .dims()
        .iter()
        .filter(|d| matches!(d, TileDim::Size(_)))
        .count();
    let after = l.tiled_shape(1)?;
    let (outer, inner) = after.dims().split_at(after.dims().len().checked_sub(k)?);
    let mut b = LayoutBuilder::new(l.element_type(), inner);
    for t in rest {
        b = b.tile(t.dims());
    }
    if let Some(bits) = l.explicit_element_bits() {
        b = b.element_bits(bits);
    }
    let sub = b.build().ok()?;
    // The later levels must act on the tile alone: then the full tiled shape
    // is the grid of tiles followed by the tile's own tiled shape.
    let full = l.tiled_shape(l.tiles().len())?;
    let own = sub.tiled_shape(rest.len())?;
    let (grid, tail) = full.dims().split_at_checked(outer.len())?;
    if grid != outer || tail != own.dims() {
        return None;
    }
    let count = crate::algebra::tiling::product(outer)?;
    (count.checked_mul(sub.storage_len())? <= l.storage_len()).then_some((sub, count))
}

fn split(l: &Layout) -> Split {
    match first_level(l) {
        Some((sub, count)) => Split {
            len: sub.storage_len(),
            count,
            extents: Extents::new(l, true),
        },
        None => Split {
            len: l.storage_len(),
            count: usize::from(l.storage_len() > 0),
            extents: Extents::new(l, false),
        },
    }
}

/// Where a tile sits: its number in storage order, the storage offset of its
/// first slot, its origin, the logical index of its first element, and its
/// extent, how many values of each dim its elements take.
///
/// Slot `k` of the tile's slice is storage slot `offset + k`: ask
/// [`Tensor::is_padding`] which of a partial edge tile's slots are padding.
/// A tile at the edge of a dim that is no multiple of the tile holds fewer
/// elements than a whole tile, which its extent counts: loop to
/// `origin[d] + extent[d]` rather than work out `tile.min(dim - origin)`.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[3,5]{1,0:T(2,2)}"), [0.0f32; 24]).unwrap();
/// let (at, tile) = t.tiles().last().unwrap();
/// assert_eq!((at.number, at.offset, at.origin), (5, 20, [2, 4]));
/// // Row 2 and column 4 alone: the other three slots are padding.
/// assert_eq!(at.extent, Some([1, 1]));
/// let padding: Vec<bool> = (0..tile.len()).map(|k| t.is_padding(at.offset + k)).collect();
/// assert_eq!(padding, [false, true, true, true]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileAt<I> {
    /// The tile's position in storage order.
    pub number: usize,
    /// The storage offset of its first slot.
    pub offset: usize,
    /// The logical index of its first element.
    pub origin: I,
    /// The tile's in-bounds extent per dim: its elements are exactly the
    /// indices with `origin[d] <= i[d] < origin[d] + extent[d]` for every
    /// dim `d`. Every entry is at least 1 (no tile is all padding); a dim
    /// the tile does not split has 1, and a layout that is one tile (see
    /// [`Tensor::tiles`]) has its dims.
    ///
    /// `None` only where a `*` in the first tiling level merges dims and
    /// the tile starts or ends inside a row of them, so its elements form
    /// no such box: in `f32[3,5]{1,0:T(*,4)}`, the second tile holds
    /// `[0, 4]` and `[1, 0]` to `[1, 2]`.
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[3,5]{1,0:T(*,4)}"), [0.0f32; 16]).unwrap();
    /// let extents: Vec<Option<[usize; 2]>> = t.tiles().map(|(at, _)| at.extent).collect();
    /// assert_eq!(extents, [Some([1, 4]), None, None, Some([1, 3])]);
    /// ```
    pub extent: Option<I>,
}

fn at<L: AnyLayout>(layout: L, extents: &Extents, number: usize, len: usize) -> TileAt<L::Index> {
    let offset = number * len;
    let rank = layout.shape().len();
    // A tile's first slot is always an element: tile origins lie inside the dims.
    let origin = layout
        .index_at(offset)
        .unwrap_or_else(|| layout.index_from(&[0; MAX_RANK][..rank]));
    let mut extent = [0; MAX_RANK];
    let extent = extents
        .of(origin.as_ref(), &mut extent[..rank])
        .then(|| layout.index_from(&extent[..rank]));
    TileAt {
        number,
        offset,
        origin,
        extent,
    }
}

/// The first-level tiles of a [`Tensor`] in storage order, each with its
/// contiguous storage. Made by [`Tensor::tiles`].
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [1.0f32; 16]).unwrap();
/// assert_eq!(t.tiles().count(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Tiles<'a, L, T> {
    layout: L,
    extents: Extents,
    chunks: core::iter::Enumerate<slice::ChunksExact<'a, T>>,
    len: usize,
}

impl<'a, L: AnyLayout, T> Iterator for Tiles<'a, L, T> {
    type Item = (TileAt<L::Index>, &'a [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next()?;
        Some((at(self.layout, &self.extents, k, self.len), tile))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<L: AnyLayout, T> ExactSizeIterator for Tiles<'_, L, T> {}
impl<L: AnyLayout, T> DoubleEndedIterator for Tiles<'_, L, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next_back()?;
        Some((at(self.layout, &self.extents, k, self.len), tile))
    }
}

/// The first-level tiles of a [`Tensor`] to write, disjoint, so they can go
/// to different threads. Made by [`Tensor::tiles_mut`].
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let mut t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
/// for (at, tile) in t.tiles_mut() {
///     tile.fill(at.number as f32);
/// }
/// assert_eq!(t[[3, 3]], 3.0);
/// ```
#[derive(Debug)]
pub struct TilesMut<'a, L, T> {
    layout: L,
    extents: Extents,
    chunks: core::iter::Enumerate<slice::ChunksExactMut<'a, T>>,
    len: usize,
}

impl<'a, L: AnyLayout, T> Iterator for TilesMut<'a, L, T> {
    type Item = (TileAt<L::Index>, &'a mut [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next()?;
        Some((at(self.layout, &self.extents, k, self.len), tile))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<L: AnyLayout, T> ExactSizeIterator for TilesMut<'_, L, T> {}
impl<L: AnyLayout, T> DoubleEndedIterator for TilesMut<'_, L, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next_back()?;
        Some((at(self.layout, &self.extents, k, self.len), tile))
    }
}

impl<L: AnyLayout, S: Storage> Tensor<L, S> {
    /// The first-level tiles in storage order: where each sits
    /// ([`TileAt`]) and its contiguous storage, as
    /// [`tile_layout`](Self::tile_layout) lays it out.
    ///
    /// A layout without tiles, or whose later levels reach across
    /// first-level tiles, is one tile: all of its storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2,4]{1,0:T(2,2)}"), [1.0f32, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]).unwrap();
    /// let tiles: Vec<([usize; 2], &[f32])> = t.tiles().map(|(at, s)| (at.origin, s)).collect();
    /// assert_eq!(tiles, [([0, 0], &[1.0, 2.0, 5.0, 6.0][..]), ([0, 2], &[3.0, 4.0, 7.0, 8.0][..])]);
    /// ```
    pub fn tiles(&self) -> Tiles<'_, L, S::Elem> {
        self.tile_grid().iter()
    }

    /// The layout of one first-level tile's storage: the tile's extents
    /// (row-major) laid out by the remaining tiling levels. For
    /// `bf16[..]{1,0:T(8,128)(2,1)}` it is `bf16[8,128]{1,0:T(2,1)}`, so a tile
    /// becomes a tensor of its own. A layout that is one tile (see
    /// [`tiles`](Self::tiles)) gives itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("bf16[16,256]{1,0:T(8,128)(2,1)}"), [0u16; 4096]).unwrap();
    /// let sub = t.tile_layout();
    /// assert_eq!(sub.to_string(), "bf16[8,128]{1,0:T(2,1)}");
    /// let (_, first) = t.tiles().next().unwrap();
    /// let tile = Tensor::new(&sub, first).unwrap();
    /// assert_eq!(tile[[7, 127]], 0);
    /// ```
    pub fn tile_layout(&self) -> Layout {
        self.layout
            .with_layout(|l| first_level(l).map_or_else(|| l.clone(), |(sub, _)| sub))
    }
}

/// Random access to the first-level tiles of a [`Tensor`], for kernels that
/// read tiles out of order (the rows of one operand against the columns of
/// another). Made by [`Tensor::tile_grid`], which works out the tiling once.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
/// let grid = t.tile_grid();
/// let (at, tile) = grid.tile_of(&[3, 1]).unwrap();
/// assert_eq!((at.number, at.origin, tile.len()), (2, [2, 0], 4));
/// assert!(grid.tile_of(&[4, 0]).is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TileGrid<'a, L, T> {
    layout: L,
    extents: Extents,
    storage: &'a [T],
    slots: usize,
    count: usize,
}

impl<'a, L: AnyLayout, T> TileGrid<'a, L, T> {
    /// Slots per tile.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// assert_eq!(t.tile_grid().tile_len(), 4);
    /// ```
    pub fn tile_len(&self) -> usize {
        self.slots
    }

    /// The number of tiles.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// assert_eq!(t.tile_grid().len(), 4);
    /// ```
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no tiles (an empty array).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,0]"), [0.0f32; 0]).unwrap();
    /// assert!(t.tile_grid().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Tile `number` (in storage order), or `None` past the last.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// assert_eq!(t.tile_grid().tile(3).unwrap().0.origin, [2, 2]);
    /// ```
    #[inline]
    pub fn tile(&self, number: usize) -> Option<(TileAt<L::Index>, &'a [T])> {
        if number >= self.count {
            return None;
        }
        let start = number * self.slots;
        let tile = self.storage.get(start..start + self.slots)?;
        Some((at(self.layout, &self.extents, number, self.slots), tile))
    }

    /// The tile holding the element at `index`, or `None` outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// assert_eq!(t.tile_grid().tile_of(&[1, 3]).unwrap().0.number, 1);
    /// ```
    #[inline]
    pub fn tile_of(&self, index: &[usize]) -> Option<(TileAt<L::Index>, &'a [T])> {
        let offset = self.layout.locate(index)?;
        self.tile(offset / self.slots.max(1))
    }

    /// The tiles in storage order, as [`Tensor::tiles`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// assert_eq!(t.tile_grid().iter().count(), 4);
    /// ```
    pub fn iter(&self) -> Tiles<'a, L, T> {
        self.into_iter()
    }
}

impl<'a, L: AnyLayout, T> IntoIterator for &TileGrid<'a, L, T> {
    type Item = (TileAt<L::Index>, &'a [T]);
    type IntoIter = Tiles<'a, L, T>;

    fn into_iter(self) -> Tiles<'a, L, T> {
        Tiles {
            layout: self.layout,
            extents: self.extents,
            chunks: self.storage[..self.slots * self.count]
                .chunks_exact(self.slots.max(1))
                .enumerate(),
            len: self.slots,
        }
    }
}

impl<L: AnyLayout, S: Storage> Tensor<L, S> {
    /// Random access to the first-level tiles ([`TileGrid`]): the tiling is
    /// worked out once, here, not per tile.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[16,256]{1,0:T(8,128)}"), &[0.0f32; 4096][..]).unwrap();
    /// let grid = t.tile_grid();
    /// let (at, tile) = grid.tile_of(&[9, 130]).unwrap();
    /// assert_eq!((at.origin, tile.len()), ([8, 128], 1024));
    /// ```
    pub fn tile_grid(&self) -> TileGrid<'_, L, S::Elem> {
        let s = self.layout.with_layout(split);
        TileGrid {
            layout: self.layout,
            extents: s.extents,
            storage: self.storage(),
            slots: s.len,
            count: s.count,
        }
    }
}

impl<L: AnyLayout, S: StorageMut> Tensor<L, S> {
    /// [`tiles`](Self::tiles), each tile's storage writable. The slices are
    /// disjoint: hand them to threads.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[2,4]{1,0:T(2,2)}"), [0.0f32; 8]).unwrap();
    /// let (_, second) = t.tiles_mut().nth(1).unwrap();
    /// second[0] = 1.0;
    /// assert_eq!(t[[0, 2]], 1.0);
    /// ```
    pub fn tiles_mut(&mut self) -> TilesMut<'_, L, S::Elem> {
        let layout = self.layout;
        let s = layout.with_layout(split);
        let storage = self.storage.as_mut_slice_of_storage();
        TilesMut {
            layout,
            extents: s.extents,
            chunks: storage[..s.len * s.count]
                .chunks_exact_mut(s.len.max(1))
                .enumerate(),
            len: s.len,
        }
    }
}

/// `tiles_as` was given a layout other than the tiles' own: the tiles are
/// laid out as [`expected`](Self::expected).
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
/// let err = t.tiles_as(layout!("f32[2,2]{0,1}")).map(|_| ()).unwrap_err();
/// assert_eq!(err.to_string(), "the tiles are laid out as `f32[2,2]{1,0}`, not `f32[2,2]{0,1}`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileLayoutError {
    expected: Layout,
    given: Layout,
}

impl TileLayoutError {
    /// The tiles' own layout ([`Tensor::tile_layout`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// let err = t.tiles_as(layout!("f32[4]")).map(|_| ()).unwrap_err();
    /// assert_eq!(err.expected().to_string(), "f32[2,2]{1,0}");
    /// ```
    pub fn expected(&self) -> &Layout {
        &self.expected
    }
}

impl core::fmt::Display for TileLayoutError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the tiles are laid out as `{}`, not `{}`",
            self.expected, self.given
        )
    }
}

impl core::error::Error for TileLayoutError {}

impl<L: AnyLayout, S: Storage> Tensor<L, S> {
    /// [`tiles`](Self::tiles), each tile a tensor of `tile`, the tiles' own
    /// layout ([`tile_layout`](Self::tile_layout)), checked once, here. With
    /// a `layout!` value for `tile`, element access inside a tile is its
    /// folded `const fn` offset.
    ///
    /// # Errors
    ///
    /// [`TileLayoutError`] if `tile` is not the tiles' layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let logical: Vec<u16> = (0..16 * 256).map(|x| x as u16).collect();
    /// let mut storage = vec![0u16; 4096];
    /// let t = Tensor::from_row_major(layout!("bf16[16,256]{1,0:T(8,128)(2,1)}"), &logical, &mut storage[..]).unwrap();
    /// for (at, tile) in t.tiles_as(layout!("bf16[8,128]{1,0:T(2,1)}")).unwrap() {
    ///     let [r, c] = at.origin;
    ///     assert_eq!(tile[[3, 5]], logical[(r + 3) * 256 + c + 5]);
    /// }
    /// ```
    #[allow(
        clippy::type_complexity,
        reason = "an iterator of pairs, spelled out once"
    )]
    pub fn tiles_as<M: AnyLayout>(
        &self,
        tile: M,
    ) -> Result<impl Iterator<Item = (TileAt<L::Index>, Tensor<M, &[S::Elem]>)>, TileLayoutError>
    {
        check_tile(self.tile_layout(), tile)?;
        Ok(self.tiles().map(move |(at, storage)| {
            (
                at,
                Tensor {
                    layout: tile,
                    storage,
                },
            )
        }))
    }
}

impl<L: AnyLayout, S: StorageMut> Tensor<L, S> {
    /// [`tiles_mut`](Self::tiles_mut), each tile a tensor of `tile` (see
    /// [`tiles_as`](Self::tiles_as)).
    ///
    /// # Errors
    ///
    /// [`TileLayoutError`] if `tile` is not the tiles' layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
    /// for (at, mut tile) in t.tiles_mut_as(layout!("f32[2,2]")).unwrap() {
    ///     tile[[1, 0]] = at.number as f32;
    /// }
    /// assert_eq!(t[[3, 2]], 3.0);
    /// ```
    #[allow(
        clippy::type_complexity,
        reason = "an iterator of pairs, spelled out once"
    )]
    pub fn tiles_mut_as<M: AnyLayout>(
        &mut self,
        tile: M,
    ) -> Result<impl Iterator<Item = (TileAt<L::Index>, Tensor<M, &mut [S::Elem]>)>, TileLayoutError>
    {
        check_tile(self.tile_layout(), tile)?;
        Ok(self.tiles_mut().map(move |(at, storage)| {
            (
                at,
                Tensor {
                    layout: tile,
                    storage,
                },
            )
        }))
    }
}

fn check_tile<M: AnyLayout>(expected: Layout, tile: M) -> Result<(), TileLayoutError> {
    tile.with_layout(|given| {
        if *given == expected {
            Ok(())
        } else {
            Err(TileLayoutError {
                expected,
                given: given.clone(),
            })
        }
    })
}

/// The layout of one first-level tile of `l` ([`Tensor::tile_layout`]), or
/// `None` when `l` is one tile. `layout!` calls it to give tiled layouts
/// their [`TiledLayout::Tile`]; not public API.
#[doc(hidden)]
#[must_use]
pub fn __tile_layout(l: &Layout) -> Option<Layout> {
    first_level(l).map(|(sub, _)| sub)
}

/// A `layout!` layout with first-level tiles, and the `layout!` type of one
/// tile: what [`Tensor::tile_layout`] finds at run time, here a type with
/// its own folded `const fn` offsets. `layout!(..., tile = Name)` emits the
/// tile's layout as the type `Name` and implements this trait; the layout
/// must have first-level tiles that are contiguous slices of storage (see
/// [`Tensor::tiles`]), else the option is a compile error.
/// [`Tensor::tile_tensors`] then yields the tiles as tensors of it, with
/// nothing left to check at run time.
///
/// On request only: the tile type is a second expansion of the macro, which
/// every tiled layout would otherwise pay for. It is one level; for the
/// next, give the tile type's spec a `layout!` with `tile = ...` of its own.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, StaticLayout, tensor::TiledLayout};
/// layout!(struct W = "bf16[16,256]{1,0:T(8,128)(2,1)}", tile = WTile);
/// assert_eq!(WTile::SPEC, "bf16[8,128]{1,0:T(2,1)}");
/// assert_eq!(<W as TiledLayout>::Tile::STORAGE_LEN, 1024);
/// ```
///
/// A layout without tiles has none to name:
///
/// ```compile_fail
/// xla_layout::layout!(struct V = "f32[4,4]{1,0}", tile = VTile);
/// ```
pub trait TiledLayout: StaticLayout {
    /// The layout of one first-level tile: the tile's extents laid out by
    /// the remaining tiling levels. A hand-written impl must name exactly
    /// that layout ([`Tensor::tile_layout`]); debug builds check its length.
    type Tile: StaticLayout;
}

impl<L: TiledLayout, S: Storage> Tensor<L, S> {
    /// [`tiles`](Self::tiles), each tile a tensor of `L`'s
    /// [`TiledLayout::Tile`], whose offsets are that type's folded
    /// `const fn`s: [`tiles_as`](Self::tiles_as) without writing the tile's
    /// spec or checking it.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let logical: Vec<u16> = (0..16 * 256).map(|x| x as u16).collect();
    /// let mut storage = vec![0u16; 4096];
    /// let l = layout!("bf16[16,256]{1,0:T(8,128)(2,1)}", tile = Tile);
    /// let t = Tensor::from_row_major(l, &logical, &mut storage[..]).unwrap();
    /// for (at, tile) in t.tile_tensors() {
    ///     let [r, c] = at.origin;
    ///     assert_eq!(tile[[3, 5]], logical[(r + 3) * 256 + c + 5]);
    /// }
    /// ```
    #[allow(
        clippy::type_complexity,
        reason = "an iterator of pairs, spelled out once"
    )]
    pub fn tile_tensors(
        &self,
    ) -> impl Iterator<Item = (TileAt<L::Index>, Tensor<L::Tile, &[S::Elem]>)> {
        self.tiles().map(|(at, storage)| {
            (
                at,
                Tensor {
                    layout: L::Tile::default(),
                    storage,
                },
            )
        })
    }
}

impl<L: TiledLayout, S: StorageMut> Tensor<L, S> {
    /// [`tiles_mut`](Self::tiles_mut), each tile a tensor of `L`'s
    /// [`TiledLayout::Tile`] (see [`tile_tensors`](Self::tile_tensors)).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let l = layout!("f32[4,4]{1,0:T(2,2)}", tile = Tile);
    /// let mut t = Tensor::new(l, [0.0f32; 16]).unwrap();
    /// for (at, mut tile) in t.tile_tensors_mut() {
    ///     tile[[1, 0]] = at.number as f32;
    /// }
    /// assert_eq!(t[[3, 2]], 3.0);
    /// ```
    #[allow(
        clippy::type_complexity,
        reason = "an iterator of pairs, spelled out once"
    )]
    pub fn tile_tensors_mut(
        &mut self,
    ) -> impl Iterator<Item = (TileAt<L::Index>, Tensor<L::Tile, &mut [S::Elem]>)> {
        debug_assert_eq!(
            self.tile_grid().tile_len(),
            L::Tile::STORAGE_LEN,
            "`TiledLayout::Tile` is not the tiles' layout"
        );
        self.tiles_mut().map(|(at, storage)| {
            (
                at,
                Tensor {
                    layout: L::Tile::default(),
                    storage,
                },
            )
        })
    }
}
