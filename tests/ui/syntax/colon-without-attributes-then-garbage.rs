// A stray character among the attributes.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{1,0:T(2,2)+}");
}
