//! `explain --hlo`: whole HLO modules from XLA's tests (TPU layouts such as
//! `T(8,128)(2,1)`) tallied by shape, each row's bytes against the
//! reference's size arithmetic, the counts against a hand count, and the
//! failures a user meets (refused shapes, missing files, bad arguments).

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::reference::tiled_shape;
use xla_layout::{hlo, parse};

fn run(args: &[&str], stdin: &str) -> Output {
    run_bytes(args, stdin.as_bytes())
}

fn run_bytes(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(common::explain())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/xla_corpus")
        .join(name)
}

fn modules() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    paths.sort();
    paths
}

/// `(spec, occurrences, storage_bytes, padding_bytes)` rows of `--tsv`.
fn tsv(path: &Path) -> Vec<(String, u64, u64, u64)> {
    let out = run(&["--hlo", path.to_str().unwrap(), "--tsv"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 4, "{line}");
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// Storage and padding bytes of one array by the reference's shape
/// arithmetic (SPEC.md §4), not the library's folding.
fn reference_bytes(spec: &str) -> (u64, u64) {
    let l = parse(spec).unwrap();
    let mut shape: Vec<usize> = l
        .minor_to_major()
        .iter()
        .rev()
        .map(|&d| l.dims()[d])
        .collect();
    for tile in l.tiles() {
        shape = tiled_shape(&shape, &common::check::ref_tile(tile));
    }
    let slots: u128 = shape.iter().map(|&d| d as u128).product();
    let slots = slots.div_ceil(l.tail_alignment() as u128) * l.tail_alignment() as u128;
    let bits = u128::from(l.element_bits());
    let storage = (slots * bits).div_ceil(8);
    let data = (l.len() as u128 * bits).div_ceil(8);
    (storage as u64, (storage - data) as u64)
}

#[test]
fn rows_match_the_reference_and_a_hand_count() {
    let rows = tsv(&corpus("dynamic_slices.hlo"));
    let expected = [
        ("s32[1]{0:T(128)}", 8, 512, 508),
        ("u32[]{:T(128)}", 4, 512, 508),
        ("s32[16]{0:T(128)}", 2, 512, 448),
        (
            "bf16[8,1024,1,20,256,1,1,1]{4,1,7,3,2,0,6,5:T(8,128)(2,1)}",
            3,
            83_886_080,
            0,
        ),
        (
            "bf16[8,1024,1,20,256,1,1]{4,1,3,0,6,5,2:T(8,128)(2,1)}",
            2,
            83_886_080,
            0,
        ),
    ];
    let got: Vec<(&str, u64, u64, u64)> = rows
        .iter()
        .map(|(s, a, b, c)| (s.as_str(), *a, *b, *c))
        .collect();
    assert_eq!(got, expected);

    let modules = modules();
    assert!(modules.len() >= 3);
    for path in modules {
        let rows = tsv(&path);
        assert!(!rows.is_empty(), "{}", path.display());
        for (spec, _, storage, padding) in &rows {
            assert_eq!(
                (*storage, *padding),
                reference_bytes(spec),
                "{spec} in {}",
                path.display()
            );
        }
        // Most padding in total first.
        let totals: Vec<u64> = rows.iter().map(|r| r.1 * r.3).collect();
        assert!(
            totals.windows(2).all(|w| w[0] >= w[1]),
            "{}: {totals:?}",
            path.display()
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let results = hlo::shapes(&text)
            .filter(hlo::ArrayShape::is_result)
            .count() as u64;
        assert_eq!(
            rows.iter().map(|r| r.1).sum::<u64>(),
            results,
            "{}",
            path.display()
        );
    }
}

#[test]
fn the_table_names_what_tpu_users_chase() {
    let path = corpus("conv_with_clamp.hlo");
    let out = run(&["--hlo", path.to_str().unwrap()], "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("count") && lines[0].contains("padding each"),
        "{text}"
    );
    // A bf16 scalar in a (256) tile: 512 bytes for 2 of data.
    let words: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        words,
        ["2", "512", "510", "99.6%", "bf16[]{:T(256)}"],
        "{text}"
    );
    let total = lines.last().unwrap();
    assert!(total.contains("total: 5 distinct shapes"), "{text}");
    assert!(
        total
            .split_whitespace()
            .take(3)
            .eq(["10", "82838528", "1020"]),
        "{total}"
    );
}

#[test]
fn refused_shapes_files_and_arguments() {
    let module = "HloModule m\nENTRY e {\n  a = f32[?]{0} parameter(0)\n  b = f32[4]{0:SC(0:2)(1:2)} parameter(1)\n  \
                  ROOT c = f32[<=2]{0} negate(f32[<=2]{0} a)\n}\n";
    let out = run(&["--hlo", "-"], module);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("f32[<=2]{0}"), "{text}");
    assert!(text.contains("total: 1 distinct shapes"), "{text}");
    assert!(text.contains("refused shapes"), "{text}");
    assert!(
        text.contains("f32[?]{0}: unbounded dynamic dim `?`"),
        "{text}"
    );
    assert!(
        text.contains("f32[4]{0:SC(0:2)(1:2)}: `SC(...)` is not supported"),
        "{text}"
    );

    let out = run(&["--hlo", "-", "--tsv"], module);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "f32[<=2]{0}\t1\t8\t0\n"
    );
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("refused `f32[?]{0}`"));

    let out = run(&["--hlo", "/no/such/file.hlo"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /no/such/file.hlo"));
    let out = run(&["--hlo", "-", "f32[2]"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--tsv", "f32[2]"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tsv goes with --hlo"));
    // No shapes at all: an empty table, not an error.
    let out = run(&["--hlo", "-"], "HloModule empty\n");
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("total: 0 distinct shapes"));
}

/// A byte that is not UTF-8, in a comment and in a metadata string, costs
/// neither the file nor a shape: the table is the one for the same module
/// with those bytes in ASCII, and a warning says where the first one was.
#[test]
fn bytes_that_are_not_utf8_are_read_lossily() {
    let module = |odd: &[u8]| {
        let mut m = b"HloModule m\n// written by caf".to_vec();
        m.extend_from_slice(odd);
        m.extend_from_slice(
            b"\nENTRY e {\n  a = bf16[3,1000]{1,0:T(8,128)(2,1)} parameter(0), metadata={op_name=\"",
        );
        m.extend_from_slice(odd);
        m.extend_from_slice(b"\"}\n  ROOT b = bf16[3,1000]{1,0:T(8,128)(2,1)} negate(a)\n}\n");
        m
    };
    let plain = run_bytes(&["--hlo", "-"], &module(b"e"));
    assert!(plain.status.success());
    let want = String::from_utf8(plain.stdout).unwrap();
    assert!(want.contains("bf16[3,1000]{1,0:T(8,128)(2,1)}"), "{want}");

    // Latin-1 `\xe9` and a lone continuation byte.
    for odd in [&b"\xe9"[..], &b"\x80"[..]] {
        let bytes = module(odd);
        let out = run_bytes(&["--hlo", "-"], &bytes);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
        let first = "HloModule m\n// written by caf".len();
        assert_eq!(
            stderr,
            format!(
                "warning: standard input is not valid UTF-8 (first at byte {first}): \
                 such bytes are read as U+FFFD\n"
            )
        );

        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("latin1.hlo");
        std::fs::write(&path, &bytes).unwrap();
        let out = run(&["--hlo", path.to_str().unwrap(), "--tsv"], "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        // Two arrays of 8 x 1024 slots of 2 bytes, 3 x 1000 of them elements.
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "bf16[3,1000]{1,0:T(8,128)(2,1)}\t2\t16384\t10384\n"
        );
        assert!(
            stderr.starts_with(&format!("warning: {} is not valid UTF-8", path.display())),
            "{stderr}"
        );
    }
}
