//! Words for a layout: its shapes and sizes, and the documents' worked
//! example (tile index, index within the tile, the sum) for any index or
//! offset.

use core::convert::Infallible;
use core::fmt::{self, Write};

use super::levels::{Levels, Point};
use super::Tuple;
use crate::algebra::tiling::{product, Level, Tiled};
use crate::{Layout, MAX_RANK, MAX_TILED_RANK, MAX_TILE_RANK};

/// `a*B + b` nested for any length: `linear_index` with its arithmetic shown.
struct Horner<'a>(&'a [usize], &'a [usize]);

impl Horner<'_> {
    fn is_sum(&self) -> bool {
        self.0.len() > 1
    }
}

impl fmt::Display for Horner<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (e, d) = (self.0, self.1);
        let Some((first, rest)) = e.split_first() else {
            return f.write_char('0');
        };
        for _ in 2..e.len() {
            f.write_char('(')?;
        }
        write!(f, "{first}")?;
        for (i, v) in rest.iter().enumerate() {
            if i > 0 {
                f.write_char(')')?;
            }
            write!(f, "*{} + {v}", d[i + 1])?;
        }
        Ok(())
    }
}

/// The documents' worked example for one index: at each tiling level the
/// tile index, the index within the tile, and the index in the new shape;
/// then the offset as `linear_index` of the final index, with its arithmetic.
///
/// # Examples
///
/// ```
/// use xla_layout::render::IndexSteps;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let expected = "\
/// index (2,3) is at offset 17
///   physical index (2,3) in (3,5)
///   level 1, tile (2,2):
///     tile index     (2/2,3/2) = (1,1) in (2,3)
///     index in tile  (2%2,3%2) = (0,1) in (2,2)
///     together       (1,1,0,1) in (2,3,2,2)
///   offset = linear_index((1,1),(2,3))*2*2 + linear_index((0,1),(2,2))
///          = (1*3 + 1)*2*2 + (0*2 + 1)
///          = 17
/// ";
/// assert_eq!(IndexSteps::new(&l, &[2, 3]).unwrap().to_string(), expected);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct IndexSteps<'a> {
    layout: &'a Layout,
    index: [usize; MAX_RANK],
}

impl<'a> IndexSteps<'a> {
    /// The steps for `index`, or `None` if it is not an index of the layout
    /// (wrong length or outside the dims).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// assert!(xla_layout::render::IndexSteps::new(&l, &[3, 0]).is_none());
    /// ```
    pub fn new(layout: &'a Layout, index: &[usize]) -> Option<Self> {
        if !layout.contains(index) {
            return None;
        }
        let mut full = [0; MAX_RANK];
        full[..index.len()].copy_from_slice(index);
        Some(IndexSteps {
            layout,
            index: full,
        })
    }
}

impl fmt::Display for IndexSteps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.layout;
        let index = &self.index[..layout.rank()];
        let offset = layout.offset(index);
        writeln!(f, "index {} is at offset {offset}", Tuple(index))?;
        let levels = Levels::new(layout);
        let mut point = Point::from_shape(levels.shape(0));
        for (i, d) in point.index.iter_mut().zip(physical(layout).dims()) {
            *i = index[d.value];
        }
        writeln!(
            f,
            "  physical index {} in {}",
            Tuple(point.index()),
            Tuple(point.shape())
        )?;
        for (level, step) in levels.steps().iter().enumerate() {
            writeln!(f, "  level {}, tile {}:", level + 1, step.tile)?;
            // Where the layout's own offset puts the element after this
            // level; the formulas above it must arrive there.
            let Some(next) = levels.point(level + 1, index) else {
                return Ok(());
            };
            level_forward(f, &point, step, &next)?;
            point = next;
        }
        // The documents split the sum at the last tile: tiles before it,
        // then the position inside it.
        let (head, inner) = match levels.steps().last() {
            Some(step) => (step.outer().end, step.count()),
            None => (point.len, 0),
        };
        let (values, extents) = (point.index(), point.shape());
        if inner == 0 {
            write!(
                f,
                "  offset = linear_index({},{})",
                Tuple(values),
                Tuple(extents)
            )?;
            if values.len() > 1 {
                write!(f, "\n         = {}", Horner(values, extents))?;
            }
            return writeln!(f, "\n         = {offset}");
        }
        let (tile_index, in_tile) = values.split_at(head);
        let (tiles, tile) = extents.split_at(head);
        write!(
            f,
            "  offset = linear_index({},{})",
            Tuple(tile_index),
            Tuple(tiles)
        )?;
        for size in tile {
            write!(f, "*{size}")?;
        }
        writeln!(f, " + linear_index({},{})", Tuple(in_tile), Tuple(tile))?;
        f.write_str("         = ")?;
        paren(f, &Horner(tile_index, tiles))?;
        for size in tile {
            write!(f, "*{size}")?;
        }
        f.write_str(" + ")?;
        paren(f, &Horner(in_tile, tile))?;
        writeln!(f, "\n         = {offset}")
    }
}

/// The physical shape, each dim carrying the logical dim it is.
fn physical(layout: &Layout) -> Tiled<usize> {
    let Ok(shape) = Tiled::physical(layout.dims(), layout.minor_to_major(), 0, |d| {
        Ok::<_, Infallible>(d)
    });
    shape
}

fn paren(f: &mut dyn Write, h: &Horner<'_>) -> fmt::Result {
    if h.is_sum() {
        write!(f, "({h})")
    } else {
        write!(f, "{h}")
    }
}

/// One level, forwards: the group values, their quotients and remainders,
/// and the index in the new shape (`next`, computed by the layout itself).
fn level_forward(f: &mut dyn Write, before: &Point, step: &Level, next: &Point) -> fmt::Result {
    // The shape and index the tile sees: size-1 dims prepended as needed.
    let mut seen = Point::from_shape(&[]);
    seen.len = step.seen(before.index(), 0, &mut seen.index);
    step.seen(before.shape(), 1, &mut seen.shape);
    if step.prepended > 0 {
        writeln!(
            f,
            "    the tile is longer than the shape: prepend {} dim{} of size 1 -> {} in {}",
            step.prepended,
            if step.prepended == 1 { "" } else { "s" },
            Tuple(seen.index()),
            Tuple(seen.shape())
        )?;
    }
    let base = step.base;
    if base > 0 {
        writeln!(
            f,
            "    untouched      {} in {}",
            Tuple(&seen.index()[..base]),
            Tuple(&seen.shape()[..base])
        )?;
    }
    // Each group's value before the split: what `*` makes of its dims.
    let mut values = [0usize; MAX_TILED_RANK];
    for (g, (first, last, _)) in step.groups().enumerate() {
        values[g] = step.merged(first, last, &seen.index()[base..]);
        if first < last {
            let group = base + first..=base + last;
            let (e, d) = (&seen.index()[group.clone()], &seen.shape()[group]);
            writeln!(
                f,
                "    combine        {} in {} -> {} = {} in {}",
                Tuple(e),
                Tuple(d),
                Horner(e, d),
                values[g],
                step.group_extent(first, last)
            )?;
        }
    }
    let list = |f: &mut dyn Write, op: char| -> fmt::Result {
        f.write_char('(')?;
        for (g, (_, _, t)) in step.groups().enumerate() {
            if g > 0 {
                f.write_char(',')?;
            }
            write!(f, "{}{op}{t}", values[g])?;
        }
        f.write_char(')')
    };
    f.write_str("    tile index     ")?;
    list(f, '/')?;
    writeln!(
        f,
        " = {} in {}",
        Tuple(&next.index()[step.outer()]),
        Tuple(&next.shape()[step.outer()])
    )?;
    f.write_str("    index in tile  ")?;
    list(f, '%')?;
    writeln!(
        f,
        " = {} in {}",
        Tuple(&next.index()[step.inner()]),
        Tuple(&next.shape()[step.inner()])
    )?;
    writeln!(
        f,
        "    together       {} in {}",
        Tuple(next.index()),
        Tuple(next.shape())
    )
}

/// The inverse walk for one storage slot: the slot as an index of the final
/// shape, then each tiling level undone (tile index times tile plus index in
/// tile, combined dims split again), to the logical index, or to the step
/// that shows the slot is padding.
///
/// # Examples
///
/// ```
/// use xla_layout::render::OffsetSteps;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let text = OffsetSteps::new(&l, 9).to_string();
/// assert!(text.starts_with("offset 9 is padding\n"));
/// assert!(text.contains("(0*2+0,2*2+1) = (0,5) in (3,5)"));
/// assert!(OffsetSteps::new(&l, 17).to_string().starts_with("offset 17 holds index (2,3)\n"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct OffsetSteps<'a> {
    layout: &'a Layout,
    offset: usize,
}

impl<'a> OffsetSteps<'a> {
    /// The steps for storage slot `offset` (any number: past the storage
    /// the text says so).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// let text = xla_layout::render::OffsetSteps::new(&l, 24).to_string();
    /// assert_eq!(text, "offset 24 is past the storage (24 slots)\n");
    /// ```
    pub fn new(layout: &'a Layout, offset: usize) -> Self {
        OffsetSteps { layout, offset }
    }
}

impl fmt::Display for OffsetSteps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.layout;
        let offset = self.offset;
        if offset >= l.storage_len() {
            return writeln!(
                f,
                "offset {offset} is past the storage ({} slots)",
                l.storage_len()
            );
        }
        match l.index_of(offset) {
            Some(index) => writeln!(f, "offset {offset} holds index {}", Tuple(&index))?,
            None => writeln!(f, "offset {offset} is padding")?,
        }
        let levels = Levels::new(l);
        let mut point = Point::from_shape(levels.shape(levels.count()));
        let filled = product(point.shape());
        if filled.is_some_and(|filled| offset >= filled) {
            return writeln!(
                f,
                "  the tiles fill {} slots; L({}) rounds the storage up to {}, so this slot is tail padding",
                filled.unwrap_or(0),
                l.tail_alignment(),
                l.storage_len()
            );
        }
        point.unravel(offset);
        writeln!(
            f,
            "  in the final shape {}: {}",
            Tuple(point.shape()),
            Tuple(point.index())
        )?;
        for (level, step) in levels.steps().iter().enumerate().rev() {
            let mut before = Point::from_shape(levels.shape(level));
            writeln!(f, "  undo level {}, tile {}:", level + 1, step.tile)?;
            if !level_backward(f, &point, step, &mut before)? {
                return Ok(());
            }
            point = before;
        }
        let mut logical = [0usize; MAX_RANK];
        for (&i, d) in point.index().iter().zip(physical(l).dims()) {
            logical[d.value] = i;
        }
        let logical = &logical[..l.rank()];
        if l.rank() > 0 && levels.count() > 0 {
            writeln!(f, "  logical index {}", Tuple(logical))?;
        } else {
            writeln!(
                f,
                "  physical index {} is logical index {}",
                Tuple(point.index()),
                Tuple(logical)
            )?;
        }
        Ok(())
    }
}

/// One level, backwards: from the index in the shape after the level to the
/// index in `before`. Returns `false` (having said why) when a value falls in
/// padding.
fn level_backward(
    f: &mut dyn Write,
    after: &Point,
    step: &Level,
    before: &mut Point,
) -> Result<bool, fmt::Error> {
    let (outer, inner) = (&after.index()[step.outer()], &after.index()[step.inner()]);
    writeln!(
        f,
        "    tile index {}, index in tile {}",
        Tuple(outer),
        Tuple(inner)
    )?;
    let groups = step.count();
    let mut values = [0usize; MAX_TILED_RANK];
    let mut extents = [0usize; MAX_TILED_RANK];
    f.write_str("    (")?;
    for (g, (first, last, t)) in step.groups().enumerate() {
        if g > 0 {
            f.write_char(',')?;
        }
        write!(f, "{}*{t}+{}", outer[g], inner[g])?;
        values[g] = step.joined(g, t, after.index());
        extents[g] = step.group_extent(first, last);
    }
    writeln!(
        f,
        ") = {} in {}",
        Tuple(&values[..groups]),
        Tuple(&extents[..groups])
    )?;
    // The tile's dims, as the tile saw them.
    let mut tiled = [0usize; MAX_TILE_RANK];
    for (g, (first, last, _)) in step.groups().enumerate() {
        if values[g] >= extents[g] {
            let what = if first < last {
                "the combined dims"
            } else {
                "its dim"
            };
            writeln!(
                f,
                "    {} is past the end of {what} (size {}), so this slot is padding",
                values[g], extents[g]
            )?;
            return Ok(false);
        }
        if first < last {
            step.unmerge(first, last, values[g], &mut tiled);
            writeln!(
                f,
                "    split {} over {}: {}",
                values[g],
                Tuple(&step.extents[first..=last]),
                Tuple(&tiled[first..=last])
            )?;
        }
    }
    // Every group is inside its extent, so the level undoes.
    if !step.undo(after.index(), &mut before.index[..before.len]) {
        return Ok(false);
    }
    writeln!(
        f,
        "    -> {} in {}",
        Tuple(before.index()),
        Tuple(before.shape())
    )?;
    Ok(true)
}
