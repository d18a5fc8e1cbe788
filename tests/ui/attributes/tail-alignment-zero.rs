// `L(0)` aligns to nothing.
fn main() {
    let _ = xla_layout::layout!("f32[5]{0:L(0)}");
}
