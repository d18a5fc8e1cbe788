//! Showing errors: the message of each kind, the caret excerpt, and every
//! mistake of one parse.

use core::fmt;

use crate::spec::error::{Error, ErrorKind, Span};

// The messages live here, apart from the kinds, because one of them
// names the attribute table's order, and the table reports its mistakes
// as kinds.
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

/// A spec with carets under a span; see [`Error::excerpt`].
///
/// # Examples
///
/// ```
/// let spec = "f33[2]";
/// let err = xla_layout::parse(spec).unwrap_err();
/// let excerpt = err.first().excerpt(spec);
/// assert_eq!(excerpt.to_string(), "  | f33[2]\n  | ^^^");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Excerpt<'a> {
    spec: &'a str,
    span: Span,
}

impl<'a> Excerpt<'a> {
    pub(crate) fn new(spec: &'a str, span: Span) -> Self {
        Excerpt { spec, span }
    }
}

// The excerpt belongs to reporting, so the error catalogue (`error.rs`)
// depends on nothing here and the two modules form no cycle.
impl Error {
    /// The spec on one line with carets under the offending text.
    ///
    /// # Examples
    ///
    /// ```
    /// let spec = "f32[3,5]{1,0:T(2,0)}";
    /// let err = xla_layout::parse(spec).unwrap_err();
    /// assert_eq!(
    ///     err.first().excerpt(spec).to_string(),
    ///     "  | f32[3,5]{1,0:T(2,0)}\n  |                  ^"
    /// );
    /// ```
    pub fn excerpt<'a>(&self, spec: &'a str) -> Excerpt<'a> {
        Excerpt::new(spec, self.span())
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Control characters would break the one-line picture, so they print as spaces.
        let clean = |c: char| if c.is_control() { ' ' } else { c };
        f.write_str("  | ")?;
        for c in self.spec.chars() {
            write!(f, "{}", clean(c))?;
        }
        f.write_str("\n  | ")?;
        let start = self.span.start.min(self.spec.len());
        let end = self.span.end.clamp(start, self.spec.len());
        let lead = self.spec.get(..start).map_or(start, |s| s.chars().count());
        let width = self
            .spec
            .get(start..end)
            .map_or(1, |s| s.chars().count().max(1));
        for _ in 0..lead {
            f.write_str(" ")?;
        }
        for _ in 0..width {
            f.write_str("^")?;
        }
        Ok(())
    }
}

/// How many mistakes one parse reports at most.
///
/// # Examples
///
/// ```
/// // Ten tile dims of 0, each a mistake of its own: the first eight are kept.
/// let spec = "f32[2,2,2,2,2,2,2,2,2,2]{9,8,7,6,5,4,3,2,1,0:T(0,0,0,0,0,0,0,0,0,0)}";
/// let err = xla_layout::parse(spec).unwrap_err();
/// assert_eq!(err.len(), xla_layout::MAX_ERRORS);
/// ```
pub const MAX_ERRORS: usize = 8;

/// Every independent mistake found in a spec (at least one, at most [`MAX_ERRORS`]).
///
/// A syntax error stops the parse; mistakes in values (a tile dim of 0, a bad
/// `minor_to_major`, ...) are all collected so one build shows them all.
///
/// # Examples
///
/// ```
/// let err = xla_layout::parse("f32[3,5]{1,1:T(0,2)}").unwrap_err();
/// assert_eq!(err.len(), 2);
/// for e in err.iter() {
///     println!("{e}");
/// }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParseError {
    errors: [Error; MAX_ERRORS],
    len: u8,
}

impl ParseError {
    pub(crate) const fn empty() -> Self {
        ParseError {
            errors: [Error::new(ErrorKind::TailAlignmentZero, Span::new(0, 0)); MAX_ERRORS],
            len: 0,
        }
    }

    /// A parse error of exactly one mistake.
    pub(crate) fn single(error: Error) -> Self {
        let mut e = Self::empty();
        e.push(error);
        e
    }

    pub(crate) fn push(&mut self, error: Error) {
        if usize::from(self.len) < MAX_ERRORS {
            self.errors[usize::from(self.len)] = error;
            self.len += 1;
        }
    }

    /// The first mistake, in reading order.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("f32[2").unwrap_err();
    /// assert_eq!(err.first().to_string(), "expected `,` or `]`, found end of input");
    /// ```
    pub fn first(&self) -> &Error {
        &self.errors[0]
    }

    /// All mistakes, in reading order.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("f32[2]{0:L(0)}").unwrap_err();
    /// assert_eq!(err.iter().count(), 1);
    /// ```
    pub fn iter(&self) -> core::slice::Iter<'_, Error> {
        self.errors[..self.len()].iter()
    }

    /// How many mistakes were found.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[2]{0:L(0)}").unwrap_err().len(), 1);
    /// ```
    #[allow(clippy::len_without_is_empty)] // never empty: a parse error has a first mistake
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every mistake with its message and caret excerpt, as the macro shows them.
    ///
    /// # Examples
    ///
    /// ```
    /// let spec = "f32[2]{0:L(0)}";
    /// let err = xla_layout::parse(spec).unwrap_err();
    /// let text = err.report(spec).to_string();
    /// assert!(text.starts_with("error: `L(0)` is not an alignment"));
    /// ```
    pub fn report<'a>(&'a self, spec: &'a str) -> Report<'a> {
        Report { error: self, spec }
    }

    /// The error together with the spec it is about, as an error of its own
    /// that prints the caret report: the one step from a run-time spec to
    /// `?` in a `main` that returns `Box<dyn Error>`.
    ///
    /// # Examples
    ///
    /// ```
    /// fn load(spec: String) -> Result<xla_layout::Layout, Box<dyn std::error::Error>> {
    ///     Ok(xla_layout::parse(&spec).map_err(|e| e.with_spec(spec))?)
    /// }
    ///
    /// let err = load("f32[3,5]{1,0:T(2,0)}".to_owned()).unwrap_err();
    /// // `main` prints `Error: ` and then this.
    /// assert_eq!(
    ///     format!("{err:?}"),
    ///     "tile dim `0` at level 1 must be positive or `*`\n  \
    ///      | f32[3,5]{1,0:T(2,0)}\n  \
    ///      |                  ^"
    /// );
    /// ```
    pub fn with_spec<S: AsRef<str>>(self, spec: S) -> SpecError<S> {
        SpecError { error: self, spec }
    }
}

impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the mistakes found: the rest of the fixed array is filler.
        f.debug_struct("ParseError")
            .field("errors", &self.iter().as_slice())
            .finish()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e} (at byte {})", e.span().start)?;
        }
        Ok(())
    }
}

// No `source`: the message already states every mistake, and error
// reporters that walk the chain would print the first one twice.
impl core::error::Error for ParseError {}

impl<'a> IntoIterator for &'a ParseError {
    type Item = &'a Error;
    type IntoIter = core::slice::Iter<'a, Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Every error of a [`ParseError`] with its excerpt; see [`ParseError::report`].
///
/// # Examples
///
/// ```
/// let spec = "f32[3,5]{1,1:T(0,2)}";
/// let err = xla_layout::parse(spec).unwrap_err();
/// let report = err.report(spec).to_string();
/// // One message and one caret excerpt for each of the two mistakes.
/// assert_eq!(report.matches("error: ").count(), 2);
/// assert_eq!(report.matches("  | f32[3,5]{1,1:T(0,2)}").count(), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    error: &'a ParseError,
    spec: &'a str,
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_report(f, self.error, self.spec, "error: ")
    }
}

/// Every mistake of `error`, each after `prefix` and above its caret excerpt.
fn write_report(
    f: &mut fmt::Formatter<'_>,
    error: &ParseError,
    spec: &str,
    prefix: &str,
) -> fmt::Result {
    for (i, e) in error.iter().enumerate() {
        if i > 0 {
            f.write_str("\n")?;
        }
        write!(f, "{prefix}{e}\n{}", e.excerpt(spec))?;
    }
    Ok(())
}

/// A [`ParseError`] that owns (or borrows) its spec, so it prints the caret
/// report on its own; see [`ParseError::with_spec`].
///
/// `Debug` prints the report too, since that is what `main` shows for an
/// error it returns.
///
/// # Examples
///
/// ```
/// let spec = "f32[2]{0:L(0)}";
/// let err = xla_layout::parse(spec).unwrap_err().with_spec(spec);
/// assert_eq!(
///     err.to_string(),
///     "`L(0)` is not an alignment; `L(n)` needs n of at least 1\n  | f32[2]{0:L(0)}\n  |            ^"
/// );
/// assert_eq!(err.error().len(), 1);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpecError<S> {
    error: ParseError,
    spec: S,
}

impl<S: AsRef<str>> SpecError<S> {
    /// The mistakes.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("f32[2").unwrap_err().with_spec("f32[2");
    /// assert_eq!(err.error().first().span().start, 5);
    /// ```
    pub fn error(&self) -> &ParseError {
        &self.error
    }

    /// The spec the mistakes are in.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = xla_layout::parse("f32[2").unwrap_err().with_spec("f32[2");
    /// assert_eq!(err.spec(), "f32[2");
    /// ```
    pub fn spec(&self) -> &str {
        self.spec.as_ref()
    }
}

impl<S: AsRef<str>> fmt::Display for SpecError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_report(f, &self.error, self.spec(), "")
    }
}

impl<S: AsRef<str>> fmt::Debug for SpecError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<S: AsRef<str>> core::error::Error for SpecError<S> {}
