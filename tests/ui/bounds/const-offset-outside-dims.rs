// An index outside the dims in `const` evaluation is a compile error that
// names the index and the dims (today's answer would be 12, the offset of
// `[2, 0]`).
const BAD: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").offset([0, 6]);

fn main() {
    let _ = BAD;
}
