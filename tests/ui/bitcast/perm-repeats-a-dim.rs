// `perm` names dim 0 twice.
xla_layout::assert_bitcast!("f32[2,3]", "f32[3,2]", transpose = [0, 0]);

fn main() {}
