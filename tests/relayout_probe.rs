//! The differential probe of the bulk relayout paths (`common/probe.rs`)
//! on a bounded number of seeded cases: every path against the plain
//! reference (or `Layout::offset` for large layouts), buffers inside guard
//! regions at odd offsets. The `relayout` fuzz target runs the same cases
//! for as long as it is given.
//!
//! `PROBE_SEED` replays another sequence (the seed a fuzz run reports, say)
//! and `PROBE_CASES` sets how many small cases run (400 unless set; the
//! memcheck step of `.ci/run` runs fewer).

mod common;

use common::probe::{large_case, small_case};
use common::reference::Rng;

/// The variable `name` as a number, or `default` when it is not set.
///
/// # Panics
///
/// If it is set to anything but a number, which would otherwise run the
/// default silently.
fn var(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |s| {
        s.parse()
            .unwrap_or_else(|_| panic!("`{name}` is `{s}`, not a number"))
    })
}

/// Small layouts of every element width, sub-byte ones included.
#[test]
fn small_layouts_every_path() {
    let mut rng = Rng::new(var("PROBE_SEED", 0x9_4b3e_0001));
    let cases = var("PROBE_CASES", 400);
    let mut done = 0;
    while done < cases {
        done += u64::from(small_case(&mut rng));
    }
}

/// Layouts past the size from which destinations stream. Building their
/// references element by element takes minutes unoptimized, so this runs in
/// release builds (`.ci/run` runs it so).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "minutes unoptimized; `cargo test --release --all-features --test relayout_probe` runs it"
)]
fn large_layouts_every_path() {
    let mut rng = Rng::new(var("PROBE_SEED", 0x9_4b3e_0002));
    for _ in 0..4 {
        large_case(&mut rng, true);
    }
}
