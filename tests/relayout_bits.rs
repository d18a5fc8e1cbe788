//! Sub-byte storage: pack, unpack and convert of `E(1)`, `E(2)`, `E(4)`
//! layouts against the reference, byte for byte, in XLA's bit order (the
//! first slot of a byte in its low-order bits).

mod common;

use common::reference::{random_conversion_pair, random_layout, ravel, RefLayout, Rng};
use xla_layout::{parse, Layout};

/// `spec` with `E(bits)` added to its attributes.
fn with_bits(spec: &str, bits: u32) -> String {
    match spec.strip_suffix('}') {
        Some(body) if body.contains(':') => format!("{body}E({bits})}}"),
        Some(body) => format!("{body}:E({bits})}}"),
        None => format!("{spec}{{:E({bits})}}"),
    }
}

/// Bytes holding `values` (one per slot, low `bits` used), first slot in the
/// low-order bits; unused bits of the last byte are 0.
fn pack_bytes(values: &[u8], bits: u32) -> Vec<u8> {
    let per = 8 / bits as usize;
    let mut bytes = vec![0u8; (values.len() * bits as usize).div_ceil(8)];
    for (k, &v) in values.iter().enumerate() {
        let mask = (1u8 << bits) - 1;
        bytes[k / per] |= (v & mask) << ((k % per) as u32 * bits);
    }
    bytes
}

/// Sign-extends the low `bits` of `v`.
fn signed(v: u8, bits: u32) -> i8 {
    let shift = 8 - bits;
    i8::from_ne_bytes([v << shift]) >> shift
}

fn check(r: &RefLayout, spec: &str, bits: u32, fill: u8) {
    let l = parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
    assert_eq!(l.element_bits(), bits, "{spec}");
    let mask = (1u8 << bits) - 1;
    let slots: Vec<Option<usize>> = r
        .slots()
        .into_iter()
        .map(|s| s.map(|i| ravel(&i, &r.dims)))
        .collect();
    // Logical values carry garbage in their high bits: packing must drop it.
    let logical: Vec<u8> = (0..l.len()).map(|i| (i * 37 % 256) as u8).collect();
    let values: Vec<u8> = slots
        .iter()
        .map(|s| s.map_or(fill, |p| logical[p]) & mask)
        .collect();
    let expected = pack_bytes(&values, bits);
    assert_eq!(l.storage_bytes(), expected.len(), "{spec}");

    let mut storage = vec![0xa5u8; l.storage_bytes()];
    l.pack_bits_with_fill(&logical, &mut storage, fill).unwrap();
    assert_eq!(storage, expected, "pack_bits {spec}");

    let signed_logical: Vec<i8> = logical.iter().map(|&v| signed(v & mask, bits)).collect();
    let mut from_signed = vec![0x5au8; l.storage_bytes()];
    l.pack_bits_with_fill(&signed_logical, &mut from_signed, fill)
        .unwrap();
    assert_eq!(from_signed, expected, "pack_bits i8 {spec}");

    let mut back = vec![0xffu8; l.len()];
    l.unpack_bits(&storage, &mut back).unwrap();
    let unsigned: Vec<u8> = logical.iter().map(|&v| v & mask).collect();
    assert_eq!(back, unsigned, "unpack_bits u8 {spec}");

    let mut back_signed = vec![0x7fi8; l.len()];
    l.unpack_bits(&storage, &mut back_signed).unwrap();
    assert_eq!(back_signed, signed_logical, "unpack_bits i8 {spec}");

    let mut flags = vec![false; l.len()];
    l.unpack_bits(&storage, &mut flags).unwrap();
    let nonzero: Vec<bool> = unsigned.iter().map(|&v| v != 0).collect();
    assert_eq!(flags, nonzero, "unpack_bits bool {spec}");
}

#[test]
fn random_layouts_in_every_packed_width() {
    let mut rng = Rng::new(0xb175_0001);
    for round in 0..1500 {
        let r = random_layout(&mut rng);
        let fill = [0, 0x55, 0xaa][round % 3];
        for (name, bits) in [("s4", 4), ("u2", 2), ("s1", 1)] {
            let r = RefLayout {
                type_name: name,
                ..r.clone()
            };
            check(&r, &r.spec(), bits, fill);
        }
        let pred = RefLayout {
            type_name: "pred",
            ..r.clone()
        };
        check(&pred, &with_bits(&pred.spec(), 1), 1, fill);
        let s8_as_4 = RefLayout {
            type_name: "s4",
            ..r
        };
        check(&s8_as_4, &with_bits(&s8_as_4.spec(), 4), 4, fill);
    }
}

/// Element type, dims, tiles and bits of one hand-picked layout.
type Case = (&'static str, Vec<usize>, Vec<Vec<Option<usize>>>, u32);

#[test]
fn tpu_sub_byte_formats() {
    let s = Some;
    let cases: [Case; 6] = [
        (
            "s4",
            vec![40, 256],
            vec![vec![s(8), s(128)], vec![s(8), s(1)]],
            4,
        ),
        (
            "s4",
            vec![19, 300],
            vec![vec![s(8), s(128)], vec![s(8), s(1)]],
            4,
        ),
        (
            "s4",
            vec![17, 129],
            vec![vec![s(8), s(128)], vec![s(2), s(1)]],
            4,
        ),
        (
            "pred",
            vec![70, 200],
            vec![vec![s(32), s(128)], vec![s(32), s(1)]],
            1,
        ),
        (
            "u2",
            vec![33, 130],
            vec![vec![s(8), s(128)], vec![s(4), s(1)]],
            2,
        ),
        ("s4", vec![1, 1023], vec![vec![s(2), s(1024)]], 4),
    ];
    for (type_name, dims, tiles, bits) in cases {
        let r = RefLayout {
            type_name,
            minor_to_major: (0..dims.len()).rev().collect(),
            dims,
            tiles,
            tail_alignment: 1,
        };
        for fill in [0, 0xff] {
            check(&r, &with_bits(&r.spec(), bits), bits, fill);
        }
    }
}

#[test]
fn xla_bit_order() {
    // Two s4 values per byte, the first in the low nibble; bits past the
    // last slot are zero.
    let l = parse("s4[3]{0:E(4)}").unwrap();
    let mut bytes = [0xffu8; 2];
    l.pack_bits(&[0x1u8, 0x2, 0x3], &mut bytes).unwrap();
    assert_eq!(bytes, [0x21, 0x03]);
    // Four u2 values per byte, the first in bits 0-1.
    let l = parse("u2[4]").unwrap();
    let mut byte = [0u8];
    l.pack_bits(&[0u8, 1, 2, 3], &mut byte).unwrap();
    assert_eq!(byte, [0b11_10_01_00]);
}

fn convert_case(from: &Layout, to: &Layout, fill: u8) {
    let bits = from.element_bits();
    let logical: Vec<u8> = (0..from.len()).map(|i| (i * 11 % 256) as u8).collect();
    let mut source = vec![0u8; from.storage_bytes()];
    from.pack_bits(&logical, &mut source).unwrap();
    let mut expected = vec![0u8; to.storage_bytes()];
    to.pack_bits_with_fill(&logical, &mut expected, fill)
        .unwrap();
    let mut got = vec![0x3cu8; to.storage_bytes()];
    from.convert_bits_with_fill(&source, to, &mut got, fill)
        .unwrap();
    assert_eq!(got, expected, "{from} -> {to} ({bits} bits)");
}

#[test]
fn convert_between_packed_layouts() {
    let specs = [
        "s4[19,300]{1,0:E(4)}",
        "s4[19,300]{0,1:E(4)}",
        "s4[19,300]{1,0:T(8,128)(8,1)E(4)}",
        "s4[19,300]{1,0:T(8,128)(2,1)E(4)}",
        "s4[19,300]{0,1:T(8,128)E(4)}",
        "s4[19,300]{1,0:T(2,2)(*,3)E(4)}",
    ];
    let layouts: Vec<Layout> = specs.iter().map(|s| parse(s).unwrap()).collect();
    for from in &layouts {
        for to in &layouts {
            convert_case(from, to, 0);
            convert_case(from, to, 0xf);
        }
    }
    let mut rng = Rng::new(0xb175_0002);
    for _ in 0..800 {
        let (a, b) = random_conversion_pair(&mut rng);
        let (a, b) = (a.retyped("u2"), b.retyped("u2"));
        let (Ok(la), Ok(lb)) = (parse(&a.spec()), parse(&b.spec())) else {
            continue;
        };
        if lb.storage_len() > 50_000 {
            continue;
        }
        convert_case(&la, &lb, 0b10);
        convert_case(&lb, &la, 0b01);
    }
}

/// `E(n)` narrower than the type (int4 values held in `s8`, as XLA's GPU
/// tests write them): values must fit in `n` bits, floats cannot be narrowed.
#[test]
fn narrowed_integer_layouts() {
    use xla_layout::{ElementType, RelayoutError};
    let values: Vec<i8> = (0..21).map(|i| (i % 16) - 8).collect();
    for (narrowed, native) in [
        ("s8[21]{0:E(4)}", "s4[21]{0:E(4)}"),
        ("s32[3,7]{1,0:T(2,4)E(4)}", "s4[3,7]{1,0:T(2,4)E(4)}"),
    ] {
        let (l, n) = (parse(narrowed).unwrap(), parse(native).unwrap());
        assert_eq!(l.storage_bytes(), n.storage_bytes(), "{narrowed}");
        let (mut a, mut b) = (vec![0u8; l.storage_bytes()], vec![0u8; n.storage_bytes()]);
        l.pack_bits(&values, &mut a).unwrap();
        n.pack_bits(&values, &mut b).unwrap();
        assert_eq!(a, b, "{narrowed}");
        let mut back = vec![0i8; 21];
        l.unpack_bits(&a, &mut back).unwrap();
        assert_eq!(back, values, "{narrowed}: sign-extended back");
    }

    let l = parse("s8[21]{0:E(4)}").unwrap();
    let mut storage = vec![0xa5u8; l.storage_bytes()];
    let mut wide = values.clone();
    wide[5] = 8;
    let err = l.pack_bits(&wide, &mut storage).unwrap_err();
    assert_eq!(
        err,
        RelayoutError::ValueOutOfRange {
            position: Some(5),
            element: ElementType::S8,
            bits: 4
        }
    );
    assert_eq!(
        err.to_string(),
        "the value at position 5 does not fit in `E(4)`: `s8` stored in 4 bits holds -8 to 7"
    );
    assert!(
        storage.iter().all(|&b| b == 0xa5),
        "nothing written on error"
    );
    assert!(matches!(
        l.pack_bits_with_fill(&values, &mut storage, 0x10),
        Err(RelayoutError::ValueOutOfRange { position: None, .. })
    ));
    // 0xf as a fill is -1 for a signed type read back from 4 bits: refused too.
    assert!(l.pack_bits_with_fill(&values, &mut storage, 0xf).is_err());
    assert!(l.pack_bits_with_fill(&values, &mut storage, 0xff).is_ok());

    let u = parse("u8[4]{0:E(2)}").unwrap();
    let mut out = [0u8; 1];
    u.pack_bits(&[0u8, 1, 2, 3], &mut out).unwrap();
    assert_eq!(out, [0b11_10_01_00]);
    assert_eq!(
        u.pack_bits(&[0u8, 1, 2, 4], &mut out),
        Err(RelayoutError::ValueOutOfRange {
            position: Some(3),
            element: ElementType::U8,
            bits: 2
        })
    );
    assert!(u.pack_bits(&[0i8, 1, -1, 2], &mut out).is_err());

    for spec in ["f32[4]{0:E(4)}", "f8e4m3fn[4]{0:E(4)}", "bf16[4]{0:E(2)}"] {
        let l = parse(spec).unwrap();
        let err = l
            .pack_bits(&[0u8; 4], &mut [0u8; 2][..l.storage_bytes()])
            .unwrap_err();
        assert!(
            matches!(err, RelayoutError::NarrowedFloat { .. }),
            "{spec}: {err:?}"
        );
        assert!(err.to_string().contains("cannot be narrowed"), "{err}");
        let mut back = [0u8; 4];
        assert!(l
            .unpack_bits(&[0u8; 2][..l.storage_bytes()], &mut back)
            .is_err());
    }
    // Whole-element methods refuse packed layouts, narrowed or not.
    assert!(matches!(
        l.pack(&values, &mut vec![0i8; l.storage_len()]),
        Err(RelayoutError::PackedLayout { bits: 4 })
    ));
    // Widths that do not divide a byte stay refused by the `_bits` methods.
    let odd = parse("s8[4]{0:E(3)}").unwrap();
    assert_eq!(
        odd.pack_bits(&[0i8; 4], &mut [0u8; 2]),
        Err(RelayoutError::UnsupportedBits { bits: 3 })
    );
}
