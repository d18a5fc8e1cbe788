//! Where an element sits after each tiling level: the shapes SPEC.md §4
//! steps through, and the tile of each level that holds an element.

use core::convert::Infallible;

use crate::algebra::tiling::{Extents, Level, Tiled};
use crate::{Layout, Tile, MAX_TILED_RANK, MAX_TILING_LEVELS};

/// A shape with room for every tiling step, and an index into it.
#[derive(Clone, Copy)]
pub(crate) struct Point {
    pub(crate) index: [usize; MAX_TILED_RANK],
    pub(crate) shape: [usize; MAX_TILED_RANK],
    pub(crate) len: usize,
}

impl Point {
    /// The zero index of the shape of extents `shape`.
    pub(crate) fn from_shape(shape: &[usize]) -> Point {
        let mut p = Point {
            index: [0; MAX_TILED_RANK],
            shape: [0; MAX_TILED_RANK],
            len: shape.len(),
        };
        p.shape[..p.len].copy_from_slice(shape);
        p
    }

    pub(crate) fn index(&self) -> &[usize] {
        &self.index[..self.len]
    }

    pub(crate) fn shape(&self) -> &[usize] {
        &self.shape[..self.len]
    }

    /// Sets the index whose row-major position is `offset`.
    pub(crate) fn unravel(&mut self, mut offset: usize) {
        for j in (0..self.len).rev() {
            let d = self.shape[j].max(1);
            self.index[j] = offset % d;
            offset /= d;
        }
    }

    /// `linear_index(e, d)`: the row-major position of `e` in `d`.
    pub(crate) fn linear(e: &[usize], d: &[usize]) -> usize {
        e.iter()
            .zip(d)
            .fold(0usize, |a, (&e, &d)| a.wrapping_mul(d).wrapping_add(e))
    }
}

/// The layout stepped once through [`Tiled::step`]: the shape after each
/// level and what each level did, so which tile of each level holds an
/// element.
///
/// The layout's own offset names the element's index in the final shape;
/// undoing the levels one by one (a bijection on elements) gives its index
/// after each earlier level. That shape ends with the level's tile, so the
/// index before the level's inner dims names the tile.
pub(crate) struct Levels<'a> {
    layout: &'a Layout,
    /// The extents after each level, 0 (the physical shape) to the last,
    /// and how many each has.
    shapes: [[usize; MAX_TILED_RANK]; MAX_TILING_LEVELS + 1],
    lens: [usize; MAX_TILING_LEVELS + 1],
    /// What each level did, the first level at 0.
    steps: [Level; MAX_TILING_LEVELS],
    /// The levels stepped: all the layout's, as they stepped when it was built.
    count: usize,
}

impl<'a> Levels<'a> {
    pub(crate) fn new(layout: &'a Layout) -> Levels<'a> {
        let mut levels = Levels {
            layout,
            shapes: [[0; MAX_TILED_RANK]; MAX_TILING_LEVELS + 1],
            lens: [0; MAX_TILING_LEVELS + 1],
            steps: [Level::of(&[], &Tile::EMPTY); MAX_TILING_LEVELS],
            count: 0,
        };
        let Ok(mut shape) = Tiled::physical(layout.dims(), layout.minor_to_major(), (), |_| {
            Ok::<(), Infallible>(())
        });
        levels.keep(0, &shape);
        for (i, tile) in layout.tiles().iter().enumerate() {
            let Ok(step) = shape.step(tile, &mut Extents) else {
                break;
            };
            (levels.steps[i], levels.count) = (step, i + 1);
            levels.keep(i + 1, &shape);
        }
        levels
    }

    /// Keeps the extents of `shape` as the shape after `level` levels.
    fn keep(&mut self, level: usize, shape: &Tiled<()>) {
        for (e, d) in self.shapes[level].iter_mut().zip(shape.dims()) {
            *e = d.extent;
        }
        self.lens[level] = shape.dims().len();
    }

    /// How many tiling levels there are.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The extents after `level` tiling levels, most major first: 0 is the
    /// physical shape.
    pub(crate) fn shape(&self, level: usize) -> &[usize] {
        &self.shapes[level][..self.lens[level]]
    }

    /// What each level did to the shape before it, the first level first.
    pub(crate) fn steps(&self) -> &[Level] {
        &self.steps[..self.count]
    }

    /// The index of element `index` in the shape after `level` tiling levels.
    pub(crate) fn point(&self, level: usize, index: &[usize]) -> Option<Point> {
        if level > self.count {
            return None;
        }
        let mut point = Point::from_shape(self.shape(self.count));
        point.unravel(self.layout.offset_unchecked(index));
        for l in (level + 1..=self.count).rev() {
            let mut undone = Point::from_shape(self.shape(l - 1));
            if !self.steps[l - 1].undo(point.index(), &mut undone.index[..undone.len]) {
                return None;
            }
            point = undone;
        }
        Some(point)
    }

    /// Which tile of `level` (1-based) holds element `index`.
    pub(crate) fn key(&self, level: usize, index: &[usize]) -> Option<usize> {
        let point = self.point(level, index)?;
        let head = self.steps().get(level.checked_sub(1)?)?.outer().end;
        Some(Point::linear(
            &point.index()[..head],
            &point.shape()[..head],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Levels;
    use crate::{parse, LayoutBuilder, TileDim, MAX_RANK};

    /// The tile keys `Levels` derives by undoing levels agree with a second
    /// derivation: the layout cut to its first `L` levels, whose offset
    /// divided by the level's tile volume names the tile.
    #[test]
    fn level_keys_match_truncated_layouts() {
        let specs = [
            "f32[3,5]{1,0:T(2,2)}",
            "bf16[4,8]{1,0:T(2,4)(2,1)}",
            "f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
            "bf16[300]{0:T(128)(32)(2,1)}",
            "f32[2,7,8,3,5]{4,3,2,1,0:T(*,*,2,*,3)(4,1)}",
            "f32[5,3,4]{0,2,1:T(2,2,2,2)(3,1)}",
            "u32[]{:T(128)(4)}",
            "s8[9,7]{0,1:T(8,8)(4,1)L(64)}",
        ];
        for spec in specs {
            let l = parse(spec).unwrap();
            let levels = Levels::new(&l);
            let mut truncated =
                LayoutBuilder::new(l.element_type(), l.dims()).minor_to_major(l.minor_to_major());
            for (level, tile) in l.tiles().iter().enumerate() {
                truncated = truncated.tile(tile.dims());
                let cut = truncated.build().unwrap();
                let volume: usize = tile
                    .dims()
                    .iter()
                    .map(|d| if let TileDim::Size(n) = d { *n } else { 1 })
                    .product();
                let mut index = [0usize; MAX_RANK];
                let rank = l.rank();
                'all: loop {
                    let expected = cut.offset(&index[..rank]) / volume;
                    assert_eq!(
                        levels.key(level + 1, &index[..rank]),
                        Some(expected),
                        "{spec} {:?}",
                        &index[..rank]
                    );
                    for d in (0..rank).rev() {
                        index[d] += 1;
                        if index[d] < l.dims()[d] {
                            continue 'all;
                        }
                        index[d] = 0;
                    }
                    break;
                }
            }
        }
    }
}
