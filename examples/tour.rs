//! A tour of the layouts XLA's documents describe, each a compile-time
//! `layout!` value, each drawn by the same code that computes its offsets.
//!
//! ```sh
//! cargo run --example tour
//! ```
//!
//! Colour is used on a terminal unless `NO_COLOR` is set.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};

use xla_layout::render::{Grid, IndexSteps, Memory, Slice, Summary};
use xla_layout::tpu::tpu_layout;
use xla_layout::{layout, ElementType, Layout};

layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
layout!(struct Figure2 = "bf16[4,8]{1,0:T(2,4)(2,1)}");
layout!(struct CrossTile = "f32[8,8]{1,0:T(2,4)(2,1,1,1)}");
layout!(struct Combined = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
layout!(struct Merged = "f32[112,110]{1,0:T(2,3)}");
layout!(struct ColumnMajor = "f32[10,20]{0,1}");
layout!(struct Padded = "f32[2,3]{0,1}", padded_dimensions = [3, 5]);

// Every number the tour prints about these is a constant, checked here when
// the tour is compiled.
const _: () = {
    assert!(Figure1.offset([2, 3]) == 17);
    assert!(Figure1.storage_len() == 24);
    assert!(Figure2.offset([1, 0]) == 1);
    assert!(CrossTile.offset([6, 5]) == 51);
    assert!(Combined.offset([1, 3, 5, 7, 9]) == Merged.offset([85, 79]));
    assert!(Combined.storage_len() == 12432);
    assert!(ColumnMajor.offset([3, 5]) == 53);
    assert!(Padded.storage_len() == 15);
};

/// Writes one stop of the tour: a title, what to look at, and the pictures.
struct Tour {
    out: String,
    colour: bool,
    stop: usize,
}

impl Tour {
    fn stop(&mut self, title: &str, words: &str) {
        self.stop += 1;
        let heading = format!("{}. {title}", self.stop);
        let _ = write!(
            self.out,
            "\n{heading}\n{}\n{words}\n\n",
            "=".repeat(heading.len())
        );
    }

    fn summary(&mut self, l: &Layout) {
        let _ = writeln!(self.out, "{}", Summary::new(l));
    }

    fn grid(&mut self, l: &Layout, slice: Slice, (rows, cols): (usize, usize)) {
        let grid = Grid::new(l)
            .slice(slice)
            .colour(self.colour)
            .limits(rows, cols);
        let _ = writeln!(self.out, "{grid}");
    }

    fn memory(&mut self, l: &Layout, lines: usize) {
        let _ = writeln!(
            self.out,
            "{}",
            Memory::new(l).colour(self.colour).limits(lines)
        );
    }

    fn steps(&mut self, l: &Layout, index: &[usize]) {
        if let Some(steps) = IndexSteps::new(l, index) {
            let _ = writeln!(self.out, "{steps}");
        }
    }

    /// A TPU format: its size, whether the chooser picks it, and a corner.
    fn format(&mut self, l: &Layout, element: ElementType, dims: &[usize]) {
        let chosen = tpu_layout(element, dims).is_ok_and(|c| c == *l);
        let pick = if chosen { ", the chooser's pick" } else { "" };
        let _ = writeln!(self.out, "{l}  ({} bytes{pick})", l.storage_bytes());
        self.grid(l, Slice::default_for(l), (10, 8));
    }

    fn text(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}\n");
    }
}

fn main() {
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut t = Tour {
        out: String::new(),
        colour,
        stop: 0,
    };
    t.out.push_str(
        "A tour of XLA's tiled layouts: each is a `layout!` value, drawn with its offsets.\n",
    );
    t.out.push_str(
        "Try your own: cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}' --index 2,3\n",
    );

    figures(&mut t);
    tpu_formats(&mut t);

    let padded = Padded.runtime();
    t.stop(
        "The old padded_dimensions",
        "f32[2,3] column-major padded to [3,5] is one tile over the whole padded array:\n\
         memory reads a d . b e . c f . . . . . . .",
    );
    t.summary(&padded);
    t.memory(&padded, 4);

    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().write_all(t.out.as_bytes());
}

/// The documents' figures, cross-tile tiling, combining and column-major.
fn figures(t: &mut Tour) {
    let fig1 = Figure1.runtime();
    t.stop(
        "Figure 1: f32[3,5] in 2x2 tiles",
        "Tiles cover the shape, then the elements of each tile are laid out row by\n\
         row. The tiles stick out past the array, so the storage has padding.",
    );
    t.summary(&fig1);
    t.grid(&fig1, Slice::default_for(&fig1), (32, 32));
    t.memory(&fig1, 16);
    t.text("The documents' worked example, element (2,3):");
    t.steps(&fig1, &[2, 3]);

    let fig2 = Figure2.runtime();
    t.stop(
        "Figure 2: tiling twice, (2,4) then (2,1)",
        "Each 2x4 tile is tiled again by 2x1 (the `:` boxes): the two elements of\n\
         each box sit next to each other in memory. This is the bf16 format of TPUs,\n\
         (8,128)(2,1), with a smaller first tile.",
    );
    t.summary(&fig2);
    t.grid(&fig2, Slice::default_for(&fig2), (32, 32));
    t.memory(&fig2, 16);

    let cross = CrossTile.runtime();
    t.stop(
        "A later tile may reach across tiles: (2,4)(2,1,1,1)",
        "The second tile has four dims, so it reaches past the 2x4 tiles into the\n\
         dims that count tiles: it pairs tile rows, not rows.",
    );
    t.grid(&cross, Slice::default_for(&cross), (32, 32));
    t.steps(&cross, &[6, 5]);

    let combined = Combined.runtime();
    t.stop(
        "Combining dims with `*`: T(*,*,2,*,3)",
        "A `*` merges a dim into the next more minor one: f32[2,7,8,11,10] is tiled\n\
         as f32[112,110] is by (2,3). Rows here are dim 2, columns dim 3.",
    );
    t.summary(&combined);
    t.grid(
        &combined,
        Slice::parse(&combined, "0,0,:,:,0").unwrap_or_else(|_| Slice::default_for(&combined)),
        (8, 11),
    );
    t.steps(&combined, &[1, 3, 5, 7, 9]);
    t.text(&format!(
        "f32[112,110]{{1,0:T(2,3)}} at (1*56+3*8+5, 7*10+9) = (85,79): offset {}",
        Merged.offset([85, 79])
    ));

    let column = ColumnMajor.runtime();
    t.stop(
        "No tiles: minor_to_major alone",
        "{0,1} makes dim 0 the fastest-varying: column-major.",
    );
    t.grid(&column, Slice::default_for(&column), (4, 8));
    t.steps(&column, &[3, 5]);
}

/// The TPU formats of SPEC.md section 6, each with the chooser's pick.
fn tpu_formats(t: &mut Tour) {
    t.stop(
        "The TPU formats",
        "8x128 tiles match the 8x128 vector registers; narrower types pack rows into\n\
         32-bit words with a second tile. The chooser of SPEC.md section 6 picks each:",
    );
    t.format(
        &layout!("f32[16,256]{1,0:T(8,128)}").runtime(),
        ElementType::F32,
        &[16, 256],
    );
    t.format(
        &layout!("f32[2,256]{1,0:T(2,128)}").runtime(),
        ElementType::F32,
        &[2, 256],
    );
    t.format(
        &layout!("bf16[16,256]{1,0:T(8,128)(2,1)}").runtime(),
        ElementType::Bf16,
        &[16, 256],
    );
    t.format(
        &layout!("s8[16,256]{1,0:T(8,128)(4,1)}").runtime(),
        ElementType::S8,
        &[16, 256],
    );
    t.format(
        &layout!("s4[16,256]{1,0:T(8,128)(8,1)E(4)}").runtime(),
        ElementType::S4,
        &[16, 256],
    );
    t.format(
        &layout!("pred[32,256]{1,0:T(32,128)(32,1)E(1)}").runtime(),
        ElementType::Pred,
        &[32, 256],
    );
    let vector = layout!("bf16[2048]{0:T(1024)(128)(2,1)}").runtime();
    t.text(
        "Rank 1, 16-bit: rows of 128, pairs of rows packed. Element 128 sits next to element 0:",
    );
    t.memory(&vector, 2);
}
