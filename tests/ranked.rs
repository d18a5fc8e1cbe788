//! `Layout::ranked` views, and their decoded inverses, against the
//! `Layout` they borrow and against the plain reference: every slot
//! (padding included), the slots past storage, every index and indices
//! outside the dims, on random layouts of ranks 1 to 8 from the spec
//! generator; and a wrong rank refused with an error.

mod common;

use common::reference::RefLayout;
use common::specgen::{generate, Rng};
use xla_layout::{Layout, RankError};

/// Specs drawn per rank.
const PER_RANK: usize = 40;

/// Compares the rank-`N` view of `l` with `l` and with the reference.
fn check<const N: usize>(spec: &str, reference: &RefLayout, l: &Layout) {
    let r = l.ranked::<N>().unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert!(core::ptr::eq(r.layout(), l));
    let inverse = r.inverse();
    assert!(core::ptr::eq(inverse.layout(), l));
    let slots = reference.slots();
    assert_eq!(slots.len(), l.storage_len(), "{spec}: storage_len");
    let mut seen = 0;
    for (slot, entry) in slots.iter().enumerate() {
        let got = r.index_of(slot);
        assert_eq!(
            got.as_ref().map(|i| &i[..]),
            l.index_of(slot).as_deref(),
            "{spec}: index_of({slot}) against Layout"
        );
        assert_eq!(
            got.as_ref().map(|i| &i[..]),
            entry.as_deref(),
            "{spec}: index_of({slot}) against the reference"
        );
        assert_eq!(
            inverse.index_of(slot),
            got,
            "{spec}: the decoded inverse's index_of({slot})"
        );
        if let Some(index) = entry {
            let index: [usize; N] = index[..].try_into().expect("rank N");
            assert_eq!(r.offset(index), slot, "{spec}: offset({index:?})");
            assert_eq!(r.try_offset(index), Some(slot), "{spec}: try_offset");
            assert_eq!(r.try_offset(index), l.try_offset(&index), "{spec}");
            seen += 1;
        }
    }
    assert_eq!(seen, l.len(), "{spec}: every index has a slot");
    for past in [l.storage_len(), l.storage_len() + 1, usize::MAX] {
        assert_eq!(r.index_of(past), None, "{spec}: index_of({past})");
        assert_eq!(inverse.index_of(past), None, "{spec}: index_of({past})");
    }
    // Each dim one past its end, and far past it.
    for d in 0..N {
        for outside in [reference.dims[d], usize::MAX] {
            let mut index = [0; N];
            index[d] = outside;
            assert_eq!(r.try_offset(index), None, "{spec}: try_offset({index:?})");
            assert_eq!(r.try_offset(index), l.try_offset(&index), "{spec}");
        }
    }
}

/// A wrong rank is an error naming both ranks, for `N` below and above.
fn check_refused<const N: usize>(l: &Layout) {
    if l.rank() != N {
        let err = l.ranked::<N>().unwrap_err();
        assert_eq!(
            err,
            RankError {
                expected: N,
                actual: l.rank()
            }
        );
        assert_eq!(
            err.to_string(),
            format!("expected a layout of rank {N}, found rank {}", l.rank())
        );
    }
}

fn check_rank(spec: &str, reference: &RefLayout, l: &Layout) {
    match l.rank() {
        1 => check::<1>(spec, reference, l),
        2 => check::<2>(spec, reference, l),
        3 => check::<3>(spec, reference, l),
        4 => check::<4>(spec, reference, l),
        5 => check::<5>(spec, reference, l),
        6 => check::<6>(spec, reference, l),
        7 => check::<7>(spec, reference, l),
        8 => check::<8>(spec, reference, l),
        rank => unreachable!("rank {rank}"),
    }
    check_refused::<0>(l);
    check_refused::<3>(l);
    check_refused::<9>(l);
    check_refused::<16>(l);
}

/// A small random layout of `rank` dims, for the ranks the spec generator
/// does not draw (it gives 1 to 5 and 7 to 16): dims 1 to 3, a random
/// `minor_to_major`, a tile over the last one to three dims, at times a
/// second level `(2,1)` and `L(n)`.
fn random_of_rank(rng: &mut Rng, rank: usize) -> RefLayout {
    let dims: Vec<usize> = (0..rank).map(|_| 1 + rng.pick(3)).collect();
    let mut minor_to_major: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        minor_to_major.swap(i, rng.pick(i + 1));
    }
    let mut tiles = Vec::new();
    if !rng.one_in(4) {
        let len = 1 + rng.pick(3.min(rank));
        tiles.push(
            (0..len)
                .map(|k| (k + 1 == len || !rng.one_in(4)).then(|| 1 + rng.pick(3)))
                .collect(),
        );
        if rng.one_in(3) {
            tiles.push(vec![Some(2), Some(1)]);
        }
    }
    RefLayout {
        type_name: "f32",
        dims,
        minor_to_major,
        tiles,
        tail_alignment: if rng.one_in(4) { 1 + rng.pick(5) } else { 1 },
    }
}

#[test]
fn views_agree_with_the_layout_and_the_reference_on_random_layouts() {
    let mut rng = Rng::new(0x7A2D);
    let mut counts = [0usize; 9];
    let mut draws = 0;
    while counts[1..]
        .iter()
        .enumerate()
        .any(|(r, &c)| r + 1 != 6 && c < PER_RANK)
    {
        draws += 1;
        assert!(
            draws < 2_000_000,
            "the generator stopped giving ranks: {counts:?}"
        );
        let g = generate(&mut rng);
        let rank = g.dims.len();
        if !(1..=8).contains(&rank) || counts[rank] >= PER_RANK || !g.is_small() {
            continue;
        }
        let l = xla_layout::parse(&g.text).unwrap_or_else(|e| panic!("{}: {e:?}", g.text));
        check_rank(&g.text, &RefLayout::from(&g), &l);
        counts[rank] += 1;
    }
    while counts[6] < PER_RANK {
        let reference = random_of_rank(&mut rng, 6);
        let spec = reference.spec();
        let l = xla_layout::parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
        check_rank(&spec, &reference, &l);
        counts[6] += 1;
    }
    println!("{counts:?} after {draws} draws");
}

#[test]
fn the_golden_examples_and_a_scalar() {
    let l = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
    let r = l.ranked::<5>().unwrap();
    for offset in 0..l.storage_len() {
        assert_eq!(
            r.index_of(offset).as_ref().map(|i| &i[..]),
            l.index_of(offset).as_deref()
        );
    }
    let l = xla_layout::parse("bf16[1024,1024]{1,0:T(8,128)(2,1)}").unwrap();
    let r = l.ranked::<2>().unwrap();
    assert_eq!(r.offset([1, 0]), 1);
    assert_eq!(r.index_of(1), Some([1, 0]));
    assert_eq!(r.index_of(l.storage_len()), None);

    // Rank 0: one element at offset 0, and the empty index.
    let l = xla_layout::parse("f32[]").unwrap();
    let r = l.ranked::<0>().unwrap();
    assert_eq!(r.offset([]), 0);
    assert_eq!(r.try_offset([]), Some(0));
    assert_eq!(r.index_of(0), Some([]));
    assert_eq!(r.index_of(1), None);
    assert_eq!(
        l.ranked::<1>(),
        Err(RankError {
            expected: 1,
            actual: 0
        })
    );
}

#[test]
fn layouts_past_the_compact_form_and_empty_arrays() {
    // Rank 16 runs outside the closed forms; ranks above 8 have no view
    // below 9 and are served by the same code as `Layout`.
    let spec = format!("f32[{}]", ["2"; 16].join(","));
    let l = xla_layout::parse(&spec).unwrap();
    let r = l.ranked::<16>().unwrap();
    for offset in (0..l.storage_len()).step_by(97) {
        let index = r.index_of(offset).expect("no padding");
        assert_eq!(&index[..], &*l.index_of(offset).unwrap());
        assert_eq!(r.offset(index), offset);
    }
    assert!(l.ranked::<8>().is_err());

    let l = xla_layout::parse("f32[3,0]{0,1:T(2,2)}").unwrap();
    let r = l.ranked::<2>().unwrap();
    assert_eq!(r.try_offset([0, 0]), None);
    for offset in 0..l.storage_len() + 2 {
        assert_eq!(r.index_of(offset), None);
    }
}
