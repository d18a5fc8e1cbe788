//! One line of a module at a time: computation headers, their ends, and
//! instructions with their result shapes, opcodes, operands and the
//! computations they call.
//!
//! XLA prints one instruction per line, so a dump of any size is read a line
//! at a time in constant memory: [`line()`] classifies one line without
//! allocating. A line it cannot read (an instruction split over several
//! lines, as hand-written test modules sometimes are) is
//! [`Line::Unread`], never a guess.

use super::{closing_brace, skip_string, word_end};

/// What one line of HLO text holds; see [`line()`].
///
/// # Examples
///
/// ```
/// use xla_layout::hlo::{line, Line};
/// assert!(matches!(line("HloModule m, is_scheduled=true"), Line::Module { name: "m" }));
/// assert!(matches!(line("ENTRY %main (p: f32[2]) -> f32[2] {"), Line::Computation { name: "main", entry: true }));
/// assert!(matches!(line("}"), Line::End));
/// let Line::Instruction(i) = line("  ROOT %n = f32[2]{0} negate(f32[2]{0} %p)") else { panic!() };
/// assert_eq!((i.name(), i.opcode(), i.is_root()), ("n", "negate", true));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Line<'a> {
    /// `HloModule name, ...`: the module's name.
    Module {
        /// The name, `%` left off.
        name: &'a str,
    },
    /// A computation's header, `[ENTRY] %name (params) -> shape {` or `name {`.
    Computation {
        /// The name, `%` left off.
        name: &'a str,
        /// Whether it is the module's entry computation.
        entry: bool,
    },
    /// `}`: the end of the computation.
    End,
    /// One instruction.
    Instruction(Instruction<'a>),
    /// Nothing to read: a blank line or a comment.
    Blank,
    /// Text that is none of the above, such as part of an instruction
    /// written over several lines.
    Unread,
}

/// One instruction: `[ROOT] %name = shape opcode(operands), attributes`.
///
/// # Examples
///
/// ```
/// use xla_layout::hlo::{line, Line};
/// let text = "%w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body";
/// let Line::Instruction(w) = line(text) else { panic!() };
/// assert_eq!(w.shape(), "(s32[], f32[8]{0})");
/// assert_eq!(w.operands(), "%t");
/// assert_eq!(w.attribute("body"), Some("%body"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Instruction<'a> {
    name: &'a str,
    root: bool,
    shape: &'a str,
    opcode: &'a str,
    operands: &'a str,
    attributes: &'a str,
}

/// Classifies one line of HLO text (its line break, if any, included or not).
///
/// # Examples
///
/// ```
/// use xla_layout::hlo::{line, Line};
/// assert!(matches!(line("  "), Line::Blank));
/// assert!(matches!(line("/* a comment */"), Line::Blank));
/// // An instruction written over two lines is not read as a part of one.
/// assert!(matches!(line("  ROOT out = s8[4]{0}"), Line::Unread));
/// ```
pub fn line(text: &str) -> Line<'_> {
    let text = text.trim();
    if text.is_empty() || text.starts_with("//") || text.starts_with("/*") && text.ends_with("*/") {
        return Line::Blank;
    }
    if text == "}" {
        return Line::End;
    }
    if let Some(rest) = text.strip_prefix("HloModule") {
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        return Line::Module {
            name: strip_percent(&rest[..end]),
        };
    }
    if let Some(i) = instruction(text) {
        return Line::Instruction(i);
    }
    if let Some(body) = text.strip_suffix('{') {
        let (entry, rest) = match body.strip_prefix("ENTRY") {
            Some(rest) if rest.starts_with(char::is_whitespace) => (true, rest.trim_start()),
            _ => (false, body),
        };
        let end = name_end(rest.as_bytes(), 0);
        // The name is followed by the signature or by the brace itself: the
        // end of a signature written over two lines is no header.
        let next = rest.as_bytes().get(skip_blank(rest.as_bytes(), end));
        if end > 0 && matches!(next, Some(b'(') | None) {
            return Line::Computation {
                name: strip_percent(&rest[..end]),
                entry,
            };
        }
    }
    Line::Unread
}

fn strip_percent(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

/// One past the last byte of the instruction or computation name at `start`.
fn name_end(bytes: &[u8], start: usize) -> usize {
    start
        + bytes[start..]
            .iter()
            .take_while(|&&c| {
                c.is_ascii_alphanumeric() || matches!(c, b'%' | b'_' | b'.' | b'-' | b'$')
            })
            .count()
}

fn skip_blank(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The instruction on this (trimmed) line, if it is one.
fn instruction(text: &str) -> Option<Instruction<'_>> {
    let bytes = text.as_bytes();
    let (root, start) = match text.strip_prefix("ROOT") {
        Some(rest) if rest.starts_with(char::is_whitespace) => (true, skip_blank(bytes, 4)),
        _ => (false, 0),
    };
    let name_stop = name_end(bytes, start);
    if name_stop == start {
        return None;
    }
    let eq = skip_blank(bytes, name_stop);
    if bytes.get(eq) != Some(&b'=') {
        return None;
    }
    let shape_start = skip_blank(bytes, eq + 1);
    let shape_end = shape_end(bytes, shape_start)?;
    let opcode_start = skip_blank(bytes, shape_end);
    let opcode_end = opcode_start
        + bytes[opcode_start..]
            .iter()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            .count();
    if opcode_end == opcode_start || bytes.get(opcode_end) != Some(&b'(') {
        return None;
    }
    let close = closing(bytes, opcode_end)?;
    let rest = text[close + 1..].trim_start();
    let attributes = rest.strip_prefix(',').map_or(rest, str::trim_start);
    Some(Instruction {
        name: strip_percent(&text[start..name_stop]),
        root,
        shape: &text[shape_start..shape_end],
        opcode: &text[opcode_start..opcode_end],
        operands: text[opcode_end + 1..close].trim(),
        attributes,
    })
}

/// One past the shape at `start`: a tuple `( ... )` or an array
/// `type[dims]{layout}`; `None` if none is there.
fn shape_end(bytes: &[u8], start: usize) -> Option<usize> {
    if *bytes.get(start)? == b'(' {
        return closing(bytes, start).map(|c| c + 1);
    }
    let word = word_end(bytes, start);
    if word == start || bytes.get(word) != Some(&b'[') {
        return None;
    }
    let dims_end = word + bytes[word..].iter().position(|&c| c == b']')? + 1;
    if bytes.get(dims_end) == Some(&b'{') {
        let end = closing_brace(bytes, dims_end);
        (bytes.get(end - 1) == Some(&b'}')).then_some(end)
    } else {
        Some(dims_end)
    }
}

/// The `)` that closes the `(` at `open`, brackets and braces nested and
/// quoted text skipped; `None` if the line ends first.
fn closing(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = skip_string(bytes, at);
                continue;
            }
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (bytes[at] == b')').then_some(at);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The pieces of `text` between commas that are not nested in brackets,
/// braces or quotes, trimmed; empty pieces left out.
fn top_level(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    core::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            let mut depth = 0usize;
            while at < bytes.len() {
                match bytes[at] {
                    b'"' => {
                        at = skip_string(bytes, at);
                        continue;
                    }
                    b'(' | b'{' | b'[' => depth += 1,
                    b')' | b'}' | b']' => depth = depth.saturating_sub(1),
                    b',' if depth == 0 => break,
                    _ => {}
                }
                at += 1;
            }
            let piece = text[start..at.min(bytes.len())].trim();
            at += 1;
            if !piece.is_empty() {
                return Some(piece);
            }
        }
        None
    })
}

impl<'a> Instruction<'a> {
    /// The name, `%` left off.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("%a.1 = f32[] constant(1)") else { panic!() };
    /// assert_eq!(i.name(), "a.1");
    /// ```
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Whether the line starts with `ROOT`: the computation's result.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("ROOT a = f32[] constant(1)") else { panic!() };
    /// assert!(i.is_root());
    /// ```
    pub fn is_root(&self) -> bool {
        self.root
    }

    /// The result shape as written: an array shape or a tuple `( ... )`;
    /// [`elements`](Self::elements) walks a tuple's arrays.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("a = u8[3]{0:T(128)} iota(), iota_dimension=0") else { panic!() };
    /// assert_eq!(i.shape(), "u8[3]{0:T(128)}");
    /// ```
    pub fn shape(&self) -> &'a str {
        self.shape
    }

    /// The opcode, such as `fusion` or `get-tuple-element`.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("g = f32[] get-tuple-element(t), index=0") else { panic!() };
    /// assert_eq!(i.opcode(), "get-tuple-element");
    /// ```
    pub fn opcode(&self) -> &'a str {
        self.opcode
    }

    /// The text between the opcode's parentheses, trimmed.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("a = f32[2]{0} add(f32[2]{0} %x, y)") else { panic!() };
    /// assert_eq!(i.operands(), "f32[2]{0} %x, y");
    /// ```
    pub fn operands(&self) -> &'a str {
        self.operands
    }

    /// Each operand: its name (`%` left off) and its shape when the text
    /// writes one before the name.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("a = f32[2]{0} add(f32[2]{0} %x, y)") else { panic!() };
    /// let ops: Vec<_> = i.operand_list().collect();
    /// assert_eq!(ops, [("x", Some("f32[2]{0}")), ("y", None)]);
    /// ```
    pub fn operand_list(&self) -> impl Iterator<Item = (&'a str, Option<&'a str>)> {
        top_level(self.operands).map(|piece| {
            let bytes = piece.as_bytes();
            match shape_end(bytes, 0) {
                Some(end) if end < piece.len() && bytes[end].is_ascii_whitespace() => {
                    (strip_percent(piece[end..].trim()), Some(&piece[..end]))
                }
                _ => (strip_percent(piece), None),
            }
        })
    }

    /// The text after the operands: the attributes, `key=value` separated
    /// by commas.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line("g = f32[] get-tuple-element(t), index=0") else { panic!() };
    /// assert_eq!(i.attributes(), "index=0");
    /// ```
    pub fn attributes(&self) -> &'a str {
        self.attributes
    }

    /// The value of the attribute `key`, as written.
    ///
    /// # Examples
    ///
    /// ```
    /// let xla_layout::hlo::Line::Instruction(i) = xla_layout::hlo::line(
    ///     r#"c = f32[] conditional(p, a, b), branch_computations={%x, %y}, metadata={op_name="k=v"}"#,
    /// ) else { panic!() };
    /// assert_eq!(i.attribute("branch_computations"), Some("{%x, %y}"));
    /// assert_eq!(i.attribute("op_name"), None);
    /// ```
    pub fn attribute(&self, key: &str) -> Option<&'a str> {
        top_level(self.attributes).find_map(|piece| {
            let (k, v) = piece.split_once('=')?;
            (k.trim() == key).then(|| v.trim())
        })
    }

    /// Every computation the instruction names (`calls=`, `to_apply=`,
    /// `body=`, `condition=`, `branch_computations=`, `true_computation=`,
    /// `false_computation=`, `called_computations=`), in text order.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(w) = line("w = (s32[]) while(t), condition=%c, body=%b") else { panic!() };
    /// let calls: Vec<_> = w.calls().map(|c| (c.computation(), c.runs_on_its_own())).collect();
    /// assert_eq!(calls, [("c", true), ("b", true)]);
    /// let Line::Instruction(r) = line("r = f32[] reduce(x, z), dimensions={0}, to_apply=%add") else { panic!() };
    /// assert!(!r.calls().next().unwrap().runs_on_its_own());
    /// ```
    pub fn calls(&self) -> impl Iterator<Item = Call<'a>> {
        let opcode = self.opcode;
        top_level(self.attributes).flat_map(move |piece| {
            let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
            let key = key.trim();
            let known = matches!(
                key,
                "calls"
                    | "to_apply"
                    | "body"
                    | "condition"
                    | "branch_computations"
                    | "true_computation"
                    | "false_computation"
                    | "called_computations"
            );
            let value = if known { value.trim() } else { "" };
            let list = value
                .strip_prefix('{')
                .and_then(|v| v.strip_suffix('}'))
                .unwrap_or(value);
            top_level(list).map(move |name| Call {
                opcode,
                key,
                computation: strip_percent(name),
            })
        })
    }

    /// The arrays of the result: the shape itself, or each array of a
    /// tuple, depth first, with its [`TuplePath`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(i) = line("t = ((s32[1]{0}, u8[]), f32[2]{0}) tuple(a, b)") else { panic!() };
    /// let found: Vec<_> = i.elements().map(|e| { let e = e.unwrap(); (e.path().to_string(), e.shape()) }).collect();
    /// assert_eq!(found, [("0.0".to_string(), "s32[1]{0}"), ("0.1".into(), "u8[]"), ("1".into(), "f32[2]{0}")]);
    /// ```
    pub fn elements(&self) -> Elements<'a> {
        elements(self.shape)
    }
}

/// A computation an instruction names, and how it is called; see
/// [`Instruction::calls`].
///
/// # Examples
///
/// ```
/// use xla_layout::hlo::{line, Line};
/// let Line::Instruction(f) = line("f = f32[2]{0} fusion(x), kind=kLoop, calls=%fused") else { panic!() };
/// let call = f.calls().next().unwrap();
/// assert_eq!((call.key(), call.computation(), call.runs_on_its_own()), ("calls", "fused", false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    opcode: &'a str,
    key: &'a str,
    computation: &'a str,
}

impl<'a> Call<'a> {
    /// The computation's name, `%` left off.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(c) = line("c = f32[] call(x), to_apply=%f") else { panic!() };
    /// assert_eq!(c.calls().next().unwrap().computation(), "f");
    /// ```
    pub fn computation(&self) -> &'a str {
        self.computation
    }

    /// The attribute that names it, such as `body` or `calls`.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(c) = line("c = f32[] call(x), to_apply=%f") else { panic!() };
    /// assert_eq!(c.calls().next().unwrap().key(), "to_apply");
    /// ```
    pub fn key(&self) -> &'a str {
        self.key
    }

    /// Whether the computation runs as a program of its own, keeping its
    /// instructions' results in memory: a `while`'s body and condition, a
    /// `conditional`'s branches and what a `call` applies. A fusion's body
    /// is compiled into the fusion, and a reducer or comparator
    /// (`to_apply=` of anything but `call`) is applied element by element,
    /// so neither keeps buffers of its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(c) = line("c = f32[] conditional(p, a, b), true_computation=t, false_computation=f") else { panic!() };
    /// assert!(c.calls().all(|call| call.runs_on_its_own()));
    /// ```
    pub fn runs_on_its_own(&self) -> bool {
        matches!(
            (self.opcode, self.key),
            ("while", "body" | "condition")
                | (
                    "conditional",
                    "branch_computations" | "true_computation" | "false_computation"
                )
                | ("call", "to_apply")
        )
    }
}

/// How deep a tuple may nest for [`TuplePath`]; deeper arrays are reported
/// as [`TupleTooDeep`].
pub const MAX_TUPLE_DEPTH: usize = 16;

/// Where an array sits in a tuple-shaped result: the index at each level,
/// written `1.0` (element 0 of element 1); empty for an array result.
///
/// # Examples
///
/// ```
/// use xla_layout::hlo::{line, Line};
/// let Line::Instruction(i) = line("a = f32[2]{0} negate(x)") else { panic!() };
/// let e = i.elements().next().unwrap().unwrap();
/// assert!(e.path().indices().is_empty());
/// assert_eq!(e.path().to_string(), "");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TuplePath {
    indices: [u32; MAX_TUPLE_DEPTH],
    len: u8,
}

impl TuplePath {
    /// The index at each level, outermost first.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::hlo::{line, Line};
    /// let Line::Instruction(i) = line("t = (f32[2]{0}, (u8[], s8[])) tuple(a, b)") else { panic!() };
    /// let last = i.elements().last().unwrap().unwrap();
    /// assert_eq!(last.path().indices(), [1, 1]);
    /// ```
    pub fn indices(&self) -> &[u32] {
        &self.indices[..usize::from(self.len)]
    }
}

impl core::fmt::Display for TuplePath {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, index) in self.indices().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{index}")?;
        }
        Ok(())
    }
}

/// One array of a result shape; see [`Instruction::elements`].
///
/// # Examples
///
/// ```
/// let e = xla_layout::hlo::elements("(f32[2]{0}, token[])").nth(1).unwrap().unwrap();
/// assert_eq!((e.shape(), e.path().to_string().as_str()), ("token[]", "1"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element<'a> {
    path: TuplePath,
    shape: &'a str,
}

impl<'a> Element<'a> {
    /// Where it is in the tuple.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = xla_layout::hlo::elements("(f32[2]{0})").next().unwrap().unwrap();
    /// assert_eq!(e.path().indices(), [0]);
    /// ```
    pub fn path(&self) -> &TuplePath {
        &self.path
    }

    /// The array shape as written, for [`parse`](crate::parse); `token[]`
    /// too, which `parse` refuses as no array.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = xla_layout::hlo::elements("bf16[8]{0:T(128)}").next().unwrap().unwrap();
    /// assert_eq!(e.shape(), "bf16[8]{0:T(128)}");
    /// ```
    pub fn shape(&self) -> &'a str {
        self.shape
    }
}

/// An array nested deeper than [`MAX_TUPLE_DEPTH`] tuples: it has no
/// [`TuplePath`].
///
/// # Examples
///
/// ```
/// let deep = format!("{}f32[]{}", "(".repeat(17), ")".repeat(17));
/// let err = xla_layout::hlo::elements(&deep).next().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), "`f32[]` is nested in 17 tuples, more than the 16 a tuple index is kept for");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleTooDeep<'a> {
    shape: &'a str,
    depth: usize,
}

impl core::fmt::Display for TupleTooDeep<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "`{}` is nested in {} tuples, more than the {MAX_TUPLE_DEPTH} a tuple index is kept for",
            self.shape, self.depth
        )
    }
}

impl core::error::Error for TupleTooDeep<'_> {}

/// The arrays of a shape: itself, or each array of a tuple, depth first;
/// see [`Instruction::elements`].
///
/// # Examples
///
/// ```
/// assert_eq!(xla_layout::hlo::elements("()").count(), 0);
/// assert_eq!(xla_layout::hlo::elements("(f32[], (s32[], u8[]))").count(), 3);
/// ```
pub fn elements(shape: &str) -> Elements<'_> {
    Elements {
        text: shape,
        at: 0,
        path: TuplePath::default(),
        depth: 0,
    }
}

/// The iterator [`elements`] returns.
///
/// # Examples
///
/// ```
/// let mut it = xla_layout::hlo::elements("(f32[], u8[])");
/// assert_eq!(it.next().unwrap().unwrap().shape(), "f32[]");
/// ```
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    text: &'a str,
    at: usize,
    /// The indices of the tuples the cursor is in (the first `depth` of them,
    /// up to [`MAX_TUPLE_DEPTH`]).
    path: TuplePath,
    depth: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Element<'a>, TupleTooDeep<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        loop {
            let at = skip_blank(bytes, self.at);
            match bytes.get(at)? {
                b'(' => {
                    if self.depth < MAX_TUPLE_DEPTH {
                        self.path.indices[self.depth] = 0;
                        self.path.len = self.depth as u8 + 1;
                    }
                    self.depth += 1;
                    self.at = at + 1;
                }
                b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.at = at + 1;
                }
                b',' => {
                    if (1..=MAX_TUPLE_DEPTH).contains(&self.depth) {
                        self.path.indices[self.depth - 1] += 1;
                    }
                    self.at = at + 1;
                }
                _ => {
                    let end = shape_end(bytes, at).unwrap_or_else(|| {
                        // Not a shape: skip to the next separator.
                        at + bytes[at..]
                            .iter()
                            .position(|&c| matches!(c, b',' | b')' | b'('))
                            .unwrap_or(bytes.len() - at)
                    });
                    let end = end.max(at + 1);
                    self.at = end;
                    let shape = &self.text[at..end];
                    if self.depth > MAX_TUPLE_DEPTH {
                        return Some(Err(TupleTooDeep {
                            shape,
                            depth: self.depth,
                        }));
                    }
                    let mut path = self.path;
                    path.len = self.depth as u8;
                    return Some(Ok(Element { path, shape }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn headers_and_instructions() {
        for (text, name, entry) in [
            (
                "ENTRY %main.5 (p: f32[2]) -> (f32[2], s32[]) {",
                "main.5",
                true,
            ),
            (
                "%fused_computation.1 (param_0: s8[]) -> s8[4096] {",
                "fused_computation.1",
                false,
            ),
            ("_.1 {", "_.1", false),
            ("ENTRY _ {", "_", true),
            (
                "%async (p: f32[]) -> f32[], execution_thread=\"main\" {",
                "async",
                false,
            ),
        ] {
            match line(text) {
                Line::Computation { name: n, entry: e } => {
                    assert_eq!((n, e), (name, entry), "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let Line::Instruction(i) = line(
            r#"  %x = (f32[2]{0:T(2)}, (s32[], pred[])) custom-call(f32[2]{0} %a, b), custom_call_target="f(x)", called_computations={%c1, c2}"#,
        ) else {
            panic!()
        };
        assert_eq!(i.opcode(), "custom-call");
        assert_eq!(i.attribute("custom_call_target"), Some("\"f(x)\""));
        let calls: Vec<_> = i.calls().map(|c| c.computation()).collect();
        assert_eq!(calls, ["c1", "c2"]);
        let paths: Vec<_> = i
            .elements()
            .map(|e| e.unwrap().path().indices().to_vec())
            .collect();
        assert_eq!(paths, [vec![0], vec![1, 0], vec![1, 1]]);
        for broken in [
            "a = f32[2]{0 negate(x)",
            "a = f32[2] negate(x",
            "a = (f32[2] tuple(x)",
            "a = negate(x)",
            "= f32[] negate(x)",
            "ENTRY {",
            "s32[]) -> s8[4096,4096] {",
            "kind=kLoop, calls=%fused_computation",
        ] {
            assert!(matches!(line(broken), Line::Unread), "{broken}");
        }
    }

    #[test]
    fn deep_tuples_keep_their_paths() {
        let deep = std::format!("{}f32[]{}, u8[])", "(".repeat(17), ")".repeat(16));
        let mut it = elements(&deep);
        assert!(it.next().unwrap().is_err());
        let next = it.next().unwrap().unwrap();
        assert_eq!(next.shape(), "u8[]");
        assert_eq!(next.path().indices(), [1]);
    }
}
