// Only the bad spec is reported, not the uses of the named type.
xla_layout::layout!(struct Bad = "f32[2,3]{0,0}");

fn main() {
    let _ = Bad::default().offset([0, 1]);
    let _ = core::mem::size_of::<Bad>();
}
