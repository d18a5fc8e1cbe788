//! `assert_bitcast!` of true bitcasts expands to nothing, at item and
//! statement position, under strict lints.
#![deny(warnings, clippy::pedantic)]

xla_layout::assert_bitcast!(
    "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
    "bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}"
);
xla_layout::assert_bitcast!("f32[24,256]{1,0:T(8,128)}", "f32[3,8,256]{2,1,0:T(8,128)}",);

fn main() {
    xla_layout::assert_bitcast!(
        "f32[128,256]{1,0:T(8,128)}",
        "f32[256,128]{0,1:T(8,128)}",
        transpose = [1, 0]
    );
    xla_layout::assert_bitcast!("s4[64,128]{1,0:T(8,128)(8,1)E(4)}", "s4[8,8,128]{2,1,0:T(8,128)(8,1)E(4)}");
}
