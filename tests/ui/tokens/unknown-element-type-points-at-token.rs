// Written as tokens, the error lands on the type name.
fn main() {
    let _ = xla_layout::layout!(f33[3,5]);
}
