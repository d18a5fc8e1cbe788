//! Bulk relayout against the plain reference: pack, unpack, convert and the
//! iterators on random and hand-picked layouts, padding contents included.

#![allow(
    clippy::cast_precision_loss,
    reason = "test values are small integers, exact as floats"
)]

mod common;

use common::reference::{random_layout, ravel, RefLayout, Rng};
use xla_layout::parse;
use xla_layout::{Options, Threads};

/// The reference's slots as row-major logical positions.
fn reference_slots(r: &RefLayout) -> Vec<Option<usize>> {
    r.slots()
        .into_iter()
        .map(|s| s.map(|index| ravel(&index, &r.dims)))
        .collect()
}

/// Distinct values for the elements, never equal to `SENTINEL`.
const SENTINEL: u32 = u32::MAX;

/// Checks pack, unpack, slots and offsets of one whole-element layout.
fn check_u32(r: &RefLayout) {
    let spec = r.spec();
    let l = parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
    let slots = reference_slots(r);
    assert_eq!(l.storage_len(), slots.len(), "{spec}");
    let logical: Vec<u32> = (0..l.len() as u32)
        .map(|x| x.wrapping_mul(2_654_435_761) >> 1)
        .collect();
    let expected: Vec<u32> = slots
        .iter()
        .map(|s| s.map_or(SENTINEL, |p| logical[p]))
        .collect();

    let mut storage = vec![7u32; l.storage_len()];
    l.pack(&logical, &mut storage, Options::fill(SENTINEL))
        .unwrap();
    assert_eq!(storage, expected, "pack {spec}");

    let mut zeroed = vec![7u32; l.storage_len()];
    l.pack(&logical, &mut zeroed, Options::default()).unwrap();
    let expected_zero: Vec<u32> = slots.iter().map(|s| s.map_or(0, |p| logical[p])).collect();
    assert_eq!(zeroed, expected_zero, "pack, default fill {spec}");

    let mut back = vec![SENTINEL - 1; l.len()];
    l.unpack(&storage, &mut back, Threads::One).unwrap();
    assert_eq!(back, logical, "unpack {spec}");

    let got: Vec<Option<usize>> = l.slots().collect();
    assert_eq!(got, slots, "slots {spec}");
    assert_eq!(l.slots().len(), slots.len());
    // `fold` goes a run of slots at a time, also after some taken by `next`.
    for first in [0, 1, slots.len() / 2, slots.len()] {
        let first = first.min(slots.len());
        let mut it = l.slots();
        let head: Vec<Option<usize>> = it.by_ref().take(first).collect();
        assert_eq!(it.len(), slots.len() - first, "slots len {spec}");
        let all = it.fold(head, |mut v, s| {
            v.push(s);
            v
        });
        assert_eq!(all, slots, "slots, {first} by next then fold {spec}");
    }
    let offsets: Vec<usize> = l.offsets().collect();
    let want = r.offsets_row_major();
    assert_eq!(offsets, want, "offsets {spec}");
    // `fold` walks a run at a time, `next` an element at a time out of the
    // same runs: both, and `next` then `fold` from several places in
    // between, give the same offsets, and the length stays exact.
    for first in [
        0,
        1,
        2,
        want.len() / 3,
        want.len().saturating_sub(1),
        want.len(),
    ] {
        let first = first.min(want.len());
        let mut it = l.offsets();
        let mut got = Vec::new();
        for k in 0..first {
            assert_eq!(it.len(), want.len() - k, "offsets len {spec}");
            got.extend(it.next());
        }
        assert_eq!(it.len(), want.len() - first, "offsets len {spec}");
        let got = it.fold(got, |mut v, o| {
            v.push(o);
            v
        });
        assert_eq!(got, want, "offsets, {first} by next then fold {spec}");
    }
}

/// Pack and unpack with a Rust type as wide as the layout's own element
/// type, fill included: the kernels are generic, but each width is its own
/// code.
fn check_width<T: Copy + PartialEq + std::fmt::Debug + Send + Sync>(
    r: &RefLayout,
    value: impl Fn(usize) -> T,
    fill: T,
) {
    let spec = r.spec();
    let l = parse(&spec).unwrap();
    let slots = reference_slots(r);
    let logical: Vec<T> = (0..l.len()).map(&value).collect();
    let expected: Vec<T> = slots
        .iter()
        .map(|s| s.map_or(fill, |p| logical[p]))
        .collect();
    let mut storage = vec![value(usize::MAX / 3); l.storage_len()];
    l.pack(&logical, &mut storage, Options::fill(fill)).unwrap();
    assert_eq!(storage, expected, "pack {spec}");
    let mut back = vec![fill; l.len()];
    l.unpack(&storage, &mut back, Threads::One).unwrap();
    assert_eq!(back, logical, "unpack {spec}");
}

#[test]
fn every_element_width() {
    let mut rng = Rng::new(0x5eed_0002);
    for _ in 0..400 {
        let r = random_layout(&mut rng);
        check_width(&r.retyped("u8"), |i| (i % 251) as u8, 0xff);
        check_width(&r.retyped("bf16"), |i| (i % 65_521) as u16, 0xffff);
        check_width(&r.retyped("f32"), |i| i as f32, f32::INFINITY);
        check_width(&r.retyped("f64"), |i| i as f64 * 0.5, -1.0);
        check_width(&r.retyped("c128"), |i| [i as u64, !(i as u64)], [7, 7]);
    }
}

#[test]
fn random_layouts_match_the_reference() {
    let mut rng = Rng::new(0x5eed_0001);
    for _ in 0..3000 {
        let r = random_layout(&mut rng);
        check_u32(&r.retyped("u32"));
    }
}

/// `*` over whole dims adjacent in logical order (size-1 dims between
/// them allowed) makes one digit of their row-major index, which the
/// block walk and the offset iterator take; the same tiles after another
/// tile or over dims out of logical order leave that form and fall back.
/// Either way against the reference, later tiles and `L(n)` included.
#[test]
fn whole_dim_merges_match_the_reference() {
    let mut rng = Rng::new(0x5eed_0003);
    let mut whole = 0;
    for _ in 0..1500 {
        let rank = 2 + rng.pick(4);
        let dims: Vec<usize> = (0..rank)
            .map(|_| if rng.pick(4) == 0 { 1 } else { 2 + rng.pick(5) })
            .collect();
        let mut m2m: Vec<usize> = (0..rank).rev().collect();
        let in_order = rng.pick(5) != 0;
        if !in_order {
            let j = rng.pick(rank - 1);
            m2m.swap(j, j + 1);
        }
        // A tile of `k` dims whose last `stars + 1` combine.
        let k = 2 + rng.pick(rank - 1);
        let stars = 1 + rng.pick(k - 1);
        let mut tile: Vec<Option<usize>> =
            (0..k - 1 - stars).map(|_| Some(1 + rng.pick(4))).collect();
        tile.extend(std::iter::repeat_n(None, stars));
        tile.push(Some(1 + rng.pick(8)));
        let before = rng.pick(4) == 0;
        let mut tiles = Vec::new();
        if before {
            tiles.push(vec![Some(2)]);
        }
        tiles.push(tile);
        match rng.pick(4) {
            0 => tiles.push(vec![Some(1 + rng.pick(8))]),
            1 => tiles.push(vec![Some(2), Some(1)]),
            _ => {}
        }
        let combined = &dims[rank - 1 - stars..];
        if in_order && !before && combined.iter().filter(|&&d| d > 1).count() > 1 {
            whole += 1;
        }
        let tail = if rng.pick(6) == 0 { 4 } else { 1 };
        check_u32(&RefLayout {
            type_name: "u32",
            dims,
            minor_to_major: m2m,
            tiles,
            tail_alignment: tail,
        });
    }
    assert!(whole >= 500, "{whole} layouts merge whole dims");
}

/// A `RefLayout` for a spec in the reference's canonical form.
fn reference(
    type_name: &'static str,
    dims: &[usize],
    m2m: &[usize],
    tiles: &[&[Option<usize>]],
    tail: usize,
) -> RefLayout {
    RefLayout {
        type_name,
        dims: dims.to_vec(),
        minor_to_major: m2m.to_vec(),
        tiles: tiles.iter().map(|t| t.to_vec()).collect(),
        tail_alignment: tail,
    }
}

/// Tiles of one to three rows transposed (`{0,1}`), whose blocks are
/// too thin for the vector transposes, ragged both ways, and the `(2,1)`
/// and `(4,1)` tiles of 16- and 8-bit elements transposed, whose pairs
/// and quads move as units: rows of whole units, and rows long enough
/// that a last unit cut short goes element by element.
#[test]
fn thin_tiles_transposed() {
    let s = Some;
    for tile in [1, 2, 3] {
        for dims in [[300, 70], [257, 33]] {
            check_u32(&reference("u32", &dims, &[0, 1], &[&[s(tile), s(128)]], 1));
        }
    }
    for dims in [[300, 64], [259, 36], [37, 259], [35, 387], [36, 513]] {
        let pairs = reference("bf16", &dims, &[0, 1], &[&[s(8), s(128)], &[s(2), s(1)]], 1);
        check_width(&pairs, |i| (i % 65_521) as u16, 0xffff);
        let quads = reference("u8", &dims, &[0, 1], &[&[s(8), s(128)], &[s(4), s(1)]], 1);
        check_width(&quads, |i| (i % 251) as u8, 0xff);
    }
}

/// `(2,1)` and `(4,1)` tiles whose rows lie back to back in the row-major
/// array, tile after tile, so that a band of them is one run of it: rank
/// 1 under `(1024)(128)` or `(512)(128)` (the last tile ragged or not),
/// and minor dims no wider than a tile, some padded inside it (where an
/// outer step's values go down as one band), in 2 and 3 dims.
#[test]
fn group_tiles_in_one_run() {
    let s = Some;
    for len in [1024, 3000, 4096 + 256, 8192 + 77] {
        for first in [1024, 512] {
            let tiles: [&[Option<usize>]; 3] = [&[s(first)], &[s(128)], &[s(2), s(1)]];
            let pairs = reference("bf16", &[len], &[0], &tiles, 1);
            check_width(&pairs, |i| (i % 65_521) as u16, 0xffff);
            let tiles: [&[Option<usize>]; 3] = [&[s(first)], &[s(128)], &[s(4), s(1)]];
            let quads = reference("u8", &[len], &[0], &tiles, 1);
            check_width(&quads, |i| (i % 251) as u8, 0xff);
        }
    }
    for width in [16, 32, 64, 100, 128] {
        for dims in [vec![96, width], vec![3, 37, width]] {
            let order: Vec<usize> = (0..dims.len()).rev().collect();
            let pairs = reference("bf16", &dims, &order, &[&[s(8), s(128)], &[s(2), s(1)]], 1);
            check_width(&pairs, |i| (i % 65_521) as u16, 0xffff);
            let quads = reference("u8", &dims, &order, &[&[s(32), s(128)], &[s(4), s(1)]], 1);
            check_width(&quads, |i| (i % 251) as u8, 0xff);
            check_u32(&reference("u32", &dims, &order, &[&[s(8), s(128)]], 1));
        }
    }
    // An outer dim whose values do not merge with the rows below it.
    check_u32(&reference(
        "u32",
        &[16, 3, 16],
        &[2, 0, 1],
        &[&[s(8), s(128)]],
        1,
    ));
    let pairs = reference(
        "bf16",
        &[16, 3, 32],
        &[2, 0, 1],
        &[&[s(8), s(128)], &[s(2), s(1)]],
        1,
    );
    check_width(&pairs, |i| (i % 65_521) as u16, 0xffff);
}

#[test]
fn tpu_formats_and_ragged_edges() {
    let s = Some;
    let cases = [
        reference("u32", &[20, 300], &[1, 0], &[&[s(8), s(128)]], 1),
        reference("u32", &[16, 256], &[1, 0], &[&[s(8), s(128)]], 1),
        reference(
            "u32",
            &[19, 260],
            &[1, 0],
            &[&[s(8), s(128)], &[s(2), s(1)]],
            1,
        ),
        reference(
            "u32",
            &[33, 129],
            &[1, 0],
            &[&[s(8), s(128)], &[s(4), s(1)]],
            1,
        ),
        reference(
            "u32",
            &[40, 256],
            &[1, 0],
            &[&[s(8), s(128)], &[s(8), s(1)]],
            1,
        ),
        reference("u32", &[17, 130], &[0, 1], &[&[s(8), s(128)]], 1),
        reference(
            "u32",
            &[3000],
            &[0],
            &[&[s(1024)], &[s(128)], &[s(2), s(1)]],
            1,
        ),
        reference(
            "u32",
            &[3, 9, 140],
            &[2, 1, 0],
            &[&[s(8), s(128)], &[s(2), s(1)]],
            1,
        ),
        reference("u32", &[5, 9, 140], &[0, 2, 1], &[&[s(8), s(128)]], 1),
        reference(
            "u32",
            &[2, 7, 8, 11, 10],
            &[4, 3, 2, 1, 0],
            &[&[None, None, s(2), None, s(3)]],
            1,
        ),
        reference(
            "u32",
            &[8, 8],
            &[1, 0],
            &[&[s(2), s(4)], &[s(2), s(1), s(1), s(1)]],
            1,
        ),
        reference("u32", &[5], &[0], &[&[s(2)], &[s(4)]], 1),
        reference("u32", &[], &[], &[&[s(128)]], 1),
        reference("u32", &[7, 5], &[0, 1], &[], 16),
        reference("u32", &[300, 3], &[1, 0], &[&[s(128), s(8)]], 1),
        reference(
            "u32",
            &[130, 9],
            &[0, 1],
            &[&[s(8), s(128)], &[s(4), s(1)]],
            1,
        ),
        reference("u32", &[11, 10], &[1, 0], &[&[None, s(3)]], 1),
        reference(
            "u32",
            &[11, 10],
            &[1, 0],
            &[&[s(2), s(2)], &[None, s(3)]],
            1,
        ),
        reference("u32", &[4, 1, 5], &[2, 1, 0], &[&[None, None, s(2)]], 1),
        reference("u32", &[6, 0, 3], &[2, 1, 0], &[&[s(2), s(2)]], 1),
        reference(
            "u32",
            &[129, 257],
            &[1, 0],
            &[&[s(8), s(128)], &[s(2), s(1)]],
            8,
        ),
    ];
    for r in &cases {
        check_u32(r);
    }
}

/// `slot_indices` walks storage in memory order and agrees with `index_of`
/// on every slot, padding included.
#[test]
fn slot_indices_agree_with_index_of() {
    let mut rng = Rng::new(0x51_07);
    for _ in 0..400 {
        let r = random_layout(&mut rng);
        let l = parse(&r.spec()).unwrap();
        let walked: Vec<_> = l.slot_indices().collect();
        assert_eq!(walked.len(), l.storage_len(), "{}", r.spec());
        for (offset, index) in walked.iter().enumerate() {
            assert_eq!(
                index.as_deref(),
                l.index_of(offset).as_deref(),
                "{} at {offset}",
                r.spec()
            );
        }
    }
}
