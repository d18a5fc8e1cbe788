//! The runtime's items reach users re-exported by `xla_layout`, docs and
//! all, so their examples must name `xla_layout::...`: a user's crate has no
//! `layout_runtime` to `use` (that is `error[E0432]`). The doc tests compile
//! the examples; this scan catches the path in prose and in ignored blocks too.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("source directory is readable") {
        let path = entry.expect("directory entry is readable").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn runtime_docs_name_only_the_facade() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("layout-runtime/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    assert!(
        files.len() > 10,
        "found only {} runtime sources",
        files.len()
    );
    let mut bad = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("source is readable");
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let doc = trimmed.starts_with("///") || trimmed.starts_with("//!");
            if doc && trimmed.contains("layout_runtime") {
                let name = file.strip_prefix(&root).unwrap_or(file);
                bad.push(format!("{}:{}: {}", name.display(), n + 1, trimmed));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "runtime docs name `layout_runtime`, which users of `xla-layout` cannot reach; \
         write `xla_layout::...`:\n{}",
        bad.join("\n")
    );
}
