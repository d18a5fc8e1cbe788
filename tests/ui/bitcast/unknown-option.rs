// Only `transpose = [..]` follows the specs.
xla_layout::assert_bitcast!("f32[2,3]", "f32[3,2]", permute = [1, 0]);

fn main() {}
