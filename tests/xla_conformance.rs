//! XLA itself as the oracle: thousands of specs through XLA's own HLO
//! parser and printer (the C++ one in the `jaxlib` wheel), compared with
//! `parse` and `Display`; and every module of `tests/xla_corpus` read by
//! XLA and by `xla_layout::hlo::line`, which must find the same
//! computations, instructions, opcodes and shapes, and whose buffers
//! (`xla-layout --hlo --tsv --buffers`) must be the ones XLA's module has.
//!
//! Each spec becomes a one-instruction module, `ROOT p = <spec> parameter(0)`;
//! XLA parses it and prints the module, and the parameter's printed shape is
//! XLA's canonical form. The test asserts:
//! - every spec XLA accepts, `parse` accepts and prints exactly as XLA does,
//!   unless it falls under a refusal documented in `docs/SPEC.md` (sparse
//!   `D`, `SC`, `P`, `M`, `#(..)`, `*(..)`, `?`, tuples, limits, ...), each of
//!   which must be listed there;
//! - XLA's printed form parses to the same layout as the spec.
//!
//! Specs: every line of `tests/xla_corpus/layouts.txt` and every array shape
//! in `tests/xla_corpus/*.hlo` (strings from XLA's tests and documents), a
//! systematic sweep of the constructs XLA writes (each element type with and
//! without `E(n)`, `T()`, `<=N`, the refused attributes), and thousands of
//! random valid specs from `tests/common/specgen.rs`.
//!
//! XLA aborts the whole process on some inputs (`T(-1)`, `L(0)`), so it runs
//! in a child process that prints one answer per spec as it goes; after an
//! abort the spec it stopped at is recorded as aborted and a new child takes
//! the rest.
//!
//! Needs `python3` with `jax` (`python3 -m pip install jax==0.10.2`; `.ci/run`
//! installs it). Without it the test prints why and passes, except under
//! `CI=true`, where a missing oracle is a failure. `XLA_LAYOUT_PYTHON` picks
//! another interpreter.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::specgen::{generate, Rng};
use xla_layout::{hlo, parse, ErrorKind, ParseError};

/// Random valid specs on top of the corpus and the sweep.
const GENERATED: usize = 4000;

/// Reads specs from stdin, one per line; answers `OK<TAB>shape` with XLA's
/// printed shape, or `ERR<TAB>message`, one line per spec, flushed at once so
/// the parent knows where an abort happened.
const ORACLE: &str = r#"
import sys
from jax._src.lib import xla_client
parse = xla_client.hlo.hlo_module_from_text
print("READY", flush=True)
for spec in sys.stdin.read().split("\n"):
    if not spec:
        continue
    try:
        text = parse("HloModule m\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n" % spec).to_string()
        line = next(l for l in text.splitlines() if l.endswith(" parameter(0)"))
        shape = line[line.index(" = ") + 3 : -len(" parameter(0)")]
        sys.stdout.write("OK\t" + shape + "\n")
    except Exception as e:
        sys.stdout.write("ERR\t" + " ".join(str(e).split())[:300] + "\n")
    sys.stdout.flush()
"#;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Printed(String),
    Refused(String),
    Aborted,
}

fn python() -> String {
    std::env::var("XLA_LAYOUT_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Why the oracle cannot run here, if it cannot.
fn oracle_missing() -> Option<String> {
    let probe = Command::new(python())
        .args([
            "-c",
            "from jax._src.lib import xla_client; xla_client.hlo.hlo_module_from_text",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match probe {
        Err(e) => Some(format!("cannot run `{}`: {e}", python())),
        Ok(out) if !out.status.success() => Some(format!(
            "`{}` cannot load XLA from jax ({}); install it with `python3 -m pip install jax==0.10.2`",
            python(),
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("no message")
        )),
        Ok(_) => None,
    }
}

/// XLA's answer for each spec, in order.
fn ask_xla(specs: &[String]) -> Vec<Answer> {
    let mut answers = Vec::with_capacity(specs.len());
    let mut children = 0;
    while answers.len() < specs.len() {
        children += 1;
        let rest = &specs[answers.len()..];
        let mut child = Command::new(python())
            .args(["-c", ORACLE])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the oracle starts");
        let mut stdin = child.stdin.take().unwrap();
        let input = rest.join("\n");
        // A thread feeds the child so a full pipe cannot deadlock the reader;
        // a child that aborts early closes the pipe, which is not an error here.
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(
            lines.next().and_then(Result::ok).as_deref(),
            Some("READY"),
            "the oracle did not start"
        );
        let before = answers.len();
        for line in lines {
            let line = line.expect("the oracle prints UTF-8");
            let (tag, text) = line.split_once('\t').expect("a tagged answer");
            answers.push(match tag {
                "OK" => Answer::Printed(text.to_string()),
                _ => Answer::Refused(text.to_string()),
            });
        }
        let _ = feeder.join();
        let status = child.wait().expect("the oracle ends");
        if answers.len() < specs.len() {
            assert!(
                !status.success() || answers.len() > before,
                "the oracle ended early without aborting"
            );
            // The process died on the next spec.
            answers.push(Answer::Aborted);
        }
    }
    println!("oracle: {children} child processes");
    answers
}

/// The refusals `docs/SPEC.md` documents, by the text its refusal table
/// shows for each: `None` for a refusal of something XLA accepts that is
/// not documented.
fn documented(kind: &ErrorKind) -> Option<&'static str> {
    Some(match kind {
        ErrorKind::UnsupportedAttribute { name, .. } => name,
        ErrorKind::UnboundedDim => "`?`",
        ErrorKind::Tuple => "tuple",
        ErrorKind::NotAnArray { .. } => "`token`",
        ErrorKind::TileDimZero { .. } => "`T(0)`",
        ErrorKind::CombineMostMinor { .. } => "`T(..,*)`",
        ErrorKind::MinorToMajorRepeated { .. } | ErrorKind::MinorToMajorOutOfRange { .. } => {
            "minor_to_major"
        }
        ErrorKind::IntegerTooLarge { .. }
        | ErrorKind::RankTooLarge { .. }
        | ErrorKind::TooManyLevels { .. }
        | ErrorKind::TileRankTooLarge { .. }
        | ErrorKind::TiledRankTooLarge { .. }
        | ErrorKind::ProgramTooLarge { .. }
        | ErrorKind::StorageOverflow { .. } => "limits",
        _ => return None,
    })
}

/// The systematic sweep: each construct the issue of parity names, in the
/// syntax XLA writes.
fn sweep() -> Vec<String> {
    let mut specs = Vec::new();
    for t in xla_layout::ElementType::ALL {
        let t = t.name();
        specs.push(format!("{t}[3,5]"));
        specs.push(format!("{t}[]"));
        specs.push(format!("{t}[3,5]{{1,0:T(2,2)}}"));
        specs.push(format!("{t}[3,5]{{0,1:T(8,128)(2,1)}}"));
        for bits in [0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 128] {
            specs.push(format!("{t}[7]{{0:E({bits})}}"));
            specs.push(format!("{t}[3,7]{{1,0:T(2,4)E({bits})}}"));
        }
        specs.push(format!("{t}[<=4,3]{{0,1}}"));
        specs.push(format!("{t}[]{{:T()}}"));
    }
    for tail in ["", "L(4)", "E(4)", "S(1)", "L(2)E(2)S(3)"] {
        specs.push(format!("f32[3,4]{{1,0:T(){tail}}}"));
        specs.push(format!("f32[3,4]{{1,0:T()(2,2){tail}}}"));
        specs.push(format!("f32[3,4]{{1,0:T(2,2)(){tail}}}"));
        specs.push(format!("u8[<=3,<=0,2]{{2,1,0:T(2)(){tail}}}"));
    }
    specs.extend(
        [
            "f32[<=5]{0}",
            "f32[<=0]{0}",
            "s32[2,<=2,2]{2,0,1}",
            "f32[3,<=15]{1,0:T(2,2)}",
            "f32[<=18446744073709551615]{0}",
            "f32[?]{0}",
            "f32[3,?]{1,0:T(2,2)}",
            "f32[4]{0:S(127)}",
            "f32[4]{0:S(128)}",
            "f32[4]{0:S(255)}",
            "f32[4]{0:E(4096)}",
            "f32[4]{0:E(4097)}",
            "f32[4]{0:L(9223372036854775807)}",
            "f32[4,4]{1,0:D(D,C)}",
            "f32[4,4]{1,0:D(D,C)T(2,2)}",
            "f32[4]{0:L(2)#(u8)E(4)}",
            "f32[4]{0:*(s32)}",
            "f32[4]{0:SC(0:2)}",
            "f32[4]{0:SC(0:10)(1:4,5)}",
            "f32[4]{0:T(2)S(1)SC(0:2)}",
            "f32[4]{0:M(8)}",
            "f32[4]{0:T(2)M(8)}",
            "f32[4]{0:P(f32[4]{0})}",
            "f32[2]{0:T(0)}",
            "f32[4,4]{1,0:T(2,*)}",
            "f32[2,3]{0,0}",
            "f32[2]{1}",
            "f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
            "f32[2]{0:T(1)(1)(1)(1)(1)(1)(1)(1)(1)}",
            "(f32[2]{0}, s32[])",
            "token[]",
            // XLA aborts on these; the test must survive them.
            "f32[2]{0:L(0)}",
            "f32[2]{0:T(-1)}",
        ]
        .map(String::from),
    );
    specs
}

/// The corpus taken from XLA's tests: `layouts.txt` and the `.hlo` modules.
fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_corpus");
    let mut specs: Vec<String> = std::fs::read_to_string(dir.join("layouts.txt"))
        .expect("tests/xla_corpus/layouts.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut modules: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    modules.sort();
    assert!(!modules.is_empty(), "no HLO modules in {}", dir.display());
    for path in modules {
        let text = std::fs::read_to_string(&path).unwrap();
        specs.extend(hlo::shapes(&text).map(|s| s.text().to_string()));
    }
    specs
}

#[test]
fn xla_parses_and_prints_as_we_do() {
    if let Some(why) = oracle_missing() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the XLA oracle must run in CI: {why}"
        );
        println!("skipped: {why}");
        return;
    }
    let corpus = corpus();
    let sweep = sweep();
    let mut rng = Rng::new(0x5eed_f0a1_1a00);
    // XLA aborts on `L(n)` past `i64::MAX` (the sweep sends one such spec);
    // each abort costs a new process, so the generated specs leave them out.
    let generated: Vec<String> = std::iter::repeat_with(|| generate(&mut rng))
        .filter(|g| i64::try_from(g.tail_alignment).is_ok())
        .take(GENERATED)
        .map(|g| g.canonical())
        .collect();
    let mut specs: Vec<String> = corpus
        .iter()
        .chain(&sweep)
        .chain(&generated)
        .cloned()
        .collect();
    specs.sort();
    specs.dedup();
    let answers = ask_xla(&specs);

    let spec_md =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/SPEC.md"))
            .unwrap();
    let refusals = &spec_md[spec_md
        .find("XLA constructs: read and refused")
        .expect("docs/SPEC.md has a section on XLA constructs")..];
    let mut t = Tally::default();
    for (spec, answer) in specs.iter().zip(&answers) {
        t.record(spec, answer, refusals);
    }
    println!(
        "{} specs ({} corpus, {} sweep, {} generated, deduplicated): XLA accepts {} \
         ({} aborted XLA); of those we accept {} and refuse {} for documented reasons {:?}; \
         we accept {} that XLA refuses (case, `<...>`, white space, large dims)",
        specs.len(),
        corpus.len(),
        sweep.len(),
        generated.len(),
        t.accepted_by_xla,
        t.aborted,
        t.accepted_by_both,
        t.documented_refusals,
        t.by_refusal,
        t.only_we_accept.len()
    );
    println!("  limits reached: {:?}", t.by_limit);
    for spec in t.only_we_accept.iter().take(5) {
        println!("  we accept, XLA refuses: `{spec}`");
    }
    assert!(t.aborted >= 2, "the specs XLA aborts on were not isolated");
    assert!(
        t.accepted_by_both > GENERATED / 2,
        "too few specs accepted by both to mean anything"
    );
    assert!(
        t.failures.is_empty(),
        "{} disagreements with XLA:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}

/// What the comparison found, spec by spec.
#[derive(Default)]
struct Tally {
    failures: Vec<String>,
    accepted_by_xla: usize,
    accepted_by_both: usize,
    documented_refusals: usize,
    aborted: usize,
    only_we_accept: Vec<String>,
    by_refusal: BTreeMap<&'static str, usize>,
    by_limit: BTreeMap<String, usize>,
}

impl Tally {
    /// Compares one spec; `refusals` is the section of docs/SPEC.md that
    /// must list every refusal of something XLA accepts.
    fn record(&mut self, spec: &str, answer: &Answer, refusals: &str) {
        let ours = parse(spec);
        let printed = match answer {
            Answer::Printed(printed) => printed,
            Answer::Refused(_) | Answer::Aborted => {
                self.aborted += usize::from(*answer == Answer::Aborted);
                if ours.is_ok() {
                    self.only_we_accept.push(spec.to_string());
                }
                return;
            }
        };
        self.accepted_by_xla += 1;
        let err = match &ours {
            Ok(l) => {
                self.accepted_by_both += 1;
                if l.to_string() != *printed {
                    self.failures
                        .push(format!("`{spec}`: XLA prints `{printed}`, we print `{l}`"));
                }
                match parse(printed) {
                    Ok(again) if again == *l => {}
                    other => self.failures.push(format!(
                        "`{spec}`: XLA's `{printed}` parses to {other:?}, not {l:?}"
                    )),
                }
                return;
            }
            Err(err) => err,
        };
        let tags: Vec<Option<&'static str>> = err.iter().map(|e| documented(e.kind())).collect();
        if let Some((e, _)) = err.iter().zip(&tags).find(|(_, t)| t.is_none()) {
            self.failures.push(format!(
                "`{spec}`: XLA accepts it (as `{printed}`), we refuse it without a documented reason: {e}"
            ));
            return;
        }
        self.documented_refusals += 1;
        for (e, tag) in err.iter().zip(tags.into_iter().flatten()) {
            *self.by_refusal.entry(tag).or_default() += 1;
            if tag == "limits" {
                let kind = format!("{:?}", e.kind());
                let name = kind.split([' ', '{']).next().unwrap_or("").to_string();
                *self.by_limit.entry(name).or_default() += 1;
            }
            if !refusals.contains(tag) {
                self.failures.push(format!(
                    "`{spec}` is refused as {tag}, which the XLA constructs section of docs/SPEC.md does not list"
                ));
            }
        }
    }
}

/// The bound on XLA's answer set is the corpus itself: each corpus string
/// that XLA accepts, we accept (refusing only the documented constructs).
#[test]
fn corpus_is_read_whole() {
    let corpus = corpus();
    assert!(corpus.len() > 50);
    let refused: Vec<(String, ParseError)> = corpus
        .iter()
        .filter_map(|s| parse(s).err().map(|e| (s.clone(), e)))
        .collect();
    let texts: Vec<&str> = refused.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(texts, ["f32[?]{0}", "f32[4]{0:SC(0:10)(1:4,5)}"]);
    for (spec, err) in &refused {
        assert_eq!(err.len(), 1, "`{spec}`: {err}");
    }
}

/// Reads one module (stdin) with XLA and prints what XLA found in it, one
/// fact a line: `C<TAB>computation<TAB>entry` (1 or 0),
/// `I<TAB>computation<TAB>instruction<TAB>opcode<TAB>shape`, and
/// `B<TAB>computation<TAB>instruction<TAB>tuple index<TAB>array shape` for
/// each buffer by the rule `xla-layout --hlo` documents, worked out here
/// from XLA's opcodes and its printed instructions.
const MODULE_ORACLE: &str = r#"
import re, sys
from jax._src.lib import xla_client
module = xla_client.hlo.hlo_module_from_text(sys.stdin.read())
entry = None
for line in module.to_string().splitlines():
    if line.startswith("ENTRY "):
        entry = line.split()[1].lstrip("%")

def split_shape(rest):
    # The result shape XLA printed, and what follows it.
    depth = 0
    for at, c in enumerate(rest):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == " " and depth == 0:
            return rest[:at], rest[at + 1:]
    return rest, ""

def arrays(shape, path):
    # (tuple index, array shape) of every array of a shape, depth first.
    if not shape.startswith("("):
        return [] if shape.startswith("token[") else [(".".join(map(str, path)), shape)]
    inner, depth, start, parts = shape[1:-1], 0, 0, []
    for at, c in enumerate(inner):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:at].strip())
            start = at + 1
    if inner.strip():
        parts.append(inner[start:].strip())
    found = []
    for i, part in enumerate(parts):
        found += arrays(part, path + [i])
    return found

def named(text, key):
    m = re.search(r"[ ,]" + key + r"=(\{[^}]*\}|[^,\s]+)", text)
    if not m:
        return []
    return [n.strip().lstrip("%") for n in m.group(1).strip("{}").split(",") if n.strip()]

found, runs = {}, {}
for c in module.computations():
    print("C\t%s\t%d" % (c.name, c.name == entry))
    found[c.name] = []
    for i in c.instructions():
        text = i.to_string()
        shape, rest = split_shape(text.split(" = ", 1)[1])
        opcode = str(i.opcode).split(".")[-1]
        print("I\t%s\t%s\t%s\t%s" % (c.name, i.name, opcode, shape))
        found[c.name].append((i.name, opcode, shape))
        keys = {"kWhile": ["body", "condition"], "kCall": ["to_apply"],
                "kConditional": ["branch_computations", "true_computation", "false_computation"]}
        for key in keys.get(opcode, []):
            runs.setdefault(c.name, []).extend(named(rest, key))
running, todo = set(), [entry] if entry else []
while todo:
    name = todo.pop()
    if name not in running:
        running.add(name)
        todo += runs.get(name, [])
aliases = {"kBitcast", "kGetTupleElement", "kTuple", "kWhile", "kConditional", "kCall"}
for c in module.computations():
    if c.name not in running:
        continue
    for name, opcode, shape in found[c.name]:
        if opcode in aliases or (opcode == "kParameter" and c.name != entry):
            continue
        for path, array in arrays(shape, []):
            print("B\t%s\t%s\t%s\t%s" % (c.name, name, path, array))
"#;

/// What XLA finds in `module`: the oracle's lines, sorted.
fn xla_reads(module: &str) -> Vec<String> {
    let mut child = Command::new(python())
        .args(["-c", MODULE_ORACLE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the oracle starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(module.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("the oracle ends");
    assert!(
        out.status.success(),
        "XLA cannot read the module: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

/// The same facts by `hlo::line`, and the buffers by `xla-layout`, sorted.
/// Shapes are written as XLA prints them: the layout's canonical form.
fn we_read(module: &str, path: &Path) -> Vec<String> {
    let canonical = |shape: &str| -> String {
        if shape.starts_with('(') {
            let mut text = String::new();
            let mut rest = shape;
            // Each array of the tuple in canonical form, the punctuation kept.
            for e in hlo::elements(shape) {
                let e = e.unwrap();
                let at = rest.find(e.shape()).unwrap();
                text.push_str(&rest[..at]);
                text.push_str(&parse(e.shape()).map_or(e.shape().to_string(), |l| l.to_string()));
                rest = &rest[at + e.shape().len()..];
            }
            text + rest
        } else {
            parse(shape).map_or(shape.to_string(), |l| l.to_string())
        }
    };
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in module.lines() {
        match hlo::line(line) {
            hlo::Line::Computation { name, entry } => {
                current = name.to_string();
                lines.push(format!("C\t{name}\t{}", u8::from(entry)));
            }
            hlo::Line::Instruction(i) => {
                // XLA names opcodes `kGetTupleElement` for `get-tuple-element`.
                let mut opcode = String::from("k");
                for word in i.opcode().split('-') {
                    let mut chars = word.chars();
                    opcode.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                    opcode.extend(chars);
                }
                lines.push(format!(
                    "I\t{current}\t{}\t{opcode}\t{}",
                    i.name(),
                    canonical(i.shape())
                ));
            }
            _ => {}
        }
    }
    let out = Command::new(common::explain())
        .args(["--hlo", path.to_str().unwrap(), "--tsv", "--buffers"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for row in String::from_utf8(out.stdout).unwrap().lines() {
        let f: Vec<&str> = row.split('\t').collect();
        lines.push(format!("B\t{}\t{}\t{}\t{}", f[0], f[1], f[2], f[3]));
    }
    lines.sort();
    lines
}

#[test]
fn xla_reads_the_modules_as_we_do() {
    if let Some(why) = oracle_missing() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the XLA oracle must run in CI: {why}"
        );
        println!("skipped: {why}");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_corpus");
    let mut modules: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    modules.sort();
    let mut facts = 0;
    for path in &modules {
        let module = std::fs::read_to_string(path).unwrap();
        let xla = xla_reads(&module);
        let ours = we_read(&module, path);
        let mut missing: Vec<_> = xla.iter().filter(|l| !ours.contains(l)).collect();
        let mut extra: Vec<_> = ours.iter().filter(|l| !xla.contains(l)).collect();
        // XLA renames an instruction whose name collides with another's
        // numbering (`constant_0.0` beside `constant_0` becomes
        // `constant_0.1`): such a pair is the same instruction when all but
        // the number agree.
        let unnumbered = |l: &str| -> String {
            l.split('\t')
                .enumerate()
                .map(|(i, f)| match f.rsplit_once('.') {
                    Some((root, n)) if i == 2 && n.bytes().all(|b| b.is_ascii_digit()) => root,
                    _ => f,
                })
                .collect::<Vec<_>>()
                .join("\t")
        };
        extra.retain(|l| {
            let same = missing.iter().position(|m| unnumbered(m) == unnumbered(l));
            same.map(|at| missing.remove(at)).is_none()
        });
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{}: XLA finds, we do not: {missing:#?}\nwe find, XLA does not: {extra:#?}",
            path.display()
        );
        assert!(
            xla.iter().any(|l| l.starts_with("B\t")),
            "{}",
            path.display()
        );
        facts += xla.len();
    }
    println!(
        "{} modules, {facts} computations, instructions and buffers alike",
        modules.len()
    );
}
