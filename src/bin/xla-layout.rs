//! See a layout: its shapes, sizes and padding, a picture of its offsets,
//! the documents' worked example for one index or offset, an SVG picture,
//! the TPU tiling for a shape, or the layout as C; or audit the buffers of
//! a whole HLO dump.
//!
//! Installed from a checkout with `cargo install --path . --features cli`,
//! or run there as an example:
//!
//! ```sh
//! cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}'
//! cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}' --index 2,3
//! cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}' --offset 9
//! cargo run --example explain -- 'bf16[4,8]{1,0:T(2,4)(2,1)}' --svg fig2.svg
//! cargo run --example explain -- 'f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}' --slice 1,3,:,:,0
//! cargo run --example explain -- --tpu 'bf16[3,1000]'
//! cargo run --example explain -- --c 'f32[3,5]{1,0:T(2,2)}' > layout.h
//! cargo run --example explain -- 'f32[8,256]{1,0:T(8,128)}' --reshape 'f32[2,4,256]{2,1,0:T(4,128)}'
//! cargo run --example explain -- 'f32[2,3]' --transpose 'f32[3,2]{0,1}' --perm 1,0
//! cargo run --example explain -- --hlo module.txt
//! cargo run --example explain -- --hlo module.txt --tsv
//! cargo run --example explain -- --hlo module.txt --tsv --buffers
//! cargo run --example explain -- --hlo module.txt --moves
//! ```
//!
//! Exit status: 0 on success, 2 for a bad spec or bad arguments (with the
//! same message and caret excerpt `layout!` gives), 1 if a file cannot be
//! read or written.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::process::ExitCode;

use xla_layout::bitcast::Mismatch;
use xla_layout::render::{
    Bitcast, CCode, Grid, IndexSteps, Memory, OffsetSteps, Slice, Summary, Svg,
};
use xla_layout::tpu::{tpu_layout_like, tpu_rule};

// Resolved beside this file, so the example that includes it finds it too.
#[path = "../cli/audit.rs"]
mod audit;

const USAGE: &str = "\
usage: xla-layout [OPTIONS] <SPEC>
       xla-layout --hlo FILE [--tsv [--buffers]]
       xla-layout --hlo FILE --moves [--tsv]

Shows an XLA layout such as 'f32[3,5]{1,0:T(2,2)}': its shapes, storage and
padding, and a grid of the offsets of a 2-D slice, tiles outlined.

With --hlo, reads a whole HLO module as XLA dumps it (FILE `-` is stdin) and
reports the buffers it keeps: the results of the instructions of ENTRY and of
the computations it runs through while, conditional and call, each array of a
tuple on its own; fusion bodies, applied computations (reducers) and aliases
(bitcast, get-tuple-element, tuple, while, conditional, call, and parameters
but ENTRY's) keep none. One row per distinct layout, most padding in total
first, then for the most padded: the dims the tiles pad, the layout the TPU
chooser would pick and what it saves, and the instructions.

options:
  --index I,J,...   the offset of one index, step by step
  --offset N        the index stored at slot N, step by step, or why it is padding
  --slice A,:,B,:   the 2-D slice to draw: `:` marks the drawn dims
  --svg FILE        also write the picture as SVG to FILE
  --tpu             SPEC is a shape such as 'bf16[3,1000]': use the TPU tiling
  --c               print the layout as a C99 header instead (also C++ and CUDA)
  --reshape TO      whether reshaping SPEC into layout TO moves no data (a
                    bitcast); if it moves some, the first element that moves
  --transpose TO    the same for XLA's transpose of SPEC into TO (with --perm)
  --perm I,J,...    the transpose's dims: dim i of TO is dim perm[i] of SPEC
  --hlo FILE        audit the buffers of an HLO module instead of one SPEC
  --tsv             with --hlo: spec, buffers, storage_bytes, padding_bytes
                    (bytes of one array), tab-separated, for scripts
  --buffers         with --hlo --tsv: one row per buffer: computation,
                    instruction, tuple index (`1.0` is element 0 of element 1;
                    empty for an array result), spec, storage_bytes,
                    padding_bytes, opcode
  --moves           with --hlo: every bitcast, copy and transpose, fused or
                    not, and whether it moves bytes (a bitcast is a reshape's,
                    a transpose's or reinterprets the bytes; a copy or
                    transpose moves bytes or could be a bitcast); with --tsv:
                    computation, instruction, opcode, operand spec, result
                    spec, verdict, bytes_moved, tuple index
  --prefix NAME     function name prefix for --c (default xla_layout)
  --color WHEN      auto, always or never (auto: on a terminal, unless NO_COLOR is set)
  -h, --help        this text
";

/// What the command line asks for.
#[derive(Default)]
struct Args {
    spec: Option<String>,
    index: Option<String>,
    offset: Option<String>,
    slice: Option<String>,
    svg: Option<std::path::PathBuf>,
    tpu: bool,
    c: bool,
    hlo: Option<std::path::PathBuf>,
    /// `--tsv` and `--buffers`, for `--hlo`.
    audit: audit::Options,
    prefix: Option<String>,
    colour: Option<bool>,
    reshape: Option<String>,
    transpose: Option<String>,
    perm: Option<String>,
}

/// A failure, already worded for the user, and the exit status it gives.
struct Failure(String, u8);

fn usage_error(message: impl std::fmt::Display) -> Failure {
    Failure(format!("error: {message}\n\n{USAGE}"), 2)
}

fn parse_args() -> Result<Option<Args>, Failure> {
    use lexopt::prelude::*;
    let mut args = Args::default();
    let mut parser = lexopt::Parser::from_env();
    let value = |p: &mut lexopt::Parser| -> Result<String, Failure> {
        p.value()
            .map_err(usage_error)?
            .into_string()
            .map_err(|v| usage_error(format!("{v:?} is not valid UTF-8")))
    };
    while let Some(arg) = parser.next().map_err(usage_error)? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("index") => args.index = Some(value(&mut parser)?),
            Long("offset") => args.offset = Some(value(&mut parser)?),
            Long("slice") => args.slice = Some(value(&mut parser)?),
            Long("svg") => args.svg = Some(parser.value().map_err(usage_error)?.into()),
            Long("tpu") => args.tpu = true,
            Long("c") => args.c = true,
            Long("hlo") => args.hlo = Some(parser.value().map_err(usage_error)?.into()),
            Long("tsv") => args.audit.tsv = true,
            Long("buffers") => args.audit.buffers = true,
            Long("moves") => args.audit.moves = true,
            Long("prefix") => args.prefix = Some(value(&mut parser)?),
            Long("reshape") => args.reshape = Some(value(&mut parser)?),
            Long("transpose") => args.transpose = Some(value(&mut parser)?),
            Long("perm") => args.perm = Some(value(&mut parser)?),
            Long("color" | "colour") => {
                args.colour = match value(&mut parser)?.as_str() {
                    "always" => Some(true),
                    "never" => Some(false),
                    "auto" => None,
                    other => {
                        return Err(usage_error(format!(
                            "`--color {other}`: expected auto, always or never"
                        )))
                    }
                };
            }
            Value(v) if args.spec.is_none() => {
                args.spec = Some(
                    v.into_string()
                        .map_err(|v| usage_error(format!("{v:?} is not valid UTF-8")))?,
                );
            }
            other => return Err(usage_error(other.unexpected())),
        }
    }
    Ok(Some(args))
}

/// Comma-separated numbers, as in `--index 2,3`; empty means a scalar's `()`.
fn numbers(text: &str, what: &str) -> Result<Vec<usize>, Failure> {
    let text = text.trim().trim_start_matches('(').trim_end_matches(')');
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|n| {
            n.trim().parse().map_err(|_| {
                usage_error(format!("{what} `{text}`: `{}` is not a number", n.trim()))
            })
        })
        .collect()
}

fn run() -> Result<(), Failure> {
    let Some(args) = parse_args()? else {
        print!("{USAGE}");
        return Ok(());
    };
    if let Some(path) = &args.hlo {
        return run_hlo(path, &args);
    }
    if let Some(option) = audit_option(&args) {
        return Err(usage_error(format!("{option} goes with --hlo")));
    }
    let Some(spec) = args.spec.as_deref() else {
        return Err(usage_error("no spec given"));
    };
    // The very function `layout!` calls, so the message is the macro's.
    let parsed = xla_layout::parse(spec).map_err(|e| Failure(e.report(spec).to_string(), 2))?;
    let colour = args.colour.unwrap_or_else(|| {
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
    });
    if args.reshape.is_some() || args.transpose.is_some() || args.perm.is_some() {
        return run_bitcast(&parsed, &args);
    }
    // The whole report, written at once; writing to a `String` cannot fail.
    let mut out = String::new();
    let layout = if args.tpu {
        let chosen = tpu_layout_like(&parsed).map_err(|e| tpu_failure(&parsed, &e))?;
        let _ = writeln!(
            out,
            "TPU tiling (SPEC.md section 6) for {}[{}]:\n  {chosen}\n  rule: {}",
            parsed.element_type(),
            join(parsed.dims()),
            tpu_rule(&parsed)
        );
        let untiled = xla_layout::LayoutBuilder::new(parsed.element_type(), parsed.dims())
            .minor_to_major(parsed.minor_to_major())
            .build()
            .map_err(|e| tpu_failure(&parsed, &e))?;
        let _ = writeln!(
            out,
            "  cost: {} bytes tiled, {} bytes untiled, {} bytes of padding\n",
            chosen.storage_bytes(),
            untiled.storage_bytes(),
            chosen
                .storage_bytes()
                .saturating_sub(untiled.storage_bytes())
        );
        chosen
    } else {
        parsed
    };
    if args.c {
        let prefix = args.prefix.as_deref().unwrap_or("xla_layout");
        let code = CCode::with_prefix(&layout, prefix)
            .ok_or_else(|| usage_error(format!("`--prefix {prefix}` is not a C identifier")))?;
        print!("{code}");
        return Ok(());
    }
    let slice = match &args.slice {
        Some(text) => Slice::parse(&layout, text)
            .map_err(|e| usage_error(format!("--slice `{text}`: {e}")))?,
        None => Slice::default_for(&layout),
    };
    let _ = write!(
        out,
        "{}\n{}\n{}",
        Summary::new(&layout),
        Grid::new(&layout).slice(slice).colour(colour),
        Memory::new(&layout).colour(colour)
    );
    if let Some(text) = &args.index {
        let index = numbers(text, "--index")?;
        let steps = IndexSteps::new(&layout, &index).ok_or_else(|| {
            usage_error(format!(
                "--index `{text}` is not an index of {layout}: give {} numbers below [{}]",
                layout.rank(),
                join(layout.dims())
            ))
        })?;
        let _ = write!(out, "\n{steps}");
    }
    if let Some(text) = &args.offset {
        let offset = text
            .trim()
            .parse()
            .map_err(|_| usage_error(format!("--offset `{text}` is not a number")))?;
        if offset >= layout.storage_len() {
            return Err(usage_error(format!(
                "--offset {offset} is past the storage ({} slots)",
                layout.storage_len()
            )));
        }
        let _ = write!(out, "\n{}", OffsetSteps::new(&layout, offset));
    }
    if let Some(path) = &args.svg {
        let svg = Svg::new(&layout).slice(slice).to_string();
        std::fs::write(path, svg)
            .map_err(|e| Failure(format!("error: cannot write {}: {e}", path.display()), 1))?;
        let _ = writeln!(out, "\nwrote {}", path.display());
    }
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(())
}

/// `--reshape` and `--transpose`: the verdict, and the first element that
/// moves stepped through both layouts. Not a bitcast is an answer, not a
/// failure: the status is 0.
fn run_bitcast(from: &xla_layout::Layout, args: &Args) -> Result<(), Failure> {
    let (to, perm) = match (&args.reshape, &args.transpose, &args.perm) {
        (Some(to), None, None) => (to, None),
        (None, Some(to), Some(perm)) => (to, Some(numbers(perm, "--perm")?)),
        (None, Some(_), None) => return Err(usage_error("--transpose needs --perm")),
        (None, None, Some(_)) => return Err(usage_error("--perm goes with --transpose")),
        _ => return Err(usage_error("give one of --reshape and --transpose")),
    };
    let to = xla_layout::parse(to).map_err(|e| Failure(e.report(to).to_string(), 2))?;
    let shown = match &perm {
        None => Bitcast::reshape(from, &to),
        Some(perm) => Bitcast::transpose(from, &to, perm),
    };
    if let Err(
        e @ (Mismatch::PermLength { .. }
        | Mismatch::PermEntry { .. }
        | Mismatch::PermRepeat { .. }
        | Mismatch::PermutedDim { .. }
        | Mismatch::Rank { .. }),
    ) = shown.result()
    {
        return Err(usage_error(format!(
            "--{}: {e}",
            if perm.is_some() {
                "transpose"
            } else {
                "reshape"
            }
        )));
    }
    let _ = std::io::stdout().write_all(shown.to_string().as_bytes());
    Ok(())
}

/// A layout the TPU chooser built from `parsed` and refused: the
/// builder's errors have no place in the text the user gave (a "byte 0"
/// would point at nothing), so the message names the spec instead.
fn tpu_failure(parsed: &xla_layout::Layout, e: &xla_layout::ParseError) -> Failure {
    let why: Vec<String> = e.iter().map(ToString::to_string).collect();
    Failure(
        format!("error: the TPU tiling of `{parsed}`: {}", why.join("; ")),
        2,
    )
}

fn join(dims: &[usize]) -> String {
    dims.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The first option given that only `--hlo` reads.
fn audit_option(args: &Args) -> Option<&'static str> {
    [
        (args.audit.tsv, "--tsv"),
        (args.audit.buffers, "--buffers"),
        (args.audit.moves, "--moves"),
    ]
    .into_iter()
    .find_map(|(given, option)| given.then_some(option))
}

fn run_hlo(path: &std::path::Path, args: &Args) -> Result<(), Failure> {
    if let Some(spec) = &args.spec {
        return Err(usage_error(format!(
            "`{spec}`: --hlo reads its shapes from the file; give no SPEC"
        )));
    }
    if args.audit.buffers && args.audit.moves {
        return Err(usage_error(
            "--buffers and --moves are two reports: give one of them",
        ));
    }
    if args.audit.buffers && !args.audit.tsv {
        return Err(usage_error(
            "--buffers goes with --tsv: the report already names the instructions",
        ));
    }
    audit::run(path, args.audit).map_err(|audit::Failure(message, status)| Failure(message, status))
}

/// The command, for the installed binary and for the example alike.
pub fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message, status)) => {
            eprintln!("{message}");
            ExitCode::from(status)
        }
    }
}
