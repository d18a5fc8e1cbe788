//! The algebra of a tiled shape: tiles folded level by level into index
//! programs, simplified as they grow, and division by constants fixed at
//! run time.

pub(crate) mod divide;
pub(crate) mod fold;
pub(crate) mod simplify;
