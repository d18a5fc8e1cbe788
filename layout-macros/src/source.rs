//! The spec text and a map from its bytes back to Rust spans.
//!
//! Stable Rust cannot point inside a string literal, so errors in a literal
//! land on the literal with a caret excerpt. A spec written as bare tokens
//! is printed to text here, remembering which token made which bytes, so an
//! error lands on the very token at fault.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

use crate::ast::SpecInput;

pub(crate) struct Source {
    pub(crate) text: String,
    /// Byte ranges of bare tokens with their spans; empty for a literal.
    pieces: Vec<(usize, usize, Span)>,
    /// The span of the whole spec.
    whole: Span,
}

impl Source {
    pub(crate) fn new(spec: &SpecInput) -> Source {
        match spec {
            SpecInput::Literal(lit) => Source {
                text: lit.value(),
                pieces: Vec::new(),
                whole: lit.span(),
            },
            SpecInput::Tokens(tokens) => {
                let mut s = Source {
                    text: String::new(),
                    pieces: Vec::new(),
                    whole: tokens
                        .clone()
                        .into_iter()
                        .next()
                        .map_or_else(Span::call_site, |t| t.span()),
                };
                s.print(tokens.clone());
                s
            }
        }
    }

    pub(crate) fn is_literal(&self) -> bool {
        self.pieces.is_empty()
    }

    fn piece(&mut self, text: &str, span: Span) {
        let start = self.text.len();
        self.text.push_str(text);
        self.pieces.push((start, self.text.len(), span));
    }

    fn print(&mut self, tokens: TokenStream) {
        let mut last_word = false;
        for tt in tokens {
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    self.piece(open, g.span_open());
                    self.print(g.stream());
                    self.piece(close, g.span_close());
                    last_word = false;
                }
                TokenTree::Punct(p) => {
                    self.piece(&p.as_char().to_string(), p.span());
                    last_word = false;
                }
                TokenTree::Ident(_) | TokenTree::Literal(_) => {
                    // Two words in a row need a space, or they would read as one.
                    if last_word {
                        self.text.push(' ');
                    }
                    self.piece(&tt.to_string(), tt.span());
                    last_word = true;
                }
            }
        }
    }

    /// The span for bytes `start..end`: the first token they touch, or the
    /// whole spec (a literal, or the end of bare tokens).
    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        self.pieces
            .iter()
            .find(|&&(s, e, _)| s < end.max(start + 1) && start < e)
            .or_else(|| self.pieces.last().filter(|_| start >= self.text.len()))
            .map_or(self.whole, |&(_, _, span)| span)
    }

    pub(crate) fn whole(&self) -> Span {
        self.whole
    }
}
