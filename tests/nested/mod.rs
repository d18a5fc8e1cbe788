//! Builds one of the small crates under `tests/` with a cargo run of its own.
//!
//! They are separate crates because what they test is the build itself: a
//! renamed dependency, or a graph without `std`.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// Runs `cargo <subcommand>` on the crate in `tests/<name>` and returns
/// cargo's output on failure.
// Not every test crate that includes this module uses both functions.
#[allow(dead_code)]
pub fn cargo(subcommand: &str, name: &str) -> Result<(), String> {
    cargo_with(subcommand, name, &[]).map(drop)
}

/// [`cargo`] with extra arguments (`--features ...`); its standard error on
/// success too, and on failure the whole report.
#[allow(dead_code)]
pub fn cargo_with(subcommand: &str, name: &str, args: &[&str]) -> Result<String, String> {
    // One run at a time: each seeds a lock file another may be reading.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests").join(name);
    // Starting from the workspace's lock resolves the same versions the
    // workspace already downloaded and built, with no registry lookup;
    // cargo drops the entries this crate does not use.
    fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("cannot seed {name}/Cargo.lock: {e}"))?;
    // One target dir for all nested builds, inside the running test's own
    // target dir, so a second run rebuilds nothing.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nested-crates");
    let out = Command::new(env!("CARGO"))
        .arg(subcommand)
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stderr).into_owned())
    } else {
        Err(format!(
            "`cargo {subcommand}` of tests/{name} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
