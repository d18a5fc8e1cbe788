//! Shared helpers for the integration tests.

// Each test crate compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod reference;
pub mod rng;
pub mod specgen;
