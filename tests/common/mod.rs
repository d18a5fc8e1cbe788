//! Shared helpers for the integration tests, included the one way every test
//! crate uses: `mod common;`.

// Each test crate compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod check;
pub mod golden;
pub mod probe;
pub mod reference;
pub mod rng;
pub mod specgen;
pub mod values;

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, at any depth, into `out`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source directory is readable") {
        let path = entry.expect("directory entry is readable").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

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

/// The `explain` example (the same code as the `cli` feature's binary),
/// built once per run with the cargo that runs the tests, in the same target
/// directory and profile as the test.
pub fn explain() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        // target/<profile>/deps/explain_cli-<hash>
        let profile_dir = exe.parent().and_then(Path::parent).unwrap();
        let target = profile_dir.parent().unwrap();
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo
            .args(["build", "--quiet", "--example", "explain", "--target-dir"])
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cargo.arg("--release");
            }
            Some(other) => {
                cargo.args(["--profile", other]);
            }
        }
        let status = cargo.status().unwrap();
        assert!(status.success(), "building the explain example failed");
        profile_dir
            .join("examples")
            .join(format!("explain{}", std::env::consts::EXE_SUFFIX))
    })
}
