//! [`Ranked`]: a run-time [`Layout`] whose rank is checked once, so its
//! indices travel as `[usize; N]`, as a `layout!` value's do.

mod inverse;

use core::fmt;

pub use inverse::RankedInverse;

use crate::Layout;

/// A borrowed [`Layout`] known to have rank `N`, made by
/// [`Layout::ranked`]; its `offset`, `try_offset` and `index_of` take and
/// return `[usize; N]`, like a `layout!` value's methods.
///
/// It evaluates the layout's own closed forms (the code behind
/// [`Layout::offset`] and [`Layout::index_of`]), so it gives the same
/// answers for every input. What it saves is the rank: `index_of` returns
/// an `Option<[usize; N]>` the caller keeps in registers instead of a
/// [`MAX_RANK`](crate::MAX_RANK)-wide [`Index`](crate::Index), and the
/// terms of dims past `N` drop out at compile time.
///
/// It is `Copy` and one pointer wide: hand it to closures by value (`move`).
/// A closure holding a reference to the view reads the layout through two
/// pointers, and a sum of `offset` in a loop nest measured 8 times slower
/// that way than by value, which matched [`Layout::offset`].
///
/// For `index_of` in a loop over a layout whose `*` combines dims larger
/// than 1, [`inverse`](Ranked::inverse) decodes the layout's inverse once
/// into a [`RankedInverse`], faster per call there (SPEC.md's combining
/// example, 1.75 times the generated inverse's time against 3.9); on
/// every other layout this view's `index_of` is the faster.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let r = l.ranked::<2>().unwrap();
/// assert_eq!(r.offset([2, 3]), 17);
/// assert_eq!(r.try_offset([3, 0]), None);
/// assert_eq!(r.index_of(17), Some([2, 3]));
/// assert_eq!(r.index_of(9), None); // padding
/// assert!(l.ranked::<3>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Ranked<'a, const N: usize> {
    layout: &'a Layout,
}

/// [`Layout::ranked`] asked for a rank the layout does not have.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]").unwrap();
/// let err = l.ranked::<3>().unwrap_err();
/// assert_eq!(err, xla_layout::RankError { expected: 3, actual: 2 });
/// assert_eq!(err.to_string(), "expected a layout of rank 3, found rank 2");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RankError {
    /// The rank asked for (`N`).
    pub expected: usize,
    /// The layout's rank.
    pub actual: usize,
}

impl fmt::Display for RankError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected a layout of rank {}, found rank {}",
            self.expected, self.actual
        )
    }
}

impl core::error::Error for RankError {}

impl Layout {
    /// This layout as a [`Ranked`] view of rank `N`, for indices as
    /// `[usize; N]`.
    ///
    /// # Errors
    ///
    /// [`RankError`] if the layout's rank is not `N`.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// let r = l.ranked::<2>().unwrap();
    /// assert_eq!(r.index_of(16), Some([2, 0]));
    /// assert_eq!(l.ranked::<1>().unwrap_err().actual, 2);
    /// ```
    pub fn ranked<const N: usize>(&self) -> Result<Ranked<'_, N>, RankError> {
        if self.rank() == N {
            Ok(Ranked::of(self))
        } else {
            Err(RankError {
                expected: N,
                actual: self.rank(),
            })
        }
    }
}

impl<'a, const N: usize> Ranked<'a, N> {
    /// The view of `layout`, whose rank the caller knows to be `N`.
    fn of(layout: &'a Layout) -> Ranked<'a, N> {
        Ranked { layout }
    }

    /// The layout viewed.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// assert_eq!(l.ranked::<2>().unwrap().layout().dims(), &[3, 5]);
    /// ```
    pub fn layout(self) -> &'a Layout {
        self.layout
    }

    /// The storage offset of `index`, as [`Layout::offset`]: checked only
    /// in debug builds.
    ///
    /// # Panics
    ///
    /// In debug builds, if `index` is outside the dims (see
    /// [`Layout::offset`]); never in release builds.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[8,8]{1,0:T(2,4)(2,1,1,1)}").unwrap();
    /// assert_eq!(l.ranked::<2>().unwrap().offset([6, 5]), 51);
    /// ```
    // Always inlined, as `Layout::offset` is, so a caller's loop hoists the
    // terms of its outer indices.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[cfg_attr(debug_assertions, track_caller)]
    #[must_use]
    pub fn offset(self, index: [usize; N]) -> usize {
        self.layout.offset(&index)
    }

    /// The storage offset of `index`, or `None` if it is outside the dims.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let r = l.ranked::<2>().unwrap();
    /// assert_eq!(r.try_offset([2, 3]), Some(17));
    /// assert_eq!(r.try_offset([2, 5]), None);
    /// ```
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[must_use]
    pub fn try_offset(self, index: [usize; N]) -> Option<usize> {
        let inside = index.iter().zip(self.layout.dims()).all(|(i, d)| i < d);
        inside.then(|| self.layout.offset_unchecked(&index))
    }

    /// The layout's inverse with its constants decoded once, for many
    /// calls of `index_of`; see [`RankedInverse`].
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let inverse = l.ranked::<2>().unwrap().inverse();
    /// assert_eq!(inverse.index_of(17), Some([2, 3]));
    /// assert_eq!(inverse.index_of(9), None); // padding
    /// ```
    pub fn inverse(self) -> RankedInverse<'a, N> {
        RankedInverse::new(self.layout)
    }

    /// The logical index stored at `offset`, or `None` for a padding slot
    /// or an offset at or past [`storage_len`](Layout::storage_len).
    ///
    /// For many calls, [`inverse`](Self::inverse) decodes the constants
    /// once.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let r = l.ranked::<2>().unwrap();
    /// assert_eq!(r.index_of(17), Some([2, 3]));
    /// assert_eq!(r.index_of(9), None); // padding
    /// assert_eq!(r.index_of(24), None); // past storage
    /// ```
    // Always inlined, as `Layout::index_of` is: the index then lives in
    // the caller's registers, and what the terms derive from the layout
    // leaves the caller's loop.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[must_use]
    pub fn index_of(self, offset: usize) -> Option<[usize; N]> {
        let (values, found) = self.layout.index_values(offset);
        // `ranked` checked that `N` is the rank, at most `MAX_RANK`.
        found.then(|| core::array::from_fn(|d| values.get(d).copied().unwrap_or(0)))
    }
}
