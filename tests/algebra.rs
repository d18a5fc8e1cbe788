//! The evaluators compiled from a layout's digits against the plain
//! reference of `tests/common/reference.rs`: every index's `offset`, every
//! slot's `index_of` (padding, past storage, outside the dims) of random
//! small layouts of ranks 1 to 4 in any `minor_to_major`, with 1 to 3
//! tiling levels of powers of two (dividing nests like `(2,1)`, nests
//! larger than the tile they split, tiles past the dims, ragged dims),
//! `L(n)`, and a share of `*` combines and nests that do not divide, which
//! sit at the edge of the digit form.

mod common;

use common::check::{check_runtime, Counts, Expected};
use common::reference::{tiled_shape, RefLayout, RefTileDim, Rng};

/// Layouts drawn per test.
const LAYOUTS: usize = 1500;
/// Storage slots a drawn layout may take, so every slot is checked.
const MAX_SLOTS: usize = 4096;

/// A tile size: mostly powers of two, now and then one that is not.
fn size(rng: &mut Rng, powers_only: bool) -> usize {
    if !powers_only && rng.one_in(6) {
        [3, 5, 6][rng.pick(3)]
    } else {
        1 << rng.pick(5)
    }
}

/// One random layout of the digit family, or `None` when its storage
/// exceeds [`MAX_SLOTS`].
fn draw(rng: &mut Rng) -> Option<RefLayout> {
    let rank = 1 + rng.pick(4);
    let dims: Vec<usize> = (0..rank).map(|_| 1 + rng.pick(20)).collect();
    let mut minor_to_major: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        minor_to_major.swap(i, rng.pick(i + 1));
    }
    // Half the layouts only powers of two and no `*`: the TPU family.
    let powers_only = rng.one_in(2);
    let mut shape: Vec<usize> = minor_to_major.iter().rev().map(|&d| dims[d]).collect();
    let mut tiles = Vec::new();
    for level in 0..=rng.pick(3) {
        // Later levels split the tile before them, as `(2,1)` does, and
        // now and then reach past it.
        let length = if level == 0 {
            1 + rng.pick(rank + 1)
        } else {
            1 + rng.pick(3)
        };
        let tile: Vec<RefTileDim> = (0..length)
            .map(|position| {
                if !powers_only && position + 1 < length && rng.one_in(5) {
                    None
                } else {
                    Some(size(rng, powers_only))
                }
            })
            .collect();
        shape = tiled_shape(&shape, &tile);
        tiles.push(tile);
    }
    let tail_alignment = if rng.one_in(5) {
        [2, 4, 8, 16][rng.pick(4)]
    } else {
        1
    };
    let slots = shape
        .iter()
        .product::<usize>()
        .next_multiple_of(tail_alignment);
    (slots <= MAX_SLOTS).then_some(RefLayout {
        type_name: ["f32", "bf16", "s8", "s4"][rng.pick(4)],
        dims,
        minor_to_major,
        tiles,
        tail_alignment,
    })
}

fn check(seed: u64) -> Counts {
    let mut rng = Rng::new(seed);
    let mut total = Counts::default();
    while total.layouts < LAYOUTS {
        let Some(reference) = draw(&mut rng) else {
            continue;
        };
        let expected = Expected::new(&reference);
        let spec = expected.spec();
        let layout = xla_layout::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
        total.add(check_runtime(&layout, &expected));
        // The same layout through a rank-`N` view, which shares the evaluators.
        let ranked = |slot| match layout.rank() {
            1 => layout
                .ranked::<1>()
                .unwrap()
                .index_of(slot)
                .map(|i| i.to_vec()),
            2 => layout
                .ranked::<2>()
                .unwrap()
                .index_of(slot)
                .map(|i| i.to_vec()),
            3 => layout
                .ranked::<3>()
                .unwrap()
                .index_of(slot)
                .map(|i| i.to_vec()),
            _ => layout
                .ranked::<4>()
                .unwrap()
                .index_of(slot)
                .map(|i| i.to_vec()),
        };
        for slot in 0..layout.storage_len() + 2 {
            assert_eq!(
                ranked(slot).as_deref(),
                layout.index_of(slot).as_deref(),
                "{spec}: ranked index_of({slot})"
            );
        }
    }
    total
}

#[test]
fn digit_family_seed_1() {
    let counts = check(1);
    println!("{counts:?}");
    assert_eq!(counts.layouts, LAYOUTS);
}

#[test]
fn digit_family_seed_2() {
    let counts = check(0xd161_7500);
    println!("{counts:?}");
    assert_eq!(counts.layouts, LAYOUTS);
}
