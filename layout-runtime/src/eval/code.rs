//! The folded index programs in the compact form a [`Layout`](crate::Layout)
//! keeps and evaluates.
//!
//! A [`Program`](crate::program::Program) spells every constant out in a 16-byte
//! step and holds room for [`MAX_PROGRAM_STEPS`](crate::MAX_PROGRAM_STEPS)
//! of them. Real layouts fold into a few dozen steps over a handful of
//! distinct constants, so [`Code`] stores 3-byte ops that name their operands
//! by position and their constants by slot in a shared pool. Each pool entry
//! carries a reciprocal (see [`divide`](crate::algebra::divide)), so a division by a
//! constant is a multiplication and shifts, as in compiled code, instead of
//! a hardware divide.
//! When every output and padding check of the inverse is a sum of digits of
//! the offset, `index_of` adds those up instead of running the ops (see
//! [`ClosedInverse`]): masks and rotations for powers of two, reciprocals
//! otherwise. When not (a `*` combine's dims split out of a sum, or more
//! padded groups than it checks) and the layout has at most one tiling
//! level, it reads the offset's places in the tiled shape instead (see
//! [`Places`]).
//! Programs that do not fit are stepped (`offset`) or re-folded (`index_of`)
//! on use (see `Layout::offset`).

use crate::algebra::divide::{Divisor, MAX_CONSTANTS};
use crate::eval::closed::{ClosedInverse, Entries};
use crate::eval::places::Places;
use crate::eval::program::{InverseProgram, OffsetProgram, Op, Program, StepId};
use crate::fixed::Fixed;
use crate::Tile;

/// The most ops a compact program holds.
pub(crate) const MAX_OPS: usize = 40;
/// The most offset terms and the most padding checks.
pub(crate) const MAX_TERMS: usize = 24;
/// Steps of a short program, which gets a smaller table of values.
const SHORT: usize = 16;
/// An output slot that is always 0.
pub(crate) const ZERO: u8 = u8::MAX;

/// One compact op; operands are earlier ops by position, constants are
/// pool slots.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Ins {
    Input(u8),
    Div(u8, u8),
    Mod(u8, u8),
    Mul(u8, u8),
    Add(u8, u8),
}

/// A value times a constant, or a value below a constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Pair {
    pub(crate) step: u8,
    pub(crate) constant: u8,
}

/// Both programs of a layout, compact; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Code {
    pub(crate) pool: Fixed<Divisor, MAX_CONSTANTS>,
    pub(crate) forward: Fixed<Ins, MAX_OPS>,
    pub(crate) terms: Fixed<Pair, MAX_TERMS>,
    pub(crate) inverse: Fixed<Ins, MAX_OPS>,
    pub(crate) checks: Fixed<Pair, MAX_TERMS>,
    pub(crate) outputs: Fixed<u8, { crate::MAX_RANK }>,
    /// The inverse in a form evaluated without a table of values, when
    /// there is one.
    pub(crate) fast: Fast,
}

/// The inverse without the ops, when it has such a form; one of them,
/// fixed per layout, so `index_of` tests it once.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Fast {
    /// Every output and check a sum of digits of the offset.
    Closed(ClosedInverse),
    /// The places of the tiled shape (at most one tiling level), for the
    /// inverses that have no closed form.
    Places(Places),
    /// Neither: the ops are interpreted.
    None,
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
}

impl Code {
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
            fast: Fast::None,
        };
        // A closed inverse only when it fits, its constants included;
        // otherwise the ops above serve.
        let mut more = Compiler { pool: code.pool };
        if let Some(closed) = ClosedInverse::new(inverse, |v| more.constant(v)) {
            (code.pool, code.fast) = (more.pool, Fast::Closed(closed));
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

    /// Writes the logical index at `offset` (below storage) into `index`;
    /// `false` for padding.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_of(&self, offset: usize, index: Entries<'_>) -> bool {
        match &self.fast {
            Fast::Closed(closed) => closed.index_of(self.pool.slots(), offset, index),
            Fast::Places(places) => places.index_of(self.pool.slots(), offset, index),
            Fast::None => index.with_slice(|index| self.index_interpreted(offset, index)),
        }
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

    /// This code with the places of a layout's tiled shape (its dims,
    /// minor-to-major order and tiles, as [`Places::new`] takes them) as
    /// its fast inverse, if it has none yet and the places and their
    /// constants fit.
    pub(crate) fn with_places(mut self, dims: &[usize], m2m: &[usize], tiles: &[Tile]) -> Code {
        if self.fast == Fast::None {
            let mut more = Compiler { pool: self.pool };
            if let Some(places) = Places::new(dims, m2m, tiles, |v| more.constant(v)) {
                (self.pool, self.fast) = (more.pool, Fast::Places(places));
            }
        }
        self
    }

    /// Whether the places form divides by its own multipliers, for values
    /// below 2^31; `None` for the other forms.
    #[cfg(test)]
    pub(crate) fn places_small(&self) -> Option<bool> {
        match &self.fast {
            Fast::Places(p) => Some(p.divides_by_muls(self.pool.slots())),
            _ => None,
        }
    }

    /// Which form [`index_of`](Self::index_of) evaluates.
    #[cfg(test)]
    pub(crate) fn form(&self) -> &'static str {
        match self.fast {
            Fast::Closed(c) if c.shifts() => "shifts",
            Fast::Closed(_) => "divides",
            Fast::Places(_) => "places",
            Fast::None => "ops",
        }
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
