// The option is given twice.
fn main() {
    let _ = xla_layout::layout!(
        "f32[2,3]{0,1}",
        padded_dimensions = [3, 5],
        padded_dimensions = [3, 5]
    );
}
