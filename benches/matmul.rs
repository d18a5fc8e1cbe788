//! `examples/matmul.rs`, C = A x B on 256 x 256 `f32` matrices in
//! `T(8,128)` layouts: the tile-by-tile kernel written with tensors, the
//! same algorithm with hand-written tile addressing, and the naive
//! row-major triple loop; with the `half` feature also the tensor kernel
//! with a `bf16` B in `(8,128)(2,1)`.
//!
//! `cargo bench --bench matmul [--features half]`; after divan's table it
//! prints the ratios (fastest of several runs each).

use std::hint::black_box;
use std::time::{Duration, Instant};

use xla_layout::{tensor::Tensor, StaticLayout};

#[allow(dead_code, reason = "the example's `main` is not used here")]
#[path = "../examples/matmul.rs"]
mod matmul;

use matmul::{ALayout, BLayout, CLayout};

struct Inputs {
    a_rm: Vec<f32>,
    b_rm: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
}

fn inputs() -> Inputs {
    let (a_rm, b_rm) = matmul::inputs();
    let mut a = vec![0.0; ALayout::STORAGE_LEN];
    let mut b = vec![0.0; BLayout::STORAGE_LEN];
    ALayout
        .pack(&a_rm, &mut a, xla_layout::Options::default())
        .unwrap();
    BLayout
        .pack(&b_rm, &mut b, xla_layout::Options::default())
        .unwrap();
    Inputs { a_rm, b_rm, a, b }
}

fn tensors(x: &Inputs, c: &mut [f32]) {
    let a = Tensor::new(ALayout, &x.a[..]).unwrap();
    let b = Tensor::new(BLayout, &x.b[..]).unwrap();
    let mut c = Tensor::new(CLayout, c).unwrap();
    matmul::matmul(&a, &b, &mut c);
}

fn main() {
    divan::main();
    ratios();
}

#[divan::bench(sample_count = 20)]
fn tensor_tiles(bencher: divan::Bencher) {
    let x = inputs();
    let mut c = vec![0.0; CLayout::STORAGE_LEN];
    bencher.bench_local(|| tensors(black_box(&x), black_box(&mut c)));
}

#[divan::bench(sample_count = 20)]
fn hand_addressed(bencher: divan::Bencher) {
    let x = inputs();
    let mut c = vec![0.0; CLayout::STORAGE_LEN];
    bencher.bench_local(|| {
        matmul::matmul_by_hand(black_box(&x.a), black_box(&x.b), black_box(&mut c));
    });
}

#[divan::bench(sample_count = 20)]
fn naive_row_major(bencher: divan::Bencher) {
    let x = inputs();
    let mut c = vec![0.0; matmul::M * matmul::N];
    bencher.bench_local(|| {
        matmul::matmul_naive(black_box(&x.a_rm), black_box(&x.b_rm), black_box(&mut c));
    });
}

#[cfg(feature = "half")]
fn bf16_input(x: &Inputs) -> Vec<xla_layout::relayout::half::bf16> {
    use xla_layout::relayout::half::bf16;
    let rm: Vec<bf16> = x.b_rm.iter().map(|&v| bf16::from_f32(v)).collect();
    let mut b = vec![bf16::ZERO; matmul::bf16::B16Layout::STORAGE_LEN];
    matmul::bf16::B16Layout
        .pack(&rm, &mut b, xla_layout::Options::default())
        .unwrap();
    b
}

#[cfg(feature = "half")]
fn tensors_bf16(x: &Inputs, b16: &[xla_layout::relayout::half::bf16], c: &mut [f32]) {
    let a = Tensor::new(ALayout, &x.a[..]).unwrap();
    let b = Tensor::new(matmul::bf16::B16Layout, b16).unwrap();
    let mut c = Tensor::new(CLayout, c).unwrap();
    matmul::bf16::matmul(&a, &b, &mut c);
}

#[cfg(feature = "half")]
#[divan::bench(sample_count = 20)]
fn tensor_tiles_bf16_b(bencher: divan::Bencher) {
    let x = inputs();
    let b16 = bf16_input(&x);
    let mut c = vec![0.0; CLayout::STORAGE_LEN];
    bencher.bench_local(|| tensors_bf16(black_box(&x), black_box(&b16), black_box(&mut c)));
}

fn fastest(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ratios() {
    let x = inputs();
    let runs = 30;
    let mut c = vec![0.0; CLayout::STORAGE_LEN];
    let mut c2 = vec![0.0; CLayout::STORAGE_LEN];
    let mut naive = vec![0.0; matmul::M * matmul::N];
    tensors(&x, &mut c);
    matmul::matmul_by_hand(&x.a, &x.b, &mut c2);
    assert_eq!(c, c2, "the two tiled kernels agree");
    let tensor = fastest(runs, || tensors(black_box(&x), black_box(&mut c)));
    let hand = fastest(runs, || {
        matmul::matmul_by_hand(black_box(&x.a), black_box(&x.b), black_box(&mut c2));
    });
    let loops = fastest(runs, || {
        matmul::matmul_naive(
            black_box(&x.a_rm),
            black_box(&x.b_rm),
            black_box(&mut naive),
        );
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "\nmatmul 256x256x256 (fastest of {runs}): tensors {:.3} ms, by hand {:.3} ms \
         ({:.3}x, goal 1.05x), naive row-major {:.3} ms ({:.2}x the tensor kernel)",
        ms(tensor),
        ms(hand),
        tensor.as_secs_f64() / hand.as_secs_f64(),
        ms(loops),
        loops.as_secs_f64() / tensor.as_secs_f64(),
    );
    #[cfg(feature = "half")]
    {
        let b16 = bf16_input(&x);
        let t16 = fastest(runs, || {
            tensors_bf16(black_box(&x), black_box(&b16), black_box(&mut c));
        });
        println!("  with a bf16 B in (8,128)(2,1): {:.3} ms", ms(t16));
    }
}
