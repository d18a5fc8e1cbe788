//! The program `benches/relayout_ab.py` builds: two builds of
//! `layout-runtime`, `a` (the base) and `b` (the working tree), run on the
//! same buffers in one process, round after round, each round timing
//! `memcpy` of the same logical bytes, then `a` and `b` in alternating
//! order. Not a target of this package (Cargo finds only `main.rs` in a
//! directory of `benches/`): the script copies it into a crate of its own.
//!
//! Between processes the relayout bench's figures move by a third on a
//! shared host (each process gets other physical pages, and the host other
//! loads); within one process, on the same pages, two builds compare to a
//! few percent. `b / a` is the ratio of medians: below 1, `b` is faster.
//!
//! `ab CASES ROUNDS`: `CASES` a comma-separated list of parts of case
//! names (`all` for every case), `ROUNDS` the rounds per operation. The
//! cases are the bench's (`benches/common/relayout_cases.rs`).

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

// The path holds both here and where the script copies this file (`src/`
// of its crate, with `common/` beside `src/`).
#[macro_use]
#[path = "../common/relayout_cases.rs"]
mod relayout_cases;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One operation of a case, as each build runs it.
struct Op<'a> {
    name: &'a str,
    a: Box<dyn FnMut() + 'a>,
    b: Box<dyn FnMut() + 'a>,
}

/// Times each operation `rounds` times against `memcpy` of `bytes` and
/// prints one line per operation.
fn run(case: &str, bytes: usize, rounds: usize, ops: Vec<Op>) {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    for mut op in ops {
        let (mut copy, mut a, mut b) = (vec![], vec![], vec![]);
        let time = |f: &mut dyn FnMut(), into: &mut Vec<f64>| {
            let t = Instant::now();
            f();
            into.push(t.elapsed().as_secs_f64());
        };
        // Each side once untimed: the buffers' pages are touched before
        // the first round, which would charge them to whichever ran first.
        (op.a)();
        (op.b)();
        for round in 0..rounds {
            time(&mut || dst.copy_from_slice(black_box(&src)), &mut copy);
            black_box(&mut dst);
            if round % 2 == 0 {
                time(&mut op.a, &mut a);
                time(&mut op.b, &mut b);
            } else {
                time(&mut op.b, &mut b);
                time(&mut op.a, &mut a);
            }
        }
        let (copy, a, b) = (median(copy), median(a), median(b));
        println!(
            "{case} {} memcpy_ms {:.2} a_ms {:.2} a_ratio {:.3} b_ms {:.2} b_ratio {:.3} b_over_a {:.3}",
            op.name,
            copy * 1e3,
            a * 1e3,
            copy / a,
            b * 1e3,
            copy / b,
            b / a,
        );
    }
}

/// An [`Op`] whose body `$body` runs once with `$side` bound to `a`'s
/// values and once with `b`'s: the two builds' types differ, so the body
/// is spelled once and expanded twice.
macro_rules! op {
    ($name:expr, |$side:pat_param| $body:expr, $a:expr, $b:expr) => {
        Op {
            name: $name,
            a: Box::new(|| {
                let $side = $a;
                $body
            }),
            b: Box::new(|| {
                let $side = $b;
                $body
            }),
        }
    };
}

/// Pack and unpack of a layout whose logical elements are `$t` and whose
/// storage is `$st`, through `$pack` and `$unpack` (`pack` or `pack_bits`
/// and their inverses), `$storage` storage elements long; `b`'s results
/// checked against `a`'s.
macro_rules! pack_case {
    ($wanted:expr, $rounds:expr, $case:expr, $spec:expr, ($t:ty, $st:ty), $make:expr,
     ($pack:ident, $unpack:ident, $storage:ident)) => {
        if $wanted($case) {
            let (la, lb) = (a::parse($spec).unwrap(), b::parse($spec).unwrap());
            let src: Vec<$t> = (0..la.len()).map($make).collect();
            let mut storage = vec![<$st>::default(); la.$storage()];
            la.$pack(&src, &mut storage, Default::default()).unwrap();
            let out = RefCell::new(vec![<$st>::default(); la.$storage()]);
            let back = RefCell::new(vec![<$t>::default(); la.len()]);
            let ops = vec![
                op!(
                    "pack",
                    |l| l
                        .$pack(black_box(&src), &mut out.borrow_mut(), Default::default())
                        .unwrap(),
                    &la,
                    &lb
                ),
                op!(
                    "unpack",
                    |l| l
                        .$unpack(
                            black_box(&storage),
                            &mut back.borrow_mut(),
                            Default::default()
                        )
                        .unwrap(),
                    &la,
                    &lb
                ),
            ];
            run($case, la.len() * std::mem::size_of::<$t>(), $rounds, ops);
            lb.$pack(&src, &mut out.borrow_mut(), Default::default())
                .unwrap();
            assert!(*out.borrow() == storage, "{}: b packs otherwise", $case);
            lb.$unpack(&storage, &mut back.borrow_mut(), Default::default())
                .unwrap();
            assert!(*back.borrow() == src, "{}: b unpacks otherwise", $case);
        }
    };
}

/// `convert` there and back; `b`'s results checked against `a`'s.
macro_rules! convert_case {
    ($wanted:expr, $rounds:expr, $case:expr, ($from:expr, $to:expr), $t:ty, $make:expr) => {
        if $wanted($case) {
            let (fa, ta) = (a::parse($from).unwrap(), a::parse($to).unwrap());
            let (fb, tb) = (b::parse($from).unwrap(), b::parse($to).unwrap());
            let src: Vec<$t> = (0..fa.storage_len()).map($make).collect();
            let mut there = vec![<$t>::default(); ta.storage_len()];
            fa.convert(&src, &ta, &mut there, Default::default())
                .unwrap();
            let mut back_a = vec![<$t>::default(); fa.storage_len()];
            ta.convert(&there, &fa, &mut back_a, Default::default())
                .unwrap();
            let out = RefCell::new(vec![<$t>::default(); ta.storage_len()]);
            let back = RefCell::new(vec![<$t>::default(); fa.storage_len()]);
            // One operation from `input` into `output`, each build's pair of
            // layouts in the order it converts.
            macro_rules! convert {
                ($name:expr, $input:expr, $output:expr, $a:expr, $b:expr) => {
                    op!(
                        $name,
                        |(from, to)| from
                            .convert(
                                black_box(&$input),
                                to,
                                &mut $output.borrow_mut(),
                                Default::default()
                            )
                            .unwrap(),
                        $a,
                        $b
                    )
                };
            }
            let ops = vec![
                convert!("convert", src, out, (&fa, &ta), (&fb, &tb)),
                convert!("convert_back", there, back, (&ta, &fa), (&tb, &fb)),
            ];
            run($case, fa.len() * std::mem::size_of::<$t>(), $rounds, ops);
            fb.convert(&src, &tb, &mut out.borrow_mut(), Default::default())
                .unwrap();
            assert!(*out.borrow() == there, "{}: b converts otherwise", $case);
            tb.convert(&there, &fb, &mut back.borrow_mut(), Default::default())
                .unwrap();
            assert!(
                *back.borrow() == back_a,
                "{}: b converts back otherwise",
                $case
            );
        }
    };
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cases = args.next().unwrap_or_else(|| "all".into());
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("rounds"));
    let wanted = |case: &str| {
        cases
            .split(',')
            .any(|part| part == "all" || case.contains(part))
    };
    // The relayout bench's cases; the goals are the bench's business.
    macro_rules! pack {
        ($case:expr, $spec:expr, $goal:ident, $types:tt, $methods:tt, $make:expr) => {
            pack_case!(wanted, rounds, $case, $spec, $types, $make, $methods)
        };
    }
    macro_rules! convert {
        ($case:expr, $from:expr, $to:expr, $t:ty, $make:expr) => {
            convert_case!(wanted, rounds, $case, ($from, $to), $t, $make)
        };
    }
    relayout_cases!(pack, convert);
}
