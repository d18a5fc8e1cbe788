// Written as tokens, an unbounded dynamic dim is reported on the `?` token.
fn main() {
    let _ = xla_layout::layout!(f32[?, 3]);
}
