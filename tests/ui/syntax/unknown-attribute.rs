// `X` is not an attribute.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{1,0:X(4)}");
}
