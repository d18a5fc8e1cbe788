//! Element access: the layout's own index type for `layout!` tensors (rank
//! checked at compile time, offsets from the folded `const fn`), slices and
//! arrays for run-time layouts.

use core::ops;

use super::{Storage, StorageMut, Tensor};
use crate::{Layout, StaticLayout};

/// The panic of an index outside the dims, in the words of a slice's. The
/// index comes by value, so the hot path never stores it to memory.
#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range(index: &[usize], dims: &[usize]) -> ! {
    panic!("index out of bounds: the dims are {dims:?} but the index is {index:?}")
}

/// [`out_of_range`] for a `layout!` index, kept out of line with its own
/// copy of the index, so the hot path never stores the index to memory.
#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range_of<L: StaticLayout>(index: L::Index) -> ! {
    out_of_range(index.as_ref(), L::DIMS)
}

/// Hands `index` to [`out_of_range_of`] through a fresh copy made on the
/// cold path: without it the optimizer passes the caller's own copy, which
/// then has to sit in memory on every call of the hot path.
#[allow(
    clippy::inline_always,
    reason = "the copy must be made in the caller's cold branch"
)]
#[inline(always)]
#[track_caller]
fn fail<L: StaticLayout>(index: L::Index) -> ! {
    out_of_range_of::<L>(core::hint::black_box(index))
}

impl<L: StaticLayout, S: Storage> Tensor<L, S> {
    /// The element at `index`, or `None` outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2,2]{0,1}"), [1.0f32, 3.0, 2.0, 4.0]).unwrap();
    /// assert_eq!(t.get([0, 1]), Some(&2.0));
    /// assert_eq!(t.get([2, 0]), None);
    /// ```
    #[inline]
    pub fn get(&self, index: L::Index) -> Option<&S::Elem> {
        let offset = self.layout.try_offset(index)?;
        self.storage.as_slice_of_storage().get(offset)
    }
}

impl<L: StaticLayout, S: StorageMut> Tensor<L, S> {
    /// The element at `index` to write, or `None` outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[2,2]{0,1}"), [0.0f32; 4]).unwrap();
    /// *t.get_mut([0, 1]).unwrap() = 2.0;
    /// assert_eq!(t.storage(), &[0.0, 0.0, 2.0, 0.0]);
    /// assert!(t.get_mut([0, 2]).is_none());
    /// ```
    #[inline]
    pub fn get_mut(&mut self, index: L::Index) -> Option<&mut S::Elem> {
        let offset = self.layout.try_offset(index)?;
        self.storage.as_mut_slice_of_storage().get_mut(offset)
    }
}

impl<L: StaticLayout, S: Storage> ops::Index<L::Index> for Tensor<L, S> {
    type Output = S::Elem;

    /// # Panics
    ///
    /// If `index` is outside the dims, with the index and the dims.
    #[inline]
    #[track_caller]
    fn index(&self, index: L::Index) -> &S::Elem {
        match self.layout.try_offset(index) {
            // `Tensor::new` and `from_buffer` made the length exactly
            // `STORAGE_LEN`, so this reslice never fails; it gives the
            // optimizer a constant length to check the in-dims offset
            // against, which it can fold, where the storage's run-time
            // length keeps a second check alive next to the dims check.
            Some(offset) => &self.storage.as_slice_of_storage()[..L::STORAGE_LEN][offset],
            None => fail::<L>(index),
        }
    }
}

impl<L: StaticLayout, S: StorageMut> ops::IndexMut<L::Index> for Tensor<L, S> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, index: L::Index) -> &mut S::Elem {
        match self.layout.try_offset(index) {
            // As in `index`: a constant length the in-dims offset folds against.
            Some(offset) => &mut self.storage.as_mut_slice_of_storage()[..L::STORAGE_LEN][offset],
            None => fail::<L>(index),
        }
    }
}

impl<S: Storage> Tensor<&Layout, S> {
    /// The element at `index`, or `None` unless `index` has one entry per
    /// dim, each inside its dim.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::tensor::Tensor;
    /// let l = xla_layout::parse("f32[2,2]{0,1}").unwrap();
    /// let t = Tensor::new(&l, [1.0f32, 3.0, 2.0, 4.0]).unwrap();
    /// assert_eq!(t.get(&[0, 1]), Some(&2.0));
    /// assert_eq!(t.get(&[0]), None);
    /// ```
    pub fn get(&self, index: &[usize]) -> Option<&S::Elem> {
        let offset = self.layout.try_offset(index)?;
        self.storage.as_slice_of_storage().get(offset)
    }
}

impl<S: StorageMut> Tensor<&Layout, S> {
    /// The element at `index` to write, or `None` unless `index` has one
    /// entry per dim, each inside its dim.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::tensor::Tensor;
    /// let l = xla_layout::parse("f32[2,2]{0,1}").unwrap();
    /// let mut t = Tensor::new(&l, [0.0f32; 4]).unwrap();
    /// *t.get_mut(&[0, 1]).unwrap() = 2.0;
    /// assert_eq!(t.storage(), &[0.0, 0.0, 2.0, 0.0]);
    /// ```
    pub fn get_mut(&mut self, index: &[usize]) -> Option<&mut S::Elem> {
        let offset = self.layout.try_offset(index)?;
        self.storage.as_mut_slice_of_storage().get_mut(offset)
    }
}

impl<S: Storage> ops::Index<&[usize]> for Tensor<&Layout, S> {
    type Output = S::Elem;

    #[track_caller]
    fn index(&self, index: &[usize]) -> &S::Elem {
        match self.get(index) {
            Some(x) => x,
            None => out_of_range(index, self.layout.dims()),
        }
    }
}

impl<S: StorageMut> ops::IndexMut<&[usize]> for Tensor<&Layout, S> {
    #[track_caller]
    fn index_mut(&mut self, index: &[usize]) -> &mut S::Elem {
        let dims = self.layout.dims();
        match self.layout.try_offset(index) {
            Some(offset) => &mut self.storage.as_mut_slice_of_storage()[offset],
            None => out_of_range(index, dims),
        }
    }
}

impl<S: Storage, const N: usize> ops::Index<[usize; N]> for Tensor<&Layout, S> {
    type Output = S::Elem;

    #[track_caller]
    fn index(&self, index: [usize; N]) -> &S::Elem {
        &self[&index[..]]
    }
}

impl<S: StorageMut, const N: usize> ops::IndexMut<[usize; N]> for Tensor<&Layout, S> {
    #[track_caller]
    fn index_mut(&mut self, index: [usize; N]) -> &mut S::Elem {
        &mut self[&index[..]]
    }
}
