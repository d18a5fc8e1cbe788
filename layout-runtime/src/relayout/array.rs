//! `ndarray` arrays in and out (feature `ndarray`).

use alloc::vec;
use alloc::vec::Vec;

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use super::api::check_len;
use super::api::Options;
use super::gather::Gather;
use super::route::{Route, Side};
use super::{RelayoutError, Threads};
use crate::{Layout, MAX_RANK};

impl Layout {
    /// [`pack`](Self::pack) from an array in any memory order: C or Fortran
    /// order, permuted axes, or any other strided view. An array in C order
    /// runs on the [`Threads`] of `options`, any other on the calling thread.
    ///
    /// # Errors
    ///
    /// As [`pack`](Self::pack); a shape other than the layout's dims is a
    /// [`RankMismatch`](RelayoutError::RankMismatch) or
    /// [`DimMismatch`](RelayoutError::DimMismatch) (the array is the source).
    ///
    /// # Examples
    ///
    /// ```
    /// use ndarray::{Array2, ShapeBuilder};
    /// use xla_layout::Options;
    /// let l = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
    /// // Fortran (column-major) order in memory.
    /// let a = Array2::from_shape_vec((2, 3).f(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
    /// let mut storage = [f32::NAN; 8];
    /// l.pack_array(&a, &mut storage, Options::default()).unwrap();
    /// assert_eq!(storage, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    ///
    /// let l = xla_layout::parse("u8[2,2]{1,0:T(1,4)}").unwrap();
    /// let a = ndarray::arr2(&[[1u8, 2], [3, 4]]);
    /// let mut storage = [0u8; 8];
    /// l.pack_array(&a.t(), &mut storage, Options::fill(9)).unwrap();
    /// assert_eq!(storage, [1, 3, 9, 9, 2, 4, 9, 9]);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    pub fn pack_array<S, D>(
        &self,
        array: &ArrayBase<S, D>,
        storage: &mut [S::Elem],
        options: Options<S::Elem>,
    ) -> Result<(), RelayoutError>
    where
        S: Data,
        S::Elem: Copy + Send + Sync,
        D: Dimension,
    {
        self.check_slots::<S::Elem>()?;
        check_len(storage.len(), self.storage_len())?;
        let shape = array.shape();
        if shape.len() != self.rank() {
            return Err(RelayoutError::RankMismatch {
                from: shape.len(),
                to: self.rank(),
            });
        }
        if let Some((dim, (&from, &to))) = shape
            .iter()
            .zip(self.dims())
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(RelayoutError::DimMismatch { dim, from, to });
        }
        if let Some(row_major) = array.as_slice() {
            return self.pack(row_major, storage, options);
        }
        let (fill, _) = options.parts();
        if self.is_empty() {
            storage.fill(fill);
            return Ok(());
        }
        if let Some(memory) = array.as_slice_memory_order() {
            let mut strides = [0usize; MAX_RANK];
            // With no negative stride, the first element is the lowest address.
            let positive = array
                .strides()
                .iter()
                .zip(&mut strides)
                .all(|(&s, slot)| usize::try_from(s).map(|s| *slot = s).is_ok());
            if positive {
                let (walked, other) = (Side::Layout(self), Side::Strided(self.dims(), strides));
                let mut v = Gather {
                    dst: storage,
                    base: 0,
                    src: memory,
                    padding: Some(fill),
                    stage: &mut [],
                    unit: 1,
                    end: 0,
                };
                Route::over(&walked, &other).run(&walked, &other, &mut v);
                return Ok(());
            }
        }
        // Any other view: element by element.
        for (offset, value) in self.offsets().zip(array.iter()) {
            storage[offset] = *value;
        }
        super::fill_padding(self, storage, &fill);
        Ok(())
    }

    /// [`unpack`](Self::unpack) into a new array in C (row-major) order, on
    /// `threads`.
    ///
    /// # Errors
    ///
    /// As [`unpack`](Self::unpack).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::Threads;
    /// let l = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
    /// let a = l.unpack_array(&[1.0f32, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0], Threads::One).unwrap();
    /// assert_eq!(a, ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn());
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    pub fn unpack_array<T: Copy + Send + Sync>(
        &self,
        storage: &[T],
        threads: Threads,
    ) -> Result<ArrayD<T>, RelayoutError> {
        self.check_slots::<T>()?;
        check_len(storage.len(), self.storage_len())?;
        // Any element will do as the initial value: unpack overwrites them all.
        let mut data = match self.offsets().next() {
            Some(first) => vec![storage[first]; self.len()],
            None => Vec::new(),
        };
        self.unpack(storage, &mut data, threads)?;
        let len = data.len();
        ArrayD::from_shape_vec(IxDyn(self.dims()), data).map_err(|_| RelayoutError::LogicalLength {
            expected: self.len(),
            actual: len,
        })
    }
}
