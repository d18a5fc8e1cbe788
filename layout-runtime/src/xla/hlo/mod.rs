//! Whole HLO text: every array shape in a module, as XLA dumps it, and
//! the module's lines one at a time.
//!
//! [`line()`] reads one line: a computation's header or end, or an
//! instruction with its result shape, opcode, operands and the computations
//! it calls, so a reader can tell the buffers a module keeps from the
//! subexpressions of its fusions (see [`Call::runs_on_its_own`]).
//!
//! [`shapes`] walks the text once and yields each array shape it meets
//! (`bf16[8,128]{1,0:T(8,128)(2,1)}`, the elements of a tuple shape
//! included) with its byte span and its [`Layout`], or the error that
//! [`parse`](crate::parse) gives for it. Nothing is allocated, so a dump of
//! any size is read in constant memory.
//!
//! The same array appears several times in a dump: as the shape an
//! instruction produces, then again beside each use of it as an operand,
//! in parameter lists and in the module header. [`ArrayShape::is_result`]
//! marks the first kind, so a tally of buffers counts each one once.
//!
//! Text between double quotes (metadata, backend configs) is skipped: a
//! source path or op name that looks like a shape is not one.
//!
//! # Examples
//!
//! ```
//! use xla_layout::hlo;
//! let module = "HloModule m
//! ENTRY e {
//!   p = bf16[3,1000]{1,0:T(8,128)(2,1)} parameter(0)
//!   c = s32[]{:T(128)} constant(0)
//!   ROOT t = (bf16[3,1000]{1,0:T(8,128)(2,1)}, s32[]{:T(128)}) tuple(p, c)
//! }";
//! let results: Vec<_> = hlo::shapes(module).filter(|s| s.is_result()).collect();
//! assert_eq!(results.len(), 4);
//! assert_eq!(results[1].text(), "s32[]{:T(128)}");
//! assert_eq!(results[1].layout().unwrap().storage_bytes(), 512);
//! ```

use crate::spec::error::Span;
use crate::spec::report::ParseError;
use crate::{ElementType, Layout};

mod line;

pub use line::{
    elements, line, Call, Element, Elements, Instruction, Line, TuplePath, TupleTooDeep,
    MAX_TUPLE_DEPTH,
};

/// Every array shape in `hlo`, in text order; see the [module docs](self).
///
/// # Examples
///
/// ```
/// let found: Vec<_> = xla_layout::hlo::shapes("ROOT r = f32[2]{0:T(256)} negate(f32[2]{0:T(256)} %x)")
///     .map(|s| (s.span().start, s.is_result()))
///     .collect();
/// assert_eq!(found, [(9, true), (33, false)]);
/// ```
pub fn shapes(hlo: &str) -> Shapes<'_> {
    Shapes {
        text: hlo,
        pos: 0,
        result_depth: 0,
        depth: 0,
    }
}

/// The iterator [`shapes`] returns.
///
/// # Examples
///
/// ```
/// let hlo = "ROOT t = bf16[8,128]{1,0:T(8,128)(2,1)} transpose(bf16[128,8]{1,0} %p)";
/// let mut shapes = xla_layout::hlo::shapes(hlo);
/// let result = shapes.next().unwrap();
/// assert_eq!(&hlo[result.span().range()], "bf16[8,128]{1,0:T(8,128)(2,1)}");
/// assert_eq!(shapes.count(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Shapes<'a> {
    text: &'a str,
    pos: usize,
    /// Parenthesis depth, and the depth inside which shapes are results
    /// (0: none), for tuple results such as `t = (f32[2]{0}, s32[])`.
    depth: usize,
    result_depth: usize,
}

/// One array shape found in HLO text.
///
/// # Examples
///
/// ```
/// let s = xla_layout::hlo::shapes("x = s32[1]{0:T(128)} parameter(0)").next().unwrap();
/// assert_eq!(s.text(), "s32[1]{0:T(128)}");
/// assert_eq!(s.layout().unwrap().storage_bytes(), 512);
/// ```
#[derive(Clone, Debug)]
pub struct ArrayShape<'a> {
    text: &'a str,
    span: Span,
    result: bool,
}

impl<'a> ArrayShape<'a> {
    /// The shape as written, e.g. `bf16[8,128]{1,0:T(8,128)(2,1)}`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = xla_layout::hlo::shapes("(f32[2]{0}, u8[])").nth(1).unwrap();
    /// assert_eq!(s.text(), "u8[]");
    /// ```
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Where the shape is, as a byte range into the HLO text.
    ///
    /// # Examples
    ///
    /// ```
    /// let hlo = "p = f32[2]{0} parameter(0)";
    /// let s = xla_layout::hlo::shapes(hlo).next().unwrap();
    /// assert_eq!(&hlo[s.span().range()], "f32[2]{0}");
    /// ```
    pub fn span(&self) -> Span {
        self.span
    }

    /// Whether this is the shape an instruction produces (right after
    /// `name =`, or an element of the tuple written there), rather than a
    /// copy beside an operand, in a parameter list or in the module header.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut it = xla_layout::hlo::shapes("a = f32[2]{0} add(f32[2]{0} x, f32[2]{0} y)");
    /// assert!(it.next().unwrap().is_result());
    /// assert!(!it.next().unwrap().is_result());
    /// ```
    pub fn is_result(&self) -> bool {
        self.result
    }

    /// Whether a layout (`{...}`) is written; without one, XLA's default
    /// (row-major, untiled) is what [`layout`](Self::layout) describes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut it = xla_layout::hlo::shapes("(p: f32[2]) -> f32[2]{0}");
    /// assert!(!it.next().unwrap().has_layout());
    /// assert!(it.next().unwrap().has_layout());
    /// ```
    pub fn has_layout(&self) -> bool {
        self.text.ends_with('}')
    }

    /// The layout, or why [`parse`](crate::parse) refuses the shape (spans
    /// in the error are relative to [`text`](Self::text)). Parsed on each
    /// call, so walking a dump costs nothing for the shapes nobody asks about.
    ///
    /// # Errors
    ///
    /// As [`parse`](crate::parse): for example `f32[?]` or `SC(...)`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = xla_layout::hlo::shapes("x = f32[?]{0} parameter(0)").next().unwrap();
    /// assert!(s.layout().is_err());
    /// let s = xla_layout::hlo::shapes("x = u8[3]{0} parameter(0)").next().unwrap();
    /// assert_eq!(s.layout().unwrap().storage_bytes(), 3);
    /// ```
    pub fn layout(&self) -> Result<Layout, ParseError> {
        crate::parse(self.text)
    }
}

impl<'a> Iterator for Shapes<'a> {
    type Item = ArrayShape<'a>;

    fn next(&mut self) -> Option<ArrayShape<'a>> {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            let b = bytes[self.pos];
            match b {
                b'"' => self.pos = skip_string(bytes, self.pos),
                // An unbalanced line must not mark the rest of the file.
                b'\n' => {
                    self.depth = 0;
                    self.result_depth = 0;
                    self.pos += 1;
                }
                b'(' => {
                    self.depth += 1;
                    self.pos += 1;
                }
                b')' => {
                    if self.result_depth == self.depth {
                        self.result_depth = 0;
                    }
                    self.depth = self.depth.saturating_sub(1);
                    self.pos += 1;
                }
                b'=' => {
                    self.pos += 1;
                    let next = skip_blank(bytes, self.pos);
                    if bytes.get(next) == Some(&b'(') && self.result_depth == 0 {
                        // A tuple result: its elements are results too.
                        self.result_depth = self.depth + 1;
                    } else if let Some(shape) = self.shape_at(next, true) {
                        return Some(shape);
                    }
                }
                b if b.is_ascii_alphabetic() && !continues_word(bytes, self.pos) => {
                    let in_result = self.result_depth != 0 && self.depth >= self.result_depth;
                    if let Some(shape) = self.shape_at(self.pos, in_result) {
                        return Some(shape);
                    }
                    self.pos = word_end(bytes, self.pos);
                }
                _ => self.pos += 1,
            }
        }
        None
    }
}

impl<'a> Shapes<'a> {
    /// The array shape starting at `start`, if one does; on success the
    /// cursor moves past it.
    fn shape_at(&mut self, start: usize, result: bool) -> Option<ArrayShape<'a>> {
        let bytes = self.text.as_bytes();
        let name_end = word_end(bytes, start);
        if name_end == start || bytes.get(name_end) != Some(&b'[') {
            return None;
        }
        ElementType::from_name(&self.text[start..name_end])?;
        let dims_end = match bytes[name_end..]
            .iter()
            .position(|&c| c == b']' || c == b'\n')
        {
            Some(i) if bytes[name_end + i] == b']' => name_end + i + 1,
            Some(i) => name_end + i,
            None => bytes.len(),
        };
        let end = if bytes.get(dims_end) == Some(&b'{') {
            closing_brace(bytes, dims_end)
        } else {
            dims_end
        };
        self.pos = end;
        let text = &self.text[start..end];
        Some(ArrayShape {
            text,
            span: Span::new(start, end),
            result,
        })
    }
}

/// Whether the byte at `at` continues a name (`%param.5`, `fusion-s32[`...).
fn continues_word(bytes: &[u8], at: usize) -> bool {
    at > 0
        && matches!(bytes[at - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'%' | b'-' | b'$')
}

/// One past the last letter or digit of the word at `start`.
fn word_end(bytes: &[u8], start: usize) -> usize {
    start
        + bytes[start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count()
}

fn skip_blank(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// One past the `"` that closes the string opening at `start`, `\` escapes
/// honoured; the end of the text if it never closes.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// One past the `}` matching the `{` at `open` (a physical shape `P(...)`
/// nests braces); the end of the text if it never closes.
fn closing_brace(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in bytes[open..].iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            // A layout is one line: a runaway brace must not swallow the file.
            b'\n' => return open + i,
            _ => {}
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(hlo: &str) -> [(usize, usize, bool); 8] {
        let mut out = [(0, 0, false); 8];
        for (slot, s) in out.iter_mut().zip(shapes(hlo)) {
            *slot = (s.span().start, s.span().end, s.is_result());
        }
        out
    }

    #[test]
    fn tuples_strings_and_names() {
        let hlo = r#"t = (s32[], (f32[2]{0}, token[])) tuple(a), metadata={op_name="f32[9]"}
%s32.1 = u8[] add(u8[] %s32.0, pred[] %x)"#;
        let all: [_; 8] = found(hlo);
        assert_eq!(&hlo[all[0].0..all[0].1], "s32[]");
        assert!(all[0].2 && all[1].2);
        assert_eq!(&hlo[all[1].0..all[1].1], "f32[2]{0}");
        // `token[]` is no array; the quoted `f32[9]` is metadata.
        assert_eq!(&hlo[all[2].0..all[2].1], "u8[]");
        assert!(all[2].2);
        assert!(!all[3].2 && !all[4].2);
        assert_eq!(all[5], (0, 0, false));
    }

    #[test]
    fn broken_text_ends() {
        for hlo in [
            "f32[",
            "x = f32[2]{0:T(2",
            "\"unclosed f32[2]",
            "= (",
            "))) = f32[2]",
            "f32[2]{}}}",
        ] {
            for s in shapes(hlo) {
                assert!(s.span().end <= hlo.len());
            }
        }
        // A layout left open ends at the line, so the next line still counts.
        assert_eq!(shapes("x = f32[2]{0:T(2)\ny = f32[3]{0}").count(), 2);
    }
}
