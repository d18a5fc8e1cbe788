// A static buffer of 15 slots for a layout of 24: a type error at this
// line, naming both lengths.
use xla_layout::{layout, tensor::Tensor};

layout!(struct Grid = "f32[3,5]{1,0:T(2,2)}");

static BUF: Tensor<Grid, [f32; 15]> = Tensor::from_buffer(Grid, [0.0; 15]);

fn main() {
    // The same on the stack, the type left to inference.
    let local = Tensor::from_buffer(Grid, [0.0f32; 15]);
    let _ = (BUF[[0, 0]], local[[0, 0]]);
}
