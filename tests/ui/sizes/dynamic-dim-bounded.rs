// `<=8` has no fixed size either.
fn main() {
    let _ = xla_layout::layout!("f32[<=8,3]");
}
