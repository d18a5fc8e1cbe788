// Dim 1 is listed twice.
fn main() {
    let _ = xla_layout::layout!("f32[2,3,4]{1,1,0}");
}
