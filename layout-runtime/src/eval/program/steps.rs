//! The steps of an index program, and the programs a layout folds into.

use crate::fixed::Fixed;
use crate::{MAX_CHECKS, MAX_PROGRAM_STEPS, MAX_RANK, MAX_TILED_RANK};

/// The index of a step in a [`Program`].
///
/// # Examples
///
/// ```
/// use xla_layout::program::{Op, StepId};
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let offset = l.offset_program();
/// // Every step reads only earlier steps.
/// for (i, op) in offset.program().steps().iter().enumerate() {
///     let reads: &[StepId] = match op {
///         Op::Input(_) => &[],
///         Op::Div(a, _) | Op::Mod(a, _) | Op::Mul(a, _) => &[*a],
///         Op::Add(a, b) => &[*a, *b],
///     };
///     assert!(reads.iter().all(|&r| usize::from(r) < i));
/// }
/// ```
pub type StepId = u16;

/// One step. Constants are at least 2 for `Div`, `Mod` and `Mul`; simpler
/// cases are folded away when the program is built.
///
/// # Examples
///
/// ```
/// use xla_layout::program::Op;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let offset = l.offset_program();
/// let ops = offset.program().steps();
/// assert!(ops.iter().any(|op| matches!(op, Op::Div(_, 2))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// An input: logical dim `n` of the index (offset programs), or the
    /// offset itself (inverse programs, always `Input(0)`).
    Input(u8),
    /// `a / k`, rounding down.
    Div(StepId, usize),
    /// `a % k`.
    Mod(StepId, usize),
    /// `a * k`.
    Mul(StepId, usize),
    /// `a + b`.
    Add(StepId, StepId),
}

/// A value in a program: a step, or the constant zero.
///
/// # Examples
///
/// ```
/// // Dim 0 of `f32[1,5]` has one value, so its index is always 0.
/// let l = xla_layout::parse("f32[1,5]").unwrap();
/// let inverse = l.inverse_program();
/// let outputs: &[xla_layout::program::Value] = inverse.outputs();
/// assert_eq!(outputs[0], None);
/// assert!(outputs[1].is_some());
/// ```
pub type Value = Option<StepId>;

/// Straight-line steps over the inputs; see the module docs.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[8,8]{1,0:T(2,4)}").unwrap();
/// let offset = l.offset_program();
/// let p = offset.program();
/// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
/// p.eval(&[6, 5], &mut scratch);
/// assert!(p.steps().len() > 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Program {
    steps: Fixed<Op, MAX_PROGRAM_STEPS>,
}

impl Program {
    pub(crate) const EMPTY: Program = Program {
        steps: Fixed::new(Op::Input(0)),
    };

    /// The steps, each reading only earlier ones.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[4,4]").unwrap();
    /// assert_eq!(l.offset_program().program().steps().len(), 2);
    /// ```
    pub fn steps(&self) -> &[Op] {
        &self.steps
    }

    pub(crate) fn push(&mut self, op: Op) -> Option<StepId> {
        if let Some(i) = self.steps().iter().position(|s| *s == op) {
            return Some(i as StepId);
        }
        let id = self.steps.len() as StepId;
        self.steps.push(op)?;
        Some(id)
    }

    pub(crate) fn get(&self, id: StepId) -> Op {
        self.steps[usize::from(id)]
    }

    /// Runs every step on `inputs` and leaves step `i`'s value in `values[i]`.
    ///
    /// `values` needs one entry per step (a `[usize; MAX_PROGRAM_STEPS]`
    /// always fits); steps past its end are not computed and read as 0.
    ///
    /// Arithmetic wraps, so inputs outside the layout give meaningless values,
    /// never a panic. A missing input reads as 0.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let p = l.offset_program();
    /// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
    /// assert_eq!(p.eval(&[2, 3], &mut scratch), 17);
    /// ```
    pub fn eval(&self, inputs: &[usize], values: &mut [usize]) {
        // Steps past the end of `values` are not computed; reading one gives 0.
        let n = self.steps().len().min(values.len());
        for (i, op) in self.steps()[..n].iter().enumerate() {
            let v = |s: StepId| values.get(usize::from(s)).copied().unwrap_or(0);
            values[i] = match *op {
                Op::Input(n) => inputs.get(usize::from(n)).copied().unwrap_or(0),
                Op::Div(a, k) => v(a) / k,
                Op::Mod(a, k) => v(a) % k,
                Op::Mul(a, k) => v(a).wrapping_mul(k),
                Op::Add(a, b) => v(a).wrapping_add(v(b)),
            };
        }
    }

    /// Keeps only the steps that `roots` reach, renumbering them; `remap`
    /// turns each root into its new id.
    pub(crate) fn prune(
        &mut self,
        live: &mut [bool; MAX_PROGRAM_STEPS],
    ) -> [StepId; MAX_PROGRAM_STEPS] {
        let len = self.steps.len();
        for i in (0..len).rev() {
            if live[i] {
                match self.steps[i] {
                    Op::Input(_) => {}
                    Op::Div(a, _) | Op::Mod(a, _) | Op::Mul(a, _) => live[usize::from(a)] = true,
                    Op::Add(a, b) => {
                        live[usize::from(a)] = true;
                        live[usize::from(b)] = true;
                    }
                }
            }
        }
        let mut remap = [0 as StepId; MAX_PROGRAM_STEPS];
        let mut next = 0u16;
        for i in 0..len {
            if live[i] {
                let r = |s: StepId| remap[usize::from(s)];
                self.steps[usize::from(next)] = match self.steps[i] {
                    Op::Input(n) => Op::Input(n),
                    Op::Div(a, k) => Op::Div(r(a), k),
                    Op::Mod(a, k) => Op::Mod(r(a), k),
                    Op::Mul(a, k) => Op::Mul(r(a), k),
                    Op::Add(a, b) => Op::Add(r(a), r(b)),
                };
                remap[i] = next;
                next += 1;
            }
        }
        self.steps.truncate(usize::from(next));
        remap
    }
}

impl core::fmt::Debug for Program {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.steps()).finish()
    }
}

/// One term of an offset: `value * scale`.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let offset = l.offset_program();
/// // The scales are the tiled shape's strides: tile rows of 12 slots,
/// // tiles of 4, rows inside a tile of 2.
/// let mut scales: Vec<usize> = offset.terms().iter().map(|t| t.scale).collect();
/// scales.sort();
/// assert_eq!(scales, [1, 2, 4, 12]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    /// The step whose value is scaled.
    pub step: StepId,
    /// The constant multiplier (a stride of the tiled shape).
    pub scale: usize,
}

/// The forward map: logical index to storage offset, `Σ value(step) * scale`.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
/// assert_eq!(l.offset_program().eval(&[2, 3], &mut scratch), 17);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OffsetProgram {
    pub(crate) program: Program,
    pub(crate) terms: Fixed<Term, MAX_TILED_RANK>,
}

impl OffsetProgram {
    pub(crate) const EMPTY: OffsetProgram = OffsetProgram {
        program: Program::EMPTY,
        terms: Fixed::new(Term { step: 0, scale: 0 }),
    };

    /// The steps that compute the terms' values.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// assert_eq!(l.offset_program().program().steps().len(), 2);
    /// ```
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The terms whose sum is the offset.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// let scales: Vec<usize> = l.offset_program().terms().iter().map(|t| t.scale).collect();
    /// assert_eq!(scales, [10, 1]);
    /// ```
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// The offset of `index`, using `scratch` for step values.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
    /// assert_eq!(l.offset_program().eval(&[3, 5], &mut scratch), 53);
    /// ```
    pub fn eval(&self, index: &[usize], scratch: &mut [usize]) -> usize {
        self.program.eval(index, scratch);
        self.terms().iter().fold(0usize, |acc, t| {
            let v = scratch.get(usize::from(t.step)).copied().unwrap_or(0);
            acc.wrapping_add(v.wrapping_mul(t.scale))
        })
    }
}

/// A condition `value(step) < bound` that holds exactly for non-padding slots.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let inverse = l.inverse_program();
/// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
/// // Slot 9 is padding: column 5 of the padded 6.
/// inverse.program().eval(&[9], &mut scratch);
/// let failed: Vec<_> = inverse
///     .checks()
///     .iter()
///     .filter(|c| scratch[usize::from(c.step)] >= c.bound)
///     .map(|c| (scratch[usize::from(c.step)], c.bound))
///     .collect();
/// assert_eq!(failed, [(5, 5)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Check {
    /// The step checked.
    pub step: StepId,
    /// The exclusive bound.
    pub bound: usize,
}

/// The inverse map: storage offset to logical index, or padding.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
/// let mut index = [0; 2];
/// assert!(l.inverse_program().eval(17, &mut scratch, &mut index));
/// assert_eq!(index, [2, 3]);
/// assert!(!l.inverse_program().eval(9, &mut scratch, &mut index));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InverseProgram {
    pub(crate) program: Program,
    pub(crate) checks: Fixed<Check, MAX_CHECKS>,
    pub(crate) outputs: Fixed<Value, MAX_RANK>,
    pub(crate) storage_len: usize,
}

impl InverseProgram {
    pub(crate) const EMPTY: InverseProgram = InverseProgram {
        program: Program::EMPTY,
        checks: Fixed::new(Check { step: 0, bound: 0 }),
        outputs: Fixed::new(None),
        storage_len: 0,
    };

    /// The steps; `Input(0)` is the offset.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[4,4]").unwrap();
    /// assert!(l.inverse_program().program().steps().len() >= 3);
    /// ```
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Conditions that all hold exactly when the offset is not padding (the
    /// offset is also below [`storage_len`](Self::storage_len)).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.inverse_program().checks().len(), 2);
    /// ```
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// For each logical dim, the step holding its index (`None`: always 0).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[1,5]").unwrap();
    /// assert_eq!(l.inverse_program().outputs()[0], None);
    /// ```
    pub fn outputs(&self) -> &[Value] {
        &self.outputs
    }

    /// Offsets at or past this are outside storage.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.inverse_program().storage_len(), 24);
    /// ```
    pub fn storage_len(&self) -> usize {
        self.storage_len
    }

    /// Writes the logical index of `offset` into `index` (at least rank long)
    /// and returns `true`, or returns `false` for padding or an offset past storage.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
    /// let mut index = [0; 2];
    /// assert!(l.inverse_program().eval(53, &mut scratch, &mut index));
    /// assert_eq!(index, [3, 5]);
    /// ```
    pub fn eval(&self, offset: usize, scratch: &mut [usize], index: &mut [usize]) -> bool {
        let steps = self.program.steps().len();
        if offset >= self.storage_len || index.len() < self.outputs().len() || scratch.len() < steps
        {
            return false;
        }
        self.program.eval(&[offset], scratch);
        let value = |s: StepId| scratch.get(usize::from(s)).copied().unwrap_or(0);
        if self.checks().iter().any(|c| value(c.step) >= c.bound) {
            return false;
        }
        for (slot, out) in index.iter_mut().zip(self.outputs()) {
            *slot = out.map_or(0, value);
        }
        true
    }
}
