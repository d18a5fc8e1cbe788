// Each option may be written once.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{0,1}", padding_value = zero, padding_value = one);
}
