// Array dims are sizes, never negative.
fn main() {
    let _ = xla_layout::layout!("f32[2,-3]");
}
