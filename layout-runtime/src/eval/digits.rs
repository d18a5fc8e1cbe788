//! `offset` and `index_of` compiled from a layout's digits.
//!
//! Both are inlined into their callers, so the shape of the tables decides
//! what a caller's loop can do with them. `offset` sums fixed groups of
//! three terms a dim, each a shift and a multiply, unrolled over the dims:
//! the terms of the indices a loop does not change, and every table read,
//! leave the loop. `index_of` builds the whole index in one word, each
//! dim's coordinate in a lane of its own: a multiply moves each minor
//! digit from the offset's bits into its lane, a multiply by a reciprocal
//! divides off each major one, and one add and mask check every dim
//! against its size. Neither shifts by a count read from memory, which
//! costs three instructions on x86-64 without BMI2.

use crate::algebra::divide::{high, reciprocal};
use crate::algebra::{Digit, Digits, MAX_DIGITS};
use crate::fixed::Fixed;
use crate::MAX_RANK;

/// The most digits of one dim: a `(1024)(128)(2,1)` tiling's four.
pub(crate) const PER_DIM: usize = 4;

/// The most terms of one dim's part of the offset: every TPU tiling's
/// digits take at most three (see `DigitForm::slots_of`).
pub(crate) const SLOTS: usize = 3;

/// The evaluators compiled from a layout's digits; a layout keeps them
/// [`split`](Self::split).
pub(crate) struct DigitForm {
    offset: DigitOffset,
    /// Whether the offset compiled: places and radices that are powers of
    /// two, at most [`SLOTS`] terms a dim (only some tilings of three
    /// levels need more, and keep the programs' offset).
    fits: bool,
    inverse: Option<DigitInverse>,
}

/// `log2(x)` for a power of two.
#[allow(clippy::cast_possible_truncation)]
fn log2(x: usize) -> Option<u8> {
    x.is_power_of_two().then(|| x.trailing_zeros() as u8)
}

impl DigitForm {
    /// The evaluators of the digits of a layout of `dims`, or `None` when
    /// neither compiles (see [`DigitInverse::new`] and `fits`).
    pub(crate) fn new(digits: &Digits, dims: &[usize]) -> Option<DigitForm> {
        let mut form = DigitForm {
            offset: DigitOffset {
                shifts: [[0; SLOTS]; MAX_RANK],
                scales: [[0; SLOTS]; MAX_RANK],
                third: false,
            },
            fits: true,
            inverse: DigitInverse::new(digits, dims),
        };
        form.fits = form.offset_terms(digits).is_some() && form.fits;
        (form.fits || form.inverse.is_some()).then_some(form)
    }

    /// Fills the offset's slots; `None` where a place or radix is not a
    /// power of two, or a dim has more than [`PER_DIM`] digits.
    fn offset_terms(&mut self, digits: &Digits) -> Option<()> {
        let all = &digits.list;
        // A digit of dims that `*` merged whole adds to no one dim.
        if all.iter().any(|g| g.last != g.dim || g.dim >= MAX_RANK) {
            return None;
        }
        let mut per_dim = [0usize; MAX_RANK];
        for g in all.iter().filter(|g| g.radix != 1) {
            log2(g.place)?;
            if g.radix > 1 {
                log2(g.radix)?;
            }
            per_dim[g.dim] += 1;
        }
        for (dim, &count) in per_dim.iter().enumerate() {
            self.slots_of(all, dim, count)?;
        }
        Some(())
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

    /// The two evaluators, apart: a layout keeps each or another form.
    pub(crate) fn split(self) -> (Option<DigitOffset>, Option<DigitInverse>) {
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

/// `index_of` from the digits, as one word, the packed index: dim `d`'s
/// coordinate at bits `at[d]..`, as wide as the largest coordinate its
/// digits spell, with one bit more above it where that passes the dim's
/// size; the minor digits' bits of the offset below every lane, so that
/// each moves up to its place in its lane by a multiply.
///
/// The lanes take at most the bits of the storage length and two a dim
/// (one where a lane rounds up, one for its guard), above the bits of the
/// digits read as fields (none, if need be), and again the bits of each
/// digit that can hold values past its radix (a tile past a dim): a
/// layout of fewer than 2^(64 - 2 rank) slots without such digits fits
/// (2^56 at rank 4). Larger ones, or past [`MAX_DIGITS`] terms, keep the
/// programs' forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DigitInverse {
    /// The minor digits first, `fields` of them: `(o & a) * mul` moves a
    /// digit of the offset `o` (its bits `a`, those of one of the run of
    /// extents that are powers of two most minor in storage) up to its
    /// place in its lane; digits moved by one multiply share it.
    ///
    /// Then the major ones, `steps` of them, read from what the minor
    /// bits leave, most minor first: `r_0 = o >> minor_bits` and `r_k =
    /// high(r_(k-1), a_k)`, `r_(k-1) / b_(k-1)` by [`reciprocal`], so that
    /// the digits are `v_k = r_k - b_k r_(k+1)` and the most major is the
    /// last `r`. Their sum `Σ v_k m_k`, where `m_k` moves a digit to its
    /// place, telescopes to `Σ r_k mul_k`, with `mul_k = m_k - b_(k-1)
    /// m_(k-1)` (wrapping): a step takes two multiplies, not three.
    pub(crate) terms: [Term; MAX_DIGITS],
    pub(crate) fields: u8,
    pub(crate) steps: u8,
    /// Whether the layout takes the straight code (see [`STRAIGHT`]): its
    /// fields then take `STRAIGHT.fields` terms, the unused 0.
    pub(crate) straight: bool,
    /// The bits the minor digits take.
    pub(crate) minor_bits: u8,
    /// The bits of minor digits past their radix: set only in padding.
    pub(crate) minor_padding: u64,
    /// Dim `d`'s lane: the packed index shifted right by `at[d]`, masked by
    /// `masks[d]`.
    pub(crate) at: [u8; MAX_RANK],
    pub(crate) masks: [u64; MAX_RANK],
    /// Added to the packed index, it carries into the bit above a lane (one
    /// of `guards`) exactly where the lane holds a value past its bound:
    /// a coordinate past its dim's size, or a major digit past its radix
    /// (a digit that reaches padding, also added into a lane of its own).
    pub(crate) over: u64,
    pub(crate) guards: u64,
    /// The slots the digits address: at or past them is padding.
    pub(crate) slots: usize,
}

/// A digit of [`DigitInverse`]: a field or a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Term {
    pub(crate) a: u64,
    pub(crate) mul: u64,
}

pub(crate) const NO_TERM: Term = Term { a: 0, mul: 0 };

/// The layouts whose inverse is straight code: at most `fields` fields,
/// each taken (the unused ones 0), at most `steps` steps, each behind a
/// test of their number, and at most `dims` dims. Straight code keeps
/// every table read out of a caller's loop and each entry of the index
/// in a register: loops over the terms ran 3-4 times its time. Where a
/// test or a second kernel would skip unused terms, it cost more than
/// they do (`benches/family.rs`): a test before each field, a second group
/// of fields behind one test, kernels for two sizes, steps without tests.
/// Three fields, not four, put 5-10% more time on the layouts of four
/// minor digits and took that much off those of one or two, the family's
/// worst. A run of more minor digits than fields is read partly by steps
/// (`bf16[8,1,1000,130]{3,2,0,1:T(8,128)(2,1)}`: four minor digits, three
/// fields and three steps). Every TPU layout of ranks 1 to 4 fits; larger
/// ones take the loops, out of line.
pub(crate) const STRAIGHT: Straight = Straight {
    fields: 3,
    steps: 6,
    dims: 4,
};

/// The bounds of a layout whose inverse is straight code.
pub(crate) struct Straight {
    pub(crate) fields: usize,
    pub(crate) steps: usize,
    pub(crate) dims: usize,
}

/// Lanes handed out from the bottom of the packed index up.
struct Lanes {
    next: u32,
    over: u64,
    guards: u64,
}

impl Lanes {
    /// A lane for values up to `largest`, checked against `bound` (values
    /// at or past it set its guard bit) where `largest` reaches it; its
    /// lowest bit and width, `None` past 64 bits.
    fn take(&mut self, largest: u64, bound: u64) -> Option<(u32, u32)> {
        let width = u64::BITS - largest.leading_zeros();
        let guarded = largest >= bound;
        if width == 0 && !guarded {
            // An empty lane (a dim of 1, whose digits add nothing) takes
            // no bits, and its place stays a shift below 64.
            return Some((0, 0));
        }
        let at = self.next;
        self.next = at
            .checked_add(width + u32::from(guarded))
            .filter(|&n| n <= u64::BITS)?;
        if guarded {
            // `2^width - bound`: `x + 2^width - bound` reaches `2^width`
            // exactly when `x >= bound`, and stays below `2^(width + 1)`.
            self.over |= (1u64 << width).wrapping_sub(bound) << at;
            self.guards |= 1 << (at + width);
        }
        Some((at, width))
    }
}

impl DigitInverse {
    /// The inverse of the digits of a layout of `dims`; `None` for digits
    /// of dims that `*` merged whole, or where the lanes or a division's
    /// dividends are too wide (see [`DigitInverse`]).
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn new(digits: &Digits, dims: &[usize]) -> Option<DigitInverse> {
        let all = &digits.list;
        if dims.len() > MAX_RANK || all.iter().any(|g| g.last != g.dim || g.dim >= dims.len()) {
            return None;
        }
        // The most minor run of extents that are powers of two, each digit
        // a field or a step: as many fields as the straight code takes.
        let run = all
            .iter()
            .rev()
            .take_while(|g| g.extent.is_power_of_two())
            .count();
        let mut fitting = (0..=run)
            .rev()
            .filter_map(|minor| Self::with_fields(digits, dims, minor));
        // The most fields that fit; fewer where that takes the straight
        // code.
        let first = fitting.next()?;
        if first.straight {
            return Some(first);
        }
        fitting.find(|form| form.straight).or(Some(first))
    }

    /// The inverse whose fields are the `minor` most minor digits (their
    /// extents powers of two), below every lane.
    #[allow(clippy::cast_possible_truncation)]
    fn with_fields(digits: &Digits, dims: &[usize], minor: usize) -> Option<DigitInverse> {
        let all = &digits.list;
        let mut form = DigitInverse {
            terms: [NO_TERM; MAX_DIGITS],
            fields: 0,
            steps: 0,
            straight: false,
            minor_bits: 0,
            minor_padding: 0,
            at: [0; MAX_RANK],
            masks: [0; MAX_RANK],
            over: 0,
            guards: 0,
            slots: digits.slots,
        };
        let minor_slots = all
            .iter()
            .rev()
            .take(minor)
            .map(|g| g.extent)
            .product::<usize>();
        let mut lanes = Lanes {
            next: log2(minor_slots)?.into(),
            over: 0,
            guards: 0,
        };
        form.minor_bits = lanes.next as u8;
        let major = all.len() - minor;
        // A digit that reaches padding is checked in a lane of its own
        // where no minor bit marks its values past its radix: lowest, as
        // such a value, also added at its place in its dim's lane, can
        // overflow that lane into those above.
        let mut own = [None; MAX_DIGITS];
        for (i, g) in all.iter().enumerate() {
            let radix = g.radix as u64;
            let marked = i >= major && radix.is_power_of_two();
            if (g.reaches_padding() || g.radix == 1) && !marked {
                own[i] = Some(lanes.take(g.extent as u64 - 1, radix)?.0);
            }
        }
        for (d, &size) in dims.iter().enumerate() {
            // Every digit here is of one dim (`new` refused `*`'s).
            let largest = digits.largest(d, d)? as u64;
            let (at, width) = lanes.take(largest, size as u64)?;
            form.at[d] = at as u8;
            form.masks[d] = u64::MAX.checked_shr(u64::BITS - width).unwrap_or(0);
        }
        // Each digit's multiplier, moving its value from bit `from` of the
        // offset (0 for a major digit) to its place in its lane, and to
        // its own lane where it has one.
        let mut fields = Fixed::<Term, MAX_DIGITS>::new(NO_TERM);
        // The major digits' extents and multipliers, most minor first.
        let mut steps = Fixed::<(u64, u64), MAX_DIGITS>::new((0, 0));
        for (i, g) in all.iter().enumerate().rev() {
            let from = if i >= major {
                u32::from(log2(g.stride)?)
            } else {
                0
            };
            let padded = g.reaches_padding() || g.radix == 1;
            // A constant digit adds nothing to a lane (its dim's may be
            // empty, at bit 64); any other's lane is below bit 64.
            let mut mul = match g.radix {
                1 => 0,
                _ => (g.place as u64) << (u32::from(form.at[g.dim]) - from),
            };
            let mut bits = (g.extent as u64 - 1) << from;
            if let Some(at) = own[i] {
                mul = mul.wrapping_add(1 << (at - from));
            } else if padded {
                // Values past the radix set bits of the offset.
                bits = (g.radix as u64 - 1) << from;
                form.minor_padding |= (g.extent as u64 - 1) << from & !bits;
            }
            if i < major {
                steps.push((g.extent as u64, mul))?;
            } else if mul != 0 {
                // Digits moved up by one multiply share it.
                match fields.iter_mut().find(|t| t.mul == mul) {
                    Some(t) => t.a |= bits,
                    None => fields.push(Term { a: bits, mul })?,
                }
            }
        }
        form.place_terms(&fields, &steps, dims.len())?;
        (form.over, form.guards) = (lanes.over, lanes.guards);
        Some(form)
    }

    /// Lays out the terms: `fields`, then the steps made from the major
    /// digits' extents and multipliers, most minor first; the fields at
    /// [`STRAIGHT`]'s number where the layout takes the straight code.
    #[allow(clippy::cast_possible_truncation)]
    fn place_terms(&mut self, fields: &[Term], steps: &[(u64, u64)], rank: usize) -> Option<()> {
        let straight = fields.len() <= STRAIGHT.fields
            && steps.len() <= STRAIGHT.steps
            && rank <= STRAIGHT.dims;
        let first_step = if straight {
            STRAIGHT.fields
        } else {
            fields.len()
        };
        if first_step + steps.len() > MAX_DIGITS {
            return None;
        }
        self.terms[..fields.len()].copy_from_slice(fields);
        for (k, &(_, mul)) in steps.iter().enumerate() {
            self.terms[first_step + k] = match k.checked_sub(1).map(|j| steps[j]) {
                None => Term { a: 0, mul },
                Some((extent, mul_below)) => {
                    // `r_(k-1)` is below the slots of the digits from
                    // `k - 1` up.
                    let above: u64 = steps[k - 1..].iter().map(|&(e, _)| e).product();
                    let bits = u64::BITS - (above - 1).leading_zeros();
                    Term {
                        a: reciprocal(extent, bits)?,
                        mul: mul.wrapping_sub(extent.wrapping_mul(mul_below)),
                    }
                }
            };
        }
        self.fields = first_step as u8;
        self.steps = steps.len() as u8;
        self.straight = straight;
        Some(())
    }

    /// The index stored at `offset`, its first `rank` entries (the rank
    /// the form was compiled for) the coordinates, the rest 0, and whether
    /// it names an element: `false` for padding and past the slots the
    /// digits address.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_of(&self, offset: usize, rank: usize) -> ([usize; MAX_RANK], bool) {
        if self.straight {
            self.straight(offset)
        } else {
            self.any(offset, rank)
        }
    }

    /// [`index_of`](Self::index_of) of a layout within [`STRAIGHT`]:
    /// straight code, each entry at a place known where it is inlined.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn straight(&self, offset: usize) -> ([usize; MAX_RANK], bool) {
        const F: usize = STRAIGHT.fields;
        let steps = usize::from(self.steps);
        let o = offset as u64;
        let mut packed = 0u64;
        for t in &self.terms[..F] {
            packed = packed.wrapping_add((o & t.a).wrapping_mul(t.mul));
        }
        let terms = &self.terms[F..][..STRAIGHT.steps];
        let mut rest = o.wrapping_shr(u32::from(self.minor_bits));
        for (k, t) in terms.iter().enumerate() {
            if k >= steps {
                break;
            }
            if k > 0 {
                rest = high(rest, t.a);
            }
            packed = packed.wrapping_add(rest.wrapping_mul(t.mul));
        }
        let mut index = [0; MAX_RANK];
        for (d, x) in index[..STRAIGHT.dims].iter_mut().enumerate() {
            *x = self.coordinate(packed, d);
        }
        // Padding is found at the end, as every slot's index is: a test
        // after the fields for the padding they show, as the generated
        // code's tests come first, took half the time of the layouts that
        // are mostly padding (`bf16[7,5000]{0,1:T(1024)(128)(2,1)}`, 99%)
        // but added a tenth to the family's worst.
        (index, self.found(offset, packed))
    }

    /// [`index_of`](Self::index_of) of a larger layout: loops, out of line.
    /// The same terms as [`straight`](Self::straight) reads, by counts read
    /// at run time: the straight code's fixed lengths are what keep its
    /// table reads out of a caller's loop, so the two stay apart.
    #[inline(never)]
    fn any(&self, offset: usize, rank: usize) -> ([usize; MAX_RANK], bool) {
        let fields = usize::from(self.fields).min(MAX_DIGITS);
        let steps = usize::from(self.steps).min(MAX_DIGITS - fields);
        let o = offset as u64;
        let mut packed = 0u64;
        for t in &self.terms[..fields] {
            packed = packed.wrapping_add((o & t.a).wrapping_mul(t.mul));
        }
        let mut rest = o.wrapping_shr(u32::from(self.minor_bits));
        for (k, t) in self.terms[fields..fields + steps].iter().enumerate() {
            if k > 0 {
                rest = high(rest, t.a);
            }
            packed = packed.wrapping_add(rest.wrapping_mul(t.mul));
        }
        let mut index = [0; MAX_RANK];
        for (d, x) in index.iter_mut().enumerate().take(rank) {
            *x = self.coordinate(packed, d);
        }
        (index, self.found(offset, packed))
    }

    /// Whether the packed index at `offset` names an element: three tests
    /// and-ed without a branch between them.
    #[allow(clippy::inline_always, clippy::needless_bitwise_bool)]
    #[inline(always)]
    fn found(&self, offset: usize, packed: u64) -> bool {
        (offset < self.slots)
            & (offset as u64 & self.minor_padding == 0)
            & (packed.wrapping_add(self.over) & self.guards == 0)
    }

    /// Dim `d`'s coordinate in a packed index.
    #[allow(clippy::inline_always, clippy::cast_possible_truncation)]
    #[inline(always)]
    fn coordinate(&self, packed: u64, d: usize) -> usize {
        (packed.wrapping_shr(u32::from(self.at[d % MAX_RANK])) & self.masks[d % MAX_RANK]) as usize
    }
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

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;
    use std::string::String;
    use std::vec::Vec;

    use super::STRAIGHT;
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
        compiled(l) == (true, true)
    }

    /// Whether `l`'s digits compile to an offset, and to an inverse.
    fn compiled(l: &Layout) -> (bool, bool) {
        crate::algebra::digits(l.dims(), l.minor_to_major(), l.tiles())
            .ok()
            .and_then(|d| super::DigitForm::new(&d, l.dims()))
            .map_or((false, false), |f| {
                let (offset, inverse) = f.split();
                (offset.is_some(), inverse.is_some())
            })
    }

    /// Whether `l` evaluates `offset` by the digits or by a closed form
    /// that divides nothing (faster where no dim is ragged), and
    /// `index_of` by the digits.
    fn fast(l: &Layout) -> bool {
        let offset = match &l.forms.offset {
            OffsetForm::Closed(c) => c.divides_nothing(),
            OffsetForm::Digits(_) => true,
            OffsetForm::Steps => false,
        };
        offset && matches!(l.forms.inverse, InverseForm::Digits(_))
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
                    // Ranks 1 to 4 take the straight code.
                    if rank <= STRAIGHT.dims {
                        assert!(
                            matches!(&l.forms.inverse, InverseForm::Digits(d) if d.straight),
                            "{spec}"
                        );
                    }
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
        for (spec, offset, inverse) in [
            ("f32[7,10]{1,0:T(3,4)(2,3)}", false, false),
            ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", false, false),
            // Tiles that are not powers of two: the inverse divides.
            ("f32[30,20]{0,1:T(3,5)}", false, true),
            ("f32[10,2,9]{0,1,2:T(*,8)(8,4)}", false, false),
            // `*` over a dim of 1 adds nothing.
            ("f32[1,9]{1,0:T(*,8)}", true, true),
            // A nest larger than the tile: all of it inside, padded.
            ("f32[5,9]{1,0:T(2,4)(4,8)}", true, true),
            // Three levels whose terms pass `SLOTS`: the offset keeps the
            // programs' form.
            ("f32[24,8]{1,0:T(16,4)(8,2)(2,1)}", false, true),
            ("f32[3,5]{1,0:T(2,2)}", true, true),
        ] {
            let l = crate::parse(spec).unwrap();
            assert_eq!(compiled(&l), (offset, inverse), "{spec}");
        }
    }

    /// Lanes that fill all 64 bits, with dims of 1 whose lanes are empty:
    /// no shift past the word, no panic, and the same answers as the
    /// programs at the ends of storage.
    #[test]
    fn lanes_that_fill_the_word() {
        for spec in [
            "s8[1]{0:T(4611686018427387905,1)}",
            "s8[1,1]{1,0:T(4611686018427387905,1,1)}",
            "s8[1]{0:T(5,5,5,5,5,5,5,5,5,5,5,9,9,9,9,1)}",
            "s8[1]{0:T(9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,1)}",
        ] {
            let l = crate::parse(spec).unwrap();
            let (_, inv) = l.programs();
            let mut scratch = [0; MAX_PROGRAM_STEPS];
            let last = l.storage_len() - 1;
            for k in (0..64).chain([last / 2, last - 1, last]) {
                let mut want = [0; crate::MAX_RANK];
                let found = inv.eval(k, &mut scratch, &mut want);
                assert_eq!(
                    l.index_of(k).as_deref(),
                    found.then_some(&want[..l.rank()]),
                    "{spec} at {k}"
                );
            }
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
        // Inverses, offsets.
        let mut compiled = [0, 0];
        // A tile past a dim whose radix is not a power of two, its values
        // past the radix overflowing the dim's lane (found in the
        // relayout tests).
        let fixed = [
            "u32[3,5,3]{2,1,0:T(3)(32)L(4)}",
            "s8[5,7]{0,1:T(3,5)(16,8)}",
        ];
        for round in 0..4500 + fixed.len() {
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
                        .map(|_| match rng.below(8) {
                            0..4 => format!("{}", 1 << rng.below(4)),
                            4..7 => format!("{}", 1 + rng.below(8)),
                            // A tile larger than those below it.
                            _ => format!("{}", 16 << rng.below(2)),
                        })
                        .collect();
                    sizes.join(",")
                })
                .collect();
            let tiles = tiles.join(")(");
            let extra = ["", "L(8)", "E(4)"][rng.below(3)];
            let spec = match fixed.get(round) {
                Some(spec) => String::from(*spec),
                None => format!(
                    "s8[{}]{{{}:T({tiles}){extra}}}",
                    dims.join(","),
                    m2m.join(",")
                ),
            };
            // Tiles larger than the dims can blow storage up; keep it small.
            let Some(l) = crate::parse(&spec).ok().filter(|l| l.storage_len() < 4096) else {
                continue;
            };
            let Some(form) = crate::algebra::digits(l.dims(), l.minor_to_major(), l.tiles())
                .ok()
                .and_then(|d| super::DigitForm::new(&d, l.dims()))
            else {
                continue;
            };
            let (offset, inverse) = form.split();
            // A small layout's lanes always fit.
            let inverse = inverse.unwrap_or_else(|| panic!("{spec}: no inverse"));
            compiled[0] += 1;
            compiled[1] += usize::from(offset.is_some());
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
                // The straight code where the layout takes it, and the
                // loops that larger layouts take.
                for (got, ok) in [inverse.index_of(k, l.rank()), inverse.any(k, l.rank())] {
                    let ok = ok && k < l.storage_len();
                    assert_eq!(ok, found, "{spec} at {k}");
                    if found {
                        assert_eq!(got[..l.rank()], want[..l.rank()], "{spec} at {k}");
                    }
                }
            }
        }
        assert!(compiled[0] > 2500 && compiled[1] > 1500, "{compiled:?}");
    }
}
