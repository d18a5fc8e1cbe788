//! API misuse has a defined answer, by `Layout` and by `layout!` values alike
//! (the answers are listed in `docs/limits.md`):
//!
//! - `offset` of an index outside the dims, or of the wrong length: in
//!   debug builds a panic naming the index and the dims (a compile error in
//!   `const` evaluation); in release builds an unspecified number, never a
//!   panic (the arithmetic wraps);
//! - `try_offset` of such an index: `None`;
//! - `index_of` of a padding slot, of `storage_len` or anything past it: `None`;
//! - `dim` of a number outside `-rank..rank`, `tiled_shape` past the last
//!   level: `None`;
//! - builders and `with_padded_dimensions` given impossible values: an error.
//!
//! The default test profile has overflow checks on, so the `usize::MAX`
//! indices below would panic if any arithmetic on the way could overflow;
//! the release-build answers are checked by `cargo test --release`.

use xla_layout::{
    layout, parse, ElementType, ErrorKind, Layout, LayoutBuilder, Span, TileDim, MAX_PROGRAM_STEPS,
};

use std::panic::UnwindSafe;

const MAX: usize = usize::MAX;

/// Layouts whose index programs use every kind of step: plain strides,
/// divisions and remainders by powers of two and by other numbers, combined
/// dims, prepended dims, several levels, huge extents, empty arrays.
const SPECS: &[&str] = &[
    "f32[]",
    "f32[]{:L(4)}",
    "u32[]{:T(128)}",
    "f32[7]",
    "f32[10,20]{0,1}",
    "f32[3,5]{1,0:T(2,2)}",
    "f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
    "bf16[2048]{0:T(1024)(128)(2,1)}",
    "bf16[2,8,128]{2,1,0:T(8,128)(2,1)}",
    "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
    "s4[5,300]{0,1:T(3,7)(5,1)L(11)E(4)}",
    "u8[18446744073709551615]",
    "u8[3]{0:T(9223372036854775807)}",
    "u8[2,4611686018427387904]{1,0:T(2,4)}",
    "f32[0,5]{1,0:T(2,2)}",
];

fn layouts() -> impl Iterator<Item = Layout> {
    SPECS
        .iter()
        .map(|s| parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
}

/// Indices outside the dims: each coordinate at its dim and at `usize::MAX`,
/// and every coordinate at `usize::MAX` at once.
fn outside(l: &Layout) -> Vec<Vec<usize>> {
    let mut all = vec![vec![MAX; l.rank()]];
    for d in 0..l.rank() {
        for value in [l.dims()[d], l.dims()[d].saturating_add(1), MAX] {
            let mut index = vec![0; l.rank()];
            index[d] = value;
            all.push(index);
        }
    }
    all.retain(|index| !l.contains(index));
    all
}

/// `offset` of an index outside `dims`: in debug builds a panic whose message
/// names the index and the dims; in release builds some number.
fn offset_outside(offset: impl FnOnce() -> usize + UnwindSafe, index: &[usize], dims: &[usize]) {
    let answer = std::panic::catch_unwind(offset);
    if cfg!(debug_assertions) {
        let payload = answer.expect_err("debug builds check the index");
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .expect("a text message");
        let named = format!("index `{index:?}` ");
        assert!(text.starts_with(&named), "{text}");
        assert!(text.ends_with(&format!(" the dims `{dims:?}`")), "{text}");
    } else {
        // Unspecified, but an answer: keep the result.
        std::hint::black_box(answer.expect("release builds do not check the index"));
    }
}

#[test]
fn offset_outside_the_dims() {
    for l in layouts() {
        for index in outside(&l) {
            offset_outside(|| l.offset(&index), &index, l.dims());
            assert_eq!(l.try_offset(&index), None, "{l} {index:?}");
        }
    }
}

#[test]
fn offset_of_a_short_index_does_not_read_zeros() {
    // The issue that prompted the check: `[2]` of a rank-2 layout once gave
    // the offset of `[2, 0]`.
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    offset_outside(|| l.offset(&[2]), &[2], &[3, 5]);
    let fixed = layout!("f32[3,5]{1,0:T(2,2)}");
    let index = std::hint::black_box([0, 6]);
    offset_outside(|| fixed.offset(index), &index, &[3, 5]);
    offset_outside(
        || xla_layout::StaticLayout::offset(fixed, index),
        &index,
        &[3, 5],
    );
}

#[test]
fn index_of_the_wrong_length() {
    for l in layouts() {
        let rank = l.rank();
        let long = vec![0; rank + 1];
        let huge = vec![MAX; rank + 3];
        assert_eq!(l.try_offset(&long), None, "{l}");
        assert_eq!(l.try_offset(&huge), None, "{l}");
        offset_outside(|| l.offset(&long), &long, l.dims());
        offset_outside(|| l.offset(&huge), &huge, l.dims());
        if rank > 0 {
            assert_eq!(l.try_offset(&[]), None, "{l}");
            assert_eq!(l.try_offset(&vec![0; rank - 1]), None, "{l}");
            offset_outside(|| l.offset(&[]), &[], l.dims());
        } else {
            assert_eq!(l.try_offset(&[]), Some(0), "{l}");
        }
    }
}

#[test]
fn index_of_past_storage_is_none() {
    for l in layouts() {
        let s = l.storage_len();
        for off in [s, s.saturating_add(1), s.saturating_add(1000), MAX - 1, MAX] {
            if off >= s {
                assert_eq!(l.index_of(off), None, "{l} at {off}");
            }
        }
    }
}

#[test]
fn index_of_padding_is_none() {
    // SPEC.md Figure 1: these slots of `f32[3,5]{1,0:T(2,2)}` are padding.
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    for slot in [9, 11, 14, 15, 18, 19, 21, 22, 23] {
        assert_eq!(l.index_of(slot), None, "slot {slot}");
    }
    // Tail alignment: slots 5..8 of `f32[5]{0:L(4)}` are padding.
    let l = parse("f32[5]{0:L(4)}").unwrap();
    assert_eq!(l.index_of(4).as_deref(), Some(&[4][..]));
    for slot in 5..8 {
        assert_eq!(l.index_of(slot), None, "slot {slot}");
    }
    // Every slot of an empty array is outside storage, however large the dims.
    let l = parse("f32[0,5]{1,0:T(2,2)}").unwrap();
    assert_eq!((l.storage_len(), l.index_of(0)), (0, None));
    // Padding inside a tile of i64::MAX slots, far from the elements.
    let l = parse("u8[3]{0:T(9223372036854775807)}").unwrap();
    for slot in [3, 1 << 40, MAX - 1] {
        assert_eq!(l.index_of(slot), None, "slot {slot}");
    }
}

#[test]
fn untiled_scalar_tail_slots_are_padding() {
    let l = parse("f32[]{:L(4)}").unwrap();
    assert_eq!(l.storage_len(), 4);
    assert_eq!(l.index_of(0).as_deref(), Some(&[][..]));
    for slot in 1..4 {
        assert_eq!(l.index_of(slot), None, "slot {slot}");
    }
}

#[test]
fn dim_numbers_outside_the_rank() {
    let l = parse("f32[2,3,4]").unwrap();
    assert_eq!(
        (l.dim(-1), l.dim(-3), l.dim(2)),
        (Some(4), Some(2), Some(4))
    );
    for d in [3, -4, isize::MAX, isize::MIN, isize::MIN + 1] {
        assert_eq!(l.dim(d), None, "{d}");
    }
    let scalar = parse("f32[]").unwrap();
    for d in [0, -1, isize::MIN] {
        assert_eq!(scalar.dim(d), None, "{d}");
    }
}

#[test]
fn tiled_shape_past_the_last_level() {
    let l = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    assert_eq!(l.tiled_shape(2).unwrap().dims(), &[2, 2, 1, 4, 2, 1]);
    for level in [3, 9, MAX] {
        assert_eq!(l.tiled_shape(level), None, "{level}");
    }
}

#[test]
fn programs_given_short_buffers() {
    // The inverse program refuses an output buffer shorter than the rank.
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let mut scratch = [0; MAX_PROGRAM_STEPS];
    let mut short = [0; 1];
    assert!(!l.inverse_program().eval(17, &mut scratch, &mut short));
    let mut exact = [0; 2];
    assert!(l.inverse_program().eval(17, &mut scratch, &mut exact));
    assert_eq!(exact, [2, 3]);
    // The forward program reads a missing index entry as 0.
    assert_eq!(
        l.offset_program().eval(&[2], &mut scratch),
        l.offset(&[2, 0])
    );
}

#[test]
fn padded_dimensions_misuse() {
    let reason = |r: Result<Layout, xla_layout::ParseError>| match *r.unwrap_err().first().kind() {
        ErrorKind::PaddedDimensions { reason } => reason,
        other => panic!("{other:?}"),
    };
    let l = parse("f32[2,3]{0,1}").unwrap();
    assert_eq!(
        reason(l.with_padded_dimensions(&[3])),
        "must list one width per dim"
    );
    assert_eq!(
        reason(l.with_padded_dimensions(&[3, 5, 7])),
        "must list one width per dim"
    );
    assert_eq!(
        reason(l.with_padded_dimensions(&[1, 5])),
        "must not be narrower than the dims they pad"
    );
    let tiled = parse("f32[2,3]{0,1:T(2,2)}").unwrap();
    assert_eq!(
        reason(tiled.with_padded_dimensions(&[3, 5])),
        "cannot be combined with tiles; write the tiles alone"
    );
    let err = l
        .with_padded_dimensions(&[i64::MAX as usize, 3])
        .unwrap_err();
    assert_eq!(
        *err.first().kind(),
        ErrorKind::StorageOverflow { unit: "slots" }
    );
    assert_eq!(err.first().span(), Span::default());
    // A zero width for a zero dim: either an error or an empty layout.
    match parse("f32[0]").unwrap().with_padded_dimensions(&[0]) {
        Ok(p) => assert_eq!(p.storage_len(), 0),
        Err(e) => assert_eq!(*e.first().kind(), ErrorKind::TileDimZero { level: 1 }),
    }
}

#[test]
fn builder_misuse_is_an_error_naming_the_limit() {
    let kind = |b: LayoutBuilder| *b.build().unwrap_err().first().kind();
    assert_eq!(
        kind(LayoutBuilder::new(ElementType::F32, &[1; 17])),
        ErrorKind::RankTooLarge { limit: 16 }
    );
    let mut b = LayoutBuilder::new(ElementType::F32, &[2]);
    for _ in 0..9 {
        b = b.tile(&[TileDim::Size(1)]);
    }
    assert_eq!(kind(b), ErrorKind::TooManyLevels { limit: 8 });
    let b = LayoutBuilder::new(ElementType::F32, &[2]).tile(&[TileDim::Size(1); 17]);
    assert_eq!(
        kind(b),
        ErrorKind::TileRankTooLarge {
            level: 1,
            limit: 16
        }
    );
    // An empty tile tiles no dims: the layout is the untiled one.
    let l = LayoutBuilder::new(ElementType::F32, &[2])
        .tile(&[])
        .build()
        .unwrap();
    assert_eq!(
        (l.to_string().as_str(), l.storage_len()),
        ("f32[2]{0:T()}", 2)
    );
    let b = LayoutBuilder::new(ElementType::F32, &[2, 2]).minor_to_major(&[MAX, 0]);
    assert_eq!(
        kind(b),
        ErrorKind::MinorToMajorOutOfRange {
            value: MAX as u128,
            rank: 2
        }
    );
    let b = LayoutBuilder::new(ElementType::F32, &[2, 2]).minor_to_major(&vec![0; 5000]);
    assert_eq!(
        kind(b),
        ErrorKind::MinorToMajorLength {
            found: 5000,
            rank: 2
        }
    );
    let b = LayoutBuilder::new(ElementType::F32, &[2]).tail_alignment(0);
    assert_eq!(kind(b), ErrorKind::TailAlignmentZero);
    // Values given in code have no text: every span is empty at 0.
    let err = LayoutBuilder::new(ElementType::F32, &[2, 2])
        .minor_to_major(&[1, 1])
        .tile(&[TileDim::Size(0)])
        .build()
        .unwrap_err();
    assert_eq!(err.len(), 2);
    assert!(err.iter().all(|e| e.span() == Span::default()));
}

#[test]
fn built_layouts_print_specs_that_parse_back() {
    // `parse` caps `E(n)` at MAX_ELEMENT_BITS and `S(n)` at MAX_MEMORY_SPACE; a
    // builder given more must refuse too, or print a spec no parser accepts.
    let refused = [
        (
            LayoutBuilder::new(ElementType::F32, &[2])
                .element_bits(xla_layout::MAX_ELEMENT_BITS + 1),
            "E(4097)",
        ),
        (
            LayoutBuilder::new(ElementType::F32, &[2]).element_bits(u32::MAX),
            "E(4294967295)",
        ),
        (
            LayoutBuilder::new(ElementType::F32, &[2]).memory_space(u64::MAX),
            "S(18446744073709551615)",
        ),
    ];
    for (b, what) in refused {
        let err = b.build().expect_err(what);
        assert_eq!(err.len(), 1, "{what}: {err:?}");
    }
    // Right at the limits, they build and print specs that parse back.
    let accepted = [
        LayoutBuilder::new(ElementType::F32, &[2]).element_bits(xla_layout::MAX_ELEMENT_BITS),
        LayoutBuilder::new(ElementType::F32, &[2]).memory_space(xla_layout::MAX_MEMORY_SPACE),
    ];
    for b in accepted {
        let l = b.build().expect("at the limit");
        let text = l.to_string();
        assert_eq!(
            parse(&text).as_ref().ok(),
            Some(&l),
            "`{text}` does not parse back"
        );
    }
}

// Evaluated at compile time: an index arithmetic that could overflow would be
// a const-evaluation error here, not a number. Only in release builds: debug
// builds reject these indices (`tests/ui/bounds`).
#[cfg(not(debug_assertions))]
const FAR: [usize; 4] = [
    layout!("f32[3,5]{1,0:T(2,2)}").offset([MAX, MAX]),
    layout!("f32[7,9]{0,1:T(3,5)(2,1)L(7)}").offset([MAX, MAX - 1]),
    layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").offset([MAX; 5]),
    layout!("u8[2,4611686018427387904]{1,0:T(2,4)}").offset([MAX, MAX]),
];

#[test]
fn layout_macro_values_answer_misuse_the_same_way() {
    // Unspecified numbers in release builds, but the same ones `Layout`
    // computes at run time.
    #[cfg(not(debug_assertions))]
    let specs = [
        "f32[3,5]{1,0:T(2,2)}",
        "f32[7,9]{0,1:T(3,5)(2,1)L(7)}",
        "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "u8[2,4611686018427387904]{1,0:T(2,4)}",
    ];
    #[cfg(not(debug_assertions))]
    {
        let indices: [&[usize]; 4] = [&[MAX, MAX], &[MAX, MAX - 1], &[MAX; 5], &[MAX, MAX]];
        for ((spec, index), far) in specs.iter().zip(indices).zip(FAR) {
            assert_eq!(parse(spec).unwrap().offset(index), far, "{spec}");
        }
    }
    let l = layout!("f32[3,5]{1,0:T(2,2)}");
    offset_outside(|| l.offset([MAX, MAX]), &[MAX, MAX], &[3, 5]);
    offset_outside(|| l.offset([3, 5]), &[3, 5], &[3, 5]);
    assert_eq!(l.try_offset([3, 0]), None);
    assert_eq!(l.try_offset([MAX, MAX]), None);
    for slot in [9, 11, 14, 15, 18, 19, 21, 22, 23, 24, MAX] {
        assert_eq!(l.index_of(slot), None, "slot {slot}");
    }
    assert_eq!(
        (l.dim(isize::MIN), l.dim(isize::MAX), l.dim(2)),
        (None, None, None)
    );
    let l = layout!("u8[3]{0:T(9223372036854775807)}");
    offset_outside(|| l.offset([MAX]), &[MAX], &[3]);
    assert_eq!(
        (l.index_of(3), l.index_of(MAX - 1), l.index_of(MAX)),
        (None, None, None)
    );
    let l = layout!("bf16[2048]{0:T(1024)(128)(2,1)}");
    offset_outside(|| l.offset([MAX]), &[MAX], &[2048]);
    assert_eq!((l.try_offset([2048]), l.index_of(2048)), (None, None));
    let l = layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    offset_outside(|| l.offset([MAX; 5]), &[MAX; 5], &[2, 7, 8, 11, 10]);
    assert_eq!(
        l.index_of(12_431).is_some(),
        parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
            .unwrap()
            .index_of(12_431)
            .is_some()
    );
    let l = layout!("f32[]{:L(4)}");
    assert_eq!(
        (l.index_of(0), l.index_of(1), l.index_of(3)),
        (Some([]), None, None)
    );
}
