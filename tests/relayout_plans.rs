//! Reusable relayout plans and their chunks: every way of cutting a plan
//! writes the same bytes as the one-shot call, chunks write only their own
//! ranges, on threads too, and bad buffers are errors before any write.

#![allow(
    clippy::cast_precision_loss,
    clippy::float_cmp,
    clippy::many_single_char_names,
    reason = "test values are small integers, exact as floats, compared exactly"
)]

mod common;

use common::reference::{random_conversion_pair, Rng};
use common::specgen::generate;
use common::values::Value;
use xla_layout::Options;
use xla_layout::{parse, Layout, RelayoutError, RelayoutPlan};

/// Chunk counts to cut a plan of `len` destination slots into: none at
/// all, every count up to 17, some larger, and, where that stays quick,
/// more than there are slots (each unit its own chunk).
fn counts(len: usize) -> Vec<usize> {
    let mut n: Vec<usize> = (0..=17).collect();
    n.extend([64, 257, len / 64, len / 3]);
    if len <= 8192 {
        n.push(usize::MAX);
    }
    n
}

/// The promise of [`RelayoutPlan::chunks`] for `n` chunks: at least one and
/// at most `n`, `n` wherever every chunk can have 4 slots (the largest unit
/// a chunk boundary respects, four 8-bit elements), one a slot for
/// elements of 32 bits and more; disjoint, consecutive ranges that cover
/// the destination, none empty unless the destination is; lengths that
/// differ by less than two units, so that with 64 units a chunk on
/// average none is more than 1.1 times the mean. Chunks far into
/// a long iterator are reached by `nth` and agree with their neighbours.
fn check_ranges<T: Value>(plan: &RelayoutPlan<'_, T>, n: usize, what: &str) {
    let len = plan.dst_len();
    let chunks = plan.chunks(n);
    let count = chunks.len();
    assert!(
        count >= 1 && count <= n.max(1),
        "{what}: {count} chunks for {n}"
    );
    if len / 4 >= n {
        assert_eq!(count, n.max(1), "{what}: {n} chunks of {len} slots");
    }
    if std::mem::size_of::<T>() >= 4 {
        assert_eq!(count, n.clamp(1, len.max(1)), "{what}: {n} chunks");
    }
    assert!(
        count >= n.min(len / 4).max(1),
        "{what}: {count} chunks for {n}"
    );
    // Chunks by number: the first ones, some in the middle, the last ones.
    let mut picked: Vec<usize> = (0..count.min(40)).collect();
    picked.extend((0..40).map(|k| count / 2 + k).filter(|&i| i < count));
    picked.extend(count.saturating_sub(40)..count);
    picked.sort_unstable();
    picked.dedup();
    let ranges: Vec<_> = picked
        .iter()
        .map(|&i| plan.chunks(n).nth(i).expect("a chunk below len()").range())
        .collect();
    assert!(plan.chunks(n).nth(count).is_none(), "{what}: {n} chunks");
    let (mut shortest, mut longest) = (usize::MAX, 0);
    for (k, (&i, r)) in picked.iter().zip(&ranges).enumerate() {
        assert!(r.start <= r.end, "{what}: {n} chunks, chunk {i} is {r:?}");
        assert!(r.end <= len, "{what}: {n} chunks, chunk {i} is {r:?}");
        assert!(
            len == 0 || !r.is_empty(),
            "{what}: {n} chunks, chunk {i} empty"
        );
        if i == 0 {
            assert_eq!(r.start, 0, "{what}: {n} chunks");
        }
        if i + 1 == count {
            assert_eq!(r.end, len, "{what}: {n} chunks");
        }
        if k > 0 && picked[k - 1] + 1 == i {
            assert_eq!(
                ranges[k - 1].end,
                r.start,
                "{what}: {n} chunks, gap before {i}"
            );
        }
        shortest = shortest.min(r.len());
        longest = longest.max(r.len());
    }
    // One slot a unit for elements of 32 bits and more.
    let unit = if std::mem::size_of::<T>() >= 4 { 1 } else { 4 };
    assert!(
        longest - shortest < 2 * unit,
        "{what}: {n} chunks from {shortest} to {longest} slots"
    );
    if len >= 64 * unit * count {
        let mean = len as f64 / count as f64;
        assert!(
            longest as f64 <= 1.1 * mean,
            "{what}: {n} chunks, the longest of {longest} slots against a mean of {mean}"
        );
    }
}

/// Runs `plan` whole and cut into each of [`counts`] chunks (in reverse
/// order, to catch chunks that depend on each other), checking ranges and
/// bytes.
fn all_cuts<T: Value>(plan: &RelayoutPlan<'_, T>, src: &[T], what: &str) {
    let mut whole = vec![T::GARBAGE; plan.dst_len()];
    plan.run(src, &mut whole).unwrap();
    for n in counts(plan.dst_len()) {
        check_ranges(plan, n, what);
        let chunks: Vec<_> = plan.chunks(n).collect();
        let mut next = 0;
        for c in &chunks {
            assert_eq!(c.range().start, next, "{what}: {n} chunks leave a gap");
            next = c.range().end;
        }
        assert_eq!(next, plan.dst_len(), "{what}: {n} chunks");
        let mut cut = vec![T::GARBAGE; plan.dst_len()];
        for c in chunks.iter().rev() {
            // Anything written outside the range would be caught: the
            // chunk sees its own part only.
            c.run(src, &mut cut[c.range()]).unwrap();
        }
        assert!(cut == whole, "{what}: {n} chunks differ from one run");
        let mut split = vec![T::GARBAGE; plan.dst_len()];
        for (c, part) in plan.chunks_mut(n, &mut split).unwrap() {
            c.run(src, part).unwrap();
        }
        assert!(split == whole, "{what}: chunks_mut({n})");
    }
}

fn pack_and_unpack<T: Value>(l: &Layout) {
    let spec = l.to_string();
    let logical: Vec<T> = (0..l.len()).map(T::make).collect();
    let fill = T::make(usize::MAX);
    let pack = l.pack_plan(fill).unwrap();
    all_cuts(&pack, &logical, &format!("pack {spec}"));
    let mut storage = vec![T::GARBAGE; l.storage_len()];
    l.pack(&logical, &mut storage, Options::fill(fill)).unwrap();
    let mut via_plan = vec![T::GARBAGE; l.storage_len()];
    pack.run(&logical, &mut via_plan).unwrap();
    assert!(
        via_plan == storage,
        "pack {spec}: plan and pack with a fill"
    );
    // The slot iterator, which shares no copy kernel with plans.
    let want: Vec<T> = l.slots().map(|p| p.map_or(fill, |p| logical[p])).collect();
    assert!(storage == want, "pack {spec}: against slots()");
    let unpack = l.unpack_plan::<T>().unwrap();
    all_cuts(&unpack, &storage, &format!("unpack {spec}"));
    let mut back = vec![T::GARBAGE; l.len()];
    unpack.run(&storage, &mut back).unwrap();
    assert!(back == logical, "unpack {spec}: round trip");
}

#[test]
fn chunks_of_random_layouts_match_one_run() {
    let mut rng = Rng::new(0x0c4_0000_000b);
    let mut done = 0;
    while done < 600 {
        let g = generate(&mut rng);
        if !g.is_small() || g.element_bits.is_some() {
            continue;
        }
        let Ok(l) = parse(&g.text) else { continue };
        match g.type_bits {
            8 => pack_and_unpack::<u8>(&l),
            16 => pack_and_unpack::<u16>(&l),
            32 => pack_and_unpack::<u32>(&l),
            64 => pack_and_unpack::<u64>(&l),
            _ => continue,
        }
        done += 1;
    }
}

/// Layouts large enough for every kind of cut: several tiles per chunk,
/// ragged edges, padding inside tiles, permutations and the `L(n)` tail.
#[test]
fn chunks_of_tpu_layouts_match_one_run() {
    for spec in [
        "f32[67,300]{1,0:T(8,128)}",
        "f32[67,300]{0,1:T(8,128)}",
        "f32[64,256]{1,0:T(8,128)}",
        "bf16[37,260]{1,0:T(8,128)(2,1)}",
        "bf16[4,6,5,130]{1,3,2,0:T(8,128)(2,1)}",
        "bf16[3,64,4,128]{1,3,2,0:T(8,128)(2,1)}",
        "s8[33,129]{1,0:T(8,128)(4,1)}",
        // Pairs and quads transposed from rows that end inside one (the
        // last goes element by element), or on one past the last tile.
        "bf16[37,259]{0,1:T(8,128)(2,1)}",
        "s8[35,387]{0,1:T(8,128)(4,1)}",
        "s8[20,516]{0,1:T(32,128)(4,1)}",
        "s8[3,70,389]{1,2,0:T(32,128)(4,1)}",
        "s8[1,3,70,513]{2,3,1,0:T(32,128)(4,1)}",
        "f32[50,70]{0,1}",
        "f32[5,9,140]{0,2,1:T(8,128)}",
        "f32[7,5]{0,1:L(16)}",
        "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "f32[5]{0:T(2)(4)}",
        "f32[11,10]{1,0:T(2,2)(*,3)}",
        "u32[]{:T(128)}",
        "f32[0,5]{1,0:T(8,128)}",
    ] {
        let l = parse(spec).unwrap();
        match l.element_bits() {
            8 => pack_and_unpack::<u8>(&l),
            16 => pack_and_unpack::<u16>(&l),
            _ => pack_and_unpack::<u32>(&l),
        }
    }
}

/// A random layout of the TPU family of `ty`: rank 1 to 4, ragged dims, a
/// random `minor_to_major`, one of the tilings TPUs use for the type (or
/// none), sometimes an `L(n)` tail; at most `1 << 15` slots.
fn tpu_family(rng: &mut Rng, ty: &str, dims: &[usize]) -> Option<Layout> {
    let tilings: &[&str] = match ty {
        "f32" => &["", "T(8,128)", "T(1024)", "T(1,128)", "T(8,128)(2,1)"],
        "bf16" => &[
            "",
            "T(8,128)(2,1)",
            "T(1024)(128)(2,1)",
            "T(1,128)",
            "T(8,128)",
            "T(1024)",
        ],
        _ => &["", "T(8,128)(4,1)", "T(1,128)", "T(1024)", "T(32,128)(4,1)"],
    };
    let rank = dims.len();
    let mut minor_to_major: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        minor_to_major.swap(i, rng.pick(i + 1));
    }
    let mut layout = minor_to_major
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let tiling = *rng.choose(tilings);
    let tail = if rng.one_in(4) {
        format!("L({})", rng.choose(&[16, 64, 1000, 1024]))
    } else {
        String::new()
    };
    if !tiling.is_empty() || !tail.is_empty() {
        layout = format!("{layout}:{tiling}{tail}");
    }
    let dims = dims
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let l = parse(&format!("{ty}[{dims}]{{{layout}}}")).unwrap();
    (l.storage_len() <= 1 << 15).then_some(l)
}

/// Random dims for [`tpu_family`]: rank 1 to 4, ragged against the tiles,
/// now and then a dim of 1.
fn tpu_dims(rng: &mut Rng) -> Vec<usize> {
    let rank = 1 + rng.pick(4);
    (0..rank)
        .map(|_| match rng.pick(4) {
            0 => 1 + rng.pick(3),
            1 => 1 + rng.pick(20),
            _ => 1 + rng.pick(300),
        })
        .collect()
}

/// Pack, unpack and conversions both ways within the TPU family, cut every
/// way (see [`all_cuts`]): chunks of equal length that write what one run
/// writes, whatever the tiling, the order of the dims and the padding.
#[test]
fn chunks_of_tpu_family_layouts_are_even_and_match_one_run() {
    let mut rng = Rng::new(0x0c4_0000_000d);
    let mut done = 0;
    while done < 60 {
        let ty = *rng.choose(&["f32", "bf16", "s8"]);
        let dims = tpu_dims(&mut rng);
        let (Some(a), Some(b)) = (
            tpu_family(&mut rng, ty, &dims),
            tpu_family(&mut rng, ty, &dims),
        ) else {
            continue;
        };
        match ty {
            "f32" => {
                pack_and_unpack::<u32>(&a);
                convert_as::<u32>(&a, &b);
                convert_as::<u32>(&b, &a);
            }
            "bf16" => {
                pack_and_unpack::<u16>(&a);
                convert_as::<u16>(&a, &b);
                convert_as::<u16>(&b, &a);
            }
            _ => {
                pack_and_unpack::<u8>(&a);
                convert_as::<u8>(&a, &b);
                convert_as::<u8>(&b, &a);
            }
        }
        done += 1;
    }
}

/// Any chunk count, up to `usize::MAX`, on plans of up to 2^40 slots keeps
/// the promise of `chunks` without overflow (the ranges only: such buffers
/// do not fit in memory); and the destinations that once went uncut
/// (untiled, `T(1,128)`, `T(1024)`, `L(1024)`) are cut evenly.
#[test]
fn chunks_of_any_count_keep_their_promise() {
    for spec in [
        "u8[1099511627776]",
        "u8[1099511627776]{0:T(1024)}",
        "f32[64,256]{1,0:T(8,128)}",
        "f32[4096,4096]{0,1}",
        "f32[4096,4096]",
        "f32[3,4096,1000]",
        "u8[65536,65536]{0,1}",
        "f32[4096,4096]{1,0:T(1,128)}",
        "f32[4096,4096]{1,0:T(1024)}",
        "f32[4096,4095]{1,0:L(1024)}",
        "bf16[3,4096,1000]{0,2,1:T(8,128)(2,1)}",
        "s8[4096,4096]{0,1:T(8,128)(4,1)}",
        "f32[0,5]{1,0:T(8,128)}",
        "f32[7,5]{0,1:L(16)}",
        "u32[]{:T(128)}",
    ] {
        let l = parse(spec).unwrap();
        let col = parse(&if spec.contains('{') {
            spec.replace("{1,0", "{0,1")
        } else {
            format!("{spec}{{0,1}}")
        })
        .ok()
        .filter(|c| c.rank() == l.rank());
        for n in [
            0,
            1,
            2,
            3,
            4,
            7,
            1 << 20,
            1 << 41,
            (1 << 41) + 1,
            usize::MAX / 3,
            usize::MAX - 1,
            usize::MAX,
        ] {
            match l.element_bits() {
                8 => {
                    check_ranges(&l.pack_plan(0u8).unwrap(), n, &format!("pack {l}"));
                    check_ranges(&l.unpack_plan::<u8>().unwrap(), n, &format!("unpack {l}"));
                }
                16 => {
                    check_ranges(&l.pack_plan(0u16).unwrap(), n, &format!("pack {l}"));
                    check_ranges(&l.unpack_plan::<u16>().unwrap(), n, &format!("unpack {l}"));
                }
                _ => {
                    check_ranges(&l.pack_plan(0u32).unwrap(), n, &format!("pack {l}"));
                    check_ranges(&l.unpack_plan::<u32>().unwrap(), n, &format!("unpack {l}"));
                    if let Some(col) = &col {
                        let what = format!("{l} -> {col}");
                        check_ranges(&l.convert_plan(col, 0u32).unwrap(), n, &what);
                        let what = format!("{col} -> {l}");
                        check_ranges(&col.convert_plan(&l, 0u32).unwrap(), n, &what);
                    }
                }
            }
        }
    }
    // The findings that started this: no overflow, and four equal chunks.
    let l = parse("f32[4096,4096]{0,1}").unwrap();
    let plan = l.pack_plan(0.0f32).unwrap();
    let lengths: Vec<usize> = plan.chunks(4).map(|c| c.range().len()).collect();
    assert_eq!(lengths, [1 << 22; 4]);
    let l = parse("u8[1099511627776]").unwrap();
    let plan = l.unpack_plan::<u8>().unwrap();
    let ranges: Vec<_> = plan.chunks(1 << 41).take(3).map(|c| c.range()).collect();
    assert_eq!(ranges, [0..1, 1..2, 2..3]);
    assert_eq!(plan.chunks(1 << 41).len(), 1 << 40);
    let last = plan.chunks(1 << 41).last().unwrap().range();
    assert_eq!(last, (1 << 40) - 1..1 << 40);
}

fn convert_pair(a: &Layout, b: &Layout) {
    if a.element_bits() == 16 {
        convert_as::<u16>(a, b);
    } else {
        convert_as::<u32>(a, b);
    }
}

fn convert_as<T: Value>(a: &Layout, b: &Layout) {
    let src: Vec<T> = (0..a.storage_len()).map(T::make).collect();
    let fill = T::make(usize::MAX);
    let plan = a.convert_plan(b, fill).unwrap();
    all_cuts(&plan, &src, &format!("{a} -> {b}"));
    let mut one_shot = vec![T::GARBAGE; b.storage_len()];
    a.convert(&src, b, &mut one_shot, Options::fill(fill))
        .unwrap();
    let mut via_plan = vec![T::GARBAGE; b.storage_len()];
    plan.run(&src, &mut via_plan).unwrap();
    assert_eq!(via_plan, one_shot, "{a} -> {b}");
    // Through row-major order with the slot iterators instead.
    let mut logical = vec![T::GARBAGE; a.len()];
    for (k, p) in a.slots().enumerate() {
        if let Some(p) = p {
            logical[p] = src[k];
        }
    }
    let want: Vec<T> = b.slots().map(|p| p.map_or(fill, |p| logical[p])).collect();
    assert_eq!(one_shot, want, "{a} -> {b}: against slots()");
}

#[test]
fn chunks_of_random_conversions_match_one_run() {
    let mut rng = Rng::new(0x0c4_0000_000c);
    let mut done = 0;
    while done < 300 {
        let (a, b) = random_conversion_pair(&mut rng);
        let (la, lb) = (parse(&a.spec()).unwrap(), parse(&b.spec()).unwrap());
        if lb.storage_len() > 20_000 {
            continue;
        }
        convert_pair(&la, &lb);
        convert_pair(&lb, &la);
        done += 1;
    }
    for (a, b) in [
        ("f32[130,260]{0,1}", "f32[130,260]{1,0:T(8,128)}"),
        ("f32[130,260]{1,0}", "f32[130,260]{0,1}"),
        (
            "bf16[4,6,5,130]{3,2,1,0}",
            "bf16[4,6,5,130]{1,3,2,0:T(8,128)(2,1)}",
        ),
    ] {
        let (a, b) = (parse(a).unwrap(), parse(b).unwrap());
        convert_pair(&a, &b);
        convert_pair(&b, &a);
    }
}

#[test]
fn chunks_run_on_threads() {
    let l = parse("f32[300,500]{1,0:T(8,128)}").unwrap();
    let logical: Vec<f32> = (0..l.len()).map(|x| x as f32).collect();
    let plan = l.pack_plan(-1.0f32).unwrap();
    let mut whole = vec![0.0; plan.dst_len()];
    plan.run(&logical, &mut whole).unwrap();
    for threads in 1..=5 {
        let mut parts = vec![0.0; plan.dst_len()];
        std::thread::scope(|s| {
            for (chunk, part) in plan.chunks_mut(threads, &mut parts).unwrap() {
                let logical = &logical;
                s.spawn(move || chunk.run(logical, part).unwrap());
            }
        });
        assert_eq!(parts, whole, "{threads} threads");
    }
}

#[test]
fn plans_refuse_bad_arguments_before_writing() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    assert_eq!(
        l.pack_plan(0u16).unwrap_err(),
        RelayoutError::ElementSize {
            layout_bits: 32,
            type_bits: 16
        }
    );
    assert!(matches!(
        parse("s4[4]").unwrap().unpack_plan::<u8>(),
        Err(RelayoutError::PackedLayout { bits: 4 })
    ));
    let other = parse("f32[3,6]").unwrap();
    assert!(matches!(
        l.convert_plan(&other, 0.0f32),
        Err(RelayoutError::DimMismatch { dim: 1, .. })
    ));

    let plan = l.pack_plan(0.0f32).unwrap();
    let logical = [1.0f32; 15];
    let mut storage = [7.0f32; 24];
    assert_eq!(
        plan.run(&logical[..14], &mut storage),
        Err(RelayoutError::LogicalLength {
            expected: 15,
            actual: 14
        })
    );
    assert_eq!(
        plan.run(&logical, &mut storage[..23]),
        Err(RelayoutError::StorageLength {
            expected: 24,
            actual: 23
        })
    );
    assert!(plan.chunks_mut(2, &mut storage[..20]).is_err());
    for chunk in plan.chunks(3) {
        let range = chunk.range();
        if range.is_empty() {
            continue;
        }
        assert!(chunk
            .run(&logical, &mut storage[range.start + 1..range.end])
            .is_err());
        assert!(chunk.run(&logical[1..], &mut storage[range]).is_err());
    }
    assert_eq!(storage, [7.0; 24], "a refused call wrote");

    let unpack = l.unpack_plan::<f32>().unwrap();
    let mut back = [7.0f32; 15];
    assert_eq!(
        unpack.run(&storage, &mut back[..14]),
        Err(RelayoutError::LogicalLength {
            expected: 15,
            actual: 14
        })
    );
    assert_eq!(back, [7.0; 15]);
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_relayouts_match_one_run() {
    for spec in [
        "f32[700,900]{1,0:T(8,128)}",
        "bf16[640,1000]{1,0:T(8,128)(2,1)}",
        "f32[3,5]{1,0:T(2,2)}",
    ] {
        let l = parse(spec).unwrap();
        let logical: Vec<u32> = (0..l.len()).map(u32::make).collect();
        if l.element_bits() == 16 {
            let logical: Vec<u16> = (0..l.len()).map(u16::make).collect();
            let (mut a, mut b) = (vec![0; l.storage_len()], vec![0; l.storage_len()]);
            l.pack(
                &logical,
                &mut a,
                Options::default().threads(xla_layout::Threads::Pool),
            )
            .unwrap();
            l.pack(&logical, &mut b, Options::default()).unwrap();
            assert_eq!(a, b, "{spec}");
            continue;
        }
        let (mut a, mut b) = (vec![0; l.storage_len()], vec![0; l.storage_len()]);
        l.pack(
            &logical,
            &mut a,
            Options::default().threads(xla_layout::Threads::Pool),
        )
        .unwrap();
        l.pack(&logical, &mut b, Options::default()).unwrap();
        assert_eq!(a, b, "{spec}");
        let (mut x, mut y) = (vec![0; l.len()], vec![0; l.len()]);
        l.unpack(&a, &mut x, xla_layout::Threads::Pool).unwrap();
        l.unpack(&a, &mut y, xla_layout::Threads::One).unwrap();
        assert_eq!(x, y, "{spec}");
        let col = parse(&spec.replace("{1,0:", "{0,1:")).unwrap();
        let (mut p, mut q) = (vec![0; col.storage_len()], vec![0; col.storage_len()]);
        l.convert(
            &a,
            &col,
            &mut p,
            Options::default().threads(xla_layout::Threads::Pool),
        )
        .unwrap();
        l.convert(&a, &col, &mut q, Options::default()).unwrap();
        assert_eq!(p, q, "{spec}");
        assert!(l
            .pack(
                &logical[1..],
                &mut a,
                Options::default().threads(xla_layout::Threads::Pool)
            )
            .is_err());
    }
}
