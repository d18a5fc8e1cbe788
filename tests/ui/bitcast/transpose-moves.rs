// Transposing the dims of a row-major array moves all but the diagonal.
fn main() {
    xla_layout::assert_bitcast!("f32[4,4]", "f32[4,4]", transpose = [1, 0]);
}
