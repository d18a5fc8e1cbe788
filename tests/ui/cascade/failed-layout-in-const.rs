// Only the bad spec is reported when a failed layout feeds a constant.
const OFFSET: usize = xla_layout::layout!("f32[2]{0:L(0)}").offset([1]);

fn main() {
    let _ = OFFSET;
}
