// 17 dims, one more than the rank limit.
fn main() {
    let _ = xla_layout::layout!("f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]");
}
