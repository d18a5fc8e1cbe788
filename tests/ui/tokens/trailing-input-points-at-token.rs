// Written as tokens, text after the layout is reported on its first token.
fn main() {
    let _ = xla_layout::layout!(f32[2,3]{1,0} extra);
}
