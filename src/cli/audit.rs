//! `xla-layout --hlo`: the buffers a module keeps and what their padding
//! costs, or with `--moves` the layout changes that move bytes (`moves.rs`).
//!
//! A module is read twice, a line at a time, so memory does not grow with
//! it: the first pass learns which computations run on their own (reached
//! from ENTRY through `while`, `conditional` and `call`; see
//! `xla_layout::hlo::Call::runs_on_its_own`), which XLA prints only after
//! the computations themselves; the second lists their buffers. What is kept
//! in between is one entry per computation a `while`, `conditional` or
//! `call` names, one per distinct shape, and a few instruction names per
//! shape for the report.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use xla_layout::hlo::{self, Instruction, Line};
use xla_layout::tpu::tpu_layout_like;
use xla_layout::{Layout, LayoutBuilder, TileDim};

#[path = "moves.rs"]
mod moves;

/// What `--hlo` prints.
#[derive(Clone, Copy, Default)]
pub struct Options {
    /// Tab-separated rows for scripts rather than the report.
    pub tsv: bool,
    /// One row per buffer rather than one per distinct shape (`--tsv` only).
    pub buffers: bool,
    /// The layout changes (`bitcast`, `copy`, `transpose`) rather than the buffers.
    pub moves: bool,
}

/// A failure worded for the user, with its exit status.
pub struct Failure(pub String, pub u8);

/// Inputs larger than this show a progress line on a terminal.
const PROGRESS_FROM: u64 = 4 << 20;

/// Instruction names kept per shape for the report.
const NAMES_KEPT: usize = 4;

/// Shapes the report details.
const DETAILED: usize = 10;

/// Reads the module at `path` (`-`: standard input) and writes what
/// `options` asks for to standard output.
pub fn run(path: &Path, options: Options) -> Result<(), Failure> {
    let cannot_read =
        |e: std::io::Error| Failure(format!("error: cannot read {}: {e}", path.display()), 1);
    let mut file = if path.as_os_str() == "-" {
        // Standard input cannot be read twice: keep it in a file the system
        // deletes when it is closed.
        let mut spool = tempfile::tempfile().map_err(|e| {
            Failure(
                format!("error: cannot make a temporary file for standard input: {e}"),
                1,
            )
        })?;
        std::io::copy(&mut std::io::stdin().lock(), &mut spool).map_err(cannot_read)?;
        spool.rewind().map_err(cannot_read)?;
        spool
    } else {
        File::open(path).map_err(cannot_read)?
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let progress = std::io::stderr().is_terminal();
    let not_utf8 = audit(&mut file, options, progress, &mut out).map_err(cannot_read)?;
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.flush();
    if let Some(at) = not_utf8 {
        // A stray byte in a comment or a metadata string costs no shape
        // (shapes are ASCII), so it is worth a warning, not the file.
        let name = if path.as_os_str() == "-" {
            "standard input".into()
        } else {
            path.display().to_string()
        };
        eprintln!(
            "warning: {name} is not valid UTF-8 (first at byte {at}): such bytes are read as U+FFFD"
        );
    }
    Ok(())
}

/// Audits the module in `file` (read from its start, twice) and writes
/// what `options` asks for to `out`, with a progress line on standard
/// error if `progress` and the file is large. Returns where the first byte
/// that is not UTF-8 is, if any (such bytes are read as U+FFFD). Errors are
/// the file's; a failed write to `out` (a closed pipe) ends the output
/// quietly.
pub fn audit(
    file: &mut File,
    options: Options,
    progress: bool,
    out: &mut impl Write,
) -> std::io::Result<Option<u64>> {
    let size = file.metadata().map_or(0, |m| m.len());
    let mut progress = Progress::new(size, progress);
    file.rewind()?;
    if options.moves {
        // One pass: a layout change is judged where it is read.
        let mut report = moves::Moves::new(options.tsv);
        let not_utf8 = read_lines(file, &mut progress, 0, |number, line| {
            report.line(number, line, out);
        })?;
        progress.clear();
        let _ = report.finish(out);
        return Ok(not_utf8);
    }
    let mut graph = Graph::default();
    let not_utf8 = read_lines(file, &mut progress, 1, |_, line| graph.line(line))?;
    file.rewind()?;
    let reach = graph.reach();
    let mut audit = Audit::new(reach, options);
    read_lines(file, &mut progress, 2, |number, line| {
        audit.line(number, line, out);
    })?;
    progress.clear();
    let _ = audit.finish(&graph, out);
    Ok(not_utf8)
}

/// Calls `each` with the number (from 1) and text of every line, read in
/// chunks; text that is not UTF-8 is read lossily, and the position of its
/// first such byte returned. `pass` is for the progress line: 1 or 2 of
/// two, or 0 for a single pass.
fn read_lines(
    file: &mut File,
    progress: &mut Progress,
    pass: u8,
    mut each: impl FnMut(u64, &str),
) -> std::io::Result<Option<u64>> {
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut buf = Vec::with_capacity(1 << 12);
    let mut number = 0u64;
    let mut read = 0u64;
    let mut not_utf8 = None;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(not_utf8);
        }
        number += 1;
        progress.show(pass, read + n as u64);
        let line = match std::str::from_utf8(&buf) {
            Ok(line) => std::borrow::Cow::Borrowed(line),
            Err(e) => {
                not_utf8 = not_utf8.or(Some(read + e.valid_up_to() as u64));
                String::from_utf8_lossy(&buf)
            }
        };
        read += n as u64;
        each(number, line.trim_end_matches(['\n', '\r']));
    }
}

/// The progress line on standard error, for large inputs on a terminal.
struct Progress {
    total: u64,
    shown: bool,
    enabled: bool,
    last: Instant,
}

impl Progress {
    fn new(total: u64, terminal: bool) -> Self {
        Progress {
            total,
            shown: false,
            enabled: total > PROGRESS_FROM && terminal,
            last: Instant::now(),
        }
    }

    fn show(&mut self, pass: u8, read: u64) {
        // Checking the clock on every line would cost more than the line.
        if !self.enabled
            || read % (1 << 20) > 4096
            || self.last.elapsed() < Duration::from_millis(200)
        {
            return;
        }
        self.last = Instant::now();
        self.shown = true;
        let pass = if pass == 0 {
            String::new()
        } else {
            format!(", pass {pass} of 2")
        };
        eprint!(
            "\rreading the module{pass}: {} of {} MiB ({}%)   ",
            read >> 20,
            self.total >> 20,
            read * 100 / self.total.max(1)
        );
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r{:60}\r", "");
            self.shown = false;
        }
    }
}

/// The computations a `while`, `conditional` or `call` runs, by caller,
/// and the entry computation: what the first pass learns.
#[derive(Default)]
struct Graph {
    module: Option<String>,
    entry: Option<String>,
    current: Option<String>,
    runs: HashMap<String, Vec<String>>,
    computations: u64,
}

impl Graph {
    fn line(&mut self, text: &str) {
        // Only headers, ends and the opcodes that run computations matter
        // here; most lines are none of them and need no reading.
        let trimmed = text.trim();
        if !(trimmed.ends_with('{')
            || trimmed == "}"
            || trimmed.starts_with("HloModule")
            || text.contains("while(")
            || text.contains("call(")
            || text.contains("conditional("))
        {
            return;
        }
        match hlo::line(text) {
            Line::Module { name } => self.module = Some(name.to_string()),
            Line::Computation { name, entry } => {
                self.computations += 1;
                if entry {
                    self.entry = Some(name.to_string());
                }
                self.current = Some(name.to_string());
            }
            Line::End => self.current = None,
            Line::Instruction(i) => {
                for call in i.calls().filter(hlo::Call::runs_on_its_own) {
                    let caller = self.current.clone().unwrap_or_default();
                    self.runs
                        .entry(caller)
                        .or_default()
                        .push(call.computation().to_string());
                }
            }
            Line::Blank | Line::Unread => {}
        }
    }

    /// The computations that run on their own: ENTRY and what it reaches
    /// through `while`, `conditional` and `call`.
    fn reach(&self) -> Reach {
        let mut seen = HashSet::new();
        let mut todo: Vec<&str> = self.entry.iter().map(String::as_str).collect();
        while let Some(name) = todo.pop() {
            if seen.insert(name.to_string()) {
                todo.extend(
                    self.runs
                        .get(name)
                        .into_iter()
                        .flatten()
                        .map(String::as_str),
                );
            }
        }
        Reach {
            entry: self.entry.clone(),
            running: seen,
        }
    }
}

struct Reach {
    entry: Option<String>,
    running: HashSet<String>,
}

/// Results that are another buffer under a new name, or no buffer: a
/// `bitcast` views its operand, `get-tuple-element`, `tuple`, `while`,
/// `conditional` and `call` hand on buffers made elsewhere.
const ALIASES: [&str; 6] = [
    "bitcast",
    "get-tuple-element",
    "tuple",
    "while",
    "conditional",
    "call",
];

/// A distinct shape text, sized once.
enum Sized {
    /// Index into [`Audit::shapes`].
    Shape(usize),
    /// `token[]` and other non-arrays: no buffer.
    NotArray,
    Refused(String),
}

/// One distinct layout among the buffers, and what its buffers cost.
struct Shape {
    layout: Layout,
    spec: String,
    storage: u64,
    padding: u64,
    count: u64,
    names: Vec<String>,
}

struct Audit {
    reach: Reach,
    options: Options,
    current: Option<(String, bool, bool)>,
    by_text: HashMap<String, Sized>,
    by_spec: HashMap<String, usize>,
    shapes: Vec<Shape>,
    refused: HashMap<String, (u64, String)>,
    deep: u64,
    buffers: u64,
    /// Lines outside fusion bodies and reducers read as nothing.
    unread: u64,
    first_unread: Option<u64>,
}

impl Audit {
    fn new(reach: Reach, options: Options) -> Self {
        Audit {
            reach,
            options,
            current: None,
            by_text: HashMap::new(),
            by_spec: HashMap::new(),
            shapes: Vec::new(),
            refused: HashMap::new(),
            deep: 0,
            buffers: 0,
            unread: 0,
            first_unread: None,
        }
    }

    fn line(&mut self, number: u64, text: &str, out: &mut impl Write) {
        if matches!(self.current, Some((_, _, false))) {
            // A fusion body or a reducer: only its end matters, and most of
            // a dump is such lines.
            let trimmed = text.trim();
            if trimmed != "}" && !trimmed.ends_with('{') {
                return;
            }
        }
        match hlo::line(text) {
            Line::Computation { name, entry } => {
                let running = self.reach.running.contains(name);
                self.current = Some((name.to_string(), entry, running));
            }
            Line::End => self.current = None,
            Line::Instruction(i) => {
                let Some((computation, entry, true)) = self.current.take() else {
                    return;
                };
                if !(ALIASES.contains(&i.opcode()) || (i.opcode() == "parameter" && !entry)) {
                    self.instruction(&computation, &i, out);
                }
                self.current = Some((computation, entry, true));
            }
            Line::Unread => {
                self.unread += 1;
                self.first_unread.get_or_insert(number);
            }
            Line::Module { .. } | Line::Blank => {}
        }
    }

    fn instruction(&mut self, computation: &str, i: &Instruction<'_>, out: &mut impl Write) {
        for element in i.elements() {
            let Ok(element) = element else {
                self.deep += 1;
                continue;
            };
            let index = match self.size(element.shape()) {
                Sized::Shape(index) => *index,
                Sized::NotArray => continue,
                Sized::Refused(why) => {
                    let why = why.clone();
                    self.refused
                        .entry(element.shape().to_string())
                        .or_insert((0, why))
                        .0 += 1;
                    continue;
                }
            };
            self.buffers += 1;
            let shape = &mut self.shapes[index];
            shape.count += 1;
            if self.options.tsv && self.options.buffers {
                let _ = writeln!(
                    out,
                    "{computation}\t{}\t{}\t{}\t{}\t{}\t{}",
                    i.name(),
                    element.path(),
                    shape.spec,
                    shape.storage,
                    shape.padding,
                    i.opcode()
                );
            } else if shape.names.len() < NAMES_KEPT {
                let path = element.path().to_string();
                let sep = if path.is_empty() { "" } else { " #" };
                shape
                    .names
                    .push(format!("{computation}/{}{sep}{path}", i.name()));
            }
        }
    }

    /// The shape `text` names, sized once per distinct text.
    fn size(&mut self, text: &str) -> &Sized {
        if !self.by_text.contains_key(text) {
            let sized = match xla_layout::parse(text) {
                Ok(layout) => {
                    let spec = layout.to_string();
                    let index = *self.by_spec.entry(spec.clone()).or_insert_with(|| {
                        let storage = layout.storage_bytes() as u64;
                        let padding = storage.saturating_sub(data_bytes(&layout));
                        self.shapes.push(Shape {
                            layout,
                            storage,
                            padding,
                            spec,
                            count: 0,
                            names: Vec::new(),
                        });
                        self.shapes.len() - 1
                    });
                    Sized::Shape(index)
                }
                Err(e) if matches!(e.first().kind(), xla_layout::ErrorKind::NotAnArray { .. }) => {
                    Sized::NotArray
                }
                Err(e) => Sized::Refused(e.first().to_string()),
            };
            self.by_text.insert(text.to_string(), sized);
        }
        &self.by_text[text]
    }

    fn finish(mut self, graph: &Graph, out: &mut impl Write) -> std::io::Result<()> {
        let total = |s: &Shape, each: u64| u128::from(s.count) * u128::from(each);
        self.shapes.retain(|s| s.count > 0);
        self.shapes.sort_by(|a, b| {
            total(b, b.padding)
                .cmp(&total(a, a.padding))
                .then_with(|| a.spec.cmp(&b.spec))
        });
        let mut refused: Vec<_> = self.refused.iter().collect();
        refused.sort();
        let mut notes = Vec::new();
        if self.reach.entry.is_none() {
            notes.push("the module has no ENTRY computation, so no buffers to list".to_string());
        }
        if self.unread > 0 {
            notes.push(format!(
                "{} lines read as no instruction, header or `}}` (the first is line {}); \
                 XLA prints one instruction a line",
                self.unread,
                self.first_unread.unwrap_or(0)
            ));
        }
        if self.deep > 0 {
            notes.push(format!(
                "{} arrays nested in more than {} tuples left out",
                self.deep,
                hlo::MAX_TUPLE_DEPTH
            ));
        }
        if self.options.tsv {
            if !self.options.buffers {
                for s in &self.shapes {
                    writeln!(out, "{}\t{}\t{}\t{}", s.spec, s.count, s.storage, s.padding)?;
                }
            }
            for (text, (count, why)) in &refused {
                eprintln!("xla-layout: refused `{text}` ({count}x): {why}");
            }
            for note in &notes {
                eprintln!("xla-layout: {note}");
            }
            return Ok(());
        }
        self.report(graph, &refused, &notes, out)
    }

    fn report(
        &self,
        graph: &Graph,
        refused: &[(&String, &(u64, String))],
        notes: &[String],
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let module = graph.module.as_deref().unwrap_or("(unnamed)");
        writeln!(
            out,
            "module {module}: {} in {} of its {} computations, those that run on their own\n\
             (ENTRY and what it runs through while, conditional and call; fusion bodies and\n\
             computations applied element by element keep none)\n",
            buffers(self.buffers),
            self.reach.running.len(),
            graph.computations
        )?;
        writeln!(
            out,
            "{:>6}  {:>14}  {:>14}  {:>7}  spec",
            "count", "bytes each", "padding each", "padding"
        )?;
        let (mut storage, mut padding) = (0u128, 0u128);
        for s in &self.shapes {
            writeln!(
                out,
                "{:>6}  {:>14}  {:>14}  {:>7}  {}",
                s.count,
                s.storage,
                s.padding,
                share(u128::from(s.padding), u128::from(s.storage)),
                s.spec
            )?;
            storage += u128::from(s.count) * u128::from(s.storage);
            padding += u128::from(s.count) * u128::from(s.padding);
        }
        writeln!(
            out,
            "{:>6}  {storage:>14}  {padding:>14}  {:>7}  total: {} distinct shapes",
            self.buffers,
            share(padding, storage),
            self.shapes.len()
        )?;
        self.details(out)?;
        self.memory_spaces(out)?;
        if !refused.is_empty() {
            writeln!(out, "\nrefused shapes (not counted above):")?;
            for (text, (count, why)) in refused {
                writeln!(out, "{count:>6}  {text}: {why}")?;
            }
        }
        for note in notes {
            writeln!(out, "\nnote: {note}")?;
        }
        Ok(())
    }

    /// The most padded shapes: the dims their tiles pad, the TPU chooser's
    /// layout and what it saves, and the instructions that make them.
    fn details(&self, out: &mut impl Write) -> std::io::Result<()> {
        let padded: Vec<&Shape> = self
            .shapes
            .iter()
            .filter(|s| s.padding > 0)
            .take(DETAILED)
            .collect();
        if !padded.is_empty() {
            writeln!(out, "\nwhere the padding is, most first:")?;
        }
        let mut saved = 0u128;
        for s in padded {
            let mut text = String::new();
            let _ = writeln!(
                text,
                "\n{}\n  {}, {} bytes of padding in all ({} each)",
                s.spec,
                buffers(s.count),
                u128::from(s.count) * u128::from(s.padding),
                s.padding
            );
            let _ = writeln!(text, "  padded: {}", padded_dims(&s.layout));
            let (line, each) = cheaper(&s.layout);
            saved += u128::from(s.count) * u128::from(each);
            let _ = writeln!(text, "  {line}");
            let more = s.count.saturating_sub(s.names.len() as u64);
            let _ = write!(text, "  instructions: {}", s.names.join(", "));
            if more > 0 {
                let _ = write!(text, " and {more} more");
            }
            writeln!(out, "{text}")?;
        }
        if saved > 0 {
            writeln!(
                out,
                "\nthe TPU chooser's layouts for these shapes would save {saved} bytes in all"
            )?;
        }
        Ok(())
    }

    /// The one line on memory spaces, and the bytes in each, when any
    /// buffer is outside the default one.
    fn memory_spaces(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut spaces: Vec<(u64, u128, u64)> = Vec::new();
        for s in &self.shapes {
            let space = s.layout.memory_space();
            let bytes = u128::from(s.count) * u128::from(s.storage);
            match spaces.iter_mut().find(|e| e.0 == space) {
                Some(e) => {
                    e.1 += bytes;
                    e.2 += s.count;
                }
                None => spaces.push((space, bytes, s.count)),
            }
        }
        spaces.sort_unstable();
        if spaces.iter().any(|s| s.0 != 0) {
            writeln!(
                out,
                "\nmemory spaces: S(n) says where a buffer lives, not how it is laid out: \
                 none (or S(0)) is device memory, S(1) the fast memory XLA's memory-space \
                 assignment moves buffers into (on a TPU, on-chip), S(5) host memory, others \
                 the backend's own"
            )?;
            for (space, bytes, count) in spaces {
                let name = if space == 0 {
                    "device memory".to_string()
                } else {
                    format!("S({space})")
                };
                writeln!(out, "  {name}: {}, {bytes} bytes", buffers(count))?;
            }
        }
        Ok(())
    }
}

/// `n buffers`, or `1 buffer`.
fn buffers(n: u64) -> String {
    format!("{n} buffer{}", if n == 1 { "" } else { "s" })
}

/// Bytes the elements themselves take, packed.
fn data_bytes(layout: &Layout) -> u64 {
    (layout.len() as u128 * u128::from(layout.element_bits())).div_ceil(8) as u64
}

/// `part` as a percentage of `whole`, one decimal.
pub fn share(part: u128, whole: u128) -> String {
    if whole == 0 {
        return "-".into();
    }
    let tenths = (part * 1000 + whole / 2) / whole;
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// Which dims the first tiling level pads and by how much, in elements,
/// and the padding the later levels and `L(n)` add.
fn padded_dims(layout: &Layout) -> String {
    let rank = layout.rank();
    // Physical dims, most major first, and the logical dim each one is.
    let order: Vec<usize> = layout.minor_to_major().iter().rev().copied().collect();
    let Some(tile) = layout.tiles().first() else {
        return format!(
            "no tiles; L({}) rounds the storage up by {} slots",
            layout.tail_alignment(),
            layout.padding_len()
        );
    };
    let k = tile.rank();
    let mut parts = Vec::new();
    let mut slots: u128 = order
        .iter()
        .take(rank.saturating_sub(k))
        .map(|&d| layout.dims()[d] as u128)
        .product();
    let mut group: Vec<usize> = Vec::new();
    let mut size = 1u128;
    for (j, dim) in tile.dims().iter().enumerate() {
        // Tile dims line up with the most minor physical dims; a tile of
        // more dims than the shape adds dims of 1 on the major side.
        let physical = (rank + j).checked_sub(k);
        if let Some(p) = physical {
            group.push(order[p]);
            size *= layout.dims()[order[p]] as u128;
        }
        let TileDim::Size(n) = *dim else { continue };
        let padded = size.div_ceil(n as u128).max(1) * n as u128;
        slots *= padded;
        if padded != size {
            parts.push(match group.as_slice() {
                [] => format!(
                    "the dim of 1 the tile adds to a lower rank, 1 -> {padded} (+{})",
                    padded - 1
                ),
                [d] => format!("dim {d}, {size} -> {padded} (+{})", padded - size),
                dims => format!(
                    "dims {} combined, {size} -> {padded} (+{})",
                    dims.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                    padded - size
                ),
            });
        }
        group.clear();
        size = 1;
    }
    let mut text = if parts.is_empty() {
        format!("T{tile} divides every dim it covers")
    } else {
        format!("by T{tile}: {}", parts.join("; "))
    };
    let rest = (layout.storage_len() as u128).saturating_sub(slots);
    if rest > 0 {
        let _ = write!(
            text,
            "; {rest} more slots from later tiling levels and L(n)"
        );
    }
    text
}

/// The TPU chooser's layout for this shape and what it would save a
/// buffer, and a cheaper choice of the two most minor dims if there is one.
fn cheaper(layout: &Layout) -> (String, u64) {
    let Ok(chosen) = tpu_layout_like(layout) else {
        return ("TPU chooser: no layout for this shape".into(), 0);
    };
    let storage = layout.storage_bytes() as u64;
    let chosen_storage = chosen.storage_bytes() as u64;
    let mut text = if chosen == *layout {
        "TPU chooser: picks this layout".to_string()
    } else if chosen_storage < storage {
        format!(
            "TPU chooser: {chosen} saves {} bytes each",
            storage - chosen_storage
        )
    } else if chosen_storage == storage {
        format!("TPU chooser: {chosen}, the same size")
    } else {
        format!("TPU chooser: {chosen} takes {chosen_storage} bytes each, more")
    };
    let saved = storage.saturating_sub(chosen_storage);
    // Other dims most minor: the tiles pad other dims.
    let mut best: Option<Layout> = None;
    let m2m = layout.minor_to_major();
    for &a in m2m {
        for &b in m2m {
            if a == b {
                continue;
            }
            let order: Vec<usize> = [a, b]
                .into_iter()
                .chain(m2m.iter().copied().filter(|&d| d != a && d != b))
                .collect();
            let Ok(base) = LayoutBuilder::new(layout.element_type(), layout.dims())
                .minor_to_major(&order)
                .memory_space(layout.memory_space())
                .build()
            else {
                continue;
            };
            let Ok(candidate) = tpu_layout_like(&base) else {
                continue;
            };
            if candidate.storage_bytes() < best.as_ref().map_or(usize::MAX, Layout::storage_bytes) {
                best = Some(candidate);
            }
        }
    }
    if let Some(best) = best.filter(|b| (b.storage_bytes() as u64) < chosen_storage.min(storage)) {
        let _ = write!(
            text,
            "; with dim {} most minor and dim {} next, {best} saves {} bytes each \
             (a transpose where it is made)",
            best.minor_to_major()[0],
            best.minor_to_major()[1],
            storage - best.storage_bytes() as u64
        );
    }
    (text, saved)
}
