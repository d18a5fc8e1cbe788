// An entry that does not fit in `usize`.
fn main() {
    let _ = xla_layout::layout!("f32[2]{99999999999999999999999}");
}
