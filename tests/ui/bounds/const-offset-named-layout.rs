// The same through a named layout and the trait's constants.
xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");

const LAST: usize = Figure1.offset([Figure1::DIMS[0], 0]);

fn main() {
    let _ = LAST;
}
