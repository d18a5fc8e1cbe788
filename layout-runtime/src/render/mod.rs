//! Pictures, walk-throughs and C code made from a [`Layout`].
//!
//! Every offset shown comes from the layout's own folded programs, so a
//! picture can never disagree with [`Layout::offset`] or the code `layout!`
//! emits. Each item here is a value that implements `Display`: write it to
//! any [`core::fmt::Write`] (a `String`, a fixed buffer, a UART) with
//! `write!`. Nothing allocates.
//!
//! - [`Grid`]: the documents' Figure 1 as text, a 2-D slice of the array with
//!   each element's offset, tile borders and padding marked, optionally in
//!   ANSI colour; [`Memory`]: the slots in order, with the index each holds.
//! - [`Svg`]: the same picture as an SVG image, one colour per tile, later
//!   tiling levels outlined in red, padding white.
//! - [`Summary`], [`IndexSteps`], [`OffsetSteps`]: the shapes, sizes and
//!   padding, and the documents' worked example for any index or offset.
//! - [`Bitcast`]: whether a reshape or transpose moves data, and if it
//!   does, the first element that moves, stepped through both layouts.
//! - [`CCode`]: a C99 header (also valid C++ and CUDA) with the same
//!   straight-line index arithmetic `layout!` emits in Rust.
//!
//! # Examples
//!
//! ```
//! use xla_layout::render::Grid;
//! let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
//! let text = Grid::new(&l).to_string();
//! assert!(text.contains("| 12   13 | 16   17 | 20    . |"));
//! ```

use core::fmt;

use crate::{Layout, MAX_RANK};

mod bitcast;
mod c;
mod explain;
mod grid;
mod levels;
mod summary;
mod svg;
mod view;

pub use bitcast::Bitcast;
pub use c::CCode;
pub use explain::{IndexSteps, OffsetSteps};
pub use grid::{Grid, Memory};
pub use summary::Summary;
pub use svg::Svg;

/// Which 2-D slice of an array a picture shows: the dim drawn down the rows,
/// the dim drawn across the columns, and the index of every other dim.
///
/// Rank 1 has columns only and rank 0 a single cell. By default the two
/// most minor physical dims are drawn (where the tiles are), in logical order,
/// at index 0 of the other dims.
///
/// # Examples
///
/// ```
/// use xla_layout::render::Slice;
/// let l = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
/// let s = Slice::parse(&l, "1,3,:,:,0").unwrap();
/// assert_eq!((s.rows(), s.cols()), (Some(2), Some(3)));
/// assert_eq!(Slice::default_for(&l).at(), &[0, 0, 0, 0, 0]);
/// assert_eq!(Slice::default_for(&l).rows(), Some(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    rows: Option<usize>,
    cols: Option<usize>,
    at: [usize; MAX_RANK],
    rank: usize,
}

/// Why a slice does not fit a layout; see [`Slice::parse`].
///
/// # Examples
///
/// ```
/// use xla_layout::render::{Slice, SliceError};
/// let l = xla_layout::parse("f32[2,3,4]").unwrap();
/// assert_eq!(Slice::parse(&l, "0,:"), Err(SliceError::Length { found: 2, rank: 3 }));
/// assert_eq!(Slice::parse(&l, "5,:,:").unwrap_err().to_string(), "index `5` is outside dim 0 of size 2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceError {
    /// Not one entry per dim.
    Length {
        /// Entries written.
        found: usize,
        /// The rank of the layout.
        rank: usize,
    },
    /// An entry that is neither a number nor `:`.
    NotAnEntry {
        /// Which entry (0-based).
        position: usize,
    },
    /// More than two `:` entries (a picture has two axes).
    TooManyAxes,
    /// A fixed index past its dim.
    OutOfRange {
        /// The dim.
        dim: usize,
        /// The index written.
        index: usize,
        /// The dim's size.
        size: usize,
    },
}

impl fmt::Display for SliceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SliceError::Length { found, rank } => write!(
                f,
                "the slice lists {found} entries but the shape has rank {rank}; write one number or `:` per dim"
            ),
            SliceError::NotAnEntry { position } => {
                write!(f, "slice entry {position} must be a number or `:`")
            }
            SliceError::TooManyAxes => {
                f.write_str("a picture has two axes; mark at most two dims with `:`")
            }
            SliceError::OutOfRange { dim, index, size } => {
                write!(f, "index `{index}` is outside dim {dim} of size {size}")
            }
        }
    }
}

impl core::error::Error for SliceError {}

impl Slice {
    /// The two most minor physical dims (rows the lower-numbered), at index 0
    /// of every other dim.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::Slice;
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// let s = Slice::default_for(&l);
    /// assert_eq!((s.rows(), s.cols()), (Some(0), Some(1)));
    /// let l = xla_layout::parse("f32[8]").unwrap();
    /// assert_eq!((Slice::default_for(&l).rows(), Slice::default_for(&l).cols()), (None, Some(0)));
    /// ```
    pub fn default_for(layout: &Layout) -> Slice {
        let m2m = layout.minor_to_major();
        let (rows, cols) = match *m2m {
            [] => (None, None),
            [only] => (None, Some(only)),
            [a, b, ..] => (Some(a.min(b)), Some(a.max(b))),
        };
        Slice {
            rows,
            cols,
            at: [0; MAX_RANK],
            rank: layout.rank(),
        }
    }

    /// Reads a slice written like a Python subscript: one entry per dim, `:`
    /// for a drawn dim, a number for a fixed one. With two `:` the first is
    /// drawn down the rows; with one, it is drawn across a single row.
    ///
    /// # Errors
    ///
    /// A [`SliceError`] saying what does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::Slice;
    /// let l = xla_layout::parse("f32[2,3,4]").unwrap();
    /// let s = Slice::parse(&l, " 1 , : , 2 ").unwrap();
    /// assert_eq!((s.rows(), s.cols(), s.at()), (None, Some(1), &[1, 0, 2][..]));
    /// ```
    pub fn parse(layout: &Layout, text: &str) -> Result<Slice, SliceError> {
        let rank = layout.rank();
        let found = if text.trim().is_empty() {
            0
        } else {
            text.split(',').count()
        };
        if found != rank {
            return Err(SliceError::Length { found, rank });
        }
        let mut slice = Slice {
            rows: None,
            cols: None,
            at: [0; MAX_RANK],
            rank,
        };
        let mut axes = [0usize; 2];
        let mut n_axes = 0;
        for (dim, entry) in text.split(',').enumerate().take(rank) {
            let entry = entry.trim();
            if entry == ":" {
                *axes.get_mut(n_axes).ok_or(SliceError::TooManyAxes)? = dim;
                n_axes += 1;
                continue;
            }
            let index: usize = entry
                .parse()
                .map_err(|_| SliceError::NotAnEntry { position: dim })?;
            let size = layout.dims()[dim];
            if index >= size {
                return Err(SliceError::OutOfRange { dim, index, size });
            }
            slice.at[dim] = index;
        }
        match n_axes {
            2 => (slice.rows, slice.cols) = (Some(axes[0]), Some(axes[1])),
            1 => slice.cols = Some(axes[0]),
            _ => {}
        }
        Ok(slice)
    }

    /// The dim drawn down the rows, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// assert_eq!(xla_layout::render::Slice::default_for(&l).rows(), Some(0));
    /// ```
    pub fn rows(&self) -> Option<usize> {
        self.rows
    }

    /// The dim drawn across the columns, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// assert_eq!(xla_layout::render::Slice::default_for(&l).cols(), Some(1));
    /// ```
    pub fn cols(&self) -> Option<usize> {
        self.cols
    }

    /// The index of every dim that is not drawn (drawn dims read 0 here).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::Slice;
    /// let l = xla_layout::parse("f32[2,3,4]").unwrap();
    /// assert_eq!(Slice::parse(&l, "1,:,:").unwrap().at(), &[1, 0, 0]);
    /// ```
    pub fn at(&self) -> &[usize] {
        &self.at[..self.rank]
    }
}

/// An index tuple as the documents write it: `(2,3)`.
pub(crate) struct Tuple<'a>(pub(crate) &'a [usize]);

impl fmt::Display for Tuple<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        f.write_str(")")
    }
}

/// Characters needed to print `n` in decimal.
pub(crate) fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Characters `Tuple` needs for any index of `dims`.
pub(crate) fn tuple_width(dims: &[usize]) -> usize {
    2 + dims.len().saturating_sub(1)
        + dims
            .iter()
            .map(|&d| digits(d.saturating_sub(1)))
            .sum::<usize>()
}
