// `f33` is not an XLA type; the message suggests `f32`.
fn main() {
    let _ = xla_layout::layout!("f33[2,3]");
}
