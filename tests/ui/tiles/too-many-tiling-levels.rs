// Nine levels, one more than the limit.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:T(1)(1)(1)(1)(1)(1)(1)(1)(1)}");
}
