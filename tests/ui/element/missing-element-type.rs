// The spec starts with the dims.
fn main() {
    let _ = xla_layout::layout!("[2,3]{1,0}");
}
