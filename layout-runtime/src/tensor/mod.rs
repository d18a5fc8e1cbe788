//! Tensors: a layout and the storage it describes, read and written as
//! elements, in logical order, or one tile at a time.
//!
//! A [`Tensor`] pairs a layout (a `layout!` value, or a run-time `&Layout`)
//! with storage (`&[T]`, `&mut [T]`, `[T; N]`, and with the `alloc` feature,
//! on by default through `std`, `Vec<T>` and `Box<[T]>`). Element access on a `layout!` tensor is the
//! macro's folded `const fn` offset, as cheap as writing `buf[l.offset(i)]`
//! by hand; walks in logical order go a run of slots a constant stride
//! apart at a time, and [`tiles`](Tensor::tiles) hands out each
//! first-level tile's contiguous storage.
//!
//! # Examples
//!
//! ```
//! use xla_layout::{layout, tensor::Tensor};
//! let l = layout!("f32[3,5]{1,0:T(2,2)}");
//! let mut t = Tensor::new(l, [0.0f32; 24]).unwrap();
//! t[[2, 3]] = 7.0;
//! assert_eq!(t.storage()[17], 7.0);
//! assert_eq!(t.get([2, 3]), Some(&7.0));
//! assert_eq!(t.get([3, 0]), None);
//! assert_eq!(t.iter().sum::<f32>(), 7.0);
//! ```

mod access;
mod iter;
mod tiles;

use core::fmt::Debug;

use crate::{AnyLayout, RelayoutError, StaticLayout};

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use iter::IterMut;
pub use iter::{IndexedIter, Iter};
pub use tiles::{__tile_layout, TileAt, TileGrid, TileLayoutError, TiledLayout, Tiles, TilesMut};

/// Storage a [`Tensor`] reads: a contiguous run of elements.
///
/// # Examples
///
/// ```
/// use xla_layout::tensor::Storage;
/// assert_eq!([1, 2, 3].as_slice_of_storage(), &[1, 2, 3]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not storage a tensor can read",
    note = "tensor storage is `&[T]`, `&mut [T]` or `[T; N]`, and `Vec<T>` or `Box<[T]>` \
            with the `alloc` feature of `xla-layout` (on with its default `std` feature)"
)]
pub trait Storage {
    /// The element type.
    type Elem;
    /// The elements, in storage order.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::tensor::Storage;
    /// let a = [1.0f32, 2.0];
    /// assert_eq!(a.as_slice_of_storage(), &[1.0, 2.0]);
    /// assert_eq!((&a[1..]).as_slice_of_storage(), &[2.0]);
    /// ```
    fn as_slice_of_storage(&self) -> &[Self::Elem];
}

/// Storage a [`Tensor`] can also write.
///
/// # Examples
///
/// ```
/// use xla_layout::tensor::StorageMut;
/// let mut a = [1, 2, 3];
/// a.as_mut_slice_of_storage()[0] = 9;
/// assert_eq!(a, [9, 2, 3]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not storage a tensor can write",
    note = "writable tensor storage is `&mut [T]` or `[T; N]`, and `Vec<T>` or `Box<[T]>` \
            with the `alloc` feature of `xla-layout` (on with its default `std` feature)"
)]
pub trait StorageMut: Storage {
    /// The elements, in storage order.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::tensor::StorageMut;
    /// let mut a = [0u16; 4];
    /// (&mut a[2..]).as_mut_slice_of_storage()[1] = 7;
    /// assert_eq!(a, [0, 0, 0, 7]);
    /// ```
    fn as_mut_slice_of_storage(&mut self) -> &mut [Self::Elem];
}

impl<T> Storage for &[T] {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        self
    }
}

impl<T> Storage for &mut [T] {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        self
    }
}

impl<T> StorageMut for &mut [T] {
    fn as_mut_slice_of_storage(&mut self) -> &mut [T] {
        self
    }
}

impl<T, const N: usize> Storage for [T; N] {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        self
    }
}

impl<T, const N: usize> StorageMut for [T; N] {
    fn as_mut_slice_of_storage(&mut self) -> &mut [T] {
        self
    }
}

impl<T, const N: usize> Storage for &[T; N] {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        *self
    }
}

impl<T, const N: usize> Storage for &mut [T; N] {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        &**self
    }
}

impl<T, const N: usize> StorageMut for &mut [T; N] {
    fn as_mut_slice_of_storage(&mut self) -> &mut [T] {
        *self
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<T> Storage for alloc::vec::Vec<T> {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        self
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<T> StorageMut for alloc::vec::Vec<T> {
    fn as_mut_slice_of_storage(&mut self) -> &mut [T] {
        self
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<T> Storage for alloc::boxed::Box<[T]> {
    type Elem = T;
    fn as_slice_of_storage(&self) -> &[T] {
        self
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<T> StorageMut for alloc::boxed::Box<[T]> {
    fn as_mut_slice_of_storage(&mut self) -> &mut [T] {
        self
    }
}

/// A layout and its storage: elements by index, in logical order, or tile
/// by tile.
///
/// `L` is a `layout!` value or a `&Layout` ([`AnyLayout`]); `S` is the
/// storage ([`Storage`]), holding exactly the layout's storage slots, each
/// as wide as one slot (`f32` or `u32` for `f32`, `u16` or `half::bf16` for
/// `bf16`, ...).
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let rt = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
/// let storage = [1.0f32, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0];
/// let t = Tensor::new(&rt, &storage[..]).unwrap();
/// assert_eq!(t[[1, 2]], 6.0);
/// assert!(t.iter().copied().eq([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
///
/// let s = Tensor::new(layout!("f32[2,3]{1,0:T(2,2)}"), storage).unwrap();
/// assert_eq!(s[[1, 2]], 6.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tensor<L, S> {
    layout: L,
    storage: S,
}

/// Why `T` cannot hold one slot of `layout`.
fn check_element<T>(bits: u32) -> Result<(), RelayoutError> {
    if bits < 8 {
        return Err(RelayoutError::PackedLayout { bits });
    }
    let type_bits = core::mem::size_of::<T>() * 8;
    if type_bits == bits as usize {
        Ok(())
    } else {
        Err(RelayoutError::ElementSize {
            layout_bits: bits,
            type_bits,
        })
    }
}

impl<L: AnyLayout, S: Storage> Tensor<L, S> {
    /// A tensor over `storage`, which must hold exactly the layout's storage
    /// slots, each element as wide as one slot.
    ///
    /// # Errors
    ///
    /// [`RelayoutError::StorageLength`] for storage of another length,
    /// [`RelayoutError::ElementSize`] for an element of another width, and
    /// [`RelayoutError::PackedLayout`] for sub-byte layouts (`s4`, `E(4)`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, RelayoutError, tensor::Tensor};
    /// let l = layout!("f32[3,5]{1,0:T(2,2)}");
    /// let err = Tensor::new(l, [0.0f32; 15]).unwrap_err();
    /// assert_eq!(err, RelayoutError::StorageLength { expected: 24, actual: 15 });
    /// ```
    pub fn new(layout: L, storage: S) -> Result<Self, RelayoutError> {
        check_element::<S::Elem>(layout.slot_bits())?;
        let actual = storage.as_slice_of_storage().len();
        let expected = layout.slot_count();
        if actual != expected {
            return Err(RelayoutError::StorageLength { expected, actual });
        }
        Ok(Tensor { layout, storage })
    }

    /// The layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2]"), [1.0f32, 2.0]).unwrap();
    /// assert_eq!(t.layout().to_string(), "f32[2]{0}");
    /// ```
    pub fn layout(&self) -> L {
        self.layout
    }

    /// The storage slots, in memory order, padding included.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[3]{0:T(2)}"), [1.0f32, 2.0, 3.0, 0.0]).unwrap();
    /// assert_eq!(t.storage(), &[1.0, 2.0, 3.0, 0.0]);
    /// ```
    pub fn storage(&self) -> &[S::Elem] {
        self.storage.as_slice_of_storage()
    }

    /// The storage, given back.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2]"), [1.0f32, 2.0]).unwrap();
    /// assert_eq!(t.into_storage(), [1.0, 2.0]);
    /// ```
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// Whether storage slot `offset` is padding (or past storage).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[3]{0:T(2)}"), [0.0f32; 4]).unwrap();
    /// assert!(!t.is_padding(2));
    /// assert!(t.is_padding(3));
    /// ```
    pub fn is_padding(&self, offset: usize) -> bool {
        self.layout.index_at(offset).is_none()
    }

    /// Unpacks the elements into a row-major array `out` (one value per element).
    ///
    /// # Errors
    ///
    /// [`RelayoutError::LogicalLength`] if `out` does not hold one value per element.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[3]{0:T(2)}"), [1.0f32, 2.0, 3.0, 0.0]).unwrap();
    /// let mut out = [0.0; 3];
    /// t.to_row_major(&mut out).unwrap();
    /// assert_eq!(out, [1.0, 2.0, 3.0]);
    /// ```
    pub fn to_row_major(&self, out: &mut [S::Elem]) -> Result<(), RelayoutError>
    where
        S::Elem: Copy,
    {
        let storage = self.storage();
        // One thread: a tensor's methods take no options.
        self.layout
            .with_layout(|l| l.unpack_plan()?.run(storage, out))
    }

    /// The elements as an `ndarray` array of the layout's dims (feature `ndarray`).
    ///
    /// # Errors
    ///
    /// None in practice: the tensor's storage was checked when it was made.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[1,3]{1,0:T(1,2)}"), [1.0f32, 2.0, 3.0, 0.0]).unwrap();
    /// assert_eq!(t.to_array().unwrap(), xla_layout::relayout::ndarray::arr2(&[[1.0, 2.0, 3.0]]).into_dyn());
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    pub fn to_array(&self) -> Result<ndarray::ArrayD<S::Elem>, RelayoutError>
    where
        S::Elem: Copy + Send + Sync,
    {
        let storage = self.storage();
        self.layout
            .with_layout(|l| l.unpack_array(storage, crate::Threads::One))
    }
}

impl<L: AnyLayout, S: StorageMut> Tensor<L, S> {
    /// Packs the row-major array `logical` into `storage` and wraps it;
    /// padding slots get `T::default()`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and [`RelayoutError::LogicalLength`] if
    /// `logical` does not hold one value per element.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::from_row_major(layout!("f32[3]{0:T(2)}"), &[1.0, 2.0, 3.0], [9.0f32; 4]).unwrap();
    /// assert_eq!(t.storage(), &[1.0, 2.0, 3.0, 0.0]);
    /// ```
    pub fn from_row_major(layout: L, logical: &[S::Elem], storage: S) -> Result<Self, RelayoutError>
    where
        S::Elem: Copy + Default,
    {
        let mut t = Tensor::new(layout, storage)?;
        let out = t.storage.as_mut_slice_of_storage();
        layout.with_layout(|l| l.pack_plan(S::Elem::default())?.run(logical, out))?;
        Ok(t)
    }

    /// Packs an `ndarray` array (any memory order) into `storage` and wraps
    /// it; padding slots get `T::default()` (feature `ndarray`).
    ///
    /// # Errors
    ///
    /// As [`from_row_major`](Self::from_row_major); an array of other dims is a
    /// [`RelayoutError::RankMismatch`] or [`RelayoutError::DimMismatch`].
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let a = xla_layout::relayout::ndarray::arr2(&[[1.0f32, 2.0], [3.0, 4.0]]);
    /// let t = Tensor::from_array(layout!("f32[2,2]{0,1}"), &a.view(), [0.0f32; 4]).unwrap();
    /// assert_eq!(t.storage(), &[1.0, 3.0, 2.0, 4.0]);
    /// ```
    #[cfg(feature = "ndarray")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    pub fn from_array<A, D>(
        layout: L,
        array: &ndarray::ArrayBase<A, D>,
        storage: S,
    ) -> Result<Self, RelayoutError>
    where
        A: ndarray::Data<Elem = S::Elem>,
        D: ndarray::Dimension,
        S::Elem: Copy + Default + Send + Sync,
    {
        let mut t = Tensor::new(layout, storage)?;
        let out = t.storage.as_mut_slice_of_storage();
        layout.with_layout(|l| l.pack_array(array, out, crate::Options::default()))?;
        Ok(t)
    }

    /// The storage slots, in memory order, padding included.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[3]{0:T(2)}"), [0.0f32; 4]).unwrap();
    /// t.storage_mut()[3] = 1.0;
    /// assert!(t.is_padding(3));
    /// ```
    pub fn storage_mut(&mut self) -> &mut [S::Elem] {
        self.storage.as_mut_slice_of_storage()
    }

    /// Copies every element of `other`, a tensor of the same dims and element
    /// type in any layout, into this one; padding slots get `T::default()`.
    ///
    /// # Errors
    ///
    /// As [`Layout::convert`](crate::Layout::convert): dims, rank or element types that differ.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let row = Tensor::new(layout!("f32[2,2]"), [1.0f32, 2.0, 3.0, 4.0]).unwrap();
    /// let mut col = Tensor::new(layout!("f32[2,2]{0,1}"), [0.0f32; 4]).unwrap();
    /// col.copy_from(&row).unwrap();
    /// assert_eq!(col.storage(), &[1.0, 3.0, 2.0, 4.0]);
    /// ```
    pub fn copy_from<M: AnyLayout, R: Storage<Elem = S::Elem>>(
        &mut self,
        other: &Tensor<M, R>,
    ) -> Result<(), RelayoutError>
    where
        S::Elem: Copy + Default,
    {
        let dst = self.storage.as_mut_slice_of_storage();
        let to = self.layout;
        other.layout.with_layout(|from| {
            to.with_layout(|to| {
                from.convert_plan(to, S::Elem::default())?
                    .run(other.storage(), dst)
            })
        })
    }

    /// Sets every element to `value`; padding is left alone.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[3]{0:T(2)}"), [0.0f32; 4]).unwrap();
    /// t.fill(1.0);
    /// assert_eq!(t.storage(), &[1.0, 1.0, 1.0, 0.0]);
    /// ```
    pub fn fill(&mut self, value: S::Elem)
    where
        S::Elem: Clone,
    {
        self.for_each_mut(|x| *x = value.clone());
    }

    /// Sets every padding slot to `value`; elements are left alone.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[3]{0:T(2)}"), [0.0f32; 4]).unwrap();
    /// t.fill_padding(f32::NAN);
    /// assert!(t.storage()[3].is_nan());
    /// assert_eq!(&t.storage()[..3], &[0.0; 3]);
    /// ```
    pub fn fill_padding(&mut self, value: S::Elem)
    where
        S::Elem: Clone,
    {
        let storage = self.storage.as_mut_slice_of_storage();
        self.layout
            .with_layout(|l| crate::relayout::fill_padding(l, storage, &value));
    }

    /// Calls `f` on every element in logical (row-major) order, a run of
    /// slots a constant stride apart at a time; allocates nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[2,2]{0,1}"), [0.0f32; 4]).unwrap();
    /// let mut n = 0.0;
    /// t.for_each_mut(|x| {
    ///     *x = n;
    ///     n += 1.0;
    /// });
    /// assert_eq!(t.storage(), &[0.0, 2.0, 1.0, 3.0]);
    /// ```
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut S::Elem)) {
        let storage = self.storage.as_mut_slice_of_storage();
        self.layout.with_layout(|l| {
            let mut runs = l.offsets();
            while let Some(block) = runs.next_block() {
                for run in block.runs() {
                    if run.stride == 1 {
                        storage[run.span()].iter_mut().for_each(&mut f);
                    } else {
                        iter::strided_mut(storage, run).for_each(&mut f);
                    }
                }
            }
        });
    }

    /// [`for_each_mut`](Self::for_each_mut) with each element's index.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[2,3]{1,0:T(2,2)}"), [0.0f32; 8]).unwrap();
    /// t.indexed_for_each_mut(|[i, j], x| *x = (10 * i + j) as f32);
    /// assert_eq!(t[[1, 2]], 12.0);
    /// ```
    pub fn indexed_for_each_mut(&mut self, mut f: impl FnMut(L::Index, &mut S::Elem)) {
        let storage = self.storage.as_mut_slice_of_storage();
        let layout = self.layout;
        let rank = layout.shape().len();
        let mut index = [0usize; crate::MAX_RANK];
        layout.with_layout(|l| {
            let mut runs = l.offsets();
            while let Some(run) = runs.next_strided() {
                for x in iter::strided_mut(storage, run) {
                    f(layout.index_from(&index[..rank]), x);
                    crate::eval::layout::advance(&mut index[..rank], layout.shape());
                }
            }
        });
    }
}

impl<L: StaticLayout, T, const N: usize> Tensor<L, [T; N]> {
    /// A tensor over an array, checked at compile time: its length must be
    /// the layout's `STORAGE_LEN` and `T` as wide as one slot. A `const fn`,
    /// so tensors can live in `static`s and `const`s (firmware buffers).
    ///
    /// The array's type is the layout's [`Buffer`](StaticLayout::Buffer),
    /// `[T; STORAGE_LEN]` with the number written out, so an array of
    /// another length is a type error at the call, naming both lengths:
    /// "expected an array with a size of 24, found one with a size of 15".
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// layout!(pub struct Weights = "f32[3,5]{1,0:T(2,2)}");
    /// static W: Tensor<Weights, [f32; Weights::STORAGE_LEN]> =
    ///     Tensor::from_buffer(Weights, [0.5; Weights::STORAGE_LEN]);
    /// assert_eq!(W[[2, 4]], 0.5);
    /// ```
    ///
    /// A buffer of the wrong size does not compile:
    ///
    /// ```compile_fail,E0308
    /// use xla_layout::{layout, tensor::Tensor};
    /// layout!(pub struct Weights = "f32[3,5]{1,0:T(2,2)}");
    /// let w = Tensor::from_buffer(Weights, [0.5f32; 15]);
    /// ```
    pub const fn from_buffer(layout: L, storage: L::Buffer<T>) -> Self
    where
        // `L::Buffer<T>` is `[T; N]`: the array's length in its type, read
        // from the layout, rather than a check of `N` inside this function,
        // which would fail here, in the library, not at the caller.
        L: StaticLayout<Buffer<T> = [T; N]>,
    {
        const {
            assert!(
                L::ELEMENT_BITS >= 8 && core::mem::size_of::<T>() * 8 == L::ELEMENT_BITS as usize,
                "the element type is not as wide as one storage slot"
            );
        }
        Tensor { layout, storage }
    }
}
