//! Offsets, inverses and sizes of `layout!` values are compile-time
//! constants: every `const_assert!` below is evaluated by the compiler, so a
//! method that stopped being `const fn` (or a wrong value) fails the build.
//! The values are SPEC.md's golden ones; the run-time test at the end checks
//! the same constants against the run-time `parse` path.

mod nested;

use static_assertions::{const_assert, const_assert_eq};
use xla_layout::layout;

/// SPEC.md's Figure 1, written once.
macro_rules! figure1 {
    () => {
        layout!("f32[3,5]{1,0:T(2,2)}")
    };
}

// Figure 1: offsets by row [0,1,4,5,8] [2,3,6,7,10] [12,13,16,17,20].
const_assert_eq!(figure1!().offset([2, 3]), 17);
const_assert_eq!(figure1!().offset([0, 4]), 8);
const_assert_eq!(figure1!().offset([1, 4]), 10);
const_assert!(matches!(figure1!().index_of(17), Some([2, 3])));
const_assert!(matches!(figure1!().index_of(0), Some([0, 0])));
const_assert!(figure1!().index_of(9).is_none()); // padding
const_assert!(figure1!().index_of(23).is_none()); // padding, last slot
const_assert!(figure1!().index_of(24).is_none()); // past storage
const_assert!(matches!(figure1!().try_offset([2, 4]), Some(20)));
// `strict_offset`, the form for constants, inside the dims: the same offsets.
const_assert_eq!(figure1!().strict_offset([2, 3]), 17);
const_assert_eq!(figure1!().strict_offset([0, 0]), 0);
const_assert_eq!(figure1!().strict_offset([2, 4]), 20);
const_assert!(figure1!().try_offset([3, 0]).is_none());
const_assert_eq!(figure1!().len(), 15);
const_assert_eq!(figure1!().storage_len(), 24);
const_assert_eq!(figure1!().storage_bytes(), 96);
const_assert_eq!(figure1!().padding_len(), 9);

layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
const_assert_eq!(Figure1::PADDING_LEN, 9);
const_assert_eq!(Figure1.strict_offset([1, 4]), 10);
const_assert_eq!(<Figure1 as xla_layout::StaticLayout>::PADDING_LEN, 9);
const_assert_eq!(figure1!().rank(), 2);
const_assert!(matches!(figure1!().dim(-1), Some(5)));

// The whole of Figure 1, computed by the compiler with the `const fn`s.
const FIGURE1_OFFSETS: [usize; 15] = {
    let l = figure1!();
    let mut table = [0; 15];
    let mut i = 0;
    while i < 3 {
        let mut j = 0;
        while j < 5 {
            table[i * 5 + j] = l.offset([i, j]);
            j += 1;
        }
        i += 1;
    }
    table
};
const_assert!(matches!(
    FIGURE1_OFFSETS,
    [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20]
));

/// `index_of` undoes `offset` on every index of a layout with padding in
/// both tiled dims, all at compile time; and it finds exactly `len` slots.
const ROUND_TRIP: bool = {
    let l = layout!("f32[5,7]{0,1:T(2,3)}");
    let mut ok = true;
    let mut found = 0;
    let mut offset = 0;
    while offset < l.storage_len() {
        if let Some([i, j]) = l.index_of(offset) {
            ok &= l.offset([i, j]) == offset;
            found += 1;
        }
        offset += 1;
    }
    ok && found == l.len()
};
const_assert!(ROUND_TRIP);

// A size usable as an array length.
const BUFFER: [u8; layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").storage_bytes()] = [0; 4096];
const_assert_eq!(BUFFER.len(), 4096);

// SPEC.md's golden table.
const_assert_eq!(layout!("f32[8,8]{1,0:T(2,4)(2,1,1,1)}").offset([6, 5]), 51);
const_assert_eq!(layout!("f32[8,8]{1,0:T(2,4)(2,1,1,1)}").storage_len(), 64);
const_assert_eq!(layout!("f32[8]{0:T(2,2)}").offset([5]), 9);
const_assert_eq!(layout!("f32[8]{0:T(2,2)}").storage_len(), 16);
const_assert_eq!(layout!("f32[3]{0:T(8,128)}").offset([2]), 2);
const_assert_eq!(layout!("f32[3]{0:T(8,128)}").storage_len(), 1024);
const_assert_eq!(layout!("bf16[2048]{0:T(1024)(128)(2,1)}").offset([128]), 1);
const_assert!(matches!(
    layout!("bf16[2048]{0:T(1024)(128)(2,1)}").index_of(1),
    Some([128])
));
const_assert_eq!(
    layout!("bf16[2048]{0:T(1024)(128)(2,1)}").storage_len(),
    2048
);
const_assert_eq!(
    layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").offset([0, 2, 0]),
    256
);
const_assert_eq!(
    layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").storage_len(),
    2048
);
const_assert_eq!(layout!("u32[]{:T(128)}").offset([]), 0);
const_assert!(matches!(layout!("u32[]{:T(128)}").index_of(0), Some([])));
const_assert!(layout!("u32[]{:T(128)}").index_of(1).is_none());
const_assert_eq!(layout!("u32[]{:T(128)}").storage_len(), 128);

// Combining: the offsets of f32[112,110]{1,0:T(2,3)} at (e0*56+e1*8+e2, e3*10+e4).
const_assert_eq!(
    layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").offset([1, 6, 7, 10, 9]),
    layout!("f32[112,110]{1,0:T(2,3)}").offset([111, 109])
);
const_assert!(matches!(
    layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
        .index_of(layout!("f32[112,110]{1,0:T(2,3)}").offset([61, 47])),
    Some([1, 0, 5, 4, 7])
));
const_assert_eq!(
    layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").storage_len(),
    12432
);

// Sizes.
const_assert_eq!(layout!("s4[64,128]{1,0:E(4)}").storage_bytes(), 4096);
const_assert_eq!(
    layout!("s4[1,1023]{1,0:T(2,1024)E(4)}").storage_bytes(),
    1024
);
const_assert_eq!(layout!("s32[1,127]{1,0:T(2,128)}").storage_bytes(), 1024);
const_assert_eq!(layout!("f32[0,5]{1,0:T(2,2)}").storage_bytes(), 0);
const_assert!(layout!("f32[0,5]{1,0:T(2,2)}").is_empty());

// SPEC.md §7: [2x3] column-major padded to [3,5] is `a d 0 b e 0 c f 0 0 0 0 0 0 0`.
const_assert_eq!(
    layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]).storage_len(),
    15
);
const_assert_eq!(
    layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]).offset([0, 1]),
    3
);
const_assert_eq!(
    layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]).offset([1, 2]),
    7
);
const_assert!(layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5])
    .index_of(2)
    .is_none());

/// The constants above are the run-time path's values too.
#[test]
fn constants_agree_with_the_run_time_path() {
    let figure1 = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    for i in 0..3 {
        for j in 0..5 {
            assert_eq!(FIGURE1_OFFSETS[i * 5 + j], figure1.offset(&[i, j]));
        }
    }
    let sizes = [
        ("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}", BUFFER.len()),
        ("f32[3,5]{1,0:T(2,2)}", 96),
        ("s4[1,1023]{1,0:T(2,1024)E(4)}", 1024),
    ];
    for (spec, bytes) in sizes {
        assert_eq!(
            xla_layout::parse(spec).unwrap().storage_bytes(),
            bytes,
            "{spec}"
        );
    }
    let combined = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
    let flat = xla_layout::parse("f32[112,110]{1,0:T(2,3)}").unwrap();
    assert_eq!(combined.offset(&[1, 6, 7, 10, 9]), flat.offset(&[111, 109]));
}

/// `strict_offset` at run time: the offsets of `offset` inside the dims,
/// and a panic naming the index and the dims outside them, in every profile.
#[test]
fn strict_offset_agrees_inside_the_dims() {
    let l = layout!("f32[5,7]{0,1:T(2,3)}");
    for i in 0..5 {
        for j in 0..7 {
            assert_eq!(
                l.strict_offset(std::hint::black_box([i, j])),
                l.offset([i, j])
            );
        }
    }
}

#[test]
#[should_panic(expected = "index `[0, 7]` is outside the dims `[5, 7]`")]
fn strict_offset_panics_outside_the_dims_at_run_time() {
    let l = layout!("f32[5,7]{0,1:T(2,3)}");
    let _ = l.strict_offset(std::hint::black_box([0, 7]));
}

/// A user's constant outside the dims fails a release build too:
/// `tests/std-default` with its `strict-outside` feature, checked with
/// `--release`, where `offset` would not check.
#[test]
fn strict_offset_outside_the_dims_fails_a_release_build() {
    let report = nested::cargo_with(
        "check",
        "std-default",
        &["--release", "--features", "strict-outside"],
    )
    .expect_err("a constant outside the dims built in release");
    assert!(
        report.contains("E0080") && report.contains("index `[0, 6]` is outside the dims `[3, 5]`"),
        "the release build failed, but not on the index:\n{report}"
    );
}
