//! Compile-time checks of `layout!`: every kind of bad spec is a clear error
//! at the right place, and valid uses compile under strict settings.
//!
//! Each `tests/ui/<topic>/*.rs` holds one mistake and its expected output in
//! the `.stderr` next to it; `tests/ui/pass/*.rs` must compile cleanly.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test ui`
//! and review the diff: the message and the caret excerpt are the product.

use std::fs;
use std::path::Path;

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    // Every topic folder other than `pass` holds failures; listing them from
    // the file system means a new topic cannot be forgotten here.
    let mut topics: Vec<String> =
        fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui"))
            .expect("tests/ui is readable")
            .map(|entry| entry.expect("tests/ui entry is readable"))
            .filter(|entry| entry.path().is_dir() && entry.file_name() != "pass")
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
    topics.sort();
    assert!(!topics.is_empty(), "no topic folders under tests/ui");
    for topic in topics {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
}
