//! `offset` and `index_of` compiled from a layout's digits: a shift and a
//! mask a digit where places and radices are powers of two (every TPU
//! tile is), a division by reciprocal multiplication only for the storage
//! extents that are not (the ragged tile counts, untiled dims).
//!
//! Both are inlined into their callers, so the shape of the tables decides
//! what a caller's loop can do with them. `offset` sums fixed groups of
//! four digits a dim, unrolled over the dims: the digits of the indices a
//! loop does not change, and every table read, leave the loop. `index_of`
//! reads the minor digits of the offset, whose extents are powers of two,
//! as independent shifts and masks, then the rest as a mixed-radix number.

use crate::algebra::{Digits, MAX_DIGITS};
use crate::divide::Divisor;
use crate::raw::{Reader, Writer};
use crate::MAX_RANK;

/// The most digits of one dim: a `(1024)(128)(2,1)` tiling's four.
const PER_DIM: usize = 4;

/// A minor digit of an offset, `(offset >> shift) & (2^width - 1)`, added
/// to `index[dim]` at `place` (a shift); padding if it has bits from
/// `bound` up (64: never).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LowTerm {
    shift: u8,
    width: u8,
    place: u8,
    dim: u8,
    bound: u8,
}

/// A major digit, read from what the minor ones leave: `v = rest %
/// extent`, `rest /= extent`, `index[dim] += v << place`; padding if `v`
/// is at least `bound`. The most major digit takes the rest whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct HighTerm {
    /// The extent's reciprocal, as [`Divisor`] keeps it (0 for a power of
    /// two, and for the most major digit).
    magic: u64,
    /// The extent; 0 for the most major digit.
    extent: u64,
    bound: u64,
    dim: u8,
    /// `floor(log2(extent))`, 0 for the most major digit.
    shift: u8,
    place: u8,
}

/// The evaluators of a layout whose digits all have places and radices
/// that are powers of two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DigitForm {
    /// Each dim's part of the offset, `Σ (x >> shifts[k]) * scales[k]`:
    /// `Σ ((x / p_k) % r_k) * s_k` over its digits with the remainders
    /// telescoped, as `p_(k+1) = p_k r_k`, into quotients alone, each
    /// scaled by `s_k - r_(k-1) s_(k-1)` (wrapping). The one of place 1
    /// is `x` itself; unused slots scale by 0.
    shifts: [[u8; PER_DIM]; MAX_RANK],
    scales: [[usize; PER_DIM]; MAX_RANK],
    low: [LowTerm; MAX_DIGITS],
    /// Most minor first.
    high: [HighTerm; MAX_DIGITS],
    low_len: u8,
    high_len: u8,
    /// The bits the minor digits take.
    low_bits: u8,
    ragged: u16,
    slots: usize,
}

const NO_LOW: LowTerm = LowTerm {
    shift: 0,
    width: 0,
    place: 0,
    dim: 0,
    bound: 64,
};

const NO_HIGH: HighTerm = HighTerm {
    magic: 0,
    extent: 0,
    bound: u64::MAX,
    dim: 0,
    shift: 0,
    place: 0,
};

/// `log2(x)` for a power of two.
#[allow(clippy::cast_possible_truncation)]
fn log2(x: usize) -> Option<u8> {
    x.is_power_of_two().then(|| x.trailing_zeros() as u8)
}

impl DigitForm {
    /// The evaluators of `digits`, or `None` when a place or radix is not
    /// a power of two, a dim has more than four digits, or a stride does
    /// not fit (those layouts keep the folded programs' forms).
    pub(crate) fn new(digits: &Digits) -> Option<DigitForm> {
        let mut form = DigitForm {
            shifts: [[0; PER_DIM]; MAX_RANK],
            scales: [[0; PER_DIM]; MAX_RANK],
            low: [NO_LOW; MAX_DIGITS],
            high: [NO_HIGH; MAX_DIGITS],
            low_len: 0,
            high_len: 0,
            low_bits: 0,
            ragged: digits.ragged,
            slots: digits.slots,
        };
        let mut per_dim = [0usize; MAX_RANK];
        let all = &digits.list;
        // Minor digits: the most minor run of extents that are powers of two.
        let mut low = 0;
        while low < all.len() && all[all.len() - 1 - low].extent.is_power_of_two() {
            low += 1;
        }
        for (i, g) in all.iter().enumerate() {
            let constant = g.radix == 1;
            let place = if constant { 0 } else { log2(g.place)? };
            let width = match g.radix {
                0 => 64,
                r => u32::from(log2(r)?),
            };
            let dim = u8::try_from(g.dim)
                .ok()
                .filter(|&d| usize::from(d) < MAX_RANK)?;
            if !constant {
                *per_dim.get_mut(g.dim)? += 1;
            }
            let from_minor = all.len() - 1 - i;
            if from_minor < low {
                let shift = log2(g.stride)?;
                #[allow(clippy::cast_possible_truncation)]
                let term = LowTerm {
                    shift,
                    width: log2(g.extent)?,
                    place,
                    dim,
                    bound: if g.reaches_padding() || constant {
                        width as u8
                    } else {
                        64
                    },
                };
                form.low[from_minor] = term;
                form.low_bits = form.low_bits.max(shift + term.width);
            } else {
                let divisor = if i == 0 {
                    Divisor::NONE
                } else {
                    Divisor::new(u64::try_from(g.extent).ok()?)?
                };
                #[allow(clippy::cast_possible_truncation)]
                let term = HighTerm {
                    magic: divisor.magic,
                    extent: divisor.value,
                    bound: if g.reaches_padding() || constant {
                        g.radix as u64
                    } else {
                        u64::MAX
                    },
                    dim,
                    shift: divisor.shift() as u8,
                    place,
                };
                form.high[from_minor - low] = term;
            }
        }
        // Each dim's digits by place: they tile its coordinate, from place 1 up.
        for (dim, &count) in per_dim.iter().enumerate() {
            if count > PER_DIM {
                return None;
            }
            let mut place = 1usize;
            let mut below = 0usize;
            for k in 0..count {
                let g = all
                    .iter()
                    .find(|g| g.dim == dim && g.radix != 1 && g.place == place)?;
                form.shifts[dim][k] = log2(place)?;
                form.scales[dim][k] = g.stride.wrapping_sub(below);
                below = g.radix.wrapping_mul(g.stride);
                place = place.checked_mul(g.radix).unwrap_or(0);
            }
        }
        form.low_len = u8::try_from(low).ok()?;
        form.high_len = u8::try_from(all.len() - low).ok()?;
        Some(form)
    }

    /// The storage offset of `index`: equal to the folded offset program
    /// for every index inside the dims, some value but never a panic for
    /// any other.
    ///
    /// Dims and digits are unrolled by hand: the index's length is known at
    /// most call sites, so the dims past it drop out, and what remains is
    /// straight code whose terms of indices a caller's loop does not change
    /// leave that loop, with every read of the tables.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn offset(&self, index: &[usize]) -> usize {
        // The macro below lists every dim.
        const _: () = assert!(MAX_RANK == 16 && PER_DIM == 4);
        let mut acc = 0usize;
        macro_rules! dims {
            ($($d:literal)*) => {$(
                if let Some(&x) = index.get($d) {
                    let [a, b, c, d] = self.shifts[$d].map(u32::from);
                    let [p, q, r, s] = self.scales[$d];
                    acc = acc
                        .wrapping_add(x.wrapping_shr(a).wrapping_mul(p))
                        .wrapping_add(x.wrapping_shr(b).wrapping_mul(q))
                        .wrapping_add(x.wrapping_shr(c).wrapping_mul(r))
                        .wrapping_add(x.wrapping_shr(d).wrapping_mul(s));
                }
            )*};
        }
        dims!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        acc
    }

    /// Adds the coordinates stored at `offset` into `index` (zeros) and
    /// says whether they name an element: `false` for padding and past
    /// the slots the digits address.
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
        for t in &self.low[..usize::from(self.low_len).min(MAX_DIGITS)] {
            let v = (o >> (t.shift & 63))
                & u64::MAX
                    .checked_shr(64 - u32::from(t.width & 63))
                    .unwrap_or(0);
            padding |= v.checked_shr(u32::from(t.bound)).unwrap_or(0) != 0;
            let slot = &mut index[usize::from(t.dim) % MAX_RANK];
            *slot = slot.wrapping_add((v as usize).wrapping_shl(u32::from(t.place)));
        }
        let mut rest = o.checked_shr(u32::from(self.low_bits)).unwrap_or(0);
        for t in &self.high[..usize::from(self.high_len).min(MAX_DIGITS)] {
            let q = crate::divide::divide(rest, t.magic, u32::from(t.shift));
            let v = rest.wrapping_sub(q.wrapping_mul(t.extent));
            rest = q;
            padding |= v >= t.bound;
            let slot = &mut index[usize::from(t.dim) % MAX_RANK];
            *slot = slot.wrapping_add((v as usize).wrapping_shl(u32::from(t.place)));
        }
        if self.ragged != 0 {
            for (d, (&x, &size)) in index.iter().zip(dims).enumerate() {
                padding |= self.ragged & (1 << d) != 0 && x >= size;
            }
        }
        !padding
    }

    /// The words [`read`](Self::read) reads back, for `layout!`'s tables.
    pub(crate) fn write(&self, w: Writer) {
        for (shifts, scales) in self.shifts.iter().zip(&self.scales) {
            for (&shift, &scale) in shifts.iter().zip(scales) {
                w(u64::from(shift));
                w(scale as u64);
            }
        }
        w(u64::from(self.low_len));
        w(u64::from(self.high_len));
        w(u64::from(self.low_bits));
        w(u64::from(self.ragged));
        w(self.slots as u64);
        for t in &self.low[..usize::from(self.low_len).min(MAX_DIGITS)] {
            for word in [t.shift, t.width, t.place, t.dim, t.bound] {
                w(u64::from(word));
            }
        }
        for t in &self.high[..usize::from(self.high_len).min(MAX_DIGITS)] {
            for word in [
                t.magic,
                t.extent,
                t.bound,
                u64::from(t.dim),
                u64::from(t.shift),
                u64::from(t.place),
            ] {
                w(word);
            }
        }
    }

    /// The form [`write`](Self::write) wrote; any words give a form that
    /// evaluates without a panic.
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) const fn read(r: &mut Reader) -> DigitForm {
        let mut shifts = [[0; PER_DIM]; MAX_RANK];
        let mut scales = [[0; PER_DIM]; MAX_RANK];
        let mut d = 0;
        while d < MAX_RANK {
            let mut k = 0;
            while k < PER_DIM {
                shifts[d][k] = (r.word() & 63) as u8;
                scales[d][k] = r.word() as usize;
                k += 1;
            }
            d += 1;
        }
        let low_len = r.count(MAX_DIGITS);
        let high_len = r.count(MAX_DIGITS);
        let mut form = DigitForm {
            shifts,
            scales,
            low: [NO_LOW; MAX_DIGITS],
            high: [NO_HIGH; MAX_DIGITS],
            low_len: low_len as u8,
            high_len: high_len as u8,
            low_bits: r.u8(),
            ragged: r.word() as u16,
            slots: r.usize(),
        };
        let mut i = 0;
        while i < low_len {
            form.low[i] = LowTerm {
                shift: r.u8(),
                width: r.u8(),
                place: r.u8(),
                dim: r.u8(),
                bound: r.u8(),
            };
            i += 1;
        }
        i = 0;
        while i < high_len {
            form.high[i] = HighTerm {
                magic: r.word(),
                extent: r.word(),
                bound: r.word(),
                dim: r.u8(),
                shift: (r.word() & 63) as u8,
                place: r.u8(),
            };
            i += 1;
        }
        form
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;
    use std::string::String;
    use std::vec::Vec;

    use crate::layout::Forms;
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

    /// Every TPU tiling, at every rank from 1 to 16, in any
    /// `minor_to_major`, ragged dims or not, with `E(n)` and `L(n)`: the
    /// digit form, and it agrees with the folded programs at every offset
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
                    assert!(matches!(l.forms, Forms::Digits(_)), "{spec}");
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
            assert_eq!(matches!(l.forms, Forms::Digits(_)), digits, "{spec}");
        }
    }
}
