// Nothing to expand.
fn main() {
    let _ = xla_layout::layout!();
}
