// Type errors name an expression-form layout after its spec, not after a
// hidden type that looks the same for every layout.
fn main() {
    let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    let _: u32 = l;

    let mut row_major = xla_layout::layout!("f32[10,20]");
    row_major = xla_layout::layout!("f32[10,20]{0,1}");
    let _ = row_major;
}
