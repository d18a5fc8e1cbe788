// `token` has no memory layout.
fn main() {
    let _ = xla_layout::layout!("token[]");
}
