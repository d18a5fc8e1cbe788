//! Logical-order iterators, a run of slots a constant stride apart at a time.

use core::iter::StepBy;
use core::slice;

use super::{Storage, Tensor};
use crate::eval::layout::advance;
use crate::relayout::Run;
use crate::AnyLayout;
use crate::{Offsets, MAX_RANK};

/// The elements of a [`Tensor`] in logical (row-major) order. Made by
/// [`Tensor::iter`].
///
/// It walks runs of slots a constant stride apart (a `T(8,128)` tile's
/// 128-wide rows, a `(2,1)` tile's pairs two apart), so its cost per
/// element is that of a slice iterator; `fold` (and so `sum`, `for_each`,
/// ...) runs one tight loop per run.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[2,2]{0,1}"), [1.0f32, 3.0, 2.0, 4.0]).unwrap();
/// assert!(t.iter().copied().eq([1.0, 2.0, 3.0, 4.0]));
/// ```
#[derive(Clone, Debug)]
pub struct Iter<'a, T> {
    storage: &'a [T],
    runs: Offsets,
    run: StepBy<slice::Iter<'a, T>>,
    remaining: usize,
}

impl<'a, T> Iter<'a, T> {
    fn new(storage: &'a [T], runs: Offsets) -> Self {
        Iter {
            storage,
            remaining: runs.len(),
            runs,
            run: [].iter().step_by(1),
        }
    }
}

/// The elements of `run` in `storage`, in order.
pub(super) fn strided<T>(storage: &[T], run: Run) -> StepBy<slice::Iter<'_, T>> {
    storage[run.span()].iter().step_by(run.stride.max(1))
}

/// [`strided`], to write.
pub(super) fn strided_mut<T>(storage: &mut [T], run: Run) -> StepBy<slice::IterMut<'_, T>> {
    storage[run.span()].iter_mut().step_by(run.stride.max(1))
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        loop {
            if let Some(x) = self.run.next() {
                self.remaining -= 1;
                return Some(x);
            }
            self.run = strided(self.storage, self.runs.next_strided()?);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }

    fn fold<B, F: FnMut(B, &'a T) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = self.run.fold(init, &mut f);
        while let Some(block) = self.runs.next_block() {
            for run in block.runs() {
                // Side by side: the slice's own loop, which the compiler
                // unrolls and vectorizes more readily than a stepped one.
                acc = if run.stride == 1 {
                    self.storage[run.span()].iter().fold(acc, &mut f)
                } else {
                    strided(self.storage, run).fold(acc, &mut f)
                };
            }
        }
        acc
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
impl<T> core::iter::FusedIterator for Iter<'_, T> {}

/// The elements of a [`Tensor`] with their indices, in logical order. Made
/// by [`Tensor::indexed_iter`].
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, tensor::Tensor};
/// let t = Tensor::new(layout!("f32[1,2]"), [5.0f32, 6.0]).unwrap();
/// let v: Vec<([usize; 2], f32)> = t.indexed_iter().map(|(i, &x)| (i, x)).collect();
/// assert_eq!(v, [([0, 0], 5.0), ([0, 1], 6.0)]);
/// ```
#[derive(Clone, Debug)]
pub struct IndexedIter<'a, L, T> {
    layout: L,
    inner: Iter<'a, T>,
    index: [usize; MAX_RANK],
}

impl<'a, L: AnyLayout, T> Iterator for IndexedIter<'a, L, T> {
    type Item = (L::Index, &'a T);

    #[inline]
    fn next(&mut self) -> Option<(L::Index, &'a T)> {
        let x = self.inner.next()?;
        let dims = self.layout.shape();
        let here = &mut self.index[..dims.len()];
        let index = self.layout.index_from(here);
        advance(here, dims);
        Some((index, x))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<L: AnyLayout, T> ExactSizeIterator for IndexedIter<'_, L, T> {}
impl<L: AnyLayout, T> core::iter::FusedIterator for IndexedIter<'_, L, T> {}

impl<L: AnyLayout, S: Storage> Tensor<L, S> {
    /// The elements in logical (row-major) order, driven by the layout's
    /// bulk walk: one step per run of slots a constant stride apart (a tile
    /// row), not one offset per element.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2,3]{1,0:T(2,2)}"), [1.0f32, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]).unwrap();
    /// assert!(t.iter().copied().eq([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    /// ```
    pub fn iter(&self) -> Iter<'_, S::Elem> {
        Iter::new(
            self.storage(),
            self.layout.with_layout(crate::Layout::offsets),
        )
    }

    /// [`iter`](Self::iter) with each element's index.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let t = Tensor::new(layout!("f32[2,2]{0,1}"), [1.0f32, 3.0, 2.0, 4.0]).unwrap();
    /// let (index, x) = t.indexed_iter().nth(1).unwrap();
    /// assert_eq!((index, *x), ([0, 1], 2.0));
    /// ```
    pub fn indexed_iter(&self) -> IndexedIter<'_, L, S::Elem> {
        IndexedIter {
            layout: self.layout,
            inner: self.iter(),
            index: [0; MAX_RANK],
        }
    }
}

impl<'a, L: AnyLayout, S: Storage> IntoIterator for &'a Tensor<L, S> {
    type Item = &'a S::Elem;
    type IntoIter = Iter<'a, S::Elem>;

    fn into_iter(self) -> Iter<'a, S::Elem> {
        self.iter()
    }
}

#[cfg(feature = "alloc")]
pub use self::iter_mut::IterMut;

#[cfg(feature = "alloc")]
mod iter_mut {
    use super::super::{StorageMut, Tensor};
    use crate::AnyLayout;
    use alloc::vec::{self, Vec};
    use core::slice;

    /// The elements of a [`Tensor`] to write, in logical order. Made by
    /// [`Tensor::iter_mut`] (feature `alloc`).
    ///
    /// Logical order visits storage out of order, and safe Rust hands out
    /// `&mut` only to disjoint pieces split off in advance: this holds one
    /// slice per run of neighbouring slots. [`Tensor::for_each_mut`] writes
    /// in the same order without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, tensor::Tensor};
    /// let mut t = Tensor::new(layout!("f32[2,2]{0,1}"), [0.0f32; 4]).unwrap();
    /// for (x, v) in t.iter_mut().zip([1.0, 2.0, 3.0, 4.0]) {
    ///     *x = v;
    /// }
    /// assert_eq!(t.storage(), &[1.0, 3.0, 2.0, 4.0]);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    #[derive(Debug)]
    pub struct IterMut<'a, T> {
        runs: vec::IntoIter<&'a mut [T]>,
        run: slice::IterMut<'a, T>,
        remaining: usize,
    }

    impl<'a, T> Iterator for IterMut<'a, T> {
        type Item = &'a mut T;

        #[inline]
        fn next(&mut self) -> Option<&'a mut T> {
            loop {
                if let Some(x) = self.run.next() {
                    self.remaining -= 1;
                    return Some(x);
                }
                self.run = self.runs.next()?.iter_mut();
            }
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            (self.remaining, Some(self.remaining))
        }
    }

    impl<T> ExactSizeIterator for IterMut<'_, T> {}
    impl<T> core::iter::FusedIterator for IterMut<'_, T> {}

    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    impl<'a, L: AnyLayout, S: StorageMut> IntoIterator for &'a mut Tensor<L, S> {
        type Item = &'a mut S::Elem;
        type IntoIter = IterMut<'a, S::Elem>;

        fn into_iter(self) -> IterMut<'a, S::Elem> {
            self.iter_mut()
        }
    }

    impl<L: AnyLayout, S: StorageMut> Tensor<L, S> {
        /// The elements to write, in logical (row-major) order (feature
        /// `alloc`: it allocates one slice per run of neighbouring slots).
        ///
        /// # Examples
        ///
        /// ```
        /// use xla_layout::{layout, tensor::Tensor};
        /// let mut t = Tensor::new(layout!("f32[3]{0:T(2)}"), [0.0f32; 4]).unwrap();
        /// t.iter_mut().for_each(|x| *x += 1.0);
        /// assert_eq!(t.storage(), &[1.0, 1.0, 1.0, 0.0]);
        /// ```
        #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
        pub fn iter_mut(&mut self) -> IterMut<'_, S::Elem> {
            let layout = self.layout;
            let mut starts: Vec<(usize, usize)> = Vec::new();
            layout.with_layout(|l| {
                let mut runs = l.offsets();
                while let Some(run) = runs.next_strided() {
                    starts.extend(run.side_by_side());
                }
            });
            // Split in storage order, then put back in logical order.
            let mut order: Vec<usize> = (0..starts.len()).collect();
            order.sort_unstable_by_key(|&k| starts[k].0);
            let mut pieces: Vec<Option<&mut [S::Elem]>> = (0..starts.len()).map(|_| None).collect();
            let mut rest = self.storage.as_mut_slice_of_storage();
            let mut at = 0;
            for k in order {
                let (start, len) = starts[k];
                let (_, tail) = core::mem::take(&mut rest).split_at_mut(start - at);
                let (run, tail) = tail.split_at_mut(len);
                pieces[k] = Some(run);
                rest = tail;
                at = start + len;
            }
            let runs: Vec<&mut [S::Elem]> = pieces.into_iter().flatten().collect();
            IterMut {
                runs: runs.into_iter(),
                run: [].iter_mut(),
                remaining: layout.element_count(),
            }
        }
    }
}
