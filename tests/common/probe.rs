//! The differential probe of the bulk relayout paths, shared by
//! `tests/relayout_probe.rs` (a bounded number of seeded cases) and the
//! `relayout` fuzz target (as many as the fuzzer runs).
//!
//! One case is a random layout and a second layout of the same dims. Every
//! bulk path runs on it: `pack`, `unpack` and `convert` (with and without
//! a fill), their plans whole, in 1 to 17 chunks (in reverse order) and on
//! threads, on `Threads::Pool` (feature `rayon`), every tensor path, and for sub-byte
//! layouts `pack_bits`, `unpack_bits` and `convert_bits`. Each result is
//! compared with what the plain reference (`reference.rs`) says each slot
//! holds, or, for layouts too large to materialise there, with what
//! `Layout::offset` says, checked against `index_of` on a sample. Every
//! buffer sits at an odd element offset inside a larger allocation with
//! guard values either side, which must be untouched afterwards: a kernel
//! that writes a byte too far, or a chunk that writes outside its range,
//! fails here even where the bytes it was asked for are right.

use super::reference::{random_layout, ravel, unravel, RefLayout, Rng};
use super::specgen::generate;
use super::values::Value;
use xla_layout::{parse, tensor::Tensor, Layout, RelayoutError, RelayoutPlan};
use xla_layout::{Options, Threads};

/// The size past which destinations stream (`STREAM_BYTES` in
/// `relayout/plan.rs`): the large cases go beyond it.
pub const STREAM_BYTES: usize = 8 << 20;

/// `len` values inside a larger allocation, at an odd element offset, with
/// guard values before and after.
pub struct Guarded<T> {
    buf: Vec<T>,
    at: usize,
    len: usize,
    guard: T,
}

impl<T: Value> Guarded<T> {
    /// `len` values made by `init`, followed by 1 to 40 guard values, at an
    /// odd offset of 1 to 63 elements half the time, else 16, 32, 48 or 64
    /// bytes in (so at each place in a cache line of a 16-byte aligned
    /// allocation, where the aligned kernels run).
    pub fn new(rng: &mut Rng, len: usize, init: impl Fn(usize) -> T) -> Self {
        let at = if rng.one_in(2) {
            1 + 2 * rng.pick(32)
        } else {
            (1 + rng.pick(4)) * 16 / std::mem::size_of::<T>()
        };
        let after = 1 + rng.pick(40);
        let guard = T::make(0x6a09_e667 + rng.pick(1 << 20));
        let mut buf = vec![guard; at + len + after];
        for (i, v) in buf[at..at + len].iter_mut().enumerate() {
            *v = init(i);
        }
        Guarded {
            buf,
            at,
            len,
            guard,
        }
    }

    pub fn get(&self) -> &[T] {
        &self.buf[self.at..self.at + self.len]
    }

    pub fn get_mut(&mut self) -> &mut [T] {
        &mut self.buf[self.at..self.at + self.len]
    }

    /// Panics if a value either side of the buffer changed.
    pub fn check(&self, what: &str) {
        let (before, rest) = self.buf.split_at(self.at);
        let after = &rest[self.len..];
        if let Some(i) = before.iter().rposition(|v| *v != self.guard) {
            panic!("{what}: wrote {} values before the buffer", self.at - i);
        }
        if let Some(i) = after.iter().position(|v| *v != self.guard) {
            panic!("{what}: wrote {} values past the buffer", i + 1);
        }
    }
}

/// Each storage slot's row-major logical position, `None` for padding: from
/// the plain reference when given, else from `Layout::offset` of every
/// index, with `index_of` checked on every slot of small layouts and on
/// about a thousand of large ones.
pub fn slot_map(l: &Layout, r: Option<&RefLayout>) -> Vec<Option<usize>> {
    let spec = l.to_string();
    if let Some(r) = r {
        let map: Vec<Option<usize>> = r
            .slots()
            .into_iter()
            .map(|s| s.map(|i| ravel(&i, &r.dims)))
            .collect();
        assert_eq!(map.len(), l.storage_len(), "{spec}: storage_len");
        return map;
    }
    let dims = l.dims();
    let mut map = vec![None; l.storage_len()];
    let mut index = vec![0; dims.len()];
    for p in 0..l.len() {
        let slot = l.offset(&index);
        assert!(map[slot].is_none(), "{spec}: two elements at {slot}");
        map[slot] = Some(p);
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let step = (map.len() / 1000).max(1);
    for slot in (0..map.len()).step_by(step) {
        let want = map[slot].map(|p| unravel(p, dims));
        assert_eq!(
            l.index_of(slot).as_deref(),
            want.as_deref(),
            "{spec}: index_of({slot})"
        );
    }
    map
}

/// What the storage holds: element `p` is `value(p)`, padding `fill`.
fn laid_out<T: Copy>(map: &[Option<usize>], value: impl Fn(usize) -> T, fill: T) -> Vec<T> {
    map.iter().map(|s| s.map_or(fill, &value)).collect()
}

/// Runs `plan` in `1 + rng.pick(17)` chunks, in reverse order, each on its
/// own range of one guarded buffer, then again on threads through
/// `chunks_mut`; both must write `want`.
fn run_chunks<T: Value>(
    rng: &mut Rng,
    plan: &RelayoutPlan<'_, T>,
    src: &[T],
    want: &[T],
    what: &str,
) {
    let n = 1 + rng.pick(17);
    let mut cut = Guarded::new(rng, plan.dst_len(), |_| T::GARBAGE);
    let chunks: Vec<_> = plan.chunks(n).collect();
    let mut next = 0;
    for c in &chunks {
        assert_eq!(c.range().start, next, "{what}: {n} chunks leave a gap");
        next = c.range().end;
    }
    assert_eq!(next, plan.dst_len(), "{what}: {n} chunks");
    for c in chunks.iter().rev() {
        c.run(src, &mut cut.get_mut()[c.range()]).unwrap();
    }
    cut.check(&format!("{what}: {n} chunks"));
    assert!(cut.get() == want, "{what}: {n} chunks");

    let mut threads = Guarded::new(rng, plan.dst_len(), |_| T::GARBAGE);
    std::thread::scope(|s| {
        for (c, part) in plan.chunks_mut(n, threads.get_mut()).unwrap() {
            s.spawn(move || c.run(src, part).unwrap());
        }
    });
    threads.check(&format!("{what}: {n} chunks on threads"));
    assert!(threads.get() == want, "{what}: {n} chunks on threads");
}

/// One layout `l` and a second `to` of the same dims, elements as wide as
/// `T`: every whole-element bulk path against the slot maps (the tensor
/// paths that go element by element only with `every_element`).
pub fn element_case<T: Value>(
    rng: &mut Rng,
    l: &Layout,
    map: &[Option<usize>],
    to: &Layout,
    to_map: &[Option<usize>],
    every_element: bool,
) {
    let spec = l.to_string();
    let logical: Vec<T> = (0..l.len()).map(T::make).collect();
    let fill = T::make(usize::MAX - rng.pick(100));
    let want = laid_out(map, |p| logical[p], fill);
    let want_default = laid_out(map, |p| logical[p], T::default());
    let src = Guarded::new(rng, l.len(), |i| logical[i]);

    // pack, with a fill and without.
    let mut dst = Guarded::new(rng, l.storage_len(), |_| T::GARBAGE);
    l.pack(src.get(), dst.get_mut(), Options::fill(fill))
        .unwrap();
    dst.check(&format!("pack {spec}"));
    assert!(dst.get() == want, "pack {spec}");
    let mut defaulted = Guarded::new(rng, l.storage_len(), |_| T::GARBAGE);
    l.pack(src.get(), defaulted.get_mut(), Options::default())
        .unwrap();
    defaulted.check(&format!("pack {spec}"));
    assert!(defaulted.get() == want_default, "pack {spec}: default fill");
    let plan = l.pack_plan(fill).unwrap();
    run_chunks(rng, &plan, src.get(), &want, &format!("pack plan {spec}"));

    // unpack.
    let mut back = Guarded::new(rng, l.len(), |_| T::GARBAGE);
    l.unpack(dst.get(), back.get_mut(), Threads::One).unwrap();
    back.check(&format!("unpack {spec}"));
    assert!(back.get() == logical, "unpack {spec}");
    let plan = l.unpack_plan::<T>().unwrap();
    run_chunks(
        rng,
        &plan,
        dst.get(),
        &logical,
        &format!("unpack plan {spec}"),
    );

    // convert, both ways: from `l`'s storage and from `to`'s.
    let to_storage = laid_out(to_map, |p| logical[p], T::GARBAGE);
    convert_case(rng, l, &want, to, to_map, &logical);
    convert_case(rng, to, &to_storage, l, map, &logical);

    par_paths(rng, l, &logical, &want_default, to, to_map);
    tensor_paths(rng, l, map, &logical, to, to_map, every_element);
}

/// `from.convert` of `storage` into `into`, with a fill and without,
/// whole and as a plan in chunks.
fn convert_case<T: Value>(
    rng: &mut Rng,
    from: &Layout,
    storage: &[T],
    into: &Layout,
    into_map: &[Option<usize>],
    logical: &[T],
) {
    let what = format!("convert {from} -> {into}");
    let fill = T::make(usize::MAX / 2 + rng.pick(100));
    let want = laid_out(into_map, |p| logical[p], fill);
    let mut out = Guarded::new(rng, into.storage_len(), |_| T::GARBAGE);
    from.convert(storage, into, out.get_mut(), Options::fill(fill))
        .unwrap();
    out.check(&what);
    assert!(out.get() == want, "{what}");
    let mut defaulted = Guarded::new(rng, into.storage_len(), |_| T::GARBAGE);
    from.convert(storage, into, defaulted.get_mut(), Options::default())
        .unwrap();
    defaulted.check(&what);
    assert!(
        defaulted.get() == laid_out(into_map, |p| logical[p], T::default()),
        "{what}: default fill"
    );
    let plan = from.convert_plan(into, fill).unwrap();
    run_chunks(rng, &plan, storage, &want, &format!("{what} plan"));
}

/// `pack`, `unpack` and `convert` on `Threads::Pool` (feature `rayon`).
#[cfg(feature = "rayon")]
fn par_paths<T: Value>(
    rng: &mut Rng,
    l: &Layout,
    logical: &[T],
    want: &[T],
    to: &Layout,
    to_map: &[Option<usize>],
) {
    let spec = l.to_string();
    let mut dst = Guarded::new(rng, l.storage_len(), |_| T::GARBAGE);
    l.pack(
        logical,
        dst.get_mut(),
        Options::default().threads(Threads::Pool),
    )
    .unwrap();
    dst.check(&format!("pool pack {spec}"));
    assert!(dst.get() == want, "pool pack {spec}");
    let mut back = Guarded::new(rng, l.len(), |_| T::GARBAGE);
    l.unpack(dst.get(), back.get_mut(), Threads::Pool).unwrap();
    back.check(&format!("pool unpack {spec}"));
    assert!(back.get() == logical, "pool unpack {spec}");
    let mut out = Guarded::new(rng, to.storage_len(), |_| T::GARBAGE);
    l.convert(
        dst.get(),
        to,
        out.get_mut(),
        Options::default().threads(Threads::Pool),
    )
    .unwrap();
    out.check(&format!("pool convert {spec} -> {to}"));
    assert!(
        out.get() == laid_out(to_map, |p| logical[p], T::default()),
        "pool convert {spec} -> {to}"
    );
}

#[cfg(not(feature = "rayon"))]
fn par_paths<T: Value>(_: &mut Rng, _: &Layout, _: &[T], _: &[T], _: &Layout, _: &[Option<usize>]) {
}

/// Every path of a `Tensor` over guarded storage: building, reading back,
/// element access, iteration, writes through each mutable path, fills,
/// copies from another layout, and tiles. Without `every_element` (large
/// layouts in unoptimized builds), only the paths that walk in bulk.
#[allow(clippy::too_many_lines)]
fn tensor_paths<T: Value>(
    rng: &mut Rng,
    l: &Layout,
    map: &[Option<usize>],
    logical: &[T],
    to: &Layout,
    to_map: &[Option<usize>],
    every_element: bool,
) {
    let spec = l.to_string();
    let dims = l.dims();
    let want = laid_out(map, |p| logical[p], T::default());
    let mut storage = Guarded::new(rng, l.storage_len(), |_| T::GARBAGE);
    {
        let mut t = Tensor::from_row_major(l, logical, storage.get_mut()).unwrap();
        assert!(t.storage() == want, "from_row_major {spec}");

        let mut out = Guarded::new(rng, l.len(), |_| T::GARBAGE);
        t.to_row_major(out.get_mut()).unwrap();
        out.check(&format!("to_row_major {spec}"));
        assert!(out.get() == logical, "to_row_major {spec}");

        assert!(t.iter().copied().eq(logical.iter().copied()), "iter {spec}");
        if every_element {
            for (p, (index, x)) in t.indexed_iter().enumerate() {
                assert_eq!(&*index, unravel(p, dims).as_slice(), "indexed_iter {spec}");
                assert_eq!(*x, logical[p], "indexed_iter {spec} at {p}");
            }
            for (slot, s) in map.iter().enumerate() {
                assert_eq!(t.is_padding(slot), s.is_none(), "is_padding {spec} {slot}");
            }
            for (p, x) in logical.iter().enumerate() {
                let index = unravel(p, dims);
                assert_eq!(t.get(&index), Some(x), "get {spec} {index:?}");
                *t.get_mut(&index).unwrap() = T::make(p + 3);
            }
            assert!(
                t.storage() == laid_out(map, |p| T::make(p + 3), T::default()),
                "get_mut {spec}"
            );
        }
        if every_element && !dims.is_empty() && !l.is_empty() {
            let mut outside = unravel(0, dims);
            let d = rng.pick(dims.len());
            outside[d] = dims[d] + rng.pick(3);
            assert_eq!(t.get(&outside), None, "get {spec} {outside:?}");
        }

        let mut next = 0;
        t.for_each_mut(|x| {
            *x = T::make(next + 5);
            next += 1;
        });
        assert_eq!(next, l.len(), "for_each_mut {spec}");
        assert!(
            t.storage() == laid_out(map, |p| T::make(p + 5), T::default()),
            "for_each_mut {spec}"
        );
        if every_element {
            t.indexed_for_each_mut(|index, x| *x = T::make(ravel(&index, dims) + 7));
            assert!(
                t.storage() == laid_out(map, |p| T::make(p + 7), T::default()),
                "indexed_for_each_mut {spec}"
            );
        }
        #[cfg(feature = "alloc")]
        {
            for (p, x) in t.iter_mut().enumerate() {
                *x = T::make(p + 9);
            }
            assert!(
                t.storage() == laid_out(map, |p| T::make(p + 9), T::default()),
                "iter_mut {spec}"
            );
        }

        let (value, padding) = (T::make(usize::MAX - 200), T::make(usize::MAX - 300));
        t.fill(value);
        assert!(
            t.storage() == laid_out(map, |_| value, T::default()),
            "fill {spec}"
        );
        t.fill_padding(padding);
        assert!(
            t.storage() == laid_out(map, |_| value, padding),
            "fill_padding {spec}"
        );

        let other_storage = laid_out(to_map, |p| logical[p], T::GARBAGE);
        let other = Tensor::new(to, other_storage.as_slice()).unwrap();
        t.copy_from(&other).unwrap();
        assert!(t.storage() == want, "copy_from {to} into {spec}");

        let tile_len = t.tile_layout().storage_len();
        let mut count = 0;
        for (at, tile) in t.tiles() {
            assert_eq!(at.offset, at.number * tile_len, "tiles {spec}");
            assert!(
                tile == &want[at.offset..at.offset + tile_len],
                "tiles {spec}"
            );
            let origin = map[at.offset].map_or_else(|| vec![0; dims.len()], |p| unravel(p, dims));
            assert_eq!(&*at.origin, origin.as_slice(), "tiles {spec}: origin");
            count += 1;
        }
        assert!(count * tile_len <= l.storage_len(), "tiles {spec}");
        let grid = t.tile_grid();
        for _ in 0..if every_element { 8.min(l.len()) } else { 0 } {
            let element = rng.pick(l.len());
            let index = unravel(element, dims);
            let (at, tile) = grid.tile_of(&index).unwrap();
            let slot = map.iter().position(|s| *s == Some(element)).unwrap();
            assert_eq!(
                at.number,
                slot / tile_len.max(1),
                "tile_of {spec} {index:?}"
            );
            assert_eq!(
                tile[slot - at.offset],
                logical[element],
                "tile_of {spec} {index:?}"
            );
        }
        for (at, tile) in t.tiles_mut() {
            for (i, x) in tile.iter_mut().enumerate() {
                *x = T::make(at.offset + i + 11);
            }
        }
        let whole = count * tile_len;
        assert!(
            t.storage()[..whole]
                .iter()
                .enumerate()
                .all(|(i, x)| *x == T::make(i + 11)),
            "tiles_mut {spec}"
        );
        assert!(
            t.storage()[whole..] == want[whole..],
            "tiles_mut {spec}: past the tiles"
        );
    }
    storage.check(&format!("tensor {spec}"));
}

/// The bytes of an element whose low `k` bits are `raw`, as `pack_bits`
/// takes them: sign-extended for a signed integer type.
fn element_byte(raw: u8, k: u32, signed: bool) -> u8 {
    if signed {
        let shift = 8 - k;
        (i8::from_ne_bytes([raw << shift]) >> shift).to_ne_bytes()[0]
    } else {
        raw
    }
}

/// The `n`-bit storage of `values` (one per slot), first slot in the low bits.
fn pack_bytes(values: &[u8], n: u32) -> Vec<u8> {
    let per = 8 / n as usize;
    let mut bytes = vec![0u8; (values.len() * n as usize).div_ceil(8)];
    let mask = (1u8 << n) - 1;
    for (k, &v) in values.iter().enumerate() {
        bytes[k / per] |= (v & mask) << ((k % per) as u32 * n);
    }
    bytes
}

/// A sub-byte layout `l` and a second `to` of the same dims and bits:
/// `pack_bits`, `unpack_bits` (into `u8`, `i8` and `bool`) and
/// `convert_bits` against the slot maps, and a value that does not fit
/// refused with the destination untouched.
pub fn bits_case(
    rng: &mut Rng,
    l: &Layout,
    map: &[Option<usize>],
    to: &Layout,
    to_map: &[Option<usize>],
) {
    let spec = l.to_string();
    let n = l.element_bits();
    let element = l.element_type();
    let k = n.min(element.min_bits());
    let signed = element.name().starts_with('s');
    let seed = rng.next_u64();
    let raw = |p: usize| (seed.rotate_left(p as u32 % 64) as usize ^ p) as u8 & ((1 << k) - 1);
    let logical: Vec<u8> = (0..l.len())
        .map(|p| element_byte(raw(p), k, signed))
        .collect();
    let fill = element_byte(rng.pick(256) as u8 & ((1 << k) - 1), k, signed);
    let mask = (1u8 << n) - 1;
    let want = pack_bytes(&laid_out(map, |p| logical[p], fill), n);
    assert_eq!(want.len(), l.storage_bytes(), "{spec}");

    let src = Guarded::new(rng, l.len(), |i| logical[i]);
    let mut dst = Guarded::new(rng, l.storage_bytes(), |_| 0xa5);
    l.pack_bits(src.get(), dst.get_mut(), Options::fill(fill))
        .unwrap();
    dst.check(&format!("pack_bits {spec}"));
    assert!(dst.get() == want, "pack_bits {spec}");
    let as_i8: Vec<i8> = logical.iter().map(|&v| i8::from_ne_bytes([v])).collect();
    let mut from_i8 = Guarded::new(rng, l.storage_bytes(), |_| 0x5a);
    l.pack_bits(&as_i8, from_i8.get_mut(), Options::fill(fill))
        .unwrap();
    from_i8.check(&format!("pack_bits i8 {spec}"));
    assert!(from_i8.get() == want, "pack_bits i8 {spec}");

    let mut back = Guarded::new(rng, l.len(), |_| 0xee);
    l.unpack_bits(dst.get(), back.get_mut(), Threads::One)
        .unwrap();
    back.check(&format!("unpack_bits {spec}"));
    assert!(
        back.get().iter().zip(&logical).all(|(b, v)| *b == v & mask),
        "unpack_bits u8 {spec}"
    );
    let mut back_i8 = vec![0x7fi8; l.len()];
    l.unpack_bits(dst.get(), &mut back_i8, Threads::One)
        .unwrap();
    assert!(
        back_i8
            .iter()
            .zip(&logical)
            .all(|(b, v)| b.to_ne_bytes()[0] == element_byte(v & mask, n, true)),
        "unpack_bits i8 {spec}"
    );
    let mut flags = vec![false; l.len()];
    l.unpack_bits(dst.get(), &mut flags, Threads::One).unwrap();
    assert!(
        flags
            .iter()
            .zip(&logical)
            .all(|(f, v)| *f == (v & mask != 0)),
        "unpack_bits bool {spec}"
    );

    let to_fill = element_byte(rng.pick(256) as u8 & ((1 << k) - 1), k, signed);
    let to_want = pack_bytes(&laid_out(to_map, |p| logical[p], to_fill), n);
    let mut out = Guarded::new(rng, to.storage_bytes(), |_| 0x3c);
    l.convert_bits(dst.get(), to, out.get_mut(), Options::fill(to_fill))
        .unwrap();
    out.check(&format!("convert_bits {spec} -> {to}"));
    assert!(out.get() == to_want, "convert_bits {spec} -> {to}");

    if !logical.is_empty() {
        let at = rng.pick(l.len());
        let mut wide = logical.clone();
        wide[at] = element_byte(1 << (k - 1), k, !signed) ^ if signed { 0 } else { 1 << k };
        let mut cleared = Guarded::new(rng, l.storage_bytes(), |i| i as u8 ^ 0x96);
        let err = l
            .pack_bits(&wide, cleared.get_mut(), Options::default())
            .unwrap_err();
        assert!(
            matches!(err, RelayoutError::ValueOutOfRange { position: Some(p), .. } if p == at),
            "{spec}: {:#x} at {at}: {err:?}",
            wide[at]
        );
        cleared.check(&format!("refused pack_bits {spec}"));
        assert!(
            cleared.get().iter().all(|&b| b == 0),
            "{spec}: storage not cleared on error"
        );
    }
}

/// A second layout of `r`'s dims and element type: another `minor_to_major`
/// and the tiles and `L` of another random layout (as
/// `reference::random_conversion_pair` draws them).
pub fn partner(rng: &mut Rng, r: &RefLayout) -> RefLayout {
    let other = random_layout(rng);
    let n = r.dims.len();
    let mut minor_to_major: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        minor_to_major.swap(i, rng.pick(i + 1));
    }
    RefLayout {
        type_name: r.type_name,
        dims: r.dims.clone(),
        minor_to_major,
        tiles: other.tiles,
        tail_alignment: other.tail_alignment,
    }
}

/// The spec of `r` with `E(bits)` among its attributes.
fn with_bits(r: &RefLayout, bits: u32) -> String {
    let spec = r.spec();
    match spec.strip_suffix('}') {
        Some(body) if body.contains(':') => format!("{body}E({bits})}}"),
        Some(body) => format!("{body}:E({bits})}}"),
        None => format!("{spec}{{:E({bits})}}"),
    }
}

/// One small case: a layout from the grammar-aware generator (half the
/// time) or from the reference's random layouts, at every element width the
/// layout allows, against the plain reference. Returns whether a case ran
/// (generated specs too large or of widths no path takes are passed over).
pub fn small_case(rng: &mut Rng) -> bool {
    let (r, bits) = if rng.one_in(2) {
        let g = generate(rng);
        // The reference materialises every step, zero dims counted as one
        // (`[0, 2^40]` is small but not its grids).
        let grids = g
            .tiled_shape(true)
            .iter()
            .try_fold(1u128, |n, &d| n.checked_mul(d));
        if !g.is_small() || grids.is_none_or(|n| n > 1 << 16) || g.dynamic.iter().any(|&d| d) {
            return false;
        }
        (RefLayout::from(&g), g.element_bits)
    } else {
        let r = random_layout(rng);
        // Sub-byte types a quarter of the time, `pred` among them in `E(1)`.
        let sub = [
            ("s4", None),
            ("u4", None),
            ("u2", None),
            ("s2", None),
            ("s1", None),
            ("pred", Some(1)),
        ];
        if rng.one_in(4) {
            let &(name, bits) = rng.choose(&sub);
            (r.retyped(name), bits)
        } else {
            (r, None)
        }
    };
    let to_ref = partner(rng, &r);
    let (spec, to_spec) = match bits {
        Some(b) => (with_bits(&r, b), with_bits(&to_ref, b)),
        None => (r.spec(), to_ref.spec()),
    };
    let (Ok(l), Ok(to)) = (parse(&spec), parse(&to_spec)) else {
        panic!("`{spec}` or `{to_spec}` does not parse");
    };
    if to.storage_len() > 50_000 {
        return false;
    }
    let (map, to_map) = (slot_map(&l, Some(&r)), slot_map(&to, Some(&to_ref)));
    match l.element_bits() {
        1 | 2 | 4
            if !(l.element_bits() < l.element_type().min_bits()
                && l.element_type().name().starts_with(['f', 'b', 'c'])) =>
        {
            bits_case(rng, &l, &map, &to, &to_map);
        }
        8 => element_case::<u8>(rng, &l, &map, &to, &to_map, true),
        16 => element_case::<u16>(rng, &l, &map, &to, &to_map, true),
        32 => element_case::<u32>(rng, &l, &map, &to, &to_map, true),
        64 => element_case::<u64>(rng, &l, &map, &to, &to_map, true),
        _ => return false,
    }
    true
}

/// One large case: a layout whose storage is past [`STREAM_BYTES`], so the
/// streaming kernels run, against `Layout::offset` (the reference cannot
/// materialise it). Its tiles are one of TPU's or, a quarter of the time, a
/// random layout's; its dims are drawn so the storage lands between 8 and
/// about 16 MiB, its minor dim rarely a multiple of a tile. `every_element`
/// as in [`element_case`].
pub fn large_case(rng: &mut Rng, every_element: bool) {
    let s = Some;
    let tpu: [&[&[Option<usize>]]; 7] = [
        &[],
        &[&[s(8), s(128)]],
        &[&[s(8), s(128)], &[s(2), s(1)]],
        &[&[s(8), s(128)], &[s(4), s(1)]],
        &[&[s(4), s(128)]],
        &[&[s(2), s(128)], &[s(2), s(1)]],
        &[&[s(128)]],
    ];
    // (type, bytes per element; 0 for `s4` in `E(4)`)
    let (type_name, bytes) =
        *rng.choose(&[("u8", 1), ("bf16", 2), ("f32", 4), ("f64", 8), ("s4", 0)]);
    let tiles: Vec<Vec<Option<usize>>> = if rng.one_in(4) {
        random_layout(rng).tiles
    } else if bytes == 0 {
        vec![vec![s(8), s(128)], vec![s(8), s(1)]]
    } else {
        rng.choose(&tpu).iter().map(|t| t.to_vec()).collect()
    };
    let elems =
        (STREAM_BYTES + rng.pick(STREAM_BYTES / 2)) / bytes.max(1) * if bytes == 0 { 2 } else { 1 };
    let rank = 2 + rng.pick(2);
    let minor = 100 + rng.pick(1400);
    let mut dims = vec![minor; rank];
    if rank == 3 {
        dims[1] = 1 + rng.pick(5);
    }
    dims[0] = elems / dims[1..].iter().product::<usize>() + 1;
    let mut minor_to_major: Vec<usize> = (0..rank).rev().collect();
    if rng.one_in(3) {
        minor_to_major.swap(0, 1);
    }
    let r = RefLayout {
        type_name,
        dims,
        minor_to_major,
        tiles,
        tail_alignment: 1,
    };
    let mut to = RefLayout {
        tiles: vec![vec![s(8), s(128)]],
        ..r.clone()
    };
    to.minor_to_major.swap(rank - 1, rank - 2);
    let (spec, to_spec) = if bytes == 0 {
        to.tiles.push(vec![s(8), s(1)]);
        (with_bits(&r, 4), with_bits(&to, 4))
    } else {
        (r.spec(), to.spec())
    };
    let (Ok(l), Ok(to)) = (parse(&spec), parse(&to_spec)) else {
        panic!("`{spec}` or `{to_spec}` does not parse");
    };
    // A random layout's tiles may pad too much to stay quick.
    if l.storage_bytes() > 3 * STREAM_BYTES || to.storage_bytes() > 3 * STREAM_BYTES {
        return;
    }
    let (map, to_map) = (slot_map(&l, None), slot_map(&to, None));
    match bytes {
        0 => bits_case(rng, &l, &map, &to, &to_map),
        1 => element_case::<u8>(rng, &l, &map, &to, &to_map, every_element),
        2 => element_case::<u16>(rng, &l, &map, &to, &to_map, every_element),
        4 => element_case::<u32>(rng, &l, &map, &to, &to_map, every_element),
        _ => element_case::<u64>(rng, &l, &map, &to, &to_map, every_element),
    }
}
