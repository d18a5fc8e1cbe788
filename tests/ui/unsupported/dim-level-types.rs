// `D(...)` belongs to sparse arrays.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:D(C)}");
}
