// Dim 2 does not exist in a rank-2 shape.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{2,0}");
}
