//! The folded index programs in the compact form a [`Layout`](crate::Layout)
//! keeps and evaluates.
//!
//! A [`Program`](crate::Program) spells every constant out in a 16-byte
//! step and holds room for [`MAX_PROGRAM_STEPS`](crate::MAX_PROGRAM_STEPS)
//! of them. Real layouts fold into a few dozen steps over a handful of
//! distinct constants, so [`Code`] stores 3-byte ops that name their operands
//! by position and their constants by slot in a shared pool. Each pool entry
//! carries a reciprocal, so a division by a constant costs one
//! multiplication, as in compiled code, instead of a hardware divide.
//! Programs that do not fit are re-folded on use (see `Layout::offset`).

use crate::fixed::Fixed;
use crate::program::{InverseProgram, OffsetProgram, Op, Program, StepId};
use crate::raw::{Reader, Writer};

/// The most ops a compact program holds.
pub(crate) const MAX_OPS: usize = 40;
/// The most distinct constants the two programs of a layout share.
pub(crate) const MAX_CONSTANTS: usize = 20;
/// The most offset terms and the most padding checks.
pub(crate) const MAX_TERMS: usize = 24;
/// Steps of a short program, which gets a smaller table of values.
const SHORT: usize = 16;
/// An output slot that is always 0.
const ZERO: u8 = u8::MAX;

/// A constant and its reciprocal for division by multiplication.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Constant {
    value: usize,
    /// `ceil(2^64 / value)` when every dividend is below 2^32 and `value`
    /// is in `[2, 2^32)`, which makes `x / value` exactly the high half of
    /// `x * magic` and `x % value` the high half of the low half times
    /// `value` (Lemire, Kaser and Kurz, "Faster remainder by direct
    /// computation", 2019); 0 otherwise, for plain division.
    magic: u64,
}

impl Constant {
    const UNUSED: Constant = Constant { value: 0, magic: 0 };

    fn new(value: usize, dividend_range: usize) -> Constant {
        let fits = |n: usize| u64::try_from(n).is_ok_and(|n| n <= 1 << 32);
        let magic = if value >= 2 && fits(value) && fits(dividend_range) {
            // value >= 2, so this is at most 2^63: no overflow.
            u64::MAX / value as u64 + 1
        } else {
            0
        };
        Constant { value, magic }
    }

    // On a 64-bit target `usize` and `u64` are one type; on a 32-bit one the
    // fast path only runs on values below 2^32, so no cast loses bits.
    #[allow(clippy::cast_possible_truncation)]
    #[inline]
    fn div(self, x: usize) -> usize {
        if self.magic == 0 {
            // `value` is at least 2 wherever a division is folded.
            x / self.value.max(1)
        } else {
            ((u128::from(self.magic) * x as u128) >> 64) as usize
        }
    }

    #[allow(clippy::cast_possible_truncation)]
    #[inline]
    fn rem(self, x: usize) -> usize {
        if self.magic == 0 {
            x % self.value.max(1)
        } else {
            let low = self.magic.wrapping_mul(x as u64);
            ((u128::from(low) * self.value as u128) >> 64) as usize
        }
    }
}

/// One compact op; operands are earlier ops by position, constants are
/// pool slots.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Ins {
    Input(u8),
    Div(u8, u8),
    Mod(u8, u8),
    Mul(u8, u8),
    Add(u8, u8),
}

/// A value times a constant, or a value below a constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Pair {
    step: u8,
    constant: u8,
}

/// Both programs of a layout, compact; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Code {
    pool: Fixed<Constant, MAX_CONSTANTS>,
    forward: Fixed<Ins, MAX_OPS>,
    terms: Fixed<Pair, MAX_TERMS>,
    inverse: Fixed<Ins, MAX_OPS>,
    checks: Fixed<Pair, MAX_TERMS>,
    outputs: Fixed<u8, { crate::MAX_RANK }>,
}

/// Builds a [`Code`], tracking the range of every step so that each
/// constant knows whether its reciprocal is exact.
struct Compiler {
    pool: Fixed<Constant, MAX_CONSTANTS>,
}

impl Compiler {
    fn constant(&mut self, value: usize, dividend_range: usize) -> Option<u8> {
        let c = Constant::new(value, dividend_range);
        // A constant used once with a large dividend and once with a small
        // one is stored twice; both are exact.
        if let Some(i) = self.pool.iter().position(|&p| p == c) {
            return u8::try_from(i).ok();
        }
        let i = u8::try_from(self.pool.len()).ok()?;
        self.pool.push(c)?;
        Some(i)
    }

    /// The program's ops and each step's range (one past its largest value
    /// for in-range inputs); `input_range(n)` is input `n`'s.
    fn program(
        &mut self,
        program: &Program,
        input_range: &dyn Fn(u8) -> usize,
    ) -> Option<(Fixed<Ins, MAX_OPS>, [usize; MAX_OPS])> {
        let mut ops = Fixed::new(Ins::Input(0));
        let mut range = [0usize; MAX_OPS];
        for (i, op) in program.steps().iter().enumerate() {
            let r = |s: StepId| range.get(usize::from(s)).copied().unwrap_or(usize::MAX);
            let step = |s: StepId| u8::try_from(s).ok();
            let (ins, rng) = match *op {
                Op::Input(n) => (Ins::Input(n), input_range(n)),
                Op::Div(a, k) => (
                    Ins::Div(step(a)?, self.constant(k, r(a))?),
                    r(a).div_ceil(k.max(1)),
                ),
                Op::Mod(a, k) => (Ins::Mod(step(a)?, self.constant(k, r(a))?), r(a).min(k)),
                Op::Mul(a, k) => (
                    Ins::Mul(step(a)?, self.constant(k, usize::MAX)?),
                    r(a).saturating_sub(1).saturating_mul(k).saturating_add(1),
                ),
                Op::Add(a, b) => (
                    Ins::Add(step(a)?, step(b)?),
                    r(a).saturating_add(r(b)).saturating_sub(1),
                ),
            };
            ops.push(ins)?;
            *range.get_mut(i)? = rng;
        }
        Some((ops, range))
    }
}

impl Ins {
    fn write(self, w: Writer) {
        let (tag, a, b) = match self {
            Ins::Input(n) => (0, n, 0),
            Ins::Div(a, k) => (1, a, k),
            Ins::Mod(a, k) => (2, a, k),
            Ins::Mul(a, k) => (3, a, k),
            Ins::Add(a, b) => (4, a, b),
        };
        w(tag);
        w(u64::from(a));
        w(u64::from(b));
    }

    const fn read(r: &mut Reader) -> Ins {
        let (tag, a, b) = (r.word(), r.u8(), r.u8());
        match tag {
            1 => Ins::Div(a, b),
            2 => Ins::Mod(a, b),
            3 => Ins::Mul(a, b),
            4 => Ins::Add(a, b),
            _ => Ins::Input(a),
        }
    }
}

fn write_ins(w: Writer, ops: &[Ins]) {
    w(ops.len() as u64);
    for op in ops {
        op.write(w);
    }
}

const fn read_ins(r: &mut Reader) -> Fixed<Ins, MAX_OPS> {
    let mut ops = Fixed::new(Ins::Input(0));
    let mut n = r.usize();
    while n > 0 {
        ops = ops.with(Ins::read(r));
        n -= 1;
    }
    ops
}

fn write_pairs(w: Writer, pairs: &[Pair]) {
    w(pairs.len() as u64);
    for p in pairs {
        w(u64::from(p.step));
        w(u64::from(p.constant));
    }
}

const fn read_pairs(r: &mut Reader) -> Fixed<Pair, MAX_TERMS> {
    let mut pairs = Fixed::new(Pair {
        step: 0,
        constant: 0,
    });
    let mut n = r.usize();
    while n > 0 {
        let (step, constant) = (r.u8(), r.u8());
        pairs = pairs.with(Pair { step, constant });
        n -= 1;
    }
    pairs
}

impl Code {
    pub(crate) fn write(&self, w: Writer) {
        w(self.pool.len() as u64);
        for c in self.pool.iter() {
            w(c.value as u64);
            w(c.magic);
        }
        write_ins(w, &self.forward);
        write_pairs(w, &self.terms);
        write_ins(w, &self.inverse);
        write_pairs(w, &self.checks);
        w(self.outputs.len() as u64);
        for &o in self.outputs.iter() {
            w(u64::from(o));
        }
    }

    pub(crate) const fn read(r: &mut Reader) -> Code {
        let mut pool = Fixed::new(Constant::UNUSED);
        let mut n = r.usize();
        while n > 0 {
            let (value, magic) = (r.usize(), r.word());
            pool = pool.with(Constant { value, magic });
            n -= 1;
        }
        let forward = read_ins(r);
        let terms = read_pairs(r);
        let inverse = read_ins(r);
        let checks = read_pairs(r);
        let mut outputs = Fixed::new(ZERO);
        let mut n = r.usize();
        while n > 0 {
            outputs = outputs.with(r.u8());
            n -= 1;
        }
        Code {
            pool,
            forward,
            terms,
            inverse,
            checks,
            outputs,
        }
    }

    /// The compact form of a layout's programs, or `None` if they exceed
    /// the capacities above. With `offset` `None` (the offset has a closed
    /// form) only the inverse is kept.
    pub(crate) fn new(
        dims: &[usize],
        offset: Option<&OffsetProgram>,
        inverse: &InverseProgram,
    ) -> Option<Code> {
        let mut c = Compiler {
            pool: Fixed::new(Constant::UNUSED),
        };
        let mut forward = Fixed::new(Ins::Input(0));
        let mut terms = Fixed::new(Pair {
            step: 0,
            constant: 0,
        });
        if let Some(offset) = offset {
            forward = c
                .program(offset.program(), &|n| {
                    dims.get(usize::from(n)).copied().unwrap_or(usize::MAX)
                })?
                .0;
            for t in offset.terms() {
                let step = u8::try_from(t.step).ok()?;
                let constant = c.constant(t.scale, usize::MAX)?;
                terms.push(Pair { step, constant })?;
            }
        }
        let storage = inverse.storage_len();
        let (inv, _) = c.program(inverse.program(), &|_| storage)?;
        let mut checks = Fixed::new(Pair {
            step: 0,
            constant: 0,
        });
        for ch in inverse.checks() {
            let step = u8::try_from(ch.step).ok()?;
            let constant = c.constant(ch.bound, usize::MAX)?;
            checks.push(Pair { step, constant })?;
        }
        let mut outputs = Fixed::new(ZERO);
        for out in inverse.outputs() {
            let slot = match *out {
                None => ZERO,
                Some(s) => u8::try_from(s).ok().filter(|&s| s != ZERO)?,
            };
            outputs.push(slot)?;
        }
        Some(Code {
            pool: c.pool,
            forward,
            terms,
            inverse: inv,
            checks,
            outputs,
        })
    }

    fn constant(&self, slot: u8) -> Constant {
        self.pool
            .get(usize::from(slot))
            .copied()
            .unwrap_or(Constant::UNUSED)
    }

    /// Runs `ops` on `input`, leaving step `i`'s value in `values[i]`.
    #[inline]
    fn run(&self, ops: &[Ins], input: impl Fn(u8) -> usize, values: &mut [usize]) {
        for i in 0..ops.len().min(values.len()) {
            let v = |s: u8| values.get(usize::from(s)).copied().unwrap_or(0);
            values[i] = match ops[i] {
                Ins::Input(n) => input(n),
                Ins::Div(a, k) => self.constant(k).div(v(a)),
                Ins::Mod(a, k) => self.constant(k).rem(v(a)),
                Ins::Mul(a, k) => v(a).wrapping_mul(self.constant(k).value),
                Ins::Add(a, b) => v(a).wrapping_add(v(b)),
            };
        }
    }

    /// The storage offset of `index`; see `Layout::offset`.
    #[inline]
    pub(crate) fn offset(&self, index: &[usize]) -> usize {
        let mut values = [0usize; MAX_OPS];
        self.run(
            &self.forward,
            |n| index.get(usize::from(n)).copied().unwrap_or(0),
            &mut values,
        );
        self.terms.iter().fold(0usize, |acc, t| {
            let v = values.get(usize::from(t.step)).copied().unwrap_or(0);
            acc.wrapping_add(v.wrapping_mul(self.constant(t.constant).value))
        })
    }

    /// Writes the logical index at `offset` (below storage) into `index`
    /// (exactly rank long); `false` for padding.
    #[inline]
    pub(crate) fn index_of(&self, offset: usize, index: &mut [usize]) -> bool {
        // Most inverse programs are short: a small table saves zeroing the full one.
        if self.inverse.len() <= SHORT {
            self.index_with(offset, index, &mut [0; SHORT])
        } else {
            self.index_with(offset, index, &mut [0; MAX_OPS])
        }
    }

    #[inline]
    fn index_with(&self, offset: usize, index: &mut [usize], values: &mut [usize]) -> bool {
        self.run(&self.inverse, |_| offset, values);
        let v = |s: u8| values.get(usize::from(s)).copied().unwrap_or(0);
        if self
            .checks
            .iter()
            .any(|c| v(c.step) >= self.constant(c.constant).value)
        {
            return false;
        }
        for (slot, &out) in index.iter_mut().zip(self.outputs.iter()) {
            *slot = if out == ZERO { 0 } else { v(out) };
        }
        true
    }
}
