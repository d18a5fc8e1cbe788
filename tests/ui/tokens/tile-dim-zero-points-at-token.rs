// Written as tokens, the error lands on the `0` itself.
fn main() {
    let _ = xla_layout::layout!(f32[3,5]{1,0:T(2,0)});
}
