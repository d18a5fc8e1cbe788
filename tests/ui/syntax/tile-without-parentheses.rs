// `T` needs its dims in parentheses.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{1,0:T}");
}
