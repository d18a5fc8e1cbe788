//! Run-time cost of `layout!`: the generated `offset` against the
//! hand-written formula and the run-time `parse` path, and a kernel written
//! both ways.
//!
//! `cargo bench --bench offset`; on a busy machine compare the `fastest`
//! columns, which noise can only raise. Paths compared with each other take
//! the same number of samples (500 for the sums of offsets, 100 for
//! `index_of`): the fastest of more samples is the more likely to have met
//! a quiet moment of a shared host. The hand-written formulas are those of
//! `tests/asm/src/pairs.rs`, whose assembly `tests/asm_check.rs` compares and
//! whose values it checks on every index.

use divan::counter::ItemsCount;
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

#[path = "common/pairs.rs"]
mod pairs;

/// Sums `offset(i, j)` over `[0, n0) x [0, n1)`; the bounds come through
/// `black_box` so the compiler cannot fold the sum into a constant.
#[inline]
fn sum2(n: [usize; 2], offset: impl Fn(usize, usize) -> usize) -> usize {
    let [n0, n1] = black_box(n);
    let mut sum = 0usize;
    for i in 0..n0 {
        for j in 0..n1 {
            sum = sum.wrapping_add(offset(i, j));
        }
    }
    sum
}

/// The wrapping sum of `offsets`, one `next` call at a time (as a `for`
/// loop takes them), not through `fold`.
#[inline]
fn sum_by_next(offsets: impl Iterator<Item = usize>) -> usize {
    let mut sum = 0usize;
    for o in offsets {
        sum = sum.wrapping_add(o);
    }
    sum
}

/// [`sum2`] for five dims.
#[inline]
fn sum5(n: [usize; 5], offset: impl Fn(usize, usize, usize, usize, usize) -> usize) -> usize {
    let [n0, n1, n2, n3, n4] = black_box(n);
    let mut sum = 0usize;
    for i0 in 0..n0 {
        for i1 in 0..n1 {
            for i2 in 0..n2 {
                for i3 in 0..n3 {
                    for i4 in 0..n4 {
                        sum = sum.wrapping_add(offset(i0, i1, i2, i3, i4));
                    }
                }
            }
        }
    }
    sum
}

/// The bench `run_time_parse` of a module with a 2-D `SPEC` and its `DIMS`:
/// the sum through `Layout::offset` on the parsed layout. A macro, so that
/// the loop is spelled out in each module, as measured.
macro_rules! run_time_parse2 {
    () => {
        #[divan::bench(sample_count = 500)]
        fn run_time_parse(b: Bencher) {
            let l = xla_layout::parse(black_box(SPEC)).unwrap();
            b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                .bench(|| sum2(DIMS, |i, j| l.offset(&[i, j])));
        }
    };
}

/// A module `$name` of benches summing `offset` over every index of the
/// 2-D layout `$spec`: generated, hand-written (`pairs::$generated`,
/// `pairs::$hand`), and the run-time paths.
macro_rules! sum2_benches {
    ($name:ident, $spec:literal, $dims:expr, $generated:ident, $hand:ident) => {
        #[doc = concat!("The sum of `offset` over every index of `", $spec, "`.")]
        mod $name {
            use super::{black_box, pairs, sum2, Bencher, ItemsCount};

            const SPEC: &str = $spec;
            const DIMS: [usize; 2] = $dims;

            #[divan::bench(sample_count = 500)]
            fn generated(b: Bencher) {
                b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                    .bench(|| sum2(DIMS, pairs::$generated));
            }

            #[divan::bench(sample_count = 500)]
            fn hand_written(b: Bencher) {
                b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                    .bench(|| sum2(DIMS, pairs::$hand));
            }

            run_time_parse2!();

            /// The same sum through a [`Ranked`](xla_layout::Ranked) view, moved
            /// into the closure (held by reference, it ran 8x slower).
            #[divan::bench(sample_count = 500)]
            fn run_time_ranked(b: Bencher) {
                let l = xla_layout::parse(black_box(SPEC)).unwrap();
                let r = l.ranked::<2>().unwrap();
                b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                    .bench(|| sum2(DIMS, move |i, j| r.offset([i, j])));
            }

            /// The same sum through [`Layout::offsets`](xla_layout::Layout::offsets),
            /// which walks the storage digit by digit instead of evaluating each
            /// index on its own (the sum wraps, so its order does not matter).
            #[divan::bench(sample_count = 500)]
            fn run_time_offsets(b: Bencher) {
                let l = xla_layout::parse(black_box(SPEC)).unwrap();
                b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                    .bench(|| l.offsets().fold(0usize, usize::wrapping_add));
            }

            /// The same walk through `next`, as a `for` loop drives it.
            #[divan::bench(sample_count = 500)]
            fn run_time_offsets_next(b: Bencher) {
                let l = xla_layout::parse(black_box(SPEC)).unwrap();
                b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
                    .bench(|| super::sum_by_next(l.offsets()));
            }
        }
    };
}

sum2_benches!(
    sum_bf16_tpu,
    "bf16[1024,1024]{1,0:T(8,128)(2,1)}",
    [1024, 1024],
    generated_bf16_tpu,
    hand_bf16_tpu
);
sum2_benches!(
    sum_f32_column_major,
    "f32[1000,1000]{0,1:T(8,128)}",
    [1000, 1000],
    generated_f32_column_major,
    hand_f32_column_major
);

/// The run-time sum over an untiled row-major layout whose row stride is
/// not a power of two, the commonest layout of all: its closed form is the
/// divisions' evaluator's linear part alone, against `i * stride + j`
/// through `black_box` (the compiler folds the generated and hand-written
/// sums of this layout into a formula, so they are no baseline).
mod sum_untiled_row_major {
    use super::{black_box, sum2, Bencher, ItemsCount};

    const SPEC: &str = "f32[1000,1000]{1,0}";
    const DIMS: [usize; 2] = [1000, 1000];

    run_time_parse2!();

    /// `i * stride + j`, each offset through `black_box` (a store and a
    /// load) so that the compiler cannot fold the sum into a formula.
    #[divan::bench(sample_count = 500)]
    fn opaque_formula(b: Bencher) {
        let stride = black_box(DIMS[1]);
        b.counter(ItemsCount::new(DIMS[0] * DIMS[1]))
            .bench(|| sum2(DIMS, |i, j| black_box(i * stride + j)));
    }
}

/// The sum of `offset` over a bf16 TPU tiling under two untiled batch
/// dims, as the README's `bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}` but
/// smaller: 1280 rows make the batch strides no powers of two, so the
/// closed form takes the divisions' evaluator with two quotients of the
/// tiled rows and one of the columns.
mod sum_batched_tpu {
    use super::{black_box, Bencher, ItemsCount};

    const SPEC: &str = "bf16[4,3,1280,1024]{3,2,0,1:T(8,128)(2,1)}";
    const DIMS: [usize; 4] = [4, 3, 1280, 1024];
    const LEN: usize = DIMS[0] * DIMS[1] * DIMS[2] * DIMS[3];

    fn sum4(n: [usize; 4], offset: impl Fn([usize; 4]) -> usize) -> usize {
        let [n0, n1, n2, n3] = black_box(n);
        let mut sum = 0usize;
        for i0 in 0..n0 {
            for i1 in 0..n1 {
                for i2 in 0..n2 {
                    for i3 in 0..n3 {
                        sum = sum.wrapping_add(offset([i0, i1, i2, i3]));
                    }
                }
            }
        }
        sum
    }

    #[divan::bench(sample_count = 100)]
    fn generated(b: Bencher) {
        let l = xla_layout::layout!("bf16[4,3,1280,1024]{3,2,0,1:T(8,128)(2,1)}");
        b.counter(ItemsCount::new(LEN))
            .bench(|| sum4(DIMS, |i| l.offset(i)));
    }

    #[divan::bench(sample_count = 100)]
    fn run_time_parse(b: Bencher) {
        let l = xla_layout::parse(black_box(SPEC)).unwrap();
        b.counter(ItemsCount::new(LEN))
            .bench(|| sum4(DIMS, |i| l.offset(&i)));
    }
}

/// The sum of `offset` over every index of SPEC.md's combining example,
/// `f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}`.
mod sum_combined {
    use super::{black_box, pairs, sum5, Bencher, ItemsCount};

    const SPEC: &str = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}";
    const DIMS: [usize; 5] = [2, 7, 8, 11, 10];
    const LEN: usize = DIMS[0] * DIMS[1] * DIMS[2] * DIMS[3] * DIMS[4];

    #[divan::bench(sample_count = 500)]
    fn generated(b: Bencher) {
        b.counter(ItemsCount::new(LEN))
            .bench(|| sum5(DIMS, pairs::generated_combined));
    }

    #[divan::bench(sample_count = 500)]
    fn hand_written(b: Bencher) {
        b.counter(ItemsCount::new(LEN))
            .bench(|| sum5(DIMS, pairs::hand_combined));
    }

    #[divan::bench(sample_count = 500)]
    fn run_time_parse(b: Bencher) {
        let l = xla_layout::parse(black_box(SPEC)).unwrap();
        b.counter(ItemsCount::new(LEN))
            .bench(|| sum5(DIMS, |i0, i1, i2, i3, i4| l.offset(&[i0, i1, i2, i3, i4])));
    }

    /// The same sum through a [`Ranked`](xla_layout::Ranked) view, moved
    /// into the closure (held by reference, it ran 8x slower).
    #[divan::bench(sample_count = 500)]
    fn run_time_ranked(b: Bencher) {
        let l = xla_layout::parse(black_box(SPEC)).unwrap();
        let r = l.ranked::<5>().unwrap();
        b.counter(ItemsCount::new(LEN)).bench(|| {
            sum5(DIMS, move |i0, i1, i2, i3, i4| {
                r.offset([i0, i1, i2, i3, i4])
            })
        });
    }

    /// The same sum through [`Layout::offsets`](xla_layout::Layout::offsets),
    /// which walks the storage digit by digit instead of evaluating each
    /// index on its own (the sum wraps, so its order does not matter).
    #[divan::bench(sample_count = 500)]
    fn run_time_offsets(b: Bencher) {
        let l = xla_layout::parse(black_box(SPEC)).unwrap();
        b.counter(ItemsCount::new(LEN))
            .bench(|| l.offsets().fold(0usize, usize::wrapping_add));
    }

    /// The same walk through `next`, as a `for` loop drives it.
    #[divan::bench(sample_count = 500)]
    fn run_time_offsets_next(b: Bencher) {
        let l = xla_layout::parse(black_box(SPEC)).unwrap();
        b.counter(ItemsCount::new(LEN))
            .bench(|| super::sum_by_next(l.offsets()));
    }
}

/// `y = A x` for a 1024 x 1024 `f32` matrix stored in the TPU's bf16 tiling
/// `(8,128)(2,1)`, the same loop with two ways of addressing `A`.
mod matrix_vector {
    use super::{black_box, pairs, Bencher, ItemsCount};

    const N: usize = 1024;

    /// `y[i] = sum over j of a[offset(i, j)] * x[j]`.
    #[inline]
    fn matvec(a: &[f32], x: &[f32], y: &mut [f32], offset: impl Fn(usize, usize) -> usize) {
        let n = black_box(N);
        for (i, yi) in y.iter_mut().enumerate().take(n) {
            let mut acc = 0.0;
            for (j, xj) in x.iter().enumerate().take(n) {
                acc += a[offset(i, j)] * xj;
            }
            *yi = acc;
        }
    }

    /// The matrix in tiled storage, its vector and the result; both ways
    /// are first checked to compute the same `y`, or comparing them would
    /// mean nothing.
    fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        // Small integers: every sum is exact, so both kernels agree bit for bit.
        let small = |v: usize| f32::from(u8::try_from(v % 16).expect("below 16"));
        let layout = xla_layout::layout!("bf16[1024,1024]{1,0:T(8,128)(2,1)}");
        let mut a = vec![0.0; layout.storage_len()];
        for i in 0..N {
            for j in 0..N {
                a[layout.offset([i, j])] = small(i * 7 + j * 3);
            }
        }
        let x: Vec<f32> = (0..N).map(|j| small(j % 5)).collect();
        let (mut y, mut z) = (vec![0.0; N], vec![0.0; N]);
        matvec(&a, &x, &mut y, pairs::generated_bf16_tpu);
        matvec(&a, &x, &mut z, pairs::hand_bf16_tpu);
        let row0: f32 = (0..N).map(|j| small(j * 3) * small(j % 5)).sum();
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert!(
            bits(&y) == bits(&z) && bits(&y[..1]) == [row0.to_bits()],
            "the two kernels disagree"
        );
        (a, x, y)
    }

    #[divan::bench(sample_count = 500)]
    fn generated(b: Bencher) {
        let (a, x, mut y) = inputs();
        b.counter(ItemsCount::new(N * N)).bench_local(|| {
            matvec(
                black_box(&a),
                black_box(&x),
                &mut y,
                pairs::generated_bf16_tpu,
            );
            black_box(&y);
        });
    }

    #[divan::bench(sample_count = 500)]
    fn hand_written(b: Bencher) {
        let (a, x, mut y) = inputs();
        b.counter(ItemsCount::new(N * N)).bench_local(|| {
            matvec(black_box(&a), black_box(&x), &mut y, pairs::hand_bf16_tpu);
            black_box(&y);
        });
    }
}

/// The sum of `index_of` over every storage offset, padding included, the
/// generated inverse against the run-time one; both are first checked to
/// agree on every offset, or comparing them would mean nothing.
mod index_of {
    use super::{black_box, Bencher, ItemsCount};

    /// Adds up every index's `N` entries (and a marker for padding), so
    /// the compiler keeps each call. `N`, the rank, is a constant on both
    /// sides, as a caller that knows its rank writes it: a loop over a
    /// slice of the rank read at run time timed that loop too.
    #[inline]
    fn sum<const N: usize, I: AsRef<[usize]>>(
        len: usize,
        index_of: impl Fn(usize) -> Option<I>,
    ) -> usize {
        let mut sum = 0usize;
        for offset in 0..black_box(len) {
            sum = match index_of(offset) {
                Some(index) => (0..N).fold(sum, |s, d| {
                    s.wrapping_mul(31).wrapping_add(index.as_ref()[d])
                }),
                None => sum.wrapping_add(1),
            };
        }
        sum
    }

    /// One run-time bench: `$make` turns the parsed layout `$l` into what
    /// answers `index_of`, checked against the generated inverse on every
    /// offset first. A macro, so that each bench's loop is spelled out in
    /// place: the same closures passed through one shared helper function
    /// measured 1.2 to 1.6 times slower, the generated code unchanged.
    macro_rules! run_time {
        ($(#[$doc:meta])* $name:ident, $spec:literal, $l:ident => $make:expr) => {
            $(#[$doc])*
            #[divan::bench(sample_count = 100)]
            fn $name(b: Bencher) {
                let $l = xla_layout::parse(black_box($spec)).unwrap();
                let r = $make;
                let g = xla_layout::layout!($spec);
                assert_eq!(
                    sum::<RANK, _>(len(), move |o| r.index_of(o)),
                    sum::<RANK, _>(len(), |o| g.index_of(o)),
                    "the two inverses disagree"
                );
                b.counter(ItemsCount::new(len()))
                    .bench(|| sum::<RANK, _>(len(), move |o| r.index_of(o)));
            }
        };
    }

    macro_rules! pair {
        ($name:ident, $spec:literal, $rank:literal) => {
            mod $name {
                use super::{black_box, sum, Bencher, ItemsCount};

                const RANK: usize = $rank;

                fn len() -> usize {
                    xla_layout::layout!($spec).storage_len()
                }

                #[divan::bench(sample_count = 100)]
                fn generated(b: Bencher) {
                    let l = xla_layout::layout!($spec);
                    b.counter(ItemsCount::new(len()))
                        .bench(|| sum::<RANK, _>(len(), |o| l.index_of(o)));
                }

                /// The bulk inverse walk, `Layout::slots()`: each slot's
                /// row-major position (or `None` for padding), in storage
                /// order; the same loop over every offset, but positions
                /// rather than indices, so its sum is not compared.
                #[divan::bench(sample_count = 100)]
                fn run_time_slots(b: Bencher) {
                    let l = xla_layout::parse(black_box($spec)).unwrap();
                    b.counter(ItemsCount::new(len())).bench(|| {
                        l.slots().fold(0usize, |s, p| match p {
                            Some(p) => s.wrapping_mul(31).wrapping_add(p),
                            None => s.wrapping_add(1),
                        })
                    });
                }

                run_time!(
                    /// `Layout::index_of`, from the compact tables on each call.
                    run_time_parse, $spec, l => &l
                );
                run_time!(
                    /// The same through a [`Ranked`](xla_layout::Ranked) view,
                    /// whose index is an array of the rank.
                    run_time_ranked, $spec, l => l.ranked::<$rank>().unwrap()
                );
                run_time!(
                    /// The same through a [`RankedInverse`](xla_layout::RankedInverse),
                    /// the inverse's constants decoded once.
                    run_time_inverse, $spec, l => l.ranked::<$rank>().unwrap().inverse()
                );
            }
        };
    }

    pair!(bf16_tpu, "bf16[1024,1024]{1,0:T(8,128)(2,1)}", 2);
    pair!(f32_column_major, "f32[1000,1000]{0,1:T(8,128)}", 2);
    pair!(combined, "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", 5);
}
