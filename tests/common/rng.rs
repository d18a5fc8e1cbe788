//! The deterministic pseudo-random generator (`SplitMix64`) every randomised
//! test draws from, so a seed names the same inputs everywhere.
//!
//! `reference.rs` and `specgen.rs` use it as `super::rng`; the macro crate's
//! unit tests, which cannot share `tests/common`, include it beside
//! `specgen.rs` by `#[path]`.

// Each includer uses only some of the draws.
#![allow(dead_code)]

/// Deterministic pseudo-random generator (`SplitMix64`), no external crates.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n`; the modulo bias is irrelevant for tests.
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0) has no values");
        self.next_u64() % n
    }

    /// A `usize` in `0..n` (0 when `n` is 0).
    pub fn pick(&mut self, n: usize) -> usize {
        let n = u64::try_from(n.max(1)).expect("usize fits in u64");
        usize::try_from(self.below(n)).expect("below n fits in usize")
    }

    /// `true` once in `n` draws on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.pick(n) == 0
    }

    /// A uniformly chosen element of a non-empty slice.
    pub fn choose<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.pick(items.len())]
    }
}
