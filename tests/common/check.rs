//! Exhaustive comparison of a layout, by either path (`xla_layout::parse` or
//! `layout!`), against the plain reference in `reference.rs`.
//!

// Each test crate uses only part of this module.
#![allow(dead_code)]

use xla_layout::{Layout, StaticLayout};

use super::reference::{unravel, RefLayout, RefTileDim};

/// How many things one or more checks compared, for the test's summary line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Layouts checked.
    pub layouts: usize,
    /// Logical indices whose offset was compared.
    pub indices: usize,
    /// Storage slots whose `index_of` was compared.
    pub slots: usize,
}

impl Counts {
    /// Adds another tally to this one.
    pub fn add(&mut self, other: Counts) {
        self.layouts += other.layouts;
        self.indices += other.indices;
        self.slots += other.slots;
    }
}

/// Bits per element of the type names the tests use (SPEC.md §1).
fn type_bits(type_name: &str) -> usize {
    match type_name.to_ascii_lowercase().as_str() {
        "s4" | "u4" => 4,
        "pred" | "s8" | "u8" | "f8e4m3fn" | "f8e5m2" => 8,
        "bf16" | "f16" | "s16" | "u16" => 16,
        "f32" | "s32" | "u32" => 32,
        "f64" | "s64" | "u64" | "c64" => 64,
        other => panic!("test table lacks the width of `{other}`"),
    }
}

/// One path's answers, behind plain closures so the checks below are written
/// once and compiled once, whatever the layout type.
struct Subject<'a> {
    /// `"parse"` or `"layout!"`, for failure messages.
    path: &'a str,
    len: usize,
    storage_len: usize,
    storage_bytes: usize,
    padding_len: usize,
    offset: &'a dyn Fn(&[usize]) -> usize,
    try_offset: &'a dyn Fn(&[usize]) -> Option<usize>,
    index_of: &'a dyn Fn(usize) -> Option<Vec<usize>>,
}

/// What the reference says about one layout, computed once per layout and
/// shared by every path compared against it.
pub struct Expected {
    spec: String,
    dims: Vec<usize>,
    slots: Vec<Option<Vec<usize>>>,
    offsets: Vec<usize>,
    bytes: usize,
}

impl Expected {
    /// Materialises the reference's storage for `reference`.
    pub fn new(reference: &RefLayout) -> Self {
        let slots = reference.slots();
        let bytes = (slots.len() * type_bits(reference.type_name)).div_ceil(8);
        Expected {
            spec: reference.spec(),
            dims: reference.dims.clone(),
            offsets: reference.offsets_row_major(),
            slots,
            bytes,
        }
    }

    /// The reference's canonical spec string.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Compares every answer of `subject` with the reference.
    fn compare(&self, subject: &Subject<'_>) -> Counts {
        let (spec, path) = (&self.spec, subject.path);
        assert_eq!(subject.len, self.offsets.len(), "{spec} via {path}: len");
        assert_eq!(
            subject.storage_len,
            self.slots.len(),
            "{spec} via {path}: storage_len"
        );
        assert_eq!(
            subject.storage_bytes, self.bytes,
            "{spec} via {path}: storage_bytes"
        );
        assert_eq!(
            subject.padding_len,
            self.slots.iter().filter(|s| s.is_none()).count(),
            "{spec} via {path}: padding_len"
        );
        for (flat, &expected) in self.offsets.iter().enumerate() {
            let index = unravel(flat, &self.dims);
            assert_eq!(
                (subject.offset)(&index),
                expected,
                "{spec} via {path}: offset({index:?})"
            );
            assert_eq!(
                (subject.try_offset)(&index),
                Some(expected),
                "{spec} via {path}: try_offset({index:?})"
            );
        }
        for (slot, expected) in self.slots.iter().enumerate() {
            let actual = (subject.index_of)(slot);
            assert_eq!(actual, *expected, "{spec} via {path}: index_of({slot})");
        }
        let storage_len = self.slots.len();
        for past in [
            storage_len,
            storage_len + 1,
            storage_len * 2 + 7,
            usize::MAX,
        ] {
            assert_eq!(
                (subject.index_of)(past),
                None,
                "{spec} via {path}: index_of({past}) past storage"
            );
        }
        // One coordinate at or past its dim, the others in range (or all 0
        // when some dim is 0 and no in-range index exists).
        for axis in 0..self.dims.len() {
            let base: Vec<usize> = self.dims.iter().map(|d| d.saturating_sub(1)).collect();
            for bad in [self.dims[axis], self.dims[axis] + 1, usize::MAX] {
                let mut index = base.clone();
                index[axis] = bad;
                assert_eq!(
                    (subject.try_offset)(&index),
                    None,
                    "{spec} via {path}: try_offset({index:?}) out of range"
                );
            }
        }
        Counts {
            layouts: 1,
            indices: self.offsets.len(),
            slots: self.slots.len(),
        }
    }
}

/// Exhaustively compares a parsed [`Layout`] with the reference, including
/// the canonical `Display` and its round trip, and wrong-length indices.
pub fn check_runtime(layout: &Layout, expected: &Expected) -> Counts {
    let spec = expected.spec();
    assert_eq!(layout.to_string(), spec, "Display of {spec}");
    let reparsed = xla_layout::parse(&layout.to_string())
        .unwrap_or_else(|e| panic!("{spec}: Display output does not parse: {e:?}"));
    assert_eq!(&reparsed, layout, "{spec}: Display round trip");
    assert_eq!(layout.dims(), expected.dims, "{spec}: dims");
    assert_eq!(layout.rank(), expected.dims.len(), "{spec}: rank");
    assert_eq!(
        layout.is_empty(),
        expected.offsets.is_empty(),
        "{spec}: is_empty"
    );
    let rank = expected.dims.len();
    let zeros = vec![0; rank + 1];
    assert_eq!(
        layout.try_offset(&zeros),
        None,
        "{spec}: try_offset with rank+1 entries"
    );
    if rank > 0 {
        assert_eq!(
            layout.try_offset(&zeros[..rank - 1]),
            None,
            "{spec}: try_offset with rank-1 entries"
        );
    }
    expected.compare(&Subject {
        path: "parse",
        len: layout.len(),
        storage_len: layout.storage_len(),
        storage_bytes: layout.storage_bytes(),
        padding_len: layout.padding_len(),
        offset: &|index| layout.offset(index),
        try_offset: &|index| layout.try_offset(index),
        index_of: &|offset| layout.index_of(offset).map(|index| index.to_vec()),
    })
}

/// Exhaustively compares a `layout!` value with the reference, and with the
/// same spec parsed at run time.
///
/// Generic only in a thin shell: the answers go through closures, so each
/// `layout!` type adds little code to the test crate.
pub fn check_static<L: StaticLayout>(layout: L, reference: &RefLayout) -> Counts {
    let expected = Expected::new(reference);
    let spec = expected.spec();
    assert_eq!(L::SPEC, spec, "layout!({spec}): SPEC");
    assert_eq!(layout.to_string(), spec, "layout!({spec}): Display");
    assert_eq!(L::DIMS, reference.dims, "layout!({spec}): DIMS");
    assert_eq!(L::RANK, reference.dims.len(), "layout!({spec}): RANK");
    assert_eq!(
        L::MINOR_TO_MAJOR,
        reference.minor_to_major,
        "layout!({spec}): MINOR_TO_MAJOR"
    );
    assert_eq!(
        L::TAIL_ALIGNMENT,
        reference.tail_alignment,
        "layout!({spec}): TAIL_ALIGNMENT"
    );
    assert_eq!(
        L::TRUE_RANK,
        reference.dims.iter().filter(|&&d| d > 1).count(),
        "layout!({spec}): TRUE_RANK"
    );
    let to_index = |slice: &[usize]| {
        let mut index = L::Index::default();
        index.as_mut().copy_from_slice(slice);
        index
    };
    let counts = expected.compare(&Subject {
        path: "layout!",
        len: L::LEN,
        storage_len: L::STORAGE_LEN,
        storage_bytes: L::STORAGE_BYTES,
        padding_len: L::PADDING_LEN,
        offset: &|index| layout.offset(to_index(index)),
        try_offset: &|index| layout.try_offset(to_index(index)),
        index_of: &|offset| layout.index_of(offset).map(|index| index.as_ref().to_vec()),
    });
    let runtime = xla_layout::parse(spec)
        .unwrap_or_else(|e| panic!("{spec}: parse rejects what layout! accepted: {e:?}"));
    assert_eq!(layout.runtime(), runtime, "layout!({spec}).runtime()");
    assert_eq!(layout.tables(), Some(&runtime), "layout!({spec}).tables()");
    // The constants `layout!` leaves to the trait's defaults, against the parser.
    assert_eq!(
        L::ELEMENT_TYPE,
        runtime.element_type(),
        "layout!({spec}): ELEMENT_TYPE"
    );
    assert_eq!(
        L::ELEMENT_BITS,
        runtime.element_bits(),
        "layout!({spec}): ELEMENT_BITS"
    );
    assert_eq!(
        L::MEMORY_SPACE,
        runtime.memory_space(),
        "layout!({spec}): MEMORY_SPACE"
    );
    assert!(
        L::TILES
            .iter()
            .copied()
            .eq(runtime.tiles().iter().map(xla_layout::Tile::dims)),
        "layout!({spec}): TILES"
    );
    // The run-time path gets the same comparisons, so any disagreement
    // between the two paths shows; the counts are those of one path.
    check_runtime(&runtime, &expected);
    counts
}

/// A [`RefLayout`] from compact parts; `None` in a tile is `*`.
pub fn ref_layout(
    type_name: &'static str,
    dims: &[usize],
    minor_to_major: &[usize],
    tiles: &[&[RefTileDim]],
    tail_alignment: usize,
) -> RefLayout {
    RefLayout {
        type_name,
        dims: dims.to_vec(),
        minor_to_major: minor_to_major.to_vec(),
        tiles: tiles.iter().map(|tile| tile.to_vec()).collect(),
        tail_alignment,
    }
}

/// Layouts chosen by hand for the corners random draws rarely reach.
pub fn hard_cases() -> Vec<RefLayout> {
    const S: fn(usize) -> RefTileDim = Some;
    vec![
        // Tiles far larger than the array.
        ref_layout("f32", &[3, 5], &[1, 0], &[&[S(8), S(128)]], 1),
        ref_layout(
            "bf16",
            &[2, 3],
            &[0, 1],
            &[&[S(8), S(128)], &[S(2), S(1)]],
            1,
        ),
        // A later tile reaching past the inner dims into the outer ones.
        ref_layout(
            "f32",
            &[8, 8],
            &[1, 0],
            &[&[S(2), S(4)], &[S(2), S(1), S(1), S(1)]],
            1,
        ),
        ref_layout(
            "f32",
            &[5, 7],
            &[0, 1],
            &[&[S(2), S(4)], &[S(2), S(1), S(1), S(1)]],
            1,
        ),
        ref_layout(
            "f32",
            &[3, 5],
            &[1, 0],
            &[&[S(2), S(2)], &[S(3), S(2), S(2), S(1)]],
            1,
        ),
        // Several `*` in a row, and `*` first.
        ref_layout(
            "f32",
            &[2, 3, 2, 5, 3],
            &[4, 3, 2, 1, 0],
            &[&[None, None, S(2), None, S(3)]],
            1,
        ),
        ref_layout("f32", &[2, 3, 4], &[0, 2, 1], &[&[None, None, S(5)]], 1),
        // `*` at later levels, merging outer and inner dims.
        ref_layout("f32", &[5, 6], &[1, 0], &[&[S(2), S(4)], &[None, S(3)]], 1),
        ref_layout(
            "f32",
            &[5, 6],
            &[1, 0],
            &[&[S(2), S(4)], &[S(2), None, S(3), S(2)]],
            1,
        ),
        ref_layout(
            "u8",
            &[4, 4, 4],
            &[2, 1, 0],
            &[&[S(3)], &[None, None, S(4)], &[None, S(2)]],
            1,
        ),
        // Tiles longer than the rank: size-1 dims are prepended.
        ref_layout("f32", &[5], &[0], &[&[S(2), S(3), S(4)]], 1),
        ref_layout("f32", &[3, 2], &[0, 1], &[&[S(2), None, S(2), S(3)]], 1),
        // Tail alignment, tiled and untiled.
        ref_layout("f32", &[3, 5], &[1, 0], &[&[S(2), S(2)]], 7),
        ref_layout("s4", &[3], &[0], &[], 16),
        // Rank 0, plain and tiled.
        ref_layout("f32", &[], &[], &[], 1),
        ref_layout("u32", &[], &[], &[&[S(128)]], 1),
        ref_layout("f32", &[], &[], &[&[S(2), S(3)], &[None, S(2)]], 4),
        // Zero dims.
        ref_layout("f32", &[0, 5], &[1, 0], &[&[S(2), S(2)]], 4),
        ref_layout("f32", &[3, 0], &[0, 1], &[], 1),
        ref_layout("pred", &[2, 0, 3], &[1, 2, 0], &[&[None, S(2), S(2)]], 1),
        // The SPEC.md §5 rows.
        ref_layout(
            "bf16",
            &[2048],
            &[0],
            &[&[S(1024)], &[S(128)], &[S(2), S(1)]],
            1,
        ),
        ref_layout(
            "bf16",
            &[2, 8, 128],
            &[2, 1, 0],
            &[&[S(8), S(128)], &[S(2), S(1)]],
            1,
        ),
    ]
}

/// A tile in the reference's terms: `None` for `*`.
pub fn ref_tile(tile: &xla_layout::Tile) -> Vec<RefTileDim> {
    tile.dims()
        .iter()
        .map(|d| match d {
            xla_layout::TileDim::Size(n) => Some(*n),
            xla_layout::TileDim::Combine => None,
        })
        .collect()
}

/// Every tiling level of `l` in the reference's terms.
pub fn ref_tiles(l: &Layout) -> Vec<Vec<RefTileDim>> {
    l.tiles().iter().map(ref_tile).collect()
}
