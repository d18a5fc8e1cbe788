// An empty spec.
fn main() {
    let _ = xla_layout::layout!("");
}
