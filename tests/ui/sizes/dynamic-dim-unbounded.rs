// `?` has no fixed size.
fn main() {
    let _ = xla_layout::layout!("f32[?,3]");
}
