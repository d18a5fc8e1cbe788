//! The text pictures against SPEC.md's figures and against the plain
//! reference: every number in a grid is the offset of its cell, every `.`
//! lies outside the dims, and the memory listing names the index the
//! reference stores in each slot.

mod common;

use common::reference::{random_layout, RefLayout, Rng};
use xla_layout::render::{Grid, Memory, Slice};
use xla_layout::{parse, Layout};

/// One cell of a text grid: `Some(offset)` or `None` for `.`.
type Cell = Option<usize>;

/// The cells of each row of a grid, read back from its text: rows are the
/// lines with only a row label before their first border and a number or
/// `.` after it (border lines hold no digits; captions start with words).
fn read_grid(text: &str) -> Vec<Vec<Cell>> {
    text.lines()
        .filter_map(|line| {
            let start = line.find(['|', ':'])?;
            let (label, body) = line.split_at(start);
            let is_row = label.chars().all(|c| c == ' ' || c.is_ascii_digit())
                && body.chars().any(|c| c.is_ascii_digit() || c == '.');
            is_row.then_some(body)
        })
        .map(|body| {
            body.split(['|', ':'])
                .flat_map(str::split_whitespace)
                .filter(|t| *t != "...")
                .map(|t| {
                    if t == "." {
                        None
                    } else {
                        Some(t.parse().expect("a number or `.`"))
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn figure_1_rows_are_the_documents() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let grid = read_grid(&Grid::new(&l).to_string());
    let s = Some;
    assert_eq!(
        grid,
        [
            vec![s(0), s(1), s(4), s(5), s(8), None],
            vec![s(2), s(3), s(6), s(7), s(10), None],
            vec![s(12), s(13), s(16), s(17), s(20), None],
            vec![None; 6],
        ]
    );
}

#[test]
fn figure_2_rows_are_the_documents() {
    let l = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    let text = Grid::new(&l).to_string();
    let grid = read_grid(&text);
    let row = |first: usize| (0..8).map(|i| Some(first + 2 * i)).collect::<Vec<_>>();
    assert_eq!(grid, [row(0), row(1), row(16), row(17)]);
    // Each 2x1 tile of the second level is its own box: `:` between columns
    // inside a 2x4 tile, `|` between 2x4 tiles.
    assert!(text.contains("|  0 :  2 :  4 :  6 |  8 : 10 : 12 : 14 |"));
}

#[test]
fn the_cross_tile_example_matches_its_golden_value() {
    let l = parse("f32[8,8]{1,0:T(2,4)(2,1,1,1)}").unwrap();
    let grid = read_grid(&Grid::new(&l).to_string());
    assert_eq!(grid[6][5], Some(51));
}

/// Compares a grid of `l` with the reference, cell by cell.
fn check_grid(l: &Layout, r: &RefLayout, slice: &Slice) {
    let text = Grid::new(l).slice(*slice).limits(64, 64).to_string();
    let offsets = r.offsets_row_major();
    let grid = read_grid(&text);
    if l.is_empty() {
        assert!(text.contains("(no elements"), "{text}");
        return;
    }
    let flat = |index: &[usize]| index.iter().zip(l.dims()).fold(0, |a, (&i, &d)| a * d + i);
    for (row, cells) in grid.iter().enumerate() {
        for (col, cell) in cells.iter().enumerate() {
            let mut index = slice.at().to_vec();
            if let Some(d) = slice.rows() {
                index[d] = row;
            }
            if let Some(d) = slice.cols() {
                index[d] = col;
            }
            let inside = index.iter().zip(l.dims()).all(|(i, d)| i < d);
            match cell {
                Some(o) => {
                    assert!(
                        inside,
                        "{}: a number outside the dims at {index:?}\n{text}",
                        r.spec()
                    );
                    assert_eq!(
                        *o,
                        offsets[flat(&index)],
                        "{}: cell {index:?}\n{text}",
                        r.spec()
                    );
                }
                None => assert!(
                    !inside,
                    "{}: element {index:?} drawn as padding\n{text}",
                    r.spec()
                ),
            }
        }
    }
    // Every element of the slice is drawn (the limits exceed the dims).
    let count = |d: Option<usize>| d.map_or(1, |d| l.dims()[d]);
    let drawn = grid.iter().flatten().filter(|c| c.is_some()).count();
    assert_eq!(
        drawn,
        count(slice.rows()) * count(slice.cols()),
        "{}\n{text}",
        r.spec()
    );
    // And each drawn dim runs to the end of its tiles, or of the dim; the
    // columns may be cut to fit a line, marked `...`.
    let extent = |d: Option<usize>| d.map_or(1, |d| drawn_extent(r, d));
    assert_eq!(grid.len(), extent(slice.rows()), "{}\n{text}", r.spec());
    let cut = text.lines().any(|line| line.ends_with(" ..."));
    for cells in &grid {
        let full = cells.len() == extent(slice.cols());
        assert!(
            full || cut && cells.len() < extent(slice.cols()),
            "{}\n{text}",
            r.spec()
        );
    }
}

/// The extent a picture gives logical dim `d`: the dim padded to whole
/// tiles of the first level when that level's tile has a size for `d` and
/// every dim a `*` merges into it has size 1 (or was prepended), else the
/// dim itself. Worked out from the written tile, the way SPEC.md §4 lines
/// a tile up with the physical dims.
fn drawn_extent(r: &RefLayout, d: usize) -> usize {
    let size = r.dims[d];
    let Some(tile) = r.tiles.first() else {
        return size;
    };
    // The logical dim at each position the tile sees, prepended ones `None`.
    let mut seen: Vec<Option<usize>> = r.minor_to_major.iter().rev().map(|&d| Some(d)).collect();
    while seen.len() < tile.len() {
        seen.insert(0, None);
    }
    let start = seen.len() - tile.len();
    let Some(j) = seen
        .iter()
        .position(|&s| s == Some(d))
        .and_then(|p| p.checked_sub(start))
    else {
        return size;
    };
    let Some(t) = tile[j] else {
        return size;
    };
    let merged_are_1 = (0..j)
        .rev()
        .take_while(|&i| tile[i].is_none())
        .all(|i| seen[start + i].map_or(1, |m| r.dims[m]) == 1);
    if merged_are_1 {
        size.div_ceil(t) * t
    } else {
        size
    }
}

#[test]
fn grids_of_random_layouts_show_the_reference_offsets() {
    let mut rng = Rng::new(0x0F16_0001);
    for _ in 0..300 {
        let r = random_layout(&mut rng);
        let l = parse(&r.spec()).unwrap_or_else(|e| panic!("{}: {e}", r.spec()));
        check_grid(&l, &r, &Slice::default_for(&l));
        // And a slice through the middle of every other dim.
        if l.rank() >= 3 && !l.is_empty() {
            let text: Vec<String> = l
                .dims()
                .iter()
                .enumerate()
                .map(|(d, &n)| {
                    if d == 0 || d == l.rank() - 1 {
                        ":".to_string()
                    } else {
                        (n / 2).to_string()
                    }
                })
                .collect();
            let slice = Slice::parse(&l, &text.join(",")).unwrap();
            check_grid(&l, &r, &slice);
        }
    }
}

/// Thousands of random layouts, every picture and walk-through of each:
/// none panics, the grid and the memory listing agree with the reference
/// as above, and the walk-throughs start from the reference's offset and
/// slot.
#[test]
fn thousands_of_random_layouts_draw_and_explain_the_reference() {
    use xla_layout::render::{IndexSteps, OffsetSteps, Summary, Svg};
    let mut rng = Rng::new(0x0F16_0003);
    for _ in 0..2000 {
        let r = random_layout(&mut rng);
        let spec = r.spec();
        let l = parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        check_grid(&l, &r, &Slice::default_for(&l));
        let slots = r.slots();
        let memory = Memory::new(&l).limits(usize::MAX).to_string();
        assert_eq!(read_memory(&memory), slots, "{spec}\n{memory}");
        let colour = Memory::new(&l).colour(true).to_string();
        let first = memory.lines().next().unwrap_or_default();
        assert!(colour.starts_with(first), "{spec}\n{colour}");
        let summary = Summary::new(&l).to_string();
        assert!(summary.starts_with(&format!("layout    {l}\n")), "{spec}");
        assert!(
            Svg::new(&l).to_string().trim_end().ends_with("</svg>"),
            "{spec}"
        );
        let offsets = r.offsets_row_major();
        let mut index = vec![0; l.rank()];
        for (flat, offset) in offsets.iter().enumerate().step_by(13) {
            let mut rest = flat;
            for (i, &d) in index.iter_mut().zip(&r.dims).rev() {
                (*i, rest) = (rest % d, rest / d);
            }
            let text = IndexSteps::new(&l, &index).unwrap().to_string();
            assert!(
                text.lines()
                    .next()
                    .unwrap()
                    .ends_with(&format!(" is at offset {offset}")),
                "{spec}\n{text}"
            );
        }
        for (slot, held) in slots.iter().enumerate().step_by(31) {
            let text = OffsetSteps::new(&l, slot).to_string();
            let first = match held {
                Some(index) => format!("offset {slot} holds index {}", tuple(index)),
                None => format!("offset {slot} is padding"),
            };
            assert_eq!(text.lines().next(), Some(first.as_str()), "{spec}\n{text}");
        }
    }
}

/// An index as the walk-throughs write it: `(2,3)`.
fn tuple(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(ToString::to_string).collect();
    format!("({})", parts.join(","))
}

/// The index in each slot of a memory listing, read back from its text.
fn read_memory(text: &str) -> Vec<Option<Vec<usize>>> {
    let mut slots = Vec::new();
    for line in text.lines().skip(1) {
        let Some((first, rest)) = line.split_once(':') else {
            continue;
        };
        assert_eq!(
            first.trim().parse::<usize>().unwrap(),
            slots.len(),
            "lines are consecutive"
        );
        for token in rest.split_whitespace() {
            slots.push(if token == "." {
                None
            } else {
                let inner = token.trim_start_matches('(').trim_end_matches(')');
                Some(if inner.is_empty() {
                    Vec::new()
                } else {
                    inner.split(',').map(|n| n.parse().unwrap()).collect()
                })
            });
        }
    }
    slots
}

#[test]
fn memory_lists_the_reference_slots() {
    let mut rng = Rng::new(0x0F16_0002);
    for _ in 0..300 {
        let r = random_layout(&mut rng);
        let l = parse(&r.spec()).unwrap();
        let text = Memory::new(&l).limits(usize::MAX).to_string();
        assert_eq!(read_memory(&text), r.slots(), "{}\n{text}", r.spec());
    }
}

#[test]
fn figure_1_memory_is_the_right_half_of_the_figure() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let text = Memory::new(&l).to_string();
    let padding: Vec<usize> = read_memory(&text)
        .iter()
        .enumerate()
        .filter_map(|(slot, index)| index.is_none().then_some(slot))
        .collect();
    assert_eq!(padding, [9, 11, 14, 15, 18, 19, 21, 22, 23]);
}

#[test]
fn colour_is_plain_ansi_and_only_on_request() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let plain = Grid::new(&l).to_string();
    assert!(!plain.contains('\x1b'));
    let coloured = Grid::new(&l).colour(true).to_string();
    // Removing the escapes gives the plain picture back.
    let mut stripped = String::new();
    let mut rest = coloured.as_str();
    while let Some(start) = rest.find('\x1b') {
        stripped.push_str(&rest[..start]);
        let end = rest[start..].find('m').expect("an escape ends in `m`");
        rest = &rest[start + end + 1..];
    }
    stripped.push_str(rest);
    assert_eq!(stripped, plain);
    // Neighbouring tiles get different colours: each coloured cell is
    // `ESC[38;5;16;48;5;{colour}m {offset} ESC[0m`.
    let colour_of = |offset: usize| {
        coloured
            .split("\x1b[38;5;16;48;5;")
            .skip(1)
            .find_map(|cell| {
                let (colour, rest) = cell.split_once('m')?;
                let text = rest.split('\x1b').next()?;
                (text.trim() == offset.to_string()).then(|| colour.to_string())
            })
            .unwrap_or_else(|| panic!("offset {offset} is coloured"))
    };
    assert_eq!(colour_of(0), colour_of(3));
    assert_ne!(colour_of(0), colour_of(4));
    assert_ne!(colour_of(0), colour_of(12));
    assert_ne!(colour_of(4), colour_of(16));
}

#[test]
fn large_pictures_are_cut_to_their_limits() {
    let l = parse("f32[300,300]{1,0:T(8,128)}").unwrap();
    let text = Grid::new(&l).limits(5, 4).to_string();
    assert_eq!(read_grid(&text).len(), 5);
    assert!(text.contains("... 299 more rows"), "{text}");
    assert!(text.lines().all(|line| line.len() <= 120));
    let text = Grid::new(&l).to_string();
    assert!(text.lines().all(|line| line.len() <= 120), "{text}");
}

#[test]
fn extreme_layouts_render_without_panic() {
    use xla_layout::render::{CCode, IndexSteps, OffsetSteps, Summary, Svg};
    let specs = [
        "f32[2,1,2,1,2,1,2,1,2,1,2,1,2,1,2,3]",
        "u8[100000,100000]{0,1:T(8,128)(4,1)}",
        "f32[9]{0:T(2)(2)(2)(2)(2)(2)(2)(2)}",
        "s1[70,70]{1,0:T(32,128)(32,1)E(1)}",
        "pred[0,1000000]{1,0:T(32,128)}",
        "c128[3,3]{1,0:T(1,1,1,1,1,1,1,2)L(1000)S(3)}",
        "f32[5,1,1,7]{3,0,2,1:T(*,*,*,3)(1000000)}",
        "f32[]",
        "f32[3]{0:T(*,*,*,2)}",
    ];
    for spec in specs {
        let l = parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let mut all = String::new();
        all += &Summary::new(&l).to_string();
        all += &Grid::new(&l).colour(true).to_string();
        all += &Memory::new(&l).colour(true).to_string();
        all += &Svg::new(&l).to_string();
        all += &CCode::new(&l).to_string();
        if let Some(first) = (!l.is_empty()).then(|| vec![0; l.rank()]) {
            all += &IndexSteps::new(&l, &first).unwrap().to_string();
            let last: Vec<usize> = l.dims().iter().map(|d| d - 1).collect();
            all += &IndexSteps::new(&l, &last).unwrap().to_string();
        }
        for slot in [
            0,
            1,
            l.storage_len() / 2,
            l.storage_len().saturating_sub(1),
            l.storage_len(),
            usize::MAX,
        ] {
            all += &OffsetSteps::new(&l, slot).to_string();
        }
        assert!(all.contains(&l.to_string()), "{spec}");
    }
}
