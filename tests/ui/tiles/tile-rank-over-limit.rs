// A tile of 17 dims, one more than the tile rank limit.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:T(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}");
}
