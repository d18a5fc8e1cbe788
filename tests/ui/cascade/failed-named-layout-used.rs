// Only the bad spec is reported, not the uses of the named type.
xla_layout::layout!(struct Bad = "f32[2,3]{0,0}");

fn main() {
    let _ = Bad::default().offset([0, 1]);
    let _ = core::mem::size_of::<Bad>();
    let _ = Bad.index_of::<[usize; 2]>(3);
    let _ = (
        Bad::LEN,
        Bad::DIMS,
        Bad::SPEC,
        Bad::STORAGE_LEN,
        Bad::STORAGE_BYTES,
        Bad::PADDING_LEN,
    );
}
