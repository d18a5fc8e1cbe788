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

impl fmt::Display for ErrorKind {
    #[allow(clippy::too_many_lines)] // one arm per message, kept together to read as a catalogue
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind as K;
        match *self {
            K::UnknownElementType { name, suggestion } => {
                write!(f, "unknown element type `{name}`")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => f.write_str("; expected an XLA type such as `f32`, `bf16` or `s8`"),
                }
            }
            K::NotAnArray { name } => write!(
                f,
                "`{name}` is not an array type and has no memory layout; write an array shape such as `f32[2,3]`"
            ),
            K::Tuple => f.write_str(
                "tuple shapes have no single layout; write one array shape such as `f32[2,3]{1,0}`",
            ),
            K::Expected { expected, found } => {
                if found.as_str().is_empty() {
                    write!(f, "expected {expected}, found end of input")
                } else {
                    write!(f, "expected {expected}, found `{found}`")
                }
            }
            K::IntegerTooLarge { what, max } => {
                write!(f, "{what} is too large; the largest allowed is {max}")
            }
            K::NegativeDim => f.write_str("array dims must not be negative"),
            K::UnboundedDim => f.write_str(
                "unbounded dynamic dim `?` has no fixed layout; write a static size or a bound such as `<=128`",
            ),
            K::RankTooLarge { limit } => {
                write!(f, "the shape has more than {limit} dims (the rank limit)")
            }
            K::MinorToMajorLength { found, rank } => write!(
                f,
                "`minor_to_major` lists {found} dim{} but the shape has rank {rank}; list each dim exactly once",
                if found == 1 { "" } else { "s" }
            ),
            K::MinorToMajorOutOfRange { value, rank } => {
                if rank == 0 {
                    write!(f, "`minor_to_major` entry `{value}` is out of range: a scalar has no dims")
                } else {
                    write!(
                        f,
                        "`minor_to_major` entry `{value}` is out of range; dims of a rank-{rank} shape are numbered 0 to {}",
                        rank - 1
                    )
                }
            }
            K::MinorToMajorRepeated { value } => write!(
                f,
                "dim `{value}` appears twice in `minor_to_major`; each dim must appear exactly once"
            ),
            K::TileDimZero { level } => {
                write!(f, "tile dim `0` at level {level} must be positive or `*`")
            }
            K::TileDimNegative { level, value } => write!(
                f,
                "tile dim `-{value}` at level {level} must be positive or `*`; write `*` to combine a dim into the next"
            ),
            K::CombineMostMinor { level } => write!(
                f,
                "`*` in the most minor position of the tile at level {level} has no more minor dim to combine into"
            ),
            K::TooManyLevels { limit } => {
                write!(f, "more than {limit} tiling levels (the limit)")
            }
            K::TileRankTooLarge { level, limit } => write!(
                f,
                "tile at level {level} has more than {limit} dims (the tile rank limit)"
            ),
            K::TiledRankTooLarge { level, limit } => write!(
                f,
                "tiling at level {level} makes a shape of more than {limit} dims (the tiled rank limit)"
            ),
            K::ProgramTooLarge { limit } => write!(
                f,
                "the index arithmetic for this layout needs more than {limit} steps (the program limit)"
            ),
            K::TailAlignmentZero => {
                f.write_str("`L(0)` is not an alignment; `L(n)` needs n of at least 1")
            }
            K::DuplicateAttribute { name } => {
                write!(f, "attribute `{name}` is written twice; write it once")
            }
            K::AttributeOrder { name, before } => write!(
                f,
                "attribute `{name}` must come before `{before}` (XLA's order is {})",
                crate::spec::attributes::Order
            ),
            K::UnsupportedAttribute { name, why } => write!(f, "`{name}` is not supported: {why}"),
            K::PaddedDimensions { reason } => write!(f, "`padded_dimensions` {reason}"),
            K::StorageOverflow { unit } => {
                write!(f, "storage in {unit} does not fit in `usize`")
            }
        }
    }
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
