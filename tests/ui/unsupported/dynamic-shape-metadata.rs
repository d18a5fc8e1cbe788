// `M(...)` prefixes the buffer with run-time sizes.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:M(1)}");
}
