//! A layout of at most one tiling level as the places of its tiled shape.
//!
//! The offset's places in the tiled shape's mixed radix, `(x / stride) %
//! radix`, give every dim: an untiled dim is one place; each group of dims
//! that a tile dim covers (with the `*` before it) is `outer * tile +
//! inner` of two places, padding where it reaches the group's extent, and
//! is split into its dims by their extents. [`Tiled`] works out those
//! numbers once; [`RankedInverse`](crate::RankedInverse) decodes them into
//! multiplications for values below 2^31, and a [`Layout`] keeps them as
//! pool slots in [`Places`] for its own `index_of` where its inverse has
//! no closed form (the dims a `*` combines, split apart again).

use crate::closed::{constant, store_pairs, Entries, Pool, Stage};
use crate::divide::divide;
use crate::fixed::Fixed;
use crate::fold::{physical, product};
use crate::raw::{Reader, Writer};
use crate::{Layout, Shape, Tile, MAX_RANK};

/// The most dims of [`Places`]: evaluation is unrolled over them, so that
/// a caller's loop decodes each dim's constants once, outside it.
const MAX_DIMS: usize = 8;
// `Places::index_of` lists the dims.
const _: () = assert!(MAX_DIMS == 8);

/// Where a dim's value comes from. Tested per dim in the same order on
/// every call, these branches cost less than the work they skip: an
/// untiled dim computed as a group of tile 1 (an inner place of 0, a
/// multiplication by 1) took up to 1.7 times as long.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Value {
    /// What the more minor dims of its group left.
    Carried,
    /// An untiled dim: one place of the offset, `outer`.
    Place,
    /// The most minor dim of a tile dim's group (the dims it and the `*`
    /// before it cover): `outer * tile + inner`, padding from `bound` on.
    Group,
}

/// A place of the offset, `(x / stride) % radix`; the most major place
/// has radix 0: no remainder.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Place {
    pub(crate) stride: u64,
    pub(crate) radix: u64,
}

/// What one physical dim does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Dim {
    pub(crate) value: Value,
    /// The place of the group's tile in the tiled shape, or the untiled
    /// dim's place.
    pub(crate) outer: Place,
    /// The place within the group's tile (unread for an untiled dim).
    pub(crate) inner: Place,
    /// The group's tile.
    pub(crate) tile: u64,
    /// The group's extent, the product of its dims' (`u64::MAX` where the
    /// tile divides it: no padding).
    pub(crate) bound: u64,
    /// This dim's entry is the value modulo `extent`; the quotient is left
    /// for the next, more major, dim of the group. The group's most major
    /// dim (and an untiled dim) takes the rest: `extent` 0, not divided.
    pub(crate) extent: u64,
    /// The group's extent whether padded or not: the values this dim's
    /// `extent` divides are below it.
    pub(crate) total: u64,
}

/// A layout of at most one tiling level as its places read it.
pub(crate) struct Tiled {
    /// The dims' extents in physical order, most major first.
    extents: Shape,
    /// The first physical dim the tile covers.
    base: usize,
    /// Each group's `(first, last)` physical dims and tile.
    groups: Fixed<(usize, usize, usize), { crate::MAX_TILE_RANK }>,
    /// The tiled shape: the untiled dims, each group's tile count, each
    /// group's tile.
    shape: Shape,
    /// The last slot of the tiled shape.
    pub(crate) top: u64,
}

impl Tiled {
    /// `None` for more than one tiling level, more tile dims than dims,
    /// an empty layout, or one read from foreign bytes that is no layout.
    pub(crate) fn new(layout: &Layout) -> Option<Tiled> {
        if !layout.well_formed() {
            return None;
        }
        let level = layout.tiles().len();
        let tile = match layout.tiles() {
            [] => &Tile::EMPTY,
            [tile] => tile,
            _ => return None,
        };
        let extents = physical(layout.dims(), layout.minor_to_major());
        // More tile dims than dims put size-1 dims in front: left to the
        // other forms.
        let base = extents.dims().len().checked_sub(tile.rank())?;
        let mut groups = Fixed::new((0, 0, 0));
        for (first, last, size) in tile.groups() {
            groups.push((base + first, base + last, size))?;
        }
        let shape = layout.tiled_shape(level)?;
        // An empty layout has no last slot.
        let top = shape.product()?.checked_sub(1)?;
        Some(Tiled {
            extents,
            base,
            groups,
            shape,
            top: u64::try_from(top).ok()?,
        })
    }

    /// The product of group `g`'s extents.
    fn group_extent(&self, g: usize) -> Option<usize> {
        let &(first, last, _) = self.groups.get(g)?;
        product(self.extents.dims().get(first..=last)?)
    }

    /// The place of the tiled shape's dim `s`.
    fn place(&self, s: usize) -> Option<Place> {
        let shape = self.shape.dims();
        let stride = u64::try_from(product(shape.get(s + 1..)?)?).ok()?;
        let radix = match s {
            0 => 0,
            _ => u64::try_from(*shape.get(s)?).ok()?,
        };
        Some(Place { stride, radix })
    }

    /// What physical dim `j` does.
    pub(crate) fn dim(&self, j: usize) -> Option<Dim> {
        if j < self.base {
            return Some(Dim {
                value: Value::Place,
                outer: self.place(j)?,
                inner: Place {
                    stride: 1,
                    radix: 0,
                },
                tile: 1,
                bound: u64::MAX,
                extent: 0,
                total: self.top.checked_add(1)?,
            });
        }
        let g = self.groups.iter().position(|&(_, last, _)| j <= last)?;
        let (first, last, tile) = *self.groups.get(g)?;
        let total = self.group_extent(g)?;
        // Validation rules out a tile of 0.
        let bound = if total % tile.max(1) == 0 {
            u64::MAX
        } else {
            u64::try_from(total).ok()?
        };
        let extent = if j == first {
            0
        } else {
            u64::try_from(*self.extents.dims().get(j)?).ok()?
        };
        Some(Dim {
            value: if j == last {
                Value::Group
            } else {
                Value::Carried
            },
            outer: self.place(self.base + g)?,
            inner: self.place(self.base + self.groups.len() + g)?,
            tile: u64::try_from(tile).ok()?,
            bound,
            extent,
            total: u64::try_from(total).ok()?,
        })
    }
}

/// A division by a pool slot's divisor, its shift (`floor(log2)` of the
/// divisor) decoded when the form is made: a byte at a fixed place, which
/// a caller's loop reads once, outside it; derived from the pool on each
/// call, 363 instructions an offset of the combining example against 344.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Division {
    slot: u8,
    shift: u8,
}

impl Division {
    /// A division a dim's value never reads.
    const UNREAD: Division = Division { slot: 0, shift: 0 };

    /// The division by `v`, its divisor in the pool slot `slot` gives. No
    /// division, 0, is the pool's `NONE`, whose quotient and remainder
    /// are the dividend (testing for it before reading the pool ran more
    /// instructions, not fewer).
    fn new(v: u64, slot: &mut impl FnMut(u64) -> Option<u8>) -> Option<Division> {
        Some(Division {
            slot: slot(v)?,
            shift: u8::try_from(v.checked_ilog2().unwrap_or(0)).ok()?,
        })
    }

    /// `x / d` and `d` for the divisor `d` in `pool` (`x` and 0 for none).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn of(self, pool: &Pool, x: u64) -> (u64, u64) {
        let d = constant(pool, self.slot);
        (divide(x, d.magic, u32::from(self.shift)), d.value)
    }

    /// `x % d`, with `x / d` left in `x`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn split(self, pool: &Pool, x: &mut u64) -> u64 {
        let (q, d) = self.of(pool, *x);
        let r = x.wrapping_sub(q.wrapping_mul(d));
        *x = q;
        r
    }
}

/// One dim of [`Places`]: the numbers of a [`Dim`] as pool slots.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Slots {
    value: Value,
    /// The outer place's stride and radix, the inner place's, the extent.
    divisions: [Division; 5],
    tile: u8,
    bound: u8,
}

impl Slots {
    const EMPTY: Slots = Slots {
        value: Value::Carried,
        divisions: [Division::UNREAD; 5],
        tile: 0,
        bound: 0,
    };
}

/// A layout's inverse as the places of its tiled shape, its numbers slots
/// of the layout's pool of divisors: for the layouts of at most one tiling
/// level whose inverse has no closed form (a `*` combine splits a tiled
/// value into dims, a remainder of a sum; or more padded groups than the
/// closed form checks). Each division is exact for every 64-bit dividend,
/// so the places take layouts of any size.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Places {
    /// The slots of the tiled shape (a pool slot); the rest to storage is
    /// `L(n)` rounding, padding.
    limit: u8,
    /// The dims in `minor_to_major` order: each group's most minor dim
    /// before the rest of it.
    dims: [Slots; MAX_DIMS],
    /// Where each dim's entry is in `dims`.
    position: [u8; MAX_DIMS],
    rank: u8,
}

impl Places {
    /// The places of `layout`, their numbers put in a pool by `constant`;
    /// `None` for layouts [`Tiled`] refuses or constants past the pool.
    pub(crate) fn new(
        layout: &Layout,
        mut constant: impl FnMut(usize) -> Option<u8>,
    ) -> Option<Places> {
        let tiled = Tiled::new(layout)?;
        let m2m = layout.minor_to_major();
        let rank = m2m.len();
        let mut slot = |v: u64| constant(usize::try_from(v).ok()?);
        let mut places = Places {
            limit: slot(tiled.top.checked_add(1)?)?,
            dims: [Slots::EMPTY; MAX_DIMS],
            position: [0; MAX_DIMS],
            rank: u8::try_from(rank)
                .ok()
                .filter(|&r| usize::from(r) <= MAX_DIMS)?,
        };
        // `dims[i]` is dim `m2m[i]`, physical dim `rank - 1 - i`.
        for (i, &d) in m2m.iter().enumerate() {
            *places.position.get_mut(d)? = u8::try_from(i).ok()?;
            let dim = tiled.dim(rank - 1 - i)?;
            // Only what the dim's value reads takes pool slots.
            let group = dim.value == Value::Group;
            let places_read = match dim.value {
                Value::Carried => 0,
                Value::Place => 2,
                Value::Group => 4,
            };
            let numbers = [
                dim.outer.stride,
                dim.outer.radix,
                dim.inner.stride,
                dim.inner.radix,
            ];
            let mut divisions = [Division::UNREAD; 5];
            for (d, &n) in divisions.iter_mut().zip(&numbers).take(places_read) {
                *d = Division::new(n, &mut slot)?;
            }
            divisions[4] = Division::new(dim.extent, &mut slot)?;
            *places.dims.get_mut(i)? = Slots {
                value: dim.value,
                divisions,
                tile: if group { slot(dim.tile)? } else { 0 },
                bound: if group { slot(dim.bound)? } else { 0 },
            };
        }
        Some(places)
    }

    /// Writes the index at `offset` (below storage) into `index`, the
    /// constants in `pool`; `false` for padding.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_of(&self, pool: &Pool, offset: usize, index: Entries<'_>) -> bool {
        let x = offset as u64;
        if x >= constant(pool, self.limit).value {
            return false;
        }
        // `(x / stride) % radix` of a stride's and a radix's divisions.
        let place = |stride: Division, radix: Division| {
            let mut q = stride.of(pool, x).0;
            radix.split(pool, &mut q)
        };
        // Entries in `dims`'s order first, each in a slot the code fixes,
        // then moved to their dims (see `Entries`). Unrolled, each dim's
        // slots and shifts sit where the code fixes them, and a caller's
        // loop reads them once, outside it: a loop over the dims read them
        // on every call, 6.1 times the generated inverse's time on the
        // combining example against 5.1 unrolled.
        let rank = usize::from(self.rank);
        let mut entries = [0u64; MAX_DIMS];
        let mut v = 0u64;
        macro_rules! dims {
            ($($d:literal)*) => {$(
                if rank > $d {
                    let d = &self.dims[$d];
                    let [outer, radix, inner, inner_radix, extent] = d.divisions;
                    match d.value {
                        Value::Carried => {}
                        Value::Place => v = place(outer, radix),
                        Value::Group => {
                            v = place(outer, radix)
                                .wrapping_mul(constant(pool, d.tile).value)
                                .wrapping_add(place(inner, inner_radix));
                            if v >= constant(pool, d.bound).value {
                                return false;
                            }
                        }
                    }
                    entries[$d] = extent.split(pool, &mut v);
                }
            )*};
        }
        dims!(0 1 2 3 4 5 6 7);
        // An entry is below its dim, so it fits `usize`.
        #[allow(clippy::cast_possible_truncation)]
        let entry = |d: usize| -> usize {
            let at = self.position.get(d).copied().unwrap_or(0);
            entries.get(usize::from(at)).copied().unwrap_or(0) as usize
        };
        // Moved in pairs, one 16-byte store each (see `Entries`), for a
        // rank-long slice too, through an aligned stage: written to the
        // slice an entry a store, `Ranked::index_of` on the combining
        // example ran 3.3 times the generated inverse's time at most
        // placements of its code and data and 12.3 at some, the benchmark's
        // among them; staged, 3.45-3.50 at every one tried.
        let mut stage = Stage([0; MAX_RANK]);
        let (rank, whole, slice) = match index {
            Entries::Slice(index) => (index.len(), &mut stage.0, Some(index)),
            Entries::Pairs(rank, index) => (rank, index, None),
        };
        store_pairs(rank, whole, entry);
        if let Some(slice) = slice {
            let n = slice.len().min(MAX_RANK);
            slice[..n].copy_from_slice(&stage.0[..n]);
        }
        true
    }

    /// Writes the form: the words `layout!` prints.
    pub(crate) fn write(&self, w: Writer) {
        w(u64::from(self.limit));
        w(u64::from(self.rank));
        for d in &self.dims {
            w(match d.value {
                Value::Carried => 0,
                Value::Place => 1,
                Value::Group => 2,
            });
            for division in &d.divisions {
                w(u64::from(division.slot));
                w(u64::from(division.shift));
            }
            w(u64::from(d.tile));
            w(u64::from(d.bound));
        }
        for &p in &self.position {
            w(u64::from(p));
        }
    }

    /// The form [`write`](Self::write) wrote; any words give one that
    /// evaluates without a panic: slots are read modulo the capacities.
    pub(crate) const fn read(r: &mut Reader) -> Places {
        let mut p = Places {
            limit: r.u8(),
            dims: [Slots::EMPTY; MAX_DIMS],
            position: [0; MAX_DIMS],
            rank: r.count(MAX_DIMS) as u8,
        };
        let mut i = 0;
        while i < MAX_DIMS {
            let value = match r.word() {
                0 => Value::Carried,
                1 => Value::Place,
                _ => Value::Group,
            };
            let mut divisions = [Division::UNREAD; 5];
            let mut k = 0;
            while k < divisions.len() {
                divisions[k] = Division {
                    slot: r.u8(),
                    shift: r.u8(),
                };
                k += 1;
            }
            p.dims[i] = Slots {
                value,
                divisions,
                tile: r.u8(),
                bound: r.u8(),
            };
            i += 1;
        }
        let mut i = 0;
        while i < MAX_DIMS {
            p.position[i] = r.u8();
            i += 1;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use crate::closed::tests::Rng;
    use std::vec::Vec;

    /// The bytes of layouts whose inverse is in places, changed at random
    /// (the form's bytes at the end half the time): reading them, then
    /// inverting through the layout, a view and a decoded inverse, never
    /// panics.
    #[test]
    fn foreign_bytes_evaluate_without_a_panic() {
        let mut rng = Rng(0x3c6e_f372_fe94_f82b);
        for spec in [
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "f32[6,9,5]{0,1,2:T(3,*,5)}",
            "s4[5,7,3]{2,1,0:T(*,2,3)E(4)}",
        ] {
            let l = crate::parse(spec).unwrap();
            assert_eq!(l.code.map(|c| c.form()), Some("places"), "{spec}");
            let mut bytes = Vec::new();
            l.__bytes(&mut |b| bytes.push(b));
            for round in 0..1500 {
                let mut b = bytes.clone();
                for _ in 0..=rng.below(3) {
                    let at = if round % 2 == 0 {
                        b.len() - 1 - rng.below(b.len().min(200))
                    } else {
                        rng.below(b.len())
                    };
                    b[at] = rng.next().to_le_bytes()[0];
                }
                let f = crate::Layout::__from_bytes(&b);
                let last = f.storage_len().saturating_sub(1);
                for o in (0..64).chain([last, usize::MAX]) {
                    let _ = f.index_of(o);
                }
                if let Ok(r) = f.ranked::<5>() {
                    let _ = (r.index_of(last), r.inverse().index_of(last));
                }
                if let Ok(r) = f.ranked::<3>() {
                    let _ = (r.index_of(last), r.inverse().index_of(last));
                }
            }
        }
    }
}
