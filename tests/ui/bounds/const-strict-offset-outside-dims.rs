// `strict_offset`, the form for constants: an index outside the dims fails
// the build in every profile, release included (`offset` checks in debug
// builds only), naming the index and the dims.
const BAD: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").strict_offset([0, 6]);

xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");

// The named form, one past the last row.
const LAST: usize = Figure1.strict_offset([Figure1::DIMS[0], 0]);

fn main() {
    let _ = (BAD, LAST);
}
