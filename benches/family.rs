//! The run-time `Layout` against the `layout!`-generated code on a family of
//! real TPU tilings, not on a few chosen layouts: `T(8,128)`, `(8,128)(2,1)`,
//! `(8,128)(4,1)`, `(8,128)(8,1)E(4)`, `T(1024)`, `T(1024)(128)(2,1)` and
//! `T(1,128)`, ranks 1 to 4, any `minor_to_major`, dims that are not
//! multiples of the tiles.
//!
//! For every layout it sums `offset` over every index (row-major loops, the
//! innermost over the last dim) and `index_of` over every storage offset
//! (every entry of each index),
//! once through the generated code and once through the parsed `Layout`,
//! alternating the two, and prints the fastest run of each and the ratio,
//! then the worst ratio of the family: the figure a goal must hold for.
//!
//! ```sh
//! cargo bench --bench family                  # FAMILY_ROUNDS=25 by default
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use xla_layout::{layout, Layout, StaticLayout};

/// One layout of the family, both ways.
trait Member {
    fn spec(&self) -> &'static str;
    /// The four sums: generated and run-time `offset`, generated and
    /// run-time `index_of`. Each returns a value that depends on every call.
    fn generated_offsets(&self) -> usize;
    fn run_time_offsets(&self) -> usize;
    fn generated_inverse(&self) -> usize;
    fn run_time_inverse(&self) -> usize;
}

struct Pair<L> {
    generated: L,
    parsed: Layout,
}

/// Folds one more value into a sum that the compiler cannot turn into a
/// closed form (it does for a plain sum of an affine offset), at the cost
/// of a rotation and an exclusive or a value, the same on both sides.
#[inline]
fn mix(sum: usize, value: usize) -> usize {
    sum.rotate_left(5) ^ value
}

/// Every entry of an index, folded into one value, so that a caller uses
/// the whole index: one that read two entries let the compiler drop the
/// generated code's other coordinates, and timed that, not `index_of`.
#[inline]
fn entries<const N: usize>(index: &[usize]) -> usize {
    (0..N).fold(0, |h, d| h.rotate_left(7) ^ index[d])
}

/// Calls `f` on every index of `dims` in row-major order, the last dim in a
/// plain inner loop (where the time goes), and folds what it returns with [`mix`].
#[inline]
fn sum_indices<const N: usize>(dims: [usize; N], f: impl Fn([usize; N]) -> usize) -> usize {
    let dims = black_box(dims);
    if dims.contains(&0) {
        return 0;
    }
    let (mut index, mut sum) = ([0; N], 0usize);
    loop {
        for j in 0..dims[N - 1] {
            index[N - 1] = j;
            sum = mix(sum, f(index));
        }
        let mut k = N - 1;
        loop {
            if k == 0 {
                return sum;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

impl<L, const N: usize> Member for Pair<L>
where
    L: StaticLayout<Index = [usize; N]>,
{
    fn spec(&self) -> &'static str {
        L::SPEC
    }

    fn generated_offsets(&self) -> usize {
        let l = self.generated;
        sum_indices(L::DIMS_ARRAY, |i| l.offset(i))
    }

    fn run_time_offsets(&self) -> usize {
        let l = &self.parsed;
        sum_indices(L::DIMS_ARRAY, |i| l.offset(&i))
    }

    fn generated_inverse(&self) -> usize {
        let l = self.generated;
        let len = black_box(L::STORAGE_LEN);
        (0..len).fold(0usize, |sum, o| {
            l.index_of(o).map_or(sum, |i| mix(sum, entries::<N>(&i)))
        })
    }

    fn run_time_inverse(&self) -> usize {
        let l = &self.parsed;
        let len = black_box(l.storage_len());
        (0..len).fold(0usize, |sum, o| {
            l.index_of(o).map_or(sum, |i| mix(sum, entries::<N>(&i)))
        })
    }
}

/// The dims as an array, which `StaticLayout::DIMS` is for every `layout!`
/// value; named here so the bench reads as the loops it runs.
trait DimsArray<const N: usize> {
    const DIMS_ARRAY: [usize; N];
}

impl<L: StaticLayout<Index = [usize; N]>, const N: usize> DimsArray<N> for L {
    const DIMS_ARRAY: [usize; N] = {
        let mut dims = [0; N];
        let mut i = 0;
        while i < N {
            dims[i] = L::DIMS[i];
            i += 1;
        }
        dims
    };
}

macro_rules! family {
    ($($spec:literal),* $(,)?) => {
        vec![$(
            Box::new(Pair {
                generated: layout!($spec),
                parsed: xla_layout::parse($spec).expect("a valid spec"),
            }) as Box<dyn Member>
        ),*]
    };
}

/// The fastest of `rounds` runs of each way, alternated so that load
/// from elsewhere falls on both alike; checks that both give one answer.
fn fastest(
    rounds: usize,
    generated: impl Fn() -> usize,
    run_time: impl Fn() -> usize,
) -> (Duration, Duration) {
    let (mut best_generated, mut best_run_time) = (Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        let start = Instant::now();
        let want = black_box(generated());
        best_generated = best_generated.min(start.elapsed());
        let start = Instant::now();
        let got = black_box(run_time());
        best_run_time = best_run_time.min(start.elapsed());
        assert_eq!(got, want, "both ways must agree");
    }
    (best_generated, best_run_time)
}

fn main() {
    let members = family![
        "bf16[1000,3000]{1,0:T(8,128)(2,1)}",
        "s8[1000,3000]{1,0:T(8,128)(4,1)}",
        "s4[1000,3000]{1,0:T(8,128)(8,1)E(4)}",
        "f32[1000,1000]{1,0:T(8,128)}",
        "f32[1000,1000]{0,1:T(8,128)}",
        "bf16[1000,1000]{0,1:T(8,128)(2,1)}",
        "s8[1000,1000]{0,1:T(8,128)(4,1)}",
        "s32[999,1001]{1,0:T(8,128)}",
        "f32[4093,250]{1,0:T(8,128)}",
        "f32[999,1001]{1,0:T(1,128)}",
        "f32[1000000]{0:T(1024)}",
        "bf16[999999]{0:T(1024)(128)(2,1)}",
        "bf16[300,3333]{1,0:T(1024)(128)(2,1)}",
        "f32[5,5,5,9000]{3,2,1,0:T(1024)}",
        "bf16[8,1,1000,130]{3,2,0,1:T(8,128)(2,1)}",
        "bf16[3,5,300,129]{3,2,1,0:T(8,128)(2,1)}",
        "bf16[129,7,1000]{2,0,1:T(8,128)(2,1)}",
        "bf16[77,13,999]{2,1,0:T(8,128)(2,1)}",
        "f16[3,500,700]{2,0,1:T(8,128)(2,1)}",
        "s8[7,600,260]{2,1,0:T(8,128)(4,1)}",
        "s8[2,3,500,333]{3,2,1,0:T(8,128)(4,1)}",
        "u8[3000,333]{1,0:T(8,128)(4,1)}",
        "f32[600,7,260]{0,2,1:T(8,128)}",
        "f32[33,1000,30]{1,2,0:T(8,128)}",
        "f32[100,100,100]{2,1,0:T(8,128)}",
        "bf16[999,3,257]{0,2,1:T(8,128)(2,1)}",
        "s8[5,1000,77]{1,2,0:T(8,128)(4,1)}",
        "bf16[2,2,600,600]{2,3,1,0:T(8,128)(2,1)}",
        "u8[3,4,500,700]{2,3,0,1:T(8,128)(4,1)}",
        "s4[1000,1000]{0,1:T(8,128)(8,1)E(4)}",
        "f32[3,1000,1000]{1,2,0:T(8,128)}",
        "bf16[7,5000]{0,1:T(1024)(128)(2,1)}",
    ];
    let rounds = std::env::var("FAMILY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(25);
    println!("fastest of {rounds} alternated runs; ratio = run-time `Layout` / `layout!`\n");
    println!("| layout | `offset` | `index_of` | `index_of` ms, generated / run-time |");
    println!("|---|---:|---:|---:|");
    let (mut worst_offset, mut worst_inverse) = ((0.0, ""), (0.0, ""));
    for m in &members {
        let ratio = |(generated, run_time): (Duration, Duration)| {
            run_time.as_secs_f64() / generated.as_secs_f64()
        };
        let offset = ratio(fastest(
            rounds,
            || m.generated_offsets(),
            || m.run_time_offsets(),
        ));
        let times = fastest(rounds, || m.generated_inverse(), || m.run_time_inverse());
        let inverse = ratio(times);
        let ms = |t: Duration| t.as_secs_f64() * 1e3;
        println!(
            "| `{}` | {offset:.2} | {inverse:.2} | {:.3} / {:.3} |",
            m.spec(),
            ms(times.0),
            ms(times.1)
        );
        if offset > worst_offset.0 {
            worst_offset = (offset, m.spec());
        }
        if inverse > worst_inverse.0 {
            worst_inverse = (inverse, m.spec());
        }
    }
    println!(
        "\nworst of {} layouts: `offset` {:.2} (`{}`), `index_of` {:.2} (`{}`)",
        members.len(),
        worst_offset.0,
        worst_offset.1,
        worst_inverse.0,
        worst_inverse.1
    );
}
