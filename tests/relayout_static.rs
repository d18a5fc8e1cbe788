//! `layout!` values relayout through the `StaticLayout` methods exactly as
//! their run-time layouts do, and agree with their own `offset`.

#![allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    reason = "values are copied, never computed: exact comparison is the point"
)]

use xla_layout::{layout, StaticLayout};
use xla_layout::{Options, Threads};

/// Generic code over any compile-time layout: pack, then check every element
/// against `offset` and every padding slot against `index_of`.
fn pack_agrees_with_offset<L: StaticLayout<Index = [usize; 2]>>(l: L) {
    let [rows, cols] = [L::DIMS[0], L::DIMS[1]];
    let logical: Vec<u32> = (0..L::LEN as u32).map(|x| x ^ 0x5555).collect();
    let mut storage = vec![0u32; L::STORAGE_LEN];
    l.pack(&logical, &mut storage, Options::fill(u32::MAX))
        .unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(
                storage[l.offset([r, c])],
                logical[r * cols + c],
                "{l} at {r},{c}"
            );
        }
    }
    for (k, slot) in storage.iter().enumerate() {
        if l.index_of(k).is_none() {
            assert_eq!(*slot, u32::MAX, "{l}: padding slot {k}");
        }
    }
    let mut runtime = vec![0u32; L::STORAGE_LEN];
    l.runtime()
        .pack(&logical, &mut runtime, Options::fill(u32::MAX))
        .unwrap();
    assert_eq!(storage, runtime, "{l}");

    let mut back = vec![0u32; L::LEN];
    l.unpack(&storage, &mut back, Threads::One).unwrap();
    assert_eq!(back, logical, "{l}");

    assert!(l.slots().eq(l.runtime().slots()), "{l}");
    let indices: Vec<Option<[usize; 2]>> = l.slot_indices().collect();
    let runtime: Vec<Option<[usize; 2]>> = l
        .runtime()
        .slot_indices()
        .map(|i| i.map(|i| [i[0], i[1]]))
        .collect();
    assert_eq!(indices, runtime, "{l}");
    assert_eq!(l.slot_indices().len(), L::STORAGE_LEN, "{l}");
    let offsets: Vec<usize> = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| l.offset([r, c])))
        .collect();
    assert!(l.offsets().eq(offsets), "{l}");
}

#[test]
fn macro_layouts() {
    pack_agrees_with_offset(layout!("u32[20,300]{1,0:T(8,128)}"));
    pack_agrees_with_offset(layout!("u32[19,260]{1,0:T(8,128)(2,1)}"));
    pack_agrees_with_offset(layout!("u32[33,129]{0,1:T(8,128)(4,1)}"));
    pack_agrees_with_offset(layout!(u32[11,10]{1,0:T(2,2)(*,3)}));
    pack_agrees_with_offset(layout!("u32[7,5]{0,1:L(16)}"));
    pack_agrees_with_offset(layout!("u32[8,8]{1,0:T(2,4)(2,1,1,1)}"));
}

#[test]
fn default_fill_and_conversion() {
    let l = layout!("f32[3,5]{1,0:T(2,2)}");
    let logical: Vec<f32> = (0..15).map(|x| x as f32).collect();
    let mut storage = vec![f32::NAN; l.storage_len()];
    l.pack(&logical, &mut storage, Options::default()).unwrap();
    assert_eq!(storage[9], 0.0);

    let col = xla_layout::parse("f32[3,5]{0,1}").unwrap();
    let mut out = vec![0.0f32; 15];
    l.convert(&storage, &col, &mut out, Options::default())
        .unwrap();
    for r in 0..3 {
        for c in 0..5 {
            assert_eq!(out[c * 3 + r], logical[r * 5 + c]);
        }
    }
}

#[test]
fn packed_macro_layouts() {
    let l = layout!("s4[17,130]{1,0:T(8,128)(8,1)E(4)}");
    let logical: Vec<i8> = (0..l.len()).map(|i| (i % 16) as i8 - 8).collect();
    let mut storage = vec![0u8; l.storage_bytes()];
    l.pack_bits(&logical, &mut storage, Options::default())
        .unwrap();
    let mut runtime = vec![0u8; l.storage_bytes()];
    l.runtime()
        .pack_bits(&logical, &mut runtime, Options::default())
        .unwrap();
    assert_eq!(storage, runtime);
    for r in 0..17 {
        for c in 0..130 {
            let o = l.offset([r, c]);
            let nibble = (storage[o / 2] >> (o % 2 * 4)) & 0xf;
            assert_eq!(nibble, logical[r * 130 + c].to_ne_bytes()[0] & 0xf);
        }
    }
    let mut back = vec![0i8; l.len()];
    l.unpack_bits(&storage, &mut back, Threads::One).unwrap();
    assert_eq!(back, logical);
}

/// `convert_bits` of a `layout!` value, into another `layout!` value or a
/// `&Layout`, writes what its run-time layout's does, the fill included;
/// a fill its element type does not hold is refused before any write.
#[test]
fn packed_macro_conversions() {
    let l = layout!("u2[5,7]{1,0:T(2,4)E(2)}");
    let to = layout!("u2[5,7]{0,1:T(4,2)E(2)}");
    let logical: Vec<u8> = (0..l.len()).map(|i| (i * 5 % 4) as u8).collect();
    let mut storage = vec![0u8; l.storage_bytes()];
    l.pack_bits(&logical, &mut storage, Options::default())
        .unwrap();
    let mut want = vec![0u8; to.storage_bytes()];
    to.pack_bits(&logical, &mut want, Options::fill(0b10))
        .unwrap();

    let mut got = vec![0xa5u8; to.storage_bytes()];
    l.convert_bits(&storage, to, &mut got, Options::fill(0b10))
        .unwrap();
    assert_eq!(got, want);
    let mut runtime = vec![0x5au8; to.storage_bytes()];
    l.runtime()
        .convert_bits(&storage, &to.runtime(), &mut runtime, Options::fill(0b10))
        .unwrap();
    assert_eq!(runtime, want);
    let mut mixed = vec![0x5au8; to.storage_bytes()];
    l.convert_bits(&storage, &to.runtime(), &mut mixed, Options::fill(0b10))
        .unwrap();
    assert_eq!(mixed, want);

    let err = l
        .convert_bits(&storage, to, &mut got, Options::fill(4))
        .unwrap_err();
    assert!(matches!(
        err,
        xla_layout::RelayoutError::ValueOutOfRange { position: None, .. }
    ));
    assert_eq!(got, want, "refused, yet written");

    // Sub-byte relayouts run on the calling thread whatever is asked.
    #[cfg(feature = "rayon")]
    {
        let mut pool = vec![0u8; to.storage_bytes()];
        l.convert_bits(
            &storage,
            to,
            &mut pool,
            Options::fill(0b10).threads(Threads::Pool),
        )
        .unwrap();
        assert_eq!(pool, want);
    }
}

/// The thread-pool methods of `layout!` values write what their run-time
/// layouts' do, on arrays large enough to be cut into chunks.
#[cfg(feature = "rayon")]
#[test]
fn macro_layouts_on_threads() {
    let l = layout!("f32[600,700]{1,0:T(8,128)}");
    let logical: Vec<f32> = (0..l.len()).map(|x| x as f32).collect();
    let mut storage = vec![f32::NAN; l.storage_len()];
    let mut want = vec![1.0; l.storage_len()];
    l.pack(
        &logical,
        &mut storage,
        Options::default().threads(Threads::Pool),
    )
    .unwrap();
    l.runtime()
        .pack(&logical, &mut want, Options::default())
        .unwrap();
    assert_eq!(storage, want);

    let mut back = vec![0.0; l.len()];
    l.unpack(&storage, &mut back, Threads::Pool).unwrap();
    assert_eq!(back, logical);

    let col = layout!("f32[600,700]{0,1}");
    let mut converted = vec![0.0; col.storage_len()];
    let mut want = vec![1.0; col.storage_len()];
    l.convert(
        &storage,
        col,
        &mut converted,
        Options::default().threads(Threads::Pool),
    )
    .unwrap();
    l.runtime()
        .convert(&storage, &col.runtime(), &mut want, Options::default())
        .unwrap();
    assert_eq!(converted, want);
    assert_eq!(converted[col.offset([599, 3])], (599 * 700 + 3) as f32);
    assert!(l
        .pack(
            &logical[1..],
            &mut storage,
            Options::default().threads(Threads::Pool)
        )
        .is_err());
}
