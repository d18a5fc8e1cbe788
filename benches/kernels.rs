//! Generated `offset` against the hand-written formula in the three shapes
//! kernels take: a gather through the offset, a sum of offsets in nested
//! loops, and `y = A x`; for the layouts whose assembly `tests/asm_check.rs`
//! compares (TPU bf16, column-major `T(8,128)`, the combining example) and an
//! untiled column-major matrix.
//!
//! `cargo bench --bench kernels` prints a table: for each layout and kernel,
//! the fastest of hundreds of runs of the generated and of the hand-written
//! addressing, run alternately so both see the same machine, and their
//! ratio. Noise on a shared machine only slows a run, so the fastest is the
//! steadiest figure. The formulas are those of `tests/asm/src/pairs.rs`,
//! checked there on every index; each kernel is first checked to give the
//! same result both ways.

use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "common/pairs.rs"]
mod pairs;

/// The three kernels over one way of addressing a layout, seen as a matrix
/// of `rows()` rows (the outer dims) and `x.len()` columns (the inner ones).
trait Kernels {
    /// The sum of the offsets of every index, in logical order.
    fn sum(&self) -> usize;
    /// The sum of `data[offset]` over every index, in logical order.
    fn gather(&self, data: &[u32]) -> u32;
    /// `y[row] = sum over columns of a[offset] * x[column]`.
    fn matvec(&self, a: &[f32], x: &[f32], y: &mut [f32]);
}

/// A 2-D layout of `dims`, addressed by `offset`.
struct TwoD<F>([usize; 2], F);

impl<F: Fn(usize, usize) -> usize> Kernels for TwoD<F> {
    fn sum(&self) -> usize {
        let [rows, cols] = black_box(self.0);
        let mut sum = 0usize;
        for i in 0..rows {
            for j in 0..cols {
                sum = sum.wrapping_add((self.1)(i, j));
            }
        }
        sum
    }

    fn gather(&self, data: &[u32]) -> u32 {
        let [rows, cols] = black_box(self.0);
        let mut sum = 0u32;
        for i in 0..rows {
            for j in 0..cols {
                sum = sum.wrapping_add(data[(self.1)(i, j)]);
            }
        }
        sum
    }

    fn matvec(&self, a: &[f32], x: &[f32], y: &mut [f32]) {
        let cols = black_box(x.len());
        for (i, yi) in y.iter_mut().enumerate() {
            let mut acc = 0.0;
            for (j, xj) in x.iter().enumerate().take(cols) {
                acc += a[(self.1)(i, j)] * xj;
            }
            *yi = acc;
        }
    }
}

/// A 5-D layout of `dims`, addressed by `offset`; rows are the first three
/// dims, columns the last two.
struct FiveD<F>([usize; 5], F);

impl<F: Fn(usize, usize, usize, usize, usize) -> usize> FiveD<F> {
    /// Calls `f` on every index, in logical order.
    #[inline]
    fn each(&self, mut f: impl FnMut(usize, usize, usize, usize, usize)) {
        let [n0, n1, n2, n3, n4] = black_box(self.0);
        for a in 0..n0 {
            for b in 0..n1 {
                for c in 0..n2 {
                    for d in 0..n3 {
                        for e in 0..n4 {
                            f(a, b, c, d, e);
                        }
                    }
                }
            }
        }
    }
}

impl<F: Fn(usize, usize, usize, usize, usize) -> usize> Kernels for FiveD<F> {
    fn sum(&self) -> usize {
        let mut sum = 0usize;
        self.each(|a, b, c, d, e| sum = sum.wrapping_add((self.1)(a, b, c, d, e)));
        sum
    }

    fn gather(&self, data: &[u32]) -> u32 {
        let mut sum = 0u32;
        self.each(|a, b, c, d, e| sum = sum.wrapping_add(data[(self.1)(a, b, c, d, e)]));
        sum
    }

    fn matvec(&self, a: &[f32], x: &[f32], y: &mut [f32]) {
        let [n0, n1, n2, n3, n4] = black_box(self.0);
        let mut row = 0;
        for i0 in 0..n0 {
            for i1 in 0..n1 {
                for i2 in 0..n2 {
                    let mut acc = 0.0;
                    for i3 in 0..n3 {
                        for i4 in 0..n4 {
                            acc += a[(self.1)(i0, i1, i2, i3, i4)] * x[i3 * n4 + i4];
                        }
                    }
                    y[row] = acc;
                    row += 1;
                }
            }
        }
    }
}

/// The fastest of `rounds` runs of `a` and of `b`, run alternately, each
/// going first in half the rounds so neither inherits the other's cache.
fn fastest_pair(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (Duration, Duration) {
    let time = |f: &mut dyn FnMut(), best: &mut Duration| {
        let t = Instant::now();
        f();
        *best = (*best).min(t.elapsed());
    };
    let (mut best_a, mut best_b) = (Duration::MAX, Duration::MAX);
    for round in 0..rounds {
        if round % 2 == 0 {
            time(&mut a, &mut best_a);
            time(&mut b, &mut best_b);
        } else {
            time(&mut b, &mut best_b);
            time(&mut a, &mut best_a);
        }
    }
    (best_a, best_b)
}

/// Checks that both ways agree on every kernel, then prints one table row
/// per kernel. `storage` is the layout's slot count, `rows` and `cols` its
/// shape as a matrix.
fn compare(
    spec: &str,
    [storage, rows, cols]: [usize; 3],
    rounds: usize,
    generated: &dyn Kernels,
    hand: &dyn Kernels,
) {
    // Small integers: every float sum is exact, so both ways agree bit for bit.
    let small = |v: usize| u8::try_from(v % 16).expect("below 16");
    let ints: Vec<u32> = (0..storage).map(|v| u32::from(small(v * 7))).collect();
    let floats: Vec<f32> = (0..storage).map(|v| f32::from(small(v * 7))).collect();
    let x: Vec<f32> = (0..cols).map(|j| f32::from(small(j % 5))).collect();
    let (mut y, mut z) = (vec![0.0; rows], vec![0.0; rows]);
    assert_eq!(generated.sum(), hand.sum(), "{spec}");
    assert_eq!(generated.gather(&ints), hand.gather(&ints), "{spec}");
    generated.matvec(&floats, &x, &mut y);
    hand.matvec(&floats, &x, &mut z);
    assert_eq!(y, z, "{spec}");

    let row = |kernel: &str, (generated, hand): (Duration, Duration)| {
        println!(
            "| `{spec}` | {kernel} | {:.1} | {:.1} | {:.3} |",
            generated.as_secs_f64() * 1e6,
            hand.as_secs_f64() * 1e6,
            generated.as_secs_f64() / hand.as_secs_f64()
        );
    };
    row(
        "sum",
        fastest_pair(
            rounds,
            || {
                black_box(generated.sum());
            },
            || {
                black_box(hand.sum());
            },
        ),
    );
    row(
        "gather",
        fastest_pair(
            rounds,
            || {
                black_box(generated.gather(black_box(&ints)));
            },
            || {
                black_box(hand.gather(black_box(&ints)));
            },
        ),
    );
    row(
        "y = A x",
        fastest_pair(
            rounds,
            || generated.matvec(black_box(&floats), black_box(&x), black_box(&mut y)),
            || hand.matvec(black_box(&floats), black_box(&x), black_box(&mut z)),
        ),
    );
}

fn main() {
    println!("| layout | kernel | generated µs | hand-written µs | ratio |");
    println!("|---|---|---:|---:|---:|");
    let storage = |l: xla_layout::Layout| l.storage_len();
    let parse = |spec: &str| xla_layout::parse(spec).expect("a valid spec");

    let spec = "bf16[1024,1024]{1,0:T(8,128)(2,1)}";
    compare(
        spec,
        [storage(parse(spec)), 1024, 1024],
        300,
        &TwoD([1024, 1024], pairs::generated_bf16_tpu),
        &TwoD([1024, 1024], pairs::hand_bf16_tpu),
    );
    let spec = "f32[1000,1000]{0,1:T(8,128)}";
    compare(
        spec,
        [storage(parse(spec)), 1000, 1000],
        300,
        &TwoD([1000, 1000], pairs::generated_f32_column_major),
        &TwoD([1000, 1000], pairs::hand_f32_column_major),
    );
    let spec = "f32[1000,1000]{0,1}";
    compare(
        spec,
        [storage(parse(spec)), 1000, 1000],
        300,
        &TwoD([1000, 1000], pairs::generated_f32_untiled_column_major),
        &TwoD([1000, 1000], pairs::hand_f32_untiled_column_major),
    );
    // A small array: more rounds for a steady fastest run.
    let spec = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}";
    let dims = [2, 7, 8, 11, 10];
    compare(
        spec,
        [storage(parse(spec)), 2 * 7 * 8, 11 * 10],
        3000,
        &FiveD(dims, pairs::generated_combined),
        &FiveD(dims, pairs::hand_combined),
    );
}
