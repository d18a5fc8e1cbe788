//! What a `layout!` value and a run-time `&Layout` have in common, for
//! tensors and relayouts that take either.

use core::fmt::Debug;

use crate::eval::layout::{Index, Layout};

/// A layout a [`Tensor`](crate::tensor::Tensor) can use: every `layout!` value (every
/// [`StaticLayout`](crate::StaticLayout)) and every `&Layout`.
///
/// Also the destination of [`StaticLayout::convert`](crate::StaticLayout::convert) and
/// [`Layout::convert`], so `layout!` values and run-time layouts mix freely.
///
/// # Examples
///
/// ```
/// use xla_layout::{layout, AnyLayout};
/// fn slots<L: AnyLayout>(l: L) -> usize {
///     l.slot_count()
/// }
/// let rt = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// assert_eq!(slots(&rt), 24);
/// assert_eq!(slots(layout!("f32[3,5]{1,0:T(2,2)}")), 24);
/// ```
pub trait AnyLayout: Copy {
    /// A logical index: `[usize; RANK]` for a `layout!` value,
    /// [`Index`](crate::Index) for a `&Layout`.
    type Index: Copy + Debug + AsRef<[usize]>;

    /// Runs `f` on the layout as a run-time [`Layout`]. For a `layout!`
    /// value this builds one (a few microseconds): bulk operations call it
    /// once per call, never per element.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// let n = layout!("f32[3,5]{1,0:T(2,2)}").with_layout(|l| l.tiles().len());
    /// assert_eq!(n, 1);
    /// ```
    fn with_layout<R>(self, f: impl FnOnce(&Layout) -> R) -> R;

    /// The logical dims.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// assert_eq!(layout!("f32[3,5]").shape(), &[3, 5]);
    /// ```
    fn shape(&self) -> &[usize];

    /// The number of logical elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// assert_eq!(layout!("f32[3,5]{1,0:T(2,2)}").element_count(), 15);
    /// ```
    fn element_count(&self) -> usize;

    /// The number of storage slots, padding included.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// assert_eq!(layout!("f32[3,5]{1,0:T(2,2)}").slot_count(), 24);
    /// ```
    fn slot_count(&self) -> usize;

    /// Bits per storage slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// assert_eq!(layout!("bf16[4]").slot_bits(), 16);
    /// ```
    fn slot_bits(&self) -> u32;

    /// The storage offset of `index`, or `None` if it is not one entry per
    /// dim, each inside its dim.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// let l = layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.locate(&[2, 3]), Some(17));
    /// assert_eq!(l.locate(&[2]), None);
    /// ```
    fn locate(self, index: &[usize]) -> Option<usize>;

    /// The logical index stored at `offset`, or `None` for padding or past
    /// storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// let l = layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.index_at(17).map(|i| i), Some([2, 3]));
    /// assert_eq!(l.index_at(9), None);
    /// ```
    fn index_at(self, offset: usize) -> Option<Self::Index>;

    /// `values` as this layout's index type; `values` has one entry per dim.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{layout, AnyLayout};
    /// assert_eq!(layout!("f32[3,5]").index_from(&[1, 2]), [1, 2]);
    /// ```
    fn index_from(&self, values: &[usize]) -> Self::Index;
}

impl AnyLayout for &Layout {
    type Index = Index;

    fn with_layout<R>(self, f: impl FnOnce(&Layout) -> R) -> R {
        f(self)
    }

    fn shape(&self) -> &[usize] {
        self.dims()
    }

    fn element_count(&self) -> usize {
        self.len()
    }

    fn slot_count(&self) -> usize {
        self.storage_len()
    }

    fn slot_bits(&self) -> u32 {
        self.element_bits()
    }

    fn locate(self, index: &[usize]) -> Option<usize> {
        self.try_offset(index)
    }

    fn index_at(self, offset: usize) -> Option<Index> {
        self.index_of(offset)
    }

    fn index_from(&self, values: &[usize]) -> Index {
        Index::from_slice(values)
    }
}

impl AsRef<[usize]> for Index {
    #[inline]
    fn as_ref(&self) -> &[usize] {
        self
    }
}
