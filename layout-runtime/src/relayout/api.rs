//! The relayout methods of [`Layout`], and the options they take.

use super::bits::{BitElement, Bits, Checks, Fit, GatherBits, PackBits, ScatterBits, UnpackBits};
use super::iter::{Offsets, Slots};
use super::kernels::Asked;
use super::route::{Route, Side};
use super::RelayoutError;
use crate::{AnyLayout, Layout};

/// The threads a relayout runs on.
///
/// Whole elements split their destination into ranges of equal work, as
/// [`RelayoutPlan::chunks`](crate::RelayoutPlan::chunks) does, one task
/// each. Sub-byte relayouts ([`pack_bits`](Layout::pack_bits), ...) and
/// `pack_array` (feature `ndarray`) from an array not in row-major order
/// run on the calling thread whatever is asked: their kernels are not split.
///
/// `Pool` exists with the `rayon` feature only, so asking for threads
/// without it is a compile error rather than a relayout quietly run on one.
///
/// # Examples
///
/// ```
/// use xla_layout::{Options, Threads};
/// let l = xla_layout::parse("f32[256,256]{1,0:T(8,128)}").unwrap();
/// let logical: Vec<f32> = (0..l.len()).map(|x| x as f32).collect();
/// let mut one = vec![0.0; l.storage_len()];
/// l.pack(&logical, &mut one, Options::default().threads(Threads::One)).unwrap();
/// #[cfg(feature = "rayon")]
/// {
///     let mut pool = vec![f32::NAN; l.storage_len()];
///     l.pack(&logical, &mut pool, Options::default().threads(Threads::Pool)).unwrap();
///     assert_eq!(pool, one);
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Threads {
    /// The calling thread only.
    #[default]
    One,
    /// Rayon's current pool (the global one, or one `install`ed around the
    /// call), in chunks of at least 256 KiB of destination, at most four a
    /// thread; a destination too small for two runs on the calling thread
    /// (feature `rayon`).
    #[cfg(feature = "rayon")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    Pool,
}

/// What a relayout that writes a layout's storage puts in its padding, and
/// the [`Threads`] it runs on: the last argument of
/// [`pack`](Layout::pack), [`convert`](Layout::convert), their sub-byte
/// forms and `pack_array` (feature `ndarray`).
///
/// [`Options::default`] fills padding with `T::default()` (zero for numbers)
/// on the calling thread; [`Options::fill`] names another value, for types
/// without a default too.
///
/// # Examples
///
/// ```
/// use xla_layout::Options;
/// let l = xla_layout::parse("u8[3]{0:T(4)}").unwrap();
/// let mut storage = [0u8; 4];
/// l.pack(&[7, 8, 9], &mut storage, Options::fill(0xff)).unwrap();
/// assert_eq!(storage, [7, 8, 9, 0xff]);
/// l.pack(&[7, 8, 9], &mut storage, Options::default()).unwrap();
/// assert_eq!(storage, [7, 8, 9, 0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options<T> {
    fill: T,
    threads: Threads,
}

impl<T> Options<T> {
    /// `fill` in every padding slot, on the calling thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Options;
    /// let a = xla_layout::parse("s32[3]").unwrap();
    /// let b = xla_layout::parse("s32[3]{0:T(2)}").unwrap();
    /// let mut out = [0i32; 4];
    /// a.convert(&[1, 2, 3], &b, &mut out, Options::fill(-1)).unwrap();
    /// assert_eq!(out, [1, 2, 3, -1]);
    /// ```
    pub const fn fill(fill: T) -> Self {
        Options {
            fill,
            threads: Threads::One,
        }
    }

    /// These options on `threads`.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, Threads};
    /// let from = xla_layout::parse("f32[300,200]{0,1}").unwrap();
    /// let to = xla_layout::parse("f32[300,200]{1,0:T(8,128)}").unwrap();
    /// let src: Vec<f32> = (0..from.storage_len()).map(|x| x as f32).collect();
    /// let mut one = vec![0.0; to.storage_len()];
    /// from.convert(&src, &to, &mut one, Options::fill(-1.0)).unwrap();
    /// // Row 0's last column, then the 56 columns padding it to 256.
    /// let last = to.offset(&[0, 199]);
    /// assert_eq!(one[last], src[from.offset(&[0, 199])]);
    /// assert_eq!(one[last + 1..][..56], [-1.0; 56]);
    /// #[cfg(feature = "rayon")]
    /// {
    ///     let mut pool = vec![0.0; to.storage_len()];
    ///     from.convert(&src, &to, &mut pool, Options::fill(-1.0).threads(Threads::Pool)).unwrap();
    ///     assert_eq!(pool, one);
    /// }
    /// ```
    #[must_use]
    pub fn threads(self, threads: Threads) -> Self {
        Options { threads, ..self }
    }

    pub(super) fn parts(self) -> (T, Threads) {
        (self.fill, self.threads)
    }
}

impl<T: Default> Default for Options<T> {
    fn default() -> Self {
        Options::fill(T::default())
    }
}

impl Layout {
    /// Lays out a row-major array in this layout's storage, with the fill
    /// of `options` in the padding slots.
    ///
    /// `T` is any type as wide as one storage slot: `f32` or `u32` for `f32`,
    /// `u16` or `half::bf16` for `bf16`, `[u8; 16]` for `c128`, ... It is
    /// `Send + Sync` because the same call runs on threads when the options
    /// ask; the plans ([`pack_plan`](Self::pack_plan)) take any `Copy` type.
    ///
    /// # Errors
    ///
    /// [`RelayoutError`] if `T` is not as wide as a slot, the layout packs
    /// sub-byte elements (see [`pack_bits`](Self::pack_bits)), or a buffer
    /// length is not [`len`](Self::len) / [`storage_len`](Self::storage_len);
    /// nothing is written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Options;
    /// let l = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
    /// let mut storage = [f32::NAN; 8];
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, Options::default()).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, Options::fill(-1.0)).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, -1.0, 6.0, -1.0]);
    /// ```
    pub fn pack<T: Copy + Send + Sync>(
        &self,
        logical_row_major: &[T],
        storage: &mut [T],
        options: Options<T>,
    ) -> Result<(), RelayoutError> {
        let (fill, threads) = options.parts();
        self.pack_plan(fill)?
            .run_on(threads, logical_row_major, storage)
    }

    /// Reads this layout's storage back into a row-major array. Padding is
    /// never read.
    ///
    /// # Errors
    ///
    /// As [`pack`](Self::pack).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Threads;
    /// let l = xla_layout::parse("bf16[4,2]{1,0:T(2,2)(2,1)}").unwrap();
    /// let storage: Vec<u16> = (0..8).collect();
    /// let mut logical = [0u16; 8];
    /// l.unpack(&storage, &mut logical, Threads::One).unwrap();
    /// // Pairs of rows are interleaved: storage 0,1 are rows 0 and 1 of column 0.
    /// assert_eq!(logical, [0, 2, 1, 3, 4, 6, 5, 7]);
    /// ```
    pub fn unpack<T: Copy + Send + Sync>(
        &self,
        storage: &[T],
        logical_row_major: &mut [T],
        threads: Threads,
    ) -> Result<(), RelayoutError> {
        self.unpack_plan()?
            .run_on(threads, storage, logical_row_major)
    }

    /// Moves `storage`, laid out by this layout, into `to_storage`, laid out
    /// by `to` (a `&Layout` or a `layout!` value) of the same dims and
    /// element type, without a row-major copy in between; padding slots of
    /// `to` get the fill of `options`.
    ///
    /// # Errors
    ///
    /// [`RelayoutError`] if the ranks, dims or element types differ, `T` is
    /// not as wide as a slot, or a buffer length is not the layout's
    /// [`storage_len`](Self::storage_len); nothing is written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Options;
    /// let col_major = xla_layout::parse("f32[2,3]{0,1}").unwrap();
    /// // Column-major: a d b e c f.
    /// let from = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
    /// let mut to = [f32::NAN; 8];
    /// let tiled = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// col_major.convert(&from, tiled, &mut to, Options::default()).unwrap();
    /// assert_eq!(to, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    ///
    /// let tiled = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
    /// col_major.convert(&from, &tiled, &mut to, Options::default()).unwrap();
    /// assert_eq!(to, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// ```
    pub fn convert<T: Copy + Send + Sync, D: AnyLayout>(
        &self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
        options: Options<T>,
    ) -> Result<(), RelayoutError> {
        let (fill, threads) = options.parts();
        to.with_layout(|to| {
            self.convert_plan(to, fill)?
                .run_on(threads, storage, to_storage)
        })
    }

    /// Packs one value per element into sub-byte storage (`E(1)`, `E(2)`,
    /// `E(4)`, or `s4`/`u2`/... without `E`), in the bit order of the
    /// [module docs](crate::relayout); padding slots get the fill of
    /// `options` (an element's byte like the values), and the unused bits of
    /// the last byte 0. It runs on the calling thread.
    ///
    /// Each value is the element as a byte (see [`BitElement`]): an `s4`
    /// takes -8 to 7 (as `i8`, or its two's complement byte as `u8`), a
    /// `u4` 0 to 15, a `pred` 0 or 1. A value outside that range is refused
    /// rather than cut to its low bits; mask it first (`v & 0xf`) where
    /// cutting is what is meant.
    ///
    /// The sub-byte relayouts are methods of their own, not
    /// [`pack`](Self::pack) for more types: their storage is bytes whatever
    /// the values are (`i8`, `bool`), and `u8` values are whole slots of a
    /// `u8` layout as well as elements of a `u4` one.
    ///
    /// # Errors
    ///
    /// [`RelayoutError`] if the layout's elements take whole bytes or a width
    /// that does not divide 8, or a buffer length is not
    /// [`len`](Self::len) / [`storage_bytes`](Self::storage_bytes); if a
    /// value or the fill does not fit the element type in `n` bits
    /// ([`RelayoutError::ValueOutOfRange`], naming the first such value's
    /// position, or none for the fill), signed for a signed type (this
    /// holds as well when `E(n)` narrows a wider type: `s8[21]{0:E(4)}`,
    /// int4 held in `s8`); and if `E(n)` narrows a float type, which cannot
    /// be narrowed at all ([`RelayoutError::NarrowedFloat`]). Everything but
    /// the values is checked before anything is written. The values are
    /// checked as they are packed, each while it is in the cache (a pass
    /// of its own would read them all twice, which doubled the time of a
    /// pack larger than the cache): once the pack is done, a value that
    /// does not fit is refused and the storage left all zeros, no part of
    /// a result.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, RelayoutError};
    /// let l = xla_layout::parse("s4[2,3]{1,0:E(4)}").unwrap();
    /// let mut bytes = [0u8; 3];
    /// l.pack_bits(&[1i8, -2, 3, 4, 5, -8], &mut bytes, Options::default()).unwrap();
    /// assert_eq!(bytes, [0xe1, 0x43, 0x85]); // first element in the low nibble
    ///
    /// let err = l.pack_bits(&[1i8, -2, 9, 4, 5, -8], &mut bytes, Options::default()).unwrap_err();
    /// assert!(matches!(err, RelayoutError::ValueOutOfRange { position: Some(2), .. }));
    /// assert_eq!(bytes, [0; 3]); // cleared
    ///
    /// let l = xla_layout::parse("pred[3]{0:T(8)E(1)}").unwrap();
    /// let mut bytes = [0u8; 1];
    /// l.pack_bits(&[true, false, true], &mut bytes, Options::fill(1)).unwrap();
    /// assert_eq!(bytes, [0b1111_1101]);
    /// ```
    pub fn pack_bits<T: BitElement>(
        &self,
        logical_row_major: &[T],
        storage: &mut [u8],
        options: Options<u8>,
    ) -> Result<(), RelayoutError> {
        let (fill, _) = options.parts();
        let bits = self.check_bits()?;
        self.check_lengths(logical_row_major.len(), storage.len(), self.storage_bytes())?;
        self.check_fill(bits, fill)?;
        let (walked, other) = (Side::Layout(self), Side::RowMajor(self.dims()));
        let fit = Fit::new(self.element, bits.n);
        if self.is_empty() {
            storage.fill(0);
            return Ok(());
        }
        let stream = storage.len() >= super::arch::STREAM_BYTES;
        let mut v = PackBits {
            dst: storage,
            src: logical_row_major,
            bits,
            fill,
            stream,
            checks: Checks::new(fit),
            waiting: None,
        };
        Route::over(&walked, &other).run(&walked, &other, &mut v);
        v.settle();
        if stream {
            super::arch::stream_fence();
        }
        if v.checks.any_outside() {
            storage.fill(0);
            let first = fit.first_outside(logical_row_major);
            return Err(self.out_of_range(bits, first));
        }
        bits.clear_tail(storage, self.storage_len());
        Ok(())
    }

    /// Unpacks sub-byte storage into one value per element: `u8` reads the
    /// bits as unsigned, `i8` sign-extends them, `bool` is `true` when any
    /// is set. It runs on the calling thread, as [`pack_bits`](Self::pack_bits).
    ///
    /// # Errors
    ///
    /// As [`pack_bits`](Self::pack_bits).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Threads;
    /// let l = xla_layout::parse("s4[2,3]{1,0:E(4)}").unwrap();
    /// let mut logical = [0i8; 6];
    /// l.unpack_bits(&[0xe1, 0x43, 0x85], &mut logical, Threads::One).unwrap();
    /// assert_eq!(logical, [1, -2, 3, 4, 5, -8]);
    /// ```
    pub fn unpack_bits<T: BitElement>(
        &self,
        storage: &[u8],
        logical_row_major: &mut [T],
        threads: Threads,
    ) -> Result<(), RelayoutError> {
        // Sub-byte kernels are not split (see `Threads`).
        let _ = threads;
        let bits = self.check_bits()?;
        self.check_lengths(logical_row_major.len(), storage.len(), self.storage_bytes())?;
        if self.is_empty() {
            return Ok(());
        }
        let (walked, other) = (Side::Layout(self), Side::RowMajor(self.dims()));
        let far = core::mem::size_of_val(logical_row_major) >= super::arch::STREAM_BYTES;
        let mut v = UnpackBits {
            src: storage,
            dst: logical_row_major,
            bits,
            far,
            asked: Asked::default(),
            stage: UnpackBits::stage_for(far, bits),
        };
        Route::over(&walked, &other).run(&walked, &other, &mut v);
        v.finish();
        if far {
            super::arch::stream_fence();
        }
        Ok(())
    }

    /// [`convert`](Self::convert) for sub-byte storage, into a `&Layout` or
    /// a `layout!` value; padding slots of `to` get the fill of `options`
    /// (an element's byte, as in [`pack_bits`](Self::pack_bits)) and the
    /// unused bits of its last byte 0. Elements move as their `n` stored
    /// bits, unchanged, on the calling thread.
    ///
    /// # Errors
    ///
    /// As [`convert`](Self::convert) and [`pack_bits`](Self::pack_bits); a
    /// fill that does not fit is [`RelayoutError::ValueOutOfRange`] with no
    /// position.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Options;
    /// let a = xla_layout::parse("u4[2,2]{1,0}").unwrap();
    /// let b = xla_layout::parse("u4[2,2]{0,1}").unwrap();
    /// let mut out = [0u8; 2];
    /// a.convert_bits(&[0x21, 0x43], &b, &mut out, Options::default()).unwrap();
    /// assert_eq!(out, [0x31, 0x42]);
    ///
    /// let a = xla_layout::parse("u2[3]").unwrap();
    /// let mut out = [0u8; 1];
    /// a.convert_bits(&[0b10_01_11], xla_layout::layout!("u2[3]{0:T(4)}"), &mut out, Options::fill(0b11))
    ///     .unwrap();
    /// assert_eq!(out, [0b11_10_01_11]);
    /// ```
    pub fn convert_bits<D: AnyLayout>(
        &self,
        storage: &[u8],
        to: D,
        to_storage: &mut [u8],
        options: Options<u8>,
    ) -> Result<(), RelayoutError> {
        let (fill, _) = options.parts();
        to.with_layout(|to| self.convert_bits_into(storage, to, to_storage, fill))
    }

    fn convert_bits_into(
        &self,
        storage: &[u8],
        to: &Layout,
        to_storage: &mut [u8],
        fill: u8,
    ) -> Result<(), RelayoutError> {
        self.check_convert(to)?;
        let bits = self.check_bits()?;
        check_len(storage.len(), self.storage_bytes())?;
        check_len(to_storage.len(), to.storage_bytes())?;
        self.check_fill(bits, fill)?;
        if self.is_empty() {
            to_storage.fill(0);
            return Ok(());
        }
        let (from, into) = (Side::Layout(self), Side::Layout(to));
        match Direction::of(&from, &into) {
            Direction::WalkDestination => {
                let mut v = GatherBits {
                    dst: to_storage,
                    src: storage,
                    bits,
                    fill,
                };
                Route::over(&into, &from).run(&into, &from, &mut v);
            }
            Direction::WalkSource => {
                let mut v = ScatterBits {
                    src: storage,
                    dst: to_storage,
                    bits,
                };
                Route::over(&from, &into).run(&from, &into, &mut v);
            }
        }
        bits.clear_tail(to_storage, to.storage_len());
        Ok(())
    }

    /// Every storage slot in memory order: `Some(p)` for the element at
    /// row-major logical position `p`, `None` for padding (use
    /// [`index_of`](Self::index_of) for the multi-dim index).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,2]{1,0:T(2,2)(2,1)}").unwrap();
    /// let slots: Vec<_> = l.slots().map(Option::unwrap).collect();
    /// assert_eq!(slots, [0, 2, 1, 3, 4, 6, 5, 7]);
    /// ```
    pub fn slots(&self) -> Slots {
        Slots::new(self)
    }

    /// Every storage slot in memory order: `Some(index)` for the element
    /// stored there, `None` for padding. The same walk as
    /// [`slots`](Self::slots), with each position turned into its index.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let mut slots = l.slot_indices();
    /// assert_eq!(slots.nth(2).flatten().as_deref(), Some(&[1, 0][..]));
    /// assert_eq!(l.slot_indices().nth(9), Some(None)); // padding
    /// assert_eq!(l.slot_indices().count(), 24);
    /// ```
    pub fn slot_indices(&self) -> impl ExactSizeIterator<Item = Option<crate::Index>> + '_ {
        self.slots()
            .map(move |p| p.map(|p| crate::Index::unravel(p, self.dims())))
    }

    /// The storage offset of every element, in row-major logical order.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[2,3]{0,1}").unwrap();
    /// assert!(l.offsets().eq([0, 2, 4, 1, 3, 5]));
    /// ```
    pub fn offsets(&self) -> Offsets {
        Offsets::new(self)
    }

    pub(super) fn check_slots<T>(&self) -> Result<(), RelayoutError> {
        let bits = self.element_bits();
        if bits < 8 {
            return Err(RelayoutError::PackedLayout { bits });
        }
        let type_bits = core::mem::size_of::<T>() * 8;
        if type_bits != bits as usize {
            return Err(RelayoutError::ElementSize {
                layout_bits: bits,
                type_bits,
            });
        }
        Ok(())
    }

    fn check_bits(&self) -> Result<Bits, RelayoutError> {
        let bits = self.element_bits();
        if bits % 8 == 0 {
            return Err(RelayoutError::NotPacked { bits });
        }
        let packed = Bits::new(bits).ok_or(RelayoutError::UnsupportedBits { bits })?;
        if self.is_narrowed() && self.element.integer_signedness().is_none() {
            return Err(RelayoutError::NarrowedFloat {
                element: self.element,
                bits,
            });
        }
        Ok(packed)
    }

    /// `E(n)` narrower than the element type's values, as in `s8[21]{0:E(4)}`
    /// (`pred[8]{0:E(1)}` is not: a `pred` is one bit).
    fn is_narrowed(&self) -> bool {
        self.element_bits() < self.element.min_bits()
    }

    /// The fill must be an element's byte, as the values.
    fn check_fill(&self, bits: Bits, fill: u8) -> Result<(), RelayoutError> {
        if Fit::new(self.element, bits.n).holds(fill) {
            Ok(())
        } else {
            Err(self.out_of_range(bits, None))
        }
    }

    fn out_of_range(&self, bits: Bits, position: Option<usize>) -> RelayoutError {
        RelayoutError::ValueOutOfRange {
            position,
            element: self.element,
            bits: bits.n,
        }
    }

    fn check_lengths(
        &self,
        logical: usize,
        storage: usize,
        expected: usize,
    ) -> Result<(), RelayoutError> {
        if logical != self.len() {
            return Err(RelayoutError::LogicalLength {
                expected: self.len(),
                actual: logical,
            });
        }
        check_len(storage, expected)
    }

    pub(super) fn check_convert(&self, to: &Layout) -> Result<(), RelayoutError> {
        if self.rank() != to.rank() {
            return Err(RelayoutError::RankMismatch {
                from: self.rank(),
                to: to.rank(),
            });
        }
        if let Some((dim, (&from, &to))) = self
            .dims()
            .iter()
            .zip(to.dims())
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(RelayoutError::DimMismatch { dim, from, to });
        }
        if self.element_type() != to.element_type() {
            return Err(RelayoutError::ElementMismatch {
                from: self.element_type(),
                to: to.element_type(),
            });
        }
        if self.element_bits() != to.element_bits() {
            return Err(RelayoutError::BitsMismatch {
                from: self.element_bits(),
                to: to.element_bits(),
            });
        }
        Ok(())
    }
}

pub(super) fn check_len(actual: usize, expected: usize) -> Result<(), RelayoutError> {
    if actual == expected {
        Ok(())
    } else {
        Err(RelayoutError::StorageLength { expected, actual })
    }
}

/// Which storage a conversion walks in memory order.
pub(super) enum Direction {
    /// Write the destination in order, gathering from the source; every
    /// destination slot, padding included, is visited.
    WalkDestination,
    /// Read the source in order, scattering into the destination: only when
    /// the destination has no padding and the source is not a plain
    /// strided array (which the destination walk reads just as well).
    WalkSource,
}

impl Direction {
    pub(super) fn of(from: &Side, into: &Side) -> Direction {
        let source_affine = from.digits().is_some_and(|d| d.affine_strides().is_some());
        let dest_dense = into.digits().is_some_and(|d| d.dense());
        if !source_affine && dest_dense {
            Direction::WalkSource
        } else {
            Direction::WalkDestination
        }
    }
}
