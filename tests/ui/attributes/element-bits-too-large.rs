// `E(n)` above the widest element size.
fn main() {
    let _ = xla_layout::layout!("f32[5]{0:E(8192)}");
}
