// `P(...)` replaces the layout.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:P(s32[8]{0})}");
}
