// The only option is `padded_dimensions`.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{0,1}", padding = [3, 5]);
}
