//! The offset as a closed form: `Σ ((x / a) % b) * c`, with `x` an input
//! or a sum of inputs times constants, and the division and remainder done
//! by multiplication with precomputed reciprocals.
//!
//! Tiling only ever splits a value into quotient and remainder by a tile
//! extent and sums the pieces with strides, so an offset program unfolds
//! into such terms: `(i / 8) * 8192 + ((i / 2) % 4) * 256 + ...`. Evaluating
//! the terms needs no table of intermediate values and no dispatch on step
//! kinds, which is most of an interpreter's cost. Programs that do not
//! unfold (a `*` combine under a second tiling level), and layouts with
//! values past 2^32, where the reciprocals are not exact, keep the
//! interpreted form of [`Code`](crate::code::Code).

use crate::fixed::Fixed;
use crate::program::{OffsetProgram, Op, Program, StepId};
use crate::raw::{Reader, Writer};

/// The most terms a closed form holds.
const MAX_TERMS: usize = 16;
/// The most `input * weight` parts of the sums the terms divide.
const MAX_PARTS: usize = 16;
/// The most sums.
const MAX_SUMS: usize = 8;
/// Every value the closed form divides is below this, so the reciprocals are exact.
const LIMIT: u64 = 1 << 32;

/// One term, `((x / a) % b) * scale`.
///
/// With every `a` and `b` a power of two, `div` is `log2(a)` and `rem` is
/// `b - 1`: the term is `((x >> div) & rem) * scale`. Otherwise `div` is
/// `ceil(2^64 / a) - 1` and `rem` is `ceil(2^64 / b)`; `b` of 2^32 stands for
/// no remainder (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: exact for dividends and divisors up to 2^32).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Term {
    /// The input (or, with sums, the sum) divided.
    source: u8,
    div: u64,
    rem: u64,
    modulus: u64,
    scale: usize,
}

impl Term {
    const ZERO: Term = Term {
        source: 0,
        div: 0,
        rem: 0,
        modulus: 0,
        scale: 0,
    };
}

/// `sum[sum] += input[input] * weight`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Part {
    sum: u8,
    input: u8,
    weight: usize,
}

impl Part {
    const ZERO: Part = Part {
        sum: 0,
        input: 0,
        weight: 0,
    };
}

/// The closed form of one offset program; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Closed {
    terms: Fixed<Term, MAX_TERMS>,
    /// Empty when every term divides an input itself.
    parts: Fixed<Part, MAX_PARTS>,
    shifts: bool,
}

/// What a term divides: one input, or a sum of inputs times weights.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    Input(u8),
    Sum(Fixed<(u8, usize), MAX_PARTS>),
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
    dims: &'a [usize],
    raw: Fixed<Raw, MAX_TERMS>,
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

    /// One past the largest value of `source` for in-range inputs.
    fn range(&self, source: &Source) -> Option<u64> {
        let dim = |n: u8| -> Option<u64> { u64::try_from(*self.dims.get(usize::from(n))?).ok() };
        match source {
            Source::Input(n) => dim(*n),
            Source::Sum(parts) => parts.iter().try_fold(1u64, |acc, &(n, w)| {
                let top = dim(n)?
                    .checked_sub(1)?
                    .checked_mul(u64::try_from(w).ok()?)?;
                acc.checked_add(top)
            }),
        }
    }
}

impl Closed {
    pub(crate) fn write(&self, w: Writer) {
        w(self.terms.len() as u64);
        for t in self.terms.iter() {
            for word in [u64::from(t.source), t.div, t.rem, t.modulus, t.scale as u64] {
                w(word);
            }
        }
        w(self.parts.len() as u64);
        for p in self.parts.iter() {
            for word in [u64::from(p.sum), u64::from(p.input), p.weight as u64] {
                w(word);
            }
        }
        w(u64::from(self.shifts));
    }

    pub(crate) const fn read(r: &mut Reader) -> Closed {
        let mut terms = Fixed::new(Term::ZERO);
        let mut n = r.usize();
        while n > 0 {
            let (source, div, rem, modulus, scale) =
                (r.u8(), r.word(), r.word(), r.word(), r.usize());
            terms = terms.with(Term {
                source,
                div,
                rem,
                modulus,
                scale,
            });
            n -= 1;
        }
        let mut parts = Fixed::new(Part::ZERO);
        let mut n = r.usize();
        while n > 0 {
            let (sum, input, weight) = (r.u8(), r.u8(), r.usize());
            parts = parts.with(Part { sum, input, weight });
            n -= 1;
        }
        Closed {
            terms,
            parts,
            shifts: r.bool(),
        }
    }

    /// The closed form of `program` over inputs below `dims`, or `None` if
    /// it has none within the capacities above.
    pub(crate) fn new(program: &OffsetProgram, dims: &[usize]) -> Option<Closed> {
        let mut u = Unfolder {
            program: program.program(),
            dims,
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
        let small = |n: usize| u64::try_from(n).ok().filter(|&n| n <= LIMIT);
        let shifts = u
            .raw
            .iter()
            .all(|r| r.a.is_power_of_two() && r.b.is_none_or(usize::is_power_of_two));
        let direct = u.raw.iter().all(|r| matches!(r.source, Source::Input(_)));
        let mut sums: Fixed<Fixed<(u8, usize), MAX_PARTS>, MAX_SUMS> =
            Fixed::new(Fixed::new((0, 0)));
        let mut parts = Fixed::new(Part::ZERO);
        let mut terms = Fixed::new(Term::ZERO);
        for r in u.raw.iter() {
            if u.range(&r.source)? > LIMIT {
                return None;
            }
            let (a, b) = (small(r.a)?, small(r.b.unwrap_or(1 << 32))?);
            let source = if direct {
                match r.source {
                    Source::Input(n) => n,
                    Source::Sum(_) => return None,
                }
            } else {
                let mine = match r.source {
                    Source::Input(n) => Fixed::from_slice(&[(n, 1)], (0, 0))?,
                    Source::Sum(p) => p,
                };
                let i = match sums.iter().position(|s| *s == mine) {
                    Some(i) => i,
                    None => {
                        sums.push(mine)?;
                        let i = sums.len() - 1;
                        for &(input, weight) in mine.iter() {
                            parts.push(Part {
                                sum: u8::try_from(i).ok()?,
                                input,
                                weight,
                            })?;
                        }
                        i
                    }
                };
                u8::try_from(i).ok()?
            };
            let term = if shifts {
                Term {
                    source,
                    div: u64::from(a.trailing_zeros()),
                    rem: b - 1,
                    modulus: b,
                    scale: r.scale,
                }
            } else {
                Term {
                    source,
                    div: u64::MAX / a,
                    // b >= 2, so this is at most 2^63.
                    rem: u64::MAX / b + 1,
                    modulus: b,
                    scale: r.scale,
                }
            };
            terms.push(term)?;
        }
        Some(Closed {
            terms,
            parts,
            shifts,
        })
    }

    /// The offset of `index`: exact for in-range indices, unspecified but
    /// never a panic for others.
    #[inline]
    pub(crate) fn offset(&self, index: &[usize]) -> usize {
        if self.parts.is_empty() {
            self.sum(index)
        } else {
            let mut sums = [0usize; MAX_SUMS];
            for p in self.parts.iter() {
                let i = index.get(usize::from(p.input)).copied().unwrap_or(0);
                if let Some(s) = sums.get_mut(usize::from(p.sum)) {
                    *s = s.wrapping_add(i.wrapping_mul(p.weight));
                }
            }
            self.sum(&sums)
        }
    }

    // Sources are below 2^32 for in-range inputs, and results fit `usize`;
    // out of range, truncation only makes an unspecified offset.
    #[allow(clippy::cast_possible_truncation)]
    #[inline]
    fn sum(&self, x: &[usize]) -> usize {
        let value = |t: &Term| x.get(usize::from(t.source)).copied().unwrap_or(0) as u64;
        if self.shifts {
            self.terms.iter().fold(0usize, |acc, t| {
                // `div` is below 64 in any layout this crate built.
                let digit = value(t).wrapping_shr(t.div as u32) & t.rem;
                acc.wrapping_add((digit as usize).wrapping_mul(t.scale))
            })
        } else {
            self.terms.iter().fold(0usize, |acc, t| {
                let x = u128::from(value(t));
                let q = ((x * u128::from(t.div) + x) >> 64) as u64;
                let low = t.rem.wrapping_mul(q);
                let digit = ((u128::from(low) * u128::from(t.modulus)) >> 64) as usize;
                acc.wrapping_add(digit.wrapping_mul(t.scale))
            })
        }
    }
}
