// Rank 3 but two entries.
fn main() {
    let _ = xla_layout::layout!("f32[2,3,4]{1,0}");
}
