//! SPEC.md's worked examples, through the facade only, by both paths: the
//! run-time `xla_layout::parse` and the compile-time `layout!`.

mod common;

use common::check::ref_layout;
use common::reference::{ravel, unravel};
use xla_layout::Options;
use xla_layout::{layout, Layout, StaticLayout};

/// Parses a spec that must be valid.
fn parse(spec: &str) -> Layout {
    xla_layout::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"))
}

/// Every offset, in row-major order of the logical indices.
fn runtime_offsets(layout: &Layout) -> Vec<usize> {
    (0..layout.len())
        .map(|flat| layout.offset(&unravel(flat, layout.dims())))
        .collect()
}

/// Every offset of a `layout!` value, in row-major order of the logical indices.
fn static_offsets<L: StaticLayout>(layout: L) -> Vec<usize> {
    (0..L::LEN)
        .map(|flat| {
            let mut index = L::Index::default();
            index.as_mut().copy_from_slice(&unravel(flat, L::DIMS));
            layout.offset(index)
        })
        .collect()
}

/// The storage slots `index_of` calls padding.
fn runtime_padding(layout: &Layout) -> Vec<usize> {
    (0..layout.storage_len())
        .filter(|&slot| layout.index_of(slot).is_none())
        .collect()
}

/// The storage slots `index_of` of a `layout!` value calls padding.
fn static_padding<L: StaticLayout>(layout: L) -> Vec<usize> {
    (0..L::STORAGE_LEN)
        .filter(|&slot| layout.index_of(slot).is_none())
        .collect()
}

/// One row of SPEC.md §5's table, by both paths; `index_of` must invert it.
macro_rules! golden_row {
    ($spec:tt, [$($i:expr),*], $offset:expr, $slots:expr) => {{
        let runtime = parse($spec);
        assert_eq!(runtime.offset(&[$($i),*]), $offset, "{} via parse", $spec);
        assert_eq!(runtime.storage_len(), $slots, "{} via parse", $spec);
        assert_eq!(
            runtime.index_of($offset).as_deref(),
            Some(&[$($i),*][..]),
            "{} via parse",
            $spec
        );
        let fixed = layout!($spec);
        assert_eq!(fixed.offset([$($i),*]), $offset, "{} via layout!", $spec);
        assert_eq!(fixed.storage_len(), $slots, "{} via layout!", $spec);
        assert_eq!(fixed.index_of($offset), Some([$($i),*]), "{} via layout!", $spec);
    }};
}

/// Slots and bytes of one spec, by both paths.
macro_rules! sizes {
    ($spec:tt, slots = $slots:expr, bytes = $bytes:expr) => {{
        let runtime = parse($spec);
        assert_eq!(
            (runtime.storage_len(), runtime.storage_bytes()),
            ($slots, $bytes),
            "{} via parse",
            $spec
        );
        let fixed = layout!($spec);
        assert_eq!(
            (fixed.storage_len(), fixed.storage_bytes()),
            ($slots, $bytes),
            "{} via layout!",
            $spec
        );
    }};
}

/// Every row of the shared table, by [`golden_row!`].
macro_rules! golden_rows {
    ($(($spec:tt, [$($i:expr),*], $offset:expr, $slots:expr)),* $(,)?) => {
        $(golden_row!($spec, [$($i),*], $offset, $slots);)*
    };
}

#[test]
fn golden_table() {
    common::golden::section_5_rows!(golden_rows);
}

#[test]
fn figure_1() {
    let expected = [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]].concat();
    let padding = [9, 11, 14, 15, 18, 19, 21, 22, 23];
    let runtime = parse("f32[3,5]{1,0:T(2,2)}");
    assert_eq!(runtime_offsets(&runtime), expected);
    assert_eq!(runtime_padding(&runtime), padding);
    let fixed = layout!("f32[3,5]{1,0:T(2,2)}");
    assert_eq!(static_offsets(fixed), expected);
    assert_eq!(static_padding(fixed), padding);
}

#[test]
fn figure_2() {
    let expected = [
        [0, 2, 4, 6, 8, 10, 12, 14],
        [1, 3, 5, 7, 9, 11, 13, 15],
        [16, 18, 20, 22, 24, 26, 28, 30],
        [17, 19, 21, 23, 25, 27, 29, 31],
    ]
    .concat();
    let runtime = parse("bf16[4,8]{1,0:T(2,4)(2,1)}");
    assert_eq!(runtime_offsets(&runtime), expected);
    assert_eq!(runtime.storage_len(), 32);
    let fixed = layout!("bf16[4,8]{1,0:T(2,4)(2,1)}");
    assert_eq!(static_offsets(fixed), expected);
    assert_eq!(fixed.storage_len(), 32);
}

#[test]
fn combining_matches_the_flattened_layout() {
    // SPEC.md §4: combining dims 0..=2 and 3..=4 tiles like the flattened
    // `f32[112,110]{1,0:T(2,3)}`. The expected slots come from the
    // reference's pad-reshape-transpose of the flattened array, not from
    // the library.
    let dims = [2, 7, 8, 11, 10];
    let to_flat = |e: &[usize]| vec![e[0] * 56 + e[1] * 8 + e[2], e[3] * 10 + e[4]];
    let reference = ref_layout("f32", &[112, 110], &[1, 0], &[&[Some(2), Some(3)]], 1);
    let slots = reference.slots();
    assert_eq!(slots.len(), 12432);
    let mut expected = vec![usize::MAX; 112 * 110];
    for (slot, index) in slots.iter().enumerate() {
        if let Some(index) = index {
            expected[ravel(index, &[112, 110])] = slot;
        }
    }
    let combined = parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    let fixed = layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    assert_eq!(combined.storage_len(), 12432);
    assert_eq!(fixed.storage_len(), 12432);
    for n in 0..combined.len() {
        let e = unravel(n, &dims);
        let want = expected[ravel(&to_flat(&e), &[112, 110])];
        assert_eq!(combined.offset(&e), want, "{e:?} via parse");
        assert_eq!(
            fixed.offset([e[0], e[1], e[2], e[3], e[4]]),
            want,
            "{e:?} via layout!"
        );
    }
    // The same slots are padding, and every other slot holds the same element.
    for (slot, want) in slots.iter().enumerate() {
        let via_parse = combined.index_of(slot).map(|e| to_flat(&e));
        let via_macro = fixed.index_of(slot).map(|e| to_flat(&e));
        assert_eq!(via_parse.as_ref(), want.as_ref(), "slot {slot} via parse");
        assert_eq!(via_macro.as_ref(), want.as_ref(), "slot {slot} via layout!");
    }
    assert_eq!(combined.index_of(12432), None);
    assert_eq!(fixed.index_of(12432), None);
}

#[test]
fn untiled_linear_index() {
    assert_eq!(parse("f32[10,20]{0,1}").offset(&[3, 5]), 53);
    assert_eq!(layout!("f32[10,20]{0,1}").offset([3, 5]), 53);
}

#[test]
fn storage_sizes() {
    sizes!("s4[64,128]{1,0:E(4)}", slots = 8192, bytes = 4096);
    sizes!("s4[1,1023]{1,0:T(2,1024)E(4)}", slots = 2048, bytes = 1024);
    sizes!("s32[1,127]{1,0:T(2,128)}", slots = 256, bytes = 1024);
}

#[test]
fn any_zero_dim_gives_zero_bytes() {
    sizes!("f32[0]", slots = 0, bytes = 0);
    sizes!("f32[3,0]{0,1}", slots = 0, bytes = 0);
    sizes!("f32[0,5]{1,0:T(2,2)L(4)}", slots = 0, bytes = 0);
    sizes!("s4[2,0,3]{1,2,0:T(*,2,2)E(4)}", slots = 0, bytes = 0);
    sizes!("bf16[0,8,128]{2,1,0:T(8,128)(2,1)}", slots = 0, bytes = 0);
    let fixed = layout!("f32[4,0]{1,0:T(2,2)}");
    assert!(fixed.is_empty());
    assert_eq!((fixed.len(), fixed.index_of(0)), (0, None));
    assert_eq!(fixed.try_offset([0, 0]), None);
    assert!(parse("f32[4,0]{1,0:T(2,2)}").is_empty());
}

#[test]
fn element_size_and_tail_alignment_in_bytes() {
    // `E(n)` overrides the type's width; `L(n)` rounds the slot count up.
    sizes!("pred[16]{0}", slots = 16, bytes = 16);
    sizes!("pred[16]{0:E(1)}", slots = 16, bytes = 2);
    sizes!("s4[5]", slots = 5, bytes = 3);
    sizes!("s4[3]{0:L(4)}", slots = 4, bytes = 2);
    sizes!("f32[5]{0:L(4)}", slots = 8, bytes = 32);
    sizes!("f32[8]{0:T(2,2)L(5)}", slots = 20, bytes = 80);
    sizes!("s4[5,3]{1,0:T(2,2)L(10)E(4)}", slots = 30, bytes = 15);
    assert_eq!(parse("pred[16]{0:E(1)}").element_bits(), 1);
    assert_eq!(parse("pred[16]").element_bits(), 8);
    layout!(struct Packed = "s4[4]{0:E(4)}");
    assert_eq!(<Packed as StaticLayout>::ELEMENT_BITS, 4);
}

/// What `Tensor::iota` leaves in padding slots.
const PADDING: u32 = u32::MAX;

/// A buffer that carries its layout in its type.
struct Tensor<L: StaticLayout> {
    layout: L,
    data: Vec<u32>,
}

impl<L: StaticLayout> Tensor<L> {
    /// A tensor whose element at each logical index holds its row-major number.
    fn iota(layout: L) -> Self {
        let mut data = vec![PADDING; L::STORAGE_LEN];
        for flat in 0..L::LEN {
            let mut index = L::Index::default();
            index.as_mut().copy_from_slice(&unravel(flat, L::DIMS));
            data[layout.offset(index)] = u32::try_from(flat).expect("test layouts are small");
        }
        Tensor { layout, data }
    }

    fn get(&self, index: L::Index) -> Option<u32> {
        self.layout
            .try_offset(index)
            .map(|offset| self.data[offset])
    }
}

#[test]
fn named_form_as_field_and_generic_parameter() {
    // Declared in the function: at module level `layout!(pub struct ..);`
    // does not compile yet (the facade forwards with parentheses and no `;`).
    layout!(
        /// Figure 1's layout, as a named type.
        pub struct Figure1 = "f32[3,5]{1,0:T(2,2)}"
    );

    /// A struct with a named layout as a field.
    struct Figure1Buffer {
        layout: Figure1,
        data: [u32; Figure1::STORAGE_LEN],
    }

    let tensor = Tensor::iota(Figure1);
    assert_eq!(tensor.data.len(), 24);
    assert_eq!(tensor.get([2, 3]), Some(13));
    assert_eq!(tensor.get([3, 0]), None);
    assert_eq!(tensor.data[9], PADDING, "slot 9 is padding");
    assert_eq!(static_padding(Figure1), [9, 11, 14, 15, 18, 19, 21, 22, 23]);

    let mut buffer = Figure1Buffer {
        layout: Figure1,
        data: [0; Figure1::STORAGE_LEN],
    };
    buffer.data[buffer.layout.offset([2, 3])] = 7;
    assert_eq!(buffer.data[17], 7);
    assert_eq!(Figure1::SPEC, "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(<Figure1 as StaticLayout>::DIMS, &[3, 5]);
    assert_eq!(Figure1.runtime(), parse("f32[3,5]{1,0:T(2,2)}"));
}

#[test]
fn angle_brackets_mean_braces() {
    let braced = layout!("f32[3,5]{1,0:T(2,2)}");
    let angled = layout!("f32[3,5]<1,0:T(2,2)>");
    assert_eq!(angled.to_string(), "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(static_offsets(angled), static_offsets(braced));
    assert_eq!(static_padding(angled), static_padding(braced));
    assert_eq!(parse("f32[3,5]<1,0:T(2,2)>"), parse("f32[3,5]{1,0:T(2,2)}"));
}

/// Evaluated by the compiler: a `const` item cannot call anything else.
const OFF: usize = layout!("f32[3,5]{1,0:T(2,2)}").offset([2, 3]);
const _: () = assert!(OFF == 17);
const _: () = assert!(layout!("f32[3,5]{1,0:T(2,2)}").storage_len() == 24);

#[test]
fn offsets_are_const() {
    const PADDING: Option<[usize; 2]> = layout!("f32[3,5]{1,0:T(2,2)}").index_of(9);
    const INDEX: Option<[usize; 2]> = layout!("f32[3,5]{1,0:T(2,2)}").index_of(17);
    assert_eq!(OFF, 17);
    assert_eq!((PADDING, INDEX), (None, Some([2, 3])));
}

#[test]
fn dims_rank_and_true_rank() {
    let runtime = parse("f32[1,5,1,3]");
    assert_eq!((runtime.rank(), runtime.true_rank()), (4, 2));
    assert_eq!(runtime.dim(-1), Some(3));
    assert_eq!(runtime.dim(-4), Some(1));
    assert_eq!(runtime.dim(1), Some(5));
    assert_eq!((runtime.dim(4), runtime.dim(-5)), (None, None));

    let fixed = layout!("f32[1,5,1,3]");
    assert_eq!((fixed.rank(), fixed.true_rank()), (4, 2));
    assert_eq!(fixed.dim(-1), Some(3));
    assert_eq!(fixed.dim(-4), Some(1));
    assert_eq!(fixed.dim(1), Some(5));
    assert_eq!((fixed.dim(4), fixed.dim(-5)), (None, None));

    layout!(struct Rank4 = "f32[1,5,1,3]");
    assert_eq!((Rank4::RANK, Rank4::TRUE_RANK), (4, 2));
    assert_eq!(<Rank4 as StaticLayout>::dim(-1), Some(3));
    assert_eq!(<Rank4 as StaticLayout>::dim(-5), None);

    let scalar = layout!("f32[]");
    assert_eq!(
        (scalar.rank(), scalar.true_rank(), scalar.dim(-1)),
        (0, 0, None)
    );
}

#[test]
fn display_is_canonical() {
    let cases = [
        ("F32[3, 5]{1, 0 : T(2,2)}", "f32[3,5]{1,0:T(2,2)}"),
        ("BF16[4,8]<1,0:T(2,4)(2,1)>", "bf16[4,8]{1,0:T(2,4)(2,1)}"),
        ("f32[2,3,4]", "f32[2,3,4]{2,1,0}"),
        ("f32[]", "f32[]"),
        ("u32[]{:T(128)}", "u32[]{:T(128)}"),
        ("Pred[2,7]{0,1:T(*,4)L(3)}", "pred[2,7]{0,1:T(*,4)L(3)}"),
    ];
    for (written, canonical) in cases {
        let layout = parse(written);
        assert_eq!(layout.to_string(), canonical, "{written}");
        assert_eq!(parse(canonical), layout, "{written}");
    }
    assert_eq!(
        layout!("F32[3, 5]{1, 0 : T(2,2)}").to_string(),
        "f32[3,5]{1,0:T(2,2)}"
    );
    assert_eq!(
        layout!("BF16[4,8]<1,0:T(2,4)(2,1)>").to_string(),
        "bf16[4,8]{1,0:T(2,4)(2,1)}"
    );
    assert_eq!(layout!("f32[2,3,4]").to_string(), "f32[2,3,4]{2,1,0}");
    assert_eq!(
        layout!(f32[3,5]{1,0:T(2,2)}).to_string(),
        "f32[3,5]{1,0:T(2,2)}"
    );
}

#[test]
fn padded_dimensions() {
    // SPEC.md §7: [2x3] column-major padded to [3,5] is
    // `a d 0 b e 0 c f 0 0 0 0 0 0 0`, with a..f the elements in row-major order.
    let letter = |index: &[usize]| ["abc", "def"][index[0]].as_bytes()[index[1]] as char;
    let expected = "ad0be0cf0000000";

    let padded = parse("f32[2,3]{0,1}")
        .with_padded_dimensions(&[3, 5])
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(padded.storage_len(), 15);
    let via_parse: String = (0..15)
        .map(|slot| padded.index_of(slot).map_or('0', |i| letter(&i)))
        .collect();
    assert_eq!(via_parse, expected);

    let fixed = layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]);
    assert_eq!(fixed.storage_len(), 15);
    let via_macro: String = (0..15)
        .map(|slot| fixed.index_of(slot).map_or('0', |i| letter(&i)))
        .collect();
    assert_eq!(via_macro, expected);
    assert_eq!(fixed.runtime(), padded);
    assert_eq!(fixed.padding_value::<i32>(), 0);
}

#[test]
#[allow(clippy::float_cmp)] // values are copied into storage, never computed
fn padding_value() {
    // SPEC.md §7's example with a padding value: pack writes it into every
    // padding slot, whatever the element type.
    let l = layout!(
        "f32[2,3]{0,1}",
        padded_dimensions = [3, 5],
        padding_value = highest
    );
    let mut storage = [0.0f32; 15];
    let abcdef = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    l.pack(&abcdef, &mut storage, Options::fill(l.padding_value()))
        .unwrap_or_else(|e| panic!("{e}"));
    let inf = f32::INFINITY;
    assert_eq!(
        storage,
        [1.0, 4.0, inf, 2.0, 5.0, inf, 3.0, 6.0, inf, inf, inf, inf, inf, inf, inf]
    );
    let lowest = layout!("s8[2]{0:T(4)}", padding_value = LOWEST_PAD);
    let mut bytes = [0i8; 4];
    lowest
        .pack(&[7, 8], &mut bytes, Options::fill(lowest.padding_value()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bytes, [7, 8, i8::MIN, i8::MIN]);
}

/// Every logical index of the first tile of a rank-2 layout, by both paths,
/// against `formula(row, col)`.
fn first_tile<L: StaticLayout<Index = [usize; 2]>>(
    fixed: L,
    rows: usize,
    cols: usize,
    formula: impl Fn(usize, usize) -> usize,
) {
    let runtime = fixed.runtime();
    for r in 0..rows {
        for c in 0..cols {
            let expected = formula(r, c);
            assert_eq!(
                runtime.offset(&[r, c]),
                expected,
                "{fixed} via parse ({r},{c})"
            );
            assert_eq!(
                fixed.offset([r, c]),
                expected,
                "{fixed} via layout! ({r},{c})"
            );
        }
    }
}

#[test]
fn tpu_formats() {
    // SPEC.md §6, one row at a time: sizes on shapes the tile does not
    // divide, and the order inside the first tile.
    sizes!("f32[16,256]{1,0:T(8,128)}", slots = 4096, bytes = 16384);
    sizes!("f32[10,300]{1,0:T(8,128)}", slots = 6144, bytes = 24576);
    first_tile(layout!("f32[8,128]{1,0:T(8,128)}"), 8, 128, |r, c| {
        r * 128 + c
    });
    assert_eq!(parse("f32[16,256]{1,0:T(8,128)}").offset(&[9, 130]), 3202);

    sizes!("f32[2,1000]{1,0:T(2,128)}", slots = 2048, bytes = 8192);
    sizes!("f32[3,100]{1,0:T(4,128)}", slots = 512, bytes = 2048);
    sizes!("f32[1,1000]{1,0:T(1,128)}", slots = 1024, bytes = 4096);

    sizes!(
        "bf16[16,256]{1,0:T(8,128)(2,1)}",
        slots = 4096,
        bytes = 8192
    );
    sizes!("bf16[3,5]{1,0:T(8,128)(2,1)}", slots = 1024, bytes = 2048);
    // Pairs of rows share a 32-bit word: (r, c) and (r+1, c) are adjacent.
    first_tile(layout!("bf16[8,128]{1,0:T(8,128)(2,1)}"), 8, 128, |r, c| {
        (r / 2) * 256 + c * 2 + r % 2
    });

    sizes!("u8[16,256]{1,0:T(8,128)(4,1)}", slots = 4096, bytes = 4096);
    first_tile(layout!("u8[8,128]{1,0:T(8,128)(4,1)}"), 8, 128, |r, c| {
        (r / 4) * 512 + c * 4 + r % 4
    });

    sizes!(
        "pred[32,128]{1,0:T(32,128)(32,1)E(1)}",
        slots = 4096,
        bytes = 512
    );
    sizes!(
        "pred[5,7]{1,0:T(32,128)(32,1)E(1)}",
        slots = 4096,
        bytes = 512
    );
    first_tile(
        layout!("pred[32,128]{1,0:T(32,128)(32,1)E(1)}"),
        32,
        128,
        |r, c| c * 32 + r,
    );

    sizes!(
        "s4[8,128]{1,0:T(8,128)(8,1)E(4)}",
        slots = 1024,
        bytes = 512
    );
    sizes!(
        "s4[10,300]{1,0:T(8,128)(8,1)E(4)}",
        slots = 6144,
        bytes = 3072
    );
    first_tile(
        layout!("s4[8,128]{1,0:T(8,128)(8,1)E(4)}"),
        8,
        128,
        |r, c| c * 8 + r,
    );

    sizes!(
        "bf16[2048]{0:T(1024)(128)(2,1)}",
        slots = 2048,
        bytes = 4096
    );
    sizes!(
        "bf16[1000]{0:T(1024)(128)(2,1)}",
        slots = 1024,
        bytes = 2048
    );
    // Rows of 128 pair up: element e and e+128 are adjacent.
    let rank1 = layout!("bf16[2048]{0:T(1024)(128)(2,1)}");
    let rank1_runtime = rank1.runtime();
    for e in 0..2048 {
        let expected = (e / 1024) * 1024 + (e % 1024 / 256) * 256 + (e % 128) * 2 + e / 128 % 2;
        assert_eq!(rank1.offset([e]), expected, "bf16 rank 1, ({e})");
        assert_eq!(rank1_runtime.offset(&[e]), expected, "bf16 rank 1, ({e})");
    }
}
