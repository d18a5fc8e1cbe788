//! Sub-byte storage: pack, unpack and convert of `E(1)`, `E(2)`, `E(4)`
//! layouts against the reference, byte for byte, in XLA's bit order (the
//! first slot of a byte in its low-order bits).

mod common;

use common::reference::{random_conversion_pair, random_layout, ravel, RefLayout, Rng};
use xla_layout::{parse, Layout, RelayoutError};
use xla_layout::{Options, Threads};

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

/// The byte of an element whose low `k` bits are `v`: sign-extended for a
/// signed type, as `pack_bits` takes it.
fn element_byte(v: u8, k: u32, signed_type: bool) -> u8 {
    if signed_type {
        signed(v, k).to_ne_bytes()[0]
    } else {
        v
    }
}

fn check(r: &RefLayout, spec: &str, bits: u32, fill: u8) {
    let l = parse(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
    assert_eq!(l.element_bits(), bits, "{spec}");
    let mask = (1u8 << bits) - 1;
    // What the element type holds: `pred` one bit whatever `E(n)` says.
    let held = bits.min(l.element_type().min_bits());
    let is_signed = r.type_name.starts_with('s');
    let in_range = (1u8 << held) - 1;
    let fill = element_byte(fill & in_range, held, is_signed);
    let slots: Vec<Option<usize>> = r
        .slots()
        .into_iter()
        .map(|s| s.map(|i| ravel(&i, &r.dims)))
        .collect();
    let logical: Vec<u8> = (0..l.len())
        .map(|i| element_byte((i * 37 % 256) as u8 & in_range, held, is_signed))
        .collect();
    let values: Vec<u8> = slots
        .iter()
        .map(|s| s.map_or(fill, |p| logical[p]) & mask)
        .collect();
    let expected = pack_bytes(&values, bits);
    assert_eq!(l.storage_bytes(), expected.len(), "{spec}");

    let mut storage = vec![0xa5u8; l.storage_bytes()];
    l.pack_bits(&logical, &mut storage, Options::fill(fill))
        .unwrap();
    assert_eq!(storage, expected, "pack_bits {spec}");

    let signed_logical: Vec<i8> = logical.iter().map(|&v| i8::from_ne_bytes([v])).collect();
    let mut from_signed = vec![0x5au8; l.storage_bytes()];
    l.pack_bits(&signed_logical, &mut from_signed, Options::fill(fill))
        .unwrap();
    assert_eq!(from_signed, expected, "pack_bits i8 {spec}");

    let mut back = vec![0xffu8; l.len()];
    l.unpack_bits(&storage, &mut back, Threads::One).unwrap();
    let unsigned: Vec<u8> = logical.iter().map(|&v| v & mask).collect();
    assert_eq!(back, unsigned, "unpack_bits u8 {spec}");

    let mut back_signed = vec![0x7fi8; l.len()];
    l.unpack_bits(&storage, &mut back_signed, Threads::One)
        .unwrap();
    let extended: Vec<i8> = unsigned.iter().map(|&v| signed(v, bits)).collect();
    assert_eq!(back_signed, extended, "unpack_bits i8 {spec}");
    if is_signed || held == bits {
        // The type of the element's signedness reads back what it packed.
        let same: &[u8] = if is_signed { &logical } else { &unsigned };
        let read: Vec<u8> = if is_signed {
            back_signed.iter().map(|v| v.to_ne_bytes()[0]).collect()
        } else {
            back.clone()
        };
        assert_eq!(read, same, "round trip {spec}");
    }

    let mut flags = vec![false; l.len()];
    l.unpack_bits(&storage, &mut flags, Threads::One).unwrap();
    let nonzero: Vec<bool> = unsigned.iter().map(|&v| v != 0).collect();
    assert_eq!(flags, nonzero, "unpack_bits bool {spec}");

    // A value with bits its type does not hold in `k` bits is refused,
    // naming its position, and the storage is left all zeros; a refused
    // fill, before anything is written.
    if !logical.is_empty() {
        let at = (l.len() * 5 / 7).min(l.len() - 1);
        for bad in [
            1u8 << held,
            0x80 | (1 << held),
            if is_signed { 1 << (held - 1) } else { 0xff },
        ] {
            let mut wide = logical.clone();
            wide[at] = bad;
            let mut sentinel = vec![0xc3u8; l.storage_bytes()];
            let err = l
                .pack_bits(&wide, &mut sentinel, Options::default())
                .unwrap_err();
            assert!(
                matches!(err, RelayoutError::ValueOutOfRange { position: Some(p), bits: n, .. } if p == at && n == bits),
                "{spec}: {bad:#x} at {at}: {err:?}"
            );
            assert!(
                sentinel.iter().all(|&b| b == 0),
                "{spec}: storage not cleared on error"
            );
            sentinel.fill(0xc3);
            let err = l
                .pack_bits(&logical, &mut sentinel, Options::fill(bad))
                .unwrap_err();
            assert!(
                matches!(err, RelayoutError::ValueOutOfRange { position: None, .. }),
                "{spec}: fill {bad:#x}: {err:?}"
            );
            assert!(
                sentinel.iter().all(|&b| b == 0xc3),
                "{spec}: written on error"
            );
        }
    }
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

/// Transposed sub-byte layouts whose blocks span more rows than the
/// packs keep in cache at once, cut into groups with a shorter group
/// left over: a column of `(8,96)` tiles merged into 480 rows (rows along
/// the block's first axis), and an untiled `[.., 300, 40]{1,2,0}`, whose
/// 300 rows lie along its second.
#[test]
fn transposed_sub_byte_formats() {
    let s = Some;
    let cases: [(Case, Vec<usize>); 7] = [
        // Tiles whose groups are 4 bytes, 16 groups down and 16 columns
        // along at least, which go in tiles of 16 by 16 groups: ragged
        // both ways, for each width.
        (
            (
                "s4",
                vec![300, 203],
                vec![vec![s(8), s(128)], vec![s(8), s(1)]],
                4,
            ),
            vec![0, 1],
        ),
        (
            (
                "u2",
                vec![270, 330],
                vec![vec![s(16), s(128)], vec![s(16), s(1)]],
                2,
            ),
            vec![0, 1],
        ),
        (
            (
                "pred",
                vec![140, 600],
                vec![vec![s(32), s(64)], vec![s(32), s(1)]],
                1,
            ),
            vec![0, 1],
        ),
        (
            (
                "s4",
                vec![480, 24],
                vec![vec![s(8), s(96)], vec![s(8), s(1)]],
                4,
            ),
            vec![0, 1],
        ),
        (("u2", vec![2, 300, 40], vec![], 2), vec![1, 2, 0]),
        (("s4", vec![3, 300, 40], vec![], 4), vec![1, 2, 0]),
        (
            (
                "pred",
                vec![200, 40],
                vec![vec![s(32), s(64)], vec![s(32), s(1)]],
                1,
            ),
            vec![0, 1],
        ),
    ];
    for ((type_name, dims, tiles, bits), minor_to_major) in cases {
        let r = RefLayout {
            type_name,
            minor_to_major,
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
    l.pack_bits(&[0x1u8, 0x2, 0x3], &mut bytes, Options::default())
        .unwrap();
    assert_eq!(bytes, [0x21, 0x03]);
    // Four u2 values per byte, the first in bits 0-1.
    let l = parse("u2[4]").unwrap();
    let mut byte = [0u8];
    l.pack_bits(&[0u8, 1, 2, 3], &mut byte, Options::default())
        .unwrap();
    assert_eq!(byte, [0b11_10_01_00]);
}

/// `raw`'s low bits as a byte of `l`'s element type.
fn byte_of(l: &Layout, raw: u8) -> u8 {
    let k = l.element_bits().min(l.element_type().min_bits());
    let is_signed = l.element_type().name().starts_with('s');
    element_byte(raw & ((1 << k) - 1), k, is_signed)
}

fn convert_case(from: &Layout, to: &Layout, fill: u8) {
    let bits = from.element_bits();
    let fill = byte_of(to, fill);
    let logical: Vec<u8> = (0..from.len())
        .map(|i| byte_of(from, (i * 11 % 256) as u8))
        .collect();
    let mut source = vec![0u8; from.storage_bytes()];
    from.pack_bits(&logical, &mut source, Options::default())
        .unwrap();
    let mut expected = vec![0u8; to.storage_bytes()];
    to.pack_bits(&logical, &mut expected, Options::fill(fill))
        .unwrap();
    let mut got = vec![0x3cu8; to.storage_bytes()];
    from.convert_bits(&source, to, &mut got, Options::fill(fill))
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
    use xla_layout::ElementType;
    let values: Vec<i8> = (0..21).map(|i| (i % 16) - 8).collect();
    for (narrowed, native) in [
        ("s8[21]{0:E(4)}", "s4[21]{0:E(4)}"),
        ("s32[3,7]{1,0:T(2,4)E(4)}", "s4[3,7]{1,0:T(2,4)E(4)}"),
    ] {
        let (l, n) = (parse(narrowed).unwrap(), parse(native).unwrap());
        assert_eq!(l.storage_bytes(), n.storage_bytes(), "{narrowed}");
        let (mut a, mut b) = (vec![0u8; l.storage_bytes()], vec![0u8; n.storage_bytes()]);
        l.pack_bits(&values, &mut a, Options::default()).unwrap();
        n.pack_bits(&values, &mut b, Options::default()).unwrap();
        assert_eq!(a, b, "{narrowed}");
        let mut back = vec![0i8; 21];
        l.unpack_bits(&a, &mut back, Threads::One).unwrap();
        assert_eq!(back, values, "{narrowed}: sign-extended back");
    }

    let l = parse("s8[21]{0:E(4)}").unwrap();
    let mut storage = vec![0xa5u8; l.storage_bytes()];
    let mut wide = values.clone();
    wide[5] = 8;
    let err = l
        .pack_bits(&wide, &mut storage, Options::default())
        .unwrap_err();
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
    assert!(storage.iter().all(|&b| b == 0), "cleared on error");
    storage.fill(0xa5);
    assert!(matches!(
        l.pack_bits(&values, &mut storage, Options::fill(0x10)),
        Err(RelayoutError::ValueOutOfRange { position: None, .. })
    ));
    // 0xf as a fill is -1 for a signed type read back from 4 bits: refused too.
    assert!(l
        .pack_bits(&values, &mut storage, Options::fill(0xf))
        .is_err());
    assert!(l
        .pack_bits(&values, &mut storage, Options::fill(0xff))
        .is_ok());

    let u = parse("u8[4]{0:E(2)}").unwrap();
    let mut out = [0u8; 1];
    u.pack_bits(&[0u8, 1, 2, 3], &mut out, Options::default())
        .unwrap();
    assert_eq!(out, [0b11_10_01_00]);
    assert_eq!(
        u.pack_bits(&[0u8, 1, 2, 4], &mut out, Options::default()),
        Err(RelayoutError::ValueOutOfRange {
            position: Some(3),
            element: ElementType::U8,
            bits: 2
        })
    );
    assert!(u
        .pack_bits(&[0i8, 1, -1, 2], &mut out, Options::default())
        .is_err());

    for spec in ["f32[4]{0:E(4)}", "f8e4m3fn[4]{0:E(4)}", "bf16[4]{0:E(2)}"] {
        let l = parse(spec).unwrap();
        let err = l
            .pack_bits(
                &[0u8; 4],
                &mut [0u8; 2][..l.storage_bytes()],
                Options::default(),
            )
            .unwrap_err();
        assert!(
            matches!(err, RelayoutError::NarrowedFloat { .. }),
            "{spec}: {err:?}"
        );
        assert!(err.to_string().contains("cannot be narrowed"), "{err}");
        let mut back = [0u8; 4];
        assert!(l
            .unpack_bits(&[0u8; 2][..l.storage_bytes()], &mut back, Threads::One)
            .is_err());
    }
    // Whole-element methods refuse packed layouts, narrowed or not.
    assert!(matches!(
        l.pack(&values, &mut vec![0i8; l.storage_len()], Options::default()),
        Err(RelayoutError::PackedLayout { bits: 4 })
    ));
    // Widths that do not divide a byte stay refused by the `_bits` methods.
    let odd = parse("s8[4]{0:E(3)}").unwrap();
    assert_eq!(
        odd.pack_bits(&[0i8; 4], &mut [0u8; 2], Options::default()),
        Err(RelayoutError::UnsupportedBits { bits: 3 })
    );
}

/// Every sub-byte type refuses a value it does not hold in its bits (no
/// silent cut to the low bits), names the first one's position, and writes
/// nothing: values and fill of `pack_bits`, the fill of `convert_bits`.
#[test]
fn values_that_do_not_fit_are_refused_for_every_type() {
    use xla_layout::ElementType;
    let refused = |spec: &str, values: &[u8], fill: u8, position: Option<usize>| {
        let l = parse(spec).unwrap();
        let mut storage = vec![0x96u8; l.storage_bytes()];
        let err = l
            .pack_bits(values, &mut storage, Options::fill(fill))
            .unwrap_err();
        assert_eq!(
            err,
            RelayoutError::ValueOutOfRange {
                position,
                element: l.element_type(),
                bits: l.element_bits()
            },
            "{spec}"
        );
        // A refused fill before anything is written, a refused value
        // with the storage cleared.
        let left = if position.is_some() { 0 } else { 0x96 };
        assert!(
            storage.iter().all(|&b| b == left),
            "{spec}: {:x?} left on error",
            &storage[..storage.len().min(8)]
        );
        err.to_string()
    };
    // `pred` in one bit given 2 (which would store 0), `u4` given 0x1f
    // (which would store 15).
    assert_eq!(
        refused("pred[4]{0:E(1)}", &[1, 0, 2, 1], 0, Some(2)),
        "the value at position 2 does not fit in `E(1)`: `pred` stored in 1 bit holds 0 to 1"
    );
    assert_eq!(
        refused("u4[3]", &[0, 0x1f, 0x1f], 0, Some(1)),
        "the value at position 1 does not fit in `E(4)`: `u4` stored in 4 bits holds 0 to 15"
    );
    assert_eq!(
        refused("s4[3]", &[0xf8, 7, 0x0f], 0, Some(2)),
        "the value at position 2 does not fit in `E(4)`: `s4` stored in 4 bits holds -8 to 7"
    );
    assert_eq!(
        refused("s2[5]{0:T(8)}", &[0, 1, 0xfe, 0xff, 1], 2, None),
        "the fill value does not fit in `E(2)`: `s2` stored in 2 bits holds -2 to 1"
    );
    // `pred` holds one bit however wide its slot.
    refused("pred[2]{0:E(4)}", &[1, 3], 0, Some(1));
    // A 4-bit float's byte is its bit pattern, zero-extended.
    assert_eq!(
        refused("f4e2m1fn[2]", &[0xf, 0x10], 0, Some(1)),
        "the value at position 1 does not fit in `E(4)`: `f4e2m1fn` stored in 4 bits holds the bit patterns 0 to 15"
    );
    let u4 = parse("u4[3]").unwrap();
    let signed_too = u4
        .pack_bits(&[0i8, 1, -1], &mut [0u8; 2], Options::default())
        .unwrap_err();
    assert!(matches!(
        signed_too,
        RelayoutError::ValueOutOfRange {
            position: Some(2),
            ..
        }
    ));
    // The first of several, found past the first block of the scan.
    let mut many = vec![3u8; 3000];
    many[2999] = 16;
    many[1700] = 0x20;
    refused("u4[3000]", &many, 0, Some(1700));

    // `bool` always fits an unsigned type; `i8` and `u8` spell the same byte.
    let pred = parse("pred[9]{0:E(1)}").unwrap();
    let mut flags = [0u8; 2];
    pred.pack_bits(
        &[true, false, true, true, false, false, false, false, true],
        &mut flags,
        Options::default(),
    )
    .unwrap();
    assert_eq!(flags, [0b0000_1101, 1]);
    let s4 = parse("s4[2]").unwrap();
    let (mut signed_bytes, mut unsigned_bytes) = ([0u8], [0u8]);
    s4.pack_bits(&[-3i8, 7], &mut signed_bytes, Options::default())
        .unwrap();
    s4.pack_bits(&[0xfdu8, 7], &mut unsigned_bytes, Options::default())
        .unwrap();
    assert_eq!((signed_bytes, unsigned_bytes), ([0x7d], [0x7d]));

    // `convert_bits` moves stored bits as they are; only its fill is checked.
    let from = parse("u2[3]").unwrap();
    let to = parse("u2[3]{0:T(4)}").unwrap();
    let mut out = [0xa5u8];
    let err = from
        .convert_bits(&[0b10_01_11], &to, &mut out, Options::fill(4))
        .unwrap_err();
    assert_eq!(
        err,
        RelayoutError::ValueOutOfRange {
            position: None,
            element: ElementType::U2,
            bits: 2
        }
    );
    assert_eq!(out, [0xa5], "written on error");
    let s2 = parse("s2[3]").unwrap();
    let tiled = parse("s2[3]{0:T(4)}").unwrap();
    s2.convert_bits(&[0b10_01_11], &tiled, &mut out, Options::fill(0xff))
        .unwrap();
    assert_eq!(out, [0b11_10_01_11]);
    assert!(s2
        .convert_bits(&[0b10_01_11], &tiled, &mut out, Options::fill(0b11))
        .is_err());
}
