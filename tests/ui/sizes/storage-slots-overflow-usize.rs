// The slot count does not fit in `usize`.
fn main() {
    let _ = xla_layout::layout!("s8[18446744073709551615,2]");
}
