//! Bulk relayout bandwidth, against baselines measured in the same run:
//! the best copy of the same number of bytes (the ceiling: the fastest in
//! each round of `memcpy`, `rep movsb` and streaming-store copies, see
//! `common/copies.rs`), `memcpy` alone, and a naive loop that calls the
//! `layout!` value's `offset` once per element (what a user writes without
//! this crate).
//!
//! Every array is 64 MiB of logical data, past the last-level cache of most
//! machines, so the numbers are of memory bandwidth. Where the cache holds
//! it (480 MiB of L3 on one machine measured), every timed call, copy or
//! relayout, reads a source that the round's other calls have pushed out
//! since it was last read, so that the ceiling moves the same bytes under
//! the same conditions as the relayout it is set against.
//! Throughput is reported in logical bytes.
//!
//! `cargo bench --bench relayout` runs divan. With `RELAYOUT_TIMINGS=1` in
//! the environment it prints the copies' own bandwidths on each thread
//! count, then median seconds per case, one `case operation seconds
//! best_copy_ratio r memcpy_ratio m best_copy name` line each (for
//! `benches/numpy_relayout.py`), then a table of those ratios against each
//! case's goal. `RELAYOUT_THREADS` (say `1,4,8,16`) sets the thread
//! counts of the copies and of the threaded plans, one and every core when
//! unset. `RELAYOUT_CASES` (comma-separated parts of case names; `copies`
//! for the copies alone, `family` for the family) runs some of them.
//!
//! The cases are chosen layouts; the family (`family_*` rows, then a line
//! of the worst and median of each goal) draws layouts the cases do not
//! name, as a user's would be: every TPU tiling of 32-, 16-, 8- and 4-bit
//! elements, ranks 1 to 4, dims that are not multiples of the tiles, in
//! order or with `minor_to_major` permuted, each packed from and unpacked
//! into a row-major array of about 64 MiB of logical data.
//! `RELAYOUT_FAMILY` (24 by default) sets how many, `RELAYOUT_SEED` which.

#![allow(
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "benchmark data: any distinct values will do"
)]

use std::cell::RefCell;
use std::time::Instant;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use xla_layout::{layout, parse, Layout, RelayoutPlan, StaticLayout};

#[macro_use]
#[path = "common/relayout_cases.rs"]
mod relayout_cases;

#[path = "common/copies.rs"]
mod copies;

const MIB: usize = 1 << 20;

fn main() {
    if std::env::var_os("RELAYOUT_TIMINGS").is_some() {
        timings();
    } else {
        divan::main();
    }
}

/// `n` values that differ from their neighbours.
fn data<T: Copy>(n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(f).collect()
}

#[divan::bench(args = [32 * MIB, 64 * MIB], sample_count = 20, sample_size = 1)]
fn memcpy(b: Bencher, bytes: usize) {
    let src = data(bytes, |i| i as u8);
    let mut dst = vec![0u8; bytes];
    b.counter(BytesCount::new(bytes)).bench_local(|| {
        dst.copy_from_slice(black_box(&src));
    });
}

/// Pack, unpack and the two naive loops for a 2-D whole-element layout.
macro_rules! typed_case {
    ($name:ident, $spec:literal, $t:ty, $rows:literal, $cols:literal, $make:expr) => {
        mod $name {
            use super::{black_box, data, layout, Bencher, BytesCount, StaticLayout};

            const ROWS: usize = $rows;
            const COLS: usize = $cols;
            const BYTES: usize = ROWS * COLS * std::mem::size_of::<$t>();

            fn setup() -> (Vec<$t>, Vec<$t>) {
                let l = layout!($spec);
                (data(l.len(), $make), vec![<$t>::default(); l.storage_len()])
            }

            #[divan::bench(sample_count = 20, sample_size = 1)]
            fn pack(b: Bencher) {
                let l = layout!($spec);
                let (src, mut dst) = setup();
                b.counter(BytesCount::new(BYTES)).bench_local(|| {
                    l.pack(black_box(&src), &mut dst, xla_layout::Options::default())
                        .unwrap();
                });
            }

            #[divan::bench(sample_count = 20, sample_size = 1)]
            fn unpack(b: Bencher) {
                let l = layout!($spec);
                let (src, mut storage) = setup();
                l.pack(&src, &mut storage, xla_layout::Options::default())
                    .unwrap();
                let mut back = vec![<$t>::default(); l.len()];
                b.counter(BytesCount::new(BYTES)).bench_local(|| {
                    l.unpack(black_box(&storage), &mut back, xla_layout::Threads::One)
                        .unwrap();
                });
            }

            #[divan::bench(sample_count = 5, sample_size = 1)]
            fn naive_pack(b: Bencher) {
                let l = layout!($spec);
                let (src, mut dst) = setup();
                b.counter(BytesCount::new(BYTES)).bench_local(|| {
                    dst.fill(<$t>::default());
                    for r in 0..ROWS {
                        for c in 0..COLS {
                            dst[l.offset([r, c])] = src[r * COLS + c];
                        }
                    }
                    black_box(&dst);
                });
            }

            #[divan::bench(sample_count = 5, sample_size = 1)]
            fn naive_unpack(b: Bencher) {
                let l = layout!($spec);
                let (src, mut storage) = setup();
                l.pack(&src, &mut storage, xla_layout::Options::default())
                    .unwrap();
                let mut back = vec![<$t>::default(); l.len()];
                b.counter(BytesCount::new(BYTES)).bench_local(|| {
                    for r in 0..ROWS {
                        for c in 0..COLS {
                            back[r * COLS + c] = storage[l.offset([r, c])];
                        }
                    }
                    black_box(&back);
                });
            }
        }
    };
}

typed_case!(
    f32_8x128,
    "f32[4096,4096]{1,0:T(8,128)}",
    f32,
    4096,
    4096,
    |i| i as f32
);
typed_case!(
    f32_ragged_4093,
    "f32[4093,4093]{1,0:T(8,128)}",
    f32,
    4093,
    4093,
    |i| i as f32
);
typed_case!(
    bf16_8x128_2x1,
    "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
    u16,
    4096,
    8192,
    |i| i as u16
);
typed_case!(
    s8_8x128_4x1,
    "s8[8192,8192]{1,0:T(8,128)(4,1)}",
    i8,
    8192,
    8192,
    |i| i as i8
);

/// A column-major source converted straight into tiles, and back.
mod f32_column_major {
    use super::{black_box, data, layout, Bencher, BytesCount, StaticLayout};

    const N: usize = 4096;
    const BYTES: usize = N * N * 4;

    fn setup() -> (Vec<f32>, Vec<f32>) {
        (
            data(N * N, |i| i as f32),
            vec![0.0; layout!("f32[4096,4096]{1,0:T(8,128)}").storage_len()],
        )
    }

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn convert(b: Bencher) {
        let (from, to) = (
            layout!("f32[4096,4096]{0,1}"),
            layout!("f32[4096,4096]{1,0:T(8,128)}").runtime(),
        );
        let (src, mut dst) = setup();
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            from.convert(
                black_box(&src),
                &to,
                &mut dst,
                xla_layout::Options::default(),
            )
            .unwrap();
        });
    }

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn convert_back(b: Bencher) {
        let (from, to) = (
            layout!("f32[4096,4096]{1,0:T(8,128)}"),
            layout!("f32[4096,4096]{0,1}").runtime(),
        );
        let (mut col, tiled) = setup();
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            from.convert(
                black_box(&tiled),
                &to,
                &mut col,
                xla_layout::Options::default(),
            )
            .unwrap();
        });
    }

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn naive_convert(b: Bencher) {
        let (from, to) = (
            layout!("f32[4096,4096]{0,1}"),
            layout!("f32[4096,4096]{1,0:T(8,128)}"),
        );
        let (src, mut dst) = setup();
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            dst.fill(0.0);
            for r in 0..N {
                for c in 0..N {
                    dst[to.offset([r, c])] = src[from.offset([r, c])];
                }
            }
            black_box(&dst);
        });
    }
}

/// `s4` packed two to a byte, in XLA's TPU tiling for 4-bit types.
mod s4_8x128_8x1 {
    use super::{black_box, data, layout, Bencher, BytesCount, StaticLayout};

    const N: usize = 8192;
    const BYTES: usize = N * N;

    fn setup() -> (Vec<i8>, Vec<u8>) {
        let l = layout!("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}");
        (
            data(l.len(), |i| (i % 16) as i8 - 8),
            vec![0; l.storage_bytes()],
        )
    }

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn pack(b: Bencher) {
        let l = layout!("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}");
        let (src, mut dst) = setup();
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            l.pack_bits(black_box(&src), &mut dst, xla_layout::Options::default())
                .unwrap();
        });
    }

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn unpack(b: Bencher) {
        let l = layout!("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}");
        let (src, mut storage) = setup();
        l.pack_bits(&src, &mut storage, xla_layout::Options::default())
            .unwrap();
        let mut back = vec![0i8; l.len()];
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            l.unpack_bits(black_box(&storage), &mut back, xla_layout::Threads::One)
                .unwrap();
        });
    }

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn naive_pack(b: Bencher) {
        let l = layout!("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}");
        let (src, mut dst) = setup();
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            dst.fill(0);
            for r in 0..N {
                for c in 0..N {
                    let o = l.offset([r, c]);
                    let shift = (o % 2) * 4;
                    let v = (src[r * N + c] as u8 & 0xf) << shift;
                    dst[o / 2] = (dst[o / 2] & !(0xf << shift)) | v;
                }
            }
            black_box(&dst);
        });
    }

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn naive_unpack(b: Bencher) {
        let l = layout!("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}");
        let (src, mut storage) = setup();
        l.pack_bits(&src, &mut storage, xla_layout::Options::default())
            .unwrap();
        let mut back = vec![0i8; l.len()];
        b.counter(BytesCount::new(BYTES)).bench_local(|| {
            for r in 0..N {
                for c in 0..N {
                    let o = l.offset([r, c]);
                    let nibble = (storage[o / 2] >> ((o % 2) * 4)) << 4;
                    back[r * N + c] = (nibble as i8) >> 4;
                }
            }
            black_box(&back);
        });
    }
}

/// Bulk calls on a small array: a `layout!` value hands its folded tables
/// to the same code a parsed `Layout` runs, so the two should cost the same.
mod small_3x5 {
    use super::{black_box, layout, parse, Bencher, StaticLayout};

    const SPEC: &str = "f32[3,5]{1,0:T(2,2)}";
    const LOGICAL: [f32; 15] = [
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0,
    ];

    #[divan::bench(sample_count = 200)]
    fn pack_static(b: Bencher) {
        let l = layout!("f32[3,5]{1,0:T(2,2)}");
        let mut storage = [0.0f32; 24];
        b.bench_local(|| {
            black_box(l)
                .pack(
                    black_box(&LOGICAL),
                    &mut storage,
                    xla_layout::Options::default(),
                )
                .unwrap();
        });
    }

    #[divan::bench(sample_count = 200)]
    fn pack_parsed(b: Bencher) {
        let l = parse(SPEC).unwrap();
        let mut storage = [0.0f32; 24];
        b.bench_local(|| {
            black_box(&l)
                .pack(
                    black_box(&LOGICAL),
                    &mut storage,
                    xla_layout::Options::default(),
                )
                .unwrap();
        });
    }

    #[divan::bench(sample_count = 200)]
    fn unpack_static(b: Bencher) {
        let l = layout!("f32[3,5]{1,0:T(2,2)}");
        let mut storage = [0.0f32; 24];
        l.pack(&LOGICAL, &mut storage, xla_layout::Options::default())
            .unwrap();
        let mut back = [0.0f32; 15];
        b.bench_local(|| {
            black_box(l)
                .unpack(black_box(&storage), &mut back, xla_layout::Threads::One)
                .unwrap();
        });
    }

    #[divan::bench(sample_count = 200)]
    fn unpack_parsed(b: Bencher) {
        let l = parse(SPEC).unwrap();
        let mut storage = [0.0f32; 24];
        l.pack(&LOGICAL, &mut storage, xla_layout::Options::default())
            .unwrap();
        let mut back = [0.0f32; 15];
        b.bench_local(|| {
            black_box(&l)
                .unpack(black_box(&storage), &mut back, xla_layout::Threads::One)
                .unwrap();
        });
    }
}

/// Seconds of one call of `f`.
fn time(f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One row of the summary table.
struct Row {
    case: String,
    op: String,
    goal: f64,
    /// Median over the rounds of `best copy time / operation time`.
    best: f64,
    /// The highest of those ratios (the quietest round).
    best_round: f64,
    /// Median over the rounds of `memcpy time / operation time`.
    memcpy: f64,
    /// The copy that was fastest in most rounds.
    winner: &'static str,
}

/// An operation to time: its name, the threads the copies it is compared
/// with run on, and the operation.
type Op<'a> = (&'a str, usize, &'a mut dyn FnMut());

/// Measures each operation of one case interleaved with every copy of
/// `bytes` (`copies::available`), round after round, so that load from
/// elsewhere on the machine hits them alike. The ceiling of a round is its
/// fastest copy; prints the median seconds and the median per-round
/// ratios `ceiling time / operation time` and `memcpy time / operation
/// time` (1.0 is the speed of the copy).
fn measure(rows: &mut Vec<Row>, case: &str, goal: f64, bytes: usize, ops: &mut [Op<'_>]) {
    const ROUNDS: usize = 11;
    let copies = copies::available();
    let mut buffers = copy_buffers(copies.len(), bytes);
    let mut seconds = vec![Vec::new(); ops.len()];
    let mut best = vec![Vec::new(); ops.len()];
    let mut memcpy = vec![Vec::new(); ops.len()];
    let mut wins = vec![vec![0usize; copies.len()]; ops.len()];
    for (_, threads, op) in ops.iter_mut() {
        op();
        for (copy, (src, dst)) in copies.iter().zip(&mut buffers) {
            dst.fill(0);
            copy.time(src, dst, *threads);
            assert!(dst == src, "`{}` copied wrong bytes", copy.name);
        }
    }
    for _ in 0..ROUNDS {
        for (k, (_, threads, op)) in ops.iter_mut().enumerate() {
            let times: Vec<f64> = copies
                .iter()
                .zip(&mut buffers)
                .map(|(copy, (src, dst))| copy.time(black_box(src), dst, *threads))
                .collect();
            let fastest = (0..times.len())
                .min_by(|&a, &b| times[a].total_cmp(&times[b]))
                .unwrap();
            wins[k][fastest] += 1;
            let t = time(*op);
            seconds[k].push(t);
            best[k].push(times[fastest] / t);
            memcpy[k].push(times[0] / t);
        }
    }
    for (k, (name, _, _)) in ops.iter().enumerate() {
        let winner = (0..copies.len()).max_by_key(|&c| wins[k][c]).unwrap();
        let row = Row {
            case: case.to_owned(),
            op: (*name).to_owned(),
            goal,
            best: median_of(best[k].clone()),
            best_round: best[k].iter().copied().fold(0.0, f64::max),
            memcpy: median_of(memcpy[k].clone()),
            winner: copies[winner].name,
        };
        println!(
            "{case} {name} {:.6} best_copy_ratio {:.2} memcpy_ratio {:.2} best_copy {}",
            median_of(seconds[k].clone()),
            row.best,
            row.memcpy,
            row.winner,
        );
        rows.push(row);
    }
}

/// A source and a destination of `bytes` for each of `copies` copies.
///
/// Each copy reads its own source once a round, as each operation reads
/// its own: were the copies to share one, the same 64 MiB read several
/// times in a row would be served from a last-level cache that holds it
/// (480 MiB on one machine measured), and the ceiling would be a copy out
/// of cache that no operation, whose source was last read a round ago,
/// could match.
fn copy_buffers(copies: usize, bytes: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..copies)
        .map(|c| (data(bytes, |i| (i + c) as u8), vec![0u8; bytes]))
        .collect()
}

/// The copies alone: each one's median bandwidth over eleven runs on one
/// thread and on every core, so that the ceiling itself is on record.
fn copy_bandwidths() {
    if !wanted("copies") {
        return;
    }
    let bytes = 64 * MIB;
    let copies = copies::available();
    let mut buffers = copy_buffers(copies.len(), bytes);
    for threads in thread_counts() {
        let mut times = vec![Vec::new(); copies.len()];
        for _ in 0..11 {
            for (c, (copy, (src, dst))) in copies.iter().zip(&mut buffers).enumerate() {
                times[c].push(copy.time(black_box(src), dst, threads));
            }
        }
        for (copy, t) in copies.iter().zip(times) {
            println!(
                "copies {}_{threads} {:.6} gb_per_s {:.1}",
                copy.name,
                median_of(t.clone()),
                bytes as f64 / median_of(t) / 1e9,
            );
        }
    }
}

/// Each copy timed as an operation against the ceiling, as a relayout is:
/// what a relayout as fast as that copy would read. The ceiling is the
/// fastest of several copies in each round and the operation one run, so
/// on a noisy host even the copy that wins most rounds reads below 1; its
/// row is the most any relayout can show in the same conditions.
fn copies_as_operations(rows: &mut Vec<Row>) {
    if !wanted("copies") {
        return;
    }
    let bytes = 64 * MIB;
    let src = data(bytes, |i| i as u8);
    let dst = RefCell::new(vec![0u8; bytes]);
    let copies = copies::available();
    let calls: Vec<Box<dyn Fn(usize) + '_>> = copies
        .iter()
        .map(|copy| {
            let (src, dst) = (&src, &dst);
            Box::new(move |threads| {
                copy.time(black_box(src), &mut dst.borrow_mut(), threads);
            }) as Box<dyn Fn(usize)>
        })
        .collect();
    let ops: Vec<(&str, Threaded<'_>)> = copies
        .iter()
        .zip(&calls)
        .map(|(copy, call)| (copy.name, &**call as Threaded<'_>))
        .collect();
    on_counts(rows, "copies", bytes, &ops);
}

/// Whether `RELAYOUT_CASES` (a comma-separated list of case-name parts,
/// all when unset) asks for `case`.
fn wanted(case: &str) -> bool {
    std::env::var("RELAYOUT_CASES")
        .map_or(true, |list| list.split(',').any(|part| case.contains(part)))
}

/// Goals as fractions of the best copy: whole elements copied in order,
/// 8-bit and sub-byte interleaves, and permutations.
const WHOLE: f64 = 0.9;
const NARROW: f64 = 0.8;
const PERMUTED: f64 = 0.75;

/// Pack and unpack of a layout of 64 MiB of `T`s stored as `S`s, through
/// `pack` and `unpack` (`Layout::pack` or `Layout::pack_bits` and their
/// inverses), `storage` of them long.
fn pack_case<T: Copy + Default, S: Copy + Default>(
    rows: &mut Vec<Row>,
    (case, spec, goal): (&str, &str, f64),
    make: impl Fn(usize) -> T,
    pack: impl Fn(&Layout, &[T], &mut [S]),
    unpack: impl Fn(&Layout, &[S], &mut [T]),
    storage: fn(&Layout) -> usize,
) {
    if !wanted(case) {
        return;
    }
    let l = parse(spec).unwrap();
    let src = data(l.len(), make);
    let (mut out, mut stored) = (
        vec![S::default(); storage(&l)],
        vec![S::default(); storage(&l)],
    );
    pack(&l, &src, &mut stored);
    let mut back = vec![T::default(); l.len()];
    measure(
        rows,
        case,
        goal,
        l.len() * std::mem::size_of::<T>(),
        &mut [
            ("pack", 1, &mut || pack(&l, black_box(&src), &mut out)),
            ("unpack", 1, &mut || {
                unpack(&l, black_box(&stored), &mut back);
            }),
        ],
    );
}

/// `convert` from `from` to `to` and back, 64 MiB each way.
fn convert_case<T: Copy + Default + Send + Sync>(
    rows: &mut Vec<Row>,
    case: &str,
    from: &str,
    to: &str,
    make: impl Fn(usize) -> T,
) {
    if !wanted(case) {
        return;
    }
    let (from, to) = (parse(from).unwrap(), parse(to).unwrap());
    let src = data(from.storage_len(), make);
    let (mut out, mut there) = (
        vec![T::default(); to.storage_len()],
        vec![T::default(); to.storage_len()],
    );
    from.convert(&src, &to, &mut there, xla_layout::Options::default())
        .unwrap();
    let mut back = vec![T::default(); from.storage_len()];
    measure(
        rows,
        case,
        PERMUTED,
        from.len() * std::mem::size_of::<T>(),
        &mut [
            ("convert", 1, &mut || {
                from.convert(
                    black_box(&src),
                    &to,
                    &mut out,
                    xla_layout::Options::default(),
                )
                .unwrap();
            }),
            ("convert_back", 1, &mut || {
                to.convert(
                    black_box(&there),
                    &from,
                    &mut back,
                    xla_layout::Options::default(),
                )
                .unwrap();
            }),
        ],
    );
}

/// One `case operation seconds memcpy_ratio r` line per measurement (see
/// the module docs), then the same as a table with each case's goal.
fn timings() {
    let mut rows = Vec::new();
    macro_rules! pack {
        ($case:expr, $spec:expr, $goal:ident, ($t:ty, $s:ty), ($pack:ident, $unpack:ident, $len:ident), $make:expr) => {
            pack_case::<$t, $s>(
                &mut rows,
                ($case, $spec, $goal),
                $make,
                |l, src, dst| l.$pack(src, dst, Default::default()).unwrap(),
                |l, src, dst| l.$unpack(src, dst, Default::default()).unwrap(),
                Layout::$len,
            )
        };
    }
    macro_rules! convert {
        ($case:expr, $from:expr, $to:expr, $t:ty, $make:expr) => {
            convert_case::<$t>(&mut rows, $case, $from, $to, $make)
        };
    }
    copy_bandwidths();
    copies_as_operations(&mut rows);
    relayout_cases!(pack, convert);
    threads(&mut rows);
    family(&mut rows);

    println!();
    println!(
        "| case | operation | vs best copy | best round | vs memcpy | fastest copy | goal | met |"
    );
    println!("|---|---|---:|---:|---:|---|---:|---|");
    for row in rows {
        let Row {
            case,
            op,
            goal,
            best,
            best_round,
            memcpy,
            winner,
        } = row;
        let (goal, met) = if goal.is_nan() {
            ("-".to_owned(), "-")
        } else {
            (
                format!("{goal:.2}"),
                if best >= goal { "yes" } else { "no" },
            )
        };
        println!(
            "| {case} | {op} | {best:.2} | {best_round:.2} | {memcpy:.2} | {winner} | {goal} | {met} |"
        );
    }
}

/// Runs `plan` cut into `threads` chunks, one scoped thread each.
fn on_threads<T: Copy + Send + Sync>(
    plan: &RelayoutPlan<'_, T>,
    threads: usize,
    src: &[T],
    dst: &mut [T],
) {
    std::thread::scope(|s| {
        for (chunk, part) in plan.chunks_mut(threads, dst).unwrap() {
            s.spawn(move || chunk.run(src, part).unwrap());
        }
    });
}

/// The thread counts the plans and the copies run on: `RELAYOUT_THREADS`
/// (comma-separated, say `1,4,8,16`), else one and every core.
fn thread_counts() -> Vec<usize> {
    if let Ok(list) = std::env::var("RELAYOUT_THREADS") {
        return list
            .split(',')
            .map(|t| match t.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => panic!("RELAYOUT_THREADS: `{t}` is not a thread count; expected a list like `1,4,8,16`"),
            })
            .collect();
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut counts = vec![1, cores];
    counts.dedup();
    counts
}

/// An operation run on as many threads as it is given.
type Threaded<'a> = &'a dyn Fn(usize);

/// Measures each of `ops` as `{name}_{threads}` on every thread count of
/// [`thread_counts`], each against the best copy on as many threads.
fn on_counts(rows: &mut Vec<Row>, case: &str, bytes: usize, ops: &[(&str, Threaded<'_>)]) {
    let counts = thread_counts();
    let runs: Vec<(String, usize, Threaded<'_>)> = ops
        .iter()
        .flat_map(|&(name, op)| counts.iter().map(move |&t| (format!("{name}_{t}"), t, op)))
        .collect();
    let mut calls: Vec<Box<dyn FnMut() + '_>> = runs
        .iter()
        .map(|&(_, threads, op)| Box::new(move || op(threads)) as Box<dyn FnMut()>)
        .collect();
    let mut ops: Vec<Op<'_>> = runs
        .iter()
        .zip(&mut calls)
        .map(|((name, threads, _), call)| {
            (name.as_str(), *threads, &mut **call as &mut dyn FnMut())
        })
        .collect();
    measure(rows, case, f64::NAN, bytes, &mut ops);
}

/// The same plans on each of [`thread_counts`] (their chunks on scoped
/// threads), each against the best copy on as many threads.
fn threads(rows: &mut Vec<Row>) {
    if wanted("threads_f32_8x128") {
        threads_tiled(rows);
    }
    // The pure transposes that `benches/README.md` sets beside HPTT's.
    for (case, from, to) in [
        (
            "threads_f32_transpose",
            "f32[4096,4096]{0,1}",
            "f32[4096,4096]{1,0}",
        ),
        (
            "threads_f32_4d_permute_untiled",
            "f32[32,64,64,128]{3,2,1,0}",
            "f32[32,64,64,128]{1,3,2,0}",
        ),
    ] {
        if wanted(case) {
            threaded_convert(rows, case, from, to);
        }
    }
}

/// `f32 T(8,128)` packed, unpacked and converted from column-major, the
/// column-major pack and the tiled 4-D permutation, on each thread count.
fn threads_tiled(rows: &mut Vec<Row>) {
    let l = parse("f32[4096,4096]{1,0:T(8,128)}").unwrap();
    let col = parse("f32[4096,4096]{0,1}").unwrap();
    let src = data(l.len(), |i| i as f32);
    let (pack, unpack, convert) = (
        l.pack_plan(0.0f32).unwrap(),
        l.unpack_plan::<f32>().unwrap(),
        col.convert_plan(&l, 0.0f32).unwrap(),
    );
    let mut storage = vec![0.0f32; l.storage_len()];
    pack.run(&src, &mut storage).unwrap();
    // Shared by the closures below, which run one at a time.
    let (out, back) = (
        RefCell::new(vec![0.0f32; l.storage_len()]),
        RefCell::new(vec![0.0f32; l.len()]),
    );
    on_counts(
        rows,
        "threads_f32_8x128",
        l.len() * 4,
        &[
            ("pack", &|t| {
                on_threads(&pack, t, black_box(&src), &mut out.borrow_mut());
            }),
            ("unpack", &|t| {
                on_threads(&unpack, t, black_box(&storage), &mut back.borrow_mut());
            }),
            ("from_column_major", &|t| {
                on_threads(&convert, t, black_box(&src), &mut out.borrow_mut());
            }),
        ],
    );
    // Into an untiled destination, whose walk has two steps to cut.
    let pack_col = col.pack_plan(0.0f32).unwrap();
    let col_out = RefCell::new(vec![0.0f32; col.storage_len()]);
    on_counts(
        rows,
        "threads_f32_column_major",
        col.len() * 4,
        &[("pack", &|t| {
            on_threads(&pack_col, t, black_box(&src), &mut col_out.borrow_mut());
        })],
    );
    drop((src, storage));
    let (from, to) = (
        parse("bf16[64,64,64,128]{3,2,1,0}").unwrap(),
        parse("bf16[64,64,64,128]{1,3,2,0:T(8,128)(2,1)}").unwrap(),
    );
    let plan = from.convert_plan(&to, 0u16).unwrap();
    let src = data(from.len(), |i| i as u16);
    let out = RefCell::new(vec![0u16; to.storage_len()]);
    on_counts(
        rows,
        "threads_bf16_4d_permute",
        from.len() * 2,
        &[("convert", &|t| {
            on_threads(&plan, t, black_box(&src), &mut out.borrow_mut());
        })],
    );
}

/// `convert_plan` from `from` to `to` on each thread count.
fn threaded_convert(rows: &mut Vec<Row>, case: &str, from: &str, to: &str) {
    let (from, to) = (parse(from).unwrap(), parse(to).unwrap());
    let plan = from.convert_plan(&to, 0.0f32).unwrap();
    let src = data(from.storage_len(), |i| i as f32);
    let out = RefCell::new(vec![0.0f32; to.storage_len()]);
    on_counts(
        rows,
        case,
        from.len() * 4,
        &[("convert", &|t| {
            on_threads(&plan, t, black_box(&src), &mut out.borrow_mut());
        })],
    );
}

/// A member's elements: what the row-major side holds, how storage is
/// reached (`pack` or `pack_bits`) and the tilings XLA gives the type on
/// TPUs, for a rank of 2 or more and for rank 1.
#[derive(Clone, Copy)]
enum Element {
    F32,
    Bf16,
    S8,
    S4,
}

impl Element {
    fn name(self) -> &'static str {
        match self {
            Element::F32 => "f32",
            Element::Bf16 => "bf16",
            Element::S8 => "s8",
            Element::S4 => "s4",
        }
    }

    /// Bytes of one logical element on the row-major side.
    fn bytes(self) -> usize {
        match self {
            Element::F32 => 4,
            Element::Bf16 => 2,
            Element::S8 | Element::S4 => 1,
        }
    }

    fn tilings(self, rank: usize) -> &'static [&'static str] {
        match (self, rank) {
            (Element::F32, 1) => &["T(1024)", "T(256)"],
            (Element::F32, _) => &["T(8,128)", "T(4,128)", "T(2,128)", "T(1,128)"],
            (Element::Bf16, 1) => &["T(1024)(128)(2,1)", "T(512)(128)(2,1)"],
            (Element::Bf16, _) => &["T(8,128)(2,1)", "T(16,128)(2,1)", "T(4,128)(2,1)"],
            (Element::S8, 1) => &["T(1024)(128)(4,1)"],
            (Element::S8, _) => &["T(8,128)(4,1)", "T(32,128)(4,1)"],
            (Element::S4, 1) => &["T(1024)(128)(8,1)E(4)"],
            (Element::S4, _) => &["T(8,128)(8,1)E(4)"],
        }
    }
}

/// A small deterministic generator (xorshift), so that a seed names the
/// same family on every machine.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.range(0, from.len() - 1)]
    }
}

/// One drawn layout of about `target` logical bytes: its text and goal.
fn draw_member(draw: &mut Draw, target: usize) -> (String, f64) {
    let element = draw.pick(&[Element::F32, Element::Bf16, Element::S8, Element::S4]);
    let rank = draw.range(1, 4);
    let tiling = draw.pick(element.tilings(rank));
    let elements = target / element.bytes();
    // The two minor dims ragged against any tile, the major ones taking
    // what is left of the size.
    let mut dims = vec![0; rank];
    let mut left = elements;
    for d in (0..rank).rev() {
        dims[d] = if d == 0 {
            left.max(1)
        } else {
            let hi = if d == rank - 1 { 6000 } else { 1500 };
            draw.range(if d == rank - 1 { 200 } else { 9 }, hi)
                .min(left)
        };
        left = (left / dims[d]).max(1);
    }
    // In order (a pack), or with the two minor dims or a dim of a 4-D
    // array moved (a permutation, as a transpose or a convolution's).
    let mut order: Vec<usize> = (0..rank).rev().collect();
    let permuted = rank > 1 && draw.range(0, 2) == 0;
    if permuted {
        if rank == 4 && draw.range(0, 1) == 0 {
            order = vec![1, 3, 2, 0];
        } else {
            order.swap(0, 1);
        }
    }
    let goal = match (permuted, element) {
        (true, _) => PERMUTED,
        (false, Element::F32 | Element::Bf16) => WHOLE,
        (false, Element::S8 | Element::S4) => NARROW,
    };
    let list = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let spec = format!(
        "{}[{}]{{{}:{tiling}}}",
        element.name(),
        list(&dims),
        list(&order)
    );
    (spec, goal)
}

/// The family: each member packed and unpacked against the copies (as the
/// cases are), then per goal the worst and the median of every operation's
/// fraction of the best copy.
fn family(rows: &mut Vec<Row>) {
    if !wanted("family") {
        return;
    }
    let count = std::env::var("RELAYOUT_FAMILY").map_or(24, |n| n.parse().unwrap());
    let seed = std::env::var("RELAYOUT_SEED").map_or(0x9e37_79b9_7f4a_7c15, |n| n.parse().unwrap());
    let mut draw = Draw(seed | 1);
    let first = rows.len();
    for k in 0..count {
        let (spec, goal) = draw_member(&mut draw, 64 * MIB);
        let case = format!("family_{k:02} {spec}");
        println!("# {case}");
        let l = parse(&spec).unwrap();
        if l.element_bits() < 8 {
            pack_case::<i8, u8>(
                rows,
                (&case, &spec, goal),
                |i| (i % 16) as i8 - 8,
                |l, src, dst| {
                    l.pack_bits(src, dst, xla_layout::Options::default())
                        .unwrap();
                },
                |l, src, dst| {
                    l.unpack_bits(src, dst, xla_layout::Threads::default())
                        .unwrap();
                },
                Layout::storage_bytes,
            );
        } else {
            match l.element_bits() {
                32 => family_member::<f32>(rows, &case, &spec, goal, |i| i as f32),
                16 => family_member::<u16>(rows, &case, &spec, goal, |i| i as u16),
                _ => family_member::<i8>(rows, &case, &spec, goal, |i| i as i8),
            }
        }
    }
    for (goal, what) in [(WHOLE, "whole"), (NARROW, "narrow"), (PERMUTED, "permuted")] {
        let mut got: Vec<(f64, String)> = rows[first..]
            .iter()
            .filter(|r| r.goal.to_bits() == goal.to_bits())
            .map(|r| (r.best, format!("{} {}", r.case, r.op)))
            .collect();
        if got.is_empty() {
            continue;
        }
        got.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!(
            "family {what} goal {goal:.2} operations {} worst {:.2} median {:.2} worst_case {}",
            got.len(),
            got[0].0,
            got[got.len() / 2].0,
            got[0].1
        );
    }
}

/// [`pack_case`] for a member of whole-byte elements `T`.
fn family_member<T: Copy + Default + Send + Sync>(
    rows: &mut Vec<Row>,
    case: &str,
    spec: &str,
    goal: f64,
    make: impl Fn(usize) -> T,
) {
    pack_case::<T, T>(
        rows,
        (case, spec, goal),
        make,
        |l, src, dst| l.pack(src, dst, xla_layout::Options::default()).unwrap(),
        |l, src, dst| l.unpack(src, dst, xla_layout::Threads::default()).unwrap(),
        Layout::storage_len,
    );
}
