// Same storage size and `minor_to_major`, but tiles of 4 rows, not 8.
xla_layout::assert_bitcast!("f32[8,256]{1,0:T(8,128)}", "f32[2,4,256]{2,1,0:T(4,128)}");

fn main() {}
