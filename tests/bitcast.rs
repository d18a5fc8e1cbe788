//! `xla_layout::bitcast` against brute force: thousands of random pairs,
//! tiled and untiled, with `*`, `E(n)` and `L(n)`, each compared with an
//! enumeration of the plain reference's offsets over every row-major
//! position: the verdict and the first element that moves, by index and
//! slot. Most pairs are derived from the first layout (dims split, merged,
//! permuted, retiled), so that bitcasts are common, and the test counts the
//! pairs where a check that reads only `minor_to_major` answers wrongly.

mod common;

use common::check::ref_tiles;
use common::reference::{random_layout, ravel, unravel, RefLayout, RefTileDim, Rng};
use xla_layout::bitcast::{self, Mismatch};
use xla_layout::{ElementType, Layout, LayoutBuilder, TileDim};

/// Pairs drawn.
const PAIRS: usize = 3000;

/// `r` as a `Layout`, with `E(bits)` when given.
fn build(r: &RefLayout, bits: Option<u32>) -> Layout {
    let element = ElementType::from_name(r.type_name).unwrap();
    let mut b = LayoutBuilder::new(element, &r.dims).minor_to_major(&r.minor_to_major);
    for t in &r.tiles {
        let dims: Vec<TileDim> = t
            .iter()
            .map(|d| d.map_or(TileDim::Combine, TileDim::Size))
            .collect();
        b = b.tile(&dims);
    }
    if r.tail_alignment != 1 {
        b = b.tail_alignment(r.tail_alignment);
    }
    if let Some(bits) = bits {
        b = b.element_bits(bits);
    }
    b.build().unwrap_or_else(|e| panic!("{}: {e}", r.spec()))
}

/// The reference of a `Layout` (its `E(n)` aside, which moves no slot).
fn reference_of(l: &Layout) -> RefLayout {
    let type_name = common::specgen::ELEMENTS
        .iter()
        .find(|e| e.0 == l.element_type().name())
        .unwrap()
        .0;
    RefLayout {
        type_name,
        dims: l.dims().to_vec(),
        minor_to_major: l.minor_to_major().to_vec(),
        tiles: ref_tiles(l),
        tail_alignment: l.tail_alignment(),
    }
}

/// What the brute force finds when the change is no bitcast: a mismatch
/// of sizes or types, or the first element that moves.
// Only the tests make these, one per pair.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq)]
enum Found {
    Other(Mismatch),
    Moved {
        position: usize,
        from_slot: usize,
        to_slot: usize,
    },
}

/// The brute force's answer. A transpose's `to` index of `from`'s index
/// `e` is `[e[perm[0]], ...]`.
fn brute_force(
    from: (&RefLayout, u32),
    to: (&RefLayout, u32),
    perm: Option<&[usize]>,
) -> Result<(), Found> {
    let (fr, fbits) = from;
    let (tr, tbits) = to;
    let (fe, te) = (
        ElementType::from_name(fr.type_name).unwrap(),
        ElementType::from_name(tr.type_name).unwrap(),
    );
    if fe != te {
        return Err(Found::Other(Mismatch::ElementType { from: fe, to: te }));
    }
    if fbits != tbits {
        return Err(Found::Other(Mismatch::ElementBits {
            from: fbits,
            to: tbits,
        }));
    }
    let (fs, ts) = (fr.slots(), tr.slots());
    let (fo, to_offsets) = (offsets(&fs, &fr.dims), offsets(&ts, &tr.dims));
    if fo.len() != to_offsets.len() {
        return Err(Found::Other(Mismatch::ElementCount {
            from: fo.len(),
            to: to_offsets.len(),
        }));
    }
    let (from_bytes, to_bytes) = (
        (fs.len() * fbits as usize).div_ceil(8),
        (ts.len() * tbits as usize).div_ceil(8),
    );
    if from_bytes != to_bytes {
        return Err(Found::Other(Mismatch::StorageBytes {
            from: from_bytes,
            to: to_bytes,
        }));
    }
    for (position, &from_slot) in fo.iter().enumerate() {
        let from_index = unravel(position, &fr.dims);
        let to_index = match perm {
            None => unravel(position, &tr.dims),
            Some(p) => p.iter().map(|&d| from_index[d]).collect(),
        };
        let to_slot = to_offsets[ravel(&to_index, &tr.dims)];
        if from_slot != to_slot {
            return Err(Found::Moved {
                position,
                from_slot,
                to_slot,
            });
        }
    }
    Ok(())
}

/// The slot of each row-major position, read off the reference's slots
/// (as `RefLayout::offsets_row_major` does, from slots already made).
fn offsets(slots: &[Option<Vec<usize>>], dims: &[usize]) -> Vec<usize> {
    let mut out = vec![usize::MAX; dims.iter().product()];
    for (slot, index) in slots.iter().enumerate() {
        if let Some(index) = index {
            out[ravel(index, dims)] = slot;
        }
    }
    assert!(!out.contains(&usize::MAX), "every element has a slot");
    out
}

/// Checks the library's answer against the brute force's.
fn agree(
    got: &Result<(), Mismatch>,
    want: Result<(), Found>,
    from: &Layout,
    to: &Layout,
    perm: Option<&[usize]>,
) {
    let what = format!("{from} -> {to} perm {perm:?}");
    match (*got, want) {
        (Ok(()), Ok(())) => {}
        (
            Err(Mismatch::Moved(g)),
            Err(Found::Moved {
                position,
                from_slot,
                to_slot,
            }),
        ) => {
            assert_eq!(
                (g.position, g.from_slot, g.to_slot),
                (position, from_slot, to_slot),
                "{what}: first moving element"
            );
            let from_index = unravel(position, from.dims());
            assert_eq!(&*g.from_index, &from_index[..], "{what}: from index");
            let to_index = match perm {
                None => unravel(position, to.dims()),
                Some(p) => p.iter().map(|&d| from_index[d]).collect(),
            };
            assert_eq!(&*g.to_index, &to_index[..], "{what}: to index");
        }
        (Err(g), Err(Found::Other(w))) => assert_eq!(g, w, "{what}"),
        (g, w) => panic!("{what}: got {g:?}, brute force {w:?}"),
    }
}

/// `dims` split, merged and padded with 1s at random: the same elements in
/// the same row-major order.
fn reshaped_dims(rng: &mut Rng, dims: &[usize]) -> Vec<usize> {
    let mut out = dims.to_vec();
    for _ in 0..=rng.pick(3) {
        match rng.pick(4) {
            // Split a dim into two factors.
            0 => {
                let d = rng.pick(out.len());
                if let Some(&size) = out.get(d).filter(|&&s| s > 0) {
                    let factors: Vec<usize> = (1..=size).filter(|f| size % f == 0).collect();
                    let f = *rng.choose(&factors);
                    out.splice(d..=d, [f, size / f]);
                }
            }
            // Merge two adjacent dims.
            1 if out.len() >= 2 => {
                let d = rng.pick(out.len() - 1);
                let merged = out[d] * out[d + 1];
                out.splice(d..d + 2, [merged]);
            }
            // Insert or drop a size-1 dim.
            2 if out.len() < 6 => out.insert(rng.pick(out.len() + 1), 1),
            _ => {
                if let Some(d) = out.iter().position(|&x| x == 1) {
                    out.remove(d);
                }
            }
        }
    }
    out
}

fn shuffled(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        v.swap(i, rng.pick(i + 1));
    }
    v
}

/// A `to` for a reshape of `from` (a `RefLayout` of the new dims).
fn reshape_target(rng: &mut Rng, from: &RefLayout, from_l: &Layout) -> RefLayout {
    let dims = reshaped_dims(rng, &from.dims);
    let rank = dims.len();
    match rng.pick(5) {
        // The layout the library proposes, sometimes with its order shuffled
        // or its tiles dropped.
        0 | 1 => {
            if let Some(l) = bitcast::reshape_layout(from_l, &dims) {
                let mut r = reference_of(&l);
                if rng.one_in(4) {
                    r.minor_to_major = shuffled(rng, rank);
                }
                if rng.one_in(6) {
                    r.tiles.clear();
                }
                return r;
            }
            RefLayout {
                dims,
                minor_to_major: shuffled(rng, rank),
                ..from.clone()
            }
        }
        // The same tiles and `L(n)`, any order.
        2 => RefLayout {
            minor_to_major: shuffled(rng, rank),
            dims,
            ..from.clone()
        },
        // Untiled, any order.
        3 => RefLayout {
            minor_to_major: shuffled(rng, rank),
            dims,
            tiles: Vec::new(),
            tail_alignment: 1,
            ..from.clone()
        },
        // Another layout's tiles.
        _ => {
            let other = random_layout(rng);
            RefLayout {
                minor_to_major: shuffled(rng, rank),
                dims,
                tiles: other.tiles,
                tail_alignment: other.tail_alignment,
                ..from.clone()
            }
        }
    }
}

/// A `to` and `perm` for a transpose of `from`: mostly the relabelling that
/// keeps the physical order (a bitcast), else shuffled or retiled.
fn transpose_target(rng: &mut Rng, from: &RefLayout) -> (RefLayout, Vec<usize>) {
    let rank = from.dims.len();
    let perm = shuffled(rng, rank);
    let dims: Vec<usize> = perm.iter().map(|&d| from.dims[d]).collect();
    let mut inverse = vec![0; rank];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    let mut to = RefLayout {
        dims,
        minor_to_major: from.minor_to_major.iter().map(|&d| inverse[d]).collect(),
        ..from.clone()
    };
    match rng.pick(4) {
        0 => to.minor_to_major = shuffled(rng, rank),
        1 => {
            let other = random_layout(rng);
            to.tiles = other.tiles;
        }
        _ => {}
    }
    (to, perm)
}

/// A `to` of the same dims with other tiles: one tile dim changed, or `*`
/// moved, or another layout's tiles.
fn retile_target(rng: &mut Rng, from: &RefLayout) -> RefLayout {
    let mut to = from.clone();
    if to.tiles.is_empty() || rng.one_in(3) {
        to.tiles = random_layout(rng).tiles;
        return to;
    }
    let level = rng.pick(to.tiles.len());
    let tile = &mut to.tiles[level];
    if tile.is_empty() {
        return to;
    }
    let at = rng.pick(tile.len());
    let new: RefTileDim = if at + 1 < tile.len() && rng.one_in(3) {
        None
    } else {
        Some(1 + rng.pick(8))
    };
    tile[at] = new;
    to
}

/// The verdict of a check that reads `minor_to_major` only (XLA's
/// `ReshapeIsBitcast` and `TransposeIsBitcast`): tiles, `L(n)` and
/// `E(n)` ignored.
fn m2m_only(from: &RefLayout, to: &RefLayout, perm: Option<&[usize]>) -> bool {
    let strip = |r: &RefLayout| RefLayout {
        tiles: Vec::new(),
        tail_alignment: 1,
        ..r.clone()
    };
    brute_force((&strip(from), 8), (&strip(to), 8), perm).is_ok()
}

#[test]
fn random_pairs_against_brute_force() {
    let mut rng = Rng::new(0xB17C_A570);
    let (mut same, mut m2m_wrong, mut moved, mut by_kind) = (0, 0, 0, [0usize; 3]);
    for _ in 0..PAIRS {
        let from = random_layout(&mut rng);
        let from_bits = ElementType::from_name(from.type_name).unwrap().bits();
        // `E(n)`: mostly none, sometimes the type's own width written out or a
        // narrower one, on one side or both.
        let e = match rng.pick(8) {
            0 => Some(from_bits),
            1 => Some(1 + rng.pick(from_bits as usize) as u32),
            _ => None,
        };
        let from_l = build(&from, e);
        let kind = rng.pick(3);
        let (to, perm) = match kind {
            0 => (reshape_target(&mut rng, &from, &from_l), None),
            1 => {
                let (to, perm) = transpose_target(&mut rng, &from);
                (to, Some(perm))
            }
            _ => (retile_target(&mut rng, &from), None),
        };
        let to_e = if rng.one_in(20) {
            Some(1 + rng.pick(16) as u32)
        } else {
            e
        };
        let Ok(to_l) = std::panic::catch_unwind(|| build(&to, to_e)) else {
            // A derived tile past the limits: draw again.
            continue;
        };
        let bits = |l: &Layout| l.element_bits();
        let want = brute_force((&from, bits(&from_l)), (&to, bits(&to_l)), perm.as_deref());
        let got = match &perm {
            None => bitcast::reshape(&from_l, &to_l),
            Some(p) => bitcast::transpose(&from_l, &to_l, p),
        };
        agree(&got, want, &from_l, &to_l, perm.as_deref());
        if got.is_ok() {
            same += 1;
            by_kind[kind] += 1;
        }
        if matches!(got, Err(Mismatch::Moved(_))) {
            moved += 1;
        }
        let same_type = from.type_name == to.type_name;
        if same_type && m2m_only(&from, &to, perm.as_deref()) != got.is_ok() {
            m2m_wrong += 1;
        }
    }
    eprintln!(
        "{PAIRS} pairs: {same} bitcasts (reshape, transpose, retile: {by_kind:?}), \
         {moved} with a moving element, {m2m_wrong} where minor_to_major alone is wrong"
    );
    assert!(same > PAIRS / 4, "{same} bitcasts");
    assert!(by_kind.iter().all(|&k| k > PAIRS / 30), "{by_kind:?}");
    assert!(moved > PAIRS / 20, "{moved} moving elements");
    assert!(m2m_wrong > PAIRS / 10, "{m2m_wrong}");
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

#[test]
fn reshape_layout_is_sound_and_finds_every_untiled_order() {
    let mut rng = Rng::new(0x005E_5A9E);
    let (mut untiled, mut found, mut kept_tiles) = (0, 0, 0);
    for _ in 0..800 {
        let from = random_layout(&mut rng);
        let from_l = build(&from, None);
        let dims = reshaped_dims(&mut rng, &from.dims);
        let got = bitcast::reshape_layout(&from_l, &dims);
        if let Some(l) = &got {
            assert_eq!(l.dims(), &dims[..]);
            let bits = from_l.element_bits();
            let check = brute_force((&from, bits), (&reference_of(l), bits), None);
            assert_eq!(check, Ok(()), "{from_l} -> {l}");
            found += 1;
            kept_tiles += usize::from(!from.tiles.is_empty() && l.tiles() == from_l.tiles());
        }
        if from.tiles.is_empty() && dims.len() <= 5 {
            untiled += 1;
            let exists = permutations(dims.len()).into_iter().any(|m2m| {
                let to = RefLayout {
                    dims: dims.clone(),
                    minor_to_major: m2m,
                    ..from.clone()
                };
                brute_force((&from, 8), (&to, 8), None).is_ok()
            });
            assert_eq!(got.is_some(), exists, "{from_l} to {dims:?}");
        }
    }
    eprintln!(
        "{found} found, {kept_tiles} keeping tiles, {untiled} untiled checked for completeness"
    );
    assert!(untiled > 100 && kept_tiles > 50, "{untiled} {kept_tiles}");
}

#[test]
fn reshape_layout_keeps_tiles_outside_the_tiled_dims() {
    let cases = [
        // The size-1 dim dropped, and put back.
        (
            "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
            &[8, 1280, 16384][..],
            "bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}",
        ),
        (
            "bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}",
            &[8, 1, 1280, 16384],
            "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
        ),
        // Major dims merged and split, the tiled pair untouched.
        (
            "f32[4,6,16,256]{3,2,1,0:T(8,128)}",
            &[24, 16, 256],
            "f32[24,16,256]{2,1,0:T(8,128)}",
        ),
        (
            "f32[24,256]{1,0:T(8,128)}",
            &[3, 8, 256],
            "f32[3,8,256]{2,1,0:T(8,128)}",
        ),
        (
            "s4[2,3,64,128]{3,2,1,0:T(8,128)(8,1)E(4)}",
            &[6, 64, 128],
            "s4[6,64,128]{2,1,0:T(8,128)(8,1)E(4)}",
        ),
        // The tiled minor dim split at the tile: the tile count moves major.
        (
            "f32[8,256]{1,0:T(8,128)}",
            &[8, 2, 128],
            "f32[8,2,128]{2,0,1:T(8,128)}",
        ),
        // Split inside the tile too: no tiling fits, the untiled order does.
        (
            "f32[8,256]{1,0:T(8,128)}",
            &[8, 2, 2, 64],
            "f32[8,2,2,64]{3,2,0,1}",
        ),
    ];
    for (from, dims, want) in cases {
        let from = xla_layout::parse(from).unwrap();
        let got =
            bitcast::reshape_layout(&from, dims).unwrap_or_else(|| panic!("{from} to {dims:?}"));
        assert_eq!(got.to_string(), want);
        assert_eq!(bitcast::reshape(&from, &got), Ok(()));
    }
    // Inside the padded tile: nothing can.
    let from = xla_layout::parse("f32[4,6,256]{2,1,0:T(8,128)}").unwrap();
    assert!(bitcast::reshape_layout(&from, &[24, 256]).is_none());
    assert!(
        bitcast::reshape_layout(&from, &[5, 256]).is_none(),
        "other element count"
    );
}

#[test]
fn bad_transposes_are_errors_that_name_the_piece() {
    let from = xla_layout::parse("f32[2,3]").unwrap();
    let to = xla_layout::parse("f32[3,2]{0,1}").unwrap();
    let cases: [(&[usize], &Layout, &str); 5] = [
        (
            &[1],
            &to,
            "`perm` has `1` entries, expected `2`: one per dim",
        ),
        (
            &[1, 2],
            &to,
            "`perm[1]` is `2`, expected a dim of `from` below `2`",
        ),
        (
            &[0, 0],
            &to,
            "`perm[1]` repeats dim `0`; each dim must appear exactly once",
        ),
        (
            &[0, 1],
            &to,
            "dim `0` of `to` is `3`, expected `2`: dim `0` of `from`, as `perm[0]` says",
        ),
        (
            &[1, 0],
            &xla_layout::parse("f32[3,2,1]").unwrap(),
            "`from` has rank `2` and `to` has rank `3`; a transpose keeps the rank",
        ),
    ];
    for (perm, to, message) in cases {
        let err = bitcast::transpose(&from, to, perm).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    assert_eq!(bitcast::transpose(&from, &to, &[1, 0]), Ok(()));
}

#[test]
fn sizes_and_types_are_named_before_elements() {
    let p = |s: &str| xla_layout::parse(s).unwrap();
    let cases = [
        ("f32[2,3]", "s32[6]", "element type `f32` becomes `s32`; a bitcast keeps the element type"),
        ("s8[8]{0:E(4)}", "s8[8]", "elements take `4` bits in `from` and `8` in `to`; a bitcast keeps the element size"),
        ("f32[2,3]", "f32[5]", "`from` has `6` elements and `to` has `5`; a reshape keeps the number of elements"),
        ("f32[2,3]", "f32[6]{0:L(4)}", "`from` takes `24` bytes of storage and `to` takes `32`; a bitcast keeps the storage size"),
        // Sub-byte elements: 7 nibbles take 4 bytes, as 8 do.
        ("s4[7]{0:E(4)}", "s4[7]{0:L(8)E(4)}", ""),
    ];
    for (from, to, message) in cases {
        let got = bitcast::reshape(&p(from), &p(to));
        match got {
            Ok(()) => assert_eq!(message, "", "{from} -> {to}"),
            Err(e) => assert_eq!(e.to_string(), message, "{from} -> {to}"),
        }
    }
    // Zero elements: any layouts of the same type and size.
    assert_eq!(
        bitcast::reshape(&p("f32[0,3]{0,1:T(8,128)}"), &p("f32[3,0]")),
        Ok(())
    );
}

/// `bf16[8192,8192]` pairs and the like decide from their digits: a tiled
/// layout's dims split and merged, a retiling's first moving element, and
/// ragged rows.
#[test]
fn large_layouts_decide_without_enumerating() {
    let p = |s: &str| xla_layout::parse(s).unwrap();
    let from = p("bf16[8192,8192]{1,0:T(8,128)(2,1)}");
    assert_eq!(bitcast::reshape(&from, &p("bf16[1024,8,64,128]{3,2,1,0:T(8,128)(2,1)}")).map_err(|e| e.to_string()),
        Err("element `[0, 128]` (row-major position `128`) moves: it is at slot `1024` in `from` and at slot `1` as `[0, 0, 1, 0]` in `to`".to_string()));
    assert_eq!(
        bitcast::reshape(&from, &p("bf16[1024,8,8192]{2,1,0:T(8,128)(2,1)}")),
        Ok(())
    );
    let err = bitcast::reshape(&from, &p("bf16[8192,8192]{1,0:T(16,128)(2,1)}")).unwrap_err();
    let Mismatch::Moved(m) = err else {
        panic!("{err}")
    };
    assert_eq!((m.position, &*m.from_index), (128, &[0, 128][..]));
    assert_eq!((m.from_slot, m.to_slot), (8 * 128, 16 * 128));
    // Rows of 8190 are ragged in tiles of 128; they match only themselves.
    let ragged = p("f32[3,8190]{1,0:T(8,128)}");
    assert_eq!(
        bitcast::reshape(&ragged, &p("f32[1,3,8190]{2,1,0:T(8,128)}")),
        Ok(())
    );
    let err = bitcast::reshape(&ragged, &p("f32[3,8190]{1,0:T(8,256)}")).unwrap_err();
    assert!(
        matches!(err, Mismatch::Moved(m) if m.position == 128),
        "{err}"
    );
}

/// Tilings whose maps are no sums of digits: a later tile that does not
/// divide the remainder it splits, or a `*` that mixes dims before a split
/// off their boundaries.
const IRREGULAR: [&str; 14] = [
    "(3,4)(2,3)",
    "(2,3)(3,2)",
    "(4)(3)",
    "(6)(4)",
    "(3)(2)",
    "(*,4)(3)",
    "(*,3)(2,1)",
    "(4,3)(3,2)",
    "(5,2)(2,3)",
    "(2,*,3)(2)",
    "(3,3)(2,2)",
    "(4,6)(3,4)",
    "(*,5)(2)",
    "(2,3)(3)(2)",
];

/// `"(3,4)(2,3)"` as tiles.
fn tiles_of(text: &str) -> Vec<Vec<RefTileDim>> {
    text.trim_start_matches('(')
        .trim_end_matches(')')
        .split(")(")
        .map(|t| {
            t.split(',')
                .map(|d| {
                    if d == "*" {
                        None
                    } else {
                        Some(d.parse().unwrap())
                    }
                })
                .collect()
        })
        .collect()
}

/// A small layout under one of the [`IRREGULAR`] tilings.
fn irregular_layout(rng: &mut Rng) -> RefLayout {
    loop {
        let rank = 1 + rng.pick(3);
        let dims: Vec<usize> = (0..rank).map(|_| 1 + rng.pick(9)).collect();
        let r = RefLayout {
            type_name: ["f32", "bf16", "s8"][rng.pick(3)],
            minor_to_major: shuffled(rng, rank),
            tiles: tiles_of(IRREGULAR[rng.pick(IRREGULAR.len())]),
            tail_alignment: 1,
            dims,
        };
        if r.slots().len() <= 4096 {
            return r;
        }
    }
}

/// Hundreds of pairs with an irregular side, reshaped (dims crossing
/// included), transposed and retiled, against the brute force: the verdict
/// and the first moving element.
#[test]
fn irregular_pairs_against_brute_force() {
    let mut rng = Rng::new(0x1BB3_6A11);
    let (mut pairs, mut same, mut moved) = (0, 0, 0);
    while pairs < 1200 {
        let from = irregular_layout(&mut rng);
        let from_l = build(&from, None);
        let (to, perm) = match rng.pick(4) {
            0 => (reshape_target(&mut rng, &from, &from_l), None),
            1 => {
                let (to, perm) = transpose_target(&mut rng, &from);
                (to, Some(perm))
            }
            2 => (retile_target(&mut rng, &from), None),
            // Another irregular tiling, on reshaped dims or the same ones.
            _ => {
                let mut to = from.clone();
                if rng.one_in(2) {
                    to.dims = reshaped_dims(&mut rng, &from.dims);
                    to.minor_to_major = shuffled(&mut rng, to.dims.len());
                }
                to.tiles = tiles_of(IRREGULAR[rng.pick(IRREGULAR.len())]);
                (to, None)
            }
        };
        let Ok(to_l) = std::panic::catch_unwind(|| build(&to, None)) else {
            continue;
        };
        let bits = from_l.element_bits();
        let want = brute_force((&from, bits), (&to, to_l.element_bits()), perm.as_deref());
        let got = match &perm {
            None => bitcast::reshape(&from_l, &to_l),
            Some(p) => bitcast::transpose(&from_l, &to_l, p),
        };
        agree(&got, want, &from_l, &to_l, perm.as_deref());
        pairs += 1;
        same += usize::from(got.is_ok());
        moved += usize::from(matches!(got, Err(Mismatch::Moved(_))));
    }
    eprintln!("{pairs} irregular pairs: {same} bitcasts, {moved} with a moving element");
    assert!(same > 200 && moved > 50, "{same} bitcasts, {moved} moved");
}

/// The first position where the slots of `from` and `to` (a reshape)
/// differ, by `Layout::offset` over every position before `limit`.
fn first_by_offsets(from: &Layout, to: &Layout, limit: usize) -> Option<usize> {
    (0..limit.min(from.len()))
        .find(|&l| from.offset(&unravel(l, from.dims())) != to.offset(&unravel(l, to.dims())))
}

/// Irregular tiles on large dims: `(from, to, whether an element moves)`.
const LARGE_IRREGULAR: [(&str, &str, bool); 12] = [
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        false,
    ),
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[1000,3,4000]{2,1,0:T(3,4)(2,3)}",
        false,
    ),
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[1,3000,4000]{2,1,0:T(3,4)(2,3)}",
        false,
    ),
    (
        "f32[3001,4001]{1,0:T(3,4)(2,3)}",
        "f32[1,3001,4001]{2,1,0:T(3,4)(2,3)}",
        false,
    ),
    (
        "bf16[4096,4096]{1,0:T(*,4)(3)}",
        "bf16[4,1024,4096]{2,1,0:T(*,4)(3)}",
        false,
    ),
    // Same storage, the remainder of the rows tiled by 4 instead of 2.
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[3000,4000]{1,0:T(3,4)(4,3)}",
        true,
    ),
    // The major dim split, its rows tiled from the other factor.
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[3,1000,4000]{2,0,1:T(3,4)(2,3)}",
        true,
    ),
    // `*` before an irregular split, the dims in the other order.
    (
        "bf16[4096,4096]{1,0:T(*,4)(3)}",
        "bf16[4096,4096]{0,1:T(*,4)(3)}",
        true,
    ),
    // Dims that cross (4000 and 10000 share only 2000), and rows of
    // 3001 and 4001 that cross at no common divisor, stepped in cells.
    (
        "f32[3000,4000]{1,0:T(3,4)(2,3)}",
        "f32[1200,10000]{1,0:T(3,4)(2,3)}",
        true,
    ),
    (
        "f32[3001,4001]{1,0:T(3,4)(2,3)}",
        "f32[4001,3001]{1,0:T(3,4)(2,3)L(24048024)}",
        true,
    ),
    // Untiled major dims that cross over irregular minor tiles: they
    // step as one digit, so a bitcast.
    (
        "f32[3001,4001,7,10]{3,2,1,0:T(3,4)(2,3)}",
        "f32[4001,3001,7,10]{3,2,1,0:T(3,4)(2,3)}",
        false,
    ),
    // A third level that changes nothing.
    (
        "f32[3001,4001]{1,0:T(3,4)(2,3)}",
        "f32[3001,4001]{1,0:T(3,4)(2,3)(1,3)}",
        false,
    ),
];

/// Irregular tiles on large dims, decided without enumerating: against
/// itself, a split of the major dim, ragged dims, and a retiling that moves
/// an element. Each large pair's verdict is checked by `Layout::offset` on
/// random positions (and every position up to its first moving element),
/// and a small analogue of each by the plain reference on every position.
#[test]
fn irregular_tiles_on_large_dims() {
    let p = |s: &str| xla_layout::parse(s).unwrap();
    let cases = LARGE_IRREGULAR;
    let mut rng = Rng::new(0x0B16_7113);
    for (from, to, moves) in cases {
        let (from, to) = (p(from), p(to));
        let got = bitcast::reshape(&from, &to);
        if moves {
            let Err(Mismatch::Moved(m)) = got else {
                panic!("{from} -> {to}: {got:?}")
            };
            let want = first_by_offsets(&from, &to, 1 << 20);
            assert_eq!(Some(m.position), want, "{from} -> {to}");
            assert_eq!(m.from_slot, from.offset(&m.from_index));
            assert_eq!(m.to_slot, to.offset(&m.to_index));
        } else {
            assert_eq!(got, Ok(()), "{from} -> {to}");
        }
        if !moves {
            for _ in 0..20_000 {
                let l = rng.pick(from.len());
                assert_eq!(
                    from.offset(&unravel(l, from.dims())),
                    to.offset(&unravel(l, to.dims())),
                    "{from} -> {to} at {l}"
                );
            }
        }
        // The analogue: every dim over 100 divided by 100, against the
        // reference on every position.
        let small = |l: &Layout| {
            let mut r = reference_of(l);
            for d in &mut r.dims {
                if *d > 100 {
                    *d /= 100;
                }
            }
            r
        };
        let (fr, tr) = (small(&from), small(&to));
        let (fl, tl) = (build(&fr, None), build(&tr, None));
        let bits = fl.element_bits();
        let want = brute_force((&fr, bits), (&tr, bits), None);
        agree(&bitcast::reshape(&fl, &tl), want, &fl, &tl, None);
    }
}
