//! The offset as a closed form: `Σ ((x / a) % b) * c`, with `x` an input
//! or a sum of inputs times constants, and the division and remainder done
//! by multiplication with precomputed reciprocals (see
//! [`divide`](crate::divide)).
//!
//! Tiling only ever splits a value into quotient and remainder by a tile
//! extent and sums the pieces with strides, so an offset program unfolds
//! into such terms: `(i / 8) * 8192 + ((i / 2) % 4) * 256 + ...`. Evaluating
//! the terms needs no table of intermediate values and no dispatch on step
//! kinds, which is most of an interpreter's cost. Every rewrite below is an
//! identity for all inputs in wrapping arithmetic, as the generated code's
//! are, so the two agree on every index, out-of-range ones included.
//! Programs that do not unfold (a `*` combine under a second tiling level)
//! keep the interpreted form of [`Code`](crate::code::Code).

use crate::divide::{divide, Divisor};
use crate::fixed::Fixed;
use crate::program::{OffsetProgram, Op, Program, StepId};
use crate::raw::{Reader, Writer};

/// The most terms a closed form holds.
const MAX_TERMS: usize = 16;
/// The most `input * weight` parts of the sums the terms divide.
const MAX_PARTS: usize = 16;
/// The most sums.
const MAX_SUMS: usize = 8;

/// One term, `((x / a) % b) * scale`.
///
/// With every `a` and `b` of a layout a power of two, the term is
/// `((x >> a_shift) & b_mask) * scale`, `b_mask` all ones for no remainder.
/// Otherwise `a_magic`, `b_magic` and the shifts are those of
/// [`Divisor`]s for `a` and `b`, `b` 0 for no remainder.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Term {
    /// The input (or, with sums, the sum) divided.
    source: u8,
    a_shift: u8,
    b_shift: u8,
    a_magic: u64,
    b_magic: u64,
    /// `b`, or with shifts `b - 1`.
    b: u64,
    scale: usize,
}

impl Term {
    const ZERO: Term = Term {
        source: 0,
        a_shift: 0,
        b_shift: 0,
        a_magic: 0,
        b_magic: 0,
        b: 0,
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
// Only ever built while folding, on the stack.
#[allow(clippy::large_enum_variant)]
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

impl Closed {
    pub(crate) fn write(&self, w: Writer) {
        w(self.terms.len() as u64);
        for t in self.terms.iter() {
            let shifts = u64::from(t.a_shift) | u64::from(t.b_shift) << 8;
            for word in [
                u64::from(t.source),
                shifts,
                t.a_magic,
                t.b_magic,
                t.b,
                t.scale as u64,
            ] {
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
        let mut n = r.count(MAX_TERMS);
        while n > 0 {
            let (source, shifts) = (r.u8(), r.word());
            let (a_magic, b_magic, b, scale) = (r.word(), r.word(), r.word(), r.usize());
            terms.append(Term {
                source,
                a_shift: (shifts & 63) as u8,
                b_shift: (shifts >> 8 & 63) as u8,
                a_magic,
                b_magic,
                b,
                scale,
            });
            n -= 1;
        }
        let mut parts = Fixed::new(Part::ZERO);
        let mut n = r.count(MAX_PARTS);
        while n > 0 {
            let (sum, input, weight) = (r.u8(), r.u8(), r.usize());
            parts.append(Part { sum, input, weight });
            n -= 1;
        }
        Closed {
            terms,
            parts,
            shifts: r.bool(),
        }
    }

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
            let a = Divisor::new(u64::try_from(r.a).ok()?)?;
            let b = match r.b {
                Some(b) => Divisor::new(u64::try_from(b).ok()?)?,
                None => Divisor::NONE,
            };
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
                let i = if let Some(i) = sums.iter().position(|s| *s == mine) {
                    i
                } else {
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
                };
                u8::try_from(i).ok()?
            };
            // Shifts are below 64.
            #[allow(clippy::cast_possible_truncation)]
            let term = Term {
                source,
                a_shift: a.shift() as u8,
                b_shift: b.shift() as u8,
                a_magic: a.magic,
                b_magic: b.magic,
                b: if shifts {
                    b.value.wrapping_sub(1)
                } else {
                    b.value
                },
                scale: r.scale,
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

    // A digit is at most its `usize` source, so it fits a `usize`.
    #[allow(clippy::cast_possible_truncation)]
    #[inline]
    fn sum(&self, x: &[usize]) -> usize {
        let value = |t: &Term| x.get(usize::from(t.source)).copied().unwrap_or(0) as u64;
        if self.shifts {
            self.terms.iter().fold(0usize, |acc, t| {
                let digit = value(t).wrapping_shr(u32::from(t.a_shift)) & t.b;
                acc.wrapping_add((digit as usize).wrapping_mul(t.scale))
            })
        } else {
            self.terms.iter().fold(0usize, |acc, t| {
                let q = divide(value(t), t.a_magic, u32::from(t.a_shift));
                let digit =
                    q.wrapping_sub(divide(q, t.b_magic, u32::from(t.b_shift)).wrapping_mul(t.b));
                acc.wrapping_add((digit as usize).wrapping_mul(t.scale))
            })
        }
    }
}
