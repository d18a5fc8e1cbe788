//! Numbers at the edges: dims, tiles, `L`, `E`, `S` and their products at 0,
//! 1, `usize::MAX`, above `i64::MAX`, and past every limit, in `parse` and in
//! `layout!`. Each case answers with a named error or a layout whose offsets
//! match hand computation. The default test profile has overflow checks on, so
//! any overflowing arithmetic on the way would panic here.

use xla_layout::{
    layout, parse, ElementType, ErrorKind, Layout, LayoutBuilder, Span, StaticLayout, TileDim,
};
use xla_layout::{
    MAX_ELEMENT_BITS, MAX_PROGRAM_STEPS, MAX_RANK, MAX_TILED_RANK, MAX_TILE_RANK, MAX_TILING_LEVELS,
};

const MAX: usize = usize::MAX;

fn ok(spec: &str) -> Layout {
    parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// The one error `spec` gives, with the text its span covers.
fn error(spec: &str) -> (ErrorKind, &str) {
    let err = parse(spec).expect_err(spec);
    assert_eq!(err.len(), 1, "{spec}: {err}");
    let e = err.first();
    (*e.kind(), &spec[e.span().range()])
}

fn whole(spec: &str) -> Span {
    Span {
        start: 0,
        end: spec.len(),
    }
}

/// `offset` and `index_of` agree at `index`, whose offset is `expected`.
fn at(l: &Layout, index: &[usize], expected: usize) {
    assert_eq!(l.offset(index), expected, "{l} at {index:?}");
    assert_eq!(l.try_offset(index), Some(expected), "{l} at {index:?}");
    assert_eq!(
        l.index_of(expected).as_deref(),
        Some(index),
        "{l} at {expected}"
    );
}

#[test]
fn zero_and_one_dims() {
    let l = ok("f32[0]");
    assert_eq!(
        (l.len(), l.storage_len(), l.storage_bytes(), l.is_empty()),
        (0, 0, 0, true)
    );
    assert_eq!(l.index_of(0), None);
    assert_eq!(l.try_offset(&[0]), None);
    let l = ok("f32[1,1,1]");
    assert_eq!((l.len(), l.storage_len(), l.true_rank()), (1, 1, 0));
    at(&l, &[0, 0, 0], 0);
    // An empty array takes no storage however large its other dims and tiles.
    let l = ok("f32[0,4294967296,4294967296]{2,1,0:T(2,2)}");
    assert_eq!((l.len(), l.storage_len(), l.storage_bytes()), (0, 0, 0));
    let l = ok("u8[0]{0:L(18446744073709551615)}");
    assert_eq!(l.storage_len(), 0);
}

#[test]
fn zero_dim_after_overflowing_dims_is_empty() {
    // Physical order [2^32, 2^32, 0]: the product is 0, but the running
    // product overflows before it reaches the 0.
    let l = ok("f32[4294967296,4294967296,0]");
    assert_eq!(
        (l.len(), l.storage_len(), l.storage_bytes(), l.is_empty()),
        (0, 0, 0, true)
    );
    // The same by `layout!`, whose sizes are constants of the compiler.
    layout!(struct Overflowing = "f32[4294967296,4294967296,0]");
    assert_eq!(
        (Overflowing::LEN, <Overflowing as StaticLayout>::LEN),
        (0, 0)
    );
    let l = layout!("f32[4294967296,4294967296,0]");
    assert_eq!((l.len(), l.padding_len(), l.is_empty()), (0, 0, true));
}

#[test]
fn zero_dim_beside_overflowing_dims_has_len_zero() {
    // Tiled, so the storage is computed on combined groups and comes out 0;
    // `len` is a checked product over the dims that gives up before the 0.
    let l = ok("f32[4294967296,4294967296,0]{2,1,0:T(*,*,2)}");
    assert_eq!(l.storage_len(), 0);
    assert_eq!(l.len(), 0);
    assert!(l.is_empty());
}

#[test]
fn usize_max_dims() {
    let l = ok("u8[18446744073709551615]");
    assert_eq!(
        (l.len(), l.storage_len(), l.storage_bytes()),
        (MAX, MAX, MAX)
    );
    at(&l, &[MAX - 1], MAX - 1);
    assert_eq!(l.index_of(MAX), None);
    // One bit per element: ceil((2^64 - 1) / 8) bytes.
    assert_eq!(
        ok("pred[18446744073709551615]{0:E(1)}").storage_bytes(),
        1 << 61
    );
    let spec = "s16[18446744073709551615]";
    assert_eq!(
        error(spec),
        (ErrorKind::StorageOverflow { unit: "bytes" }, spec)
    );
    let spec = "u8[18446744073709551616]";
    assert_eq!(
        error(spec),
        (
            ErrorKind::IntegerTooLarge {
                what: "dim",
                max: MAX as u128
            },
            "18446744073709551616"
        )
    );
    // Above i64::MAX is an ordinary size.
    let l = ok("u8[9223372036854775808]");
    at(&l, &[1 << 63 >> 1], 1 << 62);
    assert_eq!(l.storage_len(), 1 << 63);
}

#[test]
fn products_at_the_edge_of_usize() {
    // 2^32 * (2^32 - 1) = 2^64 - 2^32 fits; 2^32 * 2^32 does not.
    let l = ok("u8[4294967296,4294967295]");
    assert_eq!(l.storage_len(), 18_446_744_069_414_584_320);
    at(
        &l,
        &[4_294_967_295, 4_294_967_294],
        18_446_744_069_414_584_319,
    );
    at(&l, &[1, 0], 4_294_967_295);
    let l = ok("u8[4294967296,4294967295]{0,1}");
    at(&l, &[5, 7], 7 * 4_294_967_296 + 5);
    for spec in [
        "u8[4294967296,4294967296]",
        "u8[4294967296,4294967296]{1,0:T(*,2)}",
        "u8[18446744073709551615]{0:T(2)}",
        "u8[3,3]{1,0:T(9223372036854775807,4)}",
        "u8[18446744073709551615]{0:L(2)}",
    ] {
        assert_eq!(
            error(spec),
            (ErrorKind::StorageOverflow { unit: "slots" }, spec)
        );
    }
}

#[test]
fn tile_sizes_at_the_edges() {
    assert_eq!(
        error("u8[3]{0:T(0)}"),
        (ErrorKind::TileDimZero { level: 1 }, "0")
    );
    // XLA's tile dims are `int64`; `T(2^63)` would be its `*` marker there.
    for big in ["9223372036854775808", "18446744073709551615"] {
        assert_eq!(
            error(&format!("u8[3]{{0:T({big})}}")),
            (
                ErrorKind::IntegerTooLarge {
                    what: "tile dim",
                    max: i64::MAX as u128
                },
                big
            )
        );
    }
    let built = LayoutBuilder::new(ElementType::U8, &[3])
        .tile(&[TileDim::Size(MAX)])
        .build();
    assert!(matches!(
        built.unwrap_err().first().kind(),
        ErrorKind::IntegerTooLarge {
            what: "tile dim",
            ..
        }
    ));
    assert_eq!(
        error("u8[3]{0:T(18446744073709551616)}"),
        (
            ErrorKind::IntegerTooLarge {
                what: "tile dim",
                max: i64::MAX as u128
            },
            "18446744073709551616"
        )
    );
    assert_eq!(
        error("u8[3]{0:T(-1)}"),
        (ErrorKind::TileDimNegative { level: 1, value: 1 }, "-1")
    );
    // A tile of 1 and a combine-only tile change nothing.
    let plain = ok("f32[3,5]");
    for spec in [
        "f32[3,5]{1,0:T(1)}",
        "f32[3,5]{1,0:T(1,1)}",
        "f32[3,5]{1,0:T(*,1)}",
    ] {
        let l = ok(spec);
        for i in 0..3 {
            for j in 0..5 {
                assert_eq!(l.offset(&[i, j]), plain.offset(&[i, j]), "{spec}");
            }
        }
        assert_eq!(l.storage_len(), 15);
    }
    // One tile of i64::MAX slots (XLA's largest tile dim): three elements,
    // then padding to the end.
    let l = ok("u8[3]{0:T(9223372036854775807)}");
    assert_eq!(l.storage_len(), (1 << 63) - 1);
    at(&l, &[2], 2);
    assert_eq!(l.index_of(3), None);
    assert_eq!(l.index_of(MAX - 1), None);
    let spec = "f32[3]{0:T(9223372036854775807)}";
    assert_eq!(
        error(spec),
        (ErrorKind::StorageOverflow { unit: "bytes" }, spec)
    );
    // 2^63 - 1 elements in tiles of 2: the last slot is padding.
    let l = ok("u8[9223372036854775807]{0:T(2)}");
    assert_eq!(l.storage_len(), 1 << 63);
    at(&l, &[(1 << 63) - 2], (1 << 63) - 2);
    assert_eq!(l.index_of((1 << 63) - 1), None);
    // [2, 2^62] in (2,4) tiles: shape [1, 2^60, 2, 4], strides [2^63, 8, 4, 1].
    let l = ok("u8[2,4611686018427387904]{1,0:T(2,4)}");
    assert_eq!(l.storage_len(), 1 << 63);
    at(&l, &[0, 5], 9);
    at(&l, &[1, 5], 13);
    at(&l, &[1, (1 << 62) - 1], (1 << 63) - 1);
    // TPU bf16 tiling on a large array: rows pair up into 32-bit words.
    let l = ok("bf16[4096,4096]{1,0:T(8,128)(2,1)}");
    at(&l, &[1, 0], 1);
    at(&l, &[2, 3], 262);
    at(&l, &[4095, 4095], 4096 * 4096 - 1);
}

#[test]
fn element_bits_at_the_edges() {
    assert_eq!(ok("f32[2]{0:E(0)}").explicit_element_bits(), None);
    assert_eq!(ok("pred[8]{0:E(1)}").storage_bytes(), 1);
    assert_eq!(ok("pred[9]{0:E(1)}").storage_bytes(), 2);
    assert_eq!(ok("f32[3]{0:E(128)}").storage_bytes(), 48);
    assert_eq!(ok("c128[3]{0:E(128)}").storage_bytes(), 48);
    assert_eq!(ok("s4[3]{0:E(4096)}").storage_bytes(), 1536);
    // Narrower than the type, as XLA writes int4 values held in `s8`.
    assert_eq!(ok("f32[2]{0:E(1)}").storage_bytes(), 1);
    assert_eq!(ok("s8[21]{0:E(4)}").storage_bytes(), 11);
    assert_eq!(ok("s8[3,7]{1,0:E(4)}").storage_bytes(), 11);
    assert_eq!(ok("f32[4]{0:E(16)}").storage_bytes(), 8);
    assert_eq!(ok("f32[3]{0:E(3)}").storage_bytes(), 2);
    let limit = ErrorKind::IntegerTooLarge {
        what: "`E(n)` element size in bits",
        max: u128::from(MAX_ELEMENT_BITS),
    };
    assert_eq!(error("s4[3]{0:E(4097)}"), (limit, "4097"));
    let digits = "9".repeat(50);
    assert_eq!(
        error(&format!("s4[3]{{0:E({digits})}}")),
        (limit, digits.as_str())
    );
    // The widest element times the largest storage: bytes overflow, not bits.
    let spec = "u8[18446744073709551615]{0:E(4096)}";
    assert_eq!(
        error(spec),
        (ErrorKind::StorageOverflow { unit: "bytes" }, spec)
    );
}

#[test]
fn tail_alignment_and_memory_space_at_the_edges() {
    assert_eq!(error("f32[2]{0:L(0)}"), (ErrorKind::TailAlignmentZero, "0"));
    assert_eq!(ok("f32[5]{0:L(1)}").to_string(), "f32[5]{0}");
    let l = ok("u8[2]{0:L(18446744073709551615)}");
    assert_eq!(l.storage_len(), MAX);
    assert_eq!(l.index_of(2), None);
    let l = ok("u8[2]{0:L(9223372036854775808)}");
    assert_eq!(l.storage_len(), 1 << 63);
    at(&l, &[1], 1);
    // XLA keeps the memory space in a signed byte.
    assert_eq!(ok("u8[2]{0:S(127)}").memory_space(), 127);
    for big in ["128", "9223372036854775807", "9223372036854775808"] {
        assert_eq!(
            error(&format!("u8[2]{{0:S({big})}}")),
            (
                ErrorKind::IntegerTooLarge {
                    what: "`S(n)` memory space",
                    max: 127
                },
                big
            )
        );
    }
}

fn repeat(item: &str, n: usize, sep: &str) -> String {
    vec![item; n].join(sep)
}

/// `minor_to_major` `{n-1,...,0}`.
fn row_major(n: usize) -> String {
    (0..n)
        .rev()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn rank_limit() {
    let l = ok(&format!("f32[{}]", repeat("2", MAX_RANK, ",")));
    assert_eq!((l.rank(), l.len()), (16, 1 << 16));
    at(&l, &[1; 16], (1 << 16) - 1);
    for n in [MAX_RANK + 1, 5000] {
        let spec = format!("f32[{}]", repeat("2", n, ","));
        let (kind, text) = error(&spec);
        assert_eq!(kind, ErrorKind::RankTooLarge { limit: MAX_RANK });
        assert_eq!(
            kind.to_string(),
            "the shape has more than 16 dims (the rank limit)"
        );
        // The span is the first dim past the limit.
        assert_eq!(text, "2");
        let err = parse(&spec).unwrap_err();
        assert_eq!(err.first().span().start, 4 + 2 * MAX_RANK);
    }
    let spec = format!("f32[2,2]{{{}}}", repeat("0", 5000, ","));
    assert!(matches!(
        parse(&spec).unwrap_err().first().kind(),
        ErrorKind::MinorToMajorLength {
            found: 5000,
            rank: 2
        }
    ));
}

#[test]
fn tiling_level_limit() {
    let l = ok(&format!(
        "f32[2]{{0:T{}}}",
        repeat("(1)", MAX_TILING_LEVELS, "")
    ));
    assert_eq!(l.tiles().len(), 8);
    for n in [MAX_TILING_LEVELS + 1, 5000] {
        let spec = format!("f32[2]{{0:T{}}}", repeat("(1)", n, ""));
        let (kind, text) = error(&spec);
        assert_eq!(
            kind,
            ErrorKind::TooManyLevels {
                limit: MAX_TILING_LEVELS
            }
        );
        assert_eq!(kind.to_string(), "more than 8 tiling levels (the limit)");
        assert_eq!(text, "(1)");
    }
}

#[test]
fn tile_rank_limit() {
    let l = ok(&format!(
        "f32[2]{{0:T({})}}",
        repeat("1", MAX_TILE_RANK, ",")
    ));
    assert_eq!(l.tiles()[0].rank(), 16);
    for n in [MAX_TILE_RANK + 1, 5000] {
        let spec = format!("f32[2]{{0:T({})}}", repeat("1", n, ","));
        let (kind, _) = error(&spec);
        assert_eq!(
            kind,
            ErrorKind::TileRankTooLarge {
                level: 1,
                limit: MAX_TILE_RANK
            }
        );
        assert_eq!(
            kind.to_string(),
            "tile at level 1 has more than 16 dims (the tile rank limit)"
        );
    }
}

#[test]
fn tiled_rank_limit() {
    // 16 dims, then each 16-dim tile adds 16: 32, 48, 64, and 80 at level 4.
    let tile = format!("({})", repeat("1", 16, ","));
    let ones = repeat("1", 16, ",");
    let spec = format!("f32[{ones}]{{{}:T{}}}", row_major(16), tile.repeat(3));
    assert_eq!(
        ok(&spec).tiled_shape(3).unwrap().dims().len(),
        MAX_TILED_RANK
    );
    let spec = format!("f32[{ones}]{{{}:T{}}}", row_major(16), tile.repeat(4));
    let (kind, text) = error(&spec);
    assert_eq!(
        kind,
        ErrorKind::TiledRankTooLarge {
            level: 4,
            limit: MAX_TILED_RANK
        }
    );
    assert_eq!(text, tile);
    assert!(kind.to_string().ends_with("(the tiled rank limit)"));
}

#[test]
fn program_step_limit() {
    // Within every other limit, yet its index arithmetic needs more than 256
    // steps (found by search; no TPU layout comes close).
    let spec = "u8[1054,99,948,18,1120]{4,3,2,1,0:T(8,2,15,3,28,16,30)(20,15,23,*,28,15,*,4,*,12,12,4,4)\
                (2,2,3,2,2,5,13,14,15,22,8,2,9,6,*,8)(2,*,6,10,10,3,13,7,*,*,24,6)(2,5)(*,6,2,6,*,*,15,2)\
                (3,12,2,2,*,2,2,*,3,3,*,24)(*,2,*,6)}";
    let err = parse(spec).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(
        *err.first().kind(),
        ErrorKind::ProgramTooLarge {
            limit: MAX_PROGRAM_STEPS
        }
    );
    assert_eq!(err.first().span(), whole(spec));
    assert!(err.first().to_string().ends_with("(the program limit)"));
}

#[test]
fn long_digit_strings() {
    let spec = format!("f32[{}2]", "0".repeat(1000));
    assert_eq!(ok(&spec).to_string(), "f32[2]{0}");
    let digits = "9".repeat(100_000);
    let spec = format!("f32[{digits}]");
    assert_eq!(
        error(&spec),
        (
            ErrorKind::IntegerTooLarge {
                what: "dim",
                max: MAX as u128
            },
            digits.as_str()
        )
    );
    let spec = format!("f32[2]{{{digits}}}");
    assert!(matches!(
        error(&spec).0,
        ErrorKind::IntegerTooLarge {
            what: "`minor_to_major` entry",
            ..
        }
    ));
}

// The same edges through `layout!`: evaluated at compile time, so a value that
// overflowed in the generated code would not compile.

const U8_MAX: usize = layout!("u8[18446744073709551615]").offset([18_446_744_073_709_551_614]);
const WIDE: usize = layout!("u8[4294967296,4294967295]").offset([4_294_967_295, 4_294_967_294]);
const TALL_TILE: usize =
    layout!("u8[2,4611686018427387904]{1,0:T(2,4)}").offset([1, 4_611_686_018_427_387_903]);

layout!(struct Pred9 = "pred[9]{0:E(1)}");

#[test]
fn layout_macro_at_the_edges() {
    assert_eq!(U8_MAX, MAX - 1);
    assert_eq!(WIDE, 18_446_744_069_414_584_319);
    assert_eq!(TALL_TILE, (1 << 63) - 1);
    let l = layout!("u8[3]{0:T(9223372036854775807)}");
    assert_eq!(
        (l.storage_len(), l.offset([2]), l.index_of(3)),
        ((1 << 63) - 1, 2, None)
    );
    let l = layout!("u8[9223372036854775807]{0:T(2)}");
    assert_eq!(l.index_of((1 << 63) - 1), None);
    assert_eq!(l.index_of((1 << 63) - 2), Some([(1 << 63) - 2]));
    assert_eq!(
        layout!("pred[18446744073709551615]{0:E(1)}").storage_bytes(),
        1 << 61
    );
    assert_eq!(layout!("pred[9]{0:E(1)}").storage_bytes(), 2);
    assert_eq!(layout!("f32[3]{0:E(128)}").storage_bytes(), 48);
    assert_eq!(layout!("s4[3]{0:E(4096)}").storage_bytes(), 1536);
    assert_eq!(
        layout!("u8[2]{0:L(18446744073709551615)}").storage_len(),
        MAX
    );
    assert_eq!(layout!("u8[2]{0:S(127)}").runtime().memory_space(), 127);
    let l = layout!("f32[0,4294967296,4294967296]{2,1,0:T(2,2)}");
    assert_eq!((l.len(), l.storage_len(), l.index_of(0)), (0, 0, None));
    let l = layout!("f32[2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]");
    assert_eq!(l.offset([1; 16]), (1 << 16) - 1);
    let l = layout!("f32[2]{0:T(1)(1)(1)(1)(1)(1)(1)(1)}");
    assert_eq!(l.offset([1]), 1);
    let l = layout!("bf16[4096,4096]{1,0:T(8,128)(2,1)}");
    assert_eq!(
        (l.offset([2, 3]), l.offset([4095, 4095])),
        (262, 4096 * 4096 - 1)
    );
    // Each agrees with `parse` on every property.
    let cases: Vec<(&str, Layout)> = vec![
        (
            "u8[18446744073709551615]",
            layout!("u8[18446744073709551615]").runtime(),
        ),
        (
            "u8[2,4611686018427387904]{1,0:T(2,4)}",
            layout!("u8[2,4611686018427387904]{1,0:T(2,4)}").runtime(),
        ),
        ("pred[9]{0:E(1)}", StaticLayout::runtime(Pred9)),
    ];
    for (spec, runtime) in cases {
        assert_eq!(runtime, ok(spec), "{spec}");
    }
}

/// Programs longer than the steps a `layout!` value runs written out (64)
/// run in a loop: both programs of these layouts are past that, and their
/// offsets and indices agree with `parse` at indices and offsets spread
/// over the whole storage, and in `const` evaluation. The second is the
/// longest program of the search behind `program_step_limit` within the
/// limit (its next tiling level is the one past it).
#[test]
fn long_programs_agree_with_parse() {
    // xorshift64: the same spread on every run.
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        usize::try_from(x >> 1).unwrap_or(usize::MAX)
    };
    macro_rules! long {
        ($spec:expr, $rank:literal) => {{
            const SPEC: &str = $spec;
            // The last index's offset and back, by the compiler.
            const LAST: [usize; $rank] = {
                let l = layout!($spec);
                match l.index_of(l.offset([1053, 98, 947, 17, 1119])) {
                    Some(index) => index,
                    None => [0; $rank],
                }
            };
            let l = layout!($spec);
            let p = ok(SPEC);
            let [offset_steps, inverse_steps] = l.__steps();
            assert!(
                offset_steps > 64 && inverse_steps > 64,
                "{SPEC}: {offset_steps} and {inverse_steps} steps"
            );
            for _ in 0..4_000 {
                let mut index = [0; $rank];
                for (i, &d) in index.iter_mut().zip(p.dims()) {
                    *i = next() % d;
                }
                let offset = l.offset(index);
                assert_eq!(offset, p.offset(&index), "{SPEC} at {index:?}");
                assert_eq!(l.index_of(offset), Some(index), "{SPEC} at {offset}");
                let offset = next() % l.storage_len();
                assert_eq!(
                    l.index_of(offset).as_ref().map(|i| &i[..]),
                    p.index_of(offset).as_deref(),
                    "{SPEC} at {offset}"
                );
            }
            assert_eq!(LAST, [1053, 98, 947, 17, 1119], "{SPEC}");
        }};
    }
    long!(
        "u8[1054,99,948,18,1120]{4,3,2,1,0:T(8,2,15,3,28,16,30)(20,15,23,*,28,15,*,4,*,12,12,4,4)}",
        5
    );
    long!(
        "u8[1054,99,948,18,1120]{4,3,2,1,0:T(8,2,15,3,28,16,30)(20,15,23,*,28,15,*,4,*,12,12,4,4)\
         (2,2,3,2,2,5,13,14,15,22,8,2,9,6,*,8)(2,*,6,10,10,3,13,7,*,*,24,6)(2,5)(*,6,2,6,*,*,15,2)\
         (3,12,2,2,*,2,2,*,3,3,*,24)}",
        5
    );
}
