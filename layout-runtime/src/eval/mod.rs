//! Evaluators compiled from the [`algebra`](crate::algebra) of a layout.

mod digits;

pub(crate) use digits::{DigitForm, DigitInverse, DigitOffset};
