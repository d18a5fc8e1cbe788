// An `f32` cannot be stored in 16 bits.
fn main() {
    let _ = xla_layout::layout!("f32[5]{0:E(16)}");
}
