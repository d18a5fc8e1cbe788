//! The plain reference layout from SPEC.md §4, "pad-reshape-transpose", used by
//! the tests to cross-check the library.
//!
//! Nothing here is clever on purpose. The reference builds the array of logical
//! indices, then moves real data for every step of the definition: a transpose
//! is an explicit gather, padding inserts `None` slots, and a reshape keeps the
//! row-major data and only changes the shape. It shares no code and no index
//! formula with the library, so when the two agree the agreement means
//! something. Keep layouts small: every call materialises the whole storage.

use std::fmt::Write as _;

/// One tile dim: `Some(n)` a size, `None` the `*` combine marker.
pub type RefTileDim = Option<usize>;

/// A layout as SPEC.md describes it, in plain fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefLayout {
    /// XLA element type name, e.g. `"f32"`, `"bf16"`, `"s4"`, `"pred"`.
    pub type_name: &'static str,
    /// Logical dims, in written order.
    pub dims: Vec<usize>,
    /// Logical dim numbers from the fastest-varying to the slowest.
    pub minor_to_major: Vec<usize>,
    /// One tile per tiling level, each written major to minor.
    pub tiles: Vec<Vec<RefTileDim>>,
    /// The `L(n)` tail padding alignment in elements; 1 when absent.
    pub tail_alignment: usize,
}

/// A row-major array of storage slots: `Some(logical index)` or `None` for padding.
#[derive(Clone, Debug)]
struct Grid {
    shape: Vec<usize>,
    data: Vec<Option<Vec<usize>>>,
}

/// Number of elements of a shape; 1 for the empty (scalar) shape.
fn element_count(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The row-major multi-index of the `flat`-th element of `shape`.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        index[axis] = flat % shape[axis];
        flat /= shape[axis];
    }
    index
}

/// The row-major position of `index` in `shape`.
pub fn ravel(index: &[usize], shape: &[usize]) -> usize {
    index
        .iter()
        .zip(shape)
        .fold(0, |flat, (&i, &d)| flat * d + i)
}

impl Grid {
    /// The logical array: element `i` holds its own multi-index.
    fn logical(dims: &[usize]) -> Self {
        let data = (0..element_count(dims))
            .map(|flat| Some(unravel(flat, dims)))
            .collect();
        Grid {
            shape: dims.to_vec(),
            data,
        }
    }

    /// Reinterprets the row-major data under a new shape of the same size.
    fn reshape(self, shape: Vec<usize>) -> Self {
        assert_eq!(element_count(&shape), self.data.len(), "reshape size");
        Grid {
            shape,
            data: self.data,
        }
    }

    /// Axis `a` of the result is axis `perm[a]` of `self`; every slot is gathered.
    fn transpose(&self, perm: &[usize]) -> Self {
        let shape: Vec<usize> = perm.iter().map(|&a| self.shape[a]).collect();
        let mut data = Vec::with_capacity(self.data.len());
        for flat in 0..element_count(&shape) {
            let new_index = unravel(flat, &shape);
            let mut old_index = vec![0; perm.len()];
            for (axis, &from) in perm.iter().enumerate() {
                old_index[from] = new_index[axis];
            }
            data.push(self.data[ravel(&old_index, &self.shape)].clone());
        }
        Grid { shape, data }
    }

    /// Grows every axis to `shape`, filling the new slots with `None`.
    fn pad(&self, shape: Vec<usize>) -> Self {
        let mut data = Vec::new();
        for flat in 0..element_count(&shape) {
            let index = unravel(flat, &shape);
            let inside = index.iter().zip(&self.shape).all(|(&i, &d)| i < d);
            if inside {
                data.push(self.data[ravel(&index, &self.shape)].clone());
            } else {
                data.push(None);
            }
        }
        Grid { shape, data }
    }

    /// One tiling level, SPEC.md §4 steps 1 to 3, as pad-reshape-transpose.
    fn tile(self, tile: &[RefTileDim]) -> Self {
        let k = tile.len();
        // Step 1: prepend size-1 dims until the tile fits.
        let mut shape = self.shape.clone();
        while shape.len() < k {
            shape.insert(0, 1);
        }
        let grid = self.reshape(shape);
        // Step 2: each `*` folds its dim into the next more minor one. Merging
        // adjacent row-major dims is a pure reshape.
        let prefix = grid.shape.len() - k;
        let mut merged = grid.shape[..prefix].to_vec();
        let mut sizes = Vec::new();
        let mut carry = 1;
        for (position, entry) in tile.iter().enumerate() {
            let dim = grid.shape[prefix + position];
            match entry {
                None => carry *= dim,
                Some(size) => {
                    merged.push(carry * dim);
                    sizes.push(*size);
                    carry = 1;
                }
            }
        }
        let grid = grid.reshape(merged);
        // Pad each tiled dim to a multiple of its tile.
        let mut padded = grid.shape[..prefix].to_vec();
        for (i, &size) in sizes.iter().enumerate() {
            padded.push(grid.shape[prefix + i].div_ceil(size) * size);
        }
        let grid = grid.pad(padded);
        // Reshape each tiled dim into (count, tile).
        let mut split = grid.shape[..prefix].to_vec();
        for (i, &size) in sizes.iter().enumerate() {
            split.push(grid.shape[prefix + i] / size);
            split.push(size);
        }
        let grid = grid.reshape(split);
        // Transpose to (prefix, counts..., tiles...).
        let mut perm: Vec<usize> = (0..prefix).collect();
        perm.extend((0..sizes.len()).map(|i| prefix + 2 * i));
        perm.extend((0..sizes.len()).map(|i| prefix + 2 * i + 1));
        grid.transpose(&perm)
    }
}

impl RefLayout {
    /// The same layout with another element type name.
    #[must_use]
    pub fn retyped(&self, type_name: &'static str) -> RefLayout {
        RefLayout {
            type_name,
            ..self.clone()
        }
    }

    /// Panics with a message if the layout breaks a rule of SPEC.md.
    fn validate(&self) {
        let rank = self.dims.len();
        let mut seen = vec![false; rank];
        assert_eq!(self.minor_to_major.len(), rank, "minor_to_major length");
        for &dim in &self.minor_to_major {
            assert!(dim < rank && !seen[dim], "minor_to_major not a permutation");
            seen[dim] = true;
        }
        for tile in &self.tiles {
            // An empty tile (`T()`) tiles no dims: valid, and a no-op.
            assert!(
                tile.is_empty() || matches!(tile.last(), Some(Some(_))),
                "`*` in the most minor tile position"
            );
            assert!(!tile.contains(&Some(0)), "tile size 0");
        }
        assert!(self.tail_alignment >= 1, "L(0)");
    }

    /// The spec string in canonical XLA form, e.g. `f32[3,5]{1,0:T(2,2)}`,
    /// `u32[]{:T(128)}`, `f32[2,3]{0,1}`, `f32[8]{0:T(2,2)L(4)}`.
    ///
    /// `L` is printed only when it is not 1. An untiled scalar prints as `f32[]`,
    /// without `{}`, as XLA does.
    #[must_use]
    pub fn spec(&self) -> String {
        let join = |values: &[usize]| {
            values
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut attrs = String::new();
        if !self.tiles.is_empty() {
            attrs.push('T');
            for tile in &self.tiles {
                let parts: Vec<String> = tile
                    .iter()
                    .map(|entry| entry.map_or_else(|| "*".to_string(), |n| n.to_string()))
                    .collect();
                write!(attrs, "({})", parts.join(",")).expect("writing to a String");
            }
        }
        if self.tail_alignment != 1 {
            write!(attrs, "L({})", self.tail_alignment).expect("writing to a String");
        }
        let mut text = format!(
            "{}[{}]",
            self.type_name.to_ascii_lowercase(),
            join(&self.dims)
        );
        if self.dims.is_empty() && attrs.is_empty() {
            return text;
        }
        text.push('{');
        text.push_str(&join(&self.minor_to_major));
        if !attrs.is_empty() {
            text.push(':');
            text.push_str(&attrs);
        }
        text.push('}');
        text
    }

    /// Every storage slot in memory order: `Some(logical index)` or `None` for
    /// padding. The length is the storage slot count, padding and `L` rounding
    /// included.
    ///
    /// # Panics
    ///
    /// If the layout is invalid: `minor_to_major` not a permutation, an empty
    /// tile, a tile size 0, a `*` in the most minor tile position, or `L(0)`.
    #[must_use]
    pub fn slots(&self) -> Vec<Option<Vec<usize>>> {
        self.validate();
        let rank = self.dims.len();
        // Physical dim p (0 = most major) is logical dim minor_to_major[rank-1-p].
        let physical: Vec<usize> = (0..rank)
            .map(|p| self.minor_to_major[rank - 1 - p])
            .collect();
        let mut grid = Grid::logical(&self.dims).transpose(&physical);
        for tile in &self.tiles {
            grid = grid.tile(tile);
        }
        let mut data = grid.data;
        while data.len() % self.tail_alignment != 0 {
            data.push(None);
        }
        data
    }

    /// The offset of every logical index, in row-major order of the logical
    /// index space (index `(0,..,0)`, `(0,..,1)`, ...), read off `slots()`.
    ///
    /// # Panics
    ///
    /// If the layout is invalid (see [`RefLayout::slots`]), or if a logical index
    /// is missing from the slots or appears twice.
    #[must_use]
    pub fn offsets_row_major(&self) -> Vec<usize> {
        let mut offsets = vec![None; element_count(&self.dims)];
        for (slot, entry) in self.slots().iter().enumerate() {
            if let Some(index) = entry {
                let flat = ravel(index, &self.dims);
                assert!(offsets[flat].is_none(), "index {index:?} stored twice");
                offsets[flat] = Some(slot);
            }
        }
        offsets
            .into_iter()
            .map(|offset| offset.expect("every logical index has a slot"))
            .collect()
    }
}

pub use super::rng::Rng;

/// Type names for random layouts; the element type does not affect slots.
const TYPE_NAMES: [&str; 10] = [
    "f32", "bf16", "s4", "pred", "u8", "s32", "f16", "f64", "u32", "f8e4m3fn",
];

/// Largest storage, in slots, that `random_layout` returns.
const MAX_RANDOM_SLOTS: usize = 4096;

/// The shape one tiling level produces from `shape`, by shape arithmetic only.
/// Used to pick tile lengths and reject large layouts without materialising.
pub fn tiled_shape(shape: &[usize], tile: &[RefTileDim]) -> Vec<usize> {
    let mut shape = shape.to_vec();
    while shape.len() < tile.len() {
        shape.insert(0, 1);
    }
    let prefix = shape.len() - tile.len();
    let mut counts = Vec::new();
    let mut sizes = Vec::new();
    let mut carry: usize = 1;
    for (position, entry) in tile.iter().enumerate() {
        let dim = shape[prefix + position];
        match entry {
            None => carry = carry.saturating_mul(dim),
            Some(size) => {
                counts.push(carry.saturating_mul(dim).div_ceil(*size));
                sizes.push(*size);
                carry = 1;
            }
        }
    }
    let mut out = shape[..prefix].to_vec();
    out.extend(counts);
    out.extend(sizes);
    out
}

/// A random small layout: rank 0..=5, a random `minor_to_major`, 0..=3 tiling
/// levels, tiles of length 1..=rank+1 (so size-1 dims get prepended sometimes),
/// some `*` entries (never most minor), oversized and non-dividing tile sizes,
/// occasional `L(n)`, dims 1..=6 and occasionally 0. Layouts with more than 4096
/// storage slots are rejected and drawn again.
pub fn random_layout(rng: &mut Rng) -> RefLayout {
    loop {
        let layout = random_candidate(rng);
        let rank = layout.dims.len();
        let mut shape: Vec<usize> = (0..rank)
            .map(|p| layout.dims[layout.minor_to_major[rank - 1 - p]])
            .collect();
        for tile in &layout.tiles {
            shape = tiled_shape(&shape, tile);
        }
        let slots = shape
            .iter()
            .fold(1_usize, |count, &dim| count.saturating_mul(dim));
        let slots = slots
            .div_ceil(layout.tail_alignment)
            .saturating_mul(layout.tail_alignment);
        if slots <= MAX_RANDOM_SLOTS {
            return layout;
        }
    }
}

/// One unconstrained draw for [`random_layout`].
fn random_candidate(rng: &mut Rng) -> RefLayout {
    let type_name = TYPE_NAMES[rng.pick(TYPE_NAMES.len())];
    let rank = rng.pick(6);
    let mut dims: Vec<usize> = (0..rank).map(|_| 1 + rng.pick(6)).collect();
    if rank > 0 && rng.pick(12) == 0 {
        dims[rng.pick(rank)] = 0;
    }
    // Fisher-Yates shuffle of 0..rank.
    let mut minor_to_major: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        minor_to_major.swap(i, rng.pick(i + 1));
    }
    let mut tiles = Vec::new();
    // Only the rank of this shape is used, and the rank after tiling does not
    // depend on the order of the dims, so the logical order will do.
    let mut shape = dims.clone();
    for _ in 0..rng.pick(4) {
        // Cap the length so later levels, whose shapes grow, stay readable.
        let length = 1 + rng.pick((shape.len() + 1).min(7));
        let tile: Vec<RefTileDim> = (0..length)
            .map(|position| {
                if position + 1 < length && rng.pick(5) == 0 {
                    None
                } else {
                    Some(random_tile_size(rng))
                }
            })
            .collect();
        shape = tiled_shape(&shape, &tile);
        tiles.push(tile);
    }
    let tail_alignment = if rng.pick(6) == 0 {
        [2, 3, 4, 8, 16][rng.pick(5)]
    } else {
        1
    };
    RefLayout {
        type_name,
        dims,
        minor_to_major,
        tiles,
        tail_alignment,
    }
}

/// Mostly small sizes that often do not divide the dims, sometimes oversized.
fn random_tile_size(rng: &mut Rng) -> usize {
    match rng.pick(10) {
        0..=6 => 1 + rng.pick(4),
        7 | 8 => 1 + rng.pick(8),
        _ => 8 << rng.pick(3),
    }
}

/// Two `u32` layouts of the same random dims for a conversion: the second
/// with a shuffled `minor_to_major` and the tiles and `L` of another random
/// layout (which may pad a lot; callers bound the storage they accept).
pub fn random_conversion_pair(rng: &mut Rng) -> (RefLayout, RefLayout) {
    let a = random_layout(rng).retyped("u32");
    let other = random_layout(rng);
    let n = a.dims.len();
    let mut minor_to_major: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        minor_to_major.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let b = RefLayout {
        type_name: "u32",
        dims: a.dims.clone(),
        minor_to_major,
        tiles: other.tiles,
        tail_alignment: other.tail_alignment,
    };
    (a, b)
}

/// The plain reference of a generated spec, to compare a parsed layout with.
impl From<&super::specgen::GenSpec> for RefLayout {
    fn from(g: &super::specgen::GenSpec) -> Self {
        RefLayout {
            type_name: g.type_name,
            dims: g.dims.clone(),
            minor_to_major: g.minor_to_major.clone(),
            tiles: g.tiles.clone(),
            tail_alignment: g.tail_alignment,
        }
    }
}
