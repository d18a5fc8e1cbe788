//! The differential probe of the bulk relayout paths (`tests/common/probe.rs`,
//! which `tests/relayout_probe.rs` runs on a fixed number of cases): each
//! input seeds the project's generator for one case, small (every path
//! against the plain reference) or, one input in 64, past the size from
//! which destinations stream. Guard regions around every buffer catch
//! writes out of bounds that sanitizers miss inside one allocation.
//!
//! Run (nightly and `cargo install cargo-fuzz`), from the repository root:
//! `cargo +nightly fuzz run relayout -- -max_len=9 -max_total_time=600`;
//! a failing input's seed replays with
//! `PROBE_SEED=<seed> cargo test --all-features --test relayout_probe`.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/mod.rs"]
#[allow(dead_code, unused_imports)]
mod common;

use common::probe::{large_case, small_case};
use common::reference::Rng;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, seed)) = data.split_first() else {
        return;
    };
    let mut bytes = [0u8; 8];
    for (b, s) in bytes.iter_mut().zip(seed) {
        *b = *s;
    }
    let mut rng = Rng::new(u64::from_le_bytes(bytes));
    if kind % 64 == 63 {
        large_case(&mut rng, true);
    } else {
        small_case(&mut rng);
    }
});
