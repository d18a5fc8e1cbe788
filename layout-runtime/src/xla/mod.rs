//! What comes from XLA itself: the shapes of whole HLO modules, and the
//! tiles XLA chooses on TPUs.

pub mod hlo;
pub mod tpu;
