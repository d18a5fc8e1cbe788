// 2^61 slots fit, but 2^64 bytes do not.
fn main() {
    let _ = xla_layout::layout!("f64[2305843009213693952]");
}
