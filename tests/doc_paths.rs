//! The runtime's items reach users re-exported by `xla_layout`, docs and
//! all, so their examples must name `xla_layout::...`: a user's crate has no
//! `layout_runtime` to `use` (that is `error[E0432]`). The doc tests compile
//! the examples; this scan catches the path in prose and in ignored blocks too.

mod common;

use std::fs;
use std::path::Path;

use common::rust_files;

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

/// The attribute and doc lines right above the line `at`.
fn attributes_above(lines: &[&str], at: usize) -> Vec<String> {
    lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
        .map(str::to_owned)
        .collect()
}

/// Where `name` is defined in the runtime's module `module` (a `pub` item of
/// that name), and the attributes above it.
fn definition(root: &Path, module: &str, name: &str) -> Option<(String, Vec<String>)> {
    let candidates = [
        root.join(format!("{}.rs", module.replace("::", "/"))),
        root.join(module.replace("::", "/")).join("mod.rs"),
    ];
    let file = candidates.iter().find(|p| p.is_file())?;
    let text = fs::read_to_string(file).expect("source is readable");
    let lines: Vec<&str> = text.lines().collect();
    let kinds = [
        "const fn", "fn", "const", "type", "struct", "enum", "trait", "static",
    ];
    let at = lines.iter().position(|l| {
        let l = l.trim_start();
        kinds.iter().any(|k| {
            l.strip_prefix("pub ")
                .and_then(|rest| rest.strip_prefix(k))
                .and_then(|rest| rest.strip_prefix(' '))
                .is_some_and(|rest| {
                    rest.starts_with(name)
                        && !rest[name.len()..]
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        })
    })?;
    Some((
        format!("{}:{}", file.display(), at + 1),
        attributes_above(&lines, at),
    ))
}

/// The runtime's root re-exports, under `__` names, what `layout!`'s code
/// needs; they are not API. A `#[doc(hidden)]` on the `pub use` alone does
/// not keep them out of the facade's docs, which inline the runtime's root
/// (`pub use layout_runtime::*`): the item itself must be hidden.
#[test]
fn items_for_the_macro_are_hidden_where_defined() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("layout-runtime/src");
    let lib = fs::read_to_string(root.join("lib.rs")).expect("lib.rs is readable");
    let mut checked = 0;
    let mut bad = Vec::new();
    // Each `pub use path::{A as __A, ...};` or `pub use path::A as __A;`.
    for statement in lib.split(';') {
        let Some(start) = statement.find("pub use ") else {
            continue;
        };
        let body: String = statement[start + "pub use ".len()..]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let (module, names) = match body.split_once("::{") {
            Some((module, names)) => (module.to_owned(), names.trim_end_matches('}').to_owned()),
            None => match body.rsplit_once("::") {
                Some((module, name)) => (module.to_owned(), name.to_owned()),
                None => continue,
            },
        };
        for pair in names.split(',') {
            let Some((name, alias)) = pair.trim().split_once(" as ") else {
                continue;
            };
            if !alias.trim().starts_with("__") {
                continue;
            }
            checked += 1;
            match definition(&root, &module, name.trim()) {
                Some((place, attributes)) => {
                    if !attributes.iter().any(|a| a == "#[doc(hidden)]") {
                        bad.push(format!("{place}: `{name}` (re-exported as `{alias}`)"));
                    }
                }
                None => bad.push(format!("no definition of `{module}::{name}` found")),
            }
        }
    }
    assert!(checked >= 10, "found only {checked} `__` re-exports");
    assert!(
        bad.is_empty(),
        "items re-exported for `layout!` are not `#[doc(hidden)]` where defined, so the \
         facade's docs list them:\n{}",
        bad.join("\n")
    );
}
