//! What a `Tensor` costs over the plain storage slice, on
//! `f32[4096,4096]{1,0:T(8,128)}`: summing every element through `iter()`
//! (logical order) and through `tiles()` (storage order, tile by tile)
//! against summing the storage slice, and `t[[i, j]]` in a nested loop
//! against `buf[l.offset([i, j])]`, both looping over the layout's dims, and
//! again with bounds hidden from the compiler (`*_opaque`), which keeps the
//! tensor's dims check alive. The index loops are `#[inline(never)]`, to be
//! read with `objdump -d` of the bench binary.
//!
//! `cargo bench --bench tensor`; after divan's table it prints the ratios
//! (fastest of several runs each). The `f32` sums are one chain of
//! dependent additions, as a float sum is; the `u32` sums let the compiler
//! vectorize, which shows the walk's own overhead. A further line sums `u16`
//! over `bf16[4096,4096]{1,0:T(8,128)(2,1)}` through `iter()`, whose logical
//! neighbours lie two slots apart: the walk's rows of stride 2. Two more
//! time `fill_padding` on ragged `f32` and `bf16 (2,1)` tilings against
//! filling the whole storage.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use xla_layout::{layout, tensor::Tensor, StaticLayout};

layout!(struct Big = "f32[4096,4096]{1,0:T(8,128)}");
layout!(struct BigU = "u32[4096,4096]{1,0:T(8,128)}");
layout!(struct Pairs = "bf16[4096,4096]{1,0:T(8,128)(2,1)}");
layout!(struct Ragged = "f32[4093,4093]{1,0:T(8,128)}");
layout!(struct RaggedPairs = "bf16[4093,4093]{1,0:T(8,128)(2,1)}");

fn main() {
    divan::main();
    ratios();
}

fn floats() -> &'static [f32] {
    static DATA: OnceLock<Vec<f32>> = OnceLock::new();
    DATA.get_or_init(|| {
        (0..Big::STORAGE_LEN)
            .map(|k| f32::from((k % 7) as u8))
            .collect()
    })
}

/// Storage of [`Pairs`], as `u16` bit patterns.
fn halves() -> &'static [u16] {
    static DATA: OnceLock<Vec<u16>> = OnceLock::new();
    DATA.get_or_init(|| (0..Pairs::STORAGE_LEN).map(|k| (k % 7) as u16).collect())
}

fn ints() -> &'static [u32] {
    static DATA: OnceLock<Vec<u32>> = OnceLock::new();
    DATA.get_or_init(|| (0..BigU::STORAGE_LEN).map(|k| (k % 7) as u32).collect())
}

/// `add` folded over `at(i, j)` for every index of `dims`, in logical order;
/// inlined into each caller, so every route is the plain loop nest.
#[inline]
fn sum_over<T>(
    [rows, cols]: [usize; 2],
    zero: T,
    add: impl Fn(T, T) -> T,
    at: impl Fn(usize, usize) -> T,
) -> T {
    let mut sum = zero;
    for i in 0..rows {
        for j in 0..cols {
            sum = add(sum, at(i, j));
        }
    }
    sum
}

/// Every route of one element type: the slice, `iter()`, `tiles()`, and
/// `t[[i, j]]` against `buf[l.offset([i, j])]` with loop bounds from the
/// dims and hidden from the compiler (`black_box`, so the dims check of
/// the tensor cannot fold: what a loop over run-time bounds costs).
macro_rules! routes {
    ($elem:ty, $layout:ident, $zero:expr, $add:expr,
     $slice:ident, $iter:ident, $tiles:ident,
     $index:ident, $offset:ident, $index_opaque:ident, $offset_opaque:ident) => {
        fn $slice(s: &[$elem]) -> $elem {
            s.iter().fold($zero, |a, &x| $add(a, x))
        }

        fn $iter(t: &Tensor<$layout, &[$elem]>) -> $elem {
            t.iter().fold($zero, |a, &x| $add(a, x))
        }

        fn $tiles(t: &Tensor<$layout, &[$elem]>) -> $elem {
            t.tiles().fold($zero, |a, (_, tile)| {
                tile.iter().fold(a, |a, &x| $add(a, x))
            })
        }

        #[inline(never)]
        fn $index(t: &Tensor<$layout, &[$elem]>) -> $elem {
            sum_over($layout::DIMS, $zero, $add, |i, j| t[[i, j]])
        }

        #[inline(never)]
        fn $offset(buf: &[$elem]) -> $elem {
            sum_over($layout::DIMS, $zero, $add, |i, j| {
                buf[$layout.offset([i, j])]
            })
        }

        #[inline(never)]
        fn $index_opaque(t: &Tensor<$layout, &[$elem]>) -> $elem {
            sum_over(black_box($layout::DIMS), $zero, $add, |i, j| t[[i, j]])
        }

        #[inline(never)]
        fn $offset_opaque(buf: &[$elem]) -> $elem {
            sum_over(black_box($layout::DIMS), $zero, $add, |i, j| {
                buf[$layout.offset([i, j])]
            })
        }
    };
}

routes!(
    f32,
    Big,
    0.0,
    |a: f32, x: f32| a + x,
    slice_f32,
    iter_f32,
    tiles_f32,
    index_f32,
    offset_f32,
    index_f32_opaque,
    offset_f32_opaque
);
routes!(
    u32,
    BigU,
    0u32,
    u32::wrapping_add,
    slice_u32,
    iter_u32,
    tiles_u32,
    index_u32,
    offset_u32,
    index_u32_opaque,
    offset_u32_opaque
);

/// The divan benchmarks of one element type: each sum, by each route.
macro_rules! sums {
    ($module:ident, $elem:ty, $data:ident, $layout:ident,
     $slice:ident, $iter:ident, $tiles:ident, $index:ident, $offset:ident) => {
        mod $module {
            use super::{
                black_box, $data, $index, $iter, $layout, $offset, $slice, $tiles, Tensor,
            };

            #[divan::bench(sample_count = 10)]
            fn storage_slice() -> $elem {
                $slice(black_box($data()))
            }

            #[divan::bench(sample_count = 10)]
            fn tensor_iter() -> $elem {
                $iter(&Tensor::new($layout, black_box($data())).unwrap())
            }

            #[divan::bench(sample_count = 10)]
            fn tensor_tiles() -> $elem {
                $tiles(&Tensor::new($layout, black_box($data())).unwrap())
            }

            #[divan::bench(sample_count = 10)]
            fn tensor_index() -> $elem {
                $index(&Tensor::new($layout, black_box($data())).unwrap())
            }

            #[divan::bench(sample_count = 10)]
            fn buf_offset() -> $elem {
                $offset(black_box($data()))
            }
        }
    };
}

sums!(f32_sum, f32, floats, Big, slice_f32, iter_f32, tiles_f32, index_f32, offset_f32);
sums!(u32_sum, u32, ints, BigU, slice_u32, iter_u32, tiles_u32, index_u32, offset_u32);

/// The fastest of `runs` calls, which noise can only slow down.
fn fastest<R>(runs: usize, mut f: impl FnMut() -> R) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ratios() {
    let runs = 12;
    let (fs, is) = (floats(), ints());
    let (tf, ti) = (
        Tensor::new(Big, fs).unwrap(),
        Tensor::new(BigU, is).unwrap(),
    );
    // The same sums, whichever way they walk (exact only for integers: a
    // float sum depends on the order).
    assert_eq!(slice_u32(is), iter_u32(&ti));
    assert_eq!(slice_u32(is), tiles_u32(&ti));
    assert_eq!(index_u32(&ti), offset_u32(is));
    assert_eq!(index_u32_opaque(&ti), offset_u32_opaque(is));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("\nratios on {} (fastest of {runs} runs each):", Big::SPEC);
    for (name, slice, iter, tiles) in [
        (
            "f32",
            fastest(runs, || slice_f32(black_box(fs))),
            fastest(runs, || iter_f32(black_box(&tf))),
            fastest(runs, || tiles_f32(black_box(&tf))),
        ),
        (
            "u32",
            fastest(runs, || slice_u32(black_box(is))),
            fastest(runs, || iter_u32(black_box(&ti))),
            fastest(runs, || tiles_u32(black_box(&ti))),
        ),
    ] {
        println!(
            "  {name}: slice {:.2} ms, iter() {:.2} ms ({:.2}x slice, goal 1.5x), \
             tiles() {:.2} ms ({:.2}x slice, goal 1.1x)",
            ms(slice),
            ms(iter),
            ratio(iter, slice),
            ms(tiles),
            ratio(tiles, slice),
        );
    }
    strided_iter(runs);
    padding_fill::<_, u32>(Ragged, runs);
    padding_fill::<_, u16>(RaggedPairs, runs);
    // Each pair timed alternately, so load from other processes falls on
    // both sides alike.
    let pair = |a: &mut dyn FnMut(), b: &mut dyn FnMut()| {
        let (mut ta, mut tb) = (Duration::MAX, Duration::MAX);
        for _ in 0..runs {
            ta = ta.min(fastest(1, &mut *a));
            tb = tb.min(fastest(1, &mut *b));
        }
        (ta, tb)
    };
    for (name, (index, offset)) in [
        (
            "f32, bounds from the dims",
            pair(
                &mut || _ = black_box(index_f32(black_box(&tf))),
                &mut || _ = black_box(offset_f32(black_box(fs))),
            ),
        ),
        (
            "u32, bounds from the dims",
            pair(
                &mut || _ = black_box(index_u32(black_box(&ti))),
                &mut || _ = black_box(offset_u32(black_box(is))),
            ),
        ),
        (
            "f32, opaque bounds",
            pair(
                &mut || _ = black_box(index_f32_opaque(black_box(&tf))),
                &mut || _ = black_box(offset_f32_opaque(black_box(fs))),
            ),
        ),
        (
            "u32, opaque bounds",
            pair(
                &mut || _ = black_box(index_u32_opaque(black_box(&ti))),
                &mut || _ = black_box(offset_u32_opaque(black_box(is))),
            ),
        ),
    ] {
        println!(
            "  {name}: t[[i, j]] {:.2} ms, {:.3}x buf[l.offset([i, j])] at {:.2} ms (goal 1.05x)",
            ms(index),
            ratio(index, offset),
            ms(offset),
        );
    }
}

/// `iter()` over a `(2,1)` tiling, whose logical rows lie two slots apart
/// in storage: runs of stride 2 (the sum widens to `u32`).
fn strided_iter(runs: usize) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let hs = halves();
    let th = Tensor::new(Pairs, hs).unwrap();
    let widen = |a: u32, &x: &u16| a.wrapping_add(u32::from(x));
    assert_eq!(
        hs.iter().fold(0, widen),
        th.iter().fold(0, widen),
        "the same sum"
    );
    let (slice, iter) = (
        fastest(runs, || black_box(hs).iter().fold(0, widen)),
        fastest(runs, || black_box(&th).iter().fold(0, widen)),
    );
    println!(
        "  u16 over {}: slice {:.2} ms, iter() {:.2} ms ({:.2}x slice)",
        Pairs::SPEC,
        ms(slice),
        ms(iter),
        iter.as_secs_f64() / slice.as_secs_f64(),
    );
}

/// `fill_padding` on a ragged tiling (3 padding rows and columns of 4096),
/// against filling the whole storage slice, both on memory written before;
/// `T` as wide as `L`'s elements.
fn padding_fill<L: StaticLayout, T: Copy + PartialEq + From<u8>>(layout: L, runs: usize) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut buf = vec![T::from(1); L::STORAGE_LEN];
    let mut t = Tensor::new(layout, &mut buf[..]).unwrap();
    let (mut fill, mut padding) = (Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        fill = fill.min(fastest(1, || t.storage_mut().fill(black_box(T::from(2)))));
        padding = padding.min(fastest(1, || t.fill_padding(black_box(T::from(3)))));
    }
    let threes = t.storage().iter().filter(|&&x| x == T::from(3)).count();
    assert_eq!(threes, L::PADDING_LEN, "padding, and only padding, filled");
    println!(
        "  fill_padding on {}: {:.2} ms, {:.2}x filling the whole storage ({:.2} ms)",
        L::SPEC,
        ms(padding),
        padding.as_secs_f64() / fill.as_secs_f64(),
        ms(fill),
    );
}
