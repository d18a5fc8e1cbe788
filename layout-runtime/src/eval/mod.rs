//! The forms a layout is evaluated in: evaluators compiled from the
//! [`algebra`](crate::algebra)'s digits, index programs, their closed
//! forms and compact code, the run-time [`Layout`](crate::Layout),
//! rank-checked [`Ranked`](crate::Ranked) layouts, the type of `layout!`
//! values and the bytes that carry them from compile time to run time.

mod any_layout;
mod attributes;
pub(crate) mod closed;
pub(crate) mod code;
pub(crate) mod codec;
mod digits;
pub(crate) mod folded;
pub(crate) mod layout;
pub(crate) mod outside;
pub(crate) mod places;
pub mod program;
pub(crate) mod ranked;
pub(crate) mod static_layout;

pub use any_layout::AnyLayout;
pub(crate) use digits::{DigitForm, DigitInverse, DigitOffset};
