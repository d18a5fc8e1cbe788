//! The run-time [`Layout`]: a validated, folded spec.

use core::fmt;
use core::num::NonZeroUsize;

use crate::algebra::fold::{fold, offset_of, shape_after, Folded, Shape};
use crate::eval::closed::{Closed, Entries, Stage};
use crate::eval::code::Code;
use crate::eval::program::{InverseProgram, OffsetProgram};
use crate::eval::{DigitInverse, DigitOffset};
use crate::fixed::Fixed;
use crate::spec::attributes::{self, Attributes, Kind};
use crate::{ElementType, Tile, MAX_PROGRAM_STEPS, MAX_RANK, MAX_TILING_LEVELS};

/// A checked XLA layout with its folded index programs.
///
/// Made by [`parse`](crate::parse) or [`LayoutBuilder`](crate::LayoutBuilder);
/// `layout!` values convert into one with `.runtime()`. Every method is
/// total, whatever the input, except that [`offset`](Self::offset) panics
/// in debug builds for an index outside the dims.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
/// assert_eq!(l.offset(&[1, 0]), 1);
/// assert_eq!(l.index_of(16).as_deref(), Some(&[2, 0][..]));
/// assert_eq!(l.storage_bytes(), 64);
/// ```
///
/// # Size
///
/// A `Layout` is a plain value of at most 4 KiB (`size_of::<Layout>()`),
/// without allocation. It keeps the description and tables for
/// [`offset`](Self::offset) and [`index_of`](Self::index_of): where each
/// tile splits whole digits of powers of two (every TPU tiling, ragged
/// dims or not), the digits of the tiled shape, a shift and a multiply
/// each; otherwise its index programs in a compact form (see
/// [`offset_program`](Self::offset_program)). For programs too long for
/// that form (over 40 steps, or over 20 distinct constants), `offset`
/// steps the index through the tiling levels and `index_of` folds the
/// programs again on every call, which is correct but slower.
// Equality and hashing read live entries only: `Fixed` ignores stale slots,
// and `code` is a function of the description.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    pub(crate) element: ElementType,
    pub(crate) dims: Fixed<usize, MAX_RANK>,
    /// Bit `d` set: dim `d` is dynamic, written `<=N` and laid out at `N`.
    pub(crate) dynamic: u16,
    pub(crate) minor_to_major: Fixed<usize, MAX_RANK>,
    pub(crate) tiles: Fixed<Tile, MAX_TILING_LEVELS>,
    /// `L(n)`, `E(n)`, `S(n)`: see [`attributes`](crate::spec::attributes).
    pub(crate) attributes: Attributes,
    pub(crate) storage_len: usize,
    pub(crate) storage_bytes: usize,
    pub(crate) forms: Forms,
}

/// How a layout evaluates `offset` and `index_of`: each the fastest form
/// it has (`benches/offset.rs`, `benches/family.rs`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Forms {
    pub(crate) offset: OffsetForm,
    pub(crate) inverse: InverseForm,
}

/// How a layout evaluates `offset`.
// Unboxed, unlike what the lint asks: a `Layout` allocates nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum OffsetForm {
    /// The closed form of shifts and masks: every stride a power of two,
    /// a loop over indices vectorizes.
    Closed(Closed),
    /// Compiled from the layout's digits (see [`algebra`](crate::algebra)),
    /// where tiles split whole digits of powers of two: every TPU tiling,
    /// ragged dims or not.
    Digits(DigitOffset),
    /// Neither: stepped through the levels, or the compact programs
    /// where the inverse keeps them.
    Steps,
}

/// How a layout evaluates `index_of`.
// Unboxed, unlike what the lint asks: a `Layout` allocates nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum InverseForm {
    /// The compact programs, for a layout without the digits' inverse
    /// (`*` over dims larger than 1, tiles that split a digit's digits).
    Code(Code),
    /// Compiled from the layout's digits.
    Digits(DigitInverse),
    /// Neither: the programs folded again on each call.
    Fold,
}

const _: () = assert!(core::mem::size_of::<Layout>() <= 4096);

/// A logical index returned by value, without allocation; derefs to `[usize]`.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let idx = l.index_of(17).unwrap();
/// assert_eq!(&*idx, &[2, 3]);
/// ```
// The entries first and 16-byte aligned: `Layout::index_of` writes them
// two to a 16-byte store, and a caller copies the index in 16-byte pieces;
// with the entries at 8 past a boundary (the fields reordered, the length
// first), a caller's loop ran 15% slower at half of its stack positions.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Index {
    values: [usize; MAX_RANK],
    /// The rank plus one: the zero it never holds is `Option<Index>`'s
    /// tag, so the `Option` is no larger than the index.
    len: NonZeroUsize,
}

const _: () = assert!(core::mem::size_of::<Option<Index>>() == core::mem::size_of::<Index>());
const _: () = assert!(core::mem::offset_of!(Index, values) == 0);

impl Index {
    /// An index holding `values` (at most [`MAX_RANK`] of them).
    pub(crate) fn from_slice(values: &[usize]) -> Index {
        let values = &values[..values.len().min(MAX_RANK)];
        let mut index = Index::zeros(values.len());
        index.as_mut().copy_from_slice(values);
        index
    }

    /// All zeros, `rank` long (at most [`MAX_RANK`]).
    #[inline]
    fn zeros(rank: usize) -> Index {
        Index {
            values: [0; MAX_RANK],
            len: NonZeroUsize::MIN.saturating_add(rank.min(MAX_RANK)),
        }
    }

    /// The entries, mutably.
    #[inline]
    fn as_mut(&mut self) -> &mut [usize] {
        let len = (self.len.get() - 1).min(MAX_RANK);
        &mut self.values[..len]
    }

    /// The index at row-major position `position` of an array of `dims`.
    pub(crate) fn unravel(mut position: usize, dims: &[usize]) -> Index {
        let mut index = Index::zeros(dims.len());
        for (slot, &d) in index.as_mut().iter_mut().zip(dims).rev() {
            // A zero dim has no positions; the guard only keeps `%` total.
            *slot = position % d.max(1);
            position /= d.max(1);
        }
        index
    }
}

impl core::ops::Deref for Index {
    type Target = [usize];
    #[inline]
    fn deref(&self) -> &[usize] {
        let len = (self.len.get() - 1).min(MAX_RANK);
        &self.values[..len]
    }
}

// Equality and hashing read the entries only, as `Fixed` does.
impl PartialEq for Index {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Index {}

impl core::hash::Hash for Index {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

/// `index` copied entry by entry, each at a place known where the call is
/// inlined: the caller's index is only read there, never addressed.
#[allow(clippy::inline_always)]
#[inline(always)]
fn copied(index: &[usize]) -> ([usize; MAX_RANK], usize) {
    let mut copy = [0; MAX_RANK];
    for (d, slot) in copy.iter_mut().enumerate() {
        if let Some(&x) = index.get(d) {
            *slot = x;
        }
    }
    (copy, index.len().min(MAX_RANK))
}

/// Steps a row-major index to the next one (wrapping to zeros at the end):
/// the walks by index (tensors, and offsets of layouts without digits)
/// count with it.
pub(crate) fn advance(index: &mut [usize], dims: &[usize]) {
    for (i, &d) in index.iter_mut().zip(dims).rev() {
        *i += 1;
        if *i < d {
            return;
        }
        *i = 0;
    }
}

impl fmt::Debug for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Layout {
    /// The element type.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("BF16[2]").unwrap();
    /// assert_eq!(l.element_type(), xla_layout::ElementType::Bf16);
    /// ```
    pub fn element_type(&self) -> ElementType {
        self.element
    }

    /// The number of dims.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[1,5,1]").unwrap().rank(), 3);
    /// ```
    #[inline]
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The number of dims greater than 1.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[1,5,1]").unwrap().true_rank(), 1);
    /// ```
    pub fn true_rank(&self) -> usize {
        self.dims().iter().filter(|&&d| d > 1).count()
    }

    /// The logical dims, in written order.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[3,5]").unwrap().dims(), &[3, 5]);
    /// ```
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// One dim's size; negative numbers count from the end (-1 is the last dim).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[2,3,4]").unwrap();
    /// assert_eq!(l.dim(-1), Some(4));
    /// assert_eq!(l.dim(0), Some(2));
    /// assert_eq!(l.dim(3), None);
    /// ```
    pub fn dim(&self, dim: isize) -> Option<usize> {
        crate::resolve_dim(self.rank(), dim).map(|d| self.dims[d])
    }

    /// Whether dim `dim` is dynamic: written `<=N`, its size at run time is
    /// at most `N`. XLA allocates such a dim at its bound, so [`dims`](Self::dims)
    /// holds `N` and every offset is the one of the static shape. `false`
    /// for a dim past the rank.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,<=15]{1,0:T(2,2)}").unwrap();
    /// assert!(l.is_dynamic_dim(1));
    /// assert!(!l.is_dynamic_dim(0));
    /// assert_eq!(l.dims(), &[3, 15]);
    /// assert_eq!(l.to_string(), "f32[3,<=15]{1,0:T(2,2)}");
    /// ```
    pub fn is_dynamic_dim(&self, dim: usize) -> bool {
        dim < self.rank() && self.dynamic & (1 << dim) != 0
    }

    /// Whether any dim is dynamic (see [`is_dynamic_dim`](Self::is_dynamic_dim)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(xla_layout::parse("s32[2,<=2,2]{2,0,1}").unwrap().is_dynamic());
    /// assert!(!xla_layout::parse("s32[2,2,2]").unwrap().is_dynamic());
    /// ```
    pub fn is_dynamic(&self) -> bool {
        self.dynamic != 0
    }

    /// `minor_to_major`: dims from fastest- to slowest-varying.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[2,3,4]").unwrap().minor_to_major(), &[2, 1, 0]);
    /// ```
    pub fn minor_to_major(&self) -> &[usize] {
        &self.minor_to_major
    }

    /// The tiling levels, first applied first.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[16,256]{1,0:T(8,128)(2,1)}").unwrap();
    /// assert_eq!(l.tiles().len(), 2);
    /// ```
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }

    /// The number of logical elements (product of the dims).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap().len(), 15);
    /// ```
    pub fn len(&self) -> usize {
        // A word less to keep: storage, which covers every element, fits.
        crate::algebra::tiling::product(self.dims()).unwrap_or(usize::MAX)
    }

    /// Whether the array has no elements (some dim is 0).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(xla_layout::parse("f32[3,0]").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.dims().contains(&0)
    }

    /// Storage slots: padding and `L(n)` rounding included.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap().storage_len(), 24);
    /// ```
    pub fn storage_len(&self) -> usize {
        self.storage_len
    }

    /// Storage in bytes: `ceil(storage_len * element_bits / 8)`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("s4[1,1023]{1,0:T(2,1024)E(4)}").unwrap().storage_bytes(), 1024);
    /// ```
    pub fn storage_bytes(&self) -> usize {
        self.storage_bytes
    }

    /// Storage slots that hold no element: tile padding and `L(n)` rounding,
    /// `storage_len() - len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.padding_len(), 9);
    /// assert_eq!((0..l.storage_len()).filter(|&o| l.index_of(o).is_none()).count(), 9);
    /// ```
    pub fn padding_len(&self) -> usize {
        self.storage_len.saturating_sub(self.len())
    }

    /// The physical shape (dims in `minor_to_major` order, most major first)
    /// when `level` is 0, else the shape after that many tiling levels;
    /// `None` past the last level.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// assert_eq!(l.tiled_shape(0).unwrap().dims(), &[4, 8]);
    /// assert_eq!(l.tiled_shape(1).unwrap().dims(), &[2, 2, 2, 4]);
    /// assert_eq!(l.tiled_shape(2).unwrap().dims(), &[2, 2, 1, 4, 2, 1]);
    /// ```
    pub fn tiled_shape(&self, level: usize) -> Option<Shape> {
        let tiles = self.tiles().get(..level)?;
        // Cannot fail: the same steps succeeded when the layout was built.
        shape_after(self.dims(), self.minor_to_major(), tiles).ok()
    }

    /// Whether `index` has one entry per dim, each inside its dim.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// assert!(l.contains(&[2, 4]));
    /// assert!(!l.contains(&[3, 0]));
    /// assert!(!l.contains(&[0]));
    /// ```
    pub fn contains(&self, index: &[usize]) -> bool {
        index.len() == self.rank() && index.iter().zip(self.dims()).all(|(i, d)| i < d)
    }

    /// The storage offset of `index`, checked only in debug builds.
    ///
    /// Use [`try_offset`](Self::try_offset) for an index that may be outside
    /// the dims.
    ///
    /// # Panics
    ///
    /// In debug builds (`debug_assertions` on), if `index` is not
    /// [`contains`](Self::contains)ed (outside the dims, or of the wrong
    /// length), with a message naming the index and the dims. In release
    /// builds it does not check: the result for such an index is unspecified
    /// (it may exceed storage or name another element) but never a panic.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[8,8]{1,0:T(2,4)(2,1,1,1)}").unwrap();
    /// assert_eq!(l.offset(&[6, 5]), 51);
    /// ```
    // Always inlined, down to the closed form's evaluator: only then can a
    // caller's loop keep the terms of its outer indices out of the inner
    // loop, as it does with `layout!`'s code.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn offset(&self, index: &[usize]) -> usize {
        if cfg!(debug_assertions) && !self.contains(index) {
            crate::eval::outside::outside_dims(index, self.dims());
        }
        self.offset_unchecked(index)
    }

    /// [`offset`](Self::offset) without the debug-build check, for the
    /// renderer, which also places cells of empty arrays.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn offset_unchecked(&self, index: &[usize]) -> usize {
        match (&self.forms.offset, &self.forms.inverse) {
            (OffsetForm::Closed(closed), _) => closed.offset(index),
            (OffsetForm::Digits(form), _) => form.offset(index),
            // Both read the index at places they compute, so it must sit in
            // memory: a copy made here keeps the caller's own index in
            // registers for the other forms, where a caller's loop would
            // otherwise store it on every call.
            (OffsetForm::Steps, InverseForm::Code(code)) => {
                let (copy, rank) = copied(index);
                code.offset(&copy[..rank])
            }
            (OffsetForm::Steps, _) => {
                let (copy, rank) = copied(index);
                offset_of(
                    self.dims(),
                    self.minor_to_major(),
                    self.tiles(),
                    &copy[..rank],
                )
            }
        }
    }

    /// The closed form of the offset, where the layout keeps one.
    #[cfg(test)]
    pub(crate) fn closed(&self) -> Option<&Closed> {
        match &self.forms.offset {
            OffsetForm::Closed(closed) => Some(closed),
            _ => None,
        }
    }

    /// This layout with the folded programs' compact forms in place of its
    /// digits, so that tests reach those forms on every layout.
    #[cfg(test)]
    pub(crate) fn with_program_forms(mut self) -> Layout {
        if let Some(folded) = self.fold() {
            crate::spec::validate::program_forms(&mut self, &folded);
        }
        self
    }

    /// The compact programs, where the layout keeps them.
    #[cfg(test)]
    pub(crate) fn code(&self) -> Option<&Code> {
        match &self.forms.inverse {
            InverseForm::Code(code) => Some(code),
            _ => None,
        }
    }

    /// The programs, folded again from the description.
    fn fold(&self) -> Option<Folded> {
        if !self.well_formed() {
            return None;
        }
        fold(
            self.dims(),
            self.minor_to_major(),
            self.tiles(),
            self.tail_alignment(),
        )
        .ok()
    }

    /// Whether the description holds what folding and the shapes assume:
    /// always, for a layout this crate built. A layout read from foreign
    /// bytes (`__from_bytes`) may not; it gets no programs or forms rather
    /// than a panic.
    pub(crate) fn well_formed(&self) -> bool {
        let rank = self.rank();
        let permutation = self.minor_to_major().len() == rank
            && (0..rank).all(|d| self.minor_to_major().contains(&d));
        // An empty tile (`T()`) is valid and tiles nothing.
        let tiles_ok = self.tiles().iter().all(|t| {
            (t.dims().is_empty() || matches!(t.dims().last(), Some(crate::TileDim::Size(_))))
                && !t.dims().contains(&crate::TileDim::Size(0))
        });
        permutation && tiles_ok && self.tail_alignment() != 0
    }

    /// The storage offset of `index`, or `None` if it is outside the dims or
    /// has the wrong number of entries.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.try_offset(&[2, 3]), Some(17));
    /// assert_eq!(l.try_offset(&[3, 0]), None);
    /// ```
    pub fn try_offset(&self, index: &[usize]) -> Option<usize> {
        self.contains(index).then(|| self.offset(index))
    }

    /// The logical index stored at `offset`, or `None` for a padding slot or
    /// an offset at or past [`storage_len`](Self::storage_len).
    ///
    /// Each call reads the digits of the offset back from the layout's
    /// tables, a multiply or two a digit and no division, into every entry
    /// of the index at once (within three times the `layout!`-generated
    /// inverse's time on TPU tilings of ranks 1 to 4, `benches/family.rs`);
    /// no form is faster to pick for many offsets.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.index_of(17).as_deref(), Some(&[2, 3][..]));
    /// assert_eq!(l.index_of(9), None); // padding
    /// assert_eq!(l.index_of(24), None); // past storage
    /// ```
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn index_of(&self, offset: usize) -> Option<Index> {
        let (values, found) = self.index_values(offset);
        found.then_some(Index {
            values,
            len: NonZeroUsize::MIN.saturating_add(self.rank().min(MAX_RANK)),
        })
    }

    /// The index at `offset` in an array, its entries past the rank 0, and
    /// whether it names an element. Inlined with the digits' inverse, each
    /// entry at a place known to the caller: an index a caller reads in
    /// part or copies to an array of the rank stays in registers.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_values(&self, offset: usize) -> ([usize; MAX_RANK], bool) {
        let rank = self.rank().min(MAX_RANK);
        match &self.forms.inverse {
            InverseForm::Digits(form) => form.index_of(offset, rank),
            _ => self.index_other(offset, rank),
        }
    }

    /// [`index_values`](Self::index_values) of a layout without the
    /// digits' inverse (the compact programs, or the folded ones), out of
    /// line.
    #[inline(never)]
    fn index_other(&self, offset: usize, rank: usize) -> ([usize; MAX_RANK], bool) {
        let code = match &self.forms.inverse {
            InverseForm::Digits(form) => return form.index_of(offset, rank),
            InverseForm::Code(code) => Some(code),
            InverseForm::Fold => None,
        };
        let mut stage = Stage([0; MAX_RANK]);
        let index = Entries(rank, &mut stage.0);
        let found = offset < self.storage_len
            && match code {
                Some(code) => code.index_of(offset, index),
                None => index.with_slice(|index| self.index_slow(offset, index)),
            };
        (stage.0, found)
    }

    /// Writes the logical index at `offset` into `index` (at least rank
    /// long) and returns `true`; `false` for padding or past storage.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_into(&self, offset: usize, index: &mut [usize]) -> bool {
        match index.get_mut(..self.rank()) {
            Some(index) => self.index_exact(offset, index),
            None => false,
        }
    }

    /// [`index_into`](Self::index_into) for an `index` exactly rank long.
    /// A caller whose length is a constant (a [`Ranked`](crate::Ranked)
    /// view) keeps the index in registers: sliced to the rank read from
    /// the layout, it stays in memory.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn index_exact(&self, offset: usize, index: &mut [usize]) -> bool {
        let (values, found) = self.index_values(offset);
        let n = index.len().min(MAX_RANK);
        index[..n].copy_from_slice(&values[..n]);
        found
    }

    /// For callers that invert many slots: the inverse program folded once
    /// when this layout keeps no compact code (its `index_into` would fold
    /// again on every call), `None` when `index_into` is fast already.
    pub(crate) fn folded_inverse(&self) -> Option<InverseProgram> {
        if !matches!(self.forms.inverse, InverseForm::Fold) {
            return None;
        }
        self.fold().map(|f| f.inverse)
    }

    /// [`index_into`](Self::index_into) through an inverse folded once by
    /// [`folded_inverse`](Self::folded_inverse), when there is one.
    #[inline]
    pub(crate) fn index_into_folded(
        &self,
        folded: Option<&InverseProgram>,
        offset: usize,
        index: &mut [usize],
    ) -> bool {
        match folded {
            Some(p) => {
                offset < self.storage_len
                    && index.len() >= self.rank()
                    && p.eval(offset, &mut [0; MAX_PROGRAM_STEPS], index)
            }
            None => self.index_into(offset, index),
        }
    }

    /// [`index_into`](Self::index_into) of a layout whose programs exceed the compact form.
    #[cold]
    fn index_slow(&self, offset: usize, index: &mut [usize]) -> bool {
        let Some(folded) = self.fold() else {
            return false;
        };
        folded
            .inverse
            .eval(offset, &mut [0; MAX_PROGRAM_STEPS], index)
    }

    /// The folded forward map, as `layout!` prints it in Rust.
    ///
    /// The layout keeps its programs in a compact form that [`offset`]
    /// evaluates; this is the full, inspectable one, folded again on each
    /// call (a few microseconds).
    ///
    /// [`offset`]: Self::offset
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// assert_eq!(l.offset_program().terms().len(), 2);
    /// ```
    pub fn offset_program(&self) -> OffsetProgram {
        self.programs().0
    }

    /// The folded inverse map, folded again on each call like
    /// [`offset_program`](Self::offset_program).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.inverse_program().storage_len(), 24);
    /// ```
    pub fn inverse_program(&self) -> InverseProgram {
        self.programs().1
    }

    /// [`offset_program`](Self::offset_program) and
    /// [`inverse_program`](Self::inverse_program) from one fold, which
    /// yields both: for a caller that wants both, half the work.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let (offset, inverse) = l.programs();
    /// assert_eq!(offset, l.offset_program());
    /// assert_eq!(inverse.storage_len(), 24);
    /// ```
    pub fn programs(&self) -> (OffsetProgram, InverseProgram) {
        self.fold()
            .map_or((OffsetProgram::EMPTY, InverseProgram::EMPTY), |f| {
                (f.offset, f.inverse)
            })
    }

    /// Whether the layout writes a `{...}` part when printed: always, except
    /// for an untiled scalar with nothing else to say.
    fn prints_layout(&self) -> bool {
        self.rank() > 0 || !self.tiles.is_empty() || self.attributes.any()
    }
}

impl fmt::Display for Layout {
    /// The canonical XLA form: lowercase type, `{}` brackets, no spaces,
    /// attributes in XLA's order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element)?;
        for (i, d) in self.dims().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if self.is_dynamic_dim(i) {
                f.write_str("<=")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        if !self.prints_layout() {
            return Ok(());
        }
        f.write_str("{")?;
        for (i, d) in self.minor_to_major().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        if !self.tiles.is_empty() || self.attributes.any() {
            f.write_str(":")?;
        }
        for a in attributes::ATTRIBUTES {
            match a.kind {
                Kind::Tiles if !self.tiles().is_empty() => {
                    f.write_str(a.letters)?;
                    for t in self.tiles() {
                        write!(f, "{t}")?;
                    }
                }
                Kind::Number(n) if self.attributes.get(n.slot) != n.unset => {
                    write!(f, "{}({})", a.letters, self.attributes.get(n.slot))?;
                }
                _ => {}
            }
        }
        f.write_str("}")
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layout({self})")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use core::hash::{BuildHasher, Hash};
    use std::hash::RandomState;
    use std::println;

    use super::{Forms, InverseForm, Layout, OffsetForm};
    use crate::{program::OffsetProgram, Index, Shape, Tile, MAX_PROGRAM_STEPS};

    #[test]
    fn sizes() {
        let size = core::mem::size_of::<Layout>();
        println!("Layout: {size} bytes");
        println!("Tile: {} bytes", core::mem::size_of::<Tile>());
        println!("Index: {} bytes", core::mem::size_of::<Index>());
        println!("Shape: {} bytes", core::mem::size_of::<Shape>());
        println!(
            "OffsetProgram: {} bytes",
            core::mem::size_of::<OffsetProgram>()
        );
        println!(
            "Closed: {} bytes",
            core::mem::size_of::<crate::eval::closed::Closed>()
        );
        println!(
            "Code: {} bytes",
            core::mem::size_of::<crate::eval::code::Code>()
        );
        println!("Forms: {} bytes", core::mem::size_of::<Forms>());
        println!("OffsetForm: {} bytes", core::mem::size_of::<OffsetForm>());
        println!("InverseForm: {} bytes", core::mem::size_of::<InverseForm>());
        println!(
            "DigitOffset: {} bytes",
            core::mem::size_of::<crate::eval::DigitOffset>()
        );
        println!(
            "DigitInverse: {} bytes",
            core::mem::size_of::<crate::eval::DigitInverse>()
        );
        assert!(size <= 4096, "{size}");
    }

    fn hash(l: &Layout) -> u64 {
        let s = RandomState::new();
        let h = |l: &Layout| {
            let mut h = s.build_hasher();
            l.hash(&mut h);
            core::hash::Hasher::finish(&h)
        };
        h(l)
    }

    #[test]
    fn equality_reads_live_entries_only() {
        let a = crate::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
        // The same layout from the builder, then with stale entries left
        // behind the length of each list.
        let mut b = crate::LayoutBuilder::new(crate::ElementType::F32, &[3, 5])
            .tile(&[crate::TileDim::Size(2), crate::TileDim::Size(2)])
            .build()
            .unwrap();
        b.dims.push(77).unwrap();
        b.dims.truncate(2);
        b.minor_to_major.push(9).unwrap();
        b.minor_to_major.truncate(2);
        b.tiles.push(Tile::EMPTY).unwrap();
        b.tiles.truncate(1);
        let s = RandomState::new();
        let h = |l: &Layout| s.hash_one(l);
        assert_eq!(a, b);
        assert_eq!(h(&a), h(&b));
        assert_ne!(a, crate::parse("f32[3,5]{1,0:T(2,1)}").unwrap());
        let _ = hash(&a);
    }

    /// Offsets and indices of every slot through the layout's fast form
    /// against the full folded programs.
    fn agrees(spec: &str, every: usize) -> (bool, bool) {
        let digits = crate::parse(spec).unwrap();
        agrees_in(&digits, spec, every);
        let l = digits.with_program_forms();
        agrees_in(&l, spec, every);
        (l.closed().is_some(), l.code().is_some())
    }

    fn agrees_in(l: &Layout, spec: &str, every: usize) {
        let (p, inv) = l.programs();
        let mut scratch = [0; MAX_PROGRAM_STEPS];
        for position in (0..l.len()).step_by(every) {
            let index = Index::unravel(position, l.dims());
            assert_eq!(
                l.offset(&index),
                p.eval(&index, &mut scratch),
                "{spec} at {index:?}"
            );
        }
        for k in (0..l.storage_len() + 3).step_by(every) {
            let mut want = [0; crate::MAX_RANK];
            let found = inv.eval(k, &mut scratch, &mut want);
            let got = l.index_of(k);
            assert_eq!(
                got.as_deref(),
                found.then_some(&want[..l.rank()]),
                "{spec} at {k}"
            );
        }
    }

    #[test]
    fn every_form_agrees_with_the_programs() {
        // Closed forms: of inputs, of combined sums, of divisions that are
        // not shifts.
        assert_eq!(agrees("bf16[64,256]{1,0:T(8,128)(2,1)}", 1), (true, true));
        assert_eq!(
            agrees("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", 1),
            (true, true)
        );
        assert_eq!(agrees("f32[30,20]{0,1:T(3,5)}", 1), (true, true));
        assert_eq!(agrees("f32[7,9]{1,0:T(3)(2)}", 1), (true, true));
        // Quotients past their group's slots, as sums: a dim's third (by
        // 12, 6 and 3), a combined sum's second.
        assert_eq!(agrees("f32[24,8]{1,0:T(12,4)(6,2)(3,1)}", 1), (true, true));
        assert_eq!(agrees("f32[10,2,9]{0,1,2:T(*,8)(8,4)}", 1), (true, true));
        // `((i % 3) * 10 + j % 4) / 2` and the like have no closed form: interpreted.
        assert_eq!(agrees("f32[7,10]{1,0:T(3,4)(2,3)}", 1), (false, true));
        // Too long for the compact form: folded again on each call.
        let long = "f32[3,3,3,3,3,3,3,3,3]{8,7,6,5,4,3,2,1,0:T(2,2,2,2,2,2,2,2,2)(2,1)}";
        assert_eq!(agrees(long, 97), (false, false));
    }

    #[test]
    fn empty_tiles_fold_again_when_programs_are_long() {
        // Programs too long for the compact form are folded again on each
        // call; an empty tile among the levels must not stop that.
        let l = crate::parse("f64[4,4,4]{1,0,2:T()(7,4,1,1)(8,3,5,7,*,4,4)(2,8,2,4,4,7,2,8,3,2)}")
            .unwrap();
        for i in 0..4 {
            for j in 0..4 {
                for k in 0..4 {
                    let o = l.offset(&[i, j, k]);
                    assert_eq!(l.index_of(o).as_deref(), Some(&[i, j, k][..]));
                }
            }
        }
    }

    #[test]
    fn values_past_two_to_the_32_divide_exactly() {
        // Dividends of 2^33 and more, and out-of-range ones: the same
        // values as the programs, which the generated code also gives.
        let l = crate::parse("s8[8589934597]{0:T(1000)}").unwrap();
        let p = l.offset_program();
        let mut scratch = [0; MAX_PROGRAM_STEPS];
        for i in [0, 999, 1000, 4_294_967_296, 8_589_934_596] {
            assert_eq!(l.offset(&[i]), p.eval(&[i], &mut scratch));
            assert_eq!(l.index_of(l.offset(&[i])).as_deref(), Some(&[i][..]));
        }
        // Out of range: any value, no panic (past the debug-build check).
        let _ = l.offset_unchecked(&[usize::MAX]);
        let _ = crate::parse("f32[3,5]{1,0:T(2,2)}")
            .unwrap()
            .offset_unchecked(&[usize::MAX, 7]);
    }
}
