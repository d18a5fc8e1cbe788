//! Tiles: one level of `T(...)`.

use core::fmt;

use crate::fixed::Fixed;
use crate::MAX_TILE_RANK;

/// One dim of a tile: a size, or `*`, which combines this dim into the next more minor one.
///
/// # Examples
///
/// ```
/// use xla_layout::TileDim;
/// let l = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
/// assert_eq!(l.tiles()[0].dims()[0], TileDim::Combine);
/// assert_eq!(l.tiles()[0].dims()[2], TileDim::Size(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileDim {
    /// A tile extent.
    Size(usize),
    /// `*`: merge this dim into the next more minor dim before tiling.
    Combine,
}

impl fmt::Display for TileDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileDim::Size(n) => write!(f, "{n}"),
            TileDim::Combine => f.write_str("*"),
        }
    }
}

/// One tiling level, such as `(8,128)`; it applies to the most minor dims.
///
/// # Examples
///
/// ```
/// use xla_layout::{Tile, TileDim};
/// let t = Tile::new(&[TileDim::Size(8), TileDim::Size(128)]).unwrap();
/// assert_eq!(t.to_string(), "(8,128)");
/// assert_eq!(t.rank(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    dims: Fixed<TileDim, MAX_TILE_RANK>,
}

impl Tile {
    pub(crate) const EMPTY: Tile = Tile {
        dims: Fixed::new(TileDim::Combine),
    };

    /// A tile with these dims; `None` past [`MAX_TILE_RANK`] dims.
    ///
    /// The values are checked when the layout is built, not here.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{Tile, TileDim};
    /// assert!(Tile::new(&[TileDim::Size(2); 17]).is_none());
    /// ```
    pub fn new(dims: &[TileDim]) -> Option<Tile> {
        Self::from_dims(dims)
    }

    /// [`Tile::new`], usable in constants.
    pub(crate) const fn from_dims(dims: &[TileDim]) -> Option<Tile> {
        match Fixed::from_slice(dims, TileDim::Combine) {
            Some(dims) => Some(Tile { dims }),
            None => None,
        }
    }

    /// The dims, most major first.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[8,8]{1,0:T(2,4)}").unwrap();
    /// assert_eq!(l.tiles()[0].dims().len(), 2);
    /// ```
    #[inline]
    pub fn dims(&self) -> &[TileDim] {
        &self.dims
    }

    /// How many dims the tile has.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[8,8]{1,0:T(2,1,1,1)}").unwrap();
    /// assert_eq!(l.tiles()[0].rank(), 4);
    /// ```
    #[inline]
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// `(first, last, size)` of each group of tile dims: the dims that `*`
    /// merges into the sized dim after them, positions in the tile.
    #[inline]
    pub(crate) fn groups(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let mut start = 0;
        self.dims()
            .iter()
            .enumerate()
            .filter_map(move |(j, d)| match d {
                TileDim::Combine => None,
                TileDim::Size(t) => {
                    let g = (start, j, *t);
                    start = j + 1;
                    Some(g)
                }
            })
    }
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, d) in self.dims().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
