// The layout is not closed.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{1,0");
}
