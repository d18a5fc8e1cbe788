// One width per dim.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3]);
}
