//! The offset written the way a careful person writes it: as a linear form
//! over the values the machine computes anyway (inputs, quotients,
//! power-of-two remainders), summed by Horner's rule.
//!
//! - A remainder by a non-power-of-two `t` is `x - t*(x/t)`: the quotient is
//!   computed for it anyway, so the remainder's multiply and subtract go.
//! - Of a power-of-two quotient and remainder that are both terms, one goes:
//!   `a*(x>>s) + b*(x&m)` is `b*x + (a - b*t)*(x>>s)` or
//!   `(a/t)*x + (b - a/t)*(x&m)`, where that brings in no multiply by a
//!   constant other than a power of two.
//! - Common factors that are not powers of two are taken out
//!   (`30i + 6j + k = k + 6(j + 5i)`), small `lea`s on x86; powers of two
//!   stay with each term, where LLVM merges shifts with masks.
//! - Values read more than once are written first, the others where they
//!   are read, and the sum is one chain, grouped by dim with dim 0 first
//!   (so the part a loop nest's inner loops leave unchanged is a prefix
//!   LLVM hoists), smallest coefficients first within that: LLVM's
//!   schedule, and so its register use, follows the order of the steps.
//!
//! Every rewrite is an identity for all inputs in wrapping arithmetic, so
//! the offsets equal the folded program's everywhere, in range or not.

use std::cell::Cell;

use layout_runtime::program::{OffsetProgram, Op, StepId};

use crate::tokens::{Arg, Steps};

/// `Σ coefficient * value(step)` over `steps` (the program's, plus quotients
/// added for remainders), terms in order of first appearance.
struct LinearForm {
    steps: Vec<Op>,
    terms: Vec<(StepId, i128)>,
}

/// The steps of `offset` for `p` into `out`, and the offset's number;
/// `None` if a coefficient does not fit (the caller then writes the folded
/// terms as they are) or the steps pass the runtime's limit.
pub(crate) fn offset_steps(p: &OffsetProgram, out: &mut Steps) -> Option<Arg> {
    let form = linear_form(p)?;
    let printer = Printer::new(&form);
    // Values read more than once first, in order, as `let`s would be.
    for i in (0..form.steps.len()).filter(|&i| printer.named(i)) {
        printer.expr(out, StepId::try_from(i).ok()?)?;
    }
    chain(out, None, &form.terms, &printer)
}

struct Builder {
    steps: Vec<Op>,
    /// Whether each step is the argument of a division or remainder: its
    /// value is computed anyway, so it is a value of its own.
    divided: Vec<bool>,
    /// Whether each step is the argument of another step.
    read: Vec<bool>,
    terms: Vec<(StepId, i128)>,
}

impl Builder {
    fn add(&mut self, step: StepId, coefficient: i128) -> Option<()> {
        match self.terms.iter_mut().find(|(s, _)| *s == step) {
            Some((_, c)) => *c = c.checked_add(coefficient)?,
            None => self.terms.push((step, coefficient)),
        }
        Some(())
    }

    fn coefficient(&self, step: StepId) -> i128 {
        self.terms
            .iter()
            .find(|(s, _)| *s == step)
            .map_or(0, |&(_, c)| c)
    }

    fn step(&mut self, op: Op) -> Option<StepId> {
        let i = self.steps.iter().position(|s| *s == op).unwrap_or_else(|| {
            self.steps.push(op);
            self.divided.push(false);
            self.read.push(false);
            self.steps.len() - 1
        });
        StepId::try_from(i).ok()
    }

    /// Adds `coefficient * value(step)`, expanding the sums and products
    /// that nothing else needs.
    fn expand(&mut self, step: StepId, coefficient: i128) -> Option<()> {
        let own_value = self.divided[usize::from(step)];
        match self.steps[usize::from(step)] {
            Op::Mul(a, k) if !own_value => {
                self.expand(a, coefficient.checked_mul(i128::try_from(k).ok()?)?)
            }
            Op::Add(a, b) if !own_value => {
                self.expand(a, coefficient)?;
                self.expand(b, coefficient)
            }
            Op::Mod(a, k) if !k.is_power_of_two() => {
                let q = self.step(Op::Div(a, k))?;
                self.add(a, coefficient)?;
                let k = i128::try_from(k).ok()?;
                self.add(q, coefficient.checked_mul(k)?.checked_neg()?)
            }
            _ => self.add(step, coefficient),
        }
    }
}

fn linear_form(program: &OffsetProgram) -> Option<LinearForm> {
    let steps = program.program().steps().to_vec();
    let mut form = Builder {
        divided: vec![false; steps.len()],
        read: vec![false; steps.len()],
        steps,
        terms: Vec::new(),
    };
    for i in 0..form.steps.len() {
        match form.steps[i] {
            Op::Div(a, _) | Op::Mod(a, _) => {
                form.divided[usize::from(a)] = true;
                form.read[usize::from(a)] = true;
            }
            Op::Mul(a, _) => form.read[usize::from(a)] = true,
            Op::Add(a, b) => {
                form.read[usize::from(a)] = true;
                form.read[usize::from(b)] = true;
            }
            Op::Input(_) => {}
        }
    }
    for t in program.terms() {
        form.expand(t.step, i128::try_from(t.scale).ok()?)?;
    }
    // Power-of-two remainders whose quotient is a term too: one of the pair
    // can go, if no multiply by a constant other than a power of two comes
    // in (those cost most in vectorized loops: x86 has no 64-bit vector
    // multiply before AVX-512).
    let pow2 = |c: i128| c == 0 || c.unsigned_abs().is_power_of_two();
    for rem in 0..form.steps.len() {
        let Op::Mod(x, t) = form.steps[rem] else {
            continue;
        };
        let Some(quot) = form.steps.iter().position(|s| *s == Op::Div(x, t)) else {
            continue;
        };
        let (rem, quot) = (StepId::try_from(rem).ok()?, StepId::try_from(quot).ok()?);
        let (b, a) = (form.coefficient(rem), form.coefficient(quot));
        let t = i128::try_from(t).ok()?;
        if form.read[usize::from(rem)] || a == 0 || b == 0 {
            continue;
        }
        let rest = a.checked_sub(b.checked_mul(t)?)?;
        if !pow2(a) || pow2(rest) {
            // a*(x/t) + b*(x%t) = b*x + (a - b*t)*(x/t)
            form.terms.retain(|&(s, _)| s != rem);
            form.add(x, b)?;
            form.add(quot, rest - a)?;
        } else if a % t == 0 && pow2(a / t) && pow2(b - a / t) {
            // a*(x/t) + b*(x%t) = (a/t)*x + (b - a/t)*(x%t)
            form.terms.retain(|&(s, _)| s != quot);
            form.add(x, a / t)?;
            form.add(rem, -(a / t))?;
        }
    }
    form.terms.retain(|&(_, c)| c != 0);
    // Terms grouped by dim, dim 0 first: a loop nest over the logical index
    // (how kernels and iterators walk an array) runs the later dims inside,
    // so the sum of the outer dims' terms is a prefix of the chain that the
    // inner loops leave unchanged, and LLVM hoists it. Ordered by stride
    // instead, the chain mixes dims, and a gather through the offset of a
    // bf16 `(8,128)(2,1)` layout ran 1.3x the hand-written one. A term of
    // combined dims goes with the last dim it reads.
    let mut last_dim = vec![0u8; form.steps.len()];
    for i in 0..form.steps.len() {
        last_dim[i] = match form.steps[i] {
            Op::Input(n) => n,
            Op::Div(a, _) | Op::Mod(a, _) | Op::Mul(a, _) => last_dim[usize::from(a)],
            Op::Add(a, b) => last_dim[usize::from(a)].max(last_dim[usize::from(b)]),
        };
    }
    form.terms.sort_by_key(|&(s, _)| last_dim[usize::from(s)]);
    if form
        .terms
        .iter()
        .any(|&(_, c)| usize::try_from(c.unsigned_abs()).is_err())
    {
        return None;
    }
    Some(LinearForm {
        steps: form.steps,
        terms: form.terms,
    })
}

/// Prints steps: a step read once is written inline where it is read; a
/// step read more often gets a `let`.
struct Printer<'a> {
    ops: &'a [Op],
    reads: Vec<usize>,
    /// Each step's number in the output once written, so a step read
    /// again is not walked again.
    written: Vec<Cell<Option<Arg>>>,
}

impl<'a> Printer<'a> {
    fn new(form: &'a LinearForm) -> Self {
        let mut reads = vec![0usize; form.steps.len()];
        for &(s, _) in &form.terms {
            reads[usize::from(s)] += 1;
        }
        for i in (0..form.steps.len()).rev() {
            if reads[i] > 0 {
                match form.steps[i] {
                    Op::Input(_) => {}
                    Op::Div(a, _) | Op::Mod(a, _) | Op::Mul(a, _) => reads[usize::from(a)] += 1,
                    Op::Add(a, b) => {
                        reads[usize::from(a)] += 1;
                        reads[usize::from(b)] += 1;
                    }
                }
            }
        }
        Printer {
            ops: &form.steps,
            reads,
            written: vec![Cell::new(None); form.steps.len()],
        }
    }

    /// Whether step `i` is written before the sum, as a `let` would be.
    fn named(&self, i: usize) -> bool {
        self.reads[i] > 1 && !matches!(self.ops[i], Op::Input(_))
    }

    /// Step `s`'s number in `out`, written with its arguments if new.
    fn expr(&self, out: &mut Steps, s: StepId) -> Option<Arg> {
        let written = self.written.get(usize::from(s))?;
        if let Some(n) = written.get() {
            return Some(n);
        }
        let n = out.op(*self.ops.get(usize::from(s))?, &mut |out, a| {
            self.expr(out, a)
        })?;
        written.set(Some(n));
        Some(n)
    }
}

/// Adds `Σ coefficient * value` to `acc` by Horner's rule; see the module
/// docs. The sum's number in `out`.
fn chain(
    out: &mut Steps,
    mut acc: Option<Arg>,
    terms: &[(StepId, i128)],
    printer: &Printer<'_>,
) -> Option<Arg> {
    let push = |out: &mut Steps, acc: Option<Arg>, term: Arg, negative: bool| match (acc, negative)
    {
        (None, false) => Some(term),
        (None, true) => out.neg(term),
        (Some(acc), false) => out.add(acc, term),
        (Some(acc), true) => out.sub(acc, term),
    };
    let factor = |terms: &[(StepId, i128)]| {
        let g = terms
            .iter()
            .fold(0u128, |g, &(_, c)| gcd(g, c.unsigned_abs()));
        (g > 1 && !g.is_power_of_two()).then_some(g)
    };
    if let Some(g) = factor(terms) {
        let inner: Vec<(StepId, i128)> = terms
            .iter()
            .map(|&(s, c)| (s, c / i128::try_from(g).unwrap_or(1)))
            .collect();
        let factored = chain(out, None, &inner, printer)?;
        let term = out.scaled(factored, usize::try_from(g).ok()?)?;
        return push(out, acc, term, false);
    }
    // Only powers of two: the fields in order, most significant first.
    // Otherwise the smallest coefficients first, then the rest, factored if
    // they share a factor.
    let smallest = terms.iter().map(|&(_, c)| c.unsigned_abs()).min()?;
    let (first, rest): (Vec<_>, Vec<_>) = if terms
        .iter()
        .all(|&(_, c)| c.unsigned_abs().is_power_of_two())
    {
        (terms.to_vec(), Vec::new())
    } else {
        terms
            .iter()
            .partition(|&&(_, c)| c.unsigned_abs() == smallest)
    };
    let factored_rest = factor(&rest).is_some();
    let now: Vec<(StepId, i128)> = if factored_rest {
        first.clone()
    } else {
        first.iter().chain(&rest).copied().collect()
    };
    for &(s, c) in &now {
        let value = printer.expr(out, s)?;
        let term = out.scaled(value, usize::try_from(c.unsigned_abs()).ok()?)?;
        acc = Some(push(out, acc, term, c < 0)?);
    }
    if factored_rest {
        chain(out, acc, &rest, printer)
    } else {
        acc
    }
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
