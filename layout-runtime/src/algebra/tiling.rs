//! The tile step of SPEC.md §4, written once: put size-1 dims in front
//! when the tile has more dims than the shape, combine each `*` group into
//! one dim, split each group's dim into an outer dim `ceil(e / t)` and an
//! inner dim `t`, outers before inners.
//!
//! Each dim carries a value of the caller's choosing alongside its extent
//! (a symbolic index for the folded programs, a digit for the digit form,
//! nothing for the tiled shape alone); the caller says, through [`Carry`],
//! what combining and splitting do to it. Changing what a tile means is a
//! change to [`Tiled::step`] and to the [`Level`] it records, which says
//! where the step put each dim and undoes it, and nothing else.

use core::ops::Range;

use crate::{Tile, MAX_TILED_RANK, MAX_TILE_RANK};

/// The product of `dims`, or `None` if it exceeds `usize`. A zero anywhere
/// makes it 0, however large the rest: an empty array takes no storage.
#[inline]
pub(crate) fn product(dims: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// One dim of a shape being tiled: its extent and what it carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dim<V> {
    pub(crate) extent: usize,
    pub(crate) value: V,
}

/// What combining and splitting dims do to the values they carry.
pub(crate) trait Carry {
    type Value: Copy;
    type Error;
    /// The value of a size-1 dim that a tile with more dims than the
    /// shape puts in front.
    fn prepended(&mut self) -> Self::Value;
    /// The value of `major * minor.extent + minor`: what `*` makes of two
    /// adjacent dims.
    fn combine(
        &mut self,
        major: Dim<Self::Value>,
        minor: Dim<Self::Value>,
    ) -> Result<Self::Value, Self::Error>;
    /// The values of `dim / t` and `dim % t`: the outer and inner dims a
    /// tile extent `t` makes of `dim`.
    fn split(
        &mut self,
        dim: Dim<Self::Value>,
        t: usize,
    ) -> Result<(Self::Value, Self::Value), Self::Error>;
}

/// Why a step was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal<E> {
    /// The tiled shape would have more than [`MAX_TILED_RANK`] dims.
    Rank,
    /// A combined extent exceeds `usize`.
    Overflow,
    /// The caller's values refused.
    Carried(E),
}

/// What one tiling level did to the shape, kept so the inverse can undo it.
#[derive(Clone, Copy)]
pub(crate) struct Level {
    /// Size-1 dims put in front because the tile had more dims than the shape.
    pub(crate) prepended: usize,
    /// Dims before the tiled suffix.
    pub(crate) base: usize,
    pub(crate) tile: Tile,
    /// Extents of the tiled suffix before combining.
    pub(crate) extents: [usize; MAX_TILE_RANK],
}

impl Level {
    /// The level `tile` makes of a shape of extents `before`, most major
    /// first.
    #[inline]
    pub(crate) fn of(before: &[usize], tile: &Tile) -> Level {
        Level::with(before.len(), tile, |p| before[p])
    }

    /// The level `tile` makes of a shape of `len` dims, dim `p` of extent
    /// `extent(p)`.
    #[inline]
    fn with(len: usize, tile: &Tile, extent: impl Fn(usize) -> usize) -> Level {
        let k = tile.rank();
        let prepended = k.saturating_sub(len);
        let base = len + prepended - k;
        let mut extents = [1; MAX_TILE_RANK];
        // Positions in the shape with the prepended dims, of extent 1, in front.
        for (j, e) in extents[..k].iter_mut().enumerate() {
            if let Some(p) = (base + j).checked_sub(prepended) {
                *e = extent(p);
            }
        }
        Level {
            prepended,
            base,
            tile: *tile,
            extents,
        }
    }

    #[inline]
    pub(crate) fn k(&self) -> usize {
        self.tile.rank()
    }

    /// The number of groups: the level makes an outer and an inner dim
    /// of each.
    #[inline]
    pub(crate) fn count(&self) -> usize {
        self.groups().count()
    }

    /// `(first, last, t)` of each combined group: positions in the tile
    /// and the group's tile extent.
    #[inline]
    pub(crate) fn groups(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.tile.groups()
    }

    #[inline]
    pub(crate) fn group_extent(&self, first: usize, last: usize) -> usize {
        // Overflow was ruled out when the shape was stepped.
        product(&self.extents[first..=last]).unwrap_or(usize::MAX)
    }

    /// Positions, in the shape after the level, of the outer dims: the
    /// index of the tile, one dim per group.
    #[inline]
    pub(crate) fn outer(&self) -> Range<usize> {
        self.base..self.base + self.count()
    }

    /// Positions, in the shape after the level, of the inner dims: the
    /// index in the tile, one dim per group.
    #[inline]
    pub(crate) fn inner(&self) -> Range<usize> {
        let groups = self.count();
        self.base + groups..self.base + 2 * groups
    }

    /// `before` (an index of the shape before the level, or its extents)
    /// as the tile sees it, written to the front of `seen`: `fill` (0 for
    /// an index, 1 for extents) in each prepended dim, then `before`.
    /// Returns how many entries that is.
    pub(crate) fn seen(&self, before: &[usize], fill: usize, seen: &mut [usize]) -> usize {
        let len = self.prepended + before.len();
        seen[..self.prepended].fill(fill);
        seen[self.prepended..len].copy_from_slice(before);
        len
    }

    /// Group `g`'s value before the level split it, read from `after`,
    /// an index of the shape after the level: its tile index times its
    /// tile extent `t` plus its index in the tile. A value not below
    /// [`group_extent`](Self::group_extent) is padding of this level.
    #[inline]
    pub(crate) fn joined(&self, g: usize, t: usize, after: &[usize]) -> usize {
        after[self.outer().start + g]
            .wrapping_mul(t)
            .wrapping_add(after[self.inner().start + g])
    }

    /// What `*` makes of the group of tile positions `first..=last`: the
    /// row-major index of `tiled[first..=last]` over the group's extents,
    /// the value the level splits. [`unmerge`](Self::unmerge) undoes it.
    pub(crate) fn merged(&self, first: usize, last: usize, tiled: &[usize]) -> usize {
        tiled[first..=last]
            .iter()
            .zip(&self.extents[first..=last])
            .fold(0usize, |x, (&i, &d)| x.wrapping_mul(d).wrapping_add(i))
    }

    /// Undoes the `*` of the group of tile positions `first..=last`:
    /// writes to `tiled[first..=last]` the indices of its dims whose
    /// row-major index is `x`, a value below the group's extent.
    pub(crate) fn unmerge(&self, first: usize, last: usize, mut x: usize, tiled: &mut [usize]) {
        for j in (first + 1..=last).rev() {
            let d = self.extents[j];
            tiled[j] = x % d;
            x /= d;
        }
        tiled[first] = x;
    }

    /// Undoes the level for one slot: writes to `before` (as long as the
    /// shape before the level) the index whose slot is `after` in the
    /// shape after it (tile index times tile plus index in tile, combined
    /// dims split again, prepended dims dropped), or returns `false` if
    /// that slot is padding of this level.
    pub(crate) fn undo(&self, after: &[usize], before: &mut [usize]) -> bool {
        let base = self.base;
        let mut padded = [0usize; MAX_TILED_RANK];
        padded[..base].copy_from_slice(&after[..base]);
        for (g, (first, last, t)) in self.groups().enumerate() {
            let x = self.joined(g, t, after);
            if x >= self.group_extent(first, last) {
                return false;
            }
            self.unmerge(first, last, x, &mut padded[base..]);
        }
        before.copy_from_slice(&padded[self.prepended..base + self.k()]);
        true
    }
}

/// A shape being tiled, most major dim first.
#[derive(Clone, Copy)]
pub(crate) struct Tiled<V> {
    dims: [Dim<V>; MAX_TILED_RANK],
    len: usize,
}

impl<V: Copy> Tiled<V> {
    /// The physical shape before tiling: the logical dims in
    /// `minor_to_major` order, most major first, dim `d` carrying
    /// `value(d)`; `fill` is never read.
    #[inline]
    pub(crate) fn physical<E>(
        dims: &[usize],
        m2m: &[usize],
        fill: V,
        value: impl FnMut(usize) -> Result<V, E>,
    ) -> Result<Self, E> {
        let mut shape = Tiled::new(fill);
        shape.set_physical(dims, m2m, value)?;
        Ok(shape)
    }

    /// No dims; `fill` is never read.
    #[inline]
    pub(crate) fn new(fill: V) -> Self {
        Tiled {
            // Extent 0: where `fill` is zero, the array is one zeroed block.
            dims: [Dim {
                extent: 0,
                value: fill,
            }; MAX_TILED_RANK],
            len: 0,
        }
    }

    /// [`Tiled::physical`] in place: a loop that steps a shape per index
    /// makes it where it lives rather than moving it out of a `Result`.
    #[inline]
    pub(crate) fn set_physical<E>(
        &mut self,
        dims: &[usize],
        m2m: &[usize],
        mut value: impl FnMut(usize) -> Result<V, E>,
    ) -> Result<(), E> {
        // Counted in a local: `self.len` in the loop would be a store and
        // a load per dim.
        let mut len = 0;
        for (slot, &d) in self.dims.iter_mut().zip(m2m.iter().rev()) {
            *slot = Dim {
                extent: dims.get(d).copied().unwrap_or(0),
                value: value(d)?,
            };
            len += 1;
        }
        self.len = len;
        Ok(())
    }

    /// The dims, most major first.
    #[inline]
    pub(crate) fn dims(&self) -> &[Dim<V>] {
        &self.dims[..self.len]
    }

    /// Applies `tile`: extents first, so that an extent past `usize` is
    /// the refusal whatever the values would say, then the values, group
    /// by group. The shape is unspecified after a refusal.
    #[inline]
    pub(crate) fn step<C: Carry<Value = V>>(
        &mut self,
        tile: &Tile,
        carry: &mut C,
    ) -> Result<Level, Refusal<C::Error>> {
        let level = Level::with(self.len, tile, |p| self.dims[p].extent);
        // `tile`'s groups, not the copy in `level`: reading the copy right
        // after it is made stalls the loop that steps a shape per index.
        let (prepended, base, groups) = (level.prepended, level.base, tile.groups().count());
        if base + 2 * groups > MAX_TILED_RANK {
            return Err(Refusal::Rank);
        }
        let one = Dim {
            extent: 1,
            value: carry.prepended(),
        };
        if prepended > 0 {
            self.dims.copy_within(..self.len, prepended);
            self.dims[..prepended].fill(one);
        }
        let mut outer = [0usize; MAX_TILE_RANK];
        for (g, (first, last, t)) in tile.groups().enumerate() {
            // The group's extents from the dims rather than `level`: reading
            // its copy right after it is made stalls a loop that steps a
            // shape per index.
            let mut extents = [0usize; MAX_TILE_RANK];
            for (e, d) in extents
                .iter_mut()
                .zip(&self.dims[base + first..=base + last])
            {
                *e = d.extent;
            }
            let e = product(&extents[..=last - first]).ok_or(Refusal::Overflow)?;
            outer[g] = e.div_ceil(t);
        }
        // Each outer dim is written where its group began or before, over
        // dims already read; the inner ones wait, as they would overwrite
        // groups not yet read.
        let mut inner = [one.value; MAX_TILE_RANK];
        for (g, (first, last, t)) in tile.groups().enumerate() {
            let mut acc = self.dims[base + first];
            for &minor in &self.dims[base + first + 1..=base + last] {
                acc = Dim {
                    // Saturating only where a later extent is 0: an empty
                    // array, whose values nothing reads.
                    extent: acc.extent.saturating_mul(minor.extent),
                    value: carry.combine(acc, minor).map_err(Refusal::Carried)?,
                };
            }
            let (q, r) = carry.split(acc, t).map_err(Refusal::Carried)?;
            self.dims[base + g] = Dim {
                extent: outer[g],
                value: q,
            };
            inner[g] = r;
        }
        for (g, (_, _, t)) in tile.groups().enumerate() {
            self.dims[base + groups + g] = Dim {
                extent: t,
                value: inner[g],
            };
        }
        self.len = base + 2 * groups;
        Ok(level)
    }
}

/// Extents alone: the tiled shape without values.
pub(crate) struct Extents;

impl Carry for Extents {
    type Value = ();
    type Error = core::convert::Infallible;
    fn prepended(&mut self) {}
    fn combine(&mut self, _: Dim<()>, _: Dim<()>) -> Result<(), Self::Error> {
        Ok(())
    }
    fn split(&mut self, _: Dim<()>, _: usize) -> Result<((), ()), Self::Error> {
        Ok(((), ()))
    }
}
