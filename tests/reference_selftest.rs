//! Checks the plain reference in `tests/common/reference.rs` against SPEC.md by
//! itself, without the library: the golden values of §5, the figures, the
//! combining example, §7's `padded_dimensions` example, and §4's per-index rule
//! on random layouts.

mod common;

use common::reference::random_layout;
use common::reference::{unravel, RefLayout, RefTileDim, Rng};

/// Element type names the test parser knows; `RefLayout` wants `&'static str`.
const KNOWN_TYPES: [&str; 12] = [
    "f32", "bf16", "s4", "pred", "u8", "s32", "f16", "f64", "u32", "f8e4m3fn", "s8", "c64",
];

/// Comma-separated numbers; the empty string is the empty list.
fn numbers(text: &str) -> Vec<usize> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split(',')
        .map(|n| n.parse().unwrap_or_else(|_| panic!("bad number `{n}`")))
        .collect()
}

/// Parses the canonical form `spec()` prints, and nothing else.
fn parse(text: &str) -> RefLayout {
    let (type_part, rest) = text.split_once('[').expect("`[`");
    let (dims_part, rest) = rest.split_once(']').expect("`]`");
    let type_name = KNOWN_TYPES
        .into_iter()
        .find(|&name| name == type_part)
        .unwrap_or_else(|| panic!("unknown type `{type_part}`"));
    let dims = numbers(dims_part);
    let mut layout = RefLayout {
        type_name,
        minor_to_major: (0..dims.len()).rev().collect(),
        dims,
        tiles: Vec::new(),
        tail_alignment: 1,
    };
    if rest.is_empty() {
        return layout;
    }
    let body = rest
        .strip_prefix('{')
        .and_then(|body| body.strip_suffix('}'))
        .expect("layout in braces");
    let (m2m, mut attrs) = body.split_once(':').unwrap_or((body, ""));
    layout.minor_to_major = numbers(m2m);
    if let Some(after) = attrs.strip_prefix('T') {
        attrs = after;
        while let Some(after) = attrs.strip_prefix('(') {
            let (group, after) = after.split_once(')').expect("`)`");
            let tile = group
                .split(',')
                .map(|t| if t == "*" { None } else { Some(numbers(t)[0]) })
                .collect();
            layout.tiles.push(tile);
            attrs = after;
        }
    }
    if let Some(after) = attrs.strip_prefix("L(") {
        let (n, after) = after.split_once(')').expect("`)`");
        layout.tail_alignment = numbers(n)[0];
        attrs = after;
    }
    assert!(attrs.is_empty(), "unparsed `{attrs}` in `{text}`");
    layout
}

/// The slot holding logical `index`, found by searching `slots()`.
fn offset_of(layout: &RefLayout, index: &[usize]) -> usize {
    layout
        .slots()
        .iter()
        .position(|slot| slot.as_deref() == Some(index))
        .expect("index is stored")
}

/// SPEC.md §3's `linear_index`.
fn linear_index(index: &[usize], shape: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&e, &d)| acc * d + e)
}

/// SPEC.md §4's per-index rule, written independently of the reference:
/// returns (offset of `index`, storage slots).
fn formula(layout: &RefLayout, index: &[usize]) -> (usize, usize) {
    let rank = layout.dims.len();
    let physical = |p: usize| layout.minor_to_major[rank - 1 - p];
    let mut shape: Vec<usize> = (0..rank).map(|p| layout.dims[physical(p)]).collect();
    let mut e: Vec<usize> = (0..rank).map(|p| index[physical(p)]).collect();
    for tile in &layout.tiles {
        while shape.len() < tile.len() {
            shape.insert(0, 1);
            e.insert(0, 0);
        }
        let prefix = shape.len() - tile.len();
        let (mut outer_d, mut outer_e, mut inner_d, mut inner_e) = (vec![], vec![], vec![], vec![]);
        // The dim being combined so far, as (size, index).
        let (mut carry_d, mut carry_e) = (1, 0);
        for (j, t) in tile.iter().enumerate() {
            let d = carry_d * shape[prefix + j];
            let x = carry_e * shape[prefix + j] + e[prefix + j];
            if let Some(t) = *t {
                outer_d.push(d.div_ceil(t));
                outer_e.push(x / t);
                inner_d.push(t);
                inner_e.push(x % t);
                (carry_d, carry_e) = (1, 0);
            } else {
                (carry_d, carry_e) = (d, x);
            }
        }
        shape.truncate(prefix);
        e.truncate(prefix);
        shape.extend(outer_d.into_iter().chain(inner_d));
        e.extend(outer_e.into_iter().chain(inner_e));
    }
    let slots = shape
        .iter()
        .product::<usize>()
        .div_ceil(layout.tail_alignment)
        * layout.tail_alignment;
    (linear_index(&e, &shape), slots)
}

/// Storage bytes by SPEC.md §4: `ceil(slots * bits / 8)`.
fn bytes(layout: &RefLayout, bits: usize) -> usize {
    (layout.slots().len() * bits).div_ceil(8)
}

#[test]
fn golden_values() {
    for &(spec, index, offset, slots) in common::golden::SECTION_5 {
        let layout = parse(spec);
        assert_eq!(layout.spec(), spec);
        assert_eq!(layout.slots().len(), slots, "{spec}");
        assert_eq!(offset_of(&layout, index), offset, "{spec}");
        assert_eq!(formula(&layout, index), (offset, slots), "{spec}");
    }
}

#[test]
fn figure_1() {
    let layout = parse("f32[3,5]{1,0:T(2,2)}");
    assert_eq!(
        layout,
        RefLayout {
            type_name: "f32",
            dims: vec![3, 5],
            minor_to_major: vec![1, 0],
            tiles: vec![vec![Some(2), Some(2)]],
            tail_alignment: 1,
        }
    );
    let expected = [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20];
    assert_eq!(layout.offsets_row_major(), expected);
    let padding: Vec<usize> = (0..24).filter(|&s| layout.slots()[s].is_none()).collect();
    assert_eq!(padding, [9, 11, 14, 15, 18, 19, 21, 22, 23]);
}

#[test]
fn figure_2() {
    let layout = parse("bf16[4,8]{1,0:T(2,4)(2,1)}");
    let mut expected = Vec::new();
    for row in 0..4 {
        // Rows pair up: rows 2r and 2r+1 interleave in a block of 16 slots.
        let base = (row / 2) * 16 + row % 2;
        expected.extend((0..8).map(|col| base + 2 * col));
    }
    assert_eq!(layout.offsets_row_major(), expected);
    assert_eq!(layout.slots().len(), 32);
}

#[test]
fn combining() {
    let combined = parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    let flat = parse("f32[112,110]{1,0:T(2,3)}");
    assert_eq!(combined.slots().len(), 12432);
    assert_eq!(flat.slots().len(), 12432);
    let combined_offsets = combined.offsets_row_major();
    let flat_offsets = flat.offsets_row_major();
    let dims = [2, 7, 8, 11, 10];
    for (n, &offset) in combined_offsets.iter().enumerate() {
        let e = unravel(n, &dims);
        let row = e[0] * 56 + e[1] * 8 + e[2];
        let col = e[3] * 10 + e[4];
        assert_eq!(offset, flat_offsets[row * 110 + col], "index {e:?}");
    }
}

#[test]
fn padded_dimensions_as_a_tile() {
    // [2x3] column-major, padded_dimensions [3,5] per logical dim: physical
    // order is (dim 1, dim 0), so the covering tile is (5,3).
    let layout = parse("f32[2,3]{0,1:T(5,3)}");
    let letters: Vec<char> = layout
        .slots()
        .iter()
        .map(|slot| match slot.as_deref() {
            None => '0',
            Some([row, col]) => ["abc", "def"][*row].as_bytes()[*col].into(),
            Some(other) => panic!("rank-2 index expected, got {other:?}"),
        })
        .collect();
    assert_eq!(letters.into_iter().collect::<String>(), "ad0be0cf0000000");
}

#[test]
fn untiled_linear_index() {
    assert_eq!(offset_of(&parse("f32[10,20]{0,1}"), &[3, 5]), 53);
    let row_major = parse("f32[2,3,4]");
    assert_eq!(row_major.spec(), "f32[2,3,4]{2,1,0}");
    assert_eq!(row_major.offsets_row_major(), (0..24).collect::<Vec<_>>());
}

#[test]
fn sizes() {
    assert_eq!(bytes(&parse("s4[64,128]{1,0}"), 4), 4096);
    assert_eq!(bytes(&parse("s4[1,1023]{1,0:T(2,1024)}"), 4), 1024);
    assert_eq!(bytes(&parse("s32[1,127]{1,0:T(2,128)}"), 32), 1024);
    for spec in [
        "f32[0,5]{1,0:T(2,2)L(4)}",
        "f32[3,0]{0,1}",
        "f32[2,0,3]{1,2,0:T(*,2,2)}",
    ] {
        assert!(parse(spec).slots().is_empty(), "{spec}");
        assert!(parse(spec).offsets_row_major().is_empty(), "{spec}");
    }
}

#[test]
fn tail_alignment() {
    assert_eq!(parse("f32[8]{0:T(2,2)L(4)}").slots().len(), 16);
    assert_eq!(parse("f32[8]{0:T(2,2)L(5)}").slots().len(), 20);
    assert_eq!(parse("f32[5]{0:T(4)L(3)}").slots().len(), 9);
    let slots = parse("f32[3]{0:L(4)}").slots();
    assert_eq!(slots, [Some(vec![0]), Some(vec![1]), Some(vec![2]), None]);
}

#[test]
fn scalars() {
    let plain = parse("f32[]");
    assert_eq!(plain.slots(), [Some(vec![])]);
    assert_eq!(plain.offsets_row_major(), [0]);
    assert_eq!(parse("u32[]{:T(2,128)}").slots().len(), 256);
    assert_eq!(parse("u32[]{:L(4)}").slots().len(), 4);
}

#[test]
fn spec_strings() {
    let layout = |type_name, dims: &[usize], m2m: &[usize], tiles: &[&[RefTileDim]], l| RefLayout {
        type_name,
        dims: dims.to_vec(),
        minor_to_major: m2m.to_vec(),
        tiles: tiles.iter().map(|t| t.to_vec()).collect(),
        tail_alignment: l,
    };
    let cases = [
        (
            layout("f32", &[3, 5], &[1, 0], &[&[Some(2), Some(2)]], 1),
            "f32[3,5]{1,0:T(2,2)}",
        ),
        (
            layout("u32", &[], &[], &[&[Some(128)]], 1),
            "u32[]{:T(128)}",
        ),
        (layout("f32", &[2, 3], &[0, 1], &[], 1), "f32[2,3]{0,1}"),
        (
            layout("f32", &[8], &[0], &[&[Some(2), Some(2)]], 4),
            "f32[8]{0:T(2,2)L(4)}",
        ),
        (layout("F32", &[], &[], &[], 1), "f32[]"),
        (layout("BF16", &[4], &[0], &[], 8), "bf16[4]{0:L(8)}"),
        (
            layout(
                "pred",
                &[2, 3],
                &[1, 0],
                &[&[None, Some(4)], &[Some(2), Some(1)]],
                1,
            ),
            "pred[2,3]{1,0:T(*,4)(2,1)}",
        ),
    ];
    for (layout, text) in cases {
        assert_eq!(layout.spec(), text);
    }
}

#[test]
#[should_panic(expected = "most minor")]
fn combine_in_most_minor_position_panics() {
    let _ = parse("f32[4,4]{1,0:T(2,*)}").slots();
}

#[test]
#[should_panic(expected = "permutation")]
fn bad_minor_to_major_panics() {
    let _ = parse("f32[4,4]{1,1}").slots();
}

#[test]
fn rng_is_splitmix64() {
    let mut rng = Rng::new(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    let mut rng = Rng::new(7);
    for n in 1..100 {
        assert!(rng.below(n) < n);
    }
}

#[test]
fn random_layouts_are_deterministic() {
    let (mut a, mut b) = (Rng::new(42), Rng::new(42));
    for _ in 0..50 {
        assert_eq!(random_layout(&mut a), random_layout(&mut b));
    }
}

/// What the random layouts have covered so far.
#[derive(Default)]
#[allow(clippy::struct_excessive_bools, reason = "a checklist of features")]
struct Coverage {
    scalar: bool,
    rank_5: bool,
    zero_dim: bool,
    combine: bool,
    three_levels: bool,
    prepends: bool,
    non_dividing: bool,
    oversized: bool,
    reaches_outer: bool,
    tail: bool,
}

impl Coverage {
    fn record(&mut self, layout: &RefLayout) {
        let rank = layout.dims.len();
        self.scalar |= rank == 0;
        self.rank_5 |= rank == 5;
        self.zero_dim |= layout.dims.contains(&0);
        self.combine |= layout.tiles.iter().flatten().any(Option::is_none);
        self.three_levels |= layout.tiles.len() == 3;
        self.tail |= layout.tail_alignment != 1;
        if let Some(next) = layout.tiles.get(1) {
            let inner = layout.tiles[0].iter().flatten().count();
            self.reaches_outer |= next.len() > inner;
        }
        let Some(first) = layout.tiles.first() else {
            return;
        };
        self.prepends |= first.len() > rank;
        if first.contains(&None) || layout.dims.contains(&0) {
            return;
        }
        // Tile position j (from the minor end) meets physical dim j from the
        // minor end, which is minor_to_major[j]; prepended dims have size 1.
        for (j, size) in first.iter().rev().flatten().enumerate() {
            let dim = layout.minor_to_major.get(j).map_or(1, |&d| layout.dims[d]);
            self.non_dividing |= dim % size != 0;
            self.oversized |= *size > dim;
        }
    }
}

#[test]
fn random_layouts_are_valid_and_agree_with_the_index_rule() {
    let mut rng = Rng::new(0x5EED);
    let mut coverage = Coverage::default();
    for _ in 0..1500 {
        let layout = random_layout(&mut rng);
        coverage.record(&layout);
        let rank = layout.dims.len();
        assert!(rank <= 5);
        let mut m2m = layout.minor_to_major.clone();
        m2m.sort_unstable();
        assert_eq!(m2m, (0..rank).collect::<Vec<_>>());
        for tile in &layout.tiles {
            assert!(matches!(tile.last(), Some(Some(_))), "{}", layout.spec());
            assert!(!tile.contains(&Some(0)));
        }
        assert!(layout.tail_alignment >= 1);
        assert_eq!(parse(&layout.spec()), layout);

        let slots = layout.slots();
        assert!(slots.len() <= 4096);
        assert_eq!(slots.len() % layout.tail_alignment, 0);
        let count: usize = layout.dims.iter().product();
        assert_eq!(slots.iter().flatten().count(), count);
        // offsets_row_major panics if an index is missing or stored twice.
        let offsets = layout.offsets_row_major();
        assert_eq!(offsets.len(), count);
        for (n, &offset) in offsets.iter().enumerate() {
            let index = unravel(n, &layout.dims);
            assert_eq!(slots[offset].as_deref(), Some(&index[..]));
            assert_eq!(
                formula(&layout, &index),
                (offset, slots.len()),
                "{}",
                layout.spec()
            );
        }
        if count == 0 {
            assert_eq!(formula(&layout, &vec![0; rank]).1, slots.len());
        }
    }
    let Coverage {
        scalar,
        rank_5,
        zero_dim,
        combine,
        three_levels,
        prepends,
        non_dividing,
        oversized,
        reaches_outer,
        tail,
    } = coverage;
    assert!(scalar && rank_5 && zero_dim && combine && three_levels);
    assert!(prepends && non_dividing && oversized && reaches_outer && tail);
}
