//! Index programs: the straight-line integer arithmetic a layout folds into.
//!
//! A [`Program`] is a list of steps, each reading earlier steps and constants
//! only, with no loops and no tables. `layout!` prints the steps as Rust; the
//! run-time [`Layout`](crate::Layout) interprets the very same steps, so the two
//! paths cannot disagree.
//!
//! The steps and programs are in `steps`; `spelling` says how generated
//! code writes each step, for `layout!` and the C renderer alike.

mod spelling;
mod steps;

pub use spelling::{scaling, Operand, Operator, Spelling};
pub use steps::{Check, InverseProgram, OffsetProgram, Op, Program, StepId, Term, Value};
