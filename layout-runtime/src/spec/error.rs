//! Errors with byte ranges into the spec.

use core::fmt;

use crate::ElementType;

/// A half-open byte range `start..end` into the spec text.
///
/// # Examples
///
/// ```
/// let err = xla_layout::parse("f33[2]").unwrap_err();
/// assert_eq!(err.first().span(), xla_layout::Span { start: 0, end: 3 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte of the offending text.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

impl Span {
    pub(crate) const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The span as a `Range`, for slicing the spec.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = xla_layout::Span { start: 1, end: 3 };
    /// assert_eq!(&"f33[2]"[s.range()], "33");
    /// ```
    pub const fn range(self) -> core::ops::Range<usize> {
        self.start..self.end
    }
}

/// A short copy of the offending text, kept inline so errors need no allocation.
///
/// # Examples
///
/// ```
/// use xla_layout::ErrorKind;
/// let name_of = |spec: &str| match *xla_layout::parse(spec).unwrap_err().first().kind() {
///     ErrorKind::UnknownElementType { name, .. } => name,
///     other => panic!("{other:?}"),
/// };
/// assert_eq!(name_of("float32[2]").to_string(), "float32");
/// // Long text is cut at 24 bytes, and shown cut.
/// let long = name_of("an_element_type_of_forty_bytes_or_so_xx[2]");
/// assert_eq!(long.as_str(), "an_element_type_of_forty");
/// assert_eq!(long.to_string(), "an_element_type_of_forty...");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Snippet {
    bytes: [u8; Snippet::CAP],
    len: u8,
    truncated: bool,
}

impl Snippet {
    const CAP: usize = 24;

    pub(crate) fn new(text: &str) -> Self {
        let mut end = text.len().min(Self::CAP);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; Self::CAP];
        bytes[..end].copy_from_slice(&text.as_bytes()[..end]);
        Snippet {
            bytes,
            len: end as u8,
            truncated: end < text.len(),
        }
    }

    /// The text kept (at most 24 bytes of the original).
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("q7[2]").unwrap_err();
    /// match err.first().kind() {
    ///     xla_layout::ErrorKind::UnknownElementType { name, .. } => assert_eq!(name.as_str(), "q7"),
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Control characters would reach a terminal raw; show them escaped.
        for c in self.as_str().chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        if self.truncated {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// What is wrong with a spec. Each variant has its own message (see `Display`).
///
/// # Examples
///
/// ```
/// use xla_layout::{ElementType, ErrorKind};
/// let err = xla_layout::parse("f23[2]").unwrap_err();
/// assert!(matches!(
///     err.first().kind(),
///     ErrorKind::UnknownElementType { suggestion: Some(ElementType::F32), .. }
/// ));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The element type is not one of XLA's.
    UnknownElementType {
        /// The name as written.
        name: Snippet,
        /// The closest known name, if any is close.
        suggestion: Option<ElementType>,
    },
    /// `token`, `opaque` or `tuple`: shapes with no array layout.
    NotAnArray {
        /// The name as written.
        name: Snippet,
    },
    /// A tuple shape `(a, b)`.
    Tuple,
    /// The text does not follow the grammar.
    Expected {
        /// What the grammar allows here.
        expected: &'static str,
        /// What was found instead (empty at the end of input).
        found: Snippet,
    },
    /// A number too large to represent.
    IntegerTooLarge {
        /// What the number is used for.
        what: &'static str,
        /// The largest value allowed.
        max: u128,
    },
    /// A negative array dim.
    NegativeDim,
    /// An unbounded dynamic dim `?` (a bounded one, `<=N`, is read as its bound).
    UnboundedDim,
    /// More dims than [`MAX_RANK`](crate::MAX_RANK).
    RankTooLarge {
        /// The limit.
        limit: usize,
    },
    /// `minor_to_major` does not list exactly `rank` dims.
    MinorToMajorLength {
        /// How many it lists.
        found: usize,
        /// The rank of the shape.
        rank: usize,
    },
    /// A `minor_to_major` entry that is not a dim of the shape.
    MinorToMajorOutOfRange {
        /// The entry.
        value: u128,
        /// The rank of the shape.
        rank: usize,
    },
    /// A dim listed twice in `minor_to_major`.
    MinorToMajorRepeated {
        /// The dim.
        value: usize,
    },
    /// A tile dim of `0`.
    TileDimZero {
        /// 1-based tiling level.
        level: usize,
    },
    /// A negative tile dim (`*` is the way to combine dims).
    TileDimNegative {
        /// 1-based tiling level.
        level: usize,
        /// The magnitude as written after `-`.
        value: u128,
    },
    /// `*` in the last (most minor) position of a tile.
    CombineMostMinor {
        /// 1-based tiling level.
        level: usize,
    },
    /// More tiling levels than [`MAX_TILING_LEVELS`](crate::MAX_TILING_LEVELS).
    TooManyLevels {
        /// The limit.
        limit: usize,
    },
    /// A tile with more dims than [`MAX_TILE_RANK`](crate::MAX_TILE_RANK).
    TileRankTooLarge {
        /// 1-based tiling level.
        level: usize,
        /// The limit.
        limit: usize,
    },
    /// Tiling produced a shape with more dims than [`MAX_TILED_RANK`](crate::MAX_TILED_RANK).
    TiledRankTooLarge {
        /// 1-based tiling level.
        level: usize,
        /// The limit.
        limit: usize,
    },
    /// The index program needs more steps than [`MAX_PROGRAM_STEPS`](crate::MAX_PROGRAM_STEPS).
    ProgramTooLarge {
        /// The limit.
        limit: usize,
    },
    /// `L(0)`.
    TailAlignmentZero,
    /// The same attribute written twice.
    DuplicateAttribute {
        /// The attribute's letter(s).
        name: &'static str,
    },
    /// Attributes out of XLA's order.
    AttributeOrder {
        /// The attribute written late.
        name: &'static str,
        /// The attribute it must precede.
        before: &'static str,
    },
    /// An attribute XLA prints that has no meaning for dense offsets.
    UnsupportedAttribute {
        /// How it is written, e.g. `SC(...)`.
        name: &'static str,
        /// Why it is rejected.
        why: &'static str,
    },
    /// `padded_dimensions` (SPEC.md §7) that cannot describe this layout.
    PaddedDimensions {
        /// Why.
        reason: &'static str,
    },
    /// Storage in slots or bytes exceeds `usize::MAX`.
    StorageOverflow {
        /// `"slots"` or `"bytes"`.
        unit: &'static str,
    },
}

/// One mistake in a spec: what, and where.
///
/// # Examples
///
/// ```
/// let err = xla_layout::parse("f32[3,5]{1,0:T(2,0)}").unwrap_err();
/// let e = err.first();
/// assert_eq!(e.to_string(), "tile dim `0` at level 1 must be positive or `*`");
/// assert_eq!(e.span().start, 17);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
    span: Span,
}

impl Error {
    pub(crate) const fn new(kind: ErrorKind, span: Span) -> Self {
        Error { kind, span }
    }

    /// What is wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::ErrorKind;
    /// let err = xla_layout::parse("f32[2]{0:L(0)}").unwrap_err();
    /// assert_eq!(*err.first().kind(), ErrorKind::TailAlignmentZero);
    /// ```
    pub const fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Where, as a byte range into the spec.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("f32[2]{0:L(0)}").unwrap_err();
    /// assert_eq!(&"f32[2]{0:L(0)}"[err.first().span().range()], "0");
    /// ```
    pub const fn span(&self) -> Span {
        self.span
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl core::error::Error for Error {}
