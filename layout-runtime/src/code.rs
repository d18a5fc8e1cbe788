//! The folded index programs in the compact form a [`Layout`](crate::Layout)
//! keeps and evaluates.
//!
//! A [`Program`](crate::Program) spells every constant out in a 16-byte
//! step and holds room for [`MAX_PROGRAM_STEPS`](crate::MAX_PROGRAM_STEPS)
//! of them. Real layouts fold into a few dozen steps over a handful of
//! distinct constants, so [`Code`] stores 3-byte ops that name their operands
//! by position and their constants by slot in a shared pool. Each pool entry
//! carries a reciprocal (see [`divide`](crate::divide)), so a division by a
//! constant is a multiplication and shifts, as in compiled code, instead of
//! a hardware divide.
//! When every output and padding check of the inverse is a sum of digits of
//! the offset (see [`closed`](crate::closed)), `index_of` adds those up
//! instead of running the ops: shifts and masks for powers of two, the pool's
//! reciprocals otherwise.
//! Programs that do not fit are stepped (`offset`) or re-folded (`index_of`)
//! on use (see `Layout::offset`).

use crate::divide::Divisor;
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
/// The most terms of the closed inverse.
const MAX_INVERSE_TERMS: usize = 24;
/// Marks a closed inverse term's target as a padding check, not an output.
const CHECK: u8 = 0x80;

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
    pool: Fixed<Divisor, MAX_CONSTANTS>,
    forward: Fixed<Ins, MAX_OPS>,
    terms: Fixed<Pair, MAX_TERMS>,
    inverse: Fixed<Ins, MAX_OPS>,
    checks: Fixed<Pair, MAX_TERMS>,
    outputs: Fixed<u8, { crate::MAX_RANK }>,
    /// The inverse in closed form, `((offset / a) % b) * scale` terms of
    /// pool slots added into an output or a check's value, when every
    /// output and check has one: no table of values and no dispatch on ops.
    closed: Fixed<[u8; 4], MAX_INVERSE_TERMS>,
    closed_kind: ClosedKind,
}

/// How [`Code::closed`] reads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum ClosedKind {
    /// No closed inverse: the ops run.
    None,
    /// Every divisor and scale a power of two: shifts and masks.
    Shifts,
    /// Multiplications by reciprocals.
    Divides,
}

/// Builds a [`Code`], sharing constants in one pool.
struct Compiler {
    pool: Fixed<Divisor, MAX_CONSTANTS>,
}

impl Compiler {
    fn constant(&mut self, value: usize) -> Option<u8> {
        let value = u64::try_from(value).ok()?;
        if let Some(i) = self.pool.iter().position(|p| p.value == value) {
            return u8::try_from(i).ok();
        }
        let i = u8::try_from(self.pool.len()).ok()?;
        // Only products and bounds are ever 0 (of empty arrays); they need no reciprocal.
        self.pool
            .push(Divisor::new(value).unwrap_or(Divisor::NONE))?;
        Some(i)
    }

    /// The program's ops.
    fn program(&mut self, program: &Program) -> Option<Fixed<Ins, MAX_OPS>> {
        let mut ops = Fixed::new(Ins::Input(0));
        for op in program.steps() {
            let step = |s: StepId| u8::try_from(s).ok();
            let ins = match *op {
                Op::Input(n) => Ins::Input(n),
                Op::Div(a, k) => Ins::Div(step(a)?, self.constant(k)?),
                Op::Mod(a, k) => Ins::Mod(step(a)?, self.constant(k)?),
                Op::Mul(a, k) => Ins::Mul(step(a)?, self.constant(k)?),
                Op::Add(a, b) => Ins::Add(step(a)?, step(b)?),
            };
            ops.push(ins)?;
        }
        Some(ops)
    }

    /// The inverse's outputs and checks as sums of digits of the offset.
    fn closed_inverse(
        &mut self,
        inverse: &InverseProgram,
    ) -> Option<(Fixed<[u8; 4], MAX_INVERSE_TERMS>, ClosedKind)> {
        // Targets fit a byte with `CHECK` clear: `Code::new` has kept at
        // most `MAX_RANK` outputs and `MAX_TERMS` checks.
        let targets = inverse
            .outputs()
            .iter()
            .enumerate()
            .filter_map(|(d, s)| Some((u8::try_from(d).ok()?, (*s)?)))
            .chain(
                inverse
                    .checks()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| Some((CHECK | u8::try_from(i).ok()?, c.step))),
            );
        let mut closed = Fixed::new([0; 4]);
        let mut shifts = true;
        for (target, step) in targets {
            crate::closed::digits(inverse.program(), step, |d| {
                shifts &= d.a.is_power_of_two()
                    && d.b.is_none_or(usize::is_power_of_two)
                    && d.scale.is_power_of_two();
                let a = self.constant(d.a)?;
                let b = self.constant(d.b.unwrap_or(0))?;
                let scale = self.constant(d.scale)?;
                closed.push([a, b, scale, target])
            })?;
        }
        let kind = if shifts {
            ClosedKind::Shifts
        } else {
            ClosedKind::Divides
        };
        Some((closed, kind))
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
    let mut n = r.count(MAX_OPS);
    while n > 0 {
        ops.append(Ins::read(r));
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
    let mut n = r.count(MAX_TERMS);
    while n > 0 {
        let (step, constant) = (r.u8(), r.u8());
        pairs.append(Pair { step, constant });
        n -= 1;
    }
    pairs
}

impl Code {
    pub(crate) fn write(&self, w: Writer) {
        w(self.pool.len() as u64);
        for c in self.pool.iter() {
            w(c.value);
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
        w(match self.closed_kind {
            ClosedKind::None => 0,
            ClosedKind::Shifts => 1,
            ClosedKind::Divides => 2,
        });
        w(self.closed.len() as u64);
        for &t in self.closed.iter() {
            w(u64::from(u32::from_le_bytes(t)));
        }
    }

    pub(crate) const fn read(r: &mut Reader) -> Code {
        let mut pool = Fixed::new(Divisor::NONE);
        let mut n = r.count(MAX_CONSTANTS);
        while n > 0 {
            let (value, magic) = (r.word(), r.word());
            pool.append(Divisor::from_parts(value, magic));
            n -= 1;
        }
        let forward = read_ins(r);
        let terms = read_pairs(r);
        let inverse = read_ins(r);
        let checks = read_pairs(r);
        let mut outputs = Fixed::new(ZERO);
        let mut n = r.count(crate::MAX_RANK);
        while n > 0 {
            outputs.append(r.u8());
            n -= 1;
        }
        let closed_kind = match r.word() {
            1 => ClosedKind::Shifts,
            2 => ClosedKind::Divides,
            _ => ClosedKind::None,
        };
        let mut closed = Fixed::new([0; 4]);
        let mut n = r.count(MAX_INVERSE_TERMS);
        while n > 0 {
            // Any bytes evaluate: slots and targets are looked up, not indexed.
            #[allow(clippy::cast_possible_truncation)]
            closed.append((r.word() as u32).to_le_bytes());
            n -= 1;
        }
        Code {
            pool,
            forward,
            terms,
            inverse,
            checks,
            outputs,
            closed,
            closed_kind,
        }
    }

    /// The compact form of a layout's programs, or `None` if they exceed
    /// the capacities above. With `offset` `None` (the offset has a closed
    /// form) only the inverse is kept.
    pub(crate) fn new(offset: Option<&OffsetProgram>, inverse: &InverseProgram) -> Option<Code> {
        let mut c = Compiler {
            pool: Fixed::new(Divisor::NONE),
        };
        let mut forward = Fixed::new(Ins::Input(0));
        let mut terms = Fixed::new(Pair {
            step: 0,
            constant: 0,
        });
        if let Some(offset) = offset {
            forward = c.program(offset.program())?;
            for t in offset.terms() {
                let step = u8::try_from(t.step).ok()?;
                let constant = c.constant(t.scale)?;
                terms.push(Pair { step, constant })?;
            }
        }
        let inv = c.program(inverse.program())?;
        let mut checks = Fixed::new(Pair {
            step: 0,
            constant: 0,
        });
        for ch in inverse.checks() {
            let step = u8::try_from(ch.step).ok()?;
            let constant = c.constant(ch.bound)?;
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
        let mut code = Code {
            pool: c.pool,
            forward,
            terms,
            inverse: inv,
            checks,
            outputs,
            closed: Fixed::new([0; 4]),
            closed_kind: ClosedKind::None,
        };
        // A closed inverse only when it fits, its constants included;
        // otherwise the ops above serve.
        let mut more = Compiler { pool: code.pool };
        if let Some((closed, kind)) = more.closed_inverse(inverse) {
            (code.pool, code.closed, code.closed_kind) = (more.pool, closed, kind);
        }
        Some(code)
    }

    #[inline]
    fn constant(&self, slot: u8) -> Divisor {
        self.pool
            .get(usize::from(slot))
            .copied()
            .unwrap_or(Divisor::NONE)
    }

    /// Runs `ops` on `input`, leaving step `i`'s value in `values[i]`.
    #[inline]
    fn run(&self, ops: &[Ins], input: impl Fn(u8) -> usize, values: &mut [usize]) {
        for i in 0..ops.len().min(values.len()) {
            let v = |s: u8| values.get(usize::from(s)).copied().unwrap_or(0);
            values[i] = match ops[i] {
                Ins::Input(n) => input(n),
                Ins::Div(a, k) => to_usize(self.constant(k).div(v(a) as u64)),
                Ins::Mod(a, k) => to_usize(self.constant(k).rem(v(a) as u64)),
                Ins::Mul(a, k) => v(a).wrapping_mul(to_usize(self.constant(k).value)),
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
            acc.wrapping_add(v.wrapping_mul(to_usize(self.constant(t.constant).value)))
        })
    }

    /// Writes the logical index at `offset` (below storage) into `index`
    /// (exactly rank long); `false` for padding.
    #[inline]
    pub(crate) fn index_of(&self, offset: usize, index: &mut [usize]) -> bool {
        if self.closed_kind != ClosedKind::None {
            return self.index_closed(offset, index);
        }
        self.index_interpreted(offset, index)
    }

    /// [`index_of`](Self::index_of) through the ops.
    // Out of line, with `index` only written here: inlined, its tables
    // would keep a caller's index in memory.
    #[inline(never)]
    fn index_interpreted(&self, offset: usize, index: &mut [usize]) -> bool {
        // Most inverse programs are short: a small table saves zeroing the full one.
        if self.inverse.len() <= SHORT {
            self.index_with(offset, index, &mut [0; SHORT])
        } else {
            self.index_with(offset, index, &mut [0; MAX_OPS])
        }
    }

    /// Whether [`index_of`](Self::index_of) reads the closed inverse.
    #[cfg(test)]
    pub(crate) fn inverse_is_closed(&self) -> bool {
        self.closed_kind != ClosedKind::None
    }

    /// [`index_of`](Self::index_of) through the closed inverse.
    #[inline]
    fn index_closed(&self, offset: usize, index: &mut [usize]) -> bool {
        let x = offset as u64;
        let shifts = self.closed_kind == ClosedKind::Shifts;
        let digit = |[a, b, scale, _]: [u8; 4]| {
            let (a, b, scale) = (self.constant(a), self.constant(b), self.constant(scale));
            if shifts {
                let digit = x.wrapping_shr(a.value.trailing_zeros()) & b.value.wrapping_sub(1);
                to_usize(digit).wrapping_shl(scale.value.trailing_zeros())
            } else {
                to_usize(b.rem(a.div(x))).wrapping_mul(to_usize(scale.value))
            }
        };
        // Terms come by target, outputs in order and then checks: each
        // value is summed once and written once.
        let (terms, mut t) = (self.closed.as_slice(), 0);
        let mut sum = |target: usize| {
            let mut v = 0usize;
            while let Some(&term) = terms.get(t) {
                if usize::from(term[3]) != target {
                    break;
                }
                v = v.wrapping_add(digit(term));
                t += 1;
            }
            v
        };
        for (d, slot) in index.iter_mut().enumerate() {
            *slot = sum(d);
        }
        self.checks
            .iter()
            .enumerate()
            .all(|(i, c)| (sum(usize::from(CHECK) | i) as u64) < self.constant(c.constant).value)
    }

    #[inline]
    fn index_with(&self, offset: usize, index: &mut [usize], values: &mut [usize]) -> bool {
        self.run(&self.inverse, |_| offset, values);
        let v = |s: u8| values.get(usize::from(s)).copied().unwrap_or(0);
        if self
            .checks
            .iter()
            .any(|c| v(c.step) as u64 >= self.constant(c.constant).value)
        {
            return false;
        }
        for (slot, &out) in index.iter_mut().zip(self.outputs.iter()) {
            *slot = if out == ZERO { 0 } else { v(out) };
        }
        true
    }
}

/// A quotient, remainder or constant as a `usize`: each fits, being at most
/// a `usize` dividend or a constant that was a `usize`.
#[allow(clippy::cast_possible_truncation)]
#[inline]
fn to_usize(v: u64) -> usize {
    v as usize
}
