//! `convert_to`: one name for layout-to-layout conversion, whatever the
//! destination is (a `layout!` value or a `&Layout`).

use super::AnyLayout;
use crate::{Layout, RelayoutError};

impl Layout {
    /// Moves `storage`, laid out by this layout, into `to_storage`, laid out
    /// by `to` (a `&Layout` or a `layout!` value) of the same dims and
    /// element type, without a row-major copy in between; padding slots of
    /// `to` get `T::default()`.
    ///
    /// # Errors
    ///
    /// [`RelayoutError`] if the ranks, dims or element types differ, `T` is
    /// not as wide as a slot, or a buffer length is not the layout's
    /// [`storage_len`](Self::storage_len).
    ///
    /// # Examples
    ///
    /// ```
    /// let col_major = xla_layout::parse("f32[2,3]{0,1}").unwrap();
    /// // Column-major: a d b e c f.
    /// let from = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
    /// let mut to = [f32::NAN; 8];
    /// col_major.convert_to(&from, xla_layout::layout!("f32[2,3]{1,0:T(2,2)}"), &mut to).unwrap();
    /// assert_eq!(to, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    ///
    /// let tiled = xla_layout::parse("f32[2,3]{1,0:T(2,2)}").unwrap();
    /// col_major.convert_to(&from, &tiled, &mut to).unwrap();
    /// assert_eq!(to, [1.0, 2.0, 4.0, 5.0, 3.0, 0.0, 6.0, 0.0]);
    /// ```
    pub fn convert_to<T: Copy + Default, D: AnyLayout>(
        &self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        to.with_layout(|to| self.convert_with_fill(storage, to, to_storage, T::default()))
    }
}
