// Several split groups are one construct, reported once.
fn main() {
    let _ = xla_layout::layout!("f32[4]{0:SC(0:10)(1:4,5)}");
}
