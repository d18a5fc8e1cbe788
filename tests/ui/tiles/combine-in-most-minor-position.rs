// `*` in the last position has nothing to merge into.
fn main() {
    let _ = xla_layout::layout!("f32[8,8]{1,0:T(2,*)}");
}
