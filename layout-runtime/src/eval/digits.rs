//! `offset` and `index_of` compiled from a layout's digits: a shift and a
//! mask a digit where places and radices are powers of two (every TPU
//! tile is), a division by reciprocal multiplication only for the storage
//! extents that are not (the ragged tile counts, untiled dims).
//!
//! Both are inlined into their callers, so the shape of the tables decides
//! what a caller's loop can do with them. `offset` sums fixed groups of
//! four terms a dim, unrolled over the dims: the terms of the indices a
//! loop does not change, and every table read, leave the loop. `index_of`
//! reads the minor digits of the offset, whose extents are powers of two,
//! as independent shifts and masks, then the rest as a mixed-radix number.

use crate::algebra::divide::{divide, Divisor};
use crate::algebra::{Digit, Digits, MAX_DIGITS};
use crate::MAX_RANK;

/// The most digits of one dim: a `(1024)(128)(2,1)` tiling's four.
pub(crate) const PER_DIM: usize = 4;

/// The most terms of one dim's part of the offset: every TPU tiling's
/// digits take at most three (see `DigitForm::slots_of`).
pub(crate) const SLOTS: usize = 3;

/// A digit read back from an offset `o`, added to `index[dim]` at `place`
/// (a shift); padding if above `largest`. A minor digit is `(o >> shift)
/// & a`; a major one comes from what the minor ones leave, `rest`: `v =
/// rest % b`, `rest /= b`, by the reciprocal `a` of `b` (0 for a power of
/// two) and `shift = floor(log2(b))`. The most major takes the rest whole
/// (`a`, `b` and `shift` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Term {
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) largest: u64,
    pub(crate) shift: u8,
    pub(crate) place: u8,
    pub(crate) dim: u8,
}

/// The evaluators of a layout whose digits all have places and radices
/// that are powers of two, as compiled; a layout keeps them
/// [`split`](Self::split).
pub(crate) struct DigitForm {
    offset: DigitOffset,
    /// Whether every dim's terms fit [`SLOTS`]: only some tilings of three
    /// levels need more, and keep the programs' offset.
    fits: bool,
    inverse: DigitInverse,
}

pub(crate) const NO_TERM: Term = Term {
    a: 0,
    b: 0,
    largest: u64::MAX,
    shift: 0,
    place: 0,
    dim: 0,
};

/// `log2(x)` for a power of two.
#[allow(clippy::cast_possible_truncation)]
fn log2(x: usize) -> Option<u8> {
    x.is_power_of_two().then(|| x.trailing_zeros() as u8)
}

impl DigitForm {
    /// The evaluators of the digits of a layout of `dims`, or `None` when
    /// a place or radix is not a power of two or a dim has more than four
    /// digits (those layouts keep the folded programs' forms).
    pub(crate) fn new(digits: &Digits) -> Option<DigitForm> {
        // A digit of dims that `*` merged whole adds to no one dim.
        if digits.list.iter().any(|g| g.last != g.dim) {
            return None;
        }
        let mut form = DigitForm {
            offset: DigitOffset {
                shifts: [[0; SLOTS]; MAX_RANK],
                scales: [[0; SLOTS]; MAX_RANK],
                third: false,
            },
            fits: true,
            inverse: DigitInverse {
                terms: [NO_TERM; MAX_DIGITS],
                minor: 0,
                major: 0,
                minor_bits: 0,
                minor_padding: 0,
                ragged: digits.ragged,
                slots: digits.slots,
            },
        };
        let all = &digits.list;
        // Minor digits: the most minor run of extents that are powers of two.
        let mut minor = 0;
        while minor < all.len() && all[all.len() - 1 - minor].extent.is_power_of_two() {
            minor += 1;
        }
        let mut per_dim = [0usize; MAX_RANK];
        for (i, g) in all.iter().enumerate() {
            let constant = g.radix == 1;
            let place = if constant { 0 } else { log2(g.place)? };
            if g.radix > 1 {
                log2(g.radix)?;
            }
            let dim = u8::try_from(g.dim)
                .ok()
                .filter(|&d| usize::from(d) < MAX_RANK)?;
            if !constant {
                *per_dim.get_mut(g.dim)? += 1;
            }
            let largest = if g.reaches_padding() || constant {
                g.radix as u64 - 1
            } else {
                u64::MAX
            };
            let from_minor = all.len() - 1 - i;
            form.inverse.terms[from_minor] = if from_minor < minor {
                let shift = log2(g.stride)?;
                let width = log2(g.extent)?;
                form.inverse.minor_bits = form.inverse.minor_bits.max(shift + width);
                if largest != u64::MAX {
                    // Bits of the digit from its radix up.
                    let radix_bits = (largest + 1).trailing_zeros();
                    form.inverse.minor_padding |=
                        ((g.extent - 1) as u64 >> radix_bits << radix_bits) << shift;
                }
                Term {
                    a: (g.extent - 1) as u64,
                    b: 0,
                    largest,
                    shift,
                    place,
                    dim,
                }
            } else {
                let divisor = if i == 0 {
                    Divisor::NONE
                } else {
                    Divisor::new(u64::try_from(g.extent).ok()?)?
                };
                #[allow(clippy::cast_possible_truncation)]
                Term {
                    a: divisor.magic,
                    b: divisor.value,
                    largest,
                    shift: divisor.shift() as u8,
                    place,
                    dim,
                }
            };
        }
        for (dim, &count) in per_dim.iter().enumerate() {
            form.slots_of(all, dim, count)?;
        }
        form.inverse.minor = u8::try_from(minor).ok()?;
        form.inverse.major = u8::try_from(all.len() - minor).ok()?;
        Some(form)
    }

    /// The offset's slots of dim `dim`, from its `count` digits (of
    /// `all`): they tile its coordinate, from place 1 up. `None` where
    /// the digits do not (or there are too many for the inverse).
    fn slots_of(&mut self, all: &[Digit], dim: usize, count: usize) -> Option<()> {
        if count > PER_DIM {
            return None;
        }
        let mut place = 1usize;
        let mut below = 0usize;
        let mut slots = 0;
        for k in 0..count {
            let g = all
                .iter()
                .find(|g| g.dim == dim && g.radix != 1 && g.place == place)?;
            let scale = g.stride.wrapping_sub(below);
            // A digit whose stride continues the one below it (a tile
            // count over tiles laid end to end, as `T(1024)(128)(2,1)`'s)
            // scales by 0: it needs no slot. The first slot stays the one
            // of place 1, which `offset` takes unshifted.
            if k == 0 || scale != 0 {
                match (
                    self.offset.shifts[dim].get_mut(slots),
                    self.offset.scales[dim].get_mut(slots),
                ) {
                    (Some(shift), Some(slot)) => (*shift, *slot) = (log2(place)?, scale),
                    _ => self.fits = false,
                }
                slots += 1;
            }
            self.offset.third |= slots > 2;
            below = g.radix.wrapping_mul(g.stride);
            place = place.checked_mul(g.radix).unwrap_or(0);
        }
        Some(())
    }

    /// The two evaluators, apart: a layout keeps each or another form
    /// (the offset only where every dim's terms fit [`SLOTS`]).
    pub(crate) fn split(self) -> (Option<DigitOffset>, DigitInverse) {
        (self.fits.then_some(self.offset), self.inverse)
    }
}

/// `offset` from the digits. Each dim's part is `Σ (x >> shifts[k]) *
/// scales[k]`: `Σ ((x / p_k) % r_k) * s_k` over its digits with the
/// remainders telescoped, as `p_(k+1) = p_k r_k`, into quotients alone,
/// each scaled by `s_k - r_(k-1) s_(k-1)` (wrapping). The one of place 1
/// is `x` itself; a digit whose scale is 0 takes no slot, and unused
/// slots scale by 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DigitOffset {
    pub(crate) shifts: [[u8; SLOTS]; MAX_RANK],
    pub(crate) scales: [[usize; SLOTS]; MAX_RANK],
    /// Whether a dim uses the third slot (`(2,1)`, `(4,1)`,
    /// `T(1024)(128)(2,1)`).
    pub(crate) third: bool,
}

/// `index_of` from the digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DigitInverse {
    /// The digits, most minor first: `minor` read by shifts and masks,
    /// then `major` as a mixed-radix number.
    pub(crate) terms: [Term; MAX_DIGITS],
    pub(crate) minor: u8,
    pub(crate) major: u8,
    /// The bits the minor digits take.
    pub(crate) minor_bits: u8,
    /// The bits of minor digits past their radix: set only in padding.
    pub(crate) minor_padding: u64,
    /// Bit `d`: dim `d`'s digits spell coordinates past its size.
    pub(crate) ragged: u16,
    pub(crate) slots: usize,
}

impl DigitOffset {
    /// The storage offset of `index`: equal to the folded offset program
    /// for every index inside the dims, some value but never a panic for
    /// any other.
    ///
    /// Dims and terms are unrolled by hand: the index's length is known at
    /// most call sites, so the dims past it drop out, and what remains is
    /// straight code whose terms of indices a caller's loop does not change
    /// leave that loop, with every read of the tables.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn offset(&self, index: &[usize]) -> usize {
        // The macro below lists every dim.
        const _: () = assert!(MAX_RANK == 16);
        const _: () = assert!(SLOTS == 3);
        // Three slots a dim, each a shift and a multiply, unused ones by 0:
        // straight code, which a caller's loop keeps as it is. Tests of
        // which slots a layout or a dim uses (an arm for two slots beside
        // one for three, a bit a dim for the third) cost the loops over
        // three and four dims that keep them inside: along a dim of three
        // slots they ran 3.0-4.1 times the generated code's time, against
        // 1.9 without (`benches/family.rs`). Over one or two dims, the
        // compiler takes the test out of the loop, and a plain tiling
        // skips the third slot: `f32[1000,1000]{0,1:T(8,128)}`'s sum of
        // offsets ran 2.3 times the generated code's time with it, 1.4
        // without (`benches/offset.rs`).
        if index.len() < 3 && !self.third {
            self.slots::<2>(index)
        } else {
            self.slots::<SLOTS>(index)
        }
    }

    /// [`offset`](Self::offset) from the first `W` slots of each dim.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn slots<const W: usize>(&self, index: &[usize]) -> usize {
        let mut acc = 0usize;
        macro_rules! dims {
            ($($d:literal)*) => {$(
                if let Some(&x) = index.get($d) {
                    // The first slot is of place 1: `x` itself.
                    acc = acc.wrapping_add(x.wrapping_mul(self.scales[$d][0]));
                    for k in 1..W.min(SLOTS) {
                        let (shift, scale) = (self.shifts[$d][k], self.scales[$d][k]);
                        acc = acc.wrapping_add(x.wrapping_shr(u32::from(shift)).wrapping_mul(scale));
                    }
                }
            )*};
        }
        dims!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        acc
    }
}

impl DigitInverse {
    /// Adds the coordinates stored at `offset` into `index` (zeros), its
    /// first `rank` entries, and says whether they name an element:
    /// `false` for padding and past the slots the digits address.
    #[allow(clippy::inline_always, clippy::cast_possible_truncation)]
    #[inline(always)]
    pub(crate) fn index_of(
        &self,
        offset: usize,
        dims: &[usize],
        index: &mut [usize; MAX_RANK],
    ) -> bool {
        let o = offset as u64;
        let mut padding = offset >= self.slots;
        let minor = usize::from(self.minor).min(MAX_DIGITS);
        let major = usize::from(self.major).min(MAX_DIGITS - minor);
        // A minor digit past its radix has bits set that no coordinate sets.
        padding |= o & self.minor_padding != 0;
        for t in &self.terms[..minor] {
            let v = o.wrapping_shr(u32::from(t.shift)) & t.a;
            let slot = &mut index[usize::from(t.dim) % MAX_RANK];
            *slot = slot.wrapping_add((v as usize).wrapping_shl(u32::from(t.place)));
        }
        let mut rest = o.checked_shr(u32::from(self.minor_bits)).unwrap_or(0);
        for t in &self.terms[minor..minor + major] {
            let q = divide(rest, t.a, u32::from(t.shift));
            let v = rest.wrapping_sub(q.wrapping_mul(t.b));
            rest = q;
            padding |= v > t.largest;
            let slot = &mut index[usize::from(t.dim) % MAX_RANK];
            *slot = slot.wrapping_add((v as usize).wrapping_shl(u32::from(t.place)));
        }
        if self.ragged != 0 {
            for (d, (x, size)) in index.iter().zip(dims).enumerate() {
                padding |= self.ragged & (1 << d) != 0 && x >= size;
            }
        }
        !padding
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;
    use std::string::String;
    use std::vec::Vec;

    use crate::eval::layout::{InverseForm, OffsetForm};
    use crate::Layout;
    use crate::{Index, MAX_PROGRAM_STEPS};

    /// `SplitMix64`, for draws that repeat.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// Whether `l`'s digits compile.
    fn compiles(l: &Layout) -> bool {
        crate::algebra::digits(l.dims(), l.minor_to_major(), l.tiles())
            .ok()
            .and_then(|d| super::DigitForm::new(&d))
            .is_some()
    }

    /// Whether `l` evaluates both ways by the digits or by a program form
    /// that is faster (a closed offset that divides nothing; shifts and
    /// places for the inverse), never by the others.
    fn fast(l: &Layout) -> bool {
        let offset = match &l.forms.offset {
            OffsetForm::Closed(c) => c.divides_nothing(),
            OffsetForm::Digits(_) => true,
            OffsetForm::Steps => false,
        };
        let inverse = match &l.forms.inverse {
            InverseForm::Code(c) => matches!(c.form(), "shifts" | "places"),
            InverseForm::Digits(_) => true,
            InverseForm::Fold => false,
        };
        offset && inverse
    }

    /// Every TPU tiling, at every rank from 1 to 16, in any
    /// `minor_to_major`, ragged dims or not, with `E(n)` and `L(n)`: its
    /// digits compile, each way it takes them or a faster form, and it agrees with the folded programs at every offset
    /// and index tried.
    #[test]
    fn every_tpu_tiling_takes_the_digit_form() {
        let tilings = [
            ("f32", "T(8,128)"),
            ("bf16", "T(8,128)(2,1)"),
            ("s8", "T(8,128)(4,1)"),
            ("s4", "T(8,128)(8,1)E(4)"),
            ("f32", "T(1024)"),
            ("bf16", "T(1024)(128)(2,1)"),
            ("f32", "T(1,128)"),
            ("f32", "T(2,128)"),
            ("bf16", "T(16,128)(2,1)"),
            ("f32", "T(8,128)L(1024)"),
        ];
        let mut rng = Rng(0x5eed);
        let mut taken = 0;
        for rank in 1..=16 {
            for &(element, tiles) in &tilings {
                for _ in 0..4 {
                    // Mostly 1, so that the array stays below 2^40 elements
                    // at rank 16 (strides past 2^51 keep the programs' forms).
                    let mut len = 1usize;
                    let dims: Vec<String> = (0..rank)
                        .map(|_| {
                            let d = match rng.below(4) {
                                0 if len < 1 << 31 => 1 + rng.below(300),
                                _ => 1,
                            };
                            len *= d;
                            format!("{d}")
                        })
                        .collect();
                    let mut m2m: Vec<usize> = (0..rank).collect();
                    for i in (1..rank).rev() {
                        m2m.swap(i, rng.below(i + 1));
                    }
                    let m2m: Vec<String> = m2m.iter().map(|d| format!("{d}")).collect();
                    let spec =
                        format!("{element}[{}]{{{}:{tiles}}}", dims.join(","), m2m.join(","));
                    let l = crate::parse(&spec).unwrap();
                    assert!(compiles(&l) && fast(&l), "{spec}");
                    taken += 1;
                    let (p, inv) = l.programs();
                    let mut scratch = [0; MAX_PROGRAM_STEPS];
                    for _ in 0..200 {
                        let position = rng.below(l.len());
                        let index = Index::unravel(position, l.dims());
                        assert_eq!(l.offset(&index), p.eval(&index, &mut scratch), "{spec}");
                        let k = rng.below(l.storage_len() + 2);
                        let mut want = [0; crate::MAX_RANK];
                        let found = k < l.storage_len() && inv.eval(k, &mut scratch, &mut want);
                        assert_eq!(
                            l.index_of(k).as_deref(),
                            found.then_some(&want[..l.rank()]),
                            "{spec} at {k}"
                        );
                    }
                }
            }
        }
        assert_eq!(taken, 16 * 10 * 4);
    }

    /// What keeps the folded programs' forms: `*` over dims larger than 1,
    /// a nest that does not divide the tile it splits, sizes that are not
    /// powers of two; and what takes digits despite looking irregular.
    #[test]
    fn the_digit_form_where_tiles_split_whole_digits() {
        for (spec, digits) in [
            ("f32[7,10]{1,0:T(3,4)(2,3)}", false),
            ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", false),
            ("f32[30,20]{0,1:T(3,5)}", false),
            ("f32[10,2,9]{0,1,2:T(*,8)(8,4)}", false),
            // `*` over a dim of 1 adds nothing.
            ("f32[1,9]{1,0:T(*,8)}", true),
            // A nest larger than the tile: all of it inside, padded.
            ("f32[5,9]{1,0:T(2,4)(4,8)}", true),
            ("f32[24,8]{1,0:T(16,4)(8,2)(2,1)}", true),
            ("f32[3,5]{1,0:T(2,2)}", true),
        ] {
            let l = crate::parse(spec).unwrap();
            assert_eq!(compiles(&l), digits, "{spec}");
        }
    }

    /// The digits' evaluators themselves, whichever form a layout picks,
    /// against the folded programs at every index and every slot (past
    /// storage too) of random small layouts: ranks 1 to 4, any
    /// `minor_to_major`, 1 to 3 levels of powers of two, ragged dims,
    /// `L(n)` and `E(n)`.
    #[test]
    fn digit_evaluators_equal_the_programs_everywhere() {
        let mut rng = Rng(0x0a16_eb4a);
        let mut compiled = 0;
        for _ in 0..3000 {
            let rank = 1 + rng.below(4);
            let dims: Vec<String> = (0..rank)
                .map(|_| format!("{}", 1 + rng.below(12)))
                .collect();
            let mut m2m: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                m2m.swap(i, rng.below(i + 1));
            }
            let m2m: Vec<String> = m2m.iter().map(|d| format!("{d}")).collect();
            let tiles: Vec<String> = (0..=rng.below(3))
                .map(|_| {
                    let sizes: Vec<String> = (0..=rng.below(3))
                        .map(|_| format!("{}", 1 << rng.below(4)))
                        .collect();
                    sizes.join(",")
                })
                .collect();
            let tiles = tiles.join(")(");
            let extra = ["", "L(8)", "E(4)"][rng.below(3)];
            let spec = format!(
                "s8[{}]{{{}:T({tiles}){extra}}}",
                dims.join(","),
                m2m.join(",")
            );
            let Ok(l) = crate::parse(&spec) else { continue };
            let Some(form) = crate::algebra::digits(l.dims(), l.minor_to_major(), l.tiles())
                .ok()
                .and_then(|d| super::DigitForm::new(&d))
            else {
                continue;
            };
            compiled += 1;
            let (offset, inverse) = form.split();
            let (p, inv) = l.programs();
            let mut scratch = [0; MAX_PROGRAM_STEPS];
            // Some tilings of three levels keep no digit offset.
            if let Some(offset) = offset {
                for position in 0..l.len() {
                    let index = Index::unravel(position, l.dims());
                    assert_eq!(
                        offset.offset(&index),
                        p.eval(&index, &mut scratch),
                        "{spec} at {index:?}"
                    );
                }
            }
            for k in 0..l.storage_len() + 3 {
                let mut want = [0; crate::MAX_RANK];
                let found = k < l.storage_len() && inv.eval(k, &mut scratch, &mut want);
                let mut got = [0; crate::MAX_RANK];
                let ok = k < l.storage_len() && inverse.index_of(k, l.dims(), &mut got);
                assert_eq!(ok, found, "{spec} at {k}");
                if found {
                    assert_eq!(got[..l.rank()], want[..l.rank()], "{spec} at {k}");
                }
            }
        }
        assert!(compiled > 2500, "{compiled}");
    }
}
