//! Builds one of the small crates under `tests/` with a cargo run of its own.
//!
//! They are separate crates because what they test is the build itself: a
//! renamed dependency, or a graph without `std`.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs `cargo <subcommand>` on the crate in `tests/<name>` and returns
/// cargo's output on failure.
pub fn cargo(subcommand: &str, name: &str) -> Result<(), String> {
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
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo {subcommand}` of tests/{name} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
