//! A byte cursor over the spec: white space, punctuation, numbers and words,
//! each with its byte span.

use crate::spec::error::{Error, ErrorKind, Snippet, Span};

/// Reads the spec left to right. Errors carry the span of the token at fault.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0 }
    }

    fn skip_ws(&mut self) {
        let rest = &self.src[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// The next byte after white space, without consuming it.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.src.as_bytes().get(self.pos).copied()
    }

    /// The byte offset of the next token.
    pub(crate) fn here(&mut self) -> usize {
        self.skip_ws();
        self.pos
    }

    /// The byte offset just past the last token read (white space not skipped).
    pub(crate) fn end_of_last(&self) -> usize {
        self.pos
    }

    pub(crate) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Consumes `byte` if it is next.
    pub(crate) fn eat(&mut self, byte: u8) -> Option<Span> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Some(Span::new(self.pos - 1, self.pos))
        } else {
            None
        }
    }

    /// Consumes `byte` or reports what was expected instead.
    pub(crate) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<Span, Error> {
        self.eat(byte).ok_or_else(|| self.unexpected(expected))
    }

    /// An error at the next token saying what the grammar wanted there.
    pub(crate) fn unexpected(&mut self, expected: &'static str) -> Error {
        let span = self.token_span();
        Error::new(
            ErrorKind::Expected {
                expected,
                found: Snippet::new(&self.src[span.range()]),
            },
            span,
        )
    }

    /// The span of the next token: a number, a word, or one character.
    fn token_span(&mut self) -> Span {
        let start = self.here();
        let rest = &self.src[start..];
        let Some(first) = rest.chars().next() else {
            return Span::new(start, start);
        };
        let len = if first.is_ascii_alphanumeric() || first == '_' {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        } else {
            first.len_utf8()
        };
        Span::new(start, start + len)
    }

    /// A word: letters, digits and `_`, starting with a letter.
    pub(crate) fn word(&mut self) -> Option<(&'a str, Span)> {
        let start = self.here();
        if !self.src[start..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        let span = self.token_span();
        self.pos = span.end;
        Some((&self.src[span.range()], span))
    }

    /// A word made of letters only, so `T(` and `SC(` read as `T` and `SC`.
    pub(crate) fn letters(&mut self) -> Option<(&'a str, Span)> {
        self.run(|c| c.is_ascii_alphabetic())
    }

    /// A run of decimal digits, if one is next.
    pub(crate) fn number(&mut self) -> Option<(&'a str, Span)> {
        self.run(|c| c.is_ascii_digit())
    }

    /// The longest non-empty run of characters that satisfy `keep`.
    fn run(&mut self, keep: fn(char) -> bool) -> Option<(&'a str, Span)> {
        let start = self.here();
        let len = self.src[start..]
            .find(|c: char| !keep(c))
            .unwrap_or(self.src.len() - start);
        if len == 0 {
            return None;
        }
        self.pos = start + len;
        Some((&self.src[start..start + len], Span::new(start, start + len)))
    }

    /// A non-negative integer no larger than `max`.
    pub(crate) fn integer(
        &mut self,
        what: &'static str,
        expected: &'static str,
        max: u128,
    ) -> Result<(u128, Span), Error> {
        let (digits, span) = self.number().ok_or_else(|| self.unexpected(expected))?;
        let value = digits
            .bytes()
            .try_fold(0u128, |acc, d| {
                acc.checked_mul(10)?.checked_add(u128::from(d - b'0'))
            })
            .filter(|&v| v <= max)
            .ok_or(Error::new(ErrorKind::IntegerTooLarge { what, max }, span))?;
        Ok((value, span))
    }

    /// Skips a parenthesised group whose opening `(` was just consumed, nested
    /// groups included, so a rejected attribute does not hide later mistakes.
    pub(crate) fn skip_group(&mut self) -> Result<Span, Error> {
        let start = self.pos;
        let mut depth = 1usize;
        for (i, b) in self.src.as_bytes()[start..].iter().enumerate() {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = start + i + 1;
                        return Ok(Span::new(start - 1, self.pos));
                    }
                }
                _ => {}
            }
        }
        self.pos = self.src.len();
        Err(self.unexpected("`)`"))
    }
}
