//! Cost of `bitcast::reshape`, `transpose` and `reshape_layout` on large
//! layouts: the answer comes from the layouts' digits, so a pair of
//! `bf16[8192,8192]` layouts (67 million elements) should take
//! microseconds, and the same pair scaled down or up should cost the same.
//!
//! Irregular tiles (`T(3,4)(2,3)`) are compared on a tile-sized box of
//! positions, so their cost too stays the same as the array grows.
//!
//! `cargo bench --bench bitcast`; compare the `fastest` column on a busy
//! machine.

use divan::{black_box, Bencher};
use xla_layout::{bitcast, parse, Layout};

fn main() {
    divan::main();
}

fn pair(from: &str, to: &str) -> (Layout, Layout) {
    (parse(from).unwrap(), parse(to).unwrap())
}

/// Pairs of `n x n` bf16 TPU layouts (`T(8,128)(2,1)`): a bitcast that
/// splits the major dim, and a retiling whose first moving element is found.
const SIDES: [usize; 3] = [1024, 8192, 65536];

#[divan::bench(args = SIDES)]
fn reshape_bitcast(bencher: Bencher, n: usize) {
    let (from, to) = pair(
        &format!("bf16[{n},{n}]{{1,0:T(8,128)(2,1)}}"),
        &format!("bf16[{},8,{n}]{{2,1,0:T(8,128)(2,1)}}", n / 8),
    );
    assert_eq!(bitcast::reshape(&from, &to), Ok(()));
    bencher.bench(|| bitcast::reshape(black_box(&from), black_box(&to)));
}

#[divan::bench(args = SIDES)]
fn reshape_moved(bencher: Bencher, n: usize) {
    let (from, to) = pair(
        &format!("bf16[{n},{n}]{{1,0:T(8,128)(2,1)}}"),
        &format!("bf16[{n},{n}]{{1,0:T(16,128)(2,1)}}"),
    );
    assert!(bitcast::reshape(&from, &to).is_err());
    bencher.bench(|| bitcast::reshape(black_box(&from), black_box(&to)));
}

#[divan::bench(args = SIDES)]
fn transpose_bitcast(bencher: Bencher, n: usize) {
    let (from, to) = pair(
        &format!("bf16[{n},{}]{{1,0:T(8,128)(2,1)}}", n / 2),
        &format!("bf16[{},{n}]{{0,1:T(8,128)(2,1)}}", n / 2),
    );
    assert_eq!(bitcast::transpose(&from, &to, &[1, 0]), Ok(()));
    bencher.bench(|| bitcast::transpose(black_box(&from), black_box(&to), black_box(&[1, 0])));
}

/// Rows that the tiles leave ragged (8190 in tiles of 128): blocks of
/// digits compared whole.
#[divan::bench]
fn reshape_ragged(bencher: Bencher) {
    let (from, to) = pair(
        "f32[8190,8190]{1,0:T(8,128)}",
        "f32[1,8190,8190]{2,1,0:T(8,128)}",
    );
    assert_eq!(bitcast::reshape(&from, &to), Ok(()));
    bencher.bench(|| bitcast::reshape(black_box(&from), black_box(&to)));
}

#[divan::bench]
fn reshape_layout(bencher: Bencher) {
    let from = parse("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}").unwrap();
    assert!(bitcast::reshape_layout(&from, &[8, 1280, 16384]).is_some());
    bencher.bench(|| bitcast::reshape_layout(black_box(&from), black_box(&[8, 1280, 16384])));
}

/// Irregular tiles, `T(3,4)(2,3)` (3 does not divide the remainder of 4 it
/// splits), on `3000k x 4000k` arrays with the major dim split: no sums of
/// digits, so compared on a 3 by 4 box and one period past it along each
/// coordinate, whatever `k`.
#[divan::bench(args = [1, 10, 100])]
fn reshape_irregular(bencher: Bencher, k: usize) {
    let (from, to) = pair(
        &format!("f32[{},{}]{{1,0:T(3,4)(2,3)}}", 3000 * k, 4000 * k),
        &format!("f32[{},3,{}]{{2,1,0:T(3,4)(2,3)}}", 1000 * k, 4000 * k),
    );
    assert_eq!(bitcast::reshape(&from, &to), Ok(()));
    bencher.bench(|| bitcast::reshape(black_box(&from), black_box(&to)));
}

/// Untiled rows of 3001 and 4001 read as 4001 and 3001 (dims that cross
/// at no common divisor) over irregular minor tiles: the crossing dims
/// step as one digit, so this bitcast too is a tile-sized box.
#[divan::bench]
fn reshape_irregular_crossing(bencher: Bencher) {
    let (from, to) = pair(
        "f32[3001,4001,7,10]{3,2,1,0:T(3,4)(2,3)}",
        "f32[4001,3001,7,10]{3,2,1,0:T(3,4)(2,3)}",
    );
    assert_eq!(bitcast::reshape(&from, &to), Ok(()));
    bencher.bench(|| bitcast::reshape(black_box(&from), black_box(&to)));
}
