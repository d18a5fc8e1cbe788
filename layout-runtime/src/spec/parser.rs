//! The grammar of SPEC.md §1: text to an unchecked [`LayoutBuilder`].
//!
//! The parser only reads; every rule about values (ranges, permutations,
//! limits, sizes) lives in `validate`, shared with layouts built in code.

use crate::algebra::fold::Folded;
use crate::eval::program::{InverseProgram, OffsetProgram};
use crate::spec::attributes::{self, Kind, ATTRIBUTES};
use crate::spec::element::NON_ARRAY_TYPES;
use crate::spec::error::{Error, ErrorKind, Snippet, Span};
use crate::spec::lexer::Lexer;
use crate::spec::report::ParseError;
use crate::spec::validate::{LayoutBuilder, MAX_TILE_DIM};
use crate::{ElementType, Layout, TileDim, MAX_TILE_RANK};

/// Parses and validates a spec such as `bf16[8,128]{1,0:T(8,128)(2,1)}`.
///
/// Accepts everything `layout!` accepts, with the same messages: the two
/// share the reading and the checks. Never panics and never allocates.
///
/// # Errors
///
/// Every mistake found, each with a byte range into `spec`; see [`ParseError`].
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// assert_eq!(l.offset(&[2, 3]), 17);
/// assert_eq!(l.storage_len(), 24);
///
/// let err = xla_layout::parse("f32[3,5]{1,0:T(2,0)}").unwrap_err();
/// assert_eq!(err.first().to_string(), "tile dim `0` at level 1 must be positive or `*`");
/// ```
pub fn parse(spec: &str) -> Result<Layout, ParseError> {
    let (builder, errors) = read(spec)?;
    builder.build_with(errors, |layout, _| layout)
}

/// The description `spec` writes and the value mistakes found in it, or
/// every mistake up to a syntax error.
fn read(spec: &str) -> Result<(LayoutBuilder, ParseError), ParseError> {
    let mut errors = ParseError::empty();
    match parse_builder(spec, &mut errors) {
        Ok(builder) => Ok((builder, errors)),
        Err(hard) => {
            errors.push(hard);
            Err(errors)
        }
    }
}

/// [`parse`] and, with `padded`, [`Layout::with_padded_dimensions`],
/// with the index programs from the fold that made the layout, so that
/// `layout!` folds each spec once rather than again through
/// [`Layout::programs`]. Used by `layout!`; not public API.
#[doc(hidden)]
pub fn __parse_with_programs(
    spec: &str,
    padded: Option<&[usize]>,
) -> Result<(Layout, OffsetProgram, InverseProgram), ParseError> {
    let keep = |layout, folded: &Folded| (layout, folded.offset, folded.inverse);
    let (builder, errors) = read(spec)?;
    match padded {
        None => builder.build_with(errors, keep),
        Some(padded) => builder
            .build_with(errors, |layout, _| layout)?
            .padded_builder(padded)?
            .build_with(ParseError::empty(), keep),
    }
}

/// Reads the text; value mistakes go to `soft`, a syntax error ends the parse.
fn parse_builder(spec: &str, soft: &mut ParseError) -> Result<LayoutBuilder, Error> {
    let mut lx = Lexer::new(spec);
    if let Some(span) = lx.eat(b'(') {
        return Err(Error::new(ErrorKind::Tuple, span));
    }
    let Some((name, name_span)) = lx.word() else {
        return Err(lx.unexpected("an element type such as `f32`"));
    };
    let element = match ElementType::from_name(name) {
        Some(t) => t,
        None if NON_ARRAY_TYPES.iter().any(|n| n.eq_ignore_ascii_case(name)) => {
            return Err(Error::new(
                ErrorKind::NotAnArray {
                    name: Snippet::new(name),
                },
                name_span,
            ));
        }
        None => {
            // Keep reading: a misspelt type should not hide later mistakes.
            soft.push(Error::new(
                ErrorKind::UnknownElementType {
                    name: Snippet::new(name),
                    suggestion: ElementType::nearest(name),
                },
                name_span,
            ));
            ElementType::F32
        }
    };
    let mut b = LayoutBuilder::new(element, &[]);
    b.element_span = name_span;

    lx.expect(b'[', "`[` and the dims")?;
    parse_dims(&mut lx, &mut b, soft)?;

    match lx.peek() {
        Some(b'{') => parse_layout(&mut lx, &mut b, b'}', soft)?,
        Some(b'<') => parse_layout(&mut lx, &mut b, b'>', soft)?,
        Some(b',') => {
            return Err(Error::new(
                ErrorKind::Tuple,
                lx.eat(b',').unwrap_or_default(),
            ))
        }
        _ => {}
    }
    if !lx.at_end() {
        return Err(lx.unexpected("end of input"));
    }
    b.spec_span = Span::new(name_span.start, spec.trim_end().len());
    Ok(b)
}

fn parse_dims(
    lx: &mut Lexer<'_>,
    b: &mut LayoutBuilder,
    soft: &mut ParseError,
) -> Result<(), Error> {
    if lx.eat(b']').is_some() {
        return Ok(());
    }
    loop {
        let start = lx.here();
        let mut bounded = false;
        let size = if let Some(q) = lx.eat(b'?') {
            soft.push(Error::new(ErrorKind::UnboundedDim, q));
            0
        } else if lx.eat(b'<').is_some() {
            lx.expect(b'=', "`<=` and a bound")?;
            bounded = true;
            // XLA allocates a bounded dim at its bound: the layout is the
            // static one of that size. Its bounds are `int64`, where 2^63
            // marks an unbounded dim: larger bounds are not bounds.
            lx.integer(
                "dim bound",
                "the bound of the dynamic dim",
                i64::MAX as u128,
            )?
            .0 as usize
        } else if lx.eat(b'-').is_some() {
            // Any magnitude: the sign alone is the mistake.
            let (_, end) = lx.number().ok_or_else(|| lx.unexpected("a dim size"))?;
            soft.push(Error::new(
                ErrorKind::NegativeDim,
                Span::new(start, end.end),
            ));
            0
        } else {
            lx.integer("dim", "a dim size or `]`", usize::MAX as u128)?
                .0 as usize
        };
        if bounded {
            b.set_dynamic(b.rank());
        }
        b.push_dim(size, Span::new(start, lx.end_of_last()));
        if lx.eat(b']').is_some() {
            return Ok(());
        }
        lx.expect(b',', "`,` or `]`")?;
    }
}

fn parse_layout(
    lx: &mut Lexer<'_>,
    b: &mut LayoutBuilder,
    close: u8,
    soft: &mut ParseError,
) -> Result<(), Error> {
    let close_or_colon = if close == b'}' {
        "`,`, `:` or `}`"
    } else {
        "`,`, `:` or `>`"
    };
    lx.eat(if close == b'}' { b'{' } else { b'<' });
    let m2m_start = lx.here();
    b.set_minor_to_major_written();
    if lx.peek().is_some_and(|c| c.is_ascii_digit()) {
        loop {
            let (v, span) = lx.integer("`minor_to_major` entry", "a dim number", u128::MAX)?;
            b.push_minor_to_major(v, span);
            if lx.eat(b',').is_none() {
                break;
            }
        }
    }
    b.minor_to_major_span = Span::new(m2m_start, lx.end_of_last().max(m2m_start));
    if lx.eat(close).is_some() {
        return Ok(());
    }
    if lx.eat(b':').is_none() {
        return Err(lx.unexpected(close_or_colon));
    }
    // The latest attribute in XLA's order so far, by its place in the table.
    let mut order = Order::default();
    while lx.eat(close).is_none() {
        let start = lx.here();
        let written = match lx.peek().and_then(attributes::punctuation) {
            Some(mark) => {
                lx.eat(mark.as_bytes()[0]);
                mark
            }
            None => match lx.letters() {
                Some((word, _)) => word,
                None => return Err(lx.unexpected(attributes::expected(close))),
            },
        };
        let name_span = Span::new(start, lx.end_of_last());
        let Some((rank, attribute)) = attributes::find(written) else {
            return Err(Error::new(
                ErrorKind::Expected {
                    expected: attributes::expected(close),
                    found: Snippet::new(written),
                },
                name_span,
            ));
        };
        match attribute.kind {
            Kind::Tiles => {
                order.check(rank, attribute.letters, name_span, soft);
                parse_tiles(lx, b, soft)?;
            }
            Kind::Number(n) => {
                order.check(rank, attribute.letters, name_span, soft);
                let (v, span) = paren_int(lx, n.what, n.max)?;
                // At most `n.max`, which fits in `u64`.
                b.set_number(n.slot, v as u64, span);
            }
            Kind::Refused { shown, why } => {
                lx.expect(b'(', "`(`")?;
                let mut group = lx.skip_group()?;
                // `SC(0:10)(1:4,5)` writes one group per split: one mistake.
                while lx.eat(b'(').is_some() {
                    group = lx.skip_group()?;
                }
                soft.push(Error::new(
                    ErrorKind::UnsupportedAttribute { name: shown, why },
                    Span::new(start, group.end),
                ));
            }
        }
    }
    Ok(())
}

/// The attributes read so far, by their place in the table, to report one
/// written twice or out of XLA's order.
#[derive(Default)]
struct Order {
    seen: [bool; ATTRIBUTES.len()],
    /// The latest in XLA's order so far.
    last: Option<(usize, &'static str)>,
}

impl Order {
    fn check(&mut self, rank: usize, name: &'static str, span: Span, soft: &mut ParseError) {
        if self.seen[rank] {
            soft.push(Error::new(ErrorKind::DuplicateAttribute { name }, span));
        } else if let Some((_, before)) = self.last.filter(|(prev, _)| *prev > rank) {
            soft.push(Error::new(ErrorKind::AttributeOrder { name, before }, span));
        }
        self.seen[rank] = true;
        if self.last.is_none_or(|(prev, _)| prev < rank) {
            self.last = Some((rank, name));
        }
    }
}

fn paren_int(lx: &mut Lexer<'_>, what: &'static str, max: u128) -> Result<(u128, Span), Error> {
    lx.expect(b'(', "`(`")?;
    let (v, span) = lx.integer(what, "a number", max)?;
    lx.expect(b')', "`)`")?;
    Ok((v, span))
}

fn parse_tiles(
    lx: &mut Lexer<'_>,
    b: &mut LayoutBuilder,
    soft: &mut ParseError,
) -> Result<(), Error> {
    if lx.peek() != Some(b'(') {
        return Err(lx.unexpected("`(` and the tile dims"));
    }
    while let Some(open) = lx.eat(b'(') {
        let level = b.levels() + 1;
        let mut dims = [TileDim::Combine; MAX_TILE_RANK];
        let mut spans = [Span::default(); MAX_TILE_RANK];
        let mut n = 0usize;
        // `T()` tiles no dims (XLA: "empty tile is valid HLO"), so it leaves
        // the shape as it is.
        let mut open_dims = lx.eat(b')').is_none();
        while open_dims {
            let start = lx.here();
            let dim = if lx.eat(b'*').is_some() {
                TileDim::Combine
            } else if lx.eat(b'-').is_some() {
                let (v, span) = lx.integer("tile dim", "a tile dim", u128::MAX)?;
                soft.push(Error::new(
                    ErrorKind::TileDimNegative { level, value: v },
                    Span::new(start, span.end),
                ));
                TileDim::Size(1)
            } else {
                let (v, _) = lx.integer("tile dim", "a tile dim or `*`", MAX_TILE_DIM)?;
                TileDim::Size(v as usize)
            };
            let span = Span::new(start, lx.end_of_last());
            if n == MAX_TILE_RANK {
                return Err(Error::new(
                    ErrorKind::TileRankTooLarge {
                        level,
                        limit: MAX_TILE_RANK,
                    },
                    span,
                ));
            }
            dims[n] = dim;
            spans[n] = span;
            n += 1;
            open_dims = lx.eat(b')').is_none();
            if open_dims {
                lx.expect(b',', "`,` or `)`")?;
            }
        }
        let whole = Span::new(open.start, lx.end_of_last());
        b.push_tile_with_spans(&dims[..n], &spans[..n], whole)
            .map_err(|kind| Error::new(kind, whole))?;
    }
    Ok(())
}

impl core::str::FromStr for Layout {
    type Err = ParseError;

    /// Same as [`parse`](crate::parse).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::__parse_with_programs;
    use crate::eval::closed::tests::{spec, Rng};

    /// What `layout!` gets in one fold is what `parse`,
    /// `with_padded_dimensions` and `programs` give, mistakes included.
    #[test]
    fn one_fold_gives_the_layout_and_its_programs() {
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        for _ in 0..400 {
            let spec = spec(&mut rng);
            let Ok(got) = __parse_with_programs(&spec, None) else {
                assert!(crate::parse(&spec).is_err(), "{spec}");
                continue;
            };
            let l = crate::parse(&spec).unwrap();
            let (offset, inverse) = l.programs();
            assert_eq!(got, (l, offset, inverse), "{spec}");
        }
        let l = crate::parse("f32[2,3]{0,1}").unwrap();
        let padded = l.with_padded_dimensions(&[3, 5]).unwrap();
        let (offset, inverse) = padded.programs();
        assert_eq!(
            __parse_with_programs("f32[2,3]{0,1}", Some(&[3, 5])).unwrap(),
            (padded, offset, inverse)
        );
        let err = |spec, padded| __parse_with_programs(spec, padded).unwrap_err();
        let wrong = crate::parse("f32[2,0x]").unwrap_err();
        assert_eq!(err("f32[2,0x]", Some(&[3])), wrong);
        let narrow = l.with_padded_dimensions(&[1, 5]).unwrap_err();
        assert_eq!(err("f32[2,3]{0,1}", Some(&[1, 5])), narrow);
    }
}
