// `tile` given twice is an error, not a silent choice of one name.
xla_layout::layout!(struct W = "f32[4,4]{1,0:T(2,2)}", tile = A, tile = B);

fn main() {}
