//! Zero cost, read off the machine code: `tests/asm` is compiled in release
//! mode with `--emit asm`, and each function calling `offset` of a `layout!`
//! must be straight-line code (no division, branch, call or loop) no longer
//! than the hand-written formula for the same layout beside it.
//!
//! Run it alone with `cargo test --test asm_check -- --nocapture` to see the
//! instruction counts.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One pair of `tests/asm/src/pairs.rs`.
struct Pair {
    spec: &'static str,
    generated: &'static str,
    hand: &'static str,
    /// The hand-written formula, with the index as a slice.
    formula: fn(&[usize]) -> usize,
}

/// Reads the pairs as data; `tests/asm/src/lib.rs` reads them as functions.
macro_rules! pairs {
    ($($spec:literal => $generated:ident, $hand:ident |$($arg:ident),+| $formula:expr;)*) => {
        const PAIRS: &[Pair] = &[$(Pair {
            spec: $spec,
            generated: stringify!($generated),
            hand: stringify!($hand),
            formula: |index| {
                let &[$($arg),+] = index else {
                    panic!("{} takes {} indices", $spec, [$(stringify!($arg)),+].len());
                };
                $formula
            },
        }),*];
    };
}

include!("asm/src/pairs.rs");

/// A hand-written formula that is wrong would make any comparison with it
/// meaningless, so each is checked against the layout on every index.
#[test]
fn hand_written_formulas_equal_the_layouts() {
    for pair in PAIRS {
        let layout = xla_layout::parse(pair.spec).unwrap();
        let dims = layout.dims();
        let mut index = vec![0; dims.len()];
        'all: loop {
            assert_eq!(
                (pair.formula)(&index),
                layout.offset(&index),
                "{} at {index:?}",
                pair.hand
            );
            for d in (0..dims.len()).rev() {
                index[d] += 1;
                if index[d] < dims[d] {
                    continue 'all;
                }
                index[d] = 0;
            }
            break;
        }
    }
}

/// The instructions of one function, as `(mnemonic, whole line)`, and the
/// local labels inside it.
struct Function {
    instructions: Vec<(String, String)>,
    labels: Vec<String>,
}

/// Finds `name` in AT&T assembly as LLVM prints it: from `name:` to the
/// `.Lfunc_end` label. Identical functions may be merged into one, the other
/// name becoming an alias (`a = b` or `.set a, b`), which is followed.
fn function(asm: &str, name: &str) -> Option<Function> {
    let mut target = name.to_string();
    for line in asm.lines().map(str::trim) {
        let alias = line
            .strip_prefix(".set")
            .map(|rest| rest.split(',').map(str::trim).collect::<Vec<_>>())
            .or_else(|| Some(line.split(" = ").map(str::trim).collect()))
            .filter(|parts| parts.len() == 2 && parts[0] == name);
        if let Some(parts) = alias {
            target = parts[1].to_string();
        }
    }
    let start = format!("{target}:");
    let mut lines = asm.lines().map(str::trim).skip_while(|l| *l != start);
    lines.next()?;
    let mut f = Function {
        instructions: Vec::new(),
        labels: Vec::new(),
    };
    for line in lines {
        if line.starts_with(".Lfunc_end") {
            return Some(f);
        }
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() || (line.starts_with('.') && !line.ends_with(':')) {
            continue; // a directive: `.cfi_*`, `.p2align`, ...
        }
        if let Some(label) = line.strip_suffix(':') {
            f.labels.push(label.to_string());
            continue;
        }
        let mnemonic = line.split_whitespace().next().unwrap_or("").to_string();
        f.instructions.push((mnemonic, line.to_string()));
    }
    None
}

/// What makes code other than straight-line arithmetic, or `None`.
fn not_straight_line(f: &Function) -> Option<String> {
    if let Some(label) = f.labels.first() {
        return Some(format!(
            "has label `{label}`, so more than one block (a branch or a loop)"
        ));
    }
    for (mnemonic, line) in &f.instructions {
        let what = if mnemonic.starts_with("div") || mnemonic.starts_with("idiv") {
            "a division"
        } else if mnemonic.starts_with('j') || mnemonic.starts_with("loop") {
            "a branch"
        } else if mnemonic.starts_with("call") {
            "a call"
        } else {
            continue;
        };
        return Some(format!("has {what}: `{line}`"));
    }
    match f.instructions.last() {
        Some((m, _)) if m.starts_with("ret") => None,
        _ => Some("does not end in `ret`".to_string()),
    }
}

/// Builds `tests/asm` and returns its assembly.
fn build_asm() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The workspace's lock: the versions it already resolved and built.
    std::fs::copy(root.join("Cargo.lock"), root.join("tests/asm/Cargo.lock"))
        .expect("tests/asm/Cargo.lock is writable");
    // A target dir of its own: the one running this test is locked by cargo.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("asm-check");
    let output = Command::new(env!("CARGO"))
        .args(["rustc", "--release", "--lib", "--manifest-path"])
        .arg(root.join("tests/asm/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .args(["--", "--emit", "asm", "-C", "debuginfo=0"])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "building tests/asm failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Earlier builds with other flags leave other files; the newest is ours.
    let deps = target.join("release/deps");
    let newest: PathBuf = std::fs::read_dir(&deps)
        .expect("cargo made the deps dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let stem = p.file_stem().and_then(|n| n.to_str()).unwrap_or("");
            stem.starts_with("xla_layout_asm-") && p.extension().is_some_and(|e| e == "s")
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .expect("rustc wrote an .s file");
    std::fs::read_to_string(newest).expect("the .s file is readable")
}

/// The assembly of `tests/asm`, built once for the tests that read it, or
/// `None` (with a message) on a host whose assembly this file cannot read.
fn assembly() -> Option<&'static str> {
    static ASM: OnceLock<String> = OnceLock::new();
    if !cfg!(target_arch = "x86_64") {
        common::skip("the assembly check reads x86_64 code, and this host is not x86_64");
        return None;
    }
    Some(ASM.get_or_init(build_asm))
}

/// Each pair's two functions, found in the assembly.
fn pairs_in(asm: &str) -> Vec<(&'static Pair, Function, Function)> {
    PAIRS
        .iter()
        .map(|pair| {
            let find = |name: &str| {
                function(asm, name).unwrap_or_else(|| panic!("{name} is not in the assembly"))
            };
            (pair, find(pair.generated), find(pair.hand))
        })
        .collect()
}

#[test]
fn generated_offsets_are_straight_line() {
    let Some(asm) = assembly() else { return };
    let failures: Vec<String> = pairs_in(asm)
        .iter()
        .filter_map(|(pair, generated, _)| {
            not_straight_line(generated)
                .map(|problem| format!("{} ({}) {problem}", pair.generated, pair.spec))
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn generated_offsets_are_no_longer_than_by_hand() {
    let Some(asm) = assembly() else { return };
    let listing = |f: &Function| {
        f.instructions
            .iter()
            .map(|(_, l)| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut failures = Vec::new();
    println!(
        "{:<44} {:>9} {:>5}",
        "instructions (ret included)", "generated", "hand"
    );
    for (pair, generated, hand) in pairs_in(asm) {
        let (g, h) = (generated.instructions.len(), hand.instructions.len());
        println!("{:<44} {g:>9} {h:>5}", pair.spec);
        if g > h {
            failures.push(format!(
                "{} ({}) has {g} instructions, the hand-written formula {h}:\n  generated:\n{}\n  by hand:\n{}",
                pair.generated,
                pair.spec,
                listing(&generated),
                listing(&hand)
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The parser must see what it is meant to reject, or the test above proves nothing.
#[test]
fn the_assembly_reader_sees_branches_divisions_calls_and_aliases() {
    let asm = "\
\t.globl\tf
f:
\t.cfi_startproc
\tmovq\t%rdi, %rax
\txorl\t%edx, %edx
\tdivq\t%rsi
\tretq
.Lfunc_end0:
g:
\ttestq\t%rdi, %rdi
\tje\t.LBB1_2
.LBB1_2:
\tcallq\th@PLT
\tretq
.Lfunc_end1:
k:
\tleaq\t(%rdi,%rsi), %rax
\tretq
.Lfunc_end2:
\t.globl\talias
alias = k
";
    let f = function(asm, "f").unwrap();
    assert_eq!(f.instructions.len(), 4);
    assert!(not_straight_line(&f).unwrap().contains("division"));
    let g = function(asm, "g").unwrap();
    assert!(not_straight_line(&g).unwrap().contains("label"));
    let g_without_label = Function {
        instructions: g.instructions.clone(),
        labels: Vec::new(),
    };
    assert!(not_straight_line(&g_without_label)
        .unwrap()
        .contains("branch"));
    let call_only = Function {
        instructions: g.instructions[2..].to_vec(),
        labels: Vec::new(),
    };
    assert!(not_straight_line(&call_only).unwrap().contains("call"));
    let k = function(asm, "alias").unwrap();
    assert_eq!(k.instructions.len(), 2);
    assert!(not_straight_line(&k).is_none());
    assert!(function(asm, "missing").is_none());
}
