// `padding_value` takes one of XLA's padding kinds.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5], padding_value = nan);
}
