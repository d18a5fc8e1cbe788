// Nothing is close to `quux`, so the message lists typical types.
fn main() {
    let _ = xla_layout::layout!("quux[2,3]");
}
