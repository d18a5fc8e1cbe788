//! Shared helpers for the integration tests, included the one way every test
//! crate uses: `mod common;`.

// Each test crate compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod check;
pub mod golden;
pub mod reference;
pub mod rng;
pub mod specgen;

use std::io::Write as _;

/// Whether snapshot tests rewrite their files: under `BLESS=1`, and no other
/// value (`BLESS=0` compares, as an unset `BLESS` does).
pub fn bless() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v == "1")
}

/// Skips a check that needs a tool this host lacks, saying why where a
/// passing run still shows it: libtest hides a passing test's `eprintln!`,
/// not what is written to the process's standard error.
///
/// # Panics
///
/// Under `CI=true`: CI installs every tool a check needs, so a skip there
/// means a check that silently stopped running.
pub fn skip(reason: &str) {
    assert!(
        std::env::var_os("CI").is_none_or(|v| v != "true"),
        "{reason}; CI=true requires this check to run"
    );
    // Nothing useful is left to do if standard error is gone.
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}
