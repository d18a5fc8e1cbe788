//! The cells a picture draws, their tiles and colours, shared by the text
//! and SVG pictures.

use core::fmt;

use super::levels::Levels;
use super::Slice;
use crate::{Layout, TileDim, MAX_RANK};

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
        let padded = |dim: Option<usize>| dim.map_or(1, |d| padded_extent(layout, d));
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

/// The extent a drawn dim has in the picture: padded to whole first-level
/// tiles when the tile splits that dim by itself (no `*` merges another dim
/// of size above 1 into it), else the dim itself.
fn padded_extent(layout: &Layout, dim: usize) -> usize {
    let size = layout.dims()[dim];
    let Some(tile) = layout.tiles().first() else {
        return size;
    };
    let rank = layout.rank();
    let tile_rank = tile.rank();
    let Some(minor) = layout.minor_to_major().iter().position(|&d| d == dim) else {
        return size;
    };
    // Physical position from the major end, then its position in the tile.
    let physical = rank - 1 - minor;
    let Some(entry) = (physical + tile_rank).checked_sub(rank) else {
        return size;
    };
    let TileDim::Size(extent) = tile.dims()[entry] else {
        return size;
    };
    // A `*` before this entry merges more major dims into this one; that is
    // harmless only when they all have size 1 (or were prepended).
    let mut merged = entry;
    while merged > 0 && tile.dims()[merged - 1] == TileDim::Combine {
        merged -= 1;
        let size_of_merged = (merged + rank)
            .checked_sub(tile_rank)
            .map_or(1, |q| layout.dims()[layout.minor_to_major()[rank - 1 - q]]);
        if size_of_merged != 1 {
            return size;
        }
    }
    size.div_ceil(extent).saturating_mul(extent)
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

/// How many slots a memory picture shows per line: the first-level tile
/// (or the most minor physical dim when untiled), split into parts of at
/// most `max`, so lines start where tiles start.
pub(crate) fn slots_per_line(layout: &Layout, max: usize) -> usize {
    let unit = match layout.tiles().first() {
        Some(t) => t
            .dims()
            .iter()
            .map(|d| match d {
                TileDim::Size(n) => *n,
                TileDim::Combine => 1,
            })
            .product(),
        None => layout
            .minor_to_major()
            .first()
            .map_or(1, |&d| layout.dims()[d]),
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
    let key = if levels.count() == 0 {
        None
    } else {
        levels.key(1, &index)
    };
    Some((full, key))
}
