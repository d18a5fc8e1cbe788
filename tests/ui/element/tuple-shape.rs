// A tuple shape has no single layout.
fn main() {
    let _ = xla_layout::layout!("(f32[2]{0}, s8[4]{0})");
}
