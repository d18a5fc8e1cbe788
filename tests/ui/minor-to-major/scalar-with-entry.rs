// A scalar has no dims to list.
fn main() {
    let _ = xla_layout::layout!("f32[]{0}");
}
