//! The trait every `layout!` value implements, for code generic over layouts.

use core::fmt::{Debug, Display};
use core::hash::Hash;

use crate::{
    BitElement, ElementType, Layout, Offsets, PadValue, PaddingValue, RelayoutError, Slots,
    TileDim, MAX_RANK,
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
    /// storage of [`Tensor::from_buffer`](crate::Tensor::from_buffer).
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

    /// [`PADDING_VALUE`](Self::PADDING_VALUE) as a `T`, for
    /// [`pack_with_fill`](Self::pack_with_fill).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5], padding_value = lowest);
    /// let mut storage = [0.0f32; 15];
    /// l.pack_with_fill(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, l.padding_value()).unwrap();
    /// assert_eq!(&storage[..3], &[1.0, 4.0, f32::NEG_INFINITY]);
    /// ```
    fn padding_value<T: PadValue>(self) -> T {
        T::pad(Self::PADDING_VALUE)
    }

    /// [`Layout::pack`] for this layout: a row-major array into storage,
    /// padding slots set to `T::default()`.
    ///
    /// # Errors
    ///
    /// As [`Layout::pack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let mut storage = [f32::NAN; 8];
    /// l.pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// ```
    fn pack<T: Copy + Default>(
        self,
        logical_row_major: &[T],
        storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.pack(logical_row_major, storage))
    }

    /// [`Layout::pack_with_fill`] for this layout.
    ///
    /// # Errors
    ///
    /// As [`Layout::pack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let mut storage = [0.0f32; 8];
    /// l.pack_with_fill(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut storage, -1.0).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, -1.0, 6.0, -1.0]);
    /// ```
    fn pack_with_fill<T: Copy>(
        self,
        logical_row_major: &[T],
        storage: &mut [T],
        fill: T,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.pack_with_fill(logical_row_major, storage, fill))
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
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let mut logical = [0.0f32; 6];
    /// l.unpack(&[1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0], &mut logical).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// ```
    fn unpack<T: Copy>(
        self,
        storage: &[T],
        logical_row_major: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.unpack(storage, logical_row_major))
    }

    /// [`Layout::convert_to`] from this layout to `to`: another `layout!`
    /// value or a `&Layout`.
    ///
    /// # Errors
    ///
    /// As [`Layout::convert_to`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let storage = [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0];
    /// let mut logical = [0.0f32; 6];
    /// l.convert_to(&storage, xla_layout::layout!("f32[2,3]"), &mut logical).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    ///
    /// let row_major = xla_layout::parse("f32[2,3]").unwrap();
    /// l.convert_to(&storage, &row_major, &mut logical).unwrap();
    /// assert_eq!(logical, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// ```
    fn convert_to<T: Copy + Default, D: crate::AnyLayout>(
        self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.convert_to(storage, to, to_storage))
    }

    /// [`Layout::convert_to_with_fill`] from this layout to `to`.
    ///
    /// # Errors
    ///
    /// As [`Layout::convert_to`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("s32[3]");
    /// let mut out = [0i32; 4];
    /// l.convert_to_with_fill(&[1, 2, 3], xla_layout::layout!("s32[3]{0:T(2)}"), &mut out, -1)
    ///     .unwrap();
    /// assert_eq!(out, [1, 2, 3, -1]);
    /// ```
    fn convert_to_with_fill<T: Copy, D: crate::AnyLayout>(
        self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
        fill: T,
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| {
            l.convert_to_with_fill(storage, to, to_storage, fill)
        })
    }

    /// [`Layout::par_pack`] for this layout: [`pack`](Self::pack) on
    /// rayon's thread pool (feature `rayon`).
    ///
    /// # Errors
    ///
    /// As [`Layout::pack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[256,256]{1,0:T(8,128)}");
    /// let logical: Vec<f32> = (0..l.len()).map(|x| x as f32).collect();
    /// let (mut a, mut b) = (vec![0.0; l.storage_len()], vec![0.0; l.storage_len()]);
    /// l.par_pack(&logical, &mut a).unwrap();
    /// l.pack(&logical, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg(feature = "rayon")]
    fn par_pack<T: Copy + Default + Send + Sync>(
        self,
        logical_row_major: &[T],
        storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.par_pack(logical_row_major, storage))
    }

    /// [`Layout::par_unpack`] for this layout: [`unpack`](Self::unpack) on
    /// rayon's thread pool (feature `rayon`).
    ///
    /// # Errors
    ///
    /// As [`Layout::unpack`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("bf16[64,256]{1,0:T(8,128)(2,1)}");
    /// let storage: Vec<u16> = (0..l.storage_len() as u16).collect();
    /// let (mut a, mut b) = (vec![0u16; l.len()], vec![0u16; l.len()]);
    /// l.par_unpack(&storage, &mut a).unwrap();
    /// l.unpack(&storage, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg(feature = "rayon")]
    fn par_unpack<T: Copy + Send + Sync>(
        self,
        storage: &[T],
        logical_row_major: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.par_unpack(storage, logical_row_major))
    }

    /// [`Layout::par_convert`] from this layout to `to` (another `layout!`
    /// value or a `&Layout`): [`convert_to`](Self::convert_to) on rayon's
    /// thread pool (feature `rayon`).
    ///
    /// # Errors
    ///
    /// As [`Layout::convert_to`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::StaticLayout;
    /// let from = xla_layout::layout!("f32[300,200]{0,1}");
    /// let to = xla_layout::layout!("f32[300,200]{1,0:T(8,128)}");
    /// let src: Vec<f32> = (0..from.storage_len()).map(|x| x as f32).collect();
    /// let (mut a, mut b) = (vec![0.0; to.storage_len()], vec![0.0; to.storage_len()]);
    /// from.par_convert(&src, to, &mut a).unwrap();
    /// from.convert_to(&src, to, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg(feature = "rayon")]
    fn par_convert<T: Copy + Default + Send + Sync, D: crate::AnyLayout>(
        self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.par_convert(storage, to, to_storage))
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
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let a = xla_layout::relayout::ndarray::arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let mut storage = [f32::NAN; 8];
    /// l.pack_array(&a, &mut storage).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    fn pack_array<S, D>(
        self,
        array: &ndarray::ArrayBase<S, D>,
        storage: &mut [S::Elem],
    ) -> Result<(), RelayoutError>
    where
        S: ndarray::Data,
        S::Elem: Copy + Default,
        D: ndarray::Dimension,
    {
        with_layout(self, |l| l.pack_array(array, storage))
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
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("f32[2,3]{1,0:T(2,2)}");
    /// let a = l.unpack_array(&[1.0f32, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]).unwrap();
    /// assert_eq!(a, xla_layout::relayout::ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn());
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    fn unpack_array<T: Copy>(self, storage: &[T]) -> Result<ndarray::ArrayD<T>, RelayoutError> {
        with_layout(self, |l| l.unpack_array(storage))
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
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("s4[2,3]{1,0:T(2,2)}");
    /// let mut storage = [0u8; 4];
    /// l.pack_bits(&[1i8, 2, 3, -1, -2, -3], &mut storage).unwrap();
    /// assert_eq!(storage, [0x21, 0xef, 0x03, 0x0d]);
    /// ```
    fn pack_bits<T: BitElement>(
        self,
        logical_row_major: &[T],
        storage: &mut [u8],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.pack_bits(logical_row_major, storage))
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
    /// use xla_layout::StaticLayout;
    /// let l = xla_layout::layout!("s4[2,3]{1,0:T(2,2)}");
    /// let mut logical = [0i8; 6];
    /// l.unpack_bits(&[0x21, 0xef, 0x03, 0x0d], &mut logical).unwrap();
    /// assert_eq!(logical, [1, 2, 3, -1, -2, -3]);
    /// ```
    fn unpack_bits<T: BitElement>(
        self,
        storage: &[u8],
        logical_row_major: &mut [T],
    ) -> Result<(), RelayoutError> {
        with_layout(self, |l| l.unpack_bits(storage, logical_row_major))
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

/// Runs `f` on the layout's tables, or on `SPEC` parsed when it has none.
pub(crate) fn with_layout<L: StaticLayout, R>(l: L, f: impl FnOnce(&Layout) -> R) -> R {
    match l.tables() {
        Some(tables) => f(tables),
        None => f(&l.runtime()),
    }
}

/// The bytes `slots` elements of `bits` bits take, rounded up to whole
/// bytes; widened, so no product overflows first. The parser's check of
/// storage bytes, the constants of `layout!` values and the summary all
/// count this way.
#[allow(clippy::cast_lossless)]
pub(crate) const fn bytes_of(slots: usize, bits: u32) -> u128 {
    (slots as u128 * bits as u128).div_ceil(8)
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
