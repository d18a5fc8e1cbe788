//! Building index programs step by step, simplifying as they grow.
//!
//! Every rule here is an identity for all in-range inputs: a step's range
//! (one past its largest value) decides when `x / t` is 0 or `x % t` is `x`,
//! and products and sums of digits are split back into their digits.

use crate::eval::program::{Op, Program, Value};
use crate::spec::error::ErrorKind;
use crate::MAX_PROGRAM_STEPS;

/// Builds steps with simplification; tracks each step's range (one past its
/// largest value when the inputs are in range).
pub(crate) struct Builder {
    pub(crate) program: Program,
    range: [usize; MAX_PROGRAM_STEPS],
}

pub(crate) const TOO_LARGE: ErrorKind = ErrorKind::ProgramTooLarge {
    limit: MAX_PROGRAM_STEPS,
};

// Names follow SPEC.md's algebra: `x` a value, `t` a tile extent, `k` a scale.
#[allow(clippy::many_single_char_names)]
impl Builder {
    pub(crate) fn new() -> Self {
        Builder {
            program: Program::EMPTY,
            range: [0; MAX_PROGRAM_STEPS],
        }
    }

    pub(crate) fn range(&self, v: Value) -> usize {
        v.map_or(1, |s| self.range[usize::from(s)])
    }

    fn op(&self, v: Value) -> Option<Op> {
        v.map(|s| self.program.get(s))
    }

    pub(crate) fn push(&mut self, op: Op, range: usize) -> Result<Value, ErrorKind> {
        let id = self.program.push(op).ok_or(TOO_LARGE)?;
        self.range[usize::from(id)] = range;
        Ok(Some(id))
    }

    pub(crate) fn input(&mut self, n: usize, range: usize) -> Result<Value, ErrorKind> {
        if range <= 1 {
            return Ok(None);
        }
        self.push(Op::Input(n as u8), range)
    }

    pub(crate) fn div(&mut self, x: Value, t: usize) -> Result<Value, ErrorKind> {
        let r = self.range(x);
        let Some(xs) = x else { return Ok(None) };
        if t == 1 {
            return Ok(x);
        }
        if r <= t {
            return Ok(None);
        }
        match self.op(x) {
            Some(Op::Div(y, a)) => {
                return match a.checked_mul(t) {
                    Some(at) => self.div(Some(y), at),
                    None => Ok(None),
                };
            }
            Some(Op::Mul(y, k)) if k % t == 0 => return self.mul(Some(y), k / t),
            Some(Op::Mul(y, k)) if t % k == 0 => return self.div(Some(y), t / k),
            Some(Op::Add(a, b)) => {
                if let Some(Op::Mul(y, k)) = self.op(Some(a)) {
                    if k % t == 0 {
                        // (y*k + b) / t == y*(k/t) + b/t when t divides k.
                        let hi = self.mul(Some(y), k / t)?;
                        let lo = self.div(Some(b), t)?;
                        return self.add(hi, lo);
                    }
                    if t % k == 0 && self.range(Some(b)) <= k {
                        return self.div(Some(y), t / k);
                    }
                }
            }
            _ => {}
        }
        self.push(Op::Div(xs, t), r.div_ceil(t))
    }

    pub(crate) fn rem(&mut self, x: Value, t: usize) -> Result<Value, ErrorKind> {
        let r = self.range(x);
        let Some(xs) = x else { return Ok(None) };
        if t == 1 {
            return Ok(None);
        }
        if r <= t {
            return Ok(x);
        }
        match self.op(x) {
            Some(Op::Mod(y, a)) if a % t == 0 => return self.rem(Some(y), t),
            Some(Op::Mul(_, k)) if k % t == 0 => return Ok(None),
            Some(Op::Mul(y, k)) if t % k == 0 => {
                let m = self.rem(Some(y), t / k)?;
                return self.mul(m, k);
            }
            Some(Op::Add(a, b)) => {
                if let Some(Op::Mul(y, k)) = self.op(Some(a)) {
                    if k % t == 0 {
                        return self.rem(Some(b), t);
                    }
                    if t % k == 0 && self.range(Some(b)) <= k {
                        let m = self.rem(Some(y), t / k)?;
                        let hi = self.mul(m, k)?;
                        return self.add(hi, Some(b));
                    }
                }
            }
            _ => {}
        }
        self.push(Op::Mod(xs, t), t)
    }

    pub(crate) fn mul(&mut self, x: Value, k: usize) -> Result<Value, ErrorKind> {
        let Some(xs) = x else { return Ok(None) };
        match k {
            0 => return Ok(None),
            1 => return Ok(x),
            _ => {}
        }
        if let Some(Op::Mul(y, a)) = self.op(x) {
            if let Some(ak) = a.checked_mul(k) {
                return self.mul(Some(y), ak);
            }
        }
        let r = (self.range(x) - 1).saturating_mul(k).saturating_add(1);
        self.push(Op::Mul(xs, k), r)
    }

    pub(crate) fn add(&mut self, x: Value, y: Value) -> Result<Value, ErrorKind> {
        let (Some(xs), Some(ys)) = (x, y) else {
            return Ok(x.or(y));
        };
        // (v / t) * t + v % t == v
        if let (Some(Op::Mul(q, t)), Some(Op::Mod(v, t2))) = (self.op(x), self.op(y)) {
            if t == t2 && self.op(Some(q)) == Some(Op::Div(v, t)) {
                return Ok(Some(v));
            }
        }
        let r = (self.range(x) - 1)
            .saturating_add(self.range(y) - 1)
            .saturating_add(1);
        self.push(Op::Add(xs, ys), r)
    }
}
