//! The offset as a closed form: `Σ ((x / a) % b) * c`, with `x` an input
//! or a sum of inputs times constants, and the division and remainder done
//! by multiplication with precomputed reciprocals (see
//! [`divide`](crate::algebra::divide)).
//!
//! Tiling only ever splits a value into quotient and remainder by a tile
//! extent and sums the pieces with strides, so an offset program unfolds
//! into such terms: `(i / 8) * 8192 + ((i / 2) % 4) * 256 + ...`. Evaluating
//! the terms needs no table of intermediate values and no dispatch on step
//! kinds, which is most of an interpreter's cost. Every rewrite below is an
//! identity for all inputs in wrapping arithmetic, as the generated code's
//! are, so the two agree on every index, out-of-range ones included.
//! Programs that do not unfold (a `*` combine under a second tiling level)
//! keep the interpreted form of [`Code`](crate::eval::code::Code).
//!
//! `Layout::offset` is inlined into its callers down to the evaluators here,
//! so the shape of the data decides what a caller's loop can do with it:
//! terms sit in fixed-size groups per input (and per sum), the groups and
//! their slots are unrolled, and there are two evaluators, one of shifts and
//! masks and one of a linear part and reciprocals. A loop that calls
//! `offset` then tests the kind once, outside the loop, keeps the terms of
//! its outer indices out of the inner loop, and with shifts vectorizes the
//! rest, as it does with `layout!`'s code. Every test a loop cannot move out
//! costs: hence one test per empty dim's group of divisions and none per
//! slot; and every slot evaluated costs a division whether it holds a term
//! or not: hence the fewest slots that hold the tilings met (two a dim, one
//! a sum, the rest of a layout's terms spilling into spare sums).
//!
//! [`digits`] unfolds inverse programs the same way, and [`ClosedInverse`]
//! holds the result for `index_of`: the same terms and evaluators, a group
//! per output and per padding check.

use crate::algebra::divide::Divisor;
use crate::eval::program::{OffsetProgram, Op, Program, StepId};
use crate::fixed::Fixed;

mod inverse;

pub(crate) use inverse::{constant, ClosedInverse, Entries, Pool, Stage, MAX_CHECKS};

/// The most terms a closed form holds, slot 0 (always 0) included.
pub(crate) const POOL: usize = 16;
/// The most `input * weight` parts of the sums the terms divide.
const MAX_PARTS: usize = 16;
/// The most dims a closed form reads: the rank of every layout with one.
pub(crate) const MAX_DIMS: usize = 8;
/// The most terms of one dim, or of one sum.
pub(crate) const PER_DIM: usize = 4;
/// The most sums.
pub(crate) const MAX_SUMS: usize = 2;
/// The most terms of one dim in [`Kind::Shifts`]; `Closed::group` reads
/// that many slots for shifts.
pub(super) const SHIFT_SLOTS: usize = 3;
const _: () = assert!(SHIFT_SLOTS == 3 && SHIFT_SLOTS < PER_DIM);
/// The most quotients of one dim in [`Kind::Divides`], and of one sum:
/// its terms that divide by 1 go to the linear part. Two per dim hold
/// every one- and two-level tiling's quotients (`i / 8` and `i / 2` of a
/// `(8,128)(2,1)` tile under an untiled batch dim), one per sum a `*`
/// combine's tile; a layout with more is interpreted.
const DIVIDE_SLOTS: usize = 2;
const SUM_SLOTS: usize = 1;
const _: () = assert!(DIVIDE_SLOTS == 2 && SUM_SLOTS == 1);
// `write` packs the groups' slots two to a word.
const _: () = assert!(PER_DIM == 4 && (MAX_DIMS + MAX_SUMS) % 2 == 0);

/// One term, read as [`Kind`] says.
///
/// In [`Kind::Shifts`] the term is `((x >> a_shift) & b) << scale`, `b`
/// all ones for no remainder and `scale` the logarithm of the scale.
/// Otherwise it is `(x / a) * scale`, `a_magic` and `a_shift` those of
/// `a`'s [`Divisor`], and `b` is 0: a remainder is written as quotients,
/// `((x / a) % b) * c = (x / a) * c - (x / (a b)) * (b c)`, so that a term
/// costs one division, not two, and quotients by the same divisor merge
/// (the combining example's `(s / 3) * 6 + (s % 3)` is `(s / 3) * 3 + s`,
/// whose `s` goes to [`Closed`]'s linear part). The all-zero term is 0 in
/// either kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Term {
    pub(crate) a_shift: u8,
    pub(crate) a_magic: u64,
    pub(crate) b: u64,
    pub(crate) scale: u64,
}

impl Term {
    pub(crate) const ZERO: Term = Term {
        a_shift: 0,
        a_magic: 0,
        b: 0,
        scale: 0,
    };

    /// `((x >> a) & b) << scale`.
    // A digit is at most its `usize` source, so it fits a `usize`. Always
    // inlined, as are the evaluators that call it: see the module docs.
    #[allow(clippy::cast_possible_truncation, clippy::inline_always)]
    #[inline(always)]
    fn shifted(&self, x: usize) -> usize {
        let digit = ((x as u64).wrapping_shr(u32::from(self.a_shift)) & self.b) as usize;
        digit.wrapping_shl(self.scale as u32)
    }

    /// `(x / a) * scale` by a reciprocal.
    #[allow(clippy::cast_possible_truncation, clippy::inline_always)]
    #[inline(always)]
    fn divided(&self, x: usize) -> usize {
        let q = divide_branch_free(x as u64, self.a_magic, u32::from(self.a_shift));
        (q as usize).wrapping_mul(self.scale as usize)
    }
}

/// [`divide`] as a choice between both quotients rather than a branch: a
/// value the compiler may compute ahead, out of a caller's loop.
#[allow(clippy::cast_possible_truncation, clippy::inline_always)]
#[inline(always)]
pub(super) fn divide_branch_free(x: u64, magic: u64, shift: u32) -> u64 {
    let q = ((u128::from(magic) * u128::from(x)) >> 64) as u64;
    let t = (x.wrapping_sub(q) >> 1).wrapping_add(q);
    let n = if magic == 0 { x } else { t };
    n.wrapping_shr(shift)
}

/// How the terms of a closed form read, fixed per layout so that a caller's
/// loop runs one straight evaluator.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Kind {
    /// Every divisor and scale a power of two, and no sums: shifts and
    /// masks only.
    Shifts,
    /// Anything else: multiplications by reciprocals, shifts for powers of
    /// two.
    Divides,
}

/// Whether any dim's group holds a term (slots fill from the first).
pub(crate) const fn any_dims(dims: &[[u8; PER_DIM]; MAX_DIMS]) -> bool {
    let mut d = 0;
    while d < MAX_DIMS {
        if dims[d][0] != 0 {
            return true;
        }
        d += 1;
    }
    false
}

/// The closed form of one offset program; see the module docs.
///
/// Terms are grouped by what they divide, in fixed-size groups of pool
/// slots: `dims[d]` for the terms of input `d`, `sums[s]` for those of the
/// sum `Σ index[d] * weights[s][d]`, unused slots naming the zero term.
/// Evaluating every slot, with no count to test, lets a caller's loop keep
/// the terms of its outer indices out of the inner loop. With divisions,
/// the terms that divide by 1 are one linear part, `Σ index[d] *
/// linear[d]`, and the groups hold quotients only: every slot evaluated is
/// a division, and the fewer slots, the less each call does (an untiled
/// row-major layout is its linear part alone).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Closed {
    pub(crate) kind: Kind,
    pub(crate) pool: [Term; POOL],
    pub(crate) dims: [[u8; PER_DIM]; MAX_DIMS],
    /// False when no term divides a sum.
    pub(crate) has_sums: bool,
    /// False when every dim's group is empty ([`any_dims`]): not written,
    /// kept for `offset` to pick its arm without reading eight groups.
    pub(crate) has_dims: bool,
    pub(crate) weights: [[usize; MAX_DIMS]; MAX_SUMS],
    pub(crate) sums: [[u8; PER_DIM]; MAX_SUMS],
    /// [`Kind::Divides`] only: the terms that divide by 1, as a weight per
    /// input.
    pub(crate) linear: [usize; MAX_DIMS],
}

/// What a term divides: one input, or a sum of inputs times weights.
// Only ever built while folding, on the stack.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, PartialEq)]
enum Source {
    Input(u8),
    Sum(Fixed<(u8, usize), MAX_PARTS>),
}

impl Source {
    /// The inputs and weights of the sum it is (one input: itself alone).
    fn parts(&self) -> Option<Fixed<(u8, usize), MAX_PARTS>> {
        match *self {
            Source::Input(n) => {
                let mut one = Fixed::new((0, 0));
                one.push((n, 1))?;
                Some(one)
            }
            Source::Sum(parts) => Some(parts),
        }
    }
}

/// A term before its reciprocals: `((source / a) % b) * scale`, `b` `None`
/// for no remainder.
#[derive(Clone, Copy)]
struct Raw {
    source: Source,
    a: usize,
    b: Option<usize>,
    scale: usize,
}

struct Unfolder<'a> {
    program: &'a Program,
    raw: Fixed<Raw, POOL>,
}

impl Unfolder<'_> {
    fn op(&self, step: StepId) -> Option<Op> {
        self.program.steps().get(usize::from(step)).copied()
    }

    /// Adds `coefficient * value(step)` as terms.
    fn expand(&mut self, step: StepId, coefficient: usize) -> Option<()> {
        match self.op(step)? {
            Op::Mul(x, k) => self.expand(x, coefficient.checked_mul(k)?),
            Op::Add(x, y) => {
                self.expand(x, coefficient)?;
                self.expand(y, coefficient)
            }
            Op::Input(n) => self.push(Source::Input(n), 1, None, coefficient),
            Op::Div(..) | Op::Mod(..) => {
                let (source, a, b) = self.digit(step)?;
                self.push(source, a, b, coefficient)
            }
        }
    }

    #[allow(clippy::large_types_passed_by_value)]
    fn push(&mut self, source: Source, a: usize, b: Option<usize>, scale: usize) -> Option<()> {
        if b == Some(1) {
            return Some(()); // always 0
        }
        self.raw.push(Raw {
            source,
            a,
            b,
            scale,
        })
    }

    /// `value(step)` as `(source / a) % b`.
    // Names follow SPEC.md's algebra, as in `simplify`.
    #[allow(clippy::many_single_char_names)]
    fn digit(&self, step: StepId) -> Option<(Source, usize, Option<usize>)> {
        if let Some(sum) = self.sum(step) {
            return Some((sum, 1, None));
        }
        match self.op(step)? {
            Op::Div(x, k) => match self.digit(x)? {
                (s, a, None) => Some((s, a.checked_mul(k)?, None)),
                // ((y / a) % b) / k == (y / (a k)) % (b / k) when k divides b.
                (s, a, Some(b)) if b % k == 0 => Some((s, a.checked_mul(k)?, Some(b / k))),
                _ => None,
            },
            Op::Mod(x, k) => match self.digit(x)? {
                (s, a, None) => Some((s, a, Some(k))),
                (s, a, Some(b)) if b % k == 0 => Some((s, a, Some(k))),
                (s, a, Some(b)) if b <= k => Some((s, a, Some(b))),
                _ => None,
            },
            Op::Input(_) | Op::Mul(..) | Op::Add(..) => None,
        }
    }

    /// `value(step)` as a sum of inputs times weights, if it is one.
    fn sum(&self, step: StepId) -> Option<Source> {
        let mut parts = Fixed::new((0, 0));
        self.parts(step, 1, &mut parts)?;
        match *parts {
            [(n, 1)] => Some(Source::Input(n)),
            _ => Some(Source::Sum(parts)),
        }
    }

    fn parts(
        &self,
        step: StepId,
        weight: usize,
        parts: &mut Fixed<(u8, usize), MAX_PARTS>,
    ) -> Option<()> {
        match self.op(step)? {
            Op::Input(n) => match parts.iter_mut().find(|(m, _)| *m == n) {
                Some((_, w)) => {
                    *w = w.checked_add(weight)?;
                    Some(())
                }
                None => parts.push((n, weight)),
            },
            Op::Mul(x, k) => self.parts(x, weight.checked_mul(k)?, parts),
            Op::Add(x, y) => {
                self.parts(x, weight, parts)?;
                self.parts(y, weight, parts)
            }
            Op::Div(..) | Op::Mod(..) => None,
        }
    }
}

/// One term of a value of one input: `((input / a) % b) * scale`, `b`
/// `None` for no remainder.
#[derive(Clone, Copy)]
pub(crate) struct Digit {
    pub(crate) a: usize,
    pub(crate) b: Option<usize>,
    pub(crate) scale: usize,
}

/// `value(step)` of a program that reads input 0 only (an inverse program)
/// as a sum of [`Digit`]s of that input, calling `push` for each; `None`
/// if it is no such sum, or `push` refuses one.
pub(crate) fn digits(
    program: &Program,
    step: StepId,
    mut push: impl FnMut(Digit) -> Option<()>,
) -> Option<()> {
    let mut u = Unfolder {
        program,
        raw: Fixed::new(Raw {
            source: Source::Input(0),
            a: 1,
            b: None,
            scale: 0,
        }),
    };
    u.expand(step, 1)?;
    for r in u.raw.iter().filter(|r| r.scale != 0) {
        match r.source {
            Source::Input(0) => push(Digit {
                a: r.a,
                b: r.b,
                scale: r.scale,
            })?,
            _ => return None,
        }
    }
    Some(())
}

impl Closed {
    pub(crate) const EMPTY: Closed = Closed {
        kind: Kind::Shifts,
        pool: [Term::ZERO; POOL],
        dims: [[0; PER_DIM]; MAX_DIMS],
        has_sums: false,
        has_dims: false,
        weights: [[0; MAX_DIMS]; MAX_SUMS],
        sums: [[0; PER_DIM]; MAX_SUMS],
        linear: [0; MAX_DIMS],
    };

    /// The closed form of `program`, or `None` if it has none within the
    /// capacities above.
    pub(crate) fn new(program: &OffsetProgram) -> Option<Closed> {
        let mut u = Unfolder {
            program: program.program(),
            raw: Fixed::new(Raw {
                source: Source::Input(0),
                a: 1,
                b: None,
                scale: 0,
            }),
        };
        for t in program.terms() {
            u.expand(t.step, t.scale)?;
        }
        let powers = u
            .raw
            .iter()
            .all(|r| r.a.is_power_of_two() && r.b.is_none_or(usize::is_power_of_two));
        // Shifts read no sums: one evaluator, as small as it gets, for the
        // layouts that need nothing else.
        // Shifts evaluate three slots a dim: a fourth costs every layout.
        let per_input = |n: u8| {
            u.raw
                .iter()
                .filter(|r| r.scale != 0 && r.source == Source::Input(n))
                .count()
        };
        let kind = if powers
            && u.raw.iter().all(|r| {
                matches!(r.source, Source::Input(n) if per_input(n) <= SHIFT_SLOTS)
                    && (r.scale == 0 || r.scale.is_power_of_two())
            }) {
            Kind::Shifts
        } else {
            Kind::Divides
        };
        let mut c = Closed {
            kind,
            ..Closed::EMPTY
        };
        let mut sums: Fixed<Fixed<(u8, usize), MAX_PARTS>, MAX_SUMS> =
            Fixed::new(Fixed::new((0, 0)));
        let unused = Raw {
            source: Source::Input(0),
            a: 1,
            b: None,
            scale: 0,
        };
        let mut terms: Fixed<Raw, { 2 * POOL }> = Fixed::new(unused);
        for r in u.raw.iter() {
            match (kind, r.b) {
                (Kind::Divides, Some(b)) => {
                    terms.push(Raw { b: None, ..*r })?;
                    // Past `usize`, `x / (a b)` is 0 for every `x`.
                    if let Some(ab) = r.a.checked_mul(b) {
                        let scale = r.scale.wrapping_mul(b).wrapping_neg();
                        terms.push(Raw {
                            a: ab,
                            b: None,
                            scale,
                            ..*r
                        })?;
                    }
                }
                _ => terms.push(*r)?,
            }
        }
        // Quotients of one value by one divisor add up (wrapping, as every
        // term does).
        if kind == Kind::Divides {
            let mut merged: Fixed<Raw, { 2 * POOL }> = Fixed::new(unused);
            for t in terms.iter() {
                match merged
                    .iter_mut()
                    .find(|m| m.source == t.source && m.a == t.a)
                {
                    Some(m) => m.scale = m.scale.wrapping_add(t.scale),
                    None => merged.push(*t)?,
                }
            }
            terms = merged;
        }
        // A term of scale 0 is always 0 and takes no slot; slot 0 is the
        // zero term. With divisions, a quotient by 1 is the linear part's.
        let mut used = 0;
        for r in terms.iter().filter(|r| r.scale != 0) {
            if kind == Kind::Divides && r.a == 1 {
                for &(input, weight) in r.source.parts()?.iter() {
                    let l = c.linear.get_mut(usize::from(input))?;
                    *l = l.wrapping_add(weight.wrapping_mul(r.scale));
                }
                continue;
            }
            used += 1;
            c.place(&mut sums, &r.source, u8::try_from(used).ok()?)?;
            *c.pool.get_mut(used)? = Term::new(kind, r)?;
        }
        c.has_sums = !sums.is_empty();
        c.has_dims = any_dims(&c.dims);
        Some(c)
    }

    /// Puts pool slot `slot` in a group for `source`: its dim's group, or
    /// else a sum's. A dim's quotient past its group's slots (the third
    /// level of a tiling that divides by other than powers of two) goes to
    /// a sum of that input alone, as a sum's past its slots goes to a
    /// second sum of the same parts: the first sum of those parts with
    /// room, or a new one. `None` when there is none.
    fn place(
        &mut self,
        sums: &mut Fixed<Fixed<(u8, usize), MAX_PARTS>, MAX_SUMS>,
        source: &Source,
        slot: u8,
    ) -> Option<()> {
        let free = |group: &mut [u8; PER_DIM], width: usize| {
            let free = group[..width].iter_mut().find(|s| **s == 0)?;
            *free = slot;
            Some(())
        };
        match (self.kind, source) {
            (Kind::Shifts, &Source::Input(n)) => {
                return free(self.dims.get_mut(usize::from(n))?, SHIFT_SLOTS);
            }
            // Shifts read no sums.
            (Kind::Shifts, Source::Sum(_)) => return None,
            (Kind::Divides, &Source::Input(n)) => {
                if free(self.dims.get_mut(usize::from(n))?, DIVIDE_SLOTS).is_some() {
                    return Some(());
                }
            }
            (Kind::Divides, Source::Sum(_)) => {}
        }
        let parts = source.parts()?;
        let room =
            (0..sums.len()).find(|&s| sums[s] == parts && self.sums[s][..SUM_SLOTS].contains(&0));
        let s = if let Some(s) = room {
            s
        } else {
            sums.push(parts)?;
            for &(input, weight) in parts.iter() {
                *self.weights[sums.len() - 1].get_mut(usize::from(input))? = weight;
            }
            sums.len() - 1
        };
        free(&mut self.sums[s], SUM_SLOTS)
    }

    /// Whether the form divides nothing: shifts and masks only, or its
    /// linear part alone (an untiled layout).
    pub(crate) fn divides_nothing(&self) -> bool {
        matches!(self.kind, Kind::Shifts) || !(self.has_dims || self.has_sums)
    }

    /// The offset of `index`: exact for in-range indices, unspecified but
    /// never a panic for others.
    ///
    /// Four arms, each a straight evaluator: a caller's loop that tests
    /// which once, outside the loop, is left with one (the compiler does so
    /// while they are small; larger, it kept the test in the loop and the
    /// shifts no longer vectorized).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn offset(&self, index: &[usize]) -> usize {
        match self.kind {
            Kind::Shifts => self.shifts(index),
            Kind::Divides if self.has_sums => self.divides::<true, true>(index),
            Kind::Divides if self.has_dims => self.divides::<false, true>(index),
            Kind::Divides => self.divides::<false, false>(index),
        }
    }

    /// The sum of every dim's three slots of shifts.
    ///
    /// Dims and slots are unrolled by hand: the index's length is known at
    /// most call sites, so the dims past it drop out, and what remains is
    /// straight code in which the terms of indices a caller's loop does not
    /// change leave that loop. Every term is read before any use, so the
    /// reads leave the loop too. Shifts cost less than a test and keep the
    /// loop free of branches, so it vectorizes.
    // Inlined into `offset`'s arms, or the caller's loop sees a call.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn shifts(&self, index: &[usize]) -> usize {
        self.dims::<SHIFT_SLOTS, false>(index, Term::shifted)
    }

    /// The sum over every dim of `term` over its group's first `WIDTH`
    /// slots, with `SKIP` skipping empty groups.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn dims<const WIDTH: usize, const SKIP: bool>(
        &self,
        index: &[usize],
        term: impl Fn(&Term, usize) -> usize + Copy,
    ) -> usize {
        // The macro below lists every dim.
        const _: () = assert!(MAX_DIMS == 8);
        let mut acc = 0usize;
        macro_rules! dims {
            ($($d:literal)*) => {$(
                if let Some(&x) = index.get($d) {
                    acc = acc.wrapping_add(self.group::<WIDTH, SKIP>(self.dims[$d], x, term));
                }
            )*};
        }
        dims!(0 1 2 3 4 5 6 7);
        acc
    }

    /// The linear part, with `SUMS` every sum's slot of quotients, and with
    /// `DIMS` every dim's two, unrolled as [`shifts`](Self::shifts) is.
    ///
    /// Which parts a layout has picks an arm of [`offset`](Self::offset),
    /// not a test here: behind a test, the compiler no longer carried the
    /// sums from one index to the next as additions (the combining
    /// example's sum of offsets twice as slow), nor took the quotients of
    /// the indices a caller's loop does not change out of it (a 4-D `bf16`
    /// TPU tiling under untiled batch dims five times as slow); evaluated
    /// without one, empty groups cost a layout two divisions each (an
    /// untiled row-major sum four times as slow). Only a layout with both
    /// sums and quotients of dims (few: a `*` combine beside a dim tiled by
    /// other than powers of two) tests each dim's group, after the sums (a
    /// test before them splits the caller's loop in two paths, each with
    /// its own copy of the divisions).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn divides<const SUMS: bool, const DIMS: bool>(&self, index: &[usize]) -> usize {
        // The macro below lists every sum.
        const _: () = assert!(MAX_SUMS == 2);
        let weighted = |weights: &[usize; MAX_DIMS]| {
            index
                .iter()
                .zip(weights)
                .fold(0usize, |sum, (&i, &w)| sum.wrapping_add(i.wrapping_mul(w)))
        };
        let mut acc = weighted(&self.linear);
        macro_rules! sums {
            ($($s:literal)*) => {$(
                let x = weighted(&self.weights[$s]);
                acc = acc.wrapping_add(
                    self.group::<SUM_SLOTS, false>(self.sums[$s], x, Term::divided),
                );
            )*};
        }
        if SUMS {
            sums!(0 1);
        }
        if DIMS {
            acc = acc.wrapping_add(self.dims::<DIVIDE_SLOTS, SUMS>(index, Term::divided));
        }
        acc
    }

    /// The sum of `term` over one group's first `WIDTH` slots; with `SKIP`,
    /// 0 for an empty group without evaluating it.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn group<const WIDTH: usize, const SKIP: bool>(
        &self,
        slots: [u8; PER_DIM],
        x: usize,
        term: impl Fn(&Term, usize) -> usize,
    ) -> usize {
        // Every read first: loop-invariant, it leaves a caller's loop even
        // when the test after it does not.
        let terms: [Term; WIDTH] =
            core::array::from_fn(|k| self.pool[usize::from(slots[k % PER_DIM]) % POOL]);
        // Slots fill from the first: a group without one is empty.
        if SKIP && slots[0] == 0 {
            return 0;
        }
        terms
            .iter()
            .fold(0usize, |acc, t| acc.wrapping_add(term(t, x)))
    }
}

impl Term {
    /// The term of `raw` as `kind` reads it; `None` for a divisor of 0 or
    /// past 64 bits.
    fn new(kind: Kind, raw: &Raw) -> Option<Term> {
        Term::of(kind, raw.a, raw.b, raw.scale)
    }

    /// The term `((x / a) % b) * scale` as `kind` reads it, `b` `None` for
    /// no remainder; `None` for a divisor of 0 or past 64 bits.
    fn of(kind: Kind, a: usize, b: Option<usize>, scale: usize) -> Option<Term> {
        let a = Divisor::new(u64::try_from(a).ok()?)?;
        let b = match b {
            Some(b) => Divisor::new(u64::try_from(b).ok()?)?,
            None => Divisor::NONE,
        };
        let scale = u64::try_from(scale).ok()?;
        // Shifts are below 64.
        #[allow(clippy::cast_possible_truncation)]
        Some(Term {
            a_shift: a.shift() as u8,
            a_magic: a.magic,
            b: match kind {
                // Remainders were rewritten as quotients.
                Kind::Divides => 0,
                Kind::Shifts => b.value.wrapping_sub(1),
            },
            scale: match kind {
                Kind::Shifts => u64::from(scale.trailing_zeros()),
                Kind::Divides => scale,
            },
        })
    }
}

/// A digit `((x / 2^a) % 2^bits) * 2^scale` of a closed inverse as a mask
/// and a rotation, `(x & mask).rotate_right(k)`, the mask the bits
/// `lo..64 - s` of `x` that land in the word: `[lo, s, k]`.
///
/// The mask is derived from the two amounts on use, which a caller's loop
/// does once, outside it: each term in the loop is then an `and` and a
/// rotation. Three shifts, `((x >> a) << l) >> r`, needed no mask but took
/// a move of the amount into `cl` before each shift on x86-64: on the
/// bf16 TPU layout, with this change alone, `Ranked::index_of` went from
/// 2.0 times the generated inverse's time to 1.3 (1.5 with the code beside
/// it in the build as landed), `Layout::index_of` from 5.75 to 5.6.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Shifts([u8; 3]);

impl Shifts {
    /// The term 0: the mask of bit 63 and of bits below 63 is empty.
    const ZERO: Shifts = Shifts([63, 1, 0]);

    /// The digit of `x >> a`, `bits` wide (all of it for `None`; none
    /// for `Some(0)`), times `2^scale` in wrapping arithmetic; `None` for
    /// a digit of `bits` that does not fit a word at its scale.
    fn new(a: u8, bits: Option<u8>, scale: u8) -> Option<Shifts> {
        if a >= 64 || scale >= 64 {
            return None;
        }
        // The digit's bits of `x` start at `a` and land at `scale`:
        // rotated right by `a - scale` (mod 64); the mask keeps those
        // that land in the word, below `hi`.
        let k = (a + 64 - scale) % 64;
        let hi = match bits {
            Some(0) => return Some(Shifts::ZERO),
            // All of `x >> a`, the bits the scale shifts out dropped, as
            // the wrapping multiplication drops them.
            None => 64 - scale.saturating_sub(a),
            Some(bits) if u16::from(bits) + u16::from(scale) > 64 => return None,
            Some(bits) => (a + bits).min(64),
        };
        Some(Shifts([a, 64 - hi, k]))
    }

    /// The term's value at `x`. Amounts read from a table are taken
    /// modulo 64, so any bytes evaluate without a panic.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn eval(self, x: usize) -> usize {
        let [lo, s, k] = self.0.map(u32::from);
        let mask = u64::MAX.wrapping_shl(lo) & u64::MAX.wrapping_shr(s);
        to_usize(((x as u64) & mask).rotate_right(k))
    }
}

/// A quotient, remainder or constant as a `usize`: each fits, being at most
/// a `usize` dividend or a constant that was a `usize`.
#[allow(clippy::cast_possible_truncation, clippy::inline_always)]
#[inline(always)]
pub(super) fn to_usize(v: u64) -> usize {
    v as usize
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;

    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    use crate::MAX_PROGRAM_STEPS;

    /// xorshift64: reproducible, no dependency.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        pub(crate) fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap()
        }
    }

    /// A random spec of rank 1 to 8: any dims, order, and up to two tiling
    /// levels of sizes that are powers of two or not, and `*`.
    pub(crate) fn spec(rng: &mut Rng) -> String {
        let rank = 1 + rng.below(8);
        let dims: Vec<String> = (0..rank).map(|_| (1 + rng.below(12)).to_string()).collect();
        let mut order: Vec<usize> = (0..rank).collect();
        for i in (1..rank).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let order: Vec<String> = order.iter().map(ToString::to_string).collect();
        let mut tiles = String::new();
        for _ in 0..rng.below(3) {
            let n = 1 + rng.below(rank.min(4));
            let t: Vec<String> = (0..n)
                .map(|k| match rng.below(10) {
                    0 if k + 1 < n => "*".into(),
                    1..=4 => (1usize << rng.below(5)).to_string(),
                    _ => (1 + rng.below(9)).to_string(),
                })
                .collect();
            tiles.push('(');
            tiles.push_str(&t.join(","));
            tiles.push(')');
        }
        let tiles = if tiles.is_empty() {
            tiles
        } else {
            format!(":T{tiles}")
        };
        format!("f32[{}]{{{}{tiles}}}", dims.join(","), order.join(","))
    }

    /// The closed form against the folded program, for every index in range
    /// and for indices past the dims, up to `usize::MAX`: the closed form's
    /// rewrites hold in wrapping arithmetic for every input, as the
    /// generated code's do. The stepped evaluation of layouts without a
    /// compact form agrees inside the dims.
    #[test]
    fn closed_forms_equal_the_programs_everywhere() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        // Layouts per arm of `offset`: shifts, the linear part alone, with
        // quotients of dims, with sums.
        let (mut closed, mut kinds, mut stepped) = (0, [0usize; 4], 0);
        for _ in 0..600 {
            let spec = spec(&mut rng);
            let Ok(l) = crate::parse(&spec).map(crate::Layout::with_program_forms) else {
                continue;
            };
            let p = l.offset_program();
            let mut scratch = [0; MAX_PROGRAM_STEPS];
            for position in 0..l.len().min(2000) {
                let index = crate::Index::unravel(position, l.dims());
                let want = p.eval(&index, &mut scratch);
                let direct = crate::algebra::fold::offset_of(
                    l.dims(),
                    l.minor_to_major(),
                    l.tiles(),
                    &index,
                );
                assert_eq!(direct, want, "{spec} at {index:?}");
                assert_eq!(l.offset(&index), want, "{spec} at {index:?}");
                stepped += 1;
            }
            let Some(&c) = l.closed() else { continue };
            closed += 1;
            kinds[match (c.kind, c.has_dims, c.has_sums) {
                (super::Kind::Shifts, ..) => 0,
                (_, false, false) => 1,
                (_, true, false) => 2,
                (_, _, true) => 3,
            }] += 1;
            for _ in 0..200 {
                let index: Vec<usize> = l
                    .dims()
                    .iter()
                    .map(|&d| match rng.below(4) {
                        0 => usize::MAX - rng.below(3),
                        1 => rng.next() as usize,
                        2 => d + rng.below(1000),
                        _ => rng.below(d),
                    })
                    .collect();
                assert_eq!(
                    c.offset(&index),
                    p.eval(&index, &mut scratch),
                    "{spec} at {index:?}"
                );
            }
        }
        assert!(
            closed > 200 && kinds.iter().all(|&k| k > 10) && stepped > 100_000,
            "{closed} {kinds:?} {stepped}"
        );
    }

    /// Every offset's index, by the closed inverse where there is one,
    /// against the folded inverse program, padding and past storage
    /// included; both evaluators of the closed inverse run on layouts of
    /// every rank from 1 to 8, with padding.
    #[test]
    fn closed_inverses_equal_the_programs() {
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        // Per form (ops, shifts, divisions, places): layouts, padding
        // slots met, and the ranks seen as bits.
        let forms = ["ops", "shifts", "divides", "places"];
        let (mut closed, mut padding, mut ranks) = ([0usize; 4], [0usize; 4], [0u32; 4]);
        // Shifts at ranks 7 and 8 take dims of powers of two but the two
        // padded ones: rare among random specs.
        let ranks_7_and_8 = [
            "f32[2,1,4,2,2,6,5]{6,5,4,3,2,1,0:T(8,8)}",
            "f32[3,5,1,8,2,2,4,2]{0,1,2,3,4,5,6,7:T(8,8)}",
        ];
        // Places: `*` combines whose split has no closed form, with
        // padding, `L(n)`, `E(4)`, a dynamic dim, dims in any order.
        let places = [
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "f32[2,7,8,11,10]{0,2,4,1,3:T(*,*,2,*,3)}",
            "f32[5,3,4]{2,1,0:T(*,3,2)}",
            "f32[6,9,5]{0,1,2:T(3,*,5)}",
            "f32[3,5,7]{2,1,0:T(*,4)L(128)}",
            "s4[5,7,3]{2,1,0:T(*,2,3)E(4)}",
            "f32[<=5,7,3]{0,1,2:T(2,*,3)}",
            "f32[3,9,5,7]{3,2,1,0:T(*,*,*,4)}",
            "f32[2,3,9,5,7]{4,3,1,2,0:T(*,*,4)}",
        ];
        let random: Vec<String> = (0..600).map(|_| spec(&mut rng)).collect();
        let fixed = ranks_7_and_8.into_iter().chain(places);
        for spec in random.iter().map(String::as_str).chain(fixed) {
            let Ok(l) = crate::parse(spec).map(crate::Layout::with_program_forms) else {
                continue;
            };
            let inverse = l.inverse_program();
            let form = l.code().map_or("ops", |c| c.form());
            let kind = forms.iter().position(|&f| f == form).unwrap();
            closed[kind] += 1;
            ranks[kind] |= 1 << l.rank();
            let mut scratch = [0; MAX_PROGRAM_STEPS];
            let mut want = [0; crate::MAX_RANK];
            // Reused buffers hold the last index: the closed form must
            // overwrite every entry.
            let mut reused = [7usize; crate::MAX_RANK];
            let storage = l.storage_len();
            let past = [storage, storage.saturating_add(1), usize::MAX];
            for offset in (0..storage.min(2500)).chain(past) {
                let found = offset < storage && inverse.eval(offset, &mut scratch, &mut want);
                padding[kind] += usize::from(offset < storage && !found);
                let got = l.index_of(offset);
                assert_eq!(
                    got.as_deref(),
                    found.then_some(&want[..l.rank()]),
                    "{spec} at {offset}"
                );
                assert_eq!(
                    l.index_into(offset, &mut reused),
                    found,
                    "{spec} at {offset}"
                );
                if found {
                    assert_eq!(reused[..l.rank()], want[..l.rank()], "{spec} at {offset}");
                }
            }
        }
        assert!(closed.iter().all(|&n| n > 20), "{closed:?}");
        assert!(padding.iter().all(|&n| n > 100), "{padding:?}");
        assert!(ranks[1..3].iter().all(|&r| r == 0b1_1111_1110), "{ranks:?}");
    }

    /// Every digit the shifts take, at the edges of the word and past
    /// them, against the digit in wrapping arithmetic.
    #[test]
    fn shifts_equal_the_digits() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let xs: Vec<u64> = [0, 1, u64::MAX, 1 << 63, (1 << 63) - 1]
            .into_iter()
            .chain((0..24).map(|_| rng.next()))
            .collect();
        let mut refused = 0;
        for a in 0..64u8 {
            for bits in (0..=64u8).map(Some).chain([None]) {
                for scale in 0..64u8 {
                    let Some(shifts) = super::Shifts::new(a, bits, scale) else {
                        // Refused only for a digit that does not fit.
                        assert!(bits.is_some_and(|b| b + scale > 64), "{a} {bits:?} {scale}");
                        refused += 1;
                        continue;
                    };
                    for &x in &xs {
                        let digit = match bits {
                            None | Some(64) => x >> a,
                            Some(b) => (x >> a) & ((1 << b) - 1),
                        };
                        assert_eq!(
                            shifts.eval(x as usize) as u64,
                            digit.wrapping_shl(u32::from(scale)),
                            "x {x:#x}, a {a}, bits {bits:?}, scale {scale}"
                        );
                    }
                }
            }
        }
        assert!(refused > 0);
    }

    /// The compact bytes read back equal, and any bytes read without a panic.
    #[test]
    fn bytes_round_trip_and_foreign_bytes_evaluate() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let Ok(l) = crate::parse(&spec(&mut rng)).map(crate::Layout::with_program_forms) else {
                continue;
            };
            if l.closed().is_none() {
                continue;
            }
            let mut bytes = Vec::new();
            l.__bytes(&mut |b| bytes.push(b));
            let back = crate::Layout::__from_bytes(&bytes);
            assert_eq!(back.closed(), l.closed());
            // Noise in place of the closed form's bytes, past the header.
            let header = bytes.len().saturating_sub(400);
            for b in &mut bytes[header..] {
                *b = rng.next().to_le_bytes()[0];
            }
            let foreign = crate::Layout::__from_bytes(&bytes);
            if let Some(c) = foreign.closed() {
                let _ = c.offset(&[usize::MAX, 3, 1 << 40, 0, 7, 9, 11, 12, 13]);
            }
        }
    }
}
