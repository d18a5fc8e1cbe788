//! The trait every `layout!` value implements, for code generic over layouts.

use core::fmt::{Debug, Display};
use core::hash::Hash;

use crate::spec::element::bytes_of;
use crate::{
    AnyLayout, BitElement, ElementType, Layout, Offsets, Options, PadValue, PaddingValue,
    RelayoutError, Slots, Threads, TileDim, MAX_RANK,
};

/// A layout fixed at compile time by `layout!`: its description as
/// associated constants and its folded index code as methods.
///
/// Each `layout!` also has inherent `const fn` versions of these methods
/// (usable in `const` items); the trait is for generic code. Constants that
/// follow from others (`RANK`, `LEN`, ...) and those whose value is the
/// spec's default (`MINOR_TO_MAJOR` for row-major, no `TILES`, ...) have
/// default values, which `layout!` leaves in place: fewer items per
/// invocation compile faster.
///
/// # Examples
///
/// ```
/// use xla_layout::StaticLayout;
///
/// fn first_padding<L: StaticLayout>(l: L) -> Option<usize> {
///     (0..L::STORAGE_LEN).find(|&o| l.index_of(o).is_none())
/// }
///
/// assert_eq!(first_padding(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}")), Some(9));
/// ```
pub trait StaticLayout:
    Copy + Default + Debug + Display + Eq + Hash + Send + Sync + 'static
{
    /// The canonical spec string (what `Display` prints).
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// // Written with `<...>` and spaces, printed as XLA prints it.
    /// xla_layout::layout!(struct Tiled = "f32[3, 5]<1, 0 : T(2, 2)>");
    /// assert_eq!(<Tiled as StaticLayout>::SPEC, "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(Tiled.to_string(), Tiled::SPEC);
    /// ```
    const SPEC: &'static str;
    /// The element type.
    ///
    /// ```
    /// use xla_layout::{ElementType, StaticLayout};
    /// xla_layout::layout!(struct Weights = "bf16[8,128]{1,0:T(8,128)(2,1)}");
    /// assert_eq!(<Weights as StaticLayout>::ELEMENT_TYPE, ElementType::Bf16);
    /// ```
    const ELEMENT_TYPE: ElementType;
    /// Bits per element in storage (`E(n)` or the type's width).
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Wide = "s4[8]");
    /// xla_layout::layout!(struct Packed = "s4[8]{0:E(4)}");
    /// xla_layout::layout!(struct Held = "s4[8]{0:E(8)}");
    /// assert_eq!(<Wide as StaticLayout>::ELEMENT_BITS, 4);
    /// assert_eq!(<Packed as StaticLayout>::ELEMENT_BITS, 4);
    /// assert_eq!(<Held as StaticLayout>::ELEMENT_BITS, 8);
    /// ```
    const ELEMENT_BITS: u32 = Self::ELEMENT_TYPE.bits();
    /// The number of dims.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Batch = "f32[4,1,3]");
    /// xla_layout::layout!(struct Scalar = "f32[]");
    /// assert_eq!(<Batch as StaticLayout>::RANK, 3);
    /// assert_eq!(<Scalar as StaticLayout>::RANK, 0);
    /// ```
    const RANK: usize = Self::DIMS.len();
    /// The number of dims greater than 1.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Batch = "f32[4,1,3]");
    /// assert_eq!(<Batch as StaticLayout>::TRUE_RANK, 2);
    /// ```
    const TRUE_RANK: usize = true_rank(Self::DIMS);
    /// The logical dims.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Image = "u8[480,640,3]{2,1,0}");
    /// assert_eq!(<Image as StaticLayout>::DIMS, &[480, 640, 3]);
    /// ```
    const DIMS: &'static [usize];
    /// Dims from fastest- to slowest-varying; row-major when not given.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct RowMajor = "f32[2,3,4]");
    /// xla_layout::layout!(struct ColumnMajor = "f32[2,3,4]{0,1,2}");
    /// assert_eq!(<RowMajor as StaticLayout>::MINOR_TO_MAJOR, &[2, 1, 0]);
    /// assert_eq!(<ColumnMajor as StaticLayout>::MINOR_TO_MAJOR, &[0, 1, 2]);
    /// ```
    const MINOR_TO_MAJOR: &'static [usize] = row_major(Self::DIMS.len());
    /// The tiling levels; none when not given.
    ///
    /// ```
    /// use xla_layout::{StaticLayout, TileDim};
    /// xla_layout::layout!(struct Tpu = "bf16[8,256]{1,0:T(8,128)(2,1)}");
    /// xla_layout::layout!(struct Combined = "f32[2,3,4]{2,1,0:T(*,2)}");
    /// assert_eq!(
    ///     <Tpu as StaticLayout>::TILES,
    ///     &[&[TileDim::Size(8), TileDim::Size(128)][..], &[TileDim::Size(2), TileDim::Size(1)][..]]
    /// );
    /// assert_eq!(<Combined as StaticLayout>::TILES, &[&[TileDim::Combine, TileDim::Size(2)][..]]);
    /// ```
    const TILES: &'static [&'static [TileDim]] = &[];
    /// `L(n)`, 1 when not written.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// // Storage rounded up to a multiple of 8 slots.
    /// xla_layout::layout!(struct Aligned = "f32[5]{0:L(8)}");
    /// assert_eq!(<Aligned as StaticLayout>::TAIL_ALIGNMENT, 8);
    /// assert_eq!(<Aligned as StaticLayout>::STORAGE_LEN, 8);
    /// ```
    const TAIL_ALIGNMENT: usize = 1;
    /// `S(n)`, 0 when not written.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct OnChip = "f32[128]{0:S(1)}");
    /// assert_eq!(<OnChip as StaticLayout>::MEMORY_SPACE, 1);
    /// ```
    const MEMORY_SPACE: u64 = 0;
    /// Logical elements: the product of the dims.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(<Figure1 as StaticLayout>::LEN, 15);
    /// ```
    const LEN: usize = product(Self::DIMS);
    /// Storage slots, padding included.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(<Figure1 as StaticLayout>::STORAGE_LEN, 24);
    /// ```
    const STORAGE_LEN: usize;
    /// An array of exactly the storage slots, `[T; STORAGE_LEN]`: the
    /// storage of [`Tensor::from_buffer`](crate::tensor::Tensor::from_buffer).
    /// A type with the number written out, so an array of another length
    /// is a type error at the code that passes it, naming both lengths.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// let storage: <Figure1 as StaticLayout>::Buffer<f32> = [0.0; 24];
    /// assert_eq!(storage.len(), <Figure1 as StaticLayout>::STORAGE_LEN);
    /// ```
    type Buffer<T>;
    /// Storage bytes: `STORAGE_LEN` elements of `ELEMENT_BITS` bits, rounded
    /// up to whole bytes.
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Nibbles = "s4[3,5]{1,0:T(2,2)E(4)}");
    /// assert_eq!(<Nibbles as StaticLayout>::STORAGE_BYTES, 12);
    /// assert_eq!(Nibbles::STORAGE_BYTES, 12);
    /// ```
    // Only a byte count the parser refuses would not fit `usize`.
    #[allow(clippy::cast_possible_truncation)]
    const STORAGE_BYTES: usize = bytes_of(Self::STORAGE_LEN, Self::ELEMENT_BITS) as usize;
    /// Storage slots that hold no element (see [`Layout::padding_len`]).
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(<Figure1 as StaticLayout>::PADDING_LEN, 9);
    /// ```
    const PADDING_LEN: usize = Self::STORAGE_LEN - Self::LEN;
    /// What padding slots hold: `layout!`'s `padding_value` option, XLA's
    /// old `padding_value` (SPEC.md §7); zero when not given.
    ///
    /// ```
    /// use xla_layout::{PaddingValue, StaticLayout};
    /// xla_layout::layout!(
    ///     struct MaxPool = "f32[2,3]{0,1}",
    ///     padded_dimensions = [3, 5],
    ///     padding_value = lowest
    /// );
    /// assert_eq!(<MaxPool as StaticLayout>::PADDING_VALUE, PaddingValue::Lowest);
    /// ```
    const PADDING_VALUE: PaddingValue = PaddingValue::Zero;

    /// A logical index: `[usize; RANK]`.
    type Index: Copy
        + Debug
        + Default
        + Eq
        + Hash
        + AsRef<[usize]>
        + AsMut<[usize]>
        + Send
        + Sync
        + 'static;

    /// The storage offset of `index`; outside the dims a panic in debug
    /// builds, unchecked in release builds (see [`Layout::offset`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// fn offsets<L: StaticLayout<Index = [usize; 2]>>(l: L, rows: usize) -> Vec<usize> {
    ///     (0..rows).map(|r| l.offset([r, 0])).collect()
    /// }
    /// assert_eq!(offsets(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}"), 3), [0, 2, 12]);
    /// ```
    fn offset(self, index: Self::Index) -> usize;

    /// The storage offset of `index`, or `None` outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(StaticLayout::try_offset(l, [2, 3]), Some(17));
    /// assert_eq!(StaticLayout::try_offset(l, [3, 0]), None);
    /// ```
    fn try_offset(self, index: Self::Index) -> Option<usize> {
        let inside = index.as_ref().iter().zip(Self::DIMS).all(|(i, d)| i < d);
        if inside {
            Some(self.offset(index))
        } else {
            None
        }
    }

    /// The logical index at `offset`, or `None` for padding or past storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(StaticLayout::index_of(l, 17), Some([2, 3]));
    /// assert_eq!(StaticLayout::index_of(l, 9), None); // padding
    /// assert_eq!(StaticLayout::index_of(l, 24), None); // past storage
    /// ```
    fn index_of(self, offset: usize) -> Option<Self::Index>;

    /// One dim's size; negative numbers count from the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// xla_layout::layout!(struct Image = "u8[480,640,3]");
    /// assert_eq!(<Image as StaticLayout>::dim(0), Some(480));
    /// assert_eq!(<Image as StaticLayout>::dim(-1), Some(3));
    /// assert_eq!(<Image as StaticLayout>::dim(3), None);
    /// ```
    fn dim(dim: isize) -> Option<usize> {
        crate::resolve_dim(Self::RANK, dim).and_then(|d| Self::DIMS.get(d).copied())
    }

    /// The folded layout as a `static`, for the run-time machinery
    /// without parsing: `Some` for every `layout!` value, whose macro
    /// folds the spec at compile time and prints the result.
    ///
    /// The provided method returns `None`; the bulk methods of this trait
    /// then parse [`SPEC`](Self::SPEC) on each call.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// let tables: &'static xla_layout::Layout = l.tables().unwrap();
    /// assert_eq!(tables.offset(&[2, 3]), l.offset([2, 3]));
    /// assert_eq!(*tables, xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap());
    /// ```
    fn tables(self) -> Option<&'static Layout> {
        None
    }

    /// The same layout as a run-time [`Layout`]: a copy of
    /// [`tables`](Self::tables), or `SPEC` parsed when there are none.
    ///
    /// # Panics
    ///
    /// Not for a `layout!` value: it has tables, and its macro accepted its
    /// spec with the very parser used here. A hand-written impl without
    /// tables whose `SPEC` does not parse panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// let r: xla_layout::Layout = StaticLayout::runtime(l);
    /// assert_eq!(r.to_string(), "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(r.offset(&[2, 3]), l.offset([2, 3]));
    /// ```
    fn runtime(self) -> Layout {
        match self.tables() {
            Some(l) => l.clone(),
            None => {
                crate::parse(Self::SPEC).expect("layout! validated this spec with the same parser")
            }
        }
    }

    /// [`PADDING_VALUE`](Self::PADDING_VALUE) as a `T`, for the fill of
    /// [`pack`](Self::pack) and [`convert`](Self::convert).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let l = xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5], padding_value = lowest);
    /// let mut storage = [0.0f32; 15];
    /// let options = Options::fill(l.padding_value());
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, options).unwrap();
    /// assert_eq!(&storage[..3], &[1.0, 4.0, f32::NEG_INFINITY]);
    /// ```
    fn padding_value<T: PadValue>(self) -> T {
        T::pad(Self::PADDING_VALUE)
    }

    /// [`Layout::pack`] for this layout: a row-major array into storage,
    /// with the fill of `options` in the padding slots.
    ///
    /// # Errors
    ///
    /// As [`Layout::pack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let mut storage = [f32::NAN; 8];
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, Options::default()).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, Options::fill(-1.0)).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, -1.0, 6.0, -1.0]);
    /// ```
    fn pack<T: Copy + Send + Sync>(
        self,
        logical_row_major: &[T],
        storage: &mut [T],
        options: Options<T>,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.pack(logical_row_major, storage, options))
    }

    /// [`Layout::unpack`] for this layout: storage back into a row-major array.
    ///
    /// # Errors
    ///
    /// As [`Layout::pack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{StaticLayout, Threads};
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let mut logical = [0.0f32; 6];
    /// l.unpack(&[1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0], &mut logical, Threads::One).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// ```
    fn unpack<T: Copy + Send + Sync>(
        self,
        storage: &[T],
        logical_row_major: &mut [T],
        threads: Threads,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.unpack(storage, logical_row_major, threads))
    }

    /// [`Layout::convert`] from this layout to `to`: another `layout!`
    /// value or a `&Layout`.
    ///
    /// # Errors
    ///
    /// As [`Layout::convert`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let storage = [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0];
    /// let mut logical = [0.0f32; 6];
    /// l.convert(&storage, xla_layout::layout!("f32[2,3]"), &mut logical, Options::default()).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    ///
    /// let row_major = xla_layout::parse("f32[2,3]").unwrap();
    /// l.convert(&storage, &row_major, &mut logical, Options::default()).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    ///
    /// let mut tiled = [0i32; 4];
    /// let from = xla_layout::layout!("s32[3]");
    /// from.convert(&[1, 2, 3], xla_layout::layout!("s32[3]{0:T(2)}"), &mut tiled, Options::fill(-1))
    ///     .unwrap();
    /// assert_eq!(tiled, [1, 2, 3, -1]);
    /// ```
    fn convert<T: Copy + Send + Sync, D: AnyLayout>(
        self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
        options: Options<T>,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.convert(storage, to, to_storage, options))
    }

    /// [`Layout::pack_array`] for this layout (feature `ndarray`).
    ///
    /// # Errors
    ///
    /// As [`Layout::pack_array`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let a = xla_layout::relayout::ndarray::arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let mut storage = [f32::NAN; 8];
    /// l.pack_array(&a, &mut storage, Options::default()).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    fn pack_array<S, D>(
        self,
        array: &ndarray::ArrayBase<S, D>,
        storage: &mut [S::Elem],
        options: Options<S::Elem>,
    ) -> Result<(), RelayoutError>
    where
        S: ndarray::Data,
        S::Elem: Copy + Send + Sync,
        D: ndarray::Dimension,
    {
        with_layout(self, |l| l.pack_array(array, storage, options))
    }

    /// [`Layout::unpack_array`] for this layout (feature `ndarray`).
    ///
    /// # Errors
    ///
    /// As [`Layout::unpack_array`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{StaticLayout, Threads};
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let a = l.unpack_array(&[1.0f32, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0], Threads::One).unwrap();
    /// assert_eq!(a, xla_layout::relayout::ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn());
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    fn unpack_array<T: Copy + Send + Sync>(
        self,
        storage: &[T],
        threads: Threads,
    ) -> Result<ndarray::ArrayD<T>, RelayoutError> {
        with_layout(self, |l| l.unpack_array(storage, threads))
    }

    /// [`Layout::pack_bits`] for this layout (sub-byte elements).
    ///
    /// # Errors
    ///
    /// As [`Layout::pack_bits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let l = xla_layout::layout!("s4[2,3]{1,0:T(2,2)}");
    /// let mut storage = [0u8; 4];
    /// l.pack_bits(&[1i8, 2, 3, -1, -2, -3], &mut storage, Options::default()).unwrap();
    /// assert_eq!(storage, [0x21, 0xef, 0x03, 0x0d]);
    /// l.pack_bits(&[1i8, 2, 3, -1, -2, -3], &mut storage, Options::fill(0xff)).unwrap();
    /// assert_eq!(storage, [0x21, 0xef, 0xf3, 0xfd]);
    /// ```
    fn pack_bits<T: BitElement>(
        self,
        logical_row_major: &[T],
        storage: &mut [u8],
        options: Options<u8>,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.pack_bits(logical_row_major, storage, options))
    }

    /// [`Layout::unpack_bits`] for this layout (sub-byte elements).
    ///
    /// # Errors
    ///
    /// As [`Layout::pack_bits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{StaticLayout, Threads};
    /// let l = xla_layout::layout!("s4[2,3]{1,0:T(2,2)}");
    /// let mut logical = [0i8; 6];
    /// l.unpack_bits(&[0x21, 0xef, 0x03, 0x0d], &mut logical, Threads::One).unwrap();
    /// assert_eq!(logical, [1, 2, 3, -1, -2, -3]);
    /// ```
    fn unpack_bits<T: BitElement>(
        self,
        storage: &[u8],
        logical_row_major: &mut [T],
        threads: Threads,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.unpack_bits(storage, logical_row_major, threads))
    }

    /// [`Layout::convert_bits`] from this layout to `to`: another `layout!`
    /// value or a `&Layout` (sub-byte elements).
    ///
    /// # Errors
    ///
    /// As [`Layout::convert_bits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Options, StaticLayout};
    /// let a = xla_layout::layout!("u4[2,2]{1,0}");
    /// let mut out = [0u8; 2];
    /// a.convert_bits(&[0x21, 0x43], xla_layout::layout!("u4[2,2]{0,1}"), &mut out, Options::default())
    ///     .unwrap();
    /// assert_eq!(out, [0x31, 0x42]);
    /// ```
    fn convert_bits<D: AnyLayout>(
        self,
        storage: &[u8],
        to: D,
        to_storage: &mut [u8],
        options: Options<u8>,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.convert_bits(storage, to, to_storage, options))
    }

    /// [`Layout::slots`]: storage slots in memory order, as row-major logical
    /// positions or `None` for padding.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let slots: Vec<Option<usize>> = l.slots().collect();
    /// assert_eq!(slots, [Some(0), Some(1), Some(3), Some(4), Some(2), None, Some(5), None]);
    /// ```
    fn slots(self) -> Slots {
        with_layout(self, Layout::slots)
    }

    /// [`Layout::slot_indices`]: storage slots in memory order, as the index
    /// of the element stored there or `None` for padding.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.slot_indices().nth(2), Some(Some([1, 0])));
    /// assert_eq!(l.slot_indices().nth(9), Some(None)); // padding
    /// assert_eq!(l.slot_indices().len(), 24);
    /// ```
    fn slot_indices(self) -> impl ExactSizeIterator<Item = Option<Self::Index>> {
        self.slots().map(|p| {
            p.map(|mut p| {
                // Row-major: the last dim varies fastest. A position exists
                // only when no dim is 0.
                let mut index = Self::Index::default();
                for (i, &d) in index.as_mut().iter_mut().zip(Self::DIMS).rev() {
                    *i = p % d;
                    p /= d;
                }
                index
            })
        })
    }

    /// [`Layout::offsets`]: the storage offset of every element, in row-major order.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// assert!(l.offsets().eq([0, 1, 4, 2, 3, 6]));
    /// ```
    fn offsets(self) -> Offsets {
        with_layout(self, Layout::offsets)
    }
}

// Every `layout!` value is a layout tensors and relayouts take.
impl<L: StaticLayout> AnyLayout for L {
    type Index = L::Index;

    fn with_layout<R>(self, f: impl FnOnce(&Layout) -> R) -> R {
        with_layout(self, f)
    }

    fn shape(&self) -> &[usize] {
        L::DIMS
    }

    fn element_count(&self) -> usize {
        L::LEN
    }

    fn slot_count(&self) -> usize {
        L::STORAGE_LEN
    }

    fn slot_bits(&self) -> u32 {
        L::ELEMENT_BITS
    }

    #[inline]
    fn locate(self, index: &[usize]) -> Option<usize> {
        if index.len() != L::RANK {
            return None;
        }
        let mut i = L::Index::default();
        i.as_mut().copy_from_slice(index);
        self.try_offset(i)
    }

    #[inline]
    fn index_at(self, offset: usize) -> Option<L::Index> {
        self.index_of(offset)
    }

    #[inline]
    fn index_from(&self, values: &[usize]) -> L::Index {
        let mut i = L::Index::default();
        i.as_mut().copy_from_slice(values);
        i
    }
}

/// Runs `f` on the layout's tables, or on `SPEC` parsed when it has none.
pub(crate) fn with_layout<L: StaticLayout, R>(l: L, f: impl FnOnce(&Layout) -> R) -> R {
    match l.tables() {
        Some(tables) => f(tables),
        None => f(&l.runtime()),
    }
}

/// The product of `dims`, for the default of [`StaticLayout::LEN`]:
/// saturating, so dims whose product overflows before a later 0 (an empty
/// layout the parser accepts) give 0, not an overflow in `const` evaluation.
pub(crate) const fn product(dims: &[usize]) -> usize {
    let (mut p, mut i) = (1usize, 0);
    while i < dims.len() {
        p = p.saturating_mul(dims[i]);
        i += 1;
    }
    p
}

/// How many of `dims` are greater than 1, for [`StaticLayout::TRUE_RANK`].
pub(crate) const fn true_rank(dims: &[usize]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < dims.len() {
        n += (dims[i] > 1) as usize;
        i += 1;
    }
    n
}

/// Row-major `minor_to_major` of `rank` dims, `[rank - 1, ..., 0]`, for
/// [`StaticLayout::MINOR_TO_MAJOR`].
pub(crate) const fn row_major(rank: usize) -> &'static [usize] {
    const DESCENDING: [usize; MAX_RANK] = {
        let mut a = [0; MAX_RANK];
        let mut i = 0;
        while i < MAX_RANK {
            a[i] = MAX_RANK - 1 - i;
            i += 1;
        }
        a
    };
    DESCENDING.split_at(MAX_RANK - rank).1
}

#[cfg(test)]
mod tests {
    use super::{product, row_major, true_rank};

    #[test]
    fn defaults_follow_the_dims() {
        assert_eq!(product(&[]), 1);
        assert_eq!(product(&[3, 0, 5]), 0);
        assert_eq!(product(&[3, 5, 7]), 105);
        assert_eq!(true_rank(&[1, 5, 1, 2]), 2);
        assert_eq!(row_major(0), &[] as &[usize]);
        assert_eq!(row_major(3), &[2, 1, 0]);
        assert_eq!(
            row_major(16),
            &[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
        );
    }
}
