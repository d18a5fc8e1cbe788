// Written as tokens, a bounded dynamic dim is reported on the tokens that spell it.
fn main() {
    let _ = xla_layout::layout!(f32[<=8,3]);
}
