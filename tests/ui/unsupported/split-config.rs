// `SC(...)` spreads the array over several allocations.
fn main() {
    let _ = xla_layout::layout!("f32[8]{0:SC(0:4)}");
}
