//! The inverse in closed form: each output of `index_of`, and each value
//! a padding check bounds, as a sum of the terms of the offset's closed
//! form, and where `index_of` writes the index it finds.

use super::{
    digits, divide_branch_free, to_usize, Digit, Kind, Shifts, MAX_DIMS, PER_DIM, SHIFT_SLOTS,
};
use crate::algebra::divide::Divisor;
use crate::eval::program::StepId;
use crate::fixed::Fixed;

/// Where [`ClosedInverse::index_of`] writes an index: the first `rank`
/// entries of a whole index, two to a store (the entry after an odd rank
/// written 0), for `Layout::index_of`, whose caller copies the index in
/// 16-byte pieces: a piece read right after two 8-byte stores waits for
/// both to reach the cache (a failed store-to-load forward), one 16-byte
/// store forwards. 5.75 times the generated inverse's time on the bf16 TPU
/// layout before, 3.3 after (when this form, not the digits', inverted it).
pub(crate) struct Entries<'a>(
    pub(crate) usize,
    pub(crate) &'a mut [usize; crate::MAX_RANK],
);

impl Entries<'_> {
    /// Writes entry `d` as `entry(d)` for each `d` below the rank (at most
    /// eight), in pairs. Unrolled, so that each `d` is a constant in the
    /// caller's code.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn store(self, entry: impl Fn(usize) -> usize) {
        let Entries(rank, index) = self;
        store_pairs(rank, index, entry);
    }

    /// Runs `fill` on the entries as one slice, rank long, for writers of
    /// an entry a store (the paths out of line): on a slice of a copy,
    /// moved in after in pairs, so that the whole index is written only in
    /// pairs at fixed places, which a caller's loop keeps in registers.
    /// Handed out as a slice, it stayed in memory for every form of
    /// inverse (`Layout::index_of` on the combining example 3.05 times the
    /// generated inverse's time, 2.65 with the copy).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn with_slice(self, fill: impl FnOnce(&mut [usize]) -> bool) -> bool {
        let Entries(rank, index) = self;
        let mut copy = [0; crate::MAX_RANK];
        let written = fill(&mut copy[..rank.min(crate::MAX_RANK)]);
        for (pair, from) in index.chunks_exact_mut(2).zip(copy.chunks_exact(2)) {
            if let (Ok(pair), [a, b]) = (<&mut [usize; 2]>::try_from(pair), from) {
                store_pair(pair, *a, *b);
            }
        }
        written
    }
}

/// A whole index, aligned so that its pairs are 16-byte stores that never
/// straddle a line: unaligned, a caller's loop ran 15% slower at half of
/// its stack positions.
#[repr(align(16))]
pub(crate) struct Stage(pub(crate) [usize; crate::MAX_RANK]);

/// Writes `[a, b]` to `pair` as one 16-byte store where the target has
/// them (SSE2; see [`Entries`]).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn store_pair(pair: &mut [usize; 2], a: usize, b: usize) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // The bits of each `usize` as an `i64` lane, as SSE2 takes them.
        #[allow(clippy::cast_possible_wrap)]
        let v = safe_arch::set_i64_m128i(b as i64, a as i64);
        safe_arch::store_unaligned_m128i(bytemuck::cast_mut(pair), v);
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        *pair = [a, b];
    }
}

/// Writes entries `0..rank` (at most eight) of a whole index, entry `d`
/// being `entry(d)`, two to a store, the entry after an odd rank 0.
/// Unrolled, so that each `d` is a constant in the caller's code.
#[allow(clippy::inline_always)]
#[inline(always)]
fn store_pairs(rank: usize, index: &mut [usize; crate::MAX_RANK], entry: impl Fn(usize) -> usize) {
    macro_rules! pairs {
        ($($d:literal)*) => {$(
            if rank > $d {
                let b = if rank > $d + 1 { entry($d + 1) } else { 0 };
                if let Ok(pair) = <&mut [usize; 2]>::try_from(&mut index[$d..$d + 2]) {
                    store_pair(pair, entry($d), b);
                }
            }
        )*};
    }
    pairs!(0 2 4 6);
}

/// The most padding checks of a closed inverse.
pub(crate) const MAX_CHECKS: usize = 4;
/// One term of a closed inverse: `[a, b, scale]` as pool slots with
/// divisions; with shifts, the amounts of [`Shifts`].
type Slot = [u8; 3];

/// The inverse of a layout in closed form: each output of `index_of`, and
/// each value a padding check bounds, as a sum of `((offset / a) % b) *
/// scale` terms, in fixed groups of slots as in [`Closed`].
///
/// A `Layout` keeps it in its compact code, whose pool of divisors (see
/// [`Code`](crate::eval::code::Code)) holds every constant. A term of divisions
/// is three pool slots; a term of shifts the three bytes of [`Shifts`],
/// at fixed places in the layout, whose mask a caller's loop derives once
/// (a pool lookup and a bit count per amount, at places the pool's slots
/// chose, stayed in such a loop: 45% of its samples). A check's bound is
/// one pool slot. Each group holds its
/// terms' bytes rather than numbers into a table of shared terms: one
/// load a term fewer, for 150 bytes where the table took 90.
///
/// `Layout::index_of` is inlined down to [`index_of`](Self::index_of): it
/// tests the kind once and runs one straight evaluator, a group of three
/// (shifts) or four (divisions) terms per output and per check, without
/// bounds checks.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct ClosedInverse {
    pub(crate) kind: Kind,
    /// `outputs[d]`: the terms of index entry `d`, the unused ones 0.
    pub(crate) outputs: [[Slot; PER_DIM]; MAX_DIMS],
    /// How many of `checks` there are.
    pub(crate) live_checks: u8,
    /// `checks[c]`: the terms of a value that is below the pool's
    /// `bounds[c]` exactly for offsets that hold data.
    pub(crate) checks: [[Slot; PER_DIM]; MAX_CHECKS],
    pub(crate) bounds: [u8; MAX_CHECKS],
}

/// The pool [`ClosedInverse`] names its constants in.
pub(crate) type Pool = [Divisor; crate::algebra::divide::MAX_CONSTANTS];

/// The divisor in `pool`'s slot `slot`. A slot past the pool's constants
/// reads the fill, `NONE`, and one past its capacity (foreign bytes only)
/// wraps: every slot is in the array, with no test to make per read.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn constant(pool: &Pool, slot: u8) -> Divisor {
    pool[usize::from(slot) % pool.len()]
}

impl ClosedInverse {
    pub(crate) const EMPTY: ClosedInverse = ClosedInverse {
        kind: Kind::Shifts,
        outputs: [[Shifts::ZERO.0; PER_DIM]; MAX_DIMS],
        live_checks: 0,
        checks: [[Shifts::ZERO.0; PER_DIM]; MAX_CHECKS],
        bounds: [0; MAX_CHECKS],
    };

    /// The closed form of `inverse`, its constants put in a pool by
    /// `constant`; `None` if an output or check is no sum of digits of the
    /// offset, or the terms exceed the capacities above.
    pub(crate) fn new(
        inverse: &crate::eval::program::InverseProgram,
        mut constant: impl FnMut(usize) -> Option<u8>,
    ) -> Option<ClosedInverse> {
        type Group = Fixed<Digit, PER_DIM>;
        let none = Digit {
            a: 1,
            b: None,
            scale: 0,
        };
        let group = |step: StepId| -> Option<Group> {
            let mut g = Fixed::new(none);
            digits(inverse.program(), step, |d| g.push(d))?;
            Some(g)
        };
        let mut outputs: Fixed<Group, MAX_DIMS> = Fixed::new(Fixed::new(none));
        for out in inverse.outputs() {
            outputs.push(match *out {
                Some(step) => group(step)?,
                None => Fixed::new(none),
            })?;
        }
        let mut checks: Fixed<(Group, usize), MAX_CHECKS> = Fixed::new((Fixed::new(none), 0));
        for c in inverse.checks() {
            checks.push((group(c.step)?, c.bound))?;
        }
        let groups = || outputs.iter().chain(checks.iter().map(|(g, _)| g));
        let powers = groups().flat_map(|g| g.iter()).all(|d| {
            d.a.is_power_of_two()
                && d.b.is_none_or(usize::is_power_of_two)
                && d.scale.is_power_of_two()
        });
        let kind = if powers && groups().all(|g| g.len() <= SHIFT_SLOTS) {
            Kind::Shifts
        } else {
            Kind::Divides
        };
        let mut c = ClosedInverse {
            kind,
            ..ClosedInverse::EMPTY
        };
        // The zero term: a remainder by 1, times 0, in either kind.
        let zero = match kind {
            Kind::Shifts => Shifts::ZERO.0,
            Kind::Divides => [constant(1)?, constant(1)?, constant(0)?],
        };
        let slots =
            |g: &Group, constant: &mut dyn FnMut(usize) -> Option<u8>| -> Option<[Slot; PER_DIM]> {
                let mut slots = [zero; PER_DIM];
                let log = |v: usize| u8::try_from(v.trailing_zeros()).ok();
                for (slot, d) in slots.iter_mut().zip(g.iter()) {
                    *slot = match kind {
                        // Shifts hold what they shift by, not pool slots:
                        // nothing to derive per call.
                        Kind::Shifts => {
                            let bits = match d.b {
                                Some(b) => Some(log(b)?),
                                None => None,
                            };
                            Shifts::new(log(d.a)?, bits, log(d.scale)?)?.0
                        }
                        Kind::Divides => [
                            constant(d.a)?,
                            constant(d.b.unwrap_or(0))?,
                            constant(d.scale)?,
                        ],
                    };
                }
                Some(slots)
            };
        // Unused outputs and checks are never read: the zeros of EMPTY.
        for (d, g) in outputs.iter().enumerate() {
            c.outputs[d] = slots(g, &mut constant)?;
        }
        for (i, (g, bound)) in checks.iter().enumerate() {
            c.checks[i] = slots(g, &mut constant)?;
            c.bounds[i] = constant(*bound)?;
        }
        c.live_checks = u8::try_from(checks.len()).ok()?;
        Some(c)
    }

    /// Writes the index at `offset` (below storage) into `index` (at most
    /// [`MAX_DIMS`] entries), the constants in `pool`; `false` for
    /// padding, when `index` holds unspecified values.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_of(&self, pool: &Pool, offset: usize, index: Entries<'_>) -> bool {
        let constant = |slot: u8| constant(pool, slot);
        let bound = |c: usize| to_usize(constant(self.bounds[c]).value);
        match self.kind {
            Kind::Shifts => self.eval::<false>(offset, index, bound, |t, x| Shifts(t).eval(x)),
            Kind::Divides => self.eval::<true>(offset, index, bound, |t, x| {
                let [a, b, scale] = t.map(constant);
                let q = divide_branch_free(x as u64, a.magic, a.shift());
                let digit =
                    q.wrapping_sub(divide_branch_free(q, b.magic, b.shift()).wrapping_mul(b.value));
                to_usize(digit).wrapping_mul(to_usize(scale.value))
            }),
        }
    }

    /// [`index_of`](Self::index_of) with `term` and the checks' `bound`;
    /// with `FOUR`, groups of four slots. Outputs and checks are unrolled:
    /// each costs a test the caller's loop predicts.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn eval<const FOUR: bool>(
        &self,
        x: usize,
        index: Entries<'_>,
        bound: impl Fn(usize) -> usize,
        term: impl Fn(Slot, usize) -> usize,
    ) -> bool {
        // The macros below list every output and check.
        const _: () = assert!(MAX_DIMS == 8 && PER_DIM == 4 && MAX_CHECKS == 4);
        let group = |[t0, t1, t2, t3]: [Slot; PER_DIM]| {
            let three = term(t0, x)
                .wrapping_add(term(t1, x))
                .wrapping_add(term(t2, x));
            if FOUR {
                three.wrapping_add(term(t3, x))
            } else {
                three
            }
        };
        index.store(|d| group(self.outputs[d]));
        let live = self.live_checks;
        macro_rules! checks {
            ($($c:literal)*) => {$(
                if live > $c && group(self.checks[$c]) >= bound($c) {
                    return false;
                }
            )*};
        }
        checks!(0 1 2 3);
        true
    }

    /// Whether the terms read as shifts.
    #[cfg(test)]
    pub(crate) fn shifts(&self) -> bool {
        self.kind == Kind::Shifts
    }
}
