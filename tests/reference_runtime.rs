//! `xla_layout::parse` against the plain reference of `tests/common/reference.rs`,
//! exhaustively: every logical index, every storage slot, the slots past the
//! end and indices outside the dims, on thousands of random layouts and on a
//! list of hand-picked hard cases.

mod common;

use common::check::{check_runtime, hard_cases, Counts, Expected};
use common::reference::{random_layout, RefLayout, Rng};

/// Parses the reference's spec and compares the result exhaustively.
fn check_spec_of(reference: &RefLayout) -> Counts {
    let expected = Expected::new(reference);
    let spec = expected.spec();
    let layout = xla_layout::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
    check_runtime(&layout, &expected)
}

/// Draws `count` layouts from each seed and checks them all.
fn check_random(seeds: &[u64], count: usize) -> Counts {
    let mut total = Counts::default();
    for &seed in seeds {
        let mut rng = Rng::new(seed);
        for _ in 0..count {
            total.add(check_spec_of(&random_layout(&mut rng)));
        }
    }
    total
}

// Four tests of 600 layouts each, so the 2400 run on every core.

#[test]
fn random_layouts_seed_1() {
    let counts = check_random(&[1], 600);
    println!("{counts:?}");
    assert_eq!(counts.layouts, 600);
}

#[test]
fn random_layouts_seed_2() {
    let counts = check_random(&[2], 600);
    println!("{counts:?}");
    assert_eq!(counts.layouts, 600);
}

#[test]
fn random_layouts_seed_3() {
    let counts = check_random(&[3], 600);
    println!("{counts:?}");
    assert_eq!(counts.layouts, 600);
}

#[test]
fn random_layouts_seed_0x5eed() {
    let counts = check_random(&[0x5EED], 600);
    println!("{counts:?}");
    assert_eq!(counts.layouts, 600);
}

#[test]
fn hand_picked_hard_cases() {
    let mut total = Counts::default();
    for reference in hard_cases() {
        total.add(check_spec_of(&reference));
    }
    println!("{total:?}");
    assert_eq!(total.layouts, hard_cases().len());
}

#[test]
fn non_canonical_spellings_parse_to_the_canonical_layout() {
    // White space, upper case, angle brackets and the default layout all
    // denote the layout the reference prints canonically.
    let cases = [
        ("F32[3, 5]{1,0 : T(2,2)}", "f32[3,5]{1,0:T(2,2)}"),
        ("f32[3,5]<1,0:T(2,2)>", "f32[3,5]{1,0:T(2,2)}"),
        (
            "BF16[4,8] { 1, 0 : T(2,4)(2,1) }",
            "bf16[4,8]{1,0:T(2,4)(2,1)}",
        ),
        ("f32[2,3,4]", "f32[2,3,4]{2,1,0}"),
        ("f32[]", "f32[]"),
        ("u32[]{:T(128)}", "u32[]{:T(128)}"),
    ];
    for (written, canonical) in cases {
        let layout = xla_layout::parse(written).unwrap_or_else(|e| panic!("{written}: {e:?}"));
        assert_eq!(layout.to_string(), canonical, "{written}");
        let parsed = xla_layout::parse(canonical).unwrap_or_else(|e| panic!("{canonical}: {e:?}"));
        assert_eq!(layout, parsed, "{written}");
    }
}

#[test]
fn untiled_scalar_tail_slots_are_padding() {
    // SPEC.md §4: the one element is at slot 0; `L(n)` adds padding slots.
    for (spec, slots) in [
        ("f32[]{:L(4)}", 4),
        ("s4[]{:L(16)}", 16),
        ("pred[]{:L(3)}", 3),
    ] {
        let layout = xla_layout::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
        assert_eq!(layout.storage_len(), slots, "{spec}");
        assert_eq!(layout.index_of(0).as_deref(), Some(&[][..]), "{spec}");
        for slot in 1..slots {
            assert_eq!(layout.index_of(slot), None, "{spec}: index_of({slot})");
        }
    }
    let layout = xla_layout::layout!("f32[]{:L(4)}");
    assert_eq!(layout.index_of(0), Some([]));
    assert_eq!([1, 2, 3].map(|slot| layout.index_of(slot)), [None; 3]);
}
