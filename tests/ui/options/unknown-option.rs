// An option the macro does not know is named in the error, with the ones it does.
fn main() {
    let _ = xla_layout::layout!("f32[2,3]{0,1}", padding = [3, 5]);
}
