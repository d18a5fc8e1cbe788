// XLA prints `T` before `E`.
fn main() {
    let _ = xla_layout::layout!("s4[8]{0:E(4)T(8)}");
}
