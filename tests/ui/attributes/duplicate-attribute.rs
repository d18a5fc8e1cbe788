// `L` written twice.
fn main() {
    let _ = xla_layout::layout!("f32[5]{0:L(2)L(4)}");
}
