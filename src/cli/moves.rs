//! `xla-layout --hlo --moves`: every `bitcast`, `copy` and `transpose` of
//! a module, fused or not, and whether it moves bytes.
//!
//! The verdict comes from the bitcast algebra (`xla_layout::bitcast`),
//! which compares the two layouts' slots element by element in closed form:
//! a `bitcast` is a reshape's bitcast, a transpose's, or a reinterpretation
//! of the bytes; a `copy` or `transpose` that no byte moves in could have
//! been a bitcast, and one that moves bytes writes its whole result.
//!
//! Operands are read from the shape written beside them, as XLA dumps
//! print them, or else from the result of the instruction of that name in
//! the same computation; the names of one computation are kept until its
//! end, one small entry each.

use std::collections::HashMap;
use std::fmt;
use std::io::Write;

use xla_layout::hlo::{self, Line};
use xla_layout::Layout;

/// Moves the report lists, largest first.
const LISTED: usize = 10;

/// Candidate permutations tried for a `bitcast` that could be a transpose's.
const MAX_PERMUTATIONS: usize = 10_000;

/// What a layout change does to the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// A `bitcast` whose element order is a reshape's.
    ReshapeBitcast,
    /// A `bitcast` whose element order is some transpose's.
    TransposeBitcast,
    /// A `bitcast` that is neither: the bytes are read as another array.
    Reinterpret,
    /// A `copy` or `transpose` in which no byte moves.
    Bitcast,
    /// A `copy` or `transpose` that moves bytes: it writes its result.
    Moves,
    /// Not decided: the layouts' tiles leave no digits to compare and
    /// more elements than `xla_layout::bitcast` compares one by one, or (for
    /// a `bitcast`) more candidate permutations than are tried.
    Undecided,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::ReshapeBitcast => "reshape-bitcast",
            Verdict::TransposeBitcast => "transpose-bitcast",
            Verdict::Reinterpret => "reinterpret",
            Verdict::Bitcast => "bitcast",
            Verdict::Moves => "moves",
            Verdict::Undecided => "undecided",
        })
    }
}

/// One layout change, for the report's list.
struct Move {
    bytes: u64,
    place: String,
    opcode: &'static str,
    from: String,
    to: String,
}

/// A layout change as judged: opcode, the layouts' indices, the
/// transpose's permutation (empty for the other opcodes).
type Change = (&'static str, usize, usize, Vec<usize>);

/// The state of the `--moves` pass.
pub struct Moves {
    tsv: bool,
    computation: String,
    /// Result shape of each instruction of the computation being read, as
    /// an index into `shapes`.
    names: HashMap<Box<str>, u32>,
    shapes: Vec<Box<str>>,
    by_shape: HashMap<Box<str>, u32>,
    /// Each distinct shape text read as a layout, once, by index.
    layouts: HashMap<Box<str>, usize>,
    parsed: Vec<Result<Layout, String>>,
    /// Each distinct change judged once: opcode, both layouts, permutation.
    verdicts: HashMap<Change, Result<Verdict, String>>,
    counts: [(&'static str, Verdict, u64); 8],
    moved: u128,
    largest: Vec<Move>,
    unread: Vec<String>,
}

impl Moves {
    pub fn new(tsv: bool) -> Self {
        use Verdict::{Bitcast, Reinterpret, ReshapeBitcast, TransposeBitcast, Undecided};
        Moves {
            tsv,
            computation: String::new(),
            names: HashMap::new(),
            shapes: Vec::new(),
            by_shape: HashMap::new(),
            layouts: HashMap::new(),
            parsed: Vec::new(),
            verdicts: HashMap::new(),
            counts: [
                ("bitcast", ReshapeBitcast, 0),
                ("bitcast", TransposeBitcast, 0),
                ("bitcast", Reinterpret, 0),
                ("bitcast", Undecided, 0),
                ("copy", Bitcast, 0),
                ("copy", Verdict::Moves, 0),
                ("transpose", Bitcast, 0),
                ("transpose", Verdict::Moves, 0),
            ],
            moved: 0,
            largest: Vec::new(),
            unread: Vec::new(),
        }
    }

    pub fn line(&mut self, number: u64, text: &str, out: &mut impl Write) {
        match hlo::line(text) {
            Line::Computation { name, .. } => {
                name.clone_into(&mut self.computation);
                self.names.clear();
            }
            Line::End => {
                self.computation.clear();
                self.names.clear();
            }
            Line::Instruction(i) => {
                let opcode = match i.opcode() {
                    "bitcast" => "bitcast",
                    "copy" => "copy",
                    "transpose" => "transpose",
                    _ => {
                        self.remember(i.name(), i.shape());
                        return;
                    }
                };
                self.change(number, opcode, &i, out);
                self.remember(i.name(), i.shape());
            }
            Line::Module { .. } | Line::Blank | Line::Unread => {}
        }
    }

    fn remember(&mut self, name: &str, shape: &str) {
        // Shapes repeat: each distinct one is kept once.
        let index = if let Some(&k) = self.by_shape.get(shape) {
            k
        } else {
            let k = self.shapes.len() as u32;
            self.shapes.push(shape.into());
            self.by_shape.insert(shape.into(), k);
            k
        };
        self.names.insert(name.into(), index);
    }

    /// One `bitcast`, `copy` or `transpose`: a row per array it changes.
    fn change(
        &mut self,
        number: u64,
        opcode: &'static str,
        instruction: &hlo::Instruction<'_>,
        out: &mut impl Write,
    ) {
        let name = instruction.name();
        let read = self
            .operand(instruction)
            .and_then(|from| Ok((from, permutation(opcode, instruction)?)));
        let (from, perm) = match read {
            Ok(read) => read,
            Err(why) => {
                self.unread.push(format!("line {number}: `{name}` {why}"));
                return;
            }
        };
        let tuple = instruction.shape().starts_with('(');
        let pairs = hlo::elements(&from).zip(instruction.elements());
        for (operand, result) in pairs.filter_map(|(a, b)| Some((a.ok()?, b.ok()?))) {
            let judged = self.layout(operand.shape()).and_then(|from| {
                let to = self.layout(result.shape())?;
                Ok((from, to, self.judge(opcode, from, to, perm.as_deref())?))
            });
            let (from, to, v) = match judged {
                Ok(judged) => judged,
                Err(why) => {
                    self.unread.push(format!("line {number}: `{name}`: {why}"));
                    continue;
                }
            };
            let (Ok(from_layout), Ok(to_layout)) = (&self.parsed[from], &self.parsed[to]) else {
                continue;
            };
            let bytes = if v == Verdict::Moves {
                to_layout.storage_bytes() as u64
            } else {
                0
            };
            if let Some(c) = self.counts.iter_mut().find(|c| c.0 == opcode && c.1 == v) {
                c.2 += 1;
            }
            self.moved += u128::from(bytes);
            let index = if tuple {
                result.path().to_string()
            } else {
                String::new()
            };
            if self.tsv {
                let _ = writeln!(
                    out,
                    "{}\t{name}\t{opcode}\t{from_layout}\t{to_layout}\t{v}\t{bytes}\t{index}",
                    self.computation
                );
            } else if bytes > 0 {
                self.keep(Move {
                    bytes,
                    place: format!(
                        "{}/{name}{}{index}",
                        self.computation,
                        if tuple { " #" } else { "" }
                    ),
                    opcode,
                    from: from_layout.to_string(),
                    to: to_layout.to_string(),
                });
            }
        }
    }

    /// The operand's shape: written beside it, or the result of the
    /// instruction of that name earlier in the computation.
    fn operand(&self, instruction: &hlo::Instruction<'_>) -> Result<String, String> {
        match instruction.operand_list().next() {
            Some((_, Some(shape))) => Ok(shape.to_string()),
            Some((name, None)) => self
                .names
                .get(name)
                .map(|&k| self.shapes[k as usize].to_string())
                .ok_or_else(|| {
                    format!("reads `{name}`, which the computation does not define before it")
                }),
            None => Err("has no operand".into()),
        }
    }

    /// Keeps the [`LISTED`] largest moves.
    fn keep(&mut self, m: Move) {
        if self.largest.len() == LISTED && self.largest.last().is_some_and(|l| l.bytes >= m.bytes) {
            return;
        }
        let at = self.largest.partition_point(|l| l.bytes >= m.bytes);
        self.largest.insert(at, m);
        self.largest.truncate(LISTED);
    }

    /// The index of the layout `text` names, or why it names none.
    fn layout(&mut self, text: &str) -> Result<usize, String> {
        let index = if let Some(&k) = self.layouts.get(text) {
            k
        } else {
            let parsed = xla_layout::parse(text).map_err(|e| format!("`{text}`: {}", e.first()));
            self.parsed.push(parsed);
            self.layouts.insert(text.into(), self.parsed.len() - 1);
            self.parsed.len() - 1
        };
        match &self.parsed[index] {
            Ok(_) => Ok(index),
            Err(why) => Err(why.clone()),
        }
    }

    /// The verdict on a change between two layouts read by [`Self::layout`].
    fn judge(
        &mut self,
        opcode: &'static str,
        from: usize,
        to: usize,
        perm: Option<&[usize]>,
    ) -> Result<Verdict, String> {
        let key = (
            opcode,
            from,
            to,
            perm.map(<[usize]>::to_vec).unwrap_or_default(),
        );
        if let Some(known) = self.verdicts.get(&key) {
            return known.clone();
        }
        let (Ok(a), Ok(b)) = (&self.parsed[from], &self.parsed[to]) else {
            return Err("no layout".into());
        };
        let judged = verdict(opcode, a, b, perm);
        self.verdicts.insert(key, judged.clone());
        judged
    }

    pub fn finish(self, out: &mut impl Write) -> std::io::Result<()> {
        if self.tsv {
            for note in &self.unread {
                eprintln!("xla-layout: {note}");
            }
            return Ok(());
        }
        let count = |opcode: &str, v: Verdict| {
            self.counts
                .iter()
                .find(|c| c.0 == opcode && c.1 == v)
                .map_or(0, |c| c.2)
        };
        let all = |opcode: &str| -> u64 {
            self.counts
                .iter()
                .filter(|c| c.0 == opcode)
                .map(|c| c.2)
                .sum()
        };
        let undecided = match count("bitcast", Verdict::Undecided) {
            0 => String::new(),
            n => format!(", {n} undecided"),
        };
        writeln!(
            out,
            "bitcasts: {} ({} of a reshape, {} of a transpose, {} reinterpreting the bytes{undecided})",
            all("bitcast"),
            count("bitcast", Verdict::ReshapeBitcast),
            count("bitcast", Verdict::TransposeBitcast),
            count("bitcast", Verdict::Reinterpret),
        )?;
        for (opcode, plural) in [("copy", "copies"), ("transpose", "transposes")] {
            writeln!(
                out,
                "{plural}: {} ({} moving bytes, {} that could be bitcasts: no byte moves)",
                all(opcode),
                count(opcode, Verdict::Moves),
                count(opcode, Verdict::Bitcast),
            )?;
        }
        if self
            .counts
            .iter()
            .any(|c| c.1 == Verdict::Undecided && c.2 > 0)
        {
            writeln!(
                out,
                "undecided: a bitcast whose equal dims give more than {MAX_PERMUTATIONS} \
                 transposes to try"
            )?;
        }
        writeln!(
            out,
            "bytes moved by layout changes: {} (each copy or transpose that moves bytes writes its result)",
            self.moved
        )?;
        if !self.largest.is_empty() {
            writeln!(out, "\nlargest moves:")?;
            for m in &self.largest {
                writeln!(
                    out,
                    "{:>14}  {:<9}  {}: {} -> {}",
                    m.bytes, m.opcode, m.place, m.from, m.to
                )?;
            }
        }
        for note in &self.unread {
            writeln!(out, "\nnote: {note}")?;
        }
        Ok(())
    }
}

/// A transpose's `dimensions`; `None` for the other opcodes.
fn permutation(
    opcode: &str,
    instruction: &hlo::Instruction<'_>,
) -> Result<Option<Vec<usize>>, String> {
    if opcode != "transpose" {
        return Ok(None);
    }
    let dims = instruction.attribute("dimensions").unwrap_or("");
    dims.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim().parse())
        .collect::<Result<Vec<usize>, _>>()
        .map(Some)
        .map_err(|_| format!("has dimensions `{dims}`, not a list of dims"))
}

/// The verdict on one layout change of `opcode` from `from` to `to`
/// (`perm`: a transpose's `dimensions`), or why the change is malformed.
fn verdict(
    opcode: &str,
    from: &Layout,
    to: &Layout,
    perm: Option<&[usize]>,
) -> Result<Verdict, String> {
    use xla_layout::bitcast::{self, Mismatch};
    // What `bitcast` says of a change that must keep the elements' places:
    // a moved element, or storage of another size, type or width, moves bytes.
    let moves = |checked: Result<(), Mismatch>| match checked {
        Ok(()) => Ok(Verdict::Bitcast),
        Err(
            Mismatch::Moved(_)
            | Mismatch::StorageBytes { .. }
            | Mismatch::ElementBits { .. }
            | Mismatch::ElementType { .. },
        ) => Ok(Verdict::Moves),
        Err(other) => Err(other.to_string()),
    };
    match opcode {
        // Another memory space is another memory: every byte moves.
        "copy" | "transpose" if from.memory_space() != to.memory_space() => Ok(Verdict::Moves),
        "copy" if from.dims() != to.dims() => Err(format!(
            "a copy keeps the dims, but `{from}` becomes `{to}`"
        )),
        "copy" => moves(bitcast::reshape(from, to)),
        "transpose" => moves(bitcast::transpose(from, to, perm.unwrap_or(&[]))),
        _ => {
            if bitcast::reshape(from, to).is_ok() {
                return Ok(Verdict::ReshapeBitcast);
            }
            let mut tried = 0;
            let mut found = false;
            permutations(from.dims(), to.dims(), &mut |perm| {
                tried += 1;
                found = bitcast::transpose(from, to, perm).is_ok();
                !found && tried < MAX_PERMUTATIONS
            });
            Ok(if found {
                Verdict::TransposeBitcast
            } else if tried >= MAX_PERMUTATIONS {
                Verdict::Undecided
            } else {
                Verdict::Reinterpret
            })
        }
    }
}

/// Calls `each` with every `perm` for which dim `i` of `to` is dim
/// `perm[i]` of `from`, until it returns false. Dims of size 1 hold one
/// index, so which of them goes where moves nothing: they are taken in order.
fn permutations(from: &[usize], to: &[usize], each: &mut dyn FnMut(&[usize]) -> bool) {
    fn place(
        at: usize,
        from: &[usize],
        to: &[usize],
        used: &mut Vec<bool>,
        perm: &mut Vec<usize>,
        each: &mut dyn FnMut(&[usize]) -> bool,
    ) -> bool {
        if at == to.len() {
            return each(perm);
        }
        for d in 0..from.len() {
            if used[d] || from[d] != to[at] {
                continue;
            }
            used[d] = true;
            perm.push(d);
            let go_on = place(at + 1, from, to, used, perm, each);
            perm.pop();
            used[d] = false;
            if !go_on {
                return false;
            }
            if to[at] == 1 {
                // Any other dim of 1 here gives the same element order.
                break;
            }
        }
        true
    }
    if from.len() == to.len() {
        place(
            0,
            from,
            to,
            &mut vec![false; from.len()],
            &mut Vec::new(),
            each,
        );
    }
}
