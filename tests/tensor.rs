//! Tensors against the plain reference on random and hand-picked layouts:
//! every element, logical order, every tile and its padding, and writes
//! through every mutable path.

#![allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    reason = "values are copied, never computed: exact comparison is the point"
)]

mod common;

use common::check::{hard_cases, ref_tiles};
use common::reference::{random_layout, ravel, unravel, RefLayout, RefTileDim, Rng};
use xla_layout::Options;
use xla_layout::{layout, parse, tensor::Tensor, AnyLayout, Layout, RelayoutError, StaticLayout};

const SENTINEL: u32 = u32::MAX;

/// A distinct value for every element.
fn value(p: usize) -> u32 {
    (p as u32).wrapping_mul(2_654_435_761) >> 1
}

/// The layout, its logical values and storage holding them, `SENTINEL` in padding.
struct Case {
    spec: String,
    layout: Layout,
    reference: RefLayout,
    slots: Vec<Option<Vec<usize>>>,
    logical: Vec<u32>,
    storage: Vec<u32>,
}

impl Case {
    fn new(r: &RefLayout) -> Case {
        let r = r.retyped("u32");
        let spec = r.spec();
        let layout = parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
        let slots = r.slots();
        let logical: Vec<u32> = (0..layout.len()).map(value).collect();
        let storage = slots
            .iter()
            .map(|s| s.as_ref().map_or(SENTINEL, |i| logical[ravel(i, &r.dims)]))
            .collect();
        Case {
            spec,
            layout,
            reference: r,
            slots,
            logical,
            storage,
        }
    }

    /// The first-level tile shape when the first tile has no `*` and no
    /// more dims than the layout: then a tile's slot holds
    /// `origin + sub-index`, the tile's dims being the most minor ones.
    fn plain_first_tile(&self) -> Option<Vec<usize>> {
        let tile = self.reference.tiles.first()?;
        let rank = self.reference.dims.len();
        (tile.len() <= rank && tile.iter().all(Option::is_some))
            .then(|| tile.iter().map(|t: &RefTileDim| t.unwrap()).collect())
    }
}

fn check_reads(c: &Case) {
    let (l, spec) = (&c.layout, &c.spec);
    let t = Tensor::new(l, &c.storage[..]).unwrap();
    let dims = l.dims();
    // Every element, in logical order and by index.
    assert!(
        t.iter().copied().eq(c.logical.iter().copied()),
        "iter {spec}"
    );
    assert_eq!(t.iter().len(), l.len());
    // `fold` takes a run at a time, also after some elements taken by `next`.
    for first in [0, 1, l.len() / 2] {
        let mut it = t.iter();
        let head: Vec<u32> = it.by_ref().take(first).copied().collect();
        let all = it.fold(head, |mut v, &x| {
            v.push(x);
            v
        });
        assert_eq!(all, c.logical, "iter, {first} by next then fold {spec}");
    }
    for (p, (index, &x)) in t.indexed_iter().enumerate() {
        assert_eq!(&*index, &unravel(p, dims)[..], "indexed_iter {spec}");
        assert_eq!(x, c.logical[p], "indexed_iter {spec}");
        assert_eq!(t.get(&index), Some(&x), "get {spec}");
        assert_eq!(t[&index[..]], x, "index {spec}");
    }
    // Outside the dims, and the wrong rank.
    for d in 0..dims.len() {
        let mut index = vec![0; dims.len()];
        index[d] = dims[d];
        assert_eq!(t.get(&index), None, "{spec} {index:?}");
    }
    assert_eq!(t.get(&vec![0; dims.len() + 1]), None, "{spec}");
    // Padding, slot by slot.
    for (k, s) in c.slots.iter().enumerate() {
        assert_eq!(t.is_padding(k), s.is_none(), "is_padding({k}) {spec}");
    }
    let mut out = vec![0; l.len()];
    t.to_row_major(&mut out).unwrap();
    assert_eq!(out, c.logical, "to_row_major {spec}");
    check_tiles(c, &t);
}

fn check_tiles(c: &Case, t: &Tensor<&Layout, &[u32]>) {
    let spec = &c.spec;
    let sub = t.tile_layout();
    let whole = sub == c.layout;
    let mut seen = 0;
    for (n, (at, tile)) in t.tiles().enumerate() {
        assert_eq!(at.number, n, "{spec}");
        assert_eq!(at.offset, seen, "tiles in storage order {spec}");
        assert_eq!(tile, &c.storage[seen..seen + tile.len()], "{spec}");
        seen += tile.len();
        let origin = c.slots[at.offset]
            .as_ref()
            .expect("a tile starts with an element");
        assert_eq!(&*at.origin, &origin[..], "origin {spec}");
        check_extent(
            c,
            at.extent.as_deref(),
            origin,
            &c.slots[seen - tile.len()..seen],
        );
        let tt = Tensor::new(&sub, tile).unwrap();
        for k in 0..tile.len() {
            // The tile's own layout never calls an element padding.
            if tt.is_padding(k) {
                assert!(t.is_padding(at.offset + k), "{spec} tile {n} slot {k}");
            }
        }
        if let (Some(shape), false) = (c.plain_first_tile(), whole) {
            let m2m = c.layout.minor_to_major();
            for (k, slot) in c.slots[at.offset..at.offset + tile.len()]
                .iter()
                .enumerate()
            {
                let Some(want) = slot else { continue };
                let inner = sub.index_of(k).expect("an element is no tile padding");
                let mut got = at.origin.to_vec();
                for (i, &x) in inner.iter().enumerate() {
                    got[m2m[shape.len() - 1 - i]] += x;
                }
                assert_eq!(&got, want, "{spec} tile {n} slot {k}");
                assert_eq!(tt.get(&inner), Some(&tile[k]));
            }
        }
    }
    let body = if whole { c.layout.storage_len() } else { seen };
    assert_eq!(seen, body, "{spec}");
    assert!(
        c.slots[seen..].iter().all(Option::is_none),
        "only tail padding after the tiles {spec}"
    );
}

thread_local! {
    /// Tiles seen by this test's thread: with an extent short of a whole
    /// tile (a ragged edge), and with none (a `*` run cut inside a row).
    static EXTENTS_SEEN: std::cell::Cell<[usize; 2]> = const { std::cell::Cell::new([0; 2]) };
}

/// A tile's extent against the reference: its elements (`slots`, by the
/// reference) are exactly the box `origin + [0, extent)`, or, for `None`,
/// form no box at all. No tile is all padding.
fn check_extent(
    c: &Case,
    extent: Option<&[usize]>,
    origin: &[usize],
    slots: &[Option<Vec<usize>>],
) {
    let spec = &c.spec;
    let elements: Vec<&Vec<usize>> = slots.iter().flatten().collect();
    assert!(!elements.is_empty(), "a tile of padding alone {spec}");
    // The smallest box holding the elements.
    let rank = origin.len();
    let low: Vec<usize> = (0..rank)
        .map(|d| elements.iter().map(|i| i[d]).min().unwrap())
        .collect();
    let high: Vec<usize> = (0..rank)
        .map(|d| elements.iter().map(|i| i[d]).max().unwrap())
        .collect();
    let box_len: usize = low.iter().zip(&high).map(|(l, h)| h - l + 1).product();
    let unique: std::collections::HashSet<&Vec<usize>> = elements.iter().copied().collect();
    assert_eq!(
        unique.len(),
        elements.len(),
        "an element twice in a tile {spec}"
    );
    if let Some(extent) = extent {
        assert_eq!(low, origin, "the origin is the box's corner {spec}");
        let high_from_extent: Vec<usize> =
            origin.iter().zip(extent).map(|(o, e)| o + e - 1).collect();
        assert_eq!(
            high, high_from_extent,
            "extent {extent:?} at {origin:?} {spec}"
        );
        assert_eq!(
            box_len,
            elements.len(),
            "extent {extent:?}: a box with holes {spec}"
        );
        for (d, (&o, &e)) in origin.iter().zip(extent).enumerate() {
            assert!(e >= 1 && o + e <= c.layout.dims()[d], "{spec}");
        }
        if elements.len() < slots.len() {
            EXTENTS_SEEN.with(|s| s.set([s.get()[0] + 1, s.get()[1]]));
        }
    } else {
        assert!(
            box_len > elements.len(),
            "no extent for a tile at {origin:?} whose elements form a box {spec}"
        );
        EXTENTS_SEEN.with(|s| s.set([s.get()[0], s.get()[1] + 1]));
    }
}

/// Every mutable path writes where the reference says.
fn check_writes(c: &Case) {
    let (l, spec) = (&c.layout, &c.spec);
    let dims = l.dims();
    let expect_zero_padding: Vec<u32> = c
        .storage
        .iter()
        .map(|&x| if x == SENTINEL { 0 } else { x })
        .collect();

    // get_mut and IndexMut.
    let mut s = vec![SENTINEL; l.storage_len()];
    let mut t = Tensor::new(l, &mut s[..]).unwrap();
    for p in 0..l.len() {
        let index = unravel(p, dims);
        if p % 2 == 0 {
            *t.get_mut(&index).unwrap() = c.logical[p];
        } else {
            t[&index[..]] = c.logical[p];
        }
    }
    assert_eq!(s, c.storage, "get_mut / index_mut {spec}");

    // iter_mut, for_each_mut, indexed_for_each_mut.
    let mut s = vec![SENTINEL; l.storage_len()];
    let mut t = Tensor::new(l, &mut s[..]).unwrap();
    for (x, &v) in t.iter_mut().zip(&c.logical) {
        *x = v;
    }
    assert_eq!(s, c.storage, "iter_mut {spec}");
    let mut s = vec![SENTINEL; l.storage_len()];
    let mut t = Tensor::new(l, &mut s[..]).unwrap();
    let mut values = c.logical.iter();
    t.for_each_mut(|x| *x = *values.next().unwrap());
    assert_eq!(s, c.storage, "for_each_mut {spec}");
    let mut s = vec![SENTINEL; l.storage_len()];
    let mut t = Tensor::new(l, &mut s[..]).unwrap();
    t.indexed_for_each_mut(|index, x| *x = c.logical[ravel(&index, dims)]);
    assert_eq!(s, c.storage, "indexed_for_each_mut {spec}");

    // tiles_mut, one tile at a time.
    let mut s = vec![SENTINEL; l.storage_len()];
    let mut t = Tensor::new(l, &mut s[..]).unwrap();
    for (at, tile) in t.tiles_mut() {
        tile.copy_from_slice(&c.storage[at.offset..at.offset + tile.len()]);
    }
    let covered = Tensor::new(l, &c.storage[..])
        .unwrap()
        .tiles()
        .map(|(_, s)| s.len())
        .sum::<usize>();
    assert_eq!(&s[..covered], &c.storage[..covered], "tiles_mut {spec}");

    // fill and fill_padding.
    let mut t = Tensor::new(l, c.storage.clone()).unwrap();
    t.fill(5);
    t.fill_padding(6);
    let want: Vec<u32> = c
        .slots
        .iter()
        .map(|s| if s.is_some() { 5 } else { 6 })
        .collect();
    assert_eq!(t.storage(), &want[..], "fill {spec}");

    // from_row_major, copy_from (to and from row-major), storage_mut.
    let t = Tensor::from_row_major(l, &c.logical, vec![SENTINEL; l.storage_len()]).unwrap();
    assert_eq!(
        t.storage(),
        &expect_zero_padding[..],
        "from_row_major {spec}"
    );
    let row_major = parse(&format!("u32{dims:?}").replace(' ', "")).unwrap();
    let rm = Tensor::new(&row_major, &c.logical[..]).unwrap();
    let mut t = Tensor::new(l, vec![SENTINEL; l.storage_len()].into_boxed_slice()).unwrap();
    t.copy_from(&rm).unwrap();
    assert_eq!(t.storage(), &expect_zero_padding[..], "copy_from {spec}");
    let mut back = Tensor::new(&row_major, vec![0; l.len()]).unwrap();
    back.copy_from(&t).unwrap();
    assert_eq!(back.storage(), &c.logical[..], "copy_from back {spec}");
    let mut t = Tensor::new(l, c.storage.clone()).unwrap();
    if let Some(first) = t.storage_mut().first_mut() {
        *first = 1;
        assert_eq!(t.storage()[0], 1);
    }
}

#[test]
fn random_layouts_match_the_reference() {
    let mut rng = Rng::new(0x7e45_0001);
    for _ in 0..1500 {
        let c = Case::new(&random_layout(&mut rng));
        check_reads(&c);
        check_writes(&c);
    }
    // Both kinds of tile an extent can get wrong were met.
    let [ragged, no_box] = EXTENTS_SEEN.with(std::cell::Cell::get);
    assert!(
        ragged > 100 && no_box > 10,
        "{ragged} ragged tiles, {no_box} without a box"
    );
}

#[test]
fn hard_layouts_match_the_reference() {
    for r in hard_cases() {
        let c = Case::new(&r);
        check_reads(&c);
        check_writes(&c);
    }
}

#[test]
fn wrong_storage_is_an_error() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    assert_eq!(
        Tensor::new(&l, [0.0f32; 23]).unwrap_err(),
        RelayoutError::StorageLength {
            expected: 24,
            actual: 23
        }
    );
    assert_eq!(
        Tensor::new(&l, vec![0.0f32; 25]).unwrap_err(),
        RelayoutError::StorageLength {
            expected: 24,
            actual: 25
        }
    );
    assert_eq!(
        Tensor::new(&l, [0u16; 24]).unwrap_err(),
        RelayoutError::ElementSize {
            layout_bits: 32,
            type_bits: 16
        }
    );
    let s4 = layout!("s4[2,4]{1,0:E(4)}");
    assert_eq!(
        Tensor::new(s4, [0u8; 8]).unwrap_err(),
        RelayoutError::PackedLayout { bits: 4 }
    );
    assert_eq!(
        Tensor::new(layout!("f32[3,5]"), &[0.0f32; 14][..]).unwrap_err(),
        RelayoutError::StorageLength {
            expected: 15,
            actual: 14
        }
    );
    // The error reads like rustc's.
    let err = Tensor::new(&l, [0.0f32; 23]).unwrap_err();
    assert!(err.to_string().contains("23"), "{err}");
}

#[test]
#[should_panic(expected = "index out of bounds: the dims are [3, 5] but the index is [1, 5]")]
fn static_index_out_of_range_panics_with_index_and_dims() {
    let t = Tensor::new(layout!("f32[3,5]{1,0:T(2,2)}"), [0.0f32; 24]).unwrap();
    let _ = t[[1, 5]];
}

#[test]
#[should_panic(expected = "index out of bounds: the dims are [3, 5] but the index is [3, 0]")]
fn runtime_index_out_of_range_panics_with_index_and_dims() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let mut t = Tensor::new(&l, [0.0f32; 24]).unwrap();
    t[[3, 0]] = 1.0;
}

#[test]
#[should_panic(expected = "the dims are [3, 5] but the index is [1]")]
fn runtime_index_of_the_wrong_rank_panics() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let t = Tensor::new(&l, [0.0f32; 24]).unwrap();
    let _ = t[[1]];
}

/// A `layout!` tensor and the same layout at run time agree on everything.
#[allow(
    clippy::many_single_char_names,
    reason = "s: static, r: run time, w: written"
)]
fn static_matches_runtime<L>(l: L)
where
    L: StaticLayout + AnyLayout<Index = <L as StaticLayout>::Index>,
{
    let rt = l.runtime();
    let case = Case::new(&reference_of(&rt));
    let (c, s) = (&case, Tensor::new(l, case.storage.clone()).unwrap());
    let r = Tensor::new(&rt, &c.storage[..]).unwrap();
    assert!(s.iter().eq(r.iter()), "{l}");
    for ((i, x), (j, y)) in s.indexed_iter().zip(r.indexed_iter()) {
        assert_eq!(i.as_ref(), &*j);
        assert_eq!(x, y);
        assert_eq!(s.get(i), Some(x));
        assert_eq!(s[i], *x);
    }
    assert!(s
        .tiles()
        .map(|(a, t)| (
            a.offset,
            a.origin.as_ref().to_vec(),
            a.extent.map(|e| e.as_ref().to_vec()),
            t
        ))
        .eq(r.tiles().map(|(a, t)| (
            a.offset,
            a.origin.to_vec(),
            a.extent.map(|e| e.to_vec()),
            t
        ))));
    assert_eq!(s.tile_layout(), r.tile_layout());
    let mut w = Tensor::new(l, vec![SENTINEL; L::STORAGE_LEN]).unwrap();
    for (i, x) in r.indexed_iter() {
        w[l.index_from(&i)] = *x;
    }
    assert_eq!(w.storage(), &c.storage[..], "{l}");
    let mut w = Tensor::new(l, vec![SENTINEL; L::STORAGE_LEN]).unwrap();
    for (i, x) in r.indexed_iter() {
        *w.get_mut(l.index_from(&i)).unwrap() = *x;
    }
    assert_eq!(w.storage(), &c.storage[..], "{l}");
}

/// The reference form of a layout with whole tiles (no `*`).
fn reference_of(l: &Layout) -> RefLayout {
    RefLayout {
        type_name: "u32",
        dims: l.dims().to_vec(),
        minor_to_major: l.minor_to_major().to_vec(),
        tiles: ref_tiles(l),
        tail_alignment: l.tail_alignment(),
    }
}

#[test]
fn static_tensors_match_run_time_ones() {
    static_matches_runtime(layout!("u32[19,260]{1,0:T(8,128)}"));
    static_matches_runtime(layout!("u32[19,260]{0,1:T(8,128)}"));
    static_matches_runtime(layout!("u32[5,7,3]{0,2,1:T(2,4)(2,1)}"));
    static_matches_runtime(layout!("u32[3000]{0:T(1024)(128)(2,1)L(4096)}"));
    static_matches_runtime(layout!("u32[2,3,4]{2,1,0:T(*,2,3)}"));
    static_matches_runtime(layout!("u32[]"));
}

#[test]
fn a_bf16_tile_is_a_tensor_of_its_own() {
    const L_LEN: usize = 19 * 260;
    let l = layout!("bf16[19,260]{1,0:T(8,128)(2,1)}");
    let logical: Vec<u16> = (0..L_LEN as u16).collect();
    let t = Tensor::from_row_major(l, &logical, vec![0u16; l.storage_len()]).unwrap();
    let sub = t.tile_layout();
    assert_eq!(sub.to_string(), "bf16[8,128]{1,0:T(2,1)}");
    assert_eq!(t.tiles().len(), 3 * 3);
    for (at, tile) in t.tiles() {
        let tt = Tensor::new(&sub, tile).unwrap();
        for (i, &x) in tt.indexed_iter() {
            let (r, c) = (at.origin[0] + i[0], at.origin[1] + i[1]);
            if r < 19 && c < 260 {
                assert_eq!(x, logical[r * 260 + c]);
                assert!(!t.is_padding(at.offset + sub.offset(&i)));
            } else {
                assert_eq!(x, 0);
                assert!(t.is_padding(at.offset + sub.offset(&i)));
            }
        }
    }
}

xla_layout::layout!(struct Frame = "f32[3,5]{1,0:T(2,2)}");

static FRAME: Tensor<Frame, [f32; Frame::STORAGE_LEN]> =
    Tensor::from_buffer(Frame, [1.5; Frame::STORAGE_LEN]);

#[test]
fn static_buffers_are_tensors() {
    assert_eq!(FRAME[[2, 4]], 1.5);
    assert_eq!(FRAME.iter().count(), 15);
    let mut local = Tensor::from_buffer(Frame, [0.0f32; Frame::STORAGE_LEN]);
    local[[1, 1]] = 2.0;
    assert_eq!(local.storage()[Frame.offset([1, 1])], 2.0);
}

/// `convert` takes a `layout!` value or a `&Layout` as destination, on
/// both `Layout` and `layout!` values.
#[test]
fn convert_takes_either_kind_of_layout() {
    let col_t = layout!("f32[3,5]{0,1:T(2,2)}");
    let row_t = layout!("f32[3,5]{1,0:T(2,2)}");
    let rt = row_t.runtime();
    let logical: Vec<f32> = (0..15).map(|x| x as f32).collect();
    let mut src = vec![0.0; col_t.storage_len()];
    col_t.pack(&logical, &mut src, Options::default()).unwrap();
    let mut want = vec![0.0; row_t.storage_len()];
    row_t.pack(&logical, &mut want, Options::default()).unwrap();

    let mut dst = vec![f32::NAN; row_t.storage_len()];
    col_t
        .convert(&src, row_t, &mut dst, Options::default())
        .unwrap();
    assert_eq!(dst, want);
    let mut dst = vec![f32::NAN; row_t.storage_len()];
    col_t
        .convert(&src, &rt, &mut dst, Options::default())
        .unwrap();
    assert_eq!(dst, want);
    let from_rt = col_t.runtime();
    let mut dst = vec![f32::NAN; row_t.storage_len()];
    from_rt
        .convert(&src, row_t, &mut dst, Options::default())
        .unwrap();
    assert_eq!(dst, want);
    let mut dst = vec![f32::NAN; row_t.storage_len()];
    from_rt
        .convert(&src, &rt, &mut dst, Options::default())
        .unwrap();
    assert_eq!(dst, want);
    assert_eq!(
        col_t.convert(
            &src,
            layout!("f32[5,3]"),
            &mut [0.0; 15],
            Options::default()
        ),
        Err(RelayoutError::DimMismatch {
            dim: 0,
            from: 3,
            to: 5
        })
    );
}

#[cfg(feature = "ndarray")]
#[test]
fn arrays_in_and_out_of_layout_values_and_tensors() {
    let l = layout!("f32[3,5]{0,1:T(2,2)}");
    let a =
        xla_layout::relayout::ndarray::Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32);
    let mut storage = vec![0.0; l.storage_len()];
    l.pack_array(&a.t().t(), &mut storage, Options::default())
        .unwrap();
    assert_eq!(
        l.unpack_array(&storage, xla_layout::Threads::One).unwrap(),
        a.clone().into_dyn()
    );
    let t = Tensor::from_array(l, &a.view(), vec![0.0; l.storage_len()]).unwrap();
    assert_eq!(t.storage(), &storage[..]);
    assert_eq!(t.to_array().unwrap(), a.into_dyn());
}

#[allow(dead_code, reason = "the example's `main` is not used here")]
#[path = "../examples/matmul.rs"]
mod matmul;

/// The example's tile-by-tile kernels agree with the naive loop and with
/// hand-written addressing, slot for slot.
#[test]
fn the_matmul_example_is_right() {
    use matmul::{ALayout, BLayout, CLayout, M, N};
    let (a_rm, b_rm) = matmul::inputs();
    let a = Tensor::from_row_major(ALayout, &a_rm, vec![0.0; ALayout::STORAGE_LEN]).unwrap();
    let b = Tensor::from_row_major(BLayout, &b_rm, vec![0.0; BLayout::STORAGE_LEN]).unwrap();
    let (a, b) = (
        Tensor::new(ALayout, a.storage()).unwrap(),
        Tensor::new(BLayout, b.storage()).unwrap(),
    );
    let mut c_storage = vec![f32::NAN; CLayout::STORAGE_LEN];
    matmul::matmul(
        &a,
        &b,
        &mut Tensor::new(CLayout, &mut c_storage[..]).unwrap(),
    );
    let mut want = vec![0.0; M * N];
    matmul::matmul_naive(&a_rm, &b_rm, &mut want);
    let mut got = vec![0.0; M * N];
    Tensor::new(CLayout, &c_storage[..])
        .unwrap()
        .to_row_major(&mut got)
        .unwrap();
    assert_eq!(got, want);
    let mut by_hand = vec![f32::NAN; CLayout::STORAGE_LEN];
    matmul::matmul_by_hand(a.storage(), b.storage(), &mut by_hand);
    assert_eq!(by_hand, c_storage);
    #[cfg(feature = "half")]
    {
        use xla_layout::relayout::half::bf16;
        let rm: Vec<bf16> = b_rm.iter().map(|&x| bf16::from_f32(x)).collect();
        let b16 = Tensor::from_row_major(
            matmul::bf16::B16Layout,
            &rm,
            vec![bf16::ZERO; matmul::bf16::B16Layout::STORAGE_LEN],
        )
        .unwrap();
        let b16 = Tensor::new(matmul::bf16::B16Layout, b16.storage()).unwrap();
        let mut c16 = vec![f32::NAN; CLayout::STORAGE_LEN];
        matmul::bf16::matmul(&a, &b16, &mut Tensor::new(CLayout, &mut c16[..]).unwrap());
        assert_eq!(c16, c_storage);
    }
}

/// A tile as a `layout!` tensor of its own: checked once, then read and
/// written with the tile layout's folded offsets.
#[test]
fn tiles_as_layout_values() {
    let l = layout!("u32[19,260]{1,0:T(8,128)(2,1)}");
    let tile = layout!("u32[8,128]{1,0:T(2,1)}");
    let rt = l.runtime();
    let case = Case::new(&reference_of(&rt));
    let t = Tensor::new(l, &case.storage[..]).unwrap();
    let mut seen = 0;
    for (at, tt) in t.tiles_as(tile).unwrap() {
        for (i, &x) in tt.indexed_iter() {
            let [r, col] = [at.origin[0] + i[0], at.origin[1] + i[1]];
            match t.get([r, col]) {
                Some(&y) => assert_eq!(x, y),
                None => assert_eq!(x, SENTINEL),
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 9 * 1024);
    let mut w = Tensor::new(l, vec![SENTINEL; l.storage_len()]).unwrap();
    for (at, mut tt) in w.tiles_mut_as(tile).unwrap() {
        for r in 0..8 {
            for col in 0..128 {
                if let Some(&y) = t.get([at.origin[0] + r, at.origin[1] + col]) {
                    tt[[r, col]] = y;
                }
            }
        }
    }
    assert_eq!(w.storage(), &case.storage[..]);
    let Err(err) = t.tiles_as(layout!("u32[8,128]{1,0}")) else {
        panic!("a wrong tile layout was accepted")
    };
    assert_eq!(err.expected().to_string(), "u32[8,128]{1,0:T(2,1)}");
    assert!(t.tiles_as(&rt).is_err());
}

/// `tile_tensors`/`tile_tensors_mut` of a `layout!` layout with tiles, against
/// the reference: the tile type is the run-time `tile_layout`, and through its
/// folded offsets every slot of every tile holds the element the reference
/// puts there, or is padding where the tile overhangs the dims.
fn check_tile_tensors<L>(l: L)
where
    L: xla_layout::tensor::TiledLayout + AnyLayout<Index = <L as StaticLayout>::Index>,
{
    type Tile<L> = <L as xla_layout::tensor::TiledLayout>::Tile;
    let rt = l.runtime();
    let case = Case::new(&reference_of(&rt));
    let t = Tensor::new(l, &case.storage[..]).unwrap();
    assert_eq!(Tile::<L>::SPEC, t.tile_layout().to_string(), "{l}");
    let shape = case.plain_first_tile().expect("a first tile without `*`");
    let m2m = rt.minor_to_major();
    // Where a tile's local index lands in the whole tensor, `None` past the dims.
    let parent = |origin: &[usize], local: &[usize]| {
        let mut at = origin.to_vec();
        for (i, &x) in local.iter().enumerate() {
            at[m2m[shape.len() - 1 - i]] += x;
        }
        at.iter().zip(rt.dims()).all(|(i, d)| i < d).then_some(at)
    };
    let (mut tiles, mut padding) = (0, 0);
    for (at, tt) in t.tile_tensors() {
        assert_eq!(tt.storage().len(), Tile::<L>::STORAGE_LEN, "{l}");
        for (local, &x) in tt.indexed_iter() {
            let slot = at.offset + Tile::<L>::default().offset(local);
            assert_eq!(tt[local], x, "{l}");
            if let Some(p) = parent(at.origin.as_ref(), local.as_ref()) {
                assert_eq!(x, case.logical[ravel(&p, rt.dims())], "{l} {p:?}");
                assert_eq!(case.slots[slot].as_deref(), Some(&p[..]), "{l}");
            } else {
                assert_eq!(x, SENTINEL, "{l} tile {} {local:?}", at.number);
                assert!(t.is_padding(slot), "{l}");
                padding += 1;
            }
        }
        tiles += 1;
    }
    assert_eq!(tiles, t.tiles().len(), "{l}");
    // Every padding slot inside the tiles is one a tile index overhangs onto,
    // or padding the tile's own layout adds.
    let tile_padding = tiles * Tile::<L>::PADDING_LEN;
    let body = tiles * Tile::<L>::STORAGE_LEN;
    let body_padding = case.slots[..body].iter().filter(|s| s.is_none()).count();
    assert_eq!(padding + tile_padding, body_padding, "{l}");
    // Writes through the tile tensors land where the reference says.
    let mut w = Tensor::new(l, vec![SENTINEL; L::STORAGE_LEN]).unwrap();
    for (at, mut tt) in w.tile_tensors_mut() {
        let mut local = <Tile<L> as StaticLayout>::Index::default();
        for k in 0..Tile::<L>::STORAGE_LEN {
            let Some(i) = Tile::<L>::default().index_of(k) else {
                continue;
            };
            local.as_mut().copy_from_slice(i.as_ref());
            if let Some(p) = parent(at.origin.as_ref(), local.as_ref()) {
                tt[local] = case.logical[ravel(&p, rt.dims())];
            }
        }
    }
    assert_eq!(w.storage(), &case.storage[..], "{l}");
}

/// The tile types `layout!` gives tiled layouts, on random tiled layouts
/// (from `random_layout`, with padding in edge tiles) and the TPU ones.
#[test]
fn tile_tensors_match_the_reference() {
    check_tile_tensors(layout!("u32[4,5,1,2]{2,0,1,3:T(2)(6)(*,2)}", tile = T));
    check_tile_tensors(layout!("u32[6,5,1]{0,1,2:T(8,1)(1)}", tile = T));
    check_tile_tensors(layout!("u32[3,1,5,1,5]{1,2,3,4,0:T(1,2)}", tile = T));
    check_tile_tensors(layout!("u32[4,2,1]{2,1,0:T(3)(4)L(8)}", tile = T));
    check_tile_tensors(layout!("u32[4,5,4]{2,1,0:T(1,4)(6,1)(3,4,4)}", tile = T));
    check_tile_tensors(layout!("u32[3,3,3]{2,0,1:T(2,2,1)}", tile = T));
    check_tile_tensors(layout!("u32[1,2]{0,1:T(4,3)(3)(3)L(16)}", tile = T));
    check_tile_tensors(layout!("u32[5]{0:T(7)L(16)}", tile = T));
    check_tile_tensors(layout!("u32[3,1,4,5,6]{0,1,3,4,2:T(4)}", tile = T));
    check_tile_tensors(layout!("u32[2,3,1,1,4]{1,2,0,3,4:T(4,4,1,2)}", tile = T));
    check_tile_tensors(layout!("u32[3]{0:T(4)L(8)}", tile = T));
    check_tile_tensors(layout!(
        "u32[5,2,3,6,3]{2,4,0,1,3:T(16,4,3)L(16)}",
        tile = T
    ));
    check_tile_tensors(layout!("u32[6,2,1,3,2]{3,2,0,1,4:T(6)}", tile = T));
    check_tile_tensors(layout!(
        "u32[4,3,2,1,2]{2,4,1,0,3:T(1,16,1,3,2)(1)(1,*,7,*,1)}",
        tile = T
    ));
    check_tile_tensors(layout!("u32[4,2,5,2]{0,2,3,1:T(3)}", tile = T));
    check_tile_tensors(layout!("u32[2,3,5,3]{1,2,0,3:T(4,2)}", tile = T));
    check_tile_tensors(layout!("u32[1,2,1,6]{3,0,2,1:T(1,4)}", tile = T));
    check_tile_tensors(layout!("u32[2,4,4]{2,1,0:T(3)L(16)}", tile = T));
    check_tile_tensors(layout!("u32[1]{0:T(3)}", tile = T));
    check_tile_tensors(layout!("u32[2,3,4,1,5]{0,4,3,1,2:T(32)}", tile = T));
    check_tile_tensors(layout!("u32[5,1]{1,0:T(8,1)}", tile = T));
    check_tile_tensors(layout!("u32[5,4]{0,1:T(5,16)(1)(8)L(16)}", tile = T));
    check_tile_tensors(layout!("u32[2,5,5]{1,2,0:T(2)}", tile = T));
    check_tile_tensors(layout!("u32[2,4,4,3,4]{2,1,0,3,4:T(2,16)}", tile = T));
    check_tile_tensors(layout!("u32[19,260]{1,0:T(8,128)(2,1)}", tile = T));
    check_tile_tensors(layout!("u32[19,260]{0,1:T(8,128)}", tile = T));
}

/// `tile = Name` names the tile's layout: one level (the tile type of
/// `(8,128)(2,1)` is the `(2,1)` layout), padding value inherited.
#[test]
fn tile_types_are_named_layouts() {
    use xla_layout::tensor::TiledLayout;
    layout!(struct W = "bf16[19,260]{1,0:T(8,128)(2,1)}", tile = WTile);
    assert_eq!(<W as TiledLayout>::Tile::SPEC, "bf16[8,128]{1,0:T(2,1)}");
    assert_eq!(WTile::DIMS, [8, 128]);
    assert_eq!(WTile.offset([1, 0]), 1);
    layout!(struct P = "f32[3,5]{1,0:T(2,2)}", padding_value = lowest, tile = PTile);
    assert_eq!(PTile::SPEC, "f32[2,2]{1,0}");
    assert_eq!(
        <PTile as StaticLayout>::PADDING_VALUE,
        xla_layout::PaddingValue::Lowest
    );
}
