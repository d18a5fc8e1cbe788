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

use std::time::{Duration, Instant};

use std::hint::black_box;

fn main() {
    ratios::print();
}

/// Every pair of `tests/asm/src/pairs.rs` as two inlinable functions.
#[allow(dead_code, clippy::unreadable_literal)]
mod pairs {
    macro_rules! pairs {
        ($($spec:literal => $generated:ident, $hand:ident |$($arg:ident),+| $formula:expr;)*) => {
            $(
                #[inline]
                pub fn $generated($($arg: usize),+) -> usize {
                    xla_layout::layout!($spec).offset([$($arg),+])
                }

                #[inline]
                pub fn $hand($($arg: usize),+) -> usize {
                    $formula
                }
            )*
        };
    }

    include!("../tests/asm/src/pairs.rs");
}

/// The three kernels over a 2-D layout of `rows x cols`, addressed by `offset`.
mod kernels2 {
    use super::black_box;

    /// The sum of `offset(i, j)` over every index.
    #[inline]
    pub fn sum(rows: usize, cols: usize, offset: impl Fn(usize, usize) -> usize) -> usize {
        let (rows, cols) = black_box((rows, cols));
        let mut sum = 0usize;
        for i in 0..rows {
            for j in 0..cols {
                sum = sum.wrapping_add(offset(i, j));
            }
        }
        sum
    }

    /// The sum of `data[offset(i, j)]` over every index, in logical order.
    #[inline]
    pub fn gather(
        data: &[u32],
        rows: usize,
        cols: usize,
        offset: impl Fn(usize, usize) -> usize,
    ) -> u32 {
        let (rows, cols) = black_box((rows, cols));
        let mut sum = 0u32;
        for i in 0..rows {
            for j in 0..cols {
                sum = sum.wrapping_add(data[offset(i, j)]);
            }
        }
        sum
    }

    /// `y[i] = sum over j of a[offset(i, j)] * x[j]`.
    #[inline]
    pub fn matvec(a: &[f32], x: &[f32], y: &mut [f32], offset: impl Fn(usize, usize) -> usize) {
        let cols = black_box(x.len());
        for (i, yi) in y.iter_mut().enumerate() {
            let mut acc = 0.0;
            for (j, xj) in x.iter().enumerate().take(cols) {
                acc += a[offset(i, j)] * xj;
            }
            *yi = acc;
        }
    }
}

/// The three kernels over the combining example's five dims, rows `(a, b, d)`
/// and columns `(e, f)` for `y = A x`.
mod kernels5 {
    use super::black_box;

    pub const DIMS: [usize; 5] = [2, 7, 8, 11, 10];

    type Offset5 = fn(usize, usize, usize, usize, usize) -> usize;

    /// Calls `f` on every index, in logical order.
    #[inline]
    fn each(mut f: impl FnMut(usize, usize, usize, usize, usize)) {
        let [n0, n1, n2, n3, n4] = black_box(DIMS);
        for a in 0..n0 {
            for b in 0..n1 {
                for d in 0..n2 {
                    for e in 0..n3 {
                        for g in 0..n4 {
                            f(a, b, d, e, g);
                        }
                    }
                }
            }
        }
    }

    #[inline]
    pub fn sum(offset: Offset5) -> usize {
        let mut sum = 0usize;
        each(|a, b, d, e, g| sum = sum.wrapping_add(offset(a, b, d, e, g)));
        sum
    }

    #[inline]
    pub fn gather(data: &[u32], offset: Offset5) -> u32 {
        let mut sum = 0u32;
        each(|a, b, d, e, g| sum = sum.wrapping_add(data[offset(a, b, d, e, g)]));
        sum
    }

    #[inline]
    pub fn matvec(a: &[f32], x: &[f32], y: &mut [f32], offset: Offset5) {
        let [n0, n1, n2, n3, n4] = black_box(DIMS);
        let mut row = 0;
        for i0 in 0..n0 {
            for i1 in 0..n1 {
                for i2 in 0..n2 {
                    let mut acc = 0.0;
                    for i3 in 0..n3 {
                        for i4 in 0..n4 {
                            acc += a[offset(i0, i1, i2, i3, i4)] * x[i3 * n4 + i4];
                        }
                    }
                    y[row] = acc;
                    row += 1;
                }
            }
        }
    }
}

/// Small integers, so every float sum is exact and both ways agree bit for bit.
fn small(v: usize) -> u8 {
    u8::try_from(v % 16).expect("below 16")
}

/// Storage of `storage_len` slots holding small numbers, and a vector.
fn inputs(storage_len: usize, cols: usize) -> (Vec<u32>, Vec<f32>, Vec<f32>) {
    let ints: Vec<u32> = (0..storage_len).map(|v| u32::from(small(v * 7))).collect();
    let floats = ints.iter().map(|&v| f32::from(small(v as usize))).collect();
    let x = (0..cols).map(|j| f32::from(small(j % 5))).collect();
    (ints, floats, x)
}

/// One module of benchmarks per 2-D layout: each kernel, generated and by hand.
macro_rules! layout_2d {
    ($name:ident, $spec:literal, $rows:expr, $cols:expr, $generated:path, $hand:path) => {
        mod $name {
            use super::{inputs, kernels2, pairs};

            pub const SPEC: &str = $spec;
            const ROWS: usize = $rows;
            const COLS: usize = $cols;

            pub fn storage_len() -> usize {
                xla_layout::layout!($spec).storage_len()
            }

            /// Both ways compute the same results, or comparing them means nothing.
            pub fn check() {
                let (ints, floats, x) = inputs(storage_len(), COLS);
                assert_eq!(
                    kernels2::sum(ROWS, COLS, $generated),
                    kernels2::sum(ROWS, COLS, $hand)
                );
                assert_eq!(
                    kernels2::gather(&ints, ROWS, COLS, $generated),
                    kernels2::gather(&ints, ROWS, COLS, $hand)
                );
                let (mut y, mut z) = (vec![0.0; ROWS], vec![0.0; ROWS]);
                kernels2::matvec(&floats, &x, &mut y, $generated);
                kernels2::matvec(&floats, &x, &mut z, $hand);
                assert_eq!(y, z, "{}", SPEC);
            }
        }
    };
}

layout_2d!(
    bf16_tpu,
    "bf16[1024,1024]{1,0:T(8,128)(2,1)}",
    1024,
    1024,
    pairs::generated_bf16_tpu,
    pairs::hand_bf16_tpu
);
layout_2d!(
    f32_column_major_tiled,
    "f32[1000,1000]{0,1:T(8,128)}",
    1000,
    1000,
    pairs::generated_f32_column_major,
    pairs::hand_f32_column_major
);
layout_2d!(
    f32_column_major_untiled,
    "f32[1000,1000]{0,1}",
    1000,
    1000,
    pairs::generated_f32_untiled_column_major,
    pairs::hand_f32_untiled_column_major
);

/// The combining example, `f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}`.
mod combined {
    use super::{inputs, kernels5, pairs};

    pub const SPEC: &str = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}";
    const ROWS: usize = 2 * 7 * 8;
    const COLS: usize = 11 * 10;

    pub fn storage_len() -> usize {
        xla_layout::layout!("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").storage_len()
    }

    pub fn check() {
        let (ints, floats, x) = inputs(storage_len(), COLS);
        assert_eq!(
            kernels5::sum(pairs::generated_combined),
            kernels5::sum(pairs::hand_combined)
        );
        assert_eq!(
            kernels5::gather(&ints, pairs::generated_combined),
            kernels5::gather(&ints, pairs::hand_combined)
        );
        let (mut y, mut z) = (vec![0.0; ROWS], vec![0.0; ROWS]);
        kernels5::matvec(&floats, &x, &mut y, pairs::generated_combined);
        kernels5::matvec(&floats, &x, &mut z, pairs::hand_combined);
        assert_eq!(y, z);
    }
}

/// The summary table: each kernel, generated over hand-written, fastest of
/// many interleaved runs, so both sides of a ratio see the same machine.
mod ratios {
    use super::{black_box, combined, kernels2, kernels5, pairs, Duration, Instant};

    /// The fastest of `rounds` runs of `a` and of `b`, run alternately, each
    /// going first in half the rounds so neither inherits the other's cache.
    fn fastest_pair(
        rounds: usize,
        mut a: impl FnMut(),
        mut b: impl FnMut(),
    ) -> (Duration, Duration) {
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

    fn row(layout: &str, kernel: &str, (generated, hand): (Duration, Duration)) {
        println!(
            "| `{layout}` | {kernel} | {:.1} | {:.1} | {:.3} |",
            generated.as_secs_f64() * 1e6,
            hand.as_secs_f64() * 1e6,
            generated.as_secs_f64() / hand.as_secs_f64()
        );
    }

    macro_rules! two_d {
        ($module:ident, $rows:expr, $cols:expr, $generated:path, $hand:path) => {{
            super::$module::check();
            let spec = super::$module::SPEC;
            let (ints, floats, x) = super::inputs(super::$module::storage_len(), $cols);
            let rounds = 300;
            row(
                spec,
                "sum",
                fastest_pair(
                    rounds,
                    || {
                        black_box(kernels2::sum($rows, $cols, $generated));
                    },
                    || {
                        black_box(kernels2::sum($rows, $cols, $hand));
                    },
                ),
            );
            row(
                spec,
                "gather",
                fastest_pair(
                    rounds,
                    || {
                        black_box(kernels2::gather(black_box(&ints), $rows, $cols, $generated));
                    },
                    || {
                        black_box(kernels2::gather(black_box(&ints), $rows, $cols, $hand));
                    },
                ),
            );
            let mut y = vec![0.0; $rows];
            let mut z = vec![0.0; $rows];
            row(
                spec,
                "y = A x",
                fastest_pair(
                    rounds,
                    || {
                        kernels2::matvec(black_box(&floats), black_box(&x), &mut y, $generated);
                        black_box(&y);
                    },
                    || {
                        kernels2::matvec(black_box(&floats), black_box(&x), &mut z, $hand);
                        black_box(&z);
                    },
                ),
            );
        }};
    }

    pub fn print() {
        println!("| layout | kernel | generated µs | hand-written µs | ratio |");
        println!("|---|---|---:|---:|---:|");
        two_d!(
            bf16_tpu,
            1024,
            1024,
            pairs::generated_bf16_tpu,
            pairs::hand_bf16_tpu
        );
        two_d!(
            f32_column_major_tiled,
            1000,
            1000,
            pairs::generated_f32_column_major,
            pairs::hand_f32_column_major
        );
        two_d!(
            f32_column_major_untiled,
            1000,
            1000,
            pairs::generated_f32_untiled_column_major,
            pairs::hand_f32_untiled_column_major
        );
        combined::check();
        let (ints, floats, x) = super::inputs(combined::storage_len(), 110);
        let rounds = 3000;
        let spec = combined::SPEC;
        row(
            spec,
            "sum",
            fastest_pair(
                rounds,
                || {
                    black_box(kernels5::sum(pairs::generated_combined));
                },
                || {
                    black_box(kernels5::sum(pairs::hand_combined));
                },
            ),
        );
        row(
            spec,
            "gather",
            fastest_pair(
                rounds,
                || {
                    black_box(kernels5::gather(
                        black_box(&ints),
                        pairs::generated_combined,
                    ));
                },
                || {
                    black_box(kernels5::gather(black_box(&ints), pairs::hand_combined));
                },
            ),
        );
        let (mut y, mut z) = (vec![0.0; 112], vec![0.0; 112]);
        row(
            spec,
            "y = A x",
            fastest_pair(
                rounds,
                || {
                    kernels5::matvec(
                        black_box(&floats),
                        black_box(&x),
                        &mut y,
                        pairs::generated_combined,
                    );
                    black_box(&y);
                },
                || {
                    kernels5::matvec(
                        black_box(&floats),
                        black_box(&x),
                        &mut z,
                        pairs::hand_combined,
                    );
                    black_box(&z);
                },
            ),
        );
    }
}
