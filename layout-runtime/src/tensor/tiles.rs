//! First-level tiles: each tile's storage is one contiguous slice.

use core::slice;

use super::{AnyLayout, Storage, StorageMut, Tensor};
use crate::{Layout, LayoutBuilder, StaticLayout, TileDim};

/// How a layout's storage splits into first-level tiles.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Slots per tile.
    len: usize,
    /// Tiles, in storage order.
    count: usize,
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
    let count = crate::fold::product(outer)?;
    (count.checked_mul(sub.storage_len())? <= l.storage_len()).then_some((sub, count))
}

fn split(l: &Layout) -> Split {
    match first_level(l) {
        Some((sub, count)) => Split {
            len: sub.storage_len(),
            count,
        },
        None => Split {
            len: l.storage_len(),
            count: usize::from(l.storage_len() > 0),
        },
    }
}

/// Where a tile sits: its number in storage order, the storage offset of its
/// first slot, and its origin, the logical index of its first element.
///
/// Slot `k` of the tile's slice is storage slot `offset + k`: ask
/// [`Tensor::is_padding`] which of a partial edge tile's slots are padding.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, Tensor};
/// let t = Tensor::new(layout!("f32[3,5]{1,0:T(2,2)}"), [0.0f32; 24]).unwrap();
/// let (at, tile) = t.tiles().last().unwrap();
/// assert_eq!((at.number, at.offset, at.origin), (5, 20, [2, 4]));
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
}

fn at<L: AnyLayout>(layout: L, number: usize, len: usize) -> TileAt<L::Index> {
    let offset = number * len;
    // A tile's first slot is always an element: tile origins lie inside the dims.
    let origin = layout
        .index_at(offset)
        .unwrap_or_else(|| layout.index_from(&[0; crate::MAX_RANK][..layout.shape().len()]));
    TileAt {
        number,
        offset,
        origin,
    }
}

/// The first-level tiles of a [`Tensor`] in storage order, each with its
/// contiguous storage. Made by [`Tensor::tiles`].
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, Tensor};
/// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [1.0f32; 16]).unwrap();
/// assert_eq!(t.tiles().count(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Tiles<'a, L, T> {
    layout: L,
    chunks: core::iter::Enumerate<slice::ChunksExact<'a, T>>,
    len: usize,
}

impl<'a, L: AnyLayout, T> Iterator for Tiles<'a, L, T> {
    type Item = (TileAt<L::Index>, &'a [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next()?;
        Some((at(self.layout, k, self.len), tile))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<L: AnyLayout, T> ExactSizeIterator for Tiles<'_, L, T> {}
impl<L: AnyLayout, T> DoubleEndedIterator for Tiles<'_, L, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next_back()?;
        Some((at(self.layout, k, self.len), tile))
    }
}

/// The first-level tiles of a [`Tensor`] to write, disjoint, so they can go
/// to different threads. Made by [`Tensor::tiles_mut`].
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, Tensor};
/// let mut t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
/// for (at, tile) in t.tiles_mut() {
///     tile.fill(at.number as f32);
/// }
/// assert_eq!(t[[3, 3]], 3.0);
/// ```
#[derive(Debug)]
pub struct TilesMut<'a, L, T> {
    layout: L,
    chunks: core::iter::Enumerate<slice::ChunksExactMut<'a, T>>,
    len: usize,
}

impl<'a, L: AnyLayout, T> Iterator for TilesMut<'a, L, T> {
    type Item = (TileAt<L::Index>, &'a mut [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next()?;
        Some((at(self.layout, k, self.len), tile))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<L: AnyLayout, T> ExactSizeIterator for TilesMut<'_, L, T> {}
impl<L: AnyLayout, T> DoubleEndedIterator for TilesMut<'_, L, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (k, tile) = self.chunks.next_back()?;
        Some((at(self.layout, k, self.len), tile))
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
/// use xla_layout::{layout, Tensor};
/// let t = Tensor::new(layout!("f32[4,4]{1,0:T(2,2)}"), [0.0f32; 16]).unwrap();
/// let grid = t.tile_grid();
/// let (at, tile) = grid.tile_of(&[3, 1]).unwrap();
/// assert_eq!((at.number, at.origin, tile.len()), (2, [2, 0], 4));
/// assert!(grid.tile_of(&[4, 0]).is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TileGrid<'a, L, T> {
    layout: L,
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
        Some((at(self.layout, number, self.slots), tile))
    }

    /// The tile holding the element at `index`, or `None` outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
    /// let t = Tensor::new(layout!("f32[16,256]{1,0:T(8,128)}"), &[0.0f32; 4096][..]).unwrap();
    /// let grid = t.tile_grid();
    /// let (at, tile) = grid.tile_of(&[9, 130]).unwrap();
    /// assert_eq!((at.origin, tile.len()), ([8, 128], 1024));
    /// ```
    pub fn tile_grid(&self) -> TileGrid<'_, L, S::Elem> {
        let s = self.layout.with_layout(split);
        TileGrid {
            layout: self.layout,
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
    /// use xla_layout::{layout, Tensor};
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
/// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
/// use xla_layout::{layout, StaticLayout, TiledLayout};
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
    /// use xla_layout::{layout, Tensor};
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
    /// use xla_layout::{layout, Tensor};
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
