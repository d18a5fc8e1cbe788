//! Relayouts past the 8 MiB from which destinations are written with
//! streaming stores: the paths that only run there (rows joined across
//! tiles, `(2,1)` and `(4,1)` tiles unpacked a line of each row at a time,
//! line tiles, and short bands of line tiles run from a copy of their
//! rows), into destinations at several places within a cache line and
//! into chunks of a plan, against the slot iterator (`Layout::slots`,
//! which never streams; `relayout.rs` checks it against the reference,
//! whose grids are too slow to build at these sizes).

use xla_layout::{parse, Layout};

/// Distinct-looking values, never equal to the garbage buffers start with.
trait Value: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync {
    fn make(i: usize) -> Self;
    const GARBAGE: Self;
}

macro_rules! value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            #[allow(clippy::cast_possible_truncation)]
            fn make(i: usize) -> Self {
                (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29) as $t | 1
            }
            const GARBAGE: Self = 0;
        }
    )*};
}
value!(u8, u16, u32);

/// Element offsets into a buffer: on its start, and 16, 32 and 48 bytes
/// and one element further on (a `Vec` of this size starts 16 bytes into a
/// cache line, so these cover every place in a line).
fn shifts<T>() -> [usize; 5] {
    let size = std::mem::size_of::<T>();
    [0, 16 / size, 32 / size, 48 / size, 1]
}

/// The first position where `got` and `want` differ, for a short message.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(k) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!(
            "{what}: first difference at {k}: {:?} != {:?}",
            got[k], want[k]
        );
    }
}

/// `storage` unpacked through the slot iterator: logical element `p` is
/// the storage slot that holds it.
fn logical_of<T: Value>(l: &Layout, storage: &[T]) -> Vec<T> {
    let mut logical = vec![T::GARBAGE; l.len()];
    for (slot, position) in l.slots().enumerate() {
        if let Some(p) = position {
            logical[p] = storage[slot];
        }
    }
    logical
}

/// Unpack and pack of `spec` into buffers at every shift, and through a
/// plan cut into three chunks.
fn pack_and_unpack<T: Value>(spec: &str) {
    let l = parse(spec).unwrap();
    assert!(
        l.len() * std::mem::size_of::<T>() >= 8 << 20,
        "{spec} is below 8 MiB"
    );
    // Storage with data slots from the logical values and padding zeros,
    // as `pack` writes it.
    let logical: Vec<T> = (0..l.len()).map(T::make).collect();
    let packed: Vec<T> = l
        .slots()
        .map(|p| p.map_or(T::default(), |p| logical[p]))
        .collect();
    for shift in shifts::<T>() {
        let mut back = vec![T::GARBAGE; shift + l.len()];
        l.unpack(&packed, &mut back[shift..]).unwrap();
        assert!(
            back[..shift].iter().all(|&x| x == T::GARBAGE),
            "{spec}: before the unpack"
        );
        same(
            &back[shift..],
            &logical,
            &format!("unpack {spec} at {shift}"),
        );

        let mut stored = vec![T::GARBAGE; shift + l.storage_len()];
        l.pack(&logical, &mut stored[shift..]).unwrap();
        assert!(
            stored[..shift].iter().all(|&x| x == T::GARBAGE),
            "{spec}: before the pack"
        );
        same(
            &stored[shift..],
            &packed,
            &format!("pack {spec} at {shift}"),
        );
    }
    let plan = l.unpack_plan::<T>().unwrap();
    let mut back = vec![T::GARBAGE; l.len()];
    for (chunk, part) in plan.chunks_mut(3, &mut back).unwrap() {
        chunk.run(&packed, part).unwrap();
    }
    same(&back, &logical, &format!("unpack {spec} in three chunks"));
}

/// `from` converted to `to` and back, into buffers at every shift.
fn convert<T: Value>(from: &str, to: &str) {
    let (a, b) = (parse(from).unwrap(), parse(to).unwrap());
    let logical: Vec<T> = (0..a.len()).map(T::make).collect();
    let store = |l: &Layout| -> Vec<T> {
        l.slots()
            .map(|p| p.map_or(T::default(), |p| logical[p]))
            .collect()
    };
    let (in_a, in_b) = (store(&a), store(&b));
    assert_eq!(logical_of(&a, &in_a), logical);
    for shift in shifts::<T>() {
        let mut there = vec![T::GARBAGE; shift + b.storage_len()];
        a.convert_to(&in_a, &b, &mut there[shift..]).unwrap();
        same(
            &there[shift..],
            &in_b,
            &format!("{from} -> {to} at {shift}"),
        );
        let mut back = vec![T::GARBAGE; shift + a.storage_len()];
        b.convert_to(&in_b, &a, &mut back[shift..]).unwrap();
        same(&back[shift..], &in_a, &format!("{to} -> {from} at {shift}"));
        assert!(
            back[..shift].iter().all(|&x| x == T::GARBAGE),
            "{to} -> {from}: before"
        );
    }
}

#[test]
fn group_tiles_past_the_cache() {
    pack_and_unpack::<u16>("bf16[1024,4096]{1,0:T(8,128)(2,1)}");
    pack_and_unpack::<u8>("s8[2048,4096]{1,0:T(8,128)(4,1)}");
}

#[test]
fn whole_element_tiles_past_the_cache() {
    // Rows of 8212 bytes: each row starts somewhere else in its line.
    pack_and_unpack::<u32>("f32[1031,2053]{1,0:T(8,128)}");
    pack_and_unpack::<u32>("f32[2048,1024]{1,0:T(8,128)}");
}

#[test]
fn permutations_past_the_cache() {
    // The 4-D permutation's way back runs short bands from copies.
    convert::<u16>(
        "bf16[16,64,32,128]{3,2,1,0}",
        "bf16[16,64,32,128]{1,3,2,0:T(8,128)(2,1)}",
    );
    convert::<u32>("f32[1024,2048]{0,1}", "f32[1024,2048]{1,0:T(8,128)}");
}
