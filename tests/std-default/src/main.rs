//! What a `std` crate gets from `xla-layout` with no features named:
//! `Vec` and `Box<[T]>` as tensor storage, and `Tensor::iter_mut`; and a
//! tile's extent, as a kernel over ragged tiles uses it.
#![deny(warnings, missing_docs, unused)]

use xla_layout::{layout, tensor::Tensor};

/// An offset outside the dims, in a constant: a compile error in every
/// profile.
#[cfg(feature = "strict-outside")]
pub const PAST: usize = layout!("f32[3,5]{1,0:T(2,2)}").strict_offset([0, 6]);

fn main() {
    let l = layout!("f32[3,5]{1,0:T(2,2)}");

    let mut t = Tensor::new(l, vec![0.0f32; l.storage_len()]).expect("24 slots");
    for (x, v) in t.iter_mut().zip(0..) {
        *x = f32::from(u8::try_from(v).expect("15 elements"));
    }
    // Figure 1's offsets: [2, 3] is the 14th element, at slot 17.
    assert_eq!(t.storage()[17], 13.0);
    assert_eq!(t[[2, 3]], 13.0);

    // Each tile's elements by its extent, ragged edge tiles included: every
    // element once.
    let mut seen = vec![0u8; 15];
    for (at, _) in t.tiles() {
        let [r0, c0] = at.origin;
        let [rows, cols] = at.extent.expect("no `*`: every tile is a box");
        for r in r0..r0 + rows {
            for c in c0..c0 + cols {
                seen[r * 5 + c] += 1;
            }
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");

    let boxed: Box<[f32]> = t.into_storage().into_boxed_slice();
    let b = Tensor::new(l, boxed).expect("24 slots");
    assert_eq!(b.iter().copied().sum::<f32>(), (0..15u8).map(f32::from).sum());

    let err = Tensor::new(l, vec![0.0f32; 15]).expect_err("15 slots for 24");
    assert_eq!(err.to_string(), Tensor::new(l, [0.0f32; 15]).unwrap_err().to_string());
}
