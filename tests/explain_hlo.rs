//! `xla-layout --hlo`: whole HLO modules from XLA's tests (TPU layouts such
//! as `T(8,128)(2,1)`) audited buffer by buffer, each row's bytes against
//! the reference's size arithmetic, the buffers against a hand count, what
//! the report tells a user to change, and the failures a user meets
//! (refused shapes, missing files, bad arguments).

mod common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::reference::tiled_shape;
use xla_layout::parse;

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
    // A command that refuses its arguments exits without reading its input,
    // which closes the pipe: its status and message are what count.
    let _ = child.stdin.take().unwrap().write_all(stdin);
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

/// The rows the command prints for `path` with `flags`, split at tabs
/// into `N` fields each.
fn tsv_rows<const N: usize>(path: &Path, flags: &[&str]) -> Vec<[String; N]> {
    let mut args = vec!["--hlo", path.to_str().unwrap()];
    args.extend_from_slice(flags);
    let out = run(&args, "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<String> = line.split('\t').map(String::from).collect();
            f.try_into().unwrap_or_else(|f| panic!("{f:?}"))
        })
        .collect()
}

/// The `--buffers --tsv` rows: computation, instruction, tuple index,
/// spec, storage bytes, padding bytes, opcode.
fn buffers(path: &Path) -> Vec<[String; 7]> {
    tsv_rows(path, &["--tsv", "--buffers"])
}

#[test]
fn rows_match_the_reference_and_a_hand_count() {
    let rows = tsv(&corpus("dynamic_slices.hlo"));
    // The buffers of ENTRY only: its parameters, the two arrays of the
    // `slices` fusion's tuple and the `bitcast` fusion; the fused
    // computations' instructions and the root tuple keep none.
    let expected = [
        ("s32[1]{0:T(128)}", 2, 512, 508),
        ("u32[]{:T(128)}", 2, 512, 508),
        ("s32[16]{0:T(128)}", 1, 512, 448),
        (
            "bf16[8,1024,1,20,256,1,1,1]{4,1,7,3,2,0,6,5:T(8,128)(2,1)}",
            1,
            83_886_080,
            0,
        ),
        (
            "bf16[8,1024,1,20,256,1,1]{4,1,3,0,6,5,2:T(8,128)(2,1)}",
            1,
            83_886_080,
            0,
        ),
    ];
    let got: Vec<(&str, u64, u64, u64)> = rows
        .iter()
        .map(|(s, a, b, c)| (s.as_str(), *a, *b, *c))
        .collect();
    assert_eq!(got, expected);

    // Buffers counted by hand in each module.
    let hand = [
        ("audit_calls.hlo", 18),
        ("conv_with_clamp.hlo", 10),
        ("dynamic_slices.hlo", 7),
        ("fusion_constant_sinking.hlo", 7),
        ("layout_moves.hlo", 12),
        ("loop_fusion_dynamic_update_slice.hlo", 4),
        ("while_offload.hlo", 11),
    ];
    let modules = modules();
    assert_eq!(modules.len(), hand.len());
    for (path, (name, count)) in modules.iter().zip(hand) {
        assert!(path.ends_with(name), "{}", path.display());
        let rows = tsv(path);
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
        let each = buffers(path);
        assert_eq!(each.len(), count, "{}", path.display());
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), count as u64);
        for row in &each {
            let (storage, padding) = reference_bytes(&row[3]);
            assert_eq!(
                [row[4].parse::<u64>().unwrap(), row[5].parse().unwrap()],
                [storage, padding],
                "{row:?}"
            );
            let shape = rows.iter().find(|r| r.0 == row[3]).unwrap();
            assert_eq!((shape.2, shape.3), (storage, padding));
        }
    }
}

#[test]
fn buffers_of_loops_branches_and_calls() {
    // Written by hand from the module: what runs on its own (the while's
    // condition and body, both conditionals' branches, what the call
    // applies, ENTRY) keeps buffers; the fusion body and the reducer do
    // not, nor do parameters but ENTRY's, get-tuple-element, tuple, while,
    // conditional, call and bitcast. A nested tuple's arrays are `1.0`, `1.1`.
    let expected = [
        "branch_0 cc 0 f32[8,128]{1,0:T(8,128)} custom-call",
        "branch_0 cc 1.0 s32[] custom-call",
        "branch_0 cc 1.1 f32[3]{0:T(128)} custom-call",
        "branch_1 f - f32[8,128]{1,0:T(8,128)} fusion",
        "branch_1 k - s32[] constant",
        "branch_1 v - f32[3]{0:T(128)} constant",
        "cond limit - s32[] constant",
        "cond lt - pred[] compare",
        "body one - s32[] constant",
        "body next - s32[] add",
        "body y - f32[8,128]{1,0:T(8,128)} fusion",
        "callee zero - f32[] constant",
        "callee sum - f32[8]{0:T(128)} reduce",
        "on_true tn - f32[8]{0:T(128)} negate",
        "on_false ea - f32[8]{0:T(128)} abs",
        "main x0 - f32[8,128]{1,0:T(8,128)} parameter",
        "main i0 - s32[] parameter",
        "main p0 - pred[] parameter",
    ];
    let got: Vec<String> = buffers(&corpus("audit_calls.hlo"))
        .iter()
        .map(|r| {
            let index = if r[2].is_empty() { "-" } else { &r[2] };
            format!("{} {} {index} {} {}", r[0], r[1], r[3], r[6])
        })
        .collect();
    assert_eq!(got, expected);

    // A module without ENTRY keeps no buffers, and says so.
    let module = "HloModule m\n%f (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  \
                  ROOT %n = f32[2]{0} negate(%p)\n}\n";
    let out = run(&["--hlo", "-", "--tsv", "--buffers"], module);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no ENTRY computation"));
    let out = run(&["--hlo", "-"], module);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("total: 0 distinct shapes"), "{text}");
    assert!(
        text.contains("no ENTRY computation, so no buffers to list"),
        "{text}"
    );
    // An instruction over two lines is not guessed at: the report says so.
    let module = "HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT b = f32[2]{0}\n  negate(a)\n}\n";
    let text = String::from_utf8(run(&["--hlo", "-"], module).stdout).unwrap();
    assert!(
        text.contains("2 lines read as no instruction, header or `}` (the first is line 4)"),
        "{text}"
    );
    assert!(text.contains("total: 1 distinct shapes"), "{text}");
}

#[test]
fn the_report_says_what_to_change() {
    let path = corpus("fusion_constant_sinking.hlo");
    let out = run(&["--hlo", path.to_str().unwrap()], "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("module fusion.2653: 7 buffers in 1 of its 5 computations"),
        "{text}"
    );
    // The worst shape first, the dim its tiles pad, a cheaper order of its
    // dims from the TPU chooser, and the instructions that make it.
    let detail = text
        .split("\n\n")
        .find(|p| p.starts_with("bf16[128,16,8,1]{1,2,0,3:T(8,128)(2,1)S(1)}"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        detail.lines().skip(1).map(str::trim).collect::<Vec<_>>(),
        [
            "1 buffer, 229376 bytes of padding in all (229376 each)",
            "padded: by T(8,128): dim 1, 16 -> 128 (+112)",
            "TPU chooser: picks this layout; with dim 0 most minor and dim 1 next, \
             bf16[128,16,8,1]{0,1,2,3:T(8,128)(2,1)S(1)} saves 229376 bytes each \
             (a transpose where it is made)",
            "instructions: fusion.2653/copy.2",
        ],
        "{text}"
    );
    let cheaper = parse("bf16[128,16,8,1]{0,1,2,3:T(8,128)(2,1)S(1)}").unwrap();
    assert_eq!(
        reference_bytes(&cheaper.to_string()),
        (262_144 - 229_376, 0)
    );
    // Memory spaces explained once, with what each holds.
    assert_eq!(
        text.matches("memory spaces: S(n) says where a buffer lives")
            .count(),
        1
    );
    assert!(
        text.contains("  device memory: 4 buffers, 397824 bytes\n  S(1): 3 buffers, 397312 bytes"),
        "{text}"
    );
}

#[test]
fn padded_dims_against_the_reference() {
    // Padded dims against the reference's first tiling level: a combined
    // group, a scalar's added dim, and padding from a later level.
    let module = "HloModule m\nENTRY e {\n  \
                  a = f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)} parameter(0)\n  \
                  b = bf16[3,5]{1,0:T(2,128)(4,1)} parameter(1)\n  \
                  c = s32[]{:T(128)} parameter(2)\n  \
                  d = f32[1000,3]{1,0:T(8,128)} parameter(3)\n}\n";
    let text = String::from_utf8(run(&["--hlo", "-"], module).stdout).unwrap();
    for (spec, padded, chooser) in [
        (
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "by T(*,*,2,*,3): dims 3,4 combined, 110 -> 111 (+1)",
            "TPU chooser: f32[2,7,8,11,10]{4,3,2,1,0:T(8,128)} takes 917504 bytes each, more",
        ),
        (
            "bf16[3,5]{1,0:T(2,128)(4,1)}",
            "by T(2,128): dim 0, 3 -> 4 (+1); dim 1, 5 -> 128 (+123); \
             512 more slots from later tiling levels and L(n)",
            "TPU chooser: bf16[3,5]{1,0:T(4,128)(2,1)} saves 1024 bytes each",
        ),
        (
            "s32[]{:T(128)}",
            "by T(128): the dim of 1 the tile adds to a lower rank, 1 -> 128 (+127)",
            "TPU chooser: s32[] saves 508 bytes each",
        ),
        (
            "f32[1000,3]{1,0:T(8,128)}",
            "by T(8,128): dim 1, 3 -> 128 (+125)",
            "TPU chooser: picks this layout; with dim 0 most minor and dim 1 next, \
             f32[1000,3]{0,1:T(4,128)} saves 495616 bytes each (a transpose where it is made)",
        ),
    ] {
        let detail = text
            .split("\n\n")
            .find(|p| p.starts_with(&format!("{spec}\n")))
            .unwrap_or_else(|| panic!("{spec}: {text}"));
        let lines: Vec<&str> = detail.lines().map(str::trim).collect();
        assert_eq!(lines[2], format!("padded: {padded}"), "{text}");
        assert_eq!(lines[3], chooser, "{text}");
        // The slots the first level leaves, by the reference.
        let l = parse(spec).unwrap();
        let mut shape: Vec<usize> = l
            .minor_to_major()
            .iter()
            .rev()
            .map(|&d| l.dims()[d])
            .collect();
        shape = tiled_shape(&shape, &common::check::ref_tile(&l.tiles()[0]));
        let level_one: usize = shape.iter().product();
        // Each padded group's size replaces its dims' product.
        let (mut num, mut den) = (l.dims().iter().product::<usize>(), 1usize);
        for pair in padded.split(", ").flat_map(|p| p.split("; ")) {
            let Some((from, to)) = pair.rsplit_once(" -> ") else {
                continue;
            };
            let from = from.rsplit(' ').next().unwrap().parse::<usize>().unwrap();
            let to = to.split(' ').next().unwrap().parse::<usize>().unwrap();
            num *= to;
            den *= from;
        }
        assert_eq!(num, level_one * den, "{spec}: {padded}");
        let more = padded
            .split("; ")
            .find_map(|p| p.strip_suffix(" more slots from later tiling levels and L(n)"))
            .map_or(0, |n| n.parse::<usize>().unwrap());
        assert_eq!(level_one + more, l.storage_len(), "{spec}");
    }
    assert!(
        text.contains("the TPU chooser's layouts for these shapes would save "),
        "{text}"
    );
    assert!(!text.contains("memory spaces"), "no S(n), no line: {text}");
}

#[test]
fn the_table_names_what_tpu_users_chase() {
    let path = corpus("conv_with_clamp.hlo");
    let out = run(&["--hlo", path.to_str().unwrap()], "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.contains("count")).unwrap();
    assert!(
        lines[header].contains("count") && lines[header].contains("padding each"),
        "{text}"
    );
    // A bf16 scalar in a (256) tile: 512 bytes for 2 of data.
    let words: Vec<&str> = lines[header + 1].split_whitespace().collect();
    assert_eq!(
        words,
        ["2", "512", "510", "99.6%", "bf16[]{:T(256)}"],
        "{text}"
    );
    let total = lines.iter().find(|l| l.contains("total:")).unwrap();
    assert!(total.contains("total: 5 distinct shapes"), "{text}");
    assert!(
        total
            .split_whitespace()
            .take(3)
            .eq(["10", "82838528", "1020"]),
        "{total}"
    );
    assert!(
        text.contains("instructions: entry/constant.123, entry/constant.127\n"),
        "{text}"
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
    let out = run(&["--buffers", "f32[2]"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--buffers goes with --hlo"));
    let out = run(&["--moves", "f32[2]"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--moves goes with --hlo"));
    let out = run(&["--hlo", "-", "--moves", "--buffers", "--tsv"], module);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--buffers and --moves are two reports"));
    // Layout changes that cannot be judged say why, and count nowhere.
    let broken = "HloModule m\nENTRY e {\n  a = f32[2,3]{1,0} parameter(0)\n  \
                  b = f32[2,3]{0,1} copy(nowhere)\n  c = f32[3,2]{1,0} transpose(a), dimensions={1,x}\n  \
                  d = f32[3,3]{1,0} copy(a)\n  e = f32[?]{0} bitcast(a)\n}\n";
    let out = run(&["--hlo", "-", "--moves"], broken);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for note in [
        "note: line 4: `b` reads `nowhere`, which the computation does not define before it",
        "note: line 5: `c` has dimensions `{1,x}`, not a list of dims",
        "note: line 6: `d`: a copy keeps the dims, but `f32[2,3]{1,0}` becomes `f32[3,3]{1,0}`",
        "note: line 7: `e`: `f32[?]{0}`: unbounded dynamic dim `?`",
    ] {
        assert!(text.contains(note), "{note}: {text}");
    }
    assert!(text.contains("bytes moved by layout changes: 0 "), "{text}");
    let out = run(&["--hlo", "-", "--moves", "--tsv"], broken);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "");
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 4);
    let out = run(&["--hlo", "-", "--buffers"], module);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--buffers goes with --tsv"));
    // No shapes at all: an empty table, not an error.
    let out = run(&["--hlo", "-"], "HloModule empty\n");
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("total: 0 distinct shapes"));
}

#[test]
fn large_modules_stream_quietly() {
    // Over the size from which a terminal gets a progress line: through a
    // pipe there is none, and standard input is read twice like a file.
    let mut module = String::from(
        "HloModule big\nENTRY e {\n  p = bf16[8,3,1000]{2,1,0:T(4,128)(2,1)} parameter(0)\n",
    );
    let mut n = 0;
    while module.len() < 5 << 20 {
        let _ = writeln!(
            module,
            "  n.{n} = bf16[8,3,1000]{{2,1,0:T(4,128)(2,1)}} negate(bf16[8,3,1000]{{2,1,0:T(4,128)(2,1)}} p), \
             metadata={{op_name=\"jit(f)/neg\" source_file=\"/src/f.py\" source_line={n}}}"
        );
        n += 1;
    }
    module.push_str("  ROOT t = () tuple()\n}\n");
    let out = run(&["--hlo", "-", "--tsv"], &module);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    let (storage, padding) = reference_bytes("bf16[8,3,1000]{2,1,0:T(4,128)(2,1)}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "bf16[8,3,1000]{{2,1,0:T(4,128)(2,1)}}\t{}\t{storage}\t{padding}\n",
            n + 1
        )
    );
}

/// The `--moves --tsv` rows: computation, instruction, opcode, operand
/// spec, result spec, verdict, bytes moved, tuple index.
fn moves(path: &Path) -> Vec<[String; 8]> {
    tsv_rows(path, &["--moves", "--tsv"])
}

/// Every element's slot, in row-major order of its index, by the reference.
fn slots(l: &xla_layout::Layout) -> Vec<usize> {
    common::check::ref_layout(
        l.element_type().name(),
        l.dims(),
        l.minor_to_major(),
        &common::check::ref_tiles(l)
            .iter()
            .map(Vec::as_slice)
            .collect::<Vec<_>>(),
        l.tail_alignment(),
    )
    .offsets_row_major()
}

/// The verdict by brute force over every element: a change keeps the bytes
/// when the storage, element type and width are the same and each element
/// sits at the same slot on both sides (for a transpose, the element at
/// operand index `i` is at result index `j` with `j[k] = i[perm[k]]`).
fn brute_verdict(opcode: &str, from: &str, to: &str, perm: Option<&[usize]>) -> &'static str {
    let (f, t) = (parse(from).unwrap(), parse(to).unwrap());
    let same_bytes = reference_bytes(from).0 == reference_bytes(to).0
        && f.element_type() == t.element_type()
        && f.element_bits() == t.element_bits();
    let (fs, ts) = (slots(&f), slots(&t));
    let transposed = |perm: &[usize]| {
        same_bytes
            && (0..fs.len()).all(|p| {
                let i = common::reference::unravel(p, f.dims());
                let j: Vec<usize> = perm.iter().map(|&d| i[d]).collect();
                ts[common::reference::ravel(&j, t.dims())] == fs[p]
            })
    };
    let reshaped = same_bytes && fs == ts;
    match opcode {
        "copy" if f.memory_space() != t.memory_space() => "moves",
        "copy" if reshaped => "bitcast",
        "transpose" if transposed(perm.unwrap()) => "bitcast",
        "copy" | "transpose" => "moves",
        _ if reshaped => "reshape-bitcast",
        _ => {
            // Every permutation of the dims that gives `to`'s dims.
            let rank = f.rank();
            let mut perm: Vec<usize> = (0..rank).collect();
            let mut any = false;
            loop {
                if t.rank() == rank
                    && (0..rank).all(|k| t.dims()[k] == f.dims()[perm[k]])
                    && transposed(&perm)
                {
                    any = true;
                }
                // Next permutation in lexicographic order.
                let Some(k) = (1..rank).rev().find(|&k| perm[k - 1] < perm[k]) else {
                    break;
                };
                let l = (k..rank).rev().find(|&l| perm[l] > perm[k - 1]).unwrap();
                perm.swap(k - 1, l);
                perm[k..].reverse();
            }
            if any {
                "transpose-bitcast"
            } else {
                "reinterpret"
            }
        }
    }
}

#[test]
fn layout_moves_against_brute_force() {
    let rows = moves(&corpus("layout_moves.hlo"));
    let got: Vec<String> = rows
        .iter()
        .map(|r| {
            let index = if r[7].is_empty() {
                String::new()
            } else {
                format!(" #{}", r[7])
            };
            format!("{}/{}{index} {} {}", r[0], r[1], r[2], r[5])
        })
        .collect();
    assert_eq!(
        got,
        [
            "fused_transpose/t transpose bitcast",
            "fused_copy/qc copy moves",
            "main/to_fast copy moves",
            "main/untiled copy moves",
            "main/same copy bitcast",
            "main/columns copy moves",
            "main/split bitcast reshape-bitcast",
            "main/halves bitcast reinterpret",
            "main/flipped bitcast transpose-bitcast",
            "main/moved transpose moves",
            "main/pair_copy #0 copy bitcast",
            "main/pair_copy #1 copy bitcast",
        ]
    );
    let mut moved = 0;
    for r in &rows {
        let perm: Option<Vec<usize>> = (r[2] == "transpose").then(|| vec![1, 0]);
        assert_eq!(
            r[5],
            brute_verdict(&r[2], &r[3], &r[4], perm.as_deref()),
            "{r:?}"
        );
        let bytes: u64 = r[6].parse().unwrap();
        let expected = if r[5] == "moves" {
            reference_bytes(&r[4]).0
        } else {
            0
        };
        assert_eq!(bytes, expected, "{r:?}");
        moved += bytes;
    }
    // The report totals them and lists the largest first.
    let text = String::from_utf8(
        run(
            &[
                "--hlo",
                corpus("layout_moves.hlo").to_str().unwrap(),
                "--moves",
            ],
            "",
        )
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains(&format!("bytes moved by layout changes: {moved} ")),
        "{text}"
    );
    assert!(
        text.starts_with(
            "bitcasts: 3 (1 of a reshape, 1 of a transpose, 1 reinterpreting the bytes)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\ncopies: 7 (4 moving bytes, 3 that could be bitcasts: no byte moves)"),
        "{text}"
    );
    let listed: Vec<u64> = text
        .lines()
        .skip_while(|l| *l != "largest moves:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(listed.len(), 5, "{text}");
    assert!(listed.windows(2).all(|w| w[0] >= w[1]), "{text}");
}

#[test]
fn irregular_moves_and_the_corpus_against_brute_force() {
    // Tiles that split a dim off its digits are decided from the layouts'
    // periods, on arrays of any size.
    let irregular =
        "HloModule m\nENTRY e {\n  a = f32[4096,4096]{1,0:T(3,4)(2,3)} parameter(0)\n  \
                     b = f32[4096,4096]{1,0:T(3,4)(2,3)} copy(a)\n  \
                     c = f32[4096,4096]{1,0:T(3,4)(2,3)} bitcast(a)\n  \
                     d = f32[7,10]{1,0:T(3,4)(2,3)} parameter(1)\n  \
                     e = f32[7,10]{1,0:T(3,4)(2,3)} copy(d)\n  \
                     f = f32[7,10]{0,1:T(3,4)(2,3)} copy(d)\n}\n";
    let out =
        String::from_utf8(run(&["--hlo", "-", "--moves", "--tsv"], irregular).stdout).unwrap();
    let verdicts: Vec<&str> = out.lines().map(|l| l.split('\t').nth(5).unwrap()).collect();
    assert_eq!(
        verdicts,
        ["bitcast", "reshape-bitcast", "bitcast", "moves"],
        "{out}"
    );
    for to in ["f32[7,10]{1,0:T(3,4)(2,3)}", "f32[7,10]{0,1:T(3,4)(2,3)}"] {
        let want = if to.contains("{1,0") {
            "bitcast"
        } else {
            "moves"
        };
        assert_eq!(
            brute_verdict("copy", "f32[7,10]{1,0:T(3,4)(2,3)}", to, None),
            want
        );
    }
    let text = String::from_utf8(run(&["--hlo", "-", "--moves"], irregular).stdout).unwrap();
    assert!(
        text.contains("copies: 3 (1 moving bytes, 2 that could be bitcasts: no byte moves)\n"),
        "{text}"
    );

    // Every layout change of the corpus modules, small enough to enumerate.
    for path in modules() {
        for r in moves(&path) {
            let elements: usize = parse(&r[3]).unwrap().len();
            if elements <= 1 << 16 && r[2] != "transpose" {
                assert_eq!(r[5], brute_verdict(&r[2], &r[3], &r[4], None), "{r:?}");
            }
        }
    }
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
