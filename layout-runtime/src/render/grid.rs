//! The documents' Figure 1 as text: offsets in a grid with tile borders, and
//! the storage slots in order.

use core::fmt::{self, Write};

use super::view::{slot_entry, slots_per_line, SliceCaption, View, PALETTE};
use super::{digits, tuple_width, Slice, Tuple};
use crate::Layout;

/// The longest line a grid draws, so it fits a terminal.
const LINE: usize = 120;

/// A border between two neighbouring cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Border {
    None,
    /// Between tiles of a later tiling level only.
    Sub,
    /// Between first-level tiles, or the edge of the picture.
    Tile,
}

/// A 2-D slice of a layout as text: each element's offset in its cell,
/// first-level tile borders drawn with `|` and `-`, later levels with `:`
/// and `~`, and padding (the rest of each tile) marked `.`, like the
/// documents' Figure 1. With [`colour`](Self::colour) each tile gets an ANSI
/// background colour.
///
/// Large pictures are cut to [`limits`](Self::limits) rows and columns, and
/// to lines of at most 120 characters.
///
/// # Examples
///
/// ```
/// use xla_layout::render::Grid;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let expected = "\
/// rows: dim 0 (3), columns: dim 1 (5)
///      0    1    2    3    4    5
///   +---------+---------+---------+
/// 0 |  0    1 |  4    5 |  8    . |
/// 1 |  2    3 |  6    7 | 10    . |
///   +---------+---------+---------+
/// 2 | 12   13 | 16   17 | 20    . |
/// 3 |  .    . |  .    . |  .    . |
///   +---------+---------+---------+
/// numbers are offsets; `.` padding; `|` `-` tile borders
/// ";
/// assert_eq!(Grid::new(&l).to_string(), expected);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    layout: &'a Layout,
    slice: Slice,
    colour: bool,
    max_rows: usize,
    max_cols: usize,
}

impl<'a> Grid<'a> {
    /// The default slice ([`Slice::default_for`]), no colour, at most 32 rows
    /// and 32 columns.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[8]{0:T(2,2)}").unwrap();
    /// let text = xla_layout::render::Grid::new(&l).to_string();
    /// assert!(text.contains("|  0    1 |  4    5 |  8    9 | 12   13 |"));
    /// ```
    pub fn new(layout: &'a Layout) -> Self {
        Grid {
            layout,
            slice: Slice::default_for(layout),
            colour: false,
            max_rows: 32,
            max_cols: 32,
        }
    }

    /// Draws this slice instead of the default one.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::{Grid, Slice};
    /// let l = xla_layout::parse("f32[2,3,4]").unwrap();
    /// let s = Slice::parse(&l, "1,:,:").unwrap();
    /// assert!(Grid::new(&l).slice(s).to_string().contains("| 12   13   14   15 |"));
    /// ```
    #[must_use]
    pub fn slice(mut self, slice: Slice) -> Self {
        self.slice = slice;
        self
    }

    /// Colours each tile with ANSI escapes (for a terminal).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert!(xla_layout::render::Grid::new(&l).colour(true).to_string().contains("\x1b["));
    /// ```
    #[must_use]
    pub fn colour(mut self, on: bool) -> Self {
        self.colour = on;
        self
    }

    /// Shows at most `rows` rows and `cols` columns (each at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[100,100]").unwrap();
    /// let text = xla_layout::render::Grid::new(&l).limits(2, 3).to_string();
    /// assert!(text.contains("0 |    0      1      2  ...\n"));
    /// assert!(text.contains("... 98 more rows"));
    /// ```
    #[must_use]
    pub fn limits(mut self, rows: usize, cols: usize) -> Self {
        self.max_rows = rows.max(1);
        self.max_cols = cols.max(1);
        self
    }
}

/// What a picture drew, for its legend.
#[derive(Default)]
struct Seen {
    padding: bool,
    tiles: bool,
    sub: bool,
}

struct Painter<'v, 'a> {
    view: &'v View<'a>,
    colour: bool,
    /// Columns shown.
    cols: usize,
    /// Width of a number, and of the row labels.
    width: usize,
    label: usize,
}

impl Painter<'_, '_> {
    /// The border left of cell `(r, c)`.
    fn vertical(&self, r: usize, c: usize) -> Border {
        if c == 0 || c >= self.view.cols {
            return Border::Tile;
        }
        self.between((r, c - 1), (r, c))
    }

    /// The border above cell `(r, c)`.
    fn horizontal(&self, r: usize, c: usize) -> Border {
        if r == 0 || r >= self.view.rows {
            return Border::Tile;
        }
        self.between((r - 1, c), (r, c))
    }

    fn between(&self, a: (usize, usize), b: (usize, usize)) -> Border {
        let v = self.view;
        // Untiled, every key is `None`: no borders.
        if v.key(1, a.0, a.1) != v.key(1, b.0, b.1) {
            return Border::Tile;
        }
        // Later levels are known for elements only: a border between an
        // element and padding would be a guess.
        if v.is_real(a.0, a.1) && v.is_real(b.0, b.1) {
            for level in 2..=v.levels.count() {
                if v.key(level, a.0, a.1) != v.key(level, b.0, b.1) {
                    return Border::Sub;
                }
            }
        }
        Border::None
    }

    fn junction(up: Border, down: Border, left: Border, right: Border) -> char {
        let has = |a: Border, b: Border, kind: Border| a == kind || b == kind;
        let (tile_v, tile_h) = (has(up, down, Border::Tile), has(left, right, Border::Tile));
        let (sub_v, sub_h) = (has(up, down, Border::Sub), has(left, right, Border::Sub));
        // A tile border runs straight through a later level's border.
        match (tile_v, tile_h, sub_v, sub_h) {
            (true, true, ..) | (false, false, true, true) => '+',
            (true, false, ..) => '|',
            (false, true, ..) => '-',
            (false, false, true, false) => ':',
            (false, false, false, true) => '~',
            (false, false, false, false) => ' ',
        }
    }

    fn vertical_char(b: Border) -> char {
        match b {
            Border::None => ' ',
            Border::Sub => ':',
            Border::Tile => '|',
        }
    }

    /// The line above row `r` (`r == rows` is the bottom edge), if any
    /// border runs there.
    fn rule(&self, f: &mut dyn Write, r: usize, seen: &mut Seen) -> fmt::Result {
        let at = |c: usize| {
            if r < self.view.rows {
                self.horizontal(r, c)
            } else {
                Border::Tile
            }
        };
        if (0..self.cols).all(|c| at(c) == Border::None) {
            return Ok(());
        }
        pad(f, self.label + 1)?;
        let last = if self.cols < self.view.cols {
            self.cols - 1
        } else {
            self.cols
        };
        for c in 0..=last {
            let up = if r > 0 {
                self.vertical(r - 1, c)
            } else {
                Border::None
            };
            let down = if r < self.view.rows {
                self.vertical(r, c)
            } else {
                Border::None
            };
            let left = if c > 0 { at(c - 1) } else { Border::None };
            let right = if c < self.cols { at(c) } else { Border::None };
            f.write_char(Self::junction(up, down, left, right))?;
            if c < self.cols {
                let fill = match right {
                    Border::None => ' ',
                    Border::Sub => '~',
                    Border::Tile => '-',
                };
                seen.sub |= right == Border::Sub;
                seen.tiles |= right == Border::Tile && r > 0 && r < self.view.rows;
                for _ in 0..self.width + 2 {
                    f.write_char(fill)?;
                }
            }
        }
        f.write_char('\n')
    }

    fn row(&self, f: &mut dyn Write, r: usize, seen: &mut Seen) -> fmt::Result {
        if self.view.slice.rows().is_some() {
            write!(f, "{r:>w$} ", w = self.label)?;
        } else {
            pad(f, self.label + 1)?;
        }
        // A cut picture ends in `...`, not in a border it does not reach.
        let last = if self.cols < self.view.cols {
            self.cols - 1
        } else {
            self.cols
        };
        let colour_of = |c: usize| {
            self.view
                .key(1, r, c)
                .filter(|_| self.colour && c < self.view.cols && self.view.is_real(r, c))
                .map(|k| PALETTE[self.view.colour(k)].1)
        };
        let mut before = None;
        for c in 0..=last {
            let border = self.vertical(r, c);
            seen.sub |= border == Border::Sub;
            seen.tiles |= border == Border::Tile && c > 0 && c < self.view.cols;
            let colour = colour_of(c);
            // Inside a tile the separator takes the tile's colour too, so a
            // tile reads as one block.
            match (border, before) {
                (Border::None | Border::Sub, Some(bg)) if colour == before => {
                    let mark = Self::vertical_char(border);
                    write!(f, "\x1b[38;5;16;48;5;{bg}m{mark}\x1b[0m")?;
                }
                _ => f.write_char(Self::vertical_char(border))?,
            }
            if c == self.cols {
                break;
            }
            match (self.view.offset(r, c), colour) {
                (Some(o), Some(bg)) => {
                    write!(f, "\x1b[38;5;16;48;5;{bg}m {o:>w$} \x1b[0m", w = self.width)?;
                }
                (Some(o), None) => write!(f, " {o:>w$} ", w = self.width)?,
                (None, _) => {
                    seen.padding = true;
                    if self.colour {
                        write!(f, " \x1b[2m{:>w$}\x1b[0m ", '.', w = self.width)?;
                    } else {
                        write!(f, " {:>w$} ", '.', w = self.width)?;
                    }
                }
            }
            before = colour;
        }
        if self.cols < self.view.cols {
            f.write_str(" ...")?;
        }
        f.write_char('\n')
    }
}

fn pad(f: &mut dyn Write, n: usize) -> fmt::Result {
    for _ in 0..n {
        f.write_char(' ')?;
    }
    Ok(())
}

impl fmt::Display for Grid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let view = View::new(self.layout, self.slice);
        let s = &self.slice;
        writeln!(f, "{}", SliceCaption(self.layout, s))?;
        if view.rows == 0 || view.cols == 0 {
            return f.write_str("(no elements: the array is empty)\n");
        }
        let rows = view.rows.min(self.max_rows);
        let label = if s.rows().is_some() {
            digits(rows - 1)
        } else {
            0
        };
        let width = digits(self.layout.storage_len().saturating_sub(1))
            .max(digits(view.cols.min(self.max_cols) - 1));
        // Each column takes a border, the number and a space either side.
        let fit = (LINE - label - 7) / (width + 3);
        let cols = view.cols.min(self.max_cols).min(fit.max(1));
        let p = Painter {
            view: &view,
            colour: self.colour,
            cols,
            width,
            label,
        };
        let mut seen = Seen::default();
        if s.cols().is_some() {
            pad(f, p.label + 1)?;
            for c in 0..cols {
                let gap = if c == 0 { "" } else { " " };
                write!(f, "{gap}  {c:>w$}", w = p.width)?;
            }
            f.write_char('\n')?;
        }
        for r in 0..rows {
            p.rule(f, r, &mut seen)?;
            p.row(f, r, &mut seen)?;
        }
        if rows < view.rows {
            pad(f, p.label + 1)?;
            writeln!(f, "... {} more rows", view.rows - rows)?;
        } else {
            p.rule(f, rows, &mut seen)?;
        }
        f.write_str("numbers are offsets")?;
        if seen.padding {
            f.write_str("; `.` padding")?;
        }
        if seen.tiles {
            f.write_str("; `|` `-` tile borders")?;
        }
        if seen.sub {
            f.write_str("; `:` `~` borders of later tiling levels")?;
        }
        f.write_char('\n')
    }
}

/// The storage slots in memory order, each with the logical index it holds
/// or `.` for padding: the right-hand half of the documents' Figure 1.
///
/// Lines start where first-level tiles start; at most 16 slots per line and
/// [`limits`](Self::limits) lines are shown.
///
/// # Examples
///
/// ```
/// use xla_layout::render::Memory;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let text = Memory::new(&l).to_string();
/// assert!(text.starts_with("memory: 24 slots, 9 of them padding\n"));
/// assert!(text.contains("\n   8: (0,4)   .   (1,4)   .\n"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Memory<'a> {
    layout: &'a Layout,
    colour: bool,
    max_lines: usize,
}

impl<'a> Memory<'a> {
    /// No colour, at most 16 lines.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// let text = xla_layout::render::Memory::new(&l).to_string();
    /// assert!(text.contains("   0: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) (0,3) (1,3)\n"));
    /// ```
    pub fn new(layout: &'a Layout) -> Self {
        Memory {
            layout,
            colour: false,
            max_lines: 16,
        }
    }

    /// Colours each element with its tile's ANSI background colour.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert!(xla_layout::render::Memory::new(&l).colour(true).to_string().contains("\x1b["));
    /// ```
    #[must_use]
    pub fn colour(mut self, on: bool) -> Self {
        self.colour = on;
        self
    }

    /// Shows at most `lines` lines (at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3]{0:T(8,128)}").unwrap();
    /// let text = xla_layout::render::Memory::new(&l).limits(1).to_string();
    /// assert!(text.ends_with("... 1008 more slots\n"));
    /// ```
    #[must_use]
    pub fn limits(mut self, lines: usize) -> Self {
        self.max_lines = lines.max(1);
        self
    }
}

impl fmt::Display for Memory<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.layout;
        let storage = l.storage_len();
        match storage - l.len() {
            0 => writeln!(f, "memory: {storage} slots, no padding")?,
            padding => writeln!(f, "memory: {storage} slots, {padding} of them padding")?,
        }
        if storage == 0 {
            return Ok(());
        }
        let view = View::new(l, Slice::default_for(l));
        let per_line = slots_per_line(&view.levels, 16);
        let lines = storage.div_ceil(per_line).min(self.max_lines);
        let shown = (lines * per_line).min(storage);
        let label = digits(shown - 1);
        let width = tuple_width(l.dims());
        let rank = l.rank();
        for line in 0..lines {
            let first = line * per_line;
            write!(f, "{first:>w$}:", w = label + 2)?;
            // Spaces owed after the last entry, written only before another,
            // so no line ends in spaces.
            let mut owed = 0;
            for slot in first..(first + per_line).min(storage) {
                pad(f, owed + 1)?;
                if let Some((index, key)) = slot_entry(&view.levels, l, slot) {
                    let colour = key
                        .filter(|_| self.colour)
                        .map(|k| PALETTE[view.colour(k)].1);
                    if let Some(bg) = colour {
                        write!(f, "\x1b[38;5;16;48;5;{bg}m")?;
                    }
                    write!(f, "{}", Tuple(&index[..rank]))?;
                    if colour.is_some() {
                        f.write_str("\x1b[0m")?;
                    }
                    owed = width - tuple_width_of(&index[..rank]);
                } else {
                    let left = (width - 1) / 2;
                    pad(f, left)?;
                    f.write_char('.')?;
                    owed = width - 1 - left;
                }
            }
            f.write_char('\n')?;
        }
        if shown < storage {
            writeln!(f, "... {} more slots", storage - shown)?;
        }
        Ok(())
    }
}

/// Characters `Tuple` prints for this index.
fn tuple_width_of(index: &[usize]) -> usize {
    2 + index.len().saturating_sub(1) + index.iter().map(|&v| digits(v)).sum::<usize>()
}
