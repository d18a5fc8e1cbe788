//! A layout of at most one tiling level as the places of its tiled shape.
//!
//! The offset's places in the tiled shape's mixed radix, `(x / stride) %
//! radix`, give every dim: an untiled dim is one place; each group of dims
//! that a tile dim covers (with the `*` before it) is `outer * tile +
//! inner` of two places, padding where it reaches the group's extent, and
//! is split into its dims by their extents. [`Tiled`] works out those
//! numbers once; [`RankedInverse`](crate::RankedInverse) decodes them into
//! multiplications for values below 2^31, and a [`Layout`] keeps them in
//! [`Places`] for its own `index_of` where its inverse has no closed form
//! (the dims a `*` combines, split apart again): the divisors as slots of
//! its pool, and for layouts of at most 2^31 slots each division's
//! multiplier for values below 2^31 beside them.

use crate::algebra::divide::{divide, multiplier};
use crate::algebra::fold::shape_after;
use crate::algebra::tiling::product;
use crate::algebra::tiling::Level;
use crate::eval::closed::{constant, Entries, Pool};
use crate::fixed::Fixed;
use crate::{Shape, Tile};

/// The most dims of [`Places`]: evaluation is unrolled over them, so that
/// a caller's loop decodes each dim's constants once, outside it.
pub(crate) const MAX_DIMS: usize = 8;
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
    /// The tiled shape's dim it is, the most major 0.
    pub(crate) at: usize,
}

/// What one physical dim does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Dim {
    pub(crate) value: Value,
    /// The place of the group's tile in the tiled shape, or the untiled
    /// dim's place.
    pub(crate) outer: Place,
    /// The place within the group's tile (for an untiled dim, its own
    /// place again, of radix 0 and stride 1: unread).
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
    /// The tiled shape of a layout's dims, minor-to-major order and tiles,
    /// which the caller has checked hold what folding assumes (a layout
    /// read from foreign bytes may not). `None` for more than one tiling
    /// level, more tile dims than dims, or an empty layout.
    pub(crate) fn new(dims: &[usize], m2m: &[usize], tiles: &[Tile]) -> Option<Tiled> {
        let tile = match tiles {
            [] => &Tile::EMPTY,
            [tile] => tile,
            _ => return None,
        };
        // The shape before any tile.
        let extents = shape_after(dims, m2m, &[]).ok()?;
        let level = Level::of(extents.dims(), tile);
        // More tile dims than dims put size-1 dims in front: left to the
        // other forms.
        if level.prepended > 0 {
            return None;
        }
        let base = level.base;
        let mut groups = Fixed::new((0, 0, 0));
        for (first, last, size) in level.groups() {
            groups.push((base + first, base + last, size))?;
        }
        let shape = shape_after(dims, m2m, tiles).ok()?;
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
        Some(Place {
            stride,
            radix,
            at: s,
        })
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
                    at: j,
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
/// a caller's loop reads once, outside it (derived from the pool on each
/// call: 363 instructions an offset of the combining example against 344,
/// at f7c30b2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Division {
    pub(crate) slot: u8,
    pub(crate) shift: u8,
}

impl Division {
    /// A division never read: past the places and dims a form has, of its
    /// most major place, or of a dim that takes what its group left.
    pub(crate) const UNREAD: Division = Division { slot: 0, shift: 0 };

    /// The division by `v`, its divisor in the pool slot `slot` gives (0,
    /// no division, the pool's `NONE`, whose quotient and remainder are
    /// the dividend).
    fn new(v: u64, slot: &mut impl FnMut(u64) -> Option<u8>) -> Option<Division> {
        Some(Division {
            slot: slot(v)?,
            shift: u8::try_from(v.checked_ilog2().unwrap_or(0)).ok()?,
        })
    }

    /// `x % d`, with `x / d` left in `x`, for the divisor `d` in `pool`
    /// (`x`, and `x` left, for none). With `SMALL`, for `x` below 2^31,
    /// the quotient is by `mul`, the division's [`small`] multiplier;
    /// otherwise by the pool's reciprocal, exact for every `x`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn split<const SMALL: bool>(self, mul: u32, pool: &Pool, x: &mut u64) -> u64 {
        let d = constant(pool, self.slot);
        let q = if SMALL {
            x.wrapping_mul(u64::from(mul) + SMALL_BASE)
                .wrapping_shr(32 + u32::from(self.shift))
        } else {
            divide(*x, d.magic, u32::from(self.shift))
        };
        let r = x.wrapping_sub(q.wrapping_mul(d.value));
        *x = q;
        r
    }
}

/// What [`small`] adds back to the stored multiplier.
const SMALL_BASE: u64 = 1 << 31;

/// The multiplier of a division by `d` (0 for none) of dividends below
/// 2^31, less 2^31: `x / d = (x * (2^31 + small)) >> (32 + floor(log2
/// d))`, one multiplication and a shift, where the divisions exact for
/// every 64-bit dividend take a 128-bit product and four more steps.
/// `None` for a divisor past 2^31.
///
/// The [`multiplier`] for `x < 2^31`, `(m, 31 + ceil(log2 d))`: for a
/// `d` that is no power of two, `31 + ceil(log2 d)` is `32 + floor(log2
/// d)` and `2^31 < m < 2^32`; a power of two `2^k` gets `m = 2^31` and
/// the shift `31 + k`, here doubled to `2^32` and `32 + k`, the same
/// quotient. No division (read as 1) takes `2^32` too: `(x 2^32) >> 32`
/// is `x`. `x m` stays below 2^63.
fn small(d: u64) -> Option<u32> {
    // Past 2^31 no value divided here reaches the divisor; past 2^32 the
    // shift would pass 63.
    if d > SMALL_BASE {
        return None;
    }
    let m = match d.checked_ilog2() {
        None => 1 << 32,
        Some(log) => {
            let (m, shift) = multiplier(d, 31)?;
            m << (32 + log).checked_sub(shift)?
        }
    };
    u32::try_from(m.checked_sub(SMALL_BASE)?).ok()
}

/// One dim of [`Places`]: where its value comes from, and its numbers as
/// pool slots.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Slots {
    pub(crate) value: Value,
    /// The places of the group's tile count and of its tile, or the
    /// untiled dim's place (twice), numbered as `Places::radixes` is.
    pub(crate) outer: u8,
    pub(crate) inner: u8,
    pub(crate) extent: Division,
    /// Whether `extent` divides: false for a group's most major dim and
    /// for an untiled dim, which take what is left.
    pub(crate) split: bool,
    pub(crate) tile: u8,
    pub(crate) bound: u8,
}

impl Slots {
    pub(crate) const EMPTY: Slots = Slots {
        value: Value::Carried,
        outer: 0,
        inner: 0,
        extent: Division::UNREAD,
        split: false,
        tile: 0,
        bound: 0,
    };
}

/// A layout's inverse as the places of its tiled shape, its numbers slots
/// of the layout's pool of divisors: for the layouts of at most one tiling
/// level whose inverse has no closed form (a `*` combine splits a tiled
/// value into dims, a remainder of a sum; or more padded groups than the
/// closed form checks). The offset is split into its places from the most
/// minor, one division a place (a place read as `(x / stride) % radix`
/// took two: 13 divisions an offset of the combining example against 6).
/// Up to 2^31 slots, each division is one multiplication by a multiplier
/// kept here; past that, by the pool's reciprocals, exact for every
/// 64-bit dividend, so the places take layouts of any size.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Places {
    /// The slots of the tiled shape (a pool slot); the rest to storage is
    /// `L(n)` rounding, padding.
    pub(crate) limit: u8,
    /// The radix of each place of the tiled shape, the most minor first;
    /// the most major place takes the rest, not divided.
    pub(crate) radixes: [Division; MAX_PLACES],
    /// How many places the tiled shape has.
    pub(crate) count: u8,
    /// Each division's multiplier for dividends below 2^31 ([`small`]),
    /// the places' first and then the dims' extents', read where `limit`
    /// is at most 2^31 (every value divided below 2^31); all 0 past it.
    /// Here, at fixed places, a caller's loop reads them once. Dividing
    /// by them rather than by the pool's reciprocals took `Layout::index_of` on the combining example from
    /// 3.23 times the generated inverse's time to 3.05, and
    /// `Ranked::index_of` from 2.65 to 2.40, then 2.15 with the form
    /// tested once a call rather than at each division.
    pub(crate) muls: [u32; MAX_PLACES + MAX_DIMS],
    /// The dims in `minor_to_major` order: each group's most minor dim
    /// before the rest of it.
    pub(crate) dims: [Slots; MAX_DIMS],
    /// Where each dim's entry is in `dims`.
    pub(crate) position: [u8; MAX_DIMS],
    pub(crate) rank: u8,
}

/// The most places of a tiled shape of [`MAX_DIMS`] dims: one an untiled
/// dim, two a group (its tile count and its tile).
pub(crate) const MAX_PLACES: usize = 2 * MAX_DIMS;
// `Places::index_of` lists the places, and reads them modulo their capacity.
const _: () = assert!(MAX_PLACES == 16);

impl Places {
    /// The places of a layout's dims, minor-to-major order and tiles, as
    /// [`Tiled::new`] takes them, their numbers put in a pool by
    /// `constant`; `None` for layouts [`Tiled`] refuses or constants past
    /// the pool.
    pub(crate) fn new(
        dims: &[usize],
        m2m: &[usize],
        tiling: &[Tile],
        mut constant: impl FnMut(usize) -> Option<u8>,
    ) -> Option<Places> {
        let tiled = Tiled::new(dims, m2m, tiling)?;
        let rank = m2m.len();
        let shape = tiled.shape.dims();
        if shape.len() > MAX_PLACES || rank > MAX_DIMS {
            return None;
        }
        // Every value divided is below the tiled shape's slots.
        let limit = tiled.top.checked_add(1)?;
        let small_form = Places::by_muls(limit);
        let mut slot = |v: u64| constant(usize::try_from(v).ok()?);
        let mut places = Places {
            limit: slot(limit)?,
            radixes: [Division::UNREAD; MAX_PLACES],
            count: u8::try_from(shape.len()).ok()?,
            muls: [0; MAX_PLACES + MAX_DIMS],
            dims: [Slots::EMPTY; MAX_DIMS],
            position: [0; MAX_DIMS],
            rank: u8::try_from(rank).ok()?,
        };
        let mul = |d: u64| if small_form { small(d) } else { Some(0) };
        // Place `p` is the tiled shape's dim `len - 1 - p`; the outermost,
        // dim 0, keeps the rest.
        for p in 0..shape.len() {
            let s = shape.len() - 1 - p;
            if s > 0 {
                let radix = u64::try_from(shape[s]).ok()?;
                places.radixes[p] = Division::new(radix, &mut slot)?;
                places.muls[p] = mul(radix)?;
            }
        }
        let place = |s: usize| u8::try_from(shape.len().checked_sub(s + 1)?).ok();
        // `dims[i]` is dim `m2m[i]`, physical dim `rank - 1 - i`.
        for (i, &d) in m2m.iter().enumerate() {
            *places.position.get_mut(d)? = u8::try_from(i).ok()?;
            let dim = tiled.dim(rank - 1 - i)?;
            // Only what the dim reads takes pool slots.
            let split = dim.extent != 0;
            let group = dim.value == Value::Group;
            places.dims[i] = Slots {
                value: dim.value,
                outer: place(dim.outer.at)?,
                inner: place(dim.inner.at)?,
                extent: if split {
                    places.muls[MAX_PLACES + i] = mul(dim.extent)?;
                    Division::new(dim.extent, &mut slot)?
                } else {
                    Division::UNREAD
                },
                split,
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
        // The form chosen once a call, not at each division (`Ranked::
        // index_of` on the combining example 2.40 times the generated
        // inverse's time against 2.15); the limit tested after (before,
        // the bf16 TPU layout's closed form beside it in a caller's loop
        // read 3.01 times the generated inverse's time against 2.44 in one
        // program of the loop).
        if Places::by_muls(constant(pool, self.limit).value) {
            self.eval::<true>(pool, offset, index)
        } else {
            self.eval::<false>(pool, offset, index)
        }
    }

    /// Whether a tiled shape of `limit` slots divides by `muls`: every
    /// value divided is below it.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn by_muls(limit: u64) -> bool {
        limit <= SMALL_BASE
    }

    /// [`index_of`](Self::index_of), dividing as `SMALL` says.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn eval<const SMALL: bool>(&self, pool: &Pool, offset: usize, index: Entries<'_>) -> bool {
        let mut x = offset as u64;
        if x >= constant(pool, self.limit).value {
            return false;
        }
        // The places, the most minor first: each the remainder of what
        // the more minor ones left, the last all that is left. Unrolled
        // here and over the dims below, each place's and dim's slots and
        // shifts sit where the code fixes them, and a caller's loop reads
        // them once, outside it: a loop over the dims read them on every
        // call, 6.1 times the generated inverse's time on the combining
        // example against 5.1 unrolled (the places of f7c30b2).
        let mut digits = [0u64; MAX_PLACES];
        let count = usize::from(self.count);
        macro_rules! places {
            ($($p:literal)*) => {$(
                if count > $p + 1 {
                    digits[$p] = self.radixes[$p].split::<SMALL>(self.muls[$p], pool, &mut x);
                } else if count > $p {
                    digits[$p] = x;
                }
            )*};
        }
        places!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        let digit = |p: u8| digits[usize::from(p) % MAX_PLACES];
        // Entries in `dims`'s order first, each in a slot the code fixes,
        // then moved to their dims (see `Entries`).
        let rank = usize::from(self.rank);
        let mut entries = [0u64; MAX_DIMS];
        let mut v = 0u64;
        macro_rules! dims {
            ($($d:literal)*) => {$(
                if rank > $d {
                    let d = &self.dims[$d];
                    match d.value {
                        Value::Carried => {}
                        Value::Place => v = digit(d.outer),
                        Value::Group => {
                            v = digit(d.outer)
                                .wrapping_mul(constant(pool, d.tile).value)
                                .wrapping_add(digit(d.inner));
                            if v >= constant(pool, d.bound).value {
                                return false;
                            }
                        }
                    }
                    entries[$d] = if d.split {
                        d.extent.split::<SMALL>(self.muls[MAX_PLACES + $d], pool, &mut v)
                    } else {
                        v
                    };
                }
            )*};
        }
        dims!(0 1 2 3 4 5 6 7);
        // Read modulo the capacity, as `digit` is, with no bounds test to
        // make (`get` cost 16 instructions an offset of the combining
        // example); positions are below it but for foreign bytes. An
        // entry is below its dim, so it fits `usize`.
        #[allow(clippy::cast_possible_truncation)]
        let entry = |d: usize| -> usize {
            let at = self.position.get(d).copied().unwrap_or(0);
            entries[usize::from(at) % MAX_DIMS] as usize
        };
        // Moved in pairs, one 16-byte store each (see `Entries`), for a
        // rank-long slice too.
        index.store(entry);
        true
    }

    /// Whether the divisions are by `muls`.
    #[cfg(test)]
    pub(crate) fn divides_by_muls(&self, pool: &Pool) -> bool {
        Places::by_muls(constant(pool, self.limit).value)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{small, Division, SMALL_BASE};
    use crate::algebra::divide::Divisor;
    use crate::eval::closed::tests::Rng;
    use crate::eval::closed::Pool;
    use crate::MAX_PROGRAM_STEPS;
    use std::vec;
    use std::vec::Vec;

    /// `small`'s multiplier and the shift give every quotient and
    /// remainder below 2^31, for divisors from 0 (none) to 2^31: small
    /// ones, powers of two and their neighbours, ones near 2^31, random
    /// ones; dividends at the edges of multiples and at 2^31 - 1.
    #[test]
    fn small_multipliers_divide_exactly() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let top = SMALL_BASE - 1;
        let mut divisors: Vec<u64> = (0..=1100).collect();
        for k in 1..=31 {
            let p = 1u64 << k;
            divisors.extend([p - 1, p, p + 1]);
        }
        divisors.extend([top, top - 1, top - 2, 1 << 30 | 1, 715_827_883, 46_341]);
        divisors.extend((0..400).map(|_| 1 + rng.next() % SMALL_BASE));
        let mut pool: Pool = [Divisor::NONE; crate::algebra::divide::MAX_CONSTANTS];
        divisors.retain(|&d| d <= SMALL_BASE);
        for &d in &divisors {
            let mul = small(d).unwrap();
            assert_ne!(mul, 0, "{d}");
            pool[1] = Divisor::new(d).unwrap_or(Divisor::NONE);
            let division = Division {
                slot: 1,
                shift: u8::try_from(d.checked_ilog2().unwrap_or(0)).unwrap(),
            };
            let mut xs: Vec<u64> = vec![0, 1, top, top - 1, SMALL_BASE / 2];
            if let Some(most) = top.checked_div(d) {
                for k in [
                    1,
                    2,
                    3,
                    most,
                    most.saturating_sub(1),
                    rng.next() % (most + 1),
                ] {
                    let m = k.saturating_mul(d);
                    xs.extend([m.saturating_sub(1), m, m + 1]);
                }
            }
            xs.extend((0..20).map(|_| rng.next() % SMALL_BASE));
            for x in xs.into_iter().filter(|&x| x < SMALL_BASE) {
                let (want_q, want_r) = x.checked_div(d).zip(x.checked_rem(d)).unwrap_or((x, x));
                for (small_form, mul) in [(true, mul), (false, 0)] {
                    let mut q = x;
                    let r = if small_form {
                        division.split::<true>(mul, &pool, &mut q)
                    } else {
                        division.split::<false>(mul, &pool, &mut q)
                    };
                    assert_eq!((q, r), (want_q, want_r), "{x} / {d}, small {small_form}");
                }
            }
        }
        assert_eq!(small(SMALL_BASE + 1), None);
    }

    /// The places of layouts at the edge of the small form: just under
    /// 2^31 slots (small, its last offsets included) and past it (divided
    /// by the pool's reciprocals, offsets past 2^31 to 2^34 included)
    /// give the folded inverse program's index at every offset tried.
    #[test]
    fn places_beside_two_to_the_31_equal_the_program() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for (spec, small_form) in [
            ("f32[3,5,7,19173960]{3,2,1,0:T(*,2,*,3)}", true),
            ("f32[3,5,7,20452225]{3,2,1,0:T(*,2,*,3)}", false),
            ("f32[7,11,50000,30000]{3,2,1,0:T(*,2,*,3)}", false),
        ] {
            let l = crate::parse(spec).unwrap();
            let code = l.code().unwrap();
            assert_eq!(code.places_small(), Some(small_form), "{spec}");
            let inverse = l.inverse_program();
            let storage = l.storage_len();
            let mut offsets: Vec<usize> = (0..3000).collect();
            for edge in [1usize << 31, 1 << 32, 1 << 33, 1 << 34, storage] {
                offsets.extend(edge.saturating_sub(2000)..edge.saturating_add(2000));
            }
            offsets.extend((0..20_000).map(|_| rng.below(storage)));
            let mut scratch = [0; MAX_PROGRAM_STEPS];
            let mut want = [0; crate::MAX_RANK];
            let mut padding = 0;
            for offset in offsets {
                let found = offset < storage && inverse.eval(offset, &mut scratch, &mut want);
                padding += usize::from(offset < storage && !found);
                assert_eq!(
                    l.index_of(offset).as_deref(),
                    found.then_some(&want[..l.rank()]),
                    "{spec} at {offset}"
                );
            }
            assert!(padding > 0, "{spec}");
        }
    }

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
            "s4[5,7,3,4]{3,2,1,0:T(*,2,*,3)E(4)}",
        ] {
            let l = crate::parse(spec).unwrap();
            assert_eq!(
                l.code().map(crate::eval::code::Code::form),
                Some("places"),
                "{spec}"
            );
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
