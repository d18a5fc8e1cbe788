//! Validation: every rule about values, for parsed specs and for layouts
//! built in code alike. Independent mistakes are all reported.

use crate::algebra::fold::{fold, Folded};
use crate::algebra::MAX_DIGITS;
use crate::eval::closed::Closed;
use crate::eval::code::Code;
use crate::eval::layout::{Forms, InverseForm, OffsetForm};
use crate::eval::DigitForm;
use crate::fixed::Fixed;
use crate::spec::attributes::{self, Attributes, Number};
use crate::spec::error::{Error, ErrorKind, Span};
use crate::spec::report::ParseError;
use crate::{ElementType, Layout, Tile, TileDim, MAX_RANK, MAX_TILE_RANK, MAX_TILING_LEVELS};

/// A layout described piece by piece, checked by [`build`](Self::build).
///
/// XLA keeps tile dims in `int64`, where `T(9223372036854775808)` wraps to
/// its marker for `*`: larger sizes would mean something else there.
pub(crate) const MAX_TILE_DIM: u128 = i64::MAX as u128;

/// The parser fills one of these from text; code can fill one directly, for
/// example to choose a tiling at run time.
///
/// # Examples
///
/// ```
/// use xla_layout::{ElementType, LayoutBuilder, TileDim::Size};
/// let l = LayoutBuilder::new(ElementType::F32, &[3, 5])
///     .tile(&[Size(2), Size(2)])
///     .build()
///     .unwrap();
/// assert_eq!(l.to_string(), "f32[3,5]{1,0:T(2,2)}");
/// ```
#[derive(Clone, Debug)]
pub struct LayoutBuilder {
    pub(crate) element: ElementType,
    pub(crate) element_span: Span,
    rank: usize,
    dims: [usize; MAX_RANK],
    /// Bit `d` set: dim `d` was written `<=N`.
    pub(crate) dynamic: u16,
    dim_spans: [Span; MAX_RANK],
    m2m_written: bool,
    m2m_count: usize,
    /// As written (wider than `usize`, so a huge entry reads as out of range).
    m2m: [u128; MAX_RANK],
    m2m_spans: [Span; MAX_RANK],
    pub(crate) minor_to_major_span: Span,
    /// The whole spec, where mistakes of the whole (its size) are shown.
    pub(crate) spec_span: Span,
    levels: usize,
    tiles: [Tile; MAX_TILING_LEVELS],
    tile_spans: [[Span; MAX_TILE_RANK]; MAX_TILING_LEVELS],
    level_spans: [Span; MAX_TILING_LEVELS],
    too_many: Option<Error>,
    /// The number attributes as written, by slot (see `attributes`).
    numbers: [Option<(u64, Span)>; attributes::NUMBERS],
}

impl LayoutBuilder {
    /// Starts a description: element type and dims, row-major and untiled.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let l = LayoutBuilder::new(ElementType::S8, &[4, 4]).build().unwrap();
    /// assert_eq!(l.minor_to_major(), &[1, 0]);
    /// ```
    pub fn new(element: ElementType, dims: &[usize]) -> Self {
        let mut b = LayoutBuilder {
            element,
            element_span: Span::default(),
            rank: 0,
            dims: [0; MAX_RANK],
            dynamic: 0,
            dim_spans: [Span::default(); MAX_RANK],
            m2m_written: false,
            m2m_count: 0,
            m2m: [0; MAX_RANK],
            m2m_spans: [Span::default(); MAX_RANK],
            minor_to_major_span: Span::default(),
            spec_span: Span::default(),
            levels: 0,
            tiles: [Tile::EMPTY; MAX_TILING_LEVELS],
            tile_spans: [[Span::default(); MAX_TILE_RANK]; MAX_TILING_LEVELS],
            level_spans: [Span::default(); MAX_TILING_LEVELS],
            too_many: None,
            numbers: [None; attributes::NUMBERS],
        };
        for &d in dims {
            b.push_dim(d, Span::default());
        }
        b
    }

    pub(crate) fn push_dim(&mut self, d: usize, span: Span) {
        if self.rank < MAX_RANK {
            self.dims[self.rank] = d;
            self.dim_spans[self.rank] = span;
        } else if self.rank == MAX_RANK {
            self.too_many.get_or_insert(Error::new(
                ErrorKind::RankTooLarge { limit: MAX_RANK },
                span,
            ));
        }
        self.rank += 1;
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// Marks dim `d` as bounded dynamic; dims past the rank limit are
    /// reported by `push_dim` already.
    pub(crate) fn set_dynamic(&mut self, d: usize) {
        if d < MAX_RANK {
            self.dynamic |= 1 << d;
        }
    }

    pub(crate) fn set_minor_to_major_written(&mut self) {
        self.m2m_written = true;
    }

    pub(crate) fn push_minor_to_major(&mut self, d: u128, span: Span) {
        if self.m2m_count < MAX_RANK {
            self.m2m[self.m2m_count] = d;
            self.m2m_spans[self.m2m_count] = span;
        }
        self.m2m_count += 1;
    }

    /// Sets `minor_to_major`, fastest-varying dim first (default: row-major).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let l = LayoutBuilder::new(ElementType::F32, &[10, 20]).minor_to_major(&[0, 1]).build().unwrap();
    /// assert_eq!(l.offset(&[3, 5]), 53);
    /// ```
    #[must_use]
    pub fn minor_to_major(mut self, m2m: &[usize]) -> Self {
        self.m2m_written = true;
        self.m2m_count = 0;
        for &d in m2m {
            self.push_minor_to_major(d as u128, Span::default());
        }
        self
    }

    pub(crate) fn levels(&self) -> usize {
        self.levels
    }

    pub(crate) fn push_tile_with_spans(
        &mut self,
        dims: &[TileDim],
        spans: &[Span],
        whole: Span,
    ) -> Result<(), ErrorKind> {
        let level = self.levels + 1;
        if self.levels == MAX_TILING_LEVELS {
            return Err(ErrorKind::TooManyLevels {
                limit: MAX_TILING_LEVELS,
            });
        }
        let tile = Tile::new(dims).ok_or(ErrorKind::TileRankTooLarge {
            level,
            limit: MAX_TILE_RANK,
        })?;
        self.tiles[self.levels] = tile;
        self.tile_spans[self.levels][..spans.len()].copy_from_slice(spans);
        self.level_spans[self.levels] = whole;
        self.levels += 1;
        Ok(())
    }

    /// Adds a tiling level (applied after the ones already added).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder, TileDim::Size};
    /// let l = LayoutBuilder::new(ElementType::Bf16, &[4, 8])
    ///     .tile(&[Size(2), Size(4)])
    ///     .tile(&[Size(2), Size(1)])
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(l.offset(&[1, 0]), 1);
    /// ```
    #[must_use]
    pub fn tile(mut self, dims: &[TileDim]) -> Self {
        if let Err(kind) = self.push_tile_with_spans(dims, &[], Span::default()) {
            self.too_many
                .get_or_insert(Error::new(kind, Span::default()));
        }
        self
    }

    /// Sets the number attribute in `slot`, as written at `span`.
    pub(crate) fn set_number(&mut self, slot: usize, value: u64, span: Span) {
        self.numbers[slot] = Some((value, span));
    }

    /// Sets the number attributes of `from` that `keep` selects.
    pub(crate) fn keep_attributes(&mut self, from: &Attributes, keep: fn(&Number) -> bool) {
        for (_, n, value) in from.written() {
            if keep(&n) {
                self.set_number(n.slot, value, Span::default());
            }
        }
    }

    /// Checks every rule and folds the layout.
    ///
    /// # Errors
    ///
    /// Every mistake found; spans are empty for values given in code.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let err = LayoutBuilder::new(ElementType::F32, &[2, 2]).minor_to_major(&[0, 0]).build().unwrap_err();
    /// assert_eq!(err.first().to_string(), "dim `0` appears twice in `minor_to_major`; each dim must appear exactly once");
    /// ```
    pub fn build(&self) -> Result<Layout, ParseError> {
        self.build_with(ParseError::empty(), |layout, _| layout)
    }

    /// [`build`](Self::build), after the mistakes in `errors`, giving
    /// `keep` the layout and what its fold derived.
    pub(crate) fn build_with<R>(
        &self,
        mut errors: ParseError,
        keep: impl FnOnce(Layout, &Folded) -> R,
    ) -> Result<R, ParseError> {
        if let Some(e) = self.too_many {
            errors.push(e);
            return Err(errors);
        }
        let rank = self.rank;
        let m2m = self.check_minor_to_major(&mut errors);
        self.check_tiles(&mut errors);
        let attributes = self.check_attributes(&mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        let dims = &self.dims[..rank];
        let tiles = &self.tiles[..self.levels];
        let whole = self.spec_span;
        let tail_alignment = attributes.get(attributes::TAIL_ALIGNMENT) as usize;
        let folded = fold(dims, &m2m[..rank], tiles, tail_alignment).map_err(|kind| {
            let span = match kind {
                ErrorKind::TiledRankTooLarge { level, .. } => self.level_spans[level - 1],
                _ => whole,
            };
            ParseError::single(Error::new(kind, span))
        })?;
        let bits = match attributes.get(attributes::ELEMENT_BITS) {
            0 => self.element.bits(),
            explicit => explicit as u32,
        };
        let storage_bytes = crate::spec::element::bytes_of(folded.storage_len, bits)
            .try_into()
            .map_err(|_| {
                ParseError::single(Error::new(
                    ErrorKind::StorageOverflow { unit: "bytes" },
                    whole,
                ))
            })?;
        // The digits the fold compiled its programs from, within the
        // evaluators' capacity.
        let digits = folded.digits.and_then(|d| d.narrowed::<MAX_DIGITS>());
        let compiled = digits.as_ref().and_then(|d| DigitForm::new(d, dims));
        let mut layout = Layout {
            element: self.element,
            dims: Fixed::from_prefix(dims, 0),
            dynamic: self.dynamic,
            minor_to_major: Fixed::from_prefix(&m2m[..rank], 0),
            tiles: Fixed::from_prefix(tiles, Tile::EMPTY),
            attributes,
            storage_len: folded.storage_len,
            storage_bytes,
            forms: Forms {
                offset: OffsetForm::Steps,
                inverse: InverseForm::Fold,
            },
        };
        program_forms(&mut layout, &folded);
        if let Some((offset, inverse)) = compiled.map(DigitForm::split) {
            // The digits where the programs' forms are slower. A closed
            // form that divides nothing stays where no dim is ragged: of
            // shifts, a caller's summing loop vectorizes it
            // (`benches/offset.rs`, `sum_bf16_tpu`); of its linear part
            // alone, it is one multiply a dim (`sum_untiled_row_major`).
            // Where it divides, or on ragged dims, the digits are faster
            // (`sum_batched_tpu`, `benches/family.rs`).
            let exact = digits.as_ref().is_some_and(|d| d.ragged == 0);
            let closed = |c: &Closed| exact && c.divides_nothing();
            if let Some(offset) = offset {
                if !matches!(&layout.forms.offset, OffsetForm::Closed(c) if closed(c)) {
                    layout.forms.offset = OffsetForm::Digits(offset);
                }
            }
            if let Some(inverse) = inverse {
                layout.forms.inverse = InverseForm::Digits(inverse);
            }
        }
        Ok(keep(layout, &folded))
    }

    /// The number attributes, each unset where it is written wrong;
    /// mistakes go to `errors`.
    fn check_attributes(&self, errors: &mut ParseError) -> Attributes {
        let mut values = Attributes::UNSET;
        for (_, n) in attributes::numbers() {
            let Some((value, span)) = self.numbers[n.slot] else {
                continue;
            };
            match n.zero {
                Some(kind) if value == 0 => errors.push(Error::new(kind, span)),
                _ if u128::from(value) > n.max => errors.push(Error::new(
                    ErrorKind::IntegerTooLarge {
                        what: n.what,
                        max: n.max,
                    },
                    span,
                )),
                _ => values.set(n.slot, value),
            }
        }
        values
    }

    /// The permutation to use; mistakes go to `errors`.
    fn check_minor_to_major(&self, errors: &mut ParseError) -> [usize; MAX_RANK] {
        let rank = self.rank;
        let mut m2m = [0usize; MAX_RANK];
        for (i, slot) in m2m.iter_mut().take(rank).enumerate() {
            *slot = rank - 1 - i;
        }
        if !self.m2m_written {
            return m2m;
        }
        if self.m2m_count != rank {
            let span = if self.m2m_count > rank && rank > 0 {
                let first_extra = self
                    .m2m_spans
                    .get(rank)
                    .copied()
                    .unwrap_or(self.minor_to_major_span);
                Span::new(
                    first_extra.start,
                    self.minor_to_major_span.end.max(first_extra.end),
                )
            } else {
                self.minor_to_major_span
            };
            errors.push(Error::new(
                ErrorKind::MinorToMajorLength {
                    found: self.m2m_count,
                    rank,
                },
                span,
            ));
            return m2m;
        }
        let mut seen = [false; MAX_RANK];
        let mut ok = true;
        for (&written, &span) in self.m2m[..rank].iter().zip(&self.m2m_spans) {
            let Some(d) = usize::try_from(written).ok().filter(|&d| d < rank) else {
                errors.push(Error::new(
                    ErrorKind::MinorToMajorOutOfRange {
                        value: written,
                        rank,
                    },
                    span,
                ));
                ok = false;
                continue;
            };
            if seen[d] {
                errors.push(Error::new(
                    ErrorKind::MinorToMajorRepeated { value: d },
                    span,
                ));
                ok = false;
            } else {
                seen[d] = true;
            }
        }
        if ok {
            for (slot, &d) in m2m.iter_mut().zip(&self.m2m[..rank]) {
                *slot = d as usize;
            }
        }
        m2m
    }

    fn check_tiles(&self, errors: &mut ParseError) {
        for (i, tile) in self.tiles[..self.levels].iter().enumerate() {
            let level = i + 1;
            let spans = &self.tile_spans[i];
            for (j, d) in tile.dims().iter().enumerate() {
                match d {
                    TileDim::Size(0) => {
                        errors.push(Error::new(ErrorKind::TileDimZero { level }, spans[j]));
                    }
                    TileDim::Size(n) if *n as u128 > MAX_TILE_DIM => {
                        errors.push(Error::new(
                            ErrorKind::IntegerTooLarge {
                                what: "tile dim",
                                max: MAX_TILE_DIM,
                            },
                            spans[j],
                        ));
                    }
                    TileDim::Combine if j + 1 == tile.rank() => {
                        errors.push(Error::new(ErrorKind::CombineMostMinor { level }, spans[j]));
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Gives `layout` the folded programs' compact forms, for a layout whose
/// digits have no compiled form (and, in tests, for any layout).
pub(crate) fn program_forms(layout: &mut Layout, folded: &Folded) {
    let closed = Closed::new(&folded.offset);
    let interpreted = closed.is_none().then_some(&folded.offset);
    let code = Code::new(interpreted, &folded.inverse);
    layout.forms = Forms {
        offset: closed.map_or(OffsetForm::Steps, OffsetForm::Closed),
        inverse: InverseForm::Fold,
    };
    // The places need the layout made: its physical and tiled shapes.
    if let Some(code) =
        code.map(|code| code.with_places(layout.dims(), layout.minor_to_major(), layout.tiles()))
    {
        layout.forms.inverse = InverseForm::Code(code);
    }
}

// Each number attribute's setter, beside its typed accessor on `Layout`
// (`eval/attributes.rs`) and its row of the table.
impl LayoutBuilder {
    /// Sets `L(n)`: storage rounds up to a multiple of `n` elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let l = LayoutBuilder::new(ElementType::F32, &[5]).tail_alignment(4).build().unwrap();
    /// assert_eq!(l.storage_len(), 8);
    /// ```
    #[must_use]
    pub fn tail_alignment(mut self, n: usize) -> Self {
        self.set_number(attributes::TAIL_ALIGNMENT, n as u64, Span::default());
        self
    }

    /// Sets `E(n)`: each element takes `n` bits of storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let l = LayoutBuilder::new(ElementType::S4, &[64, 128]).element_bits(4).build().unwrap();
    /// assert_eq!(l.storage_bytes(), 4096);
    /// ```
    #[must_use]
    pub fn element_bits(mut self, bits: u32) -> Self {
        self.set_number(attributes::ELEMENT_BITS, u64::from(bits), Span::default());
        self
    }

    /// Sets `S(n)`, the memory space (metadata; no effect on offsets).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{ElementType, LayoutBuilder};
    /// let l = LayoutBuilder::new(ElementType::F32, &[2]).memory_space(1).build().unwrap();
    /// assert_eq!(l.to_string(), "f32[2]{0:S(1)}");
    /// ```
    #[must_use]
    pub fn memory_space(mut self, space: u64) -> Self {
        self.set_number(attributes::MEMORY_SPACE, space, Span::default());
        self
    }
}

// Made with the builder, which checks the tile it writes.
impl Layout {
    /// This layout with XLA's old `padded_dimensions` (SPEC.md §7): each dim
    /// padded to the given width, which is one tile, in physical order, over
    /// the whole padded array.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PaddedDimensions`](ErrorKind::PaddedDimensions) if
    /// the widths are not one per dim, a width is below its dim, or the layout
    /// is already tiled.
    ///
    /// # Examples
    ///
    /// ```
    /// // [2x3] column-major padded to [3,5]: `a d 0 b e 0 c f 0 0 0 0 0 0 0`.
    /// let l = xla_layout::parse("f32[2,3]{0,1}").unwrap();
    /// let p = l.with_padded_dimensions(&[3, 5]).unwrap();
    /// assert_eq!(p.to_string(), "f32[2,3]{0,1:T(5,3)}");
    /// assert_eq!(p.storage_len(), 15);
    /// assert_eq!(p.offset(&[0, 1]), 3); // b
    /// ```
    pub fn with_padded_dimensions(&self, padded: &[usize]) -> Result<Layout, ParseError> {
        self.padded_builder(padded)?.build()
    }

    /// The description of [`with_padded_dimensions`](Self::with_padded_dimensions),
    /// unchecked beyond its own rules.
    pub(crate) fn padded_builder(&self, padded: &[usize]) -> Result<LayoutBuilder, ParseError> {
        let fail = |reason| {
            Err(ParseError::single(Error::new(
                ErrorKind::PaddedDimensions { reason },
                Span::default(),
            )))
        };
        if padded.len() != self.rank() {
            return fail("must list one width per dim");
        }
        if padded.iter().zip(self.dims()).any(|(p, d)| p < d) {
            return fail("must not be narrower than the dims they pad");
        }
        if !self.tiles.is_empty() {
            return fail("cannot be combined with tiles; write the tiles alone");
        }
        let mut tile = [TileDim::Size(1); MAX_RANK];
        for (slot, &d) in tile.iter_mut().zip(self.minor_to_major().iter().rev()) {
            *slot = TileDim::Size(padded[d]);
        }
        let mut b =
            LayoutBuilder::new(self.element, self.dims()).minor_to_major(self.minor_to_major());
        b.keep_attributes(&self.attributes, |_| true);
        b.dynamic = self.dynamic;
        if self.rank() > 0 {
            b = b.tile(&tile[..self.rank()]);
        }
        Ok(b)
    }
}
