// Negative tile dims are not a way to combine; `*` is.
fn main() {
    let _ = xla_layout::layout!("f32[8,8]{1,0:T(-1,2)}");
}
