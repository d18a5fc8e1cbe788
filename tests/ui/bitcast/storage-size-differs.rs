// The tile pads 4 elements to 8.
xla_layout::assert_bitcast!("f32[4]", "f32[4]{0:T(8)}");

fn main() {}
