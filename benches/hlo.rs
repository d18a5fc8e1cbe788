//! `xla-layout --hlo` on a generated TPU-like module of 16 and 100 MB:
//! fused computations of a few instructions each, operand shapes written
//! beside the operands and metadata on every line as XLA dumps them, and an
//! ENTRY and a `while` body that call them. Each bench audits the whole
//! module (both passes, the report to a sink; one pass for `moves`, which
//! judges every bitcast and copy), so MB/s is divan's bytes throughput.
//!
//! `cargo bench --bench hlo`. The 100 MB module is also left in the
//! temporary directory (`xla_layout_bench_100mb.hlo`), for measuring the
//! command's peak memory:
//! `/usr/bin/time -v target/release/xla-layout --hlo $TMPDIR/xla_layout_bench_100mb.hlo`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;

// The command's own audit, so the bench times what users run.
#[allow(dead_code)]
#[path = "../src/cli/audit.rs"]
mod audit;

fn main() {
    divan::main();
}

/// Array shapes the generated instructions produce, TPU tiled, some padded.
const SHAPES: [&str; 8] = [
    "bf16[8,1024,1280]{2,1,0:T(8,128)(2,1)}",
    "bf16[8,1024,1280]{1,2,0:T(8,128)(2,1)}",
    "f32[8,1024]{1,0:T(8,128)}",
    "bf16[8,3,1000]{2,1,0:T(4,128)(2,1)}",
    "s32[]{:T(128)}",
    "f32[1280]{0:T(1024)}",
    "bf16[8,1024,1280]{2,1,0:T(8,128)(2,1)S(1)}",
    "s8[16,2048]{1,0:T(8,128)(4,1)}",
];

/// A module of about `bytes` bytes of text.
fn module(bytes: usize) -> String {
    let mut text = String::from("HloModule bench, is_scheduled=true\n\n");
    let mut n = 0usize;
    let mut fused = Vec::new();
    // The calls from ENTRY and the loop body add about a fifth.
    while text.len() * 6 / 5 < bytes {
        let a = SHAPES[n % SHAPES.len()];
        let b = SHAPES[(n * 7 + 3) % SHAPES.len()];
        let _ = write!(
            text,
            "%fused_computation.{n} (param_0.{n}: bf16[8,1024,1280], param_1.{n}: s32[]) -> ({a}, {b}) {{\n  \
             %param_0.{n} = {a} parameter(0)\n  \
             %param_1.{n} = s32[]{{:T(128)}} parameter(1)\n  \
             %convert.{n} = {b} convert({a} %param_0.{n}), metadata={{op_name=\"jit(step)/jvp(model)/layer_{n}/convert_element_type\" source_file=\"/src/model.py\" source_line={n}}}\n  \
             %copy.{n} = {a} copy({a} %param_0.{n}), metadata={{op_name=\"jit(step)/transpose[permutation=(0, 2, 1)]\" source_file=\"/src/model.py\" source_line={n}}}\n  \
             %bitcast.{n} = {b} bitcast({b} %convert.{n})\n  \
             ROOT %tuple.{n} = ({a}, {b}) tuple({a} %copy.{n}, {b} %bitcast.{n})\n}}\n\n"
        );
        fused.push((n, a, b));
        n += 1;
    }
    let _ = writeln!(
        text,
        "%body (state: (s32[], {a})) -> (s32[], {a}) {{\n  %state = (s32[]{{:T(128)}}, {a}) parameter(0)\n  \
         %i = s32[]{{:T(128)}} get-tuple-element((s32[]{{:T(128)}}, {a}) %state), index=0\n  \
         %x = {a} get-tuple-element((s32[]{{:T(128)}}, {a}) %state), index=1",
        a = SHAPES[0]
    );
    for &(k, a, b) in fused.iter().step_by(2) {
        let _ = writeln!(
            text,
            "  %fusion.{k} = ({a}, {b}) fusion({a} %x, s32[]{{:T(128)}} %i), kind=kLoop, calls=%fused_computation.{k}, metadata={{op_name=\"jit(step)/while/body/layer_{k}\"}}"
        );
    }
    let _ = writeln!(
        text,
        "  ROOT %next = (s32[]{{:T(128)}}, {a}) tuple(s32[]{{:T(128)}} %i, {a} %x)\n}}\n\n\
         %cond (c: (s32[], {a})) -> pred[] {{\n  %c = (s32[]{{:T(128)}}, {a}) parameter(0)\n  \
         ROOT %lt = pred[]{{:T(512)}} constant(false)\n}}\n\n\
         ENTRY %main (p: {a}) -> (s32[], {a}) {{\n  %p = {a} parameter(0)\n  \
         %zero = s32[]{{:T(128)}} constant(0)\n  \
         %init = (s32[]{{:T(128)}}, {a}) tuple(s32[]{{:T(128)}} %zero, {a} %p)",
        a = SHAPES[0]
    );
    for &(k, a, b) in fused.iter().skip(1).step_by(2) {
        let _ = writeln!(
            text,
            "  %fusion.{k} = ({a}, {b}) fusion({a} %p, s32[]{{:T(128)}} %zero), kind=kLoop, calls=%fused_computation.{k}"
        );
    }
    let _ = writeln!(
        text,
        "  ROOT %loop = (s32[]{{:T(128)}}, {a}) while((s32[]{{:T(128)}}, {a}) %init), condition=%cond, body=%body\n}}",
        a = SHAPES[0]
    );
    text
}

/// The module of `mb` megabytes, written once to the temporary directory.
fn module_file(mb: usize) -> (File, u64) {
    let path: PathBuf = std::env::temp_dir().join(format!("xla_layout_bench_{mb}mb.hlo"));
    let text = module(mb * 1_000_000);
    let mut file = File::create(&path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    (File::open(&path).unwrap(), text.len() as u64)
}

#[divan::bench(args = [16, 100], sample_count = 3, sample_size = 1)]
fn report(bencher: divan::Bencher, mb: usize) {
    let (mut file, len) = module_file(mb);
    bencher
        .counter(divan::counter::BytesCount::new(len))
        .bench_local(|| {
            audit::audit(
                &mut file,
                audit::Options::default(),
                false,
                &mut std::io::sink(),
            )
            .unwrap();
        });
}

#[divan::bench(args = [16], sample_count = 3, sample_size = 1)]
fn buffers_tsv(bencher: divan::Bencher, mb: usize) {
    let (mut file, len) = module_file(mb);
    let options = audit::Options {
        tsv: true,
        buffers: true,
        moves: false,
    };
    bencher
        .counter(divan::counter::BytesCount::new(len))
        .bench_local(|| {
            audit::audit(&mut file, options, false, &mut std::io::sink()).unwrap();
        });
}

#[divan::bench(args = [16], sample_count = 3, sample_size = 1)]
fn moves(bencher: divan::Bencher, mb: usize) {
    let (mut file, len) = module_file(mb);
    let options = audit::Options {
        tsv: false,
        buffers: false,
        moves: true,
    };
    bencher
        .counter(divan::counter::BytesCount::new(len))
        .bench_local(|| {
            audit::audit(&mut file, options, false, &mut std::io::sink()).unwrap();
        });
}
