//! The cells a picture draws, their tiles and colours, shared by the text
//! and SVG pictures.

use core::convert::Infallible;
use core::fmt;

use super::levels::Levels;
use super::Slice;
use crate::algebra::tiling::{product, Carry, Dim, Tiled};
use crate::{Layout, MAX_RANK};

/// The cells a picture shows: a slice padded, along each drawn axis, to
/// whole tiles of the first level where the tile covers that dim alone.
pub(crate) struct View<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) slice: Slice,
    pub(crate) levels: Levels<'a>,
    /// Rows and columns including padding (0 for an empty array).
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// Rows and columns holding elements.
    pub(crate) real_rows: usize,
    pub(crate) real_cols: usize,
    /// Colours are `key % modulus`, chosen so vertical neighbours differ.
    pub(crate) modulus: usize,
}

/// Colours for tiles: soft fills that keep black digits readable, as in the
/// documents' figures. SVG fills and the nearest 256-colour terminal codes.
/// No fill is red, the colour of later-level outlines in the SVG, so those
/// stay visible on every tile.
pub(crate) const PALETTE: [(&str, u8); 8] = [
    ("#8dd3c7", 116),
    ("#ffffb3", 229),
    ("#bebada", 146),
    ("#fdb462", 215),
    ("#80b1d3", 110),
    ("#bc80bd", 139),
    ("#b3de69", 149),
    ("#fccde5", 218),
];

impl<'a> View<'a> {
    pub(crate) fn new(layout: &'a Layout, slice: Slice) -> View<'a> {
        let extent = |dim: Option<usize>| dim.map_or(1, |d| layout.dims()[d]);
        let alone = alone(layout);
        let padded = |dim: Option<usize>| dim.map_or(1, |d| alone[d].unwrap_or(layout.dims()[d]));
        let (mut rows, mut cols) = (padded(slice.rows), padded(slice.cols));
        if layout.is_empty() {
            (rows, cols) = (0, 0);
        }
        let mut view = View {
            layout,
            slice,
            levels: Levels::new(layout),
            rows,
            cols,
            real_rows: extent(slice.rows),
            real_cols: extent(slice.cols),
            modulus: PALETTE.len(),
        };
        view.modulus = view.pick_modulus();
        view
    }

    /// The full index of cell `(r, c)`.
    pub(crate) fn index(&self, r: usize, c: usize) -> [usize; MAX_RANK] {
        let mut index = self.slice.at;
        if let Some(d) = self.slice.rows {
            index[d] = r;
        }
        if let Some(d) = self.slice.cols {
            index[d] = c;
        }
        index
    }

    pub(crate) fn is_real(&self, r: usize, c: usize) -> bool {
        r < self.real_rows && c < self.real_cols
    }

    /// The offset of the element at `(r, c)`, `None` for padding.
    pub(crate) fn offset(&self, r: usize, c: usize) -> Option<usize> {
        let rank = self.layout.rank();
        self.is_real(r, c)
            .then(|| self.layout.offset_unchecked(&self.index(r, c)[..rank]))
    }

    /// The tile of `level` (1-based) holding cell `(r, c)`. A padding cell
    /// lies in the first-level tile of the nearest element (the padded
    /// extent only completes that tile); deeper levels are known for
    /// elements only.
    pub(crate) fn key(&self, level: usize, r: usize, c: usize) -> Option<usize> {
        let rank = self.layout.rank();
        if self.is_real(r, c) {
            return self.levels.key(level, &self.index(r, c)[..rank]);
        }
        if level != 1 || self.real_rows == 0 || self.real_cols == 0 {
            return None;
        }
        let (r, c) = (r.min(self.real_rows - 1), c.min(self.real_cols - 1));
        self.levels.key(1, &self.index(r, c)[..rank])
    }

    /// Colour number of a first-level tile key.
    pub(crate) fn colour(&self, key: usize) -> usize {
        key % self.modulus
    }

    /// Tiles are numbered in memory order; neighbouring tiles down the
    /// rows and across the columns differ by fixed steps (for a row-major
    /// shape, the tiles in a row, and 1), and no step may be a multiple of
    /// the number of colours used, or neighbours would share a colour.
    fn pick_modulus(&self) -> usize {
        let first = self.key(1, 0, 0);
        // Pictures are cut long before this; past it any choice will do.
        let step = |along_rows: bool| {
            let n = if along_rows { self.rows } else { self.cols };
            (1..n.min(1024))
                .map(|i| {
                    if along_rows {
                        self.key(1, i, 0)
                    } else {
                        self.key(1, 0, i)
                    }
                })
                .find(|k| *k != first)
                .and_then(|k| Some(k?.abs_diff(first?)))
        };
        let steps = [step(true), step(false)];
        (3..=PALETTE.len())
            .rev()
            .find(|m| steps.iter().flatten().all(|s| s % m != 0))
            .unwrap_or(PALETTE.len())
    }
}

/// What each dim of the tiled shape holds, for a picture: the logical dim
/// it holds alone, or `None` for a dim a tile prepended or a `*` group
/// whose dims before its last are not all of extent 1.
struct Alone;

type Held = Option<usize>;

impl Carry for Alone {
    type Value = Held;
    type Error = Infallible;
    fn prepended(&mut self) -> Held {
        None
    }
    fn combine(&mut self, major: Dim<Held>, minor: Dim<Held>) -> Result<Held, Infallible> {
        Ok(minor.value.filter(|_| major.extent == 1))
    }
    fn split(&mut self, dim: Dim<Held>, _: usize) -> Result<(Held, Held), Infallible> {
        Ok((dim.value, dim.value))
    }
}

/// The extent in the picture of each dim that the first tiling level
/// splits alone (no `*` merges a more major dim of extent above 1 into
/// it): padded to whole tiles, its tile index and index in the tile
/// together. Any other dim is drawn as it is.
fn alone(layout: &Layout) -> [Option<usize>; MAX_RANK] {
    let mut alone = [None::<usize>; MAX_RANK];
    let Ok(mut shape) = Tiled::physical(layout.dims(), layout.minor_to_major(), None, |d| {
        Ok::<_, Infallible>(Some(d))
    });
    if let Some(Ok(_)) = layout.tiles().first().map(|t| shape.step(t, &mut Alone)) {
        for dim in shape.dims() {
            if let Some(d) = dim.value {
                alone[d] = Some(alone[d].map_or(dim.extent, |e| e.saturating_mul(dim.extent)));
            }
        }
    }
    alone
}

/// Which dims a picture draws: `rows: dim 0 (3), columns: dim 1 (5)`, and
/// for a slice of a larger rank where the other dims are fixed.
pub(crate) struct SliceCaption<'a>(pub(crate) &'a Layout, pub(crate) &'a Slice);

impl fmt::Display for SliceCaption<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (layout, slice) = (self.0, self.1);
        let dims = layout.dims();
        match (slice.rows(), slice.cols()) {
            (Some(rows), Some(cols)) => write!(
                f,
                "rows: dim {rows} ({}), columns: dim {cols} ({})",
                dims[rows], dims[cols]
            )?,
            (None, Some(cols)) => write!(f, "columns: dim {cols} ({})", dims[cols])?,
            _ => f.write_str("a scalar: one element")?,
        }
        let drawn = usize::from(slice.rows().is_some()) + usize::from(slice.cols().is_some());
        if layout.rank() > drawn {
            f.write_str(", at ")?;
            for (dim, at) in slice.at().iter().enumerate() {
                f.write_str(if dim == 0 { "(" } else { "," })?;
                if Some(dim) == slice.rows() || Some(dim) == slice.cols() {
                    f.write_str(":")?;
                } else {
                    write!(f, "{at}")?;
                }
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// How many slots a memory picture shows per line: a first-level tile
/// (its inner dims), or the most minor physical dim when untiled, split
/// into parts of at most `max`, so lines start where tiles start.
pub(crate) fn slots_per_line(levels: &Levels<'_>, max: usize) -> usize {
    let unit = match levels.steps().first() {
        Some(step) => product(&levels.shape(1)[step.inner()]).unwrap_or(usize::MAX),
        None => levels.shape(0).last().copied().unwrap_or(1),
    };
    let max = max.max(1);
    if unit == 0 {
        return 1;
    }
    if unit <= max {
        return unit;
    }
    (1..=max).rev().find(|d| unit % d == 0).unwrap_or(max)
}

/// A logical index stored at `slot` with its first-level tile key, or `None`
/// for padding.
pub(crate) fn slot_entry(
    levels: &Levels<'_>,
    layout: &Layout,
    slot: usize,
) -> Option<([usize; MAX_RANK], Option<usize>)> {
    let index = layout.index_of(slot)?;
    let mut full = [0; MAX_RANK];
    full[..index.len()].copy_from_slice(&index);
    Some((full, levels.key(1, &index)))
}
