// A repeated `minor_to_major` entry and a zero tile dim, both reported.
fn main() {
    let _ = xla_layout::layout!("f32[3,5]{1,1:T(0,2)}");
}
