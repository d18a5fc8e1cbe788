//! The documents' figures as SVG: the array with one colour per tile and the
//! offset in each cell, later tiling levels outlined in red, padding white,
//! and beside it the storage in memory order.

use core::fmt::{self, Write};

use super::view::{slot_entry, slots_per_line, SliceCaption, View, PALETTE};
use super::{Slice, Tuple};
use crate::Layout;

/// Height of a cell, and its least width, in pixels.
const CELL: usize = 34;
const MARGIN: usize = 16;
/// Room for row labels left of the grid.
const LABEL: usize = 30;
/// Top of the grid: below the title, the caption and the column labels.
const TOP: usize = 76;
/// Space between the grid and the memory panel.
const GAP: usize = 48;
/// How far later-level outlines sit inside their cells, so neighbouring
/// outlines stay apart as in the documents' Figure 2.
const INSET: usize = 4;
const RED: &str = "#d62728";

/// A picture of a layout in the style of the documents' figures, as SVG.
///
/// Left: a 2-D slice of the array ([`Slice`]), each cell filled with the
/// colour of its first-level tile and labelled with its offset, tile borders
/// drawn, later tiling levels outlined in red, padding cells white. Right:
/// the storage in memory order, each slot labelled with its number and filled
/// with the colour of the element it holds (padding white). Hovering a cell
/// in a browser shows its index.
///
/// Offsets are `<text class="offset">` and slot numbers `<text class="slot">`.
/// At most 48 rows and columns of the array and 48 lines of memory are drawn.
///
/// # Examples
///
/// ```
/// use xla_layout::render::Svg;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let svg = Svg::new(&l).to_string();
/// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
/// assert!(svg.contains(">17</text>"));
/// assert!(svg.trim_end().ends_with("</svg>"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Svg<'a> {
    layout: &'a Layout,
    slice: Slice,
    max_cells: usize,
    max_lines: usize,
}

impl<'a> Svg<'a> {
    /// The default slice ([`Slice::default_for`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// let svg = xla_layout::render::Svg::new(&l).to_string();
    /// assert!(svg.contains("stroke=\"#d62728\""));
    /// ```
    pub fn new(layout: &'a Layout) -> Self {
        Svg {
            layout,
            slice: Slice::default_for(layout),
            max_cells: 48,
            max_lines: 48,
        }
    }

    /// Draws this slice instead of the default one.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::{Slice, Svg};
    /// let l = xla_layout::parse("f32[2,3,4]").unwrap();
    /// let svg = Svg::new(&l).slice(Slice::parse(&l, "1,:,:").unwrap()).to_string();
    /// assert!(svg.contains(">23</text>"));
    /// ```
    #[must_use]
    pub fn slice(mut self, slice: Slice) -> Self {
        self.slice = slice;
        self
    }
}

/// Writes a value's `Display` text with XML's special characters escaped.
struct Xml<T>(T);

impl<T: fmt::Display> fmt::Display for Xml<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Escape<'a, 'b>(&'a mut fmt::Formatter<'b>);
        impl Write for Escape<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                for c in s.chars() {
                    match c {
                        '<' => self.0.write_str("&lt;")?,
                        '>' => self.0.write_str("&gt;")?,
                        '&' => self.0.write_str("&amp;")?,
                        '"' => self.0.write_str("&quot;")?,
                        c => self.0.write_char(c)?,
                    }
                }
                Ok(())
            }
        }
        write!(Escape(f), "{}", self.0)
    }
}

/// A grid of cells whose groups get outlined: `member` cells are outlined,
/// and a side is drawn where the neighbour is not a member of the same group.
struct Outline<'f> {
    x: usize,
    y: usize,
    /// Cell width.
    w: usize,
    rows: usize,
    cols: usize,
    inset: usize,
    member: &'f dyn Fn(usize, usize) -> Option<usize>,
}

impl<'f> Outline<'f> {
    /// An outline of a grid at `(x, y)` of cells `w` wide, `rows` by `cols`.
    fn new(
        (x, y, w, rows, cols): (usize, usize, usize, usize, usize),
        inset: usize,
        member: &'f dyn Fn(usize, usize) -> Option<usize>,
    ) -> Self {
        Outline {
            x,
            y,
            w,
            rows,
            cols,
            inset,
            member,
        }
    }

    /// Whether cell `(r, c)` and its neighbour at `(r + dr, c + dc)` differ.
    fn edge(&self, r: usize, c: usize, dr: isize, dc: isize) -> bool {
        let here = (self.member)(r, c);
        let (Some(nr), Some(nc)) = (r.checked_add_signed(dr), c.checked_add_signed(dc)) else {
            return true;
        };
        if nr >= self.rows || nc >= self.cols {
            return true;
        }
        (self.member)(nr, nc) != here
    }

    /// One `<path>` tracing every group's border.
    fn write(&self, f: &mut dyn Write, stroke: &str, width: &str) -> fmt::Result {
        write!(f, "<path fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\" stroke-linecap=\"square\" d=\"")?;
        let i = self.inset;
        for r in 0..self.rows {
            for c in 0..self.cols {
                if (self.member)(r, c).is_none() {
                    continue;
                }
                let (x0, y0) = (self.x + c * self.w, self.y + r * CELL);
                let (x1, y1) = (x0 + self.w, y0 + CELL);
                let (top, bottom) = (self.edge(r, c, -1, 0), self.edge(r, c, 1, 0));
                let (left, right) = (self.edge(r, c, 0, -1), self.edge(r, c, 0, 1));
                let cut = |b: bool| if b { i } else { 0 };
                if top {
                    write!(f, "M{} {}H{}", x0 + cut(left), y0 + i, x1 - cut(right))?;
                }
                if bottom {
                    write!(f, "M{} {}H{}", x0 + cut(left), y1 - i, x1 - cut(right))?;
                }
                if left {
                    write!(f, "M{} {}V{}", x0 + i, y0 + cut(top), y1 - cut(bottom))?;
                }
                if right {
                    write!(f, "M{} {}V{}", x1 - i, y0 + cut(top), y1 - cut(bottom))?;
                }
            }
        }
        f.write_str("\"/>\n")
    }
}

/// One cell: a filled box `w` wide with a centred label and a tooltip.
#[allow(clippy::too_many_arguments)] // one call per kind of cell, each spelled out
fn cell(
    f: &mut dyn Write,
    x: usize,
    y: usize,
    w: usize,
    fill: &str,
    class: &str,
    label: Option<usize>,
    title: fmt::Arguments<'_>,
) -> fmt::Result {
    write!(f, "<g><title>{title}</title><rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#b0b0b0\" stroke-width=\"0.75\"/>")?;
    if let Some(n) = label {
        write!(
            f,
            "<text class=\"{class}\" x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">{n}</text>",
            x + w / 2,
            y + CELL / 2 + 5
        )?;
    }
    f.write_str("</g>\n")
}

/// A cell wide enough for `n` in 13-pixel digits, clear of the red outlines.
fn width_for(n: usize) -> usize {
    CELL.max(super::digits(n) * 8 + 2 * INSET + 10)
}

fn fill_of(view: &View<'_>, key: Option<usize>) -> &'static str {
    key.map_or("#ffffff", |k| PALETTE[view.colour(k)].0)
}

impl fmt::Display for Svg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.layout;
        let view = View::new(l, self.slice);
        let rows = view.rows.min(self.max_cells);
        let cols = view.cols.min(self.max_cells);
        let storage = l.storage_len();
        let w = width_for(storage.saturating_sub(1));
        let per_line = slots_per_line(&view.levels, 16);
        // Memory need not run far below the grid: it is the same data again.
        let lines = storage
            .div_ceil(per_line)
            .min(self.max_lines)
            .min(rows.max(16));
        let grid_x = MARGIN + LABEL;
        let mem_x = grid_x + cols.max(4) * w + GAP;
        // Room for the memory caption, about 7 pixels a character.
        let width = mem_x + (per_line * w).max(230) + MARGIN;
        let cut = view.rows > rows || view.cols > cols || lines * per_line < storage;
        let height = TOP + rows.max(lines).max(1) * CELL + MARGIN + if cut { 24 } else { 0 };
        writeln!(
            f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\">"
        )?;
        let spec = Xml(l);
        writeln!(f, "<title>{spec}</title>")?;
        // Opaque, so the picture reads the same on a dark page.
        writeln!(
            f,
            "<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
        )?;
        writeln!(
            f,
            "<text x=\"{MARGIN}\" y=\"26\" font-size=\"16\" font-weight=\"bold\">{spec}</text>"
        )?;
        write!(
            f,
            "<text x=\"{MARGIN}\" y=\"46\" font-size=\"12\" fill=\"#555555\">{}",
            SliceCaption(l, &self.slice)
        )?;
        if view.rows > rows || view.cols > cols {
            write!(
                f,
                "; first {rows} of {} rows, {cols} of {} columns",
                view.rows, view.cols
            )?;
        }
        f.write_str("</text>\n")?;
        self.grid(f, &view, (rows, cols), w)?;
        if storage > 0 {
            write!(f, "<text x=\"{mem_x}\" y=\"{}\" font-size=\"12\" fill=\"#555555\">memory: {storage} slots, ", TOP - 10)?;
            match storage - l.len() {
                0 => f.write_str("no padding</text>\n")?,
                n => writeln!(f, "{n} padding</text>")?,
            }
            self.memory(f, &view, (mem_x, w), per_line, lines)?;
        }
        f.write_str("</svg>\n")
    }
}

impl Svg<'_> {
    fn grid(
        &self,
        f: &mut dyn Write,
        view: &View<'_>,
        (rows, cols): (usize, usize),
        width: usize,
    ) -> fmt::Result {
        let (left, top) = (MARGIN + LABEL, TOP);
        if rows == 0 || cols == 0 {
            return writeln!(f, "<text x=\"{left}\" y=\"{}\" font-size=\"13\">no elements: the array is empty</text>", top + 20);
        }
        let label = |f: &mut dyn Write, lx: usize, ly: usize, n: usize| {
            writeln!(f, "<text x=\"{lx}\" y=\"{ly}\" font-size=\"11\" fill=\"#888888\" text-anchor=\"middle\">{n}</text>")
        };
        if self.slice.cols().is_some() {
            for col in 0..cols {
                label(f, left + col * width + width / 2, top - 8, col)?;
            }
        }
        if self.slice.rows().is_some() {
            for row in 0..rows {
                label(f, left - LABEL / 2, top + row * CELL + CELL / 2 + 4, row)?;
            }
        }
        let rank = self.layout.rank();
        for row in 0..rows {
            for col in 0..cols {
                let (cx, cy) = (left + col * width, top + row * CELL);
                let index = view.index(row, col);
                let index = Tuple(&index[..rank]);
                match view.offset(row, col) {
                    Some(offset) => {
                        let fill = fill_of(view, view.key(1, row, col));
                        let title = format_args!("index {index}: offset {offset}");
                        cell(f, cx, cy, width, fill, "offset", Some(offset), title)?;
                    }
                    None => cell(
                        f,
                        cx,
                        cy,
                        width,
                        "#ffffff",
                        "padding",
                        None,
                        format_args!("padding at {index}"),
                    )?,
                }
            }
        }
        let levels = view.levels.count();
        let at = (left, top, width, rows, cols);
        for level in (2..=levels).rev() {
            let member = |r: usize, c: usize| {
                if view.is_real(r, c) {
                    view.key(level, r, c)
                } else {
                    None
                }
            };
            Outline::new(at, INSET, &member).write(f, RED, "2")?;
        }
        if levels > 0 {
            Outline::new(at, 0, &|r: usize, c: usize| view.key(1, r, c)).write(f, "#222222", "2.5")
        } else {
            writeln!(
                f,
                "<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#222222\" stroke-width=\"2.5\"/>",
                cols * width,
                rows * CELL
            )
        }
    }

    fn memory(
        &self,
        f: &mut dyn Write,
        view: &View<'_>,
        (left, width): (usize, usize),
        per_line: usize,
        lines: usize,
    ) -> fmt::Result {
        let layout = self.layout;
        let storage = layout.storage_len();
        let rank = layout.rank();
        let shown = (lines * per_line).min(storage);
        for slot in 0..shown {
            let (cx, cy) = (
                left + (slot % per_line) * width,
                TOP + (slot / per_line) * CELL,
            );
            match slot_entry(&view.levels, layout, slot) {
                Some((index, key)) => {
                    let title = format_args!("slot {slot}: index {}", Tuple(&index[..rank]));
                    cell(
                        f,
                        cx,
                        cy,
                        width,
                        fill_of(view, key),
                        "slot",
                        Some(slot),
                        title,
                    )?;
                }
                None => cell(
                    f,
                    cx,
                    cy,
                    width,
                    "#ffffff",
                    "slot",
                    Some(slot),
                    format_args!("slot {slot}: padding"),
                )?,
            }
        }
        for level in (2..=view.levels.count()).rev() {
            let member = |row: usize, col: usize| {
                let slot = row * per_line + col;
                if slot >= shown {
                    return None;
                }
                view.levels.key(level, &layout.index_of(slot)?)
            };
            let outline = Outline::new((left, TOP, width, lines, per_line), INSET, &member);
            outline.write(f, RED, "2")?;
        }
        if shown < storage {
            writeln!(
                f,
                "<text x=\"{left}\" y=\"{}\" font-size=\"12\" fill=\"#555555\">... {} more slots</text>",
                TOP + lines * CELL + 18,
                storage - shown
            )?;
        }
        Ok(())
    }
}
