//! How every emitter writes the steps of a folded program: `offset` (by
//! `linear`) and `index_of` (by `emit`) share [`Steps`], so an op is
//! written one way everywhere. Which operator a step becomes comes from the
//! runtime's table of spellings (`Op::spelling`), which the C printer
//! follows too.
//!
//! A program is written as data, an array of the runtime's `Step`s that
//! the shared `Folded` type runs: the compiler's cost of an expansion is
//! per item, and code for each layout would be items of each expansion.

use std::collections::HashMap;
use std::fmt::Write as _;

pub(crate) use layout_runtime::__Arg as Arg;
use layout_runtime::program::{scaling, Operand, Operator, Spelling};
use layout_runtime::{
    __Step as Step,
    program::{Op, StepId},
};

/// A program being written: each step once (a repeated one is the earlier
/// step again, as the compiler would find it), in order.
#[derive(Default)]
pub(crate) struct Steps {
    steps: Vec<Step>,
    seen: HashMap<Step, Arg>,
}

impl Steps {
    /// The number of `step`, appended unless written already; `None` past
    /// the runtime's limit ([`MAX_STEPS`]).
    pub(crate) fn push(&mut self, step: Step) -> Option<Arg> {
        if let Some(&n) = self.seen.get(&step) {
            return Some(n);
        }
        if self.steps.len() >= MAX_STEPS {
            return None;
        }
        let n = Arg::try_from(self.steps.len()).ok()?;
        self.steps.push(step);
        self.seen.insert(step, n);
        Some(n)
    }

    /// Input `n`: entry `n` of the index, or the offset.
    pub(crate) fn input(&mut self, n: u8) -> Option<Arg> {
        self.push(Step::Input(n))
    }

    /// `a <operator> k` for a constant `k`.
    fn constant(&mut self, a: Arg, operator: Operator, k: usize) -> Option<Arg> {
        self.push(Step::constant(a, operator, k)?)
    }

    /// `e * k`, wrapping, as a shift when `k` is a power of two.
    pub(crate) fn scaled(&mut self, e: Arg, k: usize) -> Option<Arg> {
        match scaling(k) {
            None => Some(e),
            Some((operator, k)) => self.constant(e, operator, k),
        }
    }

    /// `a + b`, wrapping.
    pub(crate) fn add(&mut self, a: Arg, b: Arg) -> Option<Arg> {
        self.push(Step::Add(a, b))
    }

    /// `a - b`, wrapping.
    pub(crate) fn sub(&mut self, a: Arg, b: Arg) -> Option<Arg> {
        self.push(Step::Sub(a, b))
    }

    /// `0 - a`, wrapping.
    pub(crate) fn neg(&mut self, a: Arg) -> Option<Arg> {
        self.push(Step::Neg(a))
    }

    /// One op of a folded program, its arguments' numbers from `arg`.
    pub(crate) fn op(
        &mut self,
        op: Op,
        arg: &mut dyn FnMut(&mut Steps, StepId) -> Option<Arg>,
    ) -> Option<Arg> {
        match op.spelling() {
            Spelling::Input(n) => self.input(n),
            Spelling::Same(a) => arg(self, a),
            Spelling::Binary(a, operator, operand) => {
                let a = arg(self, a)?;
                match operand {
                    Operand::Step(b) => {
                        let b = arg(self, b)?;
                        match operator {
                            Operator::Add => self.add(a, b),
                            // The spelling table gives steps as operands
                            // to additions only.
                            _ => None,
                        }
                    }
                    Operand::Constant(k) => self.constant(a, operator, k),
                }
            }
        }
    }

    /// Makes `a` the last step, as the runtime reads a program's result:
    /// if it is not, a step `a << 0` is added (a repeat, too, so not
    /// through [`push`](Self::push)), which the compiler drops.
    pub(crate) fn finish(&mut self, a: Arg) -> Option<()> {
        if usize::from(a) + 1 == self.steps.len() {
            return Some(());
        }
        if self.steps.len() >= MAX_STEPS {
            return None;
        }
        self.steps.push(Step::Shl(a, 0));
        Some(())
    }

    /// The steps as the inside of an array literal, each variant by name
    /// (the expansion imports them): `Input(0), Shl(0, 7)`.
    pub(crate) fn list(&self) -> String {
        let mut out = String::with_capacity(self.steps.len() * 12);
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            // `Step`'s `Debug` is its constructor; writing to a `String`
            // cannot fail.
            let _ = write!(out, "{step:?}");
        }
        out
    }
}

/// The most steps the runtime runs in one program (`Folded`'s limit).
pub(crate) const MAX_STEPS: usize = layout_runtime::__MAX_STEPS;

#[cfg(test)]
mod tests {
    use layout_runtime::program::Op;

    use super::Steps;

    /// The steps `op` becomes, over inputs 0 and 1.
    fn steps(op: Op) -> String {
        let mut s = Steps::default();
        s.op(op, &mut |s, a| s.input(u8::try_from(a).expect("small")))
            .expect("fits");
        s.list()
    }

    #[test]
    fn each_op_is_written_as_its_spelling() {
        assert_eq!(steps(Op::Div(1, 8)), "Input(1), Shr(0, 3)");
        assert_eq!(steps(Op::Div(1, 6)), "Input(1), Div(0, 6)");
        assert_eq!(steps(Op::Mod(1, 8)), "Input(1), And(0, 7)");
        assert_eq!(steps(Op::Mod(1, 6)), "Input(1), Rem(0, 6)");
        assert_eq!(steps(Op::Mul(1, 8)), "Input(1), Shl(0, 3)");
        assert_eq!(steps(Op::Mul(1, 6)), "Input(1), Mul(0, 6)");
        assert_eq!(steps(Op::Mul(1, 1)), "Input(1)");
        assert_eq!(steps(Op::Add(1, 0)), "Input(1), Input(0), Add(0, 1)");
        assert_eq!(steps(Op::Input(2)), "Input(2)");
    }

    #[test]
    fn finish_makes_the_result_the_last_step() {
        let mut s = Steps::default();
        let a = s.input(0).expect("fits");
        let b = s.input(1).expect("fits");
        let sum = s.add(a, b).expect("fits");
        s.finish(sum).expect("fits");
        assert_eq!(s.list(), "Input(0), Input(1), Add(0, 1)");
        // A result written earlier (the sum of one term, or a repeat) is
        // copied to the end, as the runtime reads the last step.
        s.finish(a).expect("fits");
        assert_eq!(s.list(), "Input(0), Input(1), Add(0, 1), Shl(0, 0)");
        s.finish(a).expect("fits");
        assert_eq!(
            s.list(),
            "Input(0), Input(1), Add(0, 1), Shl(0, 0), Shl(0, 0)"
        );
    }

    #[test]
    fn a_step_written_twice_is_the_first() {
        let mut s = Steps::default();
        let a = s.input(0).expect("fits");
        let b = s.scaled(a, 4).expect("fits");
        assert_eq!(s.scaled(a, 4), Some(b));
        assert_eq!(s.scaled(b, 1), Some(b));
        assert_eq!(s.list(), "Input(0), Shl(0, 2)");
    }
}
