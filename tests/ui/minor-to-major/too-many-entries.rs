// Rank 2 but three entries.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{2,1,0}");
}
