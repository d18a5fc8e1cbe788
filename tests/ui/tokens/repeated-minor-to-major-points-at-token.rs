// Written as tokens, the error lands on the second `1`.
fn main() {
    let _ = xla_layout::layout!(f32[2,3,4]{1,1,0});
}
