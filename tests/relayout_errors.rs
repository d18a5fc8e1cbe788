//! Every way a relayout can refuse its arguments: an error value with a
//! clear message, never a panic, and nothing written.

use xla_layout::{parse, RelayoutError};
use xla_layout::{Options, Threads};

fn assert_untouched<T: PartialEq + std::fmt::Debug + Copy>(buffer: &[T], value: T) {
    assert!(
        buffer.iter().all(|&x| x == value),
        "a refused call wrote {buffer:?}"
    );
}

#[test]
fn whole_element_lengths() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let mut storage = [9.0f32; 24];
    let err = l
        .pack(&[1.0; 14], &mut storage, Options::default())
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::LogicalLength {
            expected: 15,
            actual: 14
        }
    );
    assert_eq!(
        err.to_string(),
        "the logical buffer holds 14 elements, but the layout has 15"
    );
    assert_untouched(&storage, 9.0);

    let mut short = [9.0f32; 23];
    let err = l
        .pack(&[1.0; 15], &mut short, Options::default())
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::StorageLength {
            expected: 24,
            actual: 23
        }
    );
    assert_eq!(
        err.to_string(),
        "the storage buffer holds 23 values, but the layout's storage takes 24"
    );
    assert_untouched(&short, 9.0);

    let mut logical = [9.0f32; 15];
    assert_eq!(
        l.unpack(&[0.0; 25], &mut logical, Threads::One),
        Err(RelayoutError::StorageLength {
            expected: 24,
            actual: 25
        })
    );
    let mut long = [9.0f32; 16];
    assert_eq!(
        l.unpack(&[0.0; 24], &mut long, Threads::One),
        Err(RelayoutError::LogicalLength {
            expected: 15,
            actual: 16
        })
    );
    assert_untouched(&logical, 9.0);
    assert_untouched(&long, 9.0);

    let to = parse("f32[3,5]").unwrap();
    let mut out = [9.0f32; 15];
    assert_eq!(
        l.convert(&[0.0; 20], &to, &mut out, Options::default()),
        Err(RelayoutError::StorageLength {
            expected: 24,
            actual: 20
        })
    );
    assert_eq!(
        l.convert(&[0.0; 24], &to, &mut out[..14], Options::default()),
        Err(RelayoutError::StorageLength {
            expected: 15,
            actual: 14
        })
    );
    assert_untouched(&out, 9.0);
}

#[test]
fn packed_lengths() {
    let bits = parse("s4[3,5]{1,0:T(2,2)}").unwrap();
    let mut bytes = [7u8; 12];
    assert_eq!(
        bits.pack_bits(&[1u8; 15], &mut bytes[..11], Options::default()),
        Err(RelayoutError::StorageLength {
            expected: 12,
            actual: 11
        })
    );
    assert_eq!(
        bits.pack_bits(&[1u8; 16], &mut bytes, Options::default()),
        Err(RelayoutError::LogicalLength {
            expected: 15,
            actual: 16
        })
    );
    assert_untouched(&bytes, 7);
    let mut values = [7i8; 15];
    assert_eq!(
        bits.unpack_bits(&[0u8; 13], &mut values, Threads::One),
        Err(RelayoutError::StorageLength {
            expected: 12,
            actual: 13
        })
    );
    assert_untouched(&values, 7);
    let mut out = [7u8; 12];
    assert_eq!(
        bits.convert_bits(&[0u8; 11], &bits, &mut out, Options::default()),
        Err(RelayoutError::StorageLength {
            expected: 12,
            actual: 11
        })
    );
    assert_eq!(
        bits.convert_bits(&[0u8; 12], &bits, &mut out[..10], Options::default()),
        Err(RelayoutError::StorageLength {
            expected: 12,
            actual: 10
        })
    );
    assert_untouched(&out, 7);
}

#[test]
fn element_widths() {
    let l = parse("f32[4]").unwrap();
    let mut storage = [0u16; 4];
    let err = l
        .pack(&[1u16; 4], &mut storage, Options::default())
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::ElementSize {
            layout_bits: 32,
            type_bits: 16
        }
    );
    assert_eq!(
        err.to_string(),
        "the layout stores 32 bits per element, but the Rust type has 16; use a type of the same width"
    );
    // E(n) sets the width: 16-bit slots for an 8-bit type.
    let wide = parse("s8[4]{0:E(16)}").unwrap();
    assert!(wide
        .pack(&[1u8; 4], &mut [0u8; 4], Options::default())
        .is_err());
    let mut slots = [0u16; 4];
    wide.pack(&[1u16, 2, 3, 4], &mut slots, Options::default())
        .unwrap();
    assert_eq!(slots, [1, 2, 3, 4]);

    let packed = parse("s4[4]").unwrap();
    let err = packed
        .pack(&[1u8; 4], &mut [0u8; 4], Options::default())
        .unwrap_err();
    assert_eq!(err, RelayoutError::PackedLayout { bits: 4 });
    assert_eq!(
        err.to_string(),
        "the layout packs 4-bit elements into bytes; use `pack_bits`, `unpack_bits` or `convert_bits`"
    );
    assert_eq!(
        packed.unpack(&[0u8; 2], &mut [0u8; 4], Threads::One),
        Err(RelayoutError::PackedLayout { bits: 4 })
    );
    assert_eq!(
        packed.convert(&[0u8; 2], &packed, &mut [0u8; 2], Options::default()),
        Err(RelayoutError::PackedLayout { bits: 4 })
    );

    let err = l
        .pack_bits(&[1u8; 4], &mut [0u8; 16], Options::default())
        .unwrap_err();
    assert_eq!(err, RelayoutError::NotPacked { bits: 32 });
    assert_eq!(
        err.to_string(),
        "the layout stores 32 bits per element, whole bytes; use `pack`, `unpack` or `convert`"
    );
    assert_eq!(
        l.unpack_bits(&[0u8; 16], &mut [0u8; 4], Threads::One),
        Err(RelayoutError::NotPacked { bits: 32 })
    );

    let odd = parse("pred[8]{0:E(3)}").unwrap();
    let err = odd
        .pack_bits(&[true; 8], &mut [0u8; 3], Options::default())
        .unwrap_err();
    assert_eq!(err, RelayoutError::UnsupportedBits { bits: 3 });
    assert_eq!(
        err.to_string(),
        "packed elements of 3 bits are not supported; `E(1)`, `E(2)` and `E(4)` are"
    );
    assert_eq!(
        odd.unpack_bits(&[0u8; 3], &mut [false; 8], Threads::One),
        Err(RelayoutError::UnsupportedBits { bits: 3 })
    );
}

#[test]
fn convert_mismatches() {
    let a = parse("f32[3,5]").unwrap();
    let mut out = [9.0f32; 15];
    let err = a
        .convert(
            &[0.0; 15],
            &parse("f32[15]").unwrap(),
            &mut out,
            Options::default(),
        )
        .unwrap_err();
    assert_eq!(err, RelayoutError::RankMismatch { from: 2, to: 1 });
    assert_eq!(err.to_string(), "cannot convert between rank 2 and rank 1");

    let err = a
        .convert(
            &[0.0; 15],
            &parse("f32[5,3]").unwrap(),
            &mut out,
            Options::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::DimMismatch {
            dim: 0,
            from: 3,
            to: 5
        }
    );
    assert_eq!(
        err.to_string(),
        "cannot convert: dim 0 has size 3 in the source and 5 in the destination"
    );

    let err = a
        .convert(
            &[0.0; 15],
            &parse("s32[3,5]").unwrap(),
            &mut out,
            Options::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::ElementMismatch {
            from: xla_layout::ElementType::F32,
            to: xla_layout::ElementType::S32
        }
    );
    assert_eq!(
        err.to_string(),
        "cannot convert `f32` elements to `s32`: the element types must match"
    );
    assert_untouched(&out, 9.0);

    let narrow = parse("pred[8]{0:E(1)}").unwrap();
    let byte = parse("pred[8]").unwrap();
    let err = byte
        .convert(&[0u8; 8], &narrow, &mut [0u8; 1], Options::default())
        .unwrap_err();
    assert_eq!(err, RelayoutError::BitsMismatch { from: 8, to: 1 });
    assert_eq!(
        err.to_string(),
        "cannot convert 8-bit storage to 1-bit storage: the element widths must match"
    );
    assert_eq!(
        narrow.convert_bits(&[0u8; 1], &byte, &mut [0u8; 8], Options::default()),
        Err(RelayoutError::BitsMismatch { from: 1, to: 8 })
    );
    assert_eq!(
        narrow.convert_bits(
            &[0u8; 1],
            &parse("pred[4,2]{1,0:E(1)}").unwrap(),
            &mut [0u8; 1],
            Options::default()
        ),
        Err(RelayoutError::RankMismatch { from: 1, to: 2 })
    );
}

#[test]
fn errors_are_std_errors() {
    let err: Box<dyn std::error::Error> = Box::new(RelayoutError::RankMismatch { from: 1, to: 2 });
    assert_eq!(err.to_string(), "cannot convert between rank 1 and rank 2");
}

#[test]
fn empty_arrays() {
    // No elements, no storage: every call succeeds and writes nothing.
    let l = parse("f32[0,5]{1,0:T(8,128)}").unwrap();
    assert_eq!((l.len(), l.storage_len()), (0, 0));
    l.pack(&[] as &[f32], &mut [], Options::default()).unwrap();
    l.unpack(&[] as &[f32], &mut [], Threads::One).unwrap();
    l.convert(
        &[] as &[f32],
        &parse("f32[0,5]").unwrap(),
        &mut [],
        Options::default(),
    )
    .unwrap();
    assert_eq!(l.slots().count(), 0);
    assert_eq!(l.offsets().count(), 0);
    let b = parse("s4[3,0]{0,1:E(4)}").unwrap();
    b.pack_bits(&[] as &[u8], &mut [], Options::default())
        .unwrap();
    b.unpack_bits(&[], &mut [] as &mut [u8], Threads::One)
        .unwrap();
}
