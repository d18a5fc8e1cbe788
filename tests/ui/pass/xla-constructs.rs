//! Constructs XLA writes that have a fixed layout: a bounded dynamic dim is
//! laid out at its bound, `E(n)` may be narrower than the type, `T()` tiles
//! no dims. Each must compile, with XLA's sizes.

fn main() {
    let bounded = xla_layout::layout!("f32[<=8,3]");
    assert_eq!(bounded.storage_len(), 24);
    assert!(bounded.runtime().is_dynamic_dim(0));
    assert_eq!(bounded.runtime().to_string(), "f32[<=8,3]{1,0}");

    let int4_in_s8 = xla_layout::layout!("s8[3,7]{1,0:E(4)}");
    assert_eq!(int4_in_s8.storage_bytes(), 11);
    let narrow_float = xla_layout::layout!("f32[5]{0:E(16)}");
    assert_eq!(narrow_float.storage_bytes(), 10);

    let empty_tile = xla_layout::layout!("f32[3,4]{1,0:T()(2,2)}");
    assert_eq!(empty_tile.storage_len(), 16);
    assert_eq!(empty_tile.offset([2, 1]), 9);
    let scalar = xla_layout::layout!("f32[]{:T()}");
    assert_eq!(scalar.storage_len(), 1);

    let six_bits = xla_layout::layout!("f6e2m3fn[4]{0:T(4)}");
    assert_eq!(six_bits.storage_bytes(), 4);
}
