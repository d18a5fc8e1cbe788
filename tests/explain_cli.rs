//! The `explain` example as a user runs it: the figures' text output against
//! snapshots in `tests/snapshots/` (`BLESS=1` rewrites them; review the
//! diff), exit status 2 with the macro's message for a bad spec, and the
//! SVG, TPU and C outputs.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use xla_layout::parse;
use xla_layout::render::{CCode, Svg};

fn run(args: &[&str]) -> Output {
    Command::new(common::explain())
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "explain {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compares with `tests/snapshots/{name}`, or writes it under `BLESS=1`.
fn snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if common::bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b);
        panic!(
            "{} differs (first at line {}); rerun with BLESS=1 and review the diff\n--- actual ---\n{actual}",
            path.display(),
            line.map_or_else(|| "the end".to_string(), |l| (l + 1).to_string())
        );
    }
}

#[test]
fn figure_1_snapshot() {
    snapshot(
        "figure1.txt",
        &stdout(&["f32[3,5]{1,0:T(2,2)}", "--index", "2,3", "--offset", "9"]),
    );
}

#[test]
fn figure_2_snapshot() {
    snapshot(
        "figure2.txt",
        &stdout(&[
            "bf16[4,8]{1,0:T(2,4)(2,1)}",
            "--index",
            "2,1",
            "--offset",
            "16",
        ]),
    );
}

#[test]
fn cross_tile_snapshot() {
    snapshot(
        "cross_tile.txt",
        &stdout(&["f32[8,8]{1,0:T(2,4)(2,1,1,1)}", "--index", "6,5"]),
    );
}

#[test]
fn combining_snapshot() {
    // The slice whose rows run through the three combined dims' last one.
    snapshot(
        "combining.txt",
        &stdout(&[
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "--slice",
            "0,0,:,:,0",
            "--index",
            "1,3,5,7,9",
        ]),
    );
}

#[test]
fn a_bad_spec_gives_the_macros_message_and_status_2() {
    for spec in [
        "f32[3,5]{1,0:T(2,0)}",
        "f32[3,5]{1,1:T(0,2)}",
        "f33[2]",
        "f32[2",
        "(f32[2], s8[3])",
    ] {
        let out = run(&[spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let expected = format!("{}\n", parse(spec).unwrap_err().report(spec));
        assert_eq!(String::from_utf8(out.stderr).unwrap(), expected, "{spec}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn bad_arguments_give_status_2() {
    for args in [
        &["f32[3,5]", "--index", "3,0"][..],
        &["f32[3,5]", "--index", "1"],
        &["f32[3,5]", "--index", "a,b"],
        &["f32[3,5]", "--offset", "15"],
        &["f32[3,5]", "--slice", "0,0,0"],
        &["f32[3,5]", "--c", "--prefix", "9lives"],
        &["f32[3,5]", "--frobnicate"],
        &[],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8(out.stderr)
                .unwrap()
                .starts_with("error: "),
            "{args:?}"
        );
    }
    assert!(stdout(&["--help"]).starts_with("usage: xla-layout"));
}

#[test]
fn the_worked_example_and_its_inverse() {
    let text = stdout(&["f32[3,5]{1,0:T(2,2)}", "--index", "2,3", "--offset", "17"]);
    assert!(text.contains("index (2,3) is at offset 17\n"));
    assert!(text.contains("= (1*3 + 1)*2*2 + (0*2 + 1)\n         = 17\n"));
    assert!(text.contains("offset 17 holds index (2,3)\n"));
    let text = stdout(&["f32[3,5]{1,0:T(2,2)}", "--offset", "9"]);
    assert!(text.contains("offset 9 is padding\n"));
}

#[test]
fn colour_only_on_a_terminal_or_when_asked() {
    // The tests' stdout is a pipe: no escapes unless asked for.
    assert!(!stdout(&["f32[3,5]{1,0:T(2,2)}"]).contains('\x1b'));
    assert!(stdout(&["f32[3,5]{1,0:T(2,2)}", "--color", "always"]).contains("\x1b[38;5;16;48;5;"));
    let out = Command::new(common::explain())
        .args(["f32[3,5]{1,0:T(2,2)}"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
}

#[test]
fn svg_is_written_and_parses() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explain_fig2.svg");
    let text = stdout(&[
        "bf16[4,8]{1,0:T(2,4)(2,1)}",
        "--svg",
        path.to_str().unwrap(),
    ]);
    assert!(text.ends_with(&format!("wrote {}\n", path.display())));
    let svg = std::fs::read_to_string(&path).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(
        svg,
        Svg::new(&parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap()).to_string()
    );
    let out = run(&["f32[2]", "--svg", "/nonexistent-dir/x.svg"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn tpu_shows_the_chosen_tiling_and_its_cost() {
    let text = stdout(&["--tpu", "bf16[3,1000]"]);
    assert!(
        text.starts_with(
            "TPU tiling (SPEC.md section 6) for bf16[3,1000]:\n  bf16[3,1000]{1,0:T(4,128)(2,1)}\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("cost: 8192 bytes tiled, 6000 bytes untiled, 2192 bytes of padding"),
        "{text}"
    );
    assert!(text.contains("layout    bf16[3,1000]{1,0:T(4,128)(2,1)}\n"));
}

#[test]
fn c_output_is_the_library_emitter() {
    let spec = "bf16[4,8]{1,0:T(2,4)(2,1)}";
    let l = parse(spec).unwrap();
    assert_eq!(stdout(&["--c", spec]), CCode::new(&l).to_string());
    assert_eq!(
        stdout(&["--c", spec, "--prefix", "fig2"]),
        CCode::with_prefix(&l, "fig2").unwrap().to_string()
    );
    // With --tpu, the C is for the chosen tiling.
    assert!(stdout(&["--tpu", "--c", "f32[2,256]"]).contains("f32[2,256]{1,0:T(2,128)}"));
}

/// The picture the README shows is what the tool prints today: every line
/// of it, in order (the README leaves some lines out, and says so).
#[test]
fn readme_picture_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let command = "$ xla-layout 'f32[3,5]{1,0:T(2,2)}' --index 2,3";
    let output = stdout(&["f32[3,5]{1,0:T(2,2)}", "--index", "2,3"]);
    let text = std::fs::read_to_string(root.join("README.md")).unwrap();
    let at = text
        .find(command)
        .unwrap_or_else(|| panic!("no README shows `{command}`"));
    let block = text[at..].split_once('\n').unwrap().1;
    let block = block.split("```").next().unwrap();
    let mut printed = output.lines();
    let mut shown = 0;
    for line in block.lines() {
        assert!(
            printed.any(|p| p == line),
            "the picture in README.md is out of date: `{line}` is not printed there, in that order"
        );
        shown += 1;
    }
    // The grid and the worked example, not a line or two of them.
    assert!(shown >= 15, "the README shows only {shown} lines");
}

#[test]
fn reshape_and_transpose_show_the_verdict() {
    let out = stdout(&[
        "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
        "--reshape",
        "bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}",
    ]);
    assert_eq!(
        out,
        "reshape bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} -> \
         bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}: a bitcast, no data moves\n"
    );
    let out = stdout(&["f32[2,3]", "--reshape", "f32[6]{0:T(4)}"]);
    assert_eq!(
        out,
        "reshape f32[2,3]{1,0} -> f32[6]{0:T(4)}: not a bitcast\n  `from` takes `24` bytes \
         of storage and `to` takes `32`; a bitcast keeps the storage size\n"
    );
    let out = stdout(&["f32[2,3]", "--transpose", "f32[3,2]{0,1}", "--perm", "1,0"]);
    assert!(out.ends_with(": a bitcast, no data moves\n"), "{out}");
}

/// The first moving element is stepped through both layouts by the same
/// renderer as `--index`, and its slots are the library's.
#[test]
fn a_moving_element_is_worked_out_on_both_sides() {
    let (from, to) = ("f32[8,256]{1,0:T(8,128)}", "f32[2,4,256]{2,1,0:T(4,128)}");
    let out = stdout(&[from, "--reshape", to]);
    let (f, t) = (parse(from).unwrap(), parse(to).unwrap());
    let err = xla_layout::bitcast::reshape(&f, &t).unwrap_err();
    let xla_layout::bitcast::Mismatch::Moved(m) = err else {
        panic!("{err}")
    };
    let steps = |l, i: &[usize]| {
        xla_layout::render::IndexSteps::new(l, i)
            .unwrap()
            .to_string()
    };
    let expected = format!(
        "reshape {f} -> {t}: not a bitcast\n  {err}\n\nin `from`, {f}:\n{}\nin `to`, {t}:\n{}\n",
        steps(&f, &m.from_index),
        steps(&t, &m.to_index)
    );
    assert_eq!(out, expected);
    assert!(out.contains("index (0,128) is at offset 1024"));
    assert!(out.contains("index (0,0,128) is at offset 512"));
    let out = stdout(&["f32[2,3]", "--transpose", "f32[3,2]", "--perm", "1,0"]);
    assert!(out.contains("index (0,1) is at offset 1\n"), "{out}");
    assert!(out.contains("index (1,0) is at offset 2\n"), "{out}");
}

#[test]
fn bad_bitcast_arguments_give_status_2() {
    for (args, message) in [
        (
            &["f32[2,3]", "--transpose", "f32[3,2]", "--perm", "1,1"][..],
            "error: --transpose: `perm[1]` repeats dim `1`; each dim must appear exactly once\n",
        ),
        (
            &["f32[2,3]", "--transpose", "f32[2,3]", "--perm", "1,0"],
            "error: --transpose: dim `0` of `to` is `2`, expected `3`: dim `1` of `from`, as `perm[0]` says\n",
        ),
        (
            &["f32[2,3]", "--transpose", "f32[3,2]"],
            "error: --transpose needs --perm\n",
        ),
        (
            &["f32[2,3]", "--reshape", "f32[6]", "--perm", "0"],
            "error: give one of --reshape and --transpose\n",
        ),
        (
            &["f32[2,3]", "--perm", "0"],
            "error: --perm goes with --transpose\n",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with(message), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    // A bad `to` is reported as a bad SPEC is.
    let bad = "f32[6]{0:T(0)}";
    let out = run(&["f32[2,3]", "--reshape", bad]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("{}\n", parse(bad).unwrap_err().report(bad))
    );
}

/// A TPU tiling the library refuses reads like every other error of the
/// command: `error:`, the spec, the reason, status 2; no byte position,
/// which would point into text the user never wrote.
#[test]
fn a_refused_tpu_tiling_is_an_error_like_the_others() {
    let out = run(&["--tpu", "u8[18446744073709551615]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the TPU tiling of `u8[18446744073709551615]{0}`: \
         storage in slots does not fit in `usize`\n"
    );
}
