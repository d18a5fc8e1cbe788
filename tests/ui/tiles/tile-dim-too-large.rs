// A tile dim that does not fit in `usize`.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:T(99999999999999999999999)}");
}
