// A mistake in a spec is `layout!`'s message on that spec.
xla_layout::assert_bitcast!("f32[2,3]{1,0:T(0)}", "f32[6]");

fn main() {}
