// An index of rank 3 into a rank-2 tensor.
use xla_layout::{layout, tensor::Tensor};

layout!(struct Grid = "f32[3,5]{1,0:T(2,2)}");

fn main() {
    let t = Tensor::new(Grid, [0.0f32; 24]).unwrap();
    let _ = t[[1, 2, 3]];
}
