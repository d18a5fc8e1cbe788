//! Copy kernels for whole-element storage: a 2-D strided block at a time.
//!
//! The shapes that matter get their own loops, written so the compiler can
//! vectorize them: rows of contiguous elements (`T(8,128)`: 128 values of
//! one row), rows interleaved element by element (`(2,1)` and `(4,1)` pack
//! 2 or 4 rows into one word), and small transposes (column-major sources).

use super::simd;
use super::walk::{Axis, Visitor, UNIT};

/// A 2-D copy: `dst[d + i*da + j*db] = src[s + i*sa + j*sb]` for
/// `i < na`, `j < nb`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block {
    pub(crate) na: usize,
    pub(crate) nb: usize,
    pub(crate) da: usize,
    pub(crate) db: usize,
    pub(crate) sa: usize,
    pub(crate) sb: usize,
}

impl Block {
    /// The copy of a walk's block `a` x `b` into the walked storage
    /// (packing: the other array is the source).
    fn into_walked(a: Axis, b: Axis) -> Block {
        Block {
            na: a.count,
            nb: b.count,
            da: a.walk,
            db: b.walk,
            sa: a.other,
            sb: b.other,
        }
    }

    /// The copy of a walk's block `a` x `b` out of the walked storage
    /// (unpacking: the other array is the destination).
    fn from_walked(a: Axis, b: Axis) -> Block {
        Block::into_walked(a, b).swapped_sides()
    }

    /// The same copy with source and destination strides exchanged.
    fn swapped_sides(self) -> Block {
        Block {
            da: self.sa,
            db: self.sb,
            sa: self.da,
            sb: self.db,
            ..self
        }
    }

    /// The same copy with `i` and `j` swapped.
    fn transposed(self) -> Block {
        Block {
            na: self.nb,
            nb: self.na,
            da: self.db,
            db: self.da,
            sa: self.sb,
            sb: self.sa,
        }
    }
}

pub(crate) fn copy_block<T: Copy>(dst: &mut [T], d: usize, src: &[T], s: usize, b: Block) {
    if b.na == 0 || b.nb == 0 {
        return;
    }
    if b.db == 1 && b.sb == 1 {
        if b.na == 1 || (b.da == b.nb && b.sa == b.nb) {
            let n = b.na * b.nb;
            dst[d..d + n].copy_from_slice(&src[s..s + n]);
        } else {
            for i in 0..b.na {
                dst[d + i * b.da..][..b.nb].copy_from_slice(&src[s + i * b.sa..][..b.nb]);
            }
        }
        return;
    }
    // Vector transposes for 4-byte elements, except where groups of 2, 4
    // or 8 sit side by side (the interleaving loops do those).
    let adjacent = |n: usize, stride: usize| matches!(n, 2 | 4 | 8) && stride == n;
    if simd::VECTOR_TRANSPOSE
        && core::mem::size_of::<T>() == 4
        && ((b.db == 1 && b.sa == 1 && !adjacent(b.nb, b.da) && !adjacent(b.na, b.sb))
            || (b.da == 1 && b.sb == 1 && !adjacent(b.nb, b.db) && !adjacent(b.na, b.sa)))
    {
        transpose(dst, d, src, s, b);
        return;
    }
    if b.db == 1 && b.sa == 1 {
        // dst[d + i*da + j] = src[s + i + j*sb]
        match (b.nb, b.na) {
            (2, _) => interleave2(&mut dst[d..], b.da, &src[s..], b.sb, b.na),
            (4, _) => interleave4(&mut dst[d..], b.da, &src[s..], b.sb, b.na),
            (8, _) => interleave8(&mut dst[d..], b.da, &src[s..], b.sb, b.na),
            (_, 2) => deinterleave2(&mut dst[d..], b.da, &src[s..], b.sb, b.nb),
            (_, 4) => deinterleave4(&mut dst[d..], b.da, &src[s..], b.sb, b.nb),
            (_, 8) => deinterleave8(&mut dst[d..], b.da, &src[s..], b.sb, b.nb),
            _ => transpose(dst, d, src, s, b),
        }
        return;
    }
    if b.da == 1 && b.sb == 1 {
        // dst[d + i + j*db] = src[s + i*sa + j]
        match (b.nb, b.na) {
            (2, _) => deinterleave2(&mut dst[d..], b.db, &src[s..], b.sa, b.na),
            (4, _) => deinterleave4(&mut dst[d..], b.db, &src[s..], b.sa, b.na),
            (8, _) => deinterleave8(&mut dst[d..], b.db, &src[s..], b.sa, b.na),
            (_, 2) => interleave2(&mut dst[d..], b.db, &src[s..], b.sa, b.nb),
            (_, 4) => interleave4(&mut dst[d..], b.db, &src[s..], b.sa, b.nb),
            (_, 8) => interleave8(&mut dst[d..], b.db, &src[s..], b.sa, b.nb),
            _ => transpose(dst, d, src, s, b),
        }
        return;
    }
    for i in 0..b.na {
        for j in 0..b.nb {
            dst[d + i * b.da + j * b.db] = src[s + i * b.sa + j * b.sb];
        }
    }
}

/// [`copy_block`] where each position starts a unit of `c` contiguous
/// elements both sides (strides in elements). Units of 4 bytes transpose in
/// vector registers; the rest, and other units, go one unit at a time.
pub(crate) fn copy_units<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
    width: usize,
) {
    if b.na == 0 || b.nb == 0 {
        return;
    }
    // Oriented so the destination runs along `j` and the source along `i`.
    let t = if b.db == width && b.sa == width {
        Some(b)
    } else if b.da == width && b.sb == width {
        Some(b.transposed())
    } else {
        None
    };
    let (ti, tj) = match t {
        Some(t) if width * core::mem::size_of::<T>() == 4 => {
            simd::transpose_units(dst, d, t.da, src, s, t.sb, (t.na, t.nb))
        }
        _ => (0, 0),
    };
    let t = t.unwrap_or(b);
    let mut one = |i: usize, j: usize| {
        dst[d + i * t.da + j * t.db..][..width]
            .copy_from_slice(&src[s + i * t.sa + j * t.sb..][..width]);
    };
    for i in 0..ti {
        for j in tj..t.nb {
            one(i, j);
        }
    }
    for i in ti..t.na {
        for j in 0..t.nb {
            one(i, j);
        }
    }
}

/// [`copy_units`] of `width` elements (a plain [`copy_block`] for 1), writing
/// the destination with streaming stores: rows contiguous on both sides go
/// straight from the source; others are put together in `stage` first, a
/// few rows at a time. Rows shorter than 512 bytes, or longer than
/// `stage`, are copied plainly.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stream_block<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
    width: usize,
    stage: &mut [T],
    in_order: bool,
) {
    let plain = |dst: &mut [T], d: usize, src: &[T], s: usize, b: Block| {
        copy_any(dst, d, src, s, b, width, &mut [], false);
    };
    // Oriented so that the destination's rows run along `j`.
    let rows = if b.db == width || b.nb == 1 {
        b
    } else if b.da == width || b.na == 1 {
        b.transposed()
    } else {
        return plain(dst, d, src, s, b);
    };
    let rows = Block { db: width, ..rows };
    if width == 1 && stream_interleaved(dst, d, src, s, rows) {
        return;
    }
    let len = rows.nb * width;
    let per_stage = stage.len() / len.max(1);
    // Rows back to back, in the order the walk writes the destination,
    // form one run: stream all of it, lines split between rows included.
    // Rows with gaps between them (padding written later) stream whole
    // lines only (measured: streaming the split lines too slowed the 4-D
    // permutation, 0.3 to 0.2 of `memcpy`).
    let stream_copy = if in_order && rows.da == len {
        simd::stream_copy_in_order
    } else {
        simd::stream_copy
    };
    if rows.da == len && rows.sb != width && rows.na > 1 && per_stage > 0 {
        // The destination rows lie back to back (a whole `s8 (4,1)` tile
        // of four 4-byte rows, say): one run, however short each row is,
        // put together as many rows at a time as the stage holds.
        if rows.na * len * core::mem::size_of::<T>() < 64 {
            return plain(dst, d, src, s, b);
        }
        for i0 in (0..rows.na).step_by(per_stage) {
            let m = per_stage.min(rows.na - i0);
            let staged = Block { na: m, ..rows };
            plain(stage, 0, src, s + i0 * rows.sa, staged);
            stream_copy(&mut dst[d + i0 * len..][..m * len], &stage[..m * len]);
        }
        return;
    }
    // Rows apart from each other shorter than this go plainly: a `Vec`
    // starts 16 bytes into a line, so their partial end lines, a third to
    // two thirds of the lines, are read from memory anyway, and the stage
    // costs more than streaming the rest saves (measured: `s8 (4,1)` unpack,
    // rows of 128 bytes, 0.45 to 0.57 of `memcpy`; `bf16 (2,1)`, 256 bytes,
    // 0.65 to 0.74).
    if rows.na == 0 || len * core::mem::size_of::<T>() < SHORT_ROW_BYTES {
        return plain(dst, d, src, s, b);
    }
    if rows.sb != width && per_stage < STAGED_ROWS && rows.na > per_stage {
        // Rows too long to stage a few at a time: slabs of columns that fit
        // (a whole-array transpose, say), each still a cache line wide.
        let cols = stage.len() / STAGED_ROWS / width;
        if cols * width * core::mem::size_of::<T>() < 64 {
            return plain(dst, d, src, s, b);
        }
        for j0 in (0..rows.nb).step_by(cols) {
            let slab = Block {
                nb: cols.min(rows.nb - j0),
                ..rows
            };
            stream_block(
                dst,
                d + j0 * width,
                src,
                s + j0 * rows.sb,
                slab,
                width,
                stage,
                in_order,
            );
        }
        return;
    }
    if rows.sb == width {
        for i in 0..rows.na {
            stream_copy(
                &mut dst[d + i * rows.da..][..len],
                &src[s + i * rows.sa..][..len],
            );
        }
        return;
    }
    for i0 in (0..rows.na).step_by(per_stage) {
        let m = per_stage.min(rows.na - i0);
        let staged = Block {
            na: m,
            da: len,
            ..rows
        };
        plain(stage, 0, src, s + i0 * rows.sa, staged);
        for (r, row) in stage[..m * len].chunks_exact(len).enumerate() {
            stream_copy(&mut dst[d + (i0 + r) * rows.da..][..len], row);
        }
    }
}

/// `(4,1)` tiles of bytes and `(2,1)` tiles of 2-byte elements: a
/// destination run (along `j`, rows back to back) that groups `k` rows of
/// the source, moved by kernels that write it with streaming stores
/// straight from registers, with no stage in between. `false` (nothing
/// written) for other blocks. The way back has no such kernel: streaming
/// 16 bytes at a time into four rows far apart measured slower than
/// staging whole rows (`s8` unpack 0.4 against 0.5 of `memcpy`).
fn stream_interleaved<T: Copy>(dst: &mut [T], d: usize, src: &[T], s: usize, rows: Block) -> bool {
    let k = match core::mem::size_of::<T>() {
        1 => 4,
        2 => 2,
        _ => return false,
    };
    if rows.db != 1 || rows.sa != 1 || rows.nb != k || rows.da != k {
        return false;
    }
    // dst[d + i*k + j] = src[s + i + j*sb]: k rows into groups.
    let done = simd::interleave_stream(&mut dst[d..][..rows.na * k], &src[s..], rows.sb, rows.na);
    if done == 0 {
        return false;
    }
    let rest = Block {
        na: rows.na - done,
        ..rows
    };
    copy_block(dst, d + done * k, src, s + done, rest);
    true
}

/// See [`stream_block`].
const SHORT_ROW_BYTES: usize = 512;

/// Rows a stage should hold at least: fewer, and the source side of a
/// transpose reads too little of each cache line per pass.
const STAGED_ROWS: usize = 8;

/// `dst.fill(fill)` with streaming stores, a stage's worth at a time, for
/// runs of at least a cache line.
pub(crate) fn stream_fill<T: Copy>(dst: &mut [T], fill: T, stage: &mut [T]) {
    if stage.is_empty() || core::mem::size_of_val(dst) < 64 {
        dst.fill(fill);
        return;
    }
    let n = stage.len().min(dst.len());
    stage[..n].fill(fill);
    for part in dst.chunks_mut(n) {
        simd::stream_copy(part, &stage[..part.len()]);
    }
}

/// `a.iter().zip(b.iter().zip(...))` over row slices.
macro_rules! zip_rows {
    ($a:expr) => { $a.iter() };
    ($a:expr, $($rest:expr),+) => { $a.iter().zip(zip_rows!($($rest),+)) };
}

/// The pattern of one item of `zip_rows!`: `(a, (b, (...)))`.
macro_rules! row_items {
    ($a:ident) => { $a };
    ($a:ident, $($rest:ident),+) => { ($a, row_items!($($rest),+)) };
}

/// Columns per step of the fixed-size deinterleaving loop.
const W: usize = 16;

/// Moving K rows to groups of K and back, for K = 2, 4, 8: `(2,1)`-style
/// tiles (groups adjacent, stride K) and transposes of K-row tiles (groups
/// `gs` apart, as in a column-major array). The loops carry no bounds checks,
/// so the compiler turns them into vector shuffles; which form it vectorizes
/// best depends on K and the element size (measured on x86-64 with the
/// default target features), hence the variants.
macro_rules! interleavers {
    ($k:literal, $inter:ident, $deinter:ident, $($j:literal => $r:ident),+) => {
        /// `out[x*gs + j] = src[j*pitch + x]`: K rows of `n` become `n` groups of K.
        fn $inter<T: Copy>(out: &mut [T], gs: usize, src: &[T], pitch: usize, n: usize) {
            if $k == 4 && gs == 4 && pitch >= n {
                let done = simd::interleave4_bytes(out, src, pitch, n);
                if done > 0 {
                    return $inter(&mut out[4 * done..], gs, &src[done..], pitch, n - done);
                }
            }
            $( let $r = &src[$j * pitch..$j * pitch + n]; )+
            if gs != $k {
                for x in 0..n {
                    out[x * gs..x * gs + $k].copy_from_slice(&[$( $r[x] ),+]);
                }
            } else if $k == 2 || ($k == 4 && core::mem::size_of::<T>() == 1) {
                for (group, row_items!($($r),+)) in out.chunks_exact_mut($k).zip(zip_rows!($($r),+)) {
                    group.copy_from_slice(&[$( *$r ),+]);
                }
            } else {
                let out = &mut out[..n * $k];
                for x in 0..n {
                    $( out[x * $k + $j] = $r[x]; )+
                }
            }
        }

        /// `dst[j*pitch + x] = input[x*gs + j]`: the inverse of the above.
        fn $deinter<T: Copy>(dst: &mut [T], pitch: usize, input: &[T], gs: usize, n: usize) {
            if gs == $k && pitch >= n {
                let done = simd::deinterleave_groups($k, dst, pitch, input, n);
                if done > 0 {
                    return $deinter(&mut dst[done..], pitch, &input[$k * done..], gs, n - done);
                }
            }
            if gs != $k {
                match split_rows::<T, $k>(dst, pitch, n) {
                    Some([$($r),+]) => {
                        for x in 0..n {
                            let group = &input[x * gs..x * gs + $k];
                            $( $r[x] = group[$j]; )+
                        }
                    }
                    None => {
                        for x in 0..n {
                            for j in 0..$k {
                                dst[j * pitch + x] = input[x * gs + j];
                            }
                        }
                    }
                }
                return;
            }
            let whole = if $k == 2 { 0 } else { n / W * W };
            for j in 0..$k {
                let row = &mut dst[j * pitch..j * pitch + n];
                for (out, chunk) in row[..whole].chunks_exact_mut(W).zip(input.chunks_exact($k * W)) {
                    if let (Ok(out), Ok(groups)) = (<&mut [T; W]>::try_from(out), <&[T; $k * W]>::try_from(chunk)) {
                        for (i, slot) in out.iter_mut().enumerate() {
                            *slot = groups[i * $k + j];
                        }
                    }
                }
                for (slot, group) in row[whole..].iter_mut().zip(input[whole * $k..].chunks_exact($k)) {
                    *slot = group[j];
                }
            }
        }
    };
}

/// K disjoint rows `dst[j*pitch..j*pitch + n]`, if they fit without overlap.
fn split_rows<T, const K: usize>(
    mut dst: &mut [T],
    pitch: usize,
    n: usize,
) -> Option<[&mut [T]; K]> {
    if pitch < n || dst.len() < (K - 1) * pitch + n {
        return None;
    }
    let mut rows: [&mut [T]; K] = core::array::from_fn(|_| &mut [][..]);
    for (j, row) in rows.iter_mut().enumerate() {
        let (head, tail) =
            core::mem::take(&mut dst).split_at_mut(if j + 1 < K { pitch } else { n });
        *row = &mut head[..n];
        dst = tail;
    }
    Some(rows)
}

interleavers!(2, interleave2, deinterleave2, 0 => r0, 1 => r1);
interleavers!(4, interleave4, deinterleave4, 0 => r0, 1 => r1, 2 => r2, 3 => r3);
interleavers!(8, interleave8, deinterleave8, 0 => r0, 1 => r1, 2 => r2, 3 => r3, 4 => r4, 5 => r5, 6 => r6, 7 => r7);

/// A block where one side is contiguous along `i` and the other along `j`,
/// in 8x8 tiles so both sides touch few cache lines at a time.
fn transpose<T: Copy>(dst: &mut [T], d: usize, src: &[T], s: usize, b: Block) {
    // Orient it so the source runs along i and the destination along j.
    let b = if b.sa == 1 && b.db == 1 {
        b
    } else {
        b.transposed()
    };
    let (ti, tj) = match simd::transpose32(dst, d, b.da, src, s, b.sb, (b.na, b.nb)) {
        (0, 0) => portable_transpose(dst, d, src, s, b),
        done => done,
    };
    let edge = |dst: &mut [T], is: core::ops::Range<usize>, js: core::ops::Range<usize>| {
        for i in is {
            for j in js.clone() {
                dst[d + i * b.da + j * b.db] = src[s + i * b.sa + j * b.sb];
            }
        }
    };
    edge(dst, 0..ti, tj..b.nb);
    edge(dst, ti..b.na, 0..b.nb);
}

/// The 8x8 tiles of [`transpose`] in plain loops: the rows and columns done.
fn portable_transpose<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
) -> (usize, usize) {
    const TILE: usize = 8;
    let (ti, tj) = (b.na / TILE * TILE, b.nb / TILE * TILE);
    for i0 in (0..ti).step_by(TILE) {
        for j0 in (0..tj).step_by(TILE) {
            let mut tile = [[src[s]; TILE]; TILE];
            for (jj, column) in tile.iter_mut().enumerate() {
                let from = s + i0 + (j0 + jj) * b.sb;
                column.copy_from_slice(&src[from..from + TILE]);
            }
            for ii in 0..TILE {
                let to = d + (i0 + ii) * b.da + j0;
                for (slot, column) in dst[to..to + TILE].iter_mut().zip(&tile) {
                    *slot = column[ii];
                }
            }
        }
    }
    (ti, tj)
}

/// The outermost digit of a 3-D copy: `count` values, `d` elements apart
/// in the destination and `s` in the source.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outer {
    pub(crate) count: usize,
    pub(crate) d: usize,
    pub(crate) s: usize,
}

/// Units down a column of the source from which [`stream_lines`] puts its
/// tiles on the column's lines.
const LONG_COLUMNS: usize = 256;

/// Units along the source's runs from which [`stream_lines`] takes a block.
const LONG_RUNS: usize = 64;

/// Tiles ahead along the inner loop of [`stream_lines`] whose source lines
/// are asked for.
const PREFETCH_TILES: usize = 2;

/// Tiles in a band from which [`stream_lines`] runs bands in one call
/// without prefetching: the hardware's prefetcher follows streams that
/// long, and shorter bands (a `T(8,128)` tile's 8 tiles across, on the way
/// back to column-major) need each tile to ask for the lines of the tile
/// [`PREFETCH_TILES`] on, into the next band (measured there: 23.5-24.2 ms
/// in one call without against 17.8-18.8 ms tile by tile with it; all the
/// bands in one call with it, 0.84-0.93 of the time tile by tile; see
/// `benches/README.md`).
const LONG_BAND: usize = 32;

/// The row side of [`stream_lines`]: row `i` starts `i / na * outer + i %
/// na * step` units in.
#[derive(Clone, Copy)]
struct Rows16 {
    na: usize,
    outer: usize,
    step: usize,
    /// 16 rows on: rows past whole groups, what that adds without passing
    /// a group's end, and what passing one adds more.
    rem: usize,
    skip: usize,
    carry: usize,
}

/// The starts of 16 consecutive rows, with each row's place in its group
/// of `na`.
#[derive(Clone, Copy)]
struct At16 {
    off: [usize; 16],
    r: [usize; 16],
}

impl Rows16 {
    fn new(na: usize, outer: usize, step: usize) -> Rows16 {
        Rows16 {
            na,
            outer,
            step,
            rem: 16 % na,
            skip: (16 / na * outer).wrapping_add(16 % na * step),
            carry: outer.wrapping_sub(na * step),
        }
    }

    /// The 16 rows at `at`, `base` further on, as [`simd::Quarters`], and
    /// what every row's start gains from one band of 16 rows to the next,
    /// where every band from `at` on has its rows in quarters and one
    /// amount for all: rows all `step` apart (one group, or groups back to
    /// back), or groups of 4, 8 or 16 rows whose quarters `at` puts inside
    /// them.
    fn steady(self, at: &At16, base: usize) -> Option<(simd::Quarters, usize)> {
        if self.outer == self.na.wrapping_mul(self.step) {
            let first = base.wrapping_add(at.off[0]);
            Some((
                simd::Quarters::even(first, self.step),
                self.step.wrapping_mul(16),
            ))
        } else if matches!(self.na, 4 | 8 | 16) && at.r[0] % 4 == 0 {
            match self.runs(at, base) {
                Runs::Quarters(q) => Some((q, (16 / self.na).wrapping_mul(self.outer))),
                Runs::Each(_) => None,
            }
        } else {
            None
        }
    }

    fn at(self, i: usize) -> At16 {
        At16 {
            off: core::array::from_fn(|c| {
                (i + c) / self.na * self.outer + (i + c) % self.na * self.step
            }),
            r: core::array::from_fn(|c| (i + c) % self.na),
        }
    }

    /// The 16 rows at `at`, `base` further on: [`simd::Quarters`] where
    /// each quarter lies inside one group (so its rows are `step` apart),
    /// else each row's start.
    fn runs(self, at: &At16, base: usize) -> Runs {
        if (0..4).all(|q| at.r[4 * q] + 4 <= self.na) {
            Runs::Quarters(simd::Quarters {
                bases: core::array::from_fn(|q| base.wrapping_add(at.off[4 * q])),
                step: self.step,
            })
        } else {
            Runs::Each(at.off.map(|r| base.wrapping_add(r)))
        }
    }

    /// The same rows 16 on, without dividing: `16 / na` whole groups and
    /// `16 % na` rows, plus one group more where a row passes its group's
    /// end. Wrapping, since the outer stride may be less than a group's
    /// span and the offsets past the last band are never used.
    fn advance(self, at: &mut At16) {
        for (off, r) in at.off.iter_mut().zip(&mut at.r) {
            *off = off.wrapping_add(self.skip);
            *r += self.rem;
            if *r >= self.na {
                *r -= self.na;
                *off = off.wrapping_add(self.carry);
            }
        }
    }
}

/// Where one side's 16 runs of a tile start: four evenly spaced quarters
/// (bounds checked once a quarter), or each its own.
#[derive(Clone, Copy)]
enum Runs {
    Quarters(simd::Quarters),
    Each([usize; 16]),
}

/// One side of a band of tiles: the first tile's runs and what each tile
/// adds to every run's start.
type Band = (simd::Quarters, usize);

impl Runs {
    fn each(self) -> [usize; 16] {
        match self {
            Runs::Quarters(q) => core::array::from_fn(|k| q.start(k)),
            Runs::Each(offsets) => offsets,
        }
    }
}

/// The grid of 16x16 tiles of [`stream_lines`] from (`i_lo`, `j_lo`): the
/// row side's starts, the column side's step, units `w` a position.
#[derive(Clone, Copy)]
struct TileGrid {
    d: usize,
    s: usize,
    w: usize,
    rows: Rows16,
    col_step: usize,
    i_lo: usize,
    j_lo: usize,
    tiles_i: usize,
    tiles_j: usize,
}

// Bands in the order that streams the source (16 of its columns all the way
// down, or 16 of its rows all the way along), the row side's 16 starts
// carried from tile to tile: two divisions per row per tile (the runs and
// the runs prefetched) took a third of the samples of the way back from
// `T(8,128)`. A band whose tiles all advance both sides by one amount goes
// to `band` whole, and along the source's rows all the bands at once when
// they advance by one amount too.
impl TileGrid {
    /// Rows on the destination: bands of 16 source columns, top to bottom.
    fn down_columns<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        tile: impl Fn(&mut [T], Runs, Runs, usize, usize),
        band: impl Fn(&mut [T], Band, Band, usize, simd::Bands) -> bool,
    ) {
        let (d, s, w, col_step) = (self.d, self.s, self.w, self.col_step);
        let (i_lo, j_lo, tiles_i) = (self.i_lo, self.j_lo, self.tiles_i);
        let j_hi = j_lo + 16 * self.tiles_j;
        for tj in 0..self.tiles_j {
            let j0 = j_lo + 16 * tj;
            let mut at = self.rows.at(i_lo);
            if let Some((to, adv)) = self.rows.steady(&at, d + j0 * w) {
                let from = simd::Quarters::even(s + j0 * col_step + i_lo * w, col_step);
                if band(dst, (to, adv), (from, 16 * w), tiles_i, simd::Bands::ONE) {
                    continue;
                }
            }
            for ti in 0..tiles_i {
                let i0 = i_lo + 16 * ti;
                let to = self.rows.runs(&at, d + j0 * w);
                let from =
                    Runs::Quarters(simd::Quarters::even(s + j0 * col_step + i0 * w, col_step));
                // The source columns' lines of the tile a few on, down
                // these columns or at the top of the next band.
                let ahead = ti + PREFETCH_TILES;
                let (pi, pj) = if ahead < tiles_i {
                    (i_lo + 16 * ahead, j0)
                } else {
                    (i_lo + 16 * (ahead - tiles_i), j0 + 16)
                };
                if pj < j_hi {
                    for c in 0..16 {
                        let f = s + (pj + c) * col_step + pi * w;
                        simd::prefetch(src, f);
                        simd::prefetch(src, f + 16 * w - 1);
                    }
                }
                tile(dst, to, from, i0, j0);
                self.rows.advance(&mut at);
            }
        }
    }

    /// Rows on the source: bands of 16 source rows, left to right; short
    /// bands whose rows lie close together each from a copy of its rows in
    /// `stage` ([`TileGrid::copied_bands`]).
    fn along_rows<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        tile: impl Fn(&mut [T], Runs, Runs, usize, usize),
        band: impl Fn(&mut [T], Band, Band, usize, simd::Bands) -> bool,
        (stage, kernel): (&mut [T], simd::TileKernel),
    ) {
        let (d, s, w, col_step) = (self.d, self.s, self.w, self.col_step);
        let (i_lo, j_lo, tiles_i, tiles_j) = (self.i_lo, self.j_lo, self.tiles_i, self.tiles_j);
        let mut at = self.rows.at(i_lo);
        // Every band at once where the source's rows advance evenly (short
        // bands from copies where their rows fit the stage).
        if let Some((from, from_band)) = self.rows.steady(&at, s + j_lo * w) {
            let first = (from, from_band);
            if tiles_j < LONG_BAND && self.copied_bands(dst, src, first, (stage, kernel), &tile) {
                return;
            }
            let to = simd::Quarters::even(d + j_lo * col_step + i_lo * w, col_step);
            let bands = simd::Bands {
                count: tiles_i,
                to_adv: 16 * w,
                from_adv: from_band,
            };
            if band(dst, (to, 16 * col_step), (from, 16 * w), tiles_j, bands) {
                return;
            }
        }
        for ti in 0..tiles_i {
            let i0 = i_lo + 16 * ti;
            let mut next = at;
            self.rows.advance(&mut next);
            if let Runs::Quarters(from) = self.rows.runs(&at, s + j_lo * w) {
                let to = simd::Quarters::even(d + j_lo * col_step + i0 * w, col_step);
                let one = simd::Bands::ONE;
                if band(dst, (to, 16 * col_step), (from, 16 * w), tiles_j, one) {
                    at = next;
                    continue;
                }
            }
            for tj in 0..tiles_j {
                let j0 = j_lo + 16 * tj;
                let to = Runs::Quarters(simd::Quarters::even(d + j0 * col_step + i0 * w, col_step));
                let from = self.rows.runs(&at, s + j0 * w);
                // The source rows' lines of the tile a few on, along these
                // rows or at the start of the next band; both ends of each
                // run, which need not start a line.
                let ahead = tj + PREFETCH_TILES;
                let (rows_ahead, pj, more) = if ahead < tiles_j {
                    (&at, j_lo + 16 * ahead, true)
                } else {
                    (&next, j_lo + 16 * (ahead - tiles_j), ti + 1 < tiles_i)
                };
                if more {
                    for r in rows_ahead.off {
                        let f = s + r + pj * w;
                        simd::prefetch(src, f);
                        simd::prefetch(src, f + 16 * w - 1);
                    }
                }
                tile(dst, to, from, i0, j0);
            }
            at = next;
        }
    }

    /// Every band along the source's rows, `first` the first band's source
    /// runs and what each band adds to them, each band's rows copied whole
    /// into `stage` in one piece (padding between them included) and its
    /// tiles run from the copy in one call of `kernel`, asking for nothing
    /// ahead (tile by tile from the source where that call refuses).
    /// `false`, nothing written, where a band's rows span more than `stage`
    /// holds from its first line boundary on.
    ///
    /// The tiles read their 16 rows a line at a time across the rows, an
    /// order the memory reads more slowly than the rows one after the
    /// other: over the data halves of 512-byte rows (the 4-D `bf16`
    /// permutation's way back), 8.5-11 ms for 128 MiB against 5.5-7.4 ms
    /// in the rows' order, and 5.7-6.5 ms copying 8 KiB of rows at a time
    /// and reading the copy in the tiles' order (AMD EPYC Zen 4).
    fn copied_bands<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        (first, from_band): Band,
        (stage, kernel): (&mut [T], simd::TileKernel),
        tile: &impl Fn(&mut [T], Runs, Runs, usize, usize),
    ) -> bool {
        let (w, col_step, tiles_j) = (self.w, self.col_step, self.tiles_j);
        // What a band reads: from its first row's start to its last row's
        // end, the same span for every band.
        let starts = (0..16).map(|k| first.start(k));
        let (Some(lo), Some(top)) = (starts.clone().min(), starts.max()) else {
            return false;
        };
        let span = top.saturating_sub(lo).saturating_add(16 * w * tiles_j);
        let last = from_band
            .checked_mul(self.tiles_i.saturating_sub(1))
            .and_then(|x| x.checked_add(lo))
            .and_then(|x| x.checked_add(span));
        // The copy's first run on a line.
        let stage = stage
            .get_mut(to_line::<T>(stage.as_ptr().addr())..)
            .unwrap_or_default();
        if self.tiles_i == 0 || span > stage.len() || last.is_none_or(|end| end > src.len()) {
            return false;
        }
        let runs = simd::Quarters {
            bases: first.bases.map(|b| b.wrapping_sub(lo)),
            step: first.step,
        };
        for ti in 0..self.tiles_i {
            let at = lo + ti * from_band;
            stage[..span].copy_from_slice(&src[at..][..span]);
            let i0 = self.i_lo + 16 * ti;
            let to = simd::Quarters::even(self.d + self.j_lo * col_step + i0 * w, col_step);
            let to = (to, 16 * col_step);
            let one = simd::Bands::ONE;
            let done = simd::tile16_quarters_run(
                kernel,
                dst,
                to,
                stage,
                (runs, 16 * w),
                tiles_j,
                one,
                true,
                None,
            );
            #[cfg(test)]
            tests::STAGED.with(|n| n.set(n.get() + usize::from(done)));
            if done {
                continue;
            }
            for tj in 0..tiles_j {
                let j0 = self.j_lo + 16 * tj;
                let to = simd::Quarters::even(self.d + j0 * col_step + i0 * w, col_step);
                let from = simd::Quarters {
                    bases: first
                        .bases
                        .map(|b| b.wrapping_add(ti * from_band + 16 * w * tj)),
                    step: first.step,
                };
                tile(dst, Runs::Quarters(to), Runs::Quarters(from), i0, j0);
            }
        }
        true
    }
}

/// Whether units of `width` elements are the 4 bytes [`stream_lines`]
/// moves: tested before calling it, which stays out of line, so that the
/// blocks of other sizes (interleaves, row copies) keep their short path.
#[inline]
fn line_units<T>(width: usize) -> bool {
    width * core::mem::size_of::<T>() == 4
}

/// A transpose of 4-byte units (`w` elements each) too large for the
/// caches: `dst[d + x*o.d + i*b.da + j*b.db] = src[s + x*o.s + i*b.sa +
/// j*b.sb]`, where one side is contiguous along `j` (its "rows", each value
/// of `x` and `i` one) and the other along `x` and `i` together (its
/// "columns"). It goes in 16x16 tiles of [`simd::tile16`] placed on the
/// cache lines of both sides, so that each tile reads 16 whole lines and
/// writes 16 whole lines with streaming stores: no line is read twice
/// (columns far apart, a power of two apart, share the few sets of the
/// caches that would keep a line between its halves), and no destination
/// line is read at all. The order streams the source: 16 columns at a time
/// all the way down, or 16 rows at a time all the way along. The edges off
/// the line grid go with plain stores. `false`, nothing written, for other
/// blocks, small ones, a destination whose runs cannot start lines, or
/// without the kernel. `stage`, scratch (empty without streaming), takes
/// copies of short bands' source rows ([`TileGrid::copied_bands`]).
// The names of `Block`, `copy_block` and the formula above.
#[allow(clippy::many_single_char_names, clippy::too_many_arguments)]
#[inline(never)]
fn stream_lines<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
    stage: &mut [T],
) -> bool {
    let size = core::mem::size_of::<T>();
    let Some(kernel) = simd::TileKernel::best() else {
        return false;
    };
    if w * size != 4 || b.na == 0 || o.count == 0 {
        return false;
    }
    let (ni, nj) = (o.count * b.na, b.nb);
    if ni < 32 || nj < 32 {
        return false;
    }
    // Source runs (its columns here, its rows there) shorter than
    // `LONG_RUNS` go the old way. The 4-D `bf16` permutation back, runs of
    // 64 units, read 0.35-0.5 of `memcpy` in tiles a band at a time against
    // 0.5-0.6 the old way; with every band in one call, asking ahead
    // (`TileGrid::along_rows`), it takes 0.76-0.81 of the old way's time
    // (`benches/relayout_ab.py`), and now each band runs from a copy of
    // its rows (`TileGrid::copied_bands`). Shorter runs are untried.
    let rows_dst = b.db == w && b.sa == w && (o.count == 1 || o.s == b.na * w) && ni >= LONG_RUNS;
    let rows_src = b.da == w && b.sb == w && (o.count == 1 || o.d == b.na * w) && nj >= LONG_RUNS;
    // Offsets of the row side (row `i` at `j = 0`) and the column side
    // (column `j` at `i = 0`), with the byte address of each side's start.
    let (dst_at, src_at) = (dst.as_ptr().addr(), src.as_ptr().addr());
    let (row_at, row_o, row_a, col_at, col_step) = if rows_dst {
        (dst_at + d * size, o.d, b.da, src_at + s * size, b.sb)
    } else if rows_src {
        (src_at + s * size, o.s, b.sa, dst_at + d * size, b.db)
    } else {
        return false;
    };
    // Units to the first line boundary, if every row (column) has the
    // same place in its line.
    let lead = |at: usize, strides_whole: bool| {
        (strides_whole && at % 4 == 0).then_some((64 - at % 64) % 64 / 4)
    };
    let row_lead = lead(
        row_at,
        row_a * size % 64 == 0 && (o.count == 1 || row_o * size % 64 == 0),
    );
    let col_lead = lead(col_at, col_step * size % 64 == 0);
    // The destination's runs must start lines. The source's need not:
    // along the rows a tile reads the rest of the lines the last one
    // started, and down long columns only a few rows are off the grid
    // (on short ones, a quarter of the elements would go plainly).
    let (i_lo, j_lo) = match (rows_dst, row_lead, col_lead) {
        (true, Some(j), Some(i)) if ni >= LONG_COLUMNS => (i, j),
        (true, Some(j), _) => (0, j),
        (false, _, Some(i)) => (i, 0),
        _ => return false,
    };
    if ni < i_lo + 16 || nj < j_lo + 16 {
        return false;
    }
    let (i_hi, j_hi) = (i_lo + (ni - i_lo) / 16 * 16, j_lo + (nj - j_lo) / 16 * 16);
    let plain = |dst: &mut [T], is: core::ops::Range<usize>, js: core::ops::Range<usize>| {
        let mut i = is.start;
        while i < is.end {
            let (x, r) = (i / b.na, i % b.na);
            let m = (b.na - r).min(is.end - i);
            let part = Block {
                na: m,
                nb: js.len(),
                ..b
            };
            let at_d = d + x * o.d + r * b.da + js.start * b.db;
            let at_s = s + x * o.s + r * b.sa + js.start * b.sb;
            copy_any(dst, at_d, src, at_s, part, w, &mut [], false);
            i += m;
        }
    };
    let tile = |dst: &mut [T], to: Runs, from: Runs, i0: usize, j0: usize| {
        let done = match (to, from) {
            (Runs::Quarters(to), Runs::Quarters(from)) => {
                simd::tile16_quarters(kernel, dst, to, src, from, true)
            }
            _ => simd::tile16_on(kernel, dst, &to.each(), src, &from.each(), true),
        };
        if !done {
            plain(dst, i0..i0 + 16, j0..j0 + 16);
        }
    };
    let grid = TileGrid {
        d,
        s,
        w,
        // One group: rows past it are never asked for, so any outer
        // stride will do, and the one that makes the rows even says so.
        rows: Rows16::new(b.na, if o.count == 1 { b.na * row_a } else { row_o }, row_a),
        col_step,
        i_lo,
        j_lo,
        tiles_i: (i_hi - i_lo) / 16,
        tiles_j: (j_hi - j_lo) / 16,
    };
    // Whole bands of tiles in one call where both sides advance evenly:
    // long ones as they are; short ones asking for their source ahead, and
    // only several bands at once (a band a call, with the same prefetch,
    // took 0.94-0.98 of the tile-by-tile loop's time on the column-major
    // way back, all the bands in one call 0.84-0.93).
    let band = |dst: &mut [T], to: Band, from: Band, count: usize, bands: simd::Bands| {
        let ahead = (count < LONG_BAND).then_some(PREFETCH_TILES);
        let done = (ahead.is_none() || bands.count > 1)
            && simd::tile16_quarters_run(kernel, dst, to, src, from, count, bands, true, ahead);
        #[cfg(test)]
        tests::BANDS.with(|n| n.set(n.get() + usize::from(done)));
        done
    };
    if rows_dst {
        grid.down_columns(dst, src, tile, band);
    } else {
        grid.along_rows(dst, src, tile, band, (stage, kernel));
    }
    plain(dst, 0..i_lo, 0..nj);
    plain(dst, i_hi..ni, 0..nj);
    plain(dst, i_lo..i_hi, 0..j_lo);
    plain(dst, i_lo..i_hi, j_hi..nj);
    true
}

/// A padded block of 4-byte units (`w` elements each) whose rows lie back
/// to back in the destination, each `b_len` units: unit `j` of row `i` is
/// `src[s + i*w + j*sb..][..w]` for `j < count` and `fill` after, the
/// source contiguous down the rows (a 4-D permutation into `(2,1)` tiles
/// whose minor dim is padded). Written on the destination's cache lines in
/// 16x16 tiles of 16 rows by one line, the source read where it lies, 16
/// runs at a time: each line of data alone but the last down all the
/// whole bands in one call ([`simd::tile16_quarters_run`]); then, a band of 16
/// rows at a time in one call ([`simd::tile16_group_run`]), the rest of
/// the rows' lines: the last of data alone, lines of data and padding
/// (where the data ends, and where a row's lines run into the next row's)
/// and lines of padding alone, as tiles whose source runs are the source's
/// or runs of `fill`. No destination line is read. The rows before the
/// source's runs start a line, after the last whole band, and the partial
/// lines at both ends go with plain stores; a band whose last line would
/// run past the block, or a call that refuses, goes tile by tile, lines of
/// data and padding put together in `scratch`. `false`, nothing written,
/// for other blocks, fewer than 16 rows, without the kernel, or with
/// `scratch` under 784 units.
///
/// Measured on the 4-D `bf16` permutation "there" on an AMD EPYC Zen 3
/// (AVX2), against the source copies ([`Gather::block_padded`]) this
/// replaces there: with a destination on a line, 13.3-16.7 ms against
/// 18.0-26.9 ms in alternated runs of one program (a hand-written loop of
/// the same tiles 12.8-14.6 ms); with the destination 16 bytes past one,
/// as a `Vec`'s is, no faster (16.8-23.4 against 17.6-27.4 ms, and the
/// bench's medians the same) until the group asked for its source two
/// rounds ahead (then 0.63-0.73 of `memcpy` in the bench against
/// 0.49-0.72): see `benches/README.md`. Tile by tile, as it
/// went before the calls, it read 0.36-0.38 of `memcpy` against 0.42-0.44
/// for the copies.
// `d`, `s`, `w` as in `Block` and `stream_lines`; `r`, `c` a unit's row and column.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
fn stream_padded_rows<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    (na, count, b_len): (usize, usize, usize),
    sb: usize,
    w: usize,
    fill: T,
    scratch: &mut [T],
) -> bool {
    let size = core::mem::size_of::<T>();
    let at = dst.as_ptr().addr() + d * size;
    let total = na * b_len;
    if w * size != 4
        || na < 16
        || count == 0
        || count >= b_len
        || b_len % 16 != 0
        || scratch.len() < 784 * w
        || at % 4 != 0
        || d.checked_add(total * w).is_none_or(|end| end > dst.len())
        || (na - 1) * w + (count - 1) * sb + w > src.len().saturating_sub(s)
    {
        return false;
    }
    let Some(kernel) = simd::TileKernel::best() else {
        return false;
    };
    // Units before the first line boundary; every row has as many, rows
    // being whole lines long.
    let lead = (64 - at % 64) % 64 / 4;
    let per_row = b_len / 16;
    // Bands start where the source's runs start lines, if they all do
    // (runs split between lines measured slower than the old staging).
    let src_at = src.as_ptr().addr() + s * size;
    let r_lo = if sb * size % 64 == 0 && src_at % 4 == 0 {
        (64 - src_at % 64) % 64 / 4
    } else {
        0
    };
    let bands = (na - r_lo) / 16;
    if bands == 0 {
        return false;
    }
    let r_hi = r_lo + 16 * bands;
    // The last row's last line runs past the block when `lead > 0`.
    let covered_end = if r_hi < na || lead == 0 {
        r_hi * b_len + lead
    } else {
        total - 16 + lead
    };
    let written = |r: usize, k: usize| lead == 0 || k + 1 < per_row || r + 1 < na;
    let unit = |dst: &mut [T], u: usize| {
        let (r, c) = (u / b_len, u % b_len);
        let run = &mut dst[d + u * w..][..w];
        if c < count {
            run.copy_from_slice(&src[s + r * w + c * sb..][..w]);
        } else {
            run.fill(fill);
        }
    };
    // Lines of data and padding go through `tiles`: the source runs of
    // their data columns copied next to runs of `fill`, then one streamed
    // tile like the others. Slot 0 is the line where the data
    // ends, slot 1 the line that runs into the next row. `edge` takes the
    // tile holding the block's last, partial line.
    let (tiles, rest) = scratch.split_at_mut(512 * w);
    let (edge, rest) = rest.split_at_mut(256 * w);
    let line = &mut rest[..16 * w];
    line.fill(fill);
    let run = 16 * w;
    let rows = PaddedRows {
        d,
        s,
        w,
        sb,
        b_len,
        count,
        lead,
        r_lo,
    };
    for u in 0..r_lo * b_len + lead {
        unit(dst, u);
    }
    // Line `k` of the rows of band `band`, tile by tile.
    let mut one = |dst: &mut [T], band: usize, k: usize| {
        let r0 = r_lo + band * 16;
        let to: [usize; 16] = core::array::from_fn(|r| d + ((r0 + r) * b_len + lead + 16 * k) * w);
        let cols: [(usize, usize); 16] = core::array::from_fn(|c| rows.column(k, c));
        let data = cols.iter().filter(|&&(_, j)| j < count).count();
        if data == 0 {
            for (r, &o) in to.iter().enumerate() {
                if written(r0 + r, k) {
                    simd::stream_copy(&mut dst[o..][..run], line);
                }
            }
            return;
        }
        let from: [usize; 16] = core::array::from_fn(|c| s + (r0 + cols[c].0) * w + cols[c].1 * sb);
        if data == 16 && simd::tile16(dst, &to, src, &from, true) {
            return;
        }
        let slot = usize::from(cols[15].0 == 1);
        let part = &mut tiles[slot * 256 * w..][..256 * w];
        let data: [bool; 16] = core::array::from_fn(|c| cols[c].1 < count);
        let write: [bool; 16] = core::array::from_fn(|r| written(r0 + r, k));
        mixed_tile(dst, &to, src, &from, (data, write), (part, line), edge);
    };
    // Bands whose every line lies inside the block (all but a last band
    // whose last row's last line would run past it) go whole.
    let whole = bands - usize::from(lead > 0 && r_hi == na);
    rows.whole_bands(kernel, (dst, src), whole, fill, &mut one);
    for band in whole..bands {
        for k in 0..per_row {
            one(dst, band, k);
        }
    }
    for u in covered_end..total {
        unit(dst, u);
    }
    true
}

/// The geometry of [`stream_padded_rows`]' block: as its arguments, with
/// `lead` the units before the destination's first line boundary and
/// `r_lo` the rows before the source's runs start lines.
#[derive(Clone, Copy)]
struct PaddedRows {
    d: usize,
    s: usize,
    w: usize,
    sb: usize,
    b_len: usize,
    count: usize,
    lead: usize,
    r_lo: usize,
}

impl PaddedRows {
    /// Column `c` of line `k` of a row: its row (this one, 0, or the next,
    /// 1) and its unit in that row.
    fn column(self, k: usize, c: usize) -> (usize, usize) {
        let j = self.lead + 16 * k + c;
        if j < self.b_len {
            (0, j)
        } else {
            (1, j - self.b_len)
        }
    }

    /// The first `whole` bands of 16 rows, whose every line lies inside the
    /// block: the lines of data alone but the last, a line of the rows down
    /// the block at a time in one call each; then the rest of the rows'
    /// lines, from the last of data alone on, as one group, the whole group
    /// a band at a time (each row's last data and its padding written close
    /// together). `one(dst, band, k)` writes line `k` of a band tile by
    /// tile, for the lines of a call that refuses.
    fn whole_bands<T: Copy>(
        self,
        kernel: simd::TileKernel,
        (dst, src): (&mut [T], &[T]),
        whole: usize,
        fill: T,
        one: &mut impl FnMut(&mut [T], usize, usize),
    ) {
        let PaddedRows {
            d,
            s,
            w,
            sb,
            b_len,
            count,
            lead,
            r_lo,
        } = self;
        let per_row = b_len / 16;
        // Lines whose last column is data of this row.
        let alone = (0..per_row).take_while(|&k| matches!(self.column(k, 15), (0, j) if j < count));
        let first_tail = alone.count().saturating_sub(1);
        let row = b_len * w;
        // Line `k` of every whole band tile by tile, where a call refused.
        let mut by_tiles = |dst: &mut [T], k: usize| {
            for band in 0..whole {
                one(dst, band, k);
            }
        };
        for k in 0..first_tail {
            let to = simd::Quarters::even(d + (r_lo * b_len + lead + 16 * k) * w, row);
            let from = simd::Quarters::even(s + r_lo * w + (lead + 16 * k) * sb, sb);
            let done = simd::tile16_quarters_run(
                kernel,
                dst,
                (to, 16 * row),
                src,
                (from, 16 * w),
                whole,
                simd::Bands::ONE,
                true,
                None,
            );
            #[cfg(test)]
            tests::BANDS.with(|n| n.set(n.get() + usize::from(done && whole > 0)));
            if !done {
                by_tiles(dst, k);
            }
        }
        let mut group = [simd::GroupTile {
            to: [0; 16],
            from: [None; 16],
        }; simd::GROUP_TILES];
        let tail = first_tail..per_row;
        let grouped = tail.len() <= simd::GROUP_TILES && {
            for (tile, k) in group.iter_mut().zip(tail.clone()) {
                *tile = simd::GroupTile {
                    to: core::array::from_fn(|r| d + ((r_lo + r) * b_len + lead + 16 * k) * w),
                    from: core::array::from_fn(|c| {
                        let (next, j) = self.column(k, c);
                        (j < count).then(|| s + (r_lo + next) * w + j * sb)
                    }),
                };
            }
            let tiles = &group[..tail.len()];
            simd::tile16_group_run(
                kernel,
                dst,
                (tiles, 16 * row),
                src,
                16 * w,
                whole,
                fill,
                true,
            )
        };
        #[cfg(test)]
        tests::GROUPS.with(|n| n.set(n.get() + usize::from(grouped && whole > 0)));
        if !grouped {
            for k in tail {
                by_tiles(dst, k);
            }
        }
    }
}

/// A tile of [`stream_padded_rows`] whose columns are `data` (source runs
/// at `from`) or padding (`line`, a run of `fill`): the runs copied into
/// `part`, then streamed as one tile, or through `edge` when some of its
/// lines (`write` false) are not to be written.
fn mixed_tile<T: Copy>(
    dst: &mut [T],
    to: &[usize; 16],
    src: &[T],
    from: &[usize; 16],
    (data, write): ([bool; 16], [bool; 16]),
    (part, line): (&mut [T], &[T]),
    edge: &mut [T],
) {
    let run = part.len() / 16;
    let w = run / 16;
    let runs: [usize; 16] = core::array::from_fn(|c| c * run);
    for (c, &yes) in data.iter().enumerate() {
        // The last band's next row may end the source: the rows past it
        // are never written out.
        let have = if yes {
            src.get(from[c]..).unwrap_or_default()
        } else {
            line
        };
        copy_run(&mut part[c * run..][..run], &have[..have.len().min(run)]);
    }
    if write.iter().all(|&yes| yes) && simd::tile16(dst, to, part, &runs, true) {
        return;
    }
    if !simd::tile16(edge, &runs, part, &runs, false) {
        for (r, out) in edge.chunks_exact_mut(run).enumerate() {
            for (c, u) in out.chunks_exact_mut(w).enumerate() {
                u.copy_from_slice(&part[c * run + r * w..][..w]);
            }
        }
    }
    for (r, out) in edge.chunks_exact(run).enumerate() {
        if write[r] {
            simd::stream_copy(&mut dst[to[r]..][..run], out);
        }
    }
}

/// `to.copy_from_slice(from)` for runs of 64 bytes, in fixed-size moves
/// (a call to `memcpy` per run costs more than the copy); a shorter `from`
/// fills the front of `to` only.
fn copy_run<T: Copy>(to: &mut [T], from: &[T]) {
    fn fixed<T: Copy, const N: usize>(to: &mut [T], from: &[T]) -> bool {
        match (to.first_chunk_mut::<N>(), from.first_chunk::<N>()) {
            (Some(a), Some(b)) => {
                *a = *b;
                true
            }
            _ => false,
        }
    }
    let done = match 64 / core::mem::size_of::<T>().max(1) {
        16 => fixed::<T, 16>(to, from),
        32 => fixed::<T, 32>(to, from),
        64 => fixed::<T, 64>(to, from),
        _ => false,
    };
    if !done {
        let n = to.len().min(from.len());
        to[..n].copy_from_slice(&from[..n]);
    }
}

/// Writes the walked storage from the other array (pack, convert).
pub(crate) struct Gather<'a, T> {
    /// The walked storage from slot `base` on.
    pub(crate) dst: &'a mut [T],
    pub(crate) base: usize,
    pub(crate) src: &'a [T],
    /// `None` only where the walked side has no padding.
    pub(crate) padding: Option<T>,
    /// Scratch for streaming stores; empty: plain stores.
    pub(crate) stage: &'a mut [T],
    /// Elements per position of a folded walk.
    pub(crate) unit: usize,
    /// Where in `dst` the last write ended (0 before the first): a run
    /// starting there continues it.
    pub(crate) end: usize,
}

impl<T: Copy> Gather<'_, T> {
    /// [`Visitor::block`], reading `src` (the source, or a copy of part of
    /// it) at `other`.
    fn block_from(&mut self, src: &[T], off: usize, other: usize, a: Axis, b: Axis) {
        let block = Block::into_walked(a, b);
        let d = off - self.base;
        // In storage order each block continues the last write; blocks of
        // outer steps reordered by the walk do not.
        let in_order = d == self.end;
        copy_any(
            self.dst, d, src, other, block, self.unit, self.stage, in_order,
        );
        if a.count > 0 && b.count > 0 {
            self.end = d + (a.count - 1) * a.walk + (b.count - 1) * b.walk + self.unit;
        }
    }

    /// [`stream_padded_rows`] into this walk's destination from `d` on,
    /// reading `src` (the source, or a copy of part of it) at `other`:
    /// rows `a` of `b_len` units, `b` of them data; where it ran, the
    /// block's end is where the next run starts.
    fn padded_tiles(
        &mut self,
        src: &[T],
        d: usize,
        other: usize,
        (a, b, b_len): (Axis, Axis, usize),
        fill: T,
    ) -> bool {
        let done = stream_padded_rows(
            self.dst,
            d,
            src,
            other,
            (a.count, b.count, b_len),
            b.other,
            self.unit,
            fill,
            self.stage,
        );
        if done {
            self.end = d + a.count * b_len * self.unit;
        }
        done
    }

    /// Rows that lie back to back with their padding (a tile whose columns
    /// are half padding, say) are one run of the destination: put together
    /// in the stage, elements and padding, and streamed whole. Apart, each
    /// row's elements went with plain stores (rows too short to stream) and
    /// its padding streamed, both halves sharing lines at the seams.
    fn padded_rows(&mut self, src: &[T], off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        let row = b_len * b.walk;
        let rows = self.stage.len() / row.max(1);
        let fits = b.walk == self.unit
            && a.walk == row
            && rows > 0
            && row * core::mem::size_of::<T>() >= 64
            && b.count < b_len;
        let fill = match self.padding {
            Some(fill) if fits => fill,
            _ => {
                self.block_from(src, off, other, a, b);
                if b.count < b_len {
                    for x in 0..a.count {
                        let gap = off + x * a.walk + b.count * b.walk;
                        self.padding(gap, row - b.count * b.walk);
                    }
                }
                return;
            }
        };
        let d = off - self.base;
        for i0 in (0..a.count).step_by(rows) {
            let m = rows.min(a.count - i0);
            let block = Block {
                na: m,
                nb: b.count,
                da: row,
                db: b.walk,
                sa: a.other,
                sb: b.other,
            };
            let run = m * row;
            let stage = &mut self.stage[..run];
            copy_any(
                stage,
                0,
                src,
                other + i0 * a.other,
                block,
                self.unit,
                &mut [],
                false,
            );
            for r in stage.chunks_exact_mut(row) {
                r[b.count * b.walk..].fill(fill);
            }
            let start = d + i0 * row;
            let stream_copy = if start == self.end {
                simd::stream_copy_in_order
            } else {
                simd::stream_copy
            };
            stream_copy(&mut self.dst[start..][..run], stage);
            self.end = start + run;
        }
    }

    /// [`Visitor::block_padded`] through `wide`, a stretch of rows at a
    /// time; `false`, nothing written, if `wide` holds too little.
    fn padded_rows_copied(
        &mut self,
        wide: &mut [T],
        off: usize,
        other: usize,
        a: Axis,
        b: Axis,
        b_len: usize,
    ) -> bool {
        let line = line_elements::<T>();
        // Destination rows per stretch: what `wide` holds of each source row.
        let per = ((wide.len() / b.count).saturating_sub(line) / self.unit.max(1)).min(a.count);
        if per == 0 {
            return false;
        }
        let stride = per * self.unit + line;
        for i0 in (0..a.count).step_by(per) {
            let m = per.min(a.count - i0);
            let (from, run) = (other + i0 * self.unit, m * self.unit);
            for (r, row) in wide.chunks_exact_mut(stride).take(b.count).enumerate() {
                row[..run].copy_from_slice(&self.src[from + r * b.other..][..run]);
            }
            let rows = Axis { count: m, ..a };
            let staged = Axis { other: stride, ..b };
            self.padded_rows(wide, off + i0 * a.walk, 0, rows, staged, b_len);
        }
        true
    }
}

impl<T: Copy> Visitor for Gather<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let src = self.src;
        self.block_from(src, off, other, a, b);
    }

    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        let block = Block::into_walked(a, b);
        let outer = Outer {
            count: o.count,
            d: o.walk,
            s: o.other,
        };
        let d = off - self.base;
        if !self.stage.is_empty() {
            if line_units::<T>(self.unit)
                && stream_lines(
                    self.dst, d, self.src, other, outer, block, self.unit, self.stage,
                )
            {
                // No later run continues these lines.
                self.end = usize::MAX;
                return;
            }
            if stream_rows_across(self.dst, d, self.src, other, outer, block, self.unit) {
                // The end of the last piece written, the last row of the last tile.
                self.end =
                    d + (o.count - 1) * o.walk + (a.count - 1) * a.walk + b.count * self.unit;
                return;
            }
        }
        for x in 0..o.count {
            self.block(off + x * o.walk, other + x * o.other, a, b);
        }
    }

    fn padding(&mut self, off: usize, len: usize) {
        if let Some(fill) = self.padding {
            let d = off - self.base;
            stream_fill(&mut self.dst[d..][..len], fill, self.stage);
            self.end = d + len;
        }
    }

    /// Padded rows whose source runs down them go in line tiles with AVX2
    /// ([`stream_padded_rows`]), reading the source where it lies: 16
    /// source rows at a time, each line once, which the eviction below
    /// does not touch. Otherwise, blocks whose source rows lie pages apart (the 4-D
    /// permutation into `T(8,128)` reads 64 rows 16 KiB apart, a unit of
    /// each per row of the destination) go a stretch of rows at a time:
    /// each source row's run for the stretch is copied first, the copies a
    /// line apart in the cache's sets, and the transposes read those. Read
    /// where they lie, the rows fall into one set of the first-level cache,
    /// evicting each other, and the memory sees 64 streams of a few lines
    /// each.
    fn block_padded(&mut self, off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        if let Some(fill) = self.padding {
            let d = off - self.base;
            if !self.stage.is_empty()
                && simd::TileKernel::best().is_some()
                && a.other == self.unit
                && b.walk == self.unit
                && a.walk == b_len * self.unit
                && self.padded_tiles(self.src, d, other, (a, b, b_len), fill)
            {
                return;
            }
        }
        let far = !self.stage.is_empty()
            && a.other == self.unit
            && b.count >= STAGED_ROWS
            && b.other.saturating_mul(core::mem::size_of::<T>()) >= FAR_ROW_BYTES;
        let src = self.src;
        // What the copies of the whole block would take (`wide` holds at
        // most a stretch of it): a small block writes no more of the
        // buffer than it uses.
        let line = line_elements::<T>();
        let len = b
            .count
            .saturating_mul(a.count.saturating_mul(self.unit).saturating_add(line));
        let copied = match src.get(other) {
            Some(&init) if far && a.count > 0 => simd::with_wide(init, len, |wide| {
                self.padded_rows_copied(wide, off, other, a, b, b_len)
            }),
            _ => false,
        };
        if !copied {
            self.padded_rows(src, off, other, a, b, b_len);
        }
    }
}

/// Source rows at least this far apart are copied before a transpose
/// reads them: see [`Gather::block_padded`].
const FAR_ROW_BYTES: usize = 4096;

/// Elements of `T` in a cache line, rounded up (exact for the sizes of a
/// power of two the streaming kernels take): the gap between the rows of
/// [`Gather::block_padded`]'s copies, and [`stream_joined_rows`]' line.
fn line_elements<T>() -> usize {
    64usize.div_ceil(core::mem::size_of::<T>().max(1))
}

/// Elements of `T` from byte address `at` to the next line boundary (0 on
/// one), for addresses on elements.
fn to_line<T>(at: usize) -> usize {
    (64 - at % 64) % 64 / core::mem::size_of::<T>().max(1)
}

/// [`to_line`] from `slice[k]`.
fn to_line_in<T>(slice: &[T], k: usize) -> usize {
    to_line::<T>(slice.as_ptr().addr() + k * core::mem::size_of::<T>())
}

/// Source rows at most this long are packed a row at a time across a row
/// of tiles: see [`stream_rows_across`].
const SHORT_SOURCE_ROW_BYTES: usize = 8192;

/// The most tiles a row [`stream_rows_across`] takes: the counts measured.
const ACROSS_TILES: usize = 16;

/// Rows a whole number of these long go tile by tile: see [`stream_rows_across`].
const PAGE_BYTES: usize = 4096;

/// `o.count` blocks `b` of `w`-element units, tiles side by side along
/// short source rows (packing `f32[N,512]` into `T(8,128)`: 8 rows of 2
/// KiB, four tiles across them), the rows of each tile back to back in
/// the destination: read a row at a time across the tiles, not a tile at
/// a time down the rows, whose reads hop back and forth inside a few
/// pages. Each piece goes straight to the streaming copy, 16 bytes at a
/// time where it starts on 16 bytes (plainly otherwise); a line it shares
/// with the piece below is completed when that piece is written, `o.count`
/// pieces later. `false`, nothing written, for other blocks: rows longer
/// than 8 KiB or a whole number of 4 KiB pages, more than sixteen tiles a
/// row, pieces under a line.
///
/// Measured on an AMD EPYC Zen 3, the time of `f32[32768,512]`'s pack over
/// `f32[4096,4096]`'s in one program, alternated with the build before:
/// 1.45-1.80 to 1.25-1.36 (`f32[65536,256]` 1.44-2.07 to 1.03-1.25;
/// `bf16[65536,512]` and `s8[262144,256]` gain as much). Through
/// `copy_any`, the dispatch per piece took as long as the copy. There,
/// rows of 3 KiB and more read faster tile by tile in a hand-written
/// program. On an AMD EPYC Zen 4, `benches/relayout_ab.py` (both orders in
/// one process) on packs of 64 MiB into `T(8,128)`, rows across against
/// tile by tile, three runs each: 768 columns 0.78-0.84 of the time, 896
/// 0.77-0.90, 1000 (the bench's narrow rows) 0.76-1.04 in eight runs,
/// median 0.87, 1152 0.81-0.95, 1280 0.81-0.89, 1800 0.87-0.98; rows of
/// whole pages no faster (1024 columns 0.93-1.14, 2048 1.06-1.10), nor
/// rows past 8 KiB (3000 columns 0.92-0.94, 4000 0.95-1.00, the ragged
/// `4093` 1.07-1.13).
// The names of `Block` and `Outer`.
#[allow(clippy::many_single_char_names)]
fn stream_rows_across<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
) -> bool {
    let size = core::mem::size_of::<T>();
    let len = b.nb.saturating_mul(w);
    if !(2..=ACROSS_TILES).contains(&o.count)
        || b.na < 2
        || b.db != w
        || b.sb != w
        || b.da != len
        || o.s != len
        || len.saturating_mul(size) < 64
        || b.sa.saturating_mul(size) > SHORT_SOURCE_ROW_BYTES
        || b.sa.saturating_mul(size) % PAGE_BYTES == 0
    {
        return false;
    }
    for i in 0..b.na {
        for x in 0..o.count {
            let to = d + x * o.d + i * b.da;
            let from = s + x * o.s + i * b.sa;
            simd::stream_copy_in_order(&mut dst[to..][..len], &src[from..][..len]);
        }
    }
    true
}

/// One block of `width`-element units: streamed through `stage` when there
/// is one (destinations larger than the cache), else with plain stores.
#[allow(clippy::too_many_arguments)]
fn copy_any<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
    width: usize,
    stage: &mut [T],
    in_order: bool,
) {
    if !stage.is_empty() {
        let whole = Outer {
            count: 1,
            d: 0,
            s: 0,
        };
        if line_units::<T>(width)
            && (stream_lines(dst, d, src, s, whole, b, width, stage)
                || stream_lines(dst, d, src, s, whole, b.transposed(), width, stage))
        {
            return;
        }
        stream_block(dst, d, src, s, b, width, stage, in_order);
    } else if width > 1 {
        copy_units(dst, d, src, s, b, width);
    } else {
        copy_block(dst, d, src, s, b);
    }
}

/// Reads the walked storage into the other array (unpack, convert).
pub(crate) struct Scatter<'a, T> {
    src: &'a [T],
    /// The other array from position `base` on.
    dst: &'a mut [T],
    base: usize,
    /// Scratch for streaming stores; empty: plain stores.
    stage: &'a mut [T],
    /// Elements per position of a folded walk.
    unit: usize,
    /// Rows joined by [`stream_joined_rows`] whose last partial lines wait
    /// in `stage`; [`finish`](Self::finish) writes them at the latest.
    joined: Option<Joined>,
}

/// Rows of a [`Scatter`] whose joined pieces have been streamed up to the
/// last partial line of each, which waits in the stage (two lines a row,
/// the first holding the last line of source elements written) for the
/// piece that continues the row: the rows' last tile, padded, which the
/// walk hands over next, whole or a row at a time (where the rows too
/// may be padded). Streamed on with its split line completed, the
/// row's lines all go out with streaming stores; written plainly, as
/// happens when anything else comes next, each row has one line written
/// partly each way.
///
/// Measured on an AMD EPYC Zen 4 (`benches/relayout_ab.py`, both builds
/// in one process): see `benches/README.md`, "Padded rows joined to the
/// end".
#[derive(Clone, Copy, Debug)]
struct Joined {
    /// Where row 0 continues in the destination, and the rows' stride.
    end: usize,
    stride: usize,
    rows: usize,
    /// The rows before this one have been continued.
    next: usize,
}

impl Joined {
    /// Writes the rows' last partial lines, from row `next` on, from
    /// `stage` to `dst` with plain stores.
    fn finish<T: Copy>(self, dst: &mut [T], stage: &mut [T]) {
        let line = line_elements::<T>();
        for i in self.next..self.rows {
            let end = self.end + i * self.stride;
            // The row's last line of source elements ends at `end`; its
            // last `tail` elements are the partial line still owed.
            let tail = (line - to_line_in(dst, end)) % line;
            let lines = &joined_lines(stage, i)[..line];
            dst[end - tail..end].copy_from_slice(&lines[line - tail..]);
        }
    }
}

impl<'a, T: Copy> Scatter<'a, T> {
    /// Runs `walk` over a visitor writing `dst` (the other array from
    /// position `base` on) from `src`, `unit` elements a position, through
    /// `stage` (empty: plain stores), then writes what still waits in the
    /// stage.
    pub(crate) fn run(
        (src, dst, base): (&'a [T], &'a mut [T], usize),
        stage: &'a mut [T],
        unit: usize,
        walk: impl FnOnce(&mut Self),
    ) {
        let mut v = Scatter {
            src,
            dst,
            base,
            stage,
            unit,
            joined: None,
        };
        walk(&mut v);
        v.finish();
    }

    /// Writes what waits in the stage for joined rows, before anything
    /// else uses the stage and once the walk is done.
    fn finish(&mut self) {
        if let Some(j) = self.joined.take() {
            j.finish(self.dst, self.stage);
        }
    }

    /// Continues the joined rows from row `next` on with block `piece`
    /// (the rows' last piece, `at` on in the destination and `src_at` in
    /// the source), what is left of them or fewer: each row's split line
    /// completed from the stage and streamed, then the piece's whole lines
    /// streamed and its last partial line written plainly. The rows it
    /// leaves still wait. `false`, nothing written, where no rows wait or
    /// `piece` does not continue them.
    fn continue_joined(&mut self, at: usize, src_at: usize, piece: Block) -> bool {
        let Some(rows) = self.joined else {
            return false;
        };
        let (w, line) = (self.unit, line_elements::<T>());
        let len = piece.nb * w;
        let fits = rows.next + piece.na <= rows.rows && (piece.na == 1 || piece.da == rows.stride);
        if !fits
            || at != rows.end + rows.next * rows.stride
            || piece.db != w
            || piece.sb != w
            || len < line
        {
            return false;
        }
        for i in 0..piece.na {
            let to = at + i * rows.stride;
            let from = &self.src[src_at + i * piece.sa..][..len];
            let head = to_line_in(self.dst, to);
            let lines = joined_lines(self.stage, rows.next + i);
            if head > 0 {
                // The previous piece's last `line - head` elements, then
                // this piece's first `head`: one whole line.
                lines[line..].copy_from_slice(&from[..line]);
                simd::stream_copy_lines(
                    &mut self.dst[to + head - line..][..line],
                    &lines[head..][..line],
                );
            }
            simd::stream_copy_lines(&mut self.dst[to + head..][..len - head], &from[head..]);
        }
        let next = rows.next + piece.na;
        self.joined = (next < rows.rows).then_some(Joined { next, ..rows });
        true
    }
}

impl<T: Copy> Visitor for Scatter<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let block = Block::from_walked(a, b);
        let d = other - self.base;
        // The rows' last tile, padded (the walk hands it over as a block
        // of its own), ends rows joined before it.
        if self.continue_joined(d, off, block) {
            return;
        }
        self.finish();
        if !self.stage.is_empty() {
            prefetch_short_rows(self.dst, d, self.src, off, block, self.unit);
        }
        copy_any(
            self.dst, d, self.src, off, block, self.unit, self.stage, false,
        );
    }

    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        self.finish();
        let block = Block::from_walked(a, b);
        let d = other - self.base;
        if short_group_rows::<T>(self.unit, a, b) {
            // A whole tile of `(2,1)` or `(4,1)` groups at once (the rows
            // go plainly either way, being short): one call a tile, not a
            // stream-or-stage decision per pair or quad of rows.
            return group_tiles(self.dst, d, self.src, off, [UNIT, o, a, b], self.stage);
        }
        let outer = Outer {
            count: o.count,
            d: o.other,
            s: o.walk,
        };
        if !self.stage.is_empty() {
            self.joined = stream_joined_rows(
                self.dst, d, self.src, off, outer, block, self.unit, self.stage,
            );
            if self.joined.is_some() {
                return;
            }
        }
        let streamed = !self.stage.is_empty()
            && line_units::<T>(self.unit)
            && stream_lines(
                self.dst, d, self.src, off, outer, block, self.unit, self.stage,
            );
        if !streamed {
            for x in 0..o.count {
                self.block(off + x * o.walk, other + x * o.other, a, b);
            }
        }
    }

    fn block4(&mut self, off: usize, other: usize, band: Axis, o: Axis, a: Axis, b: Axis) {
        if short_group_rows::<T>(self.unit, a, b) {
            self.finish();
            // A band of such tiles in one loop (see `group_tiles`).
            let to = other - self.base;
            return group_tiles(self.dst, to, self.src, off, [band, o, a, b], self.stage);
        }
        for x in 0..band.count {
            self.block3(off + x * band.walk, other + x * band.other, o, a, b);
        }
    }

    fn padding(&mut self, _off: usize, _len: usize) {}
}

/// `band` tiles of `groups` blocks of [`short_group_rows`] (`cols` columns
/// of groups of `rows` elements, the way back from `(2,1)` and `(4,1)`
/// tiles) into the destination from `to` on, in one loop straight into
/// the group kernels ([`simd::deinterleave_groups`], then [`copy_block`]
/// for the columns they leave). With a `stage` (a destination past the
/// cache), a band whose rows join streams ([`stream_group_tiles`]);
/// otherwise each tile asks for the source [`AHEAD_BYTES`] on.
///
/// Each block through `copy_block`, and each tile through a call of its
/// own, cost enough to show against memory's speed. Measured with
/// `benches/relayout_ab.py` (one process, same buffers, AMD EPYC Zen 3,
/// `b / a` against the tile-a-call path): on the `s8 (4,1)` unpack the
/// band in one loop straight into the kernel 0.80-0.90, the band through
/// `copy_block` 0.97-1.00.
fn group_tiles<T: Copy>(
    dst: &mut [T],
    to: usize,
    src: &[T],
    from: usize,
    [band, groups, cols, rows]: [Axis; 4],
    stage: &mut [T],
) {
    let far = !stage.is_empty();
    if far && stream_group_tiles((dst, to), (src, from), [band, groups, cols, rows], stage) {
        return;
    }
    let block = Block::from_walked(cols, rows);
    let tile_len = groups.count.saturating_mul(groups.walk);
    let ahead = tiles_ahead::<T>(tile_len);
    for x in 0..band.count {
        let tile = from + x * band.walk;
        if far {
            let at = tile.saturating_add(ahead);
            simd::prefetch_span(src, at, at.saturating_add(tile_len));
        }
        for g in 0..groups.count {
            let (d, s) = (
                to + x * band.other + g * groups.other,
                tile + g * groups.walk,
            );
            let input = &src[s..][..rows.count * cols.count];
            let done =
                simd::deinterleave_groups(rows.count, &mut dst[d..], rows.other, input, cols.count);
            if done < cols.count {
                let rest = Block {
                    na: cols.count - done,
                    ..block
                };
                copy_block(dst, d + done, src, s + done * rows.count, rest);
            }
        }
    }
}

/// [`group_tiles`] for a band whose tiles' pieces of each destination row
/// join end to end (a row of `(2,1)` or `(4,1)` tiles unpacked into a
/// row-major array past the cache), every row in the same place in its
/// lines, on 16 bytes: a line of each row at a time, each written whole by
/// streaming stores ([`simd::deinterleave_line_streamed`]), each tile's
/// group with the columns the previous tile left of the line split
/// between them (whose groups are put together in `stage` first). Only
/// each joined row's two partial end lines go with plain stores. Written
/// with plain stores, each destination line was read from memory first.
/// `false`, nothing written, for bands of one tile, pieces that do not join
/// or are under two lines, rows in different places in their lines or off
/// 16 bytes, groups without a kernel, or a `stage` under two lines a row.
///
/// Measured with `RELAYOUT_TIMINGS=1 cargo bench --features half --bench
/// relayout`, alternated with the plain path, six runs each (AMD EPYC
/// Zen 4): `bf16 (8,128)(2,1)` unpack 0.97 of `memcpy` to 1.11, `s8
/// (8,128)(4,1)` 0.78 to 0.90 (medians). Each group's kernel steps
/// streamed straight into the destination, 16 bytes of each row in turn,
/// read 1.26 for `bf16` but 0.57 for `s8`: four rows' lines open at once
/// (see [`simd::deinterleave_line_streamed`]). No prefetch: with the plain
/// path's, asking for the source ahead, the `bf16` unpack read 0.92
/// (against 1.21 without), the prefetches waiting on the streaming
/// stores (`benches/README.md`, "Group unpacks streamed").
fn stream_group_tiles<T: Copy>(
    (dst, to): (&mut [T], usize),
    (src, from): (&[T], usize),
    axes: [Axis; 4],
    stage: &mut [T],
) -> bool {
    let [band, groups, cols, rows] = axes;
    let size = core::mem::size_of::<T>();
    let (k, piece, line) = (rows.count, cols.count, line_elements::<T>());
    let at = dst.as_ptr().addr() + to * size;
    if !simd::group_kernel::<T>(k)
        || band.count < 2
        || band.other != piece
        || (cols.walk, cols.other, rows.walk) != (k, 1, 1)
        || piece % line != 0
        || piece < 2 * line
        || at % 16 != 0
        || (rows.other * size) % 64 != 0
        || (groups.other * size) % 64 != 0
        || stage.len() < 2 * k * line + line
    {
        return false;
    }
    // Every row's first line boundary is `head` columns in; the last
    // `tail` columns of each piece start the line that the next piece's
    // first `head` end.
    let head = to_line::<T>(at);
    let tail = (line - head) % line;
    // The two buffers on lines, so that no 16-byte store into them or load
    // out of them straddles two lines.
    let skip = to_line::<T>(stage.as_ptr().addr());
    let (buf, joined) = stage[skip..][..2 * k * line].split_at_mut(k * line);
    // `na` columns of the `k` rows, from `input[s..]`, with plain stores.
    let block = Block::from_walked(cols, rows);
    let plain = |dst: &mut [T], d: usize, input: &[T], s: usize, na: usize| {
        copy_block(dst, d, input, s, Block { na, ..block });
    };
    // A line of each row from `d` on (a line boundary), its groups
    // `input` (what a bound refuses goes plainly).
    let mut streamed = |dst: &mut [T], d: usize, input: &[T]| {
        let done = simd::deinterleave_line_streamed(k, &mut dst[d..], rows.other, input, buf);
        #[cfg(test)]
        tests::JOINED.with(|n| n.set(n.get() + usize::from(done)));
        if !done {
            plain(dst, d, input, 0, line);
        }
    };
    let last = band.count - 1;
    for x in 0..band.count {
        let tile = from + x * band.walk;
        for g in 0..groups.count {
            let s = tile + g * groups.walk;
            let d = to + g * groups.other + x * piece;
            // This piece's columns from `start` on, whole lines from a
            // line boundary; before them, the line split with the previous
            // piece, whose last `tail` columns start it.
            let start = if x == 0 {
                plain(dst, d, src, s, head);
                head
            } else if tail > 0 {
                let before = &src[s - band.walk + (piece - tail) * k..][..tail * k];
                joined[..tail * k].copy_from_slice(before);
                joined[tail * k..].copy_from_slice(&src[s..][..(line - tail) * k]);
                streamed(dst, d - tail, joined);
                line - tail
            } else {
                0
            };
            for c in (start..piece - tail).step_by(line) {
                streamed(dst, d + c, &src[s + c * k..][..line * k]);
            }
            if x == last {
                plain(dst, d + piece - tail, src, s + (piece - tail) * k, tail);
            }
        }
    }
    true
}

/// How far ahead of the tile it unpacks [`group_tiles`] asks for the
/// source, in whole tiles of at least one: 12 tiles of `s8 (4,1)`, six of
/// `bf16 (2,1)`. The hardware's prefetchers follow tiles of either; once
/// a tile went in one loop without a call of its own, asking further
/// ahead measured faster. Measured with `benches/relayout_ab.py` against the earlier
/// path (two tiles ahead, `s8` only): `bf16` unpack `b / a` 0.81-1.03
/// (twelve runs; the word kernel without the prefetch 0.96-1.01, the
/// prefetch without the word kernel 0.99-1.17); 4 KiB and 24 KiB ahead
/// read alike within the method's spread.
const AHEAD_BYTES: usize = 12 << 10;

/// Elements from a tile of `tile_len` `T`s to the one whose source is
/// asked for ahead of it: [`AHEAD_BYTES`] in whole tiles, at least one.
pub(super) fn tiles_ahead<T>(tile_len: usize) -> usize {
    let tile_bytes = tile_len.saturating_mul(core::mem::size_of::<T>());
    (AHEAD_BYTES / tile_bytes.max(1))
        .max(1)
        .saturating_mul(tile_len)
}

/// Row `row`'s two lines of the stage of [`stream_joined_rows`]: the
/// previous piece's last line of source elements, then this piece's first.
fn joined_lines<T>(stage: &mut [T], row: usize) -> &mut [T] {
    let line = line_elements::<T>();
    &mut stage[row * 2 * line..][..2 * line]
}

/// `o.count` blocks `b` of `w`-element units whose rows join end to end in
/// the destination (the tiles of one tile row, unpacked into a row-major
/// array), when those rows do not all start on a line (a row-major
/// `f32[4093,4093]`, or `f32[4096,1000]`, whose rows start on 16 bytes but
/// not all on a line): tile by tile as the source lies, each
/// piece of a row streams its whole lines straight from the source, and
/// the line split between two tiles' pieces is streamed from `stage`,
/// which keeps two lines a row: the previous piece's last line of source
/// elements and this piece's first, the split line lying whole across
/// them. Only each joined row's end lines go with plain stores;
/// streaming the pieces alone (whole lines only) leaves one line in eight
/// to plain stores, each read from memory first: rows on 16 bytes but off
/// a line unpacked so at 0.66-0.80 of `memcpy`, joined at 1.05-1.16
/// (`f32[4096,4092]`, AMD EPYC Zen 3). Whole lines go into the stage
/// rather than the split line's two parts, whose lengths are known only at
/// run time and cost a call to `memcpy` each (8% of the samples of a
/// program unpacking `f32[4093,4093]`).
///
/// Each row's last partial line stays in `stage` rather than going out
/// with plain stores, for a piece that may continue the rows: the rows
/// are returned, and [`Joined::finish`] writes what waits at the latest.
/// `None`, nothing written, for other blocks, rows all on lines (they
/// stream piece by piece), pieces under two lines, or a stage too small
/// for two lines a row.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
fn stream_joined_rows<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
    stage: &mut [T],
) -> Option<Joined> {
    let size = core::mem::size_of::<T>();
    if o.count < 2 || b.na == 0 || !size.is_power_of_two() || size > 16 {
        return None;
    }
    if b.db != w || b.sb != w || o.d != b.nb * w {
        return None;
    }
    // Elements a line, and a piece (one tile's part of a row), which is
    // whole lines long, so that every piece of a row has the same place in
    // its lines; rows start on elements, so line boundaries fall between
    // elements.
    let line = line_elements::<T>();
    let piece = b.nb * w;
    let at = dst.as_ptr().addr() + d * size;
    let aligned = at % 64 == 0 && (b.na == 1 || b.da * size % 64 == 0);
    if aligned
        || at % size != 0
        || piece % line != 0
        || piece < 2 * line
        || stage.len() < b.na * 2 * line
    {
        return None;
    }
    for x in 0..o.count {
        for i in 0..b.na {
            let to = d + i * b.da + x * piece;
            let from = &src[s + x * o.s + i * b.sa..][..piece];
            // The previous piece's last line, then this piece's first.
            let lines = joined_lines(stage, i);
            // Elements to the row's first line boundary; the piece's last
            // line holds the rest of that line's elements.
            let head = to_line_in(dst, d + i * b.da);
            let tail = (line - head) % line;
            let body = piece - head - tail;
            if head > 0 {
                if x == 0 {
                    dst[to..][..head].copy_from_slice(&from[..head]);
                } else {
                    // The split line: the previous piece's last `tail`
                    // elements, which end the first line, and this
                    // piece's first `head`, which start the second.
                    lines[line..].copy_from_slice(&from[..line]);
                    simd::stream_copy_lines(
                        &mut dst[to + head - line..][..line],
                        &lines[head..][..line],
                    );
                }
            }
            simd::stream_copy_lines(&mut dst[to + head..][..body], &from[head..][..body]);
            if tail > 0 {
                lines[..line].copy_from_slice(&from[piece - line..]);
            }
        }
    }
    Some(Joined {
        end: d + o.count * piece,
        stride: b.da,
        rows: b.na,
        next: 0,
    })
}

/// Whether a walked block `a` x `b` of single elements takes groups of 2
/// or 4 consecutive source elements (`b`) into as many destination rows,
/// each contiguous along `a` and shorter than [`SHORT_ROW_BYTES`]: the way
/// back from `(2,1)` and `(4,1)` tiles, whose rows never stream.
///
/// [`Scatter::block3`] moves a whole tile of them (the walk's outer step,
/// four pair rows of a `bf16` `(8,128)(2,1)` tile, two quad rows of `s8`
/// `(4,1)`), [`Scatter::block4`] a band of such tiles, both through
/// [`group_tiles`]. Measured on an AMD EPYC Zen 3 (2 vCPUs) against the
/// path that made the stream-or-stage decision and the prefetch per
/// block, a tile a call: `bf16` unpack 0.71-0.76 of `memcpy` to
/// 0.86-0.97, `s8` 0.63-0.69 to 0.83-0.98 (`cargo bench` runs).
fn short_group_rows<T>(unit: usize, a: Axis, b: Axis) -> bool {
    unit == 1
        && a.other == 1
        && b.walk == 1
        && a.walk == b.count
        && matches!(b.count, 2 | 4)
        && a.count.saturating_mul(core::mem::size_of::<T>()) < SHORT_ROW_BYTES
        // Rows back to back (a minor dim of one tile's width) are one run
        // of the destination, which `stream_block` streams.
        && b.other > a.count
}

/// Blocks of source (storage order) asked for ahead by
/// [`prefetch_short_rows`].
const SOURCE_AHEAD: usize = 6;

/// Row pieces of destination asked for ahead by [`prefetch_short_rows`],
/// for rows of at most `PREFETCHED_ROW_BYTES`.
const DESTINATION_AHEAD: usize = 2;
const PREFETCHED_ROW_BYTES: usize = 128;

/// For a block of an unpack whose destination rows are short and apart
/// (`(4,1)` and `(2,1)` tiles: 128 or 256 bytes a row), which go out with
/// plain stores, when it comes alone (whole tiles of them go through
/// [`short_group_rows`] instead): asks for the source `SOURCE_AHEAD`
/// blocks further on, where the walk reads next if it goes on in storage
/// order, and, for rows of two lines or less, for each row's lines
/// `DESTINATION_AHEAD` pieces further along, where the next tiles write.
/// Hints only: a wrong guess costs a few wasted reads, and nothing
/// outside the slices is asked for.
///
/// Measured under load, medians of five rounds each against the build
/// without: `s8 (4,1)` unpack 0.56 of `memcpy` to 0.62 with both (0.58
/// source only, 0.56 destination only); `bf16 (2,1)` 0.77 to 0.82 with the
/// source only, 0.66-0.72 with the destination too, whose rows of four
/// whole lines the hardware prefetchers follow by themselves.
fn prefetch_short_rows<T: Copy>(dst: &[T], d: usize, src: &[T], s: usize, b: Block, width: usize) {
    let rows = if b.db == width {
        b
    } else if b.da == width {
        b.transposed()
    } else {
        return;
    };
    let len = rows.nb * width;
    let bytes = len * core::mem::size_of::<T>();
    if rows.na < 2 || rows.da <= len || bytes >= SHORT_ROW_BYTES {
        return;
    }
    let span = (rows.na - 1) * rows.sa + (rows.nb - 1) * rows.sb + width;
    let ahead = s.saturating_add(SOURCE_AHEAD.saturating_mul(span));
    simd::prefetch_span(src, ahead, ahead.saturating_add(span));
    if bytes <= PREFETCHED_ROW_BYTES {
        for i in 0..rows.na {
            let at = (d + i * rows.da).saturating_add(DESTINATION_AHEAD * len);
            simd::prefetch_span(dst, at, at.saturating_add(len));
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::simd::tests::{byte, half, word};
    use super::*;

    std::thread_local! {
        /// Bands of tiles [`stream_lines`] and [`stream_padded_rows`] ran in
        /// one call on this thread.
        pub(super) static BANDS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// Groups of a row's last lines [`stream_padded_rows`] ran in one
        /// call on this thread.
        pub(super) static GROUPS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// Bands [`TileGrid::copied_bands`] ran from a copy on this thread.
        pub(super) static STAGED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// Lines [`stream_group_tiles`] streamed on this thread.
        pub(super) static JOINED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    }

    /// Every orientation of both sides, dense and padded, against a plain
    /// double loop, for elements of 4, 2 and 1 bytes (each size has its own
    /// kernels); slots outside the block must keep their old value.
    #[test]
    fn blocks_match_a_plain_loop() {
        for na in 1..=19 {
            for nb in 1..=19 {
                for pad_d in [0, 3] {
                    for pad_s in [0, 5] {
                        // (row-major, column-major) placement of each side.
                        for (da, db) in [(nb + pad_d, 1), (1, na + pad_d)] {
                            for (sa, sb) in [(nb + pad_s, 1), (1, na + pad_s)] {
                                let b = Block {
                                    na,
                                    nb,
                                    da,
                                    db,
                                    sa,
                                    sb,
                                };
                                check(b, u32::MAX, word);
                                check(b, 0xeeee, half);
                                check(b, 0xee, byte);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Bands of 1-3 tiles of 1-2 groups of `(2,1)`- and `(4,1)`-style
    /// rows into row-major rows, columns around the kernels' 16 (so that
    /// some go to `copy_block`), rows apart or back to back, odd offsets,
    /// with and without prefetching, against a plain loop; sizes the
    /// kernels do not take go through `copy_block` alone. Slots outside the
    /// band keep their old value.
    #[test]
    fn group_tiles_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(
            k: usize,
            value: impl Fn(usize) -> T,
            old: T,
        ) {
            let joined = JOINED.get();
            for cols in [1, 15, 16, 17, 33, 64, 96, 128, 160, 192, 256] {
                for (tiles, groups) in [(1, 1), (1, 2), (2, 2), (3, 1), (3, 2), (5, 4)] {
                    // Destinations at every 16 bytes of a line, and off them.
                    let places = [(0, 0, 0, 0), (3, 2, 1, 5), (0, 0, 7, 0), (1, 3, 24, 2)];
                    let lined = [(0, 0, 8, 0), (0, 0, 16, 0), (0, 2, 32, 1), (0, 0, 48, 0)];
                    for (pad, gap, d, s) in places.into_iter().chain(lined) {
                        let pitch = tiles * cols + pad;
                        let tile = groups * k * cols + gap;
                        let axes = [
                            Axis {
                                count: tiles,
                                walk: tile,
                                other: cols,
                            },
                            Axis {
                                count: groups,
                                walk: k * cols,
                                other: k * pitch,
                            },
                            Axis {
                                count: cols,
                                walk: k,
                                other: 1,
                            },
                            Axis {
                                count: k,
                                walk: 1,
                                other: pitch,
                            },
                        ];
                        let src: std::vec::Vec<T> = (0..s + tiles * tile).map(&value).collect();
                        let mut want = std::vec![old; d + groups * k * pitch + 2];
                        for x in 0..tiles {
                            for g in 0..groups {
                                for i in 0..cols {
                                    for j in 0..k {
                                        want[d + (g * k + j) * pitch + x * cols + i] =
                                            src[s + x * tile + g * k * cols + i * k + j];
                                    }
                                }
                            }
                        }
                        // No stage (plain stores), one too small to join
                        // rows, and the 8 KiB of a relayout's.
                        for stage in [0, 600, 8192 / core::mem::size_of::<T>()] {
                            let mut got = std::vec![old; want.len()];
                            let mut stage = std::vec![old; stage];
                            group_tiles(&mut got, d, &src, s, axes, &mut stage);
                            assert_eq!(
                                got,
                                want,
                                "{k} rows, {cols} columns, {tiles} x {groups}, pad {pad}, d {d}, stage {}",
                                stage.len()
                            );
                        }
                    }
                }
            }
            // Rows of whole lines joined wherever the kernels are.
            if simd::group_kernel::<T>(k) {
                assert!(JOINED.get() - joined > 40, "{}", JOINED.get() - joined);
            }
        }
        check(4, |i| (i * 7 + 3) as u8, 0xee);
        check(2, |i| (i as u16).wrapping_mul(40503) | 0x8000, 0xeeee);
        check(2, |i| i as u32 | 1 << 31, u32::MAX);
        check(4, |i| (i % 251) as u16, 0xeeee);
    }

    /// The streaming path against the plain one, for every orientation,
    /// row lengths around a cache line, odd offsets and small stages (so
    /// that rows go through the stage a few at a time).
    #[test]
    fn streamed_blocks_match_plain_ones() {
        for (na, nb) in [
            (1, 16),
            (3, 17),
            (8, 128),
            (17, 5),
            (33, 40),
            (2, 300),
            (128, 8),
        ] {
            for pad in [0, 3] {
                for (da, db) in [(nb + pad, 1), (1, na + pad)] {
                    for (sa, sb) in [(nb + pad, 1), (1, na + pad), (2 * nb + 1, 2)] {
                        let b = Block {
                            na,
                            nb,
                            da,
                            db,
                            sa,
                            sb,
                        };
                        for stage_len in [0, 16, 100, 1000, 4096] {
                            let (d, s) = (5, 3);
                            let src_len = s + (na - 1) * sa + (nb - 1) * sb + 1;
                            let dst_len = d + (na - 1) * da + (nb - 1) * db + 1 + 2;
                            let src: std::vec::Vec<u32> = (0..src_len as u32).collect();
                            let mut want = std::vec![7u32; dst_len];
                            copy_block(&mut want, d, &src, s, b);
                            let mut got = std::vec![7u32; dst_len];
                            let mut stage = std::vec![0u32; stage_len];
                            stream_block(
                                &mut got,
                                d,
                                &src,
                                s,
                                b,
                                1,
                                &mut stage,
                                stage_len % 2 == 0,
                            );
                            simd::stream_fence();
                            assert_eq!(got, want, "{b:?}, stage {stage_len}");
                        }
                    }
                }
            }
        }
    }

    /// Units of 2 and 4 elements, in every orientation, against element loops.
    #[test]
    fn unit_blocks_match_a_plain_loop() {
        for c in [2, 4] {
            for (na, nb) in [(1, 1), (4, 4), (5, 9), (8, 64), (13, 3)] {
                for (da, db) in [(nb * c + 2, c), (nb * c, c), (c, na * c + 6)] {
                    for (sa, sb) in [(nb * c + 4, c), (c, na * c), (c * (nb + 1), 3 * c)] {
                        let b = Block {
                            na,
                            nb,
                            da,
                            db,
                            sa,
                            sb,
                        };
                        let (d, s) = (3, 5);
                        let src_len = s + (na - 1) * sa + (nb - 1) * sb + c + 1;
                        let dst_len = d + (na - 1) * da + (nb - 1) * db + c + 2;
                        let src: std::vec::Vec<u16> = (0..src_len as u16).collect();
                        let mut want = std::vec![u16::MAX; dst_len];
                        for i in 0..na {
                            for j in 0..nb {
                                for k in 0..c {
                                    want[d + i * da + j * db + k] = src[s + i * sa + j * sb + k];
                                }
                            }
                        }
                        let mut got = std::vec![u16::MAX; dst_len];
                        copy_units(&mut got, d, &src, s, b, c);
                        assert_eq!(got, want, "{b:?} of {c}");
                        for stage_len in [8, 64, 1000] {
                            let mut got = std::vec![u16::MAX; dst_len];
                            let mut stage = std::vec![0u16; stage_len];
                            stream_block(&mut got, d, &src, s, b, c, &mut stage, stage_len > 60);
                            simd::stream_fence();
                            assert_eq!(got, want, "{b:?} of {c}, streamed, stage {stage_len}");
                        }
                    }
                }
            }
        }
    }

    /// The row offsets [`stream_lines`] carries from tile to tile are the
    /// ones it would divide for: groups shorter than, equal to, dividing,
    /// and longer than 16 rows, outer strides below and above a group's
    /// span, any start.
    #[test]
    fn carried_row_offsets_match_divided_ones() {
        for na in [1, 2, 3, 5, 8, 12, 16, 17, 40, 131] {
            for (outer, step) in [(na * 7, 7), (na * 7 + 33, 7), (3, 129), (1, 1)] {
                let rows = Rows16::new(na, outer, step);
                for start in [0, 1, 11, na, 3 * na + 5] {
                    let mut at = rows.at(start);
                    for band in 0..40 {
                        let i = start + 16 * band;
                        let want: [usize; 16] =
                            core::array::from_fn(|c| (i + c) / na * outer + (i + c) % na * step);
                        assert_eq!(
                            at.off, want,
                            "{na} {outer} {step} from {start}, band {band}"
                        );
                        // The same starts as quarters, where they are.
                        let runs = rows.runs(&at, 1000);
                        assert_eq!(runs.each(), want.map(|o| o.wrapping_add(1000)));
                        let within = (0..4).all(|q| (i + 4 * q) % na + 4 <= na);
                        assert_eq!(matches!(runs, Runs::Quarters(_)), within);
                        rows.advance(&mut at);
                    }
                }
            }
        }
    }

    /// Whether the line tiles run here, asserting that they do wherever
    /// `std` (apart from the detection the kernels use) sees AVX2, so that
    /// the tests below run the kernel of this CPU.
    fn line_tiles_here() -> bool {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(simd::line_tiles(), std::is_x86_feature_detected!("avx2"));
        simd::line_tiles()
    }

    /// Line tiles of 3-D and 2-D transposes, both sides as rows, against a
    /// plain loop: sizes around the 16-unit grid, odd offsets (so every
    /// place in a line), group sizes that split tiles, 4-byte elements and
    /// pairs of 2-byte ones; nothing outside the block may change.
    #[test]
    fn line_tiles_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let w = 4 / core::mem::size_of::<T>();
            let mut tiled = [0; 2];
            let (bands, staged) = (BANDS.get(), STAGED.get());
            for (count, na, nb) in [
                (1, 40, 130),
                (1, 131, 128),
                (37, 8, 128),
                (5, 12, 300),
                (300, 1, 144),
                // Bands of 32 tiles and more, run in one call: rows one
                // group, groups of 8, 16 and 4 rows, and groups of 5 (whose
                // tiles' rows are not in quarters), down the block; rows
                // one group, groups of 8 and 16, along it.
                (1, 600, 48),
                (80, 8, 32),
                (40, 16, 48),
                (160, 4, 32),
                (120, 5, 48),
                (1, 40, 600),
                (5, 8, 530),
                (3, 16, 530),
                // Short bands along rows close enough to be copied a band
                // at a time (one group, and groups of 16), and rows too
                // far apart for the stage.
                (1, 64, 64),
                (4, 16, 64),
                (2, 40, 96),
                (3, 32, 80),
                (1, 48, 272),
            ] {
                for (d, s) in [(0, 0), (3 * w, 5 * w), (1, 2)] {
                    for rows_dst in [true, false] {
                        // Pitches of whole lines (16 units) plus `extra`.
                        for extra in [0, 1] {
                            let ni: usize = count * na;
                            let col = (ni.div_ceil(16) * 16 + 16 + extra) * w;
                            // Rows on the destination; the other way, the
                            // same block with the sides exchanged.
                            let row = (nb + extra) * w;
                            let b = Block {
                                na,
                                nb,
                                da: row,
                                db: w,
                                sa: w,
                                sb: col,
                            };
                            let (outer_d, outer_s) = (na * row + 16 * w, na * w);
                            let (b, (od, os)) = if rows_dst {
                                (b, (outer_d, outer_s))
                            } else {
                                (b.swapped_sides(), (outer_s, outer_d))
                            };
                            let o = Outer {
                                count,
                                d: od,
                                s: os,
                            };
                            let last = |at: usize, x: usize, a: usize, bb: usize| {
                                at + (count - 1) * x + (na - 1) * a + (nb - 1) * bb + w
                            };
                            let src_len = last(s, o.s, b.sa, b.sb) + 7;
                            let dst_len = last(d, o.d, b.da, b.db) + 9;
                            let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                            let mut want = std::vec![old; dst_len];
                            for x in 0..count {
                                for i in 0..na {
                                    for j in 0..nb {
                                        for k in 0..w {
                                            want[d + x * o.d + i * b.da + j * b.db + k] =
                                                src[s + x * o.s + i * b.sa + j * b.sb + k];
                                        }
                                    }
                                }
                            }
                            // No stage, and the 8 KiB of a relayout's
                            // (short bands along close rows from copies).
                            for stage in [0, 8192 / core::mem::size_of::<T>()] {
                                let mut got = std::vec![old; dst_len];
                                let mut stage = std::vec![old; stage];
                                let done = stream_lines(&mut got, d, &src, s, o, b, w, &mut stage);
                                simd::stream_fence();
                                if done {
                                    tiled[usize::from(rows_dst)] += 1;
                                    assert_eq!(
                                        got,
                                        want,
                                        "{o:?} {b:?} at {d}/{s}, stage {}",
                                        stage.len()
                                    );
                                } else {
                                    assert!(got.iter().all(|&x| x == old));
                                }
                            }
                        }
                    }
                }
            }
            if line_tiles_here() {
                assert!(tiled.iter().all(|&n| n > 5), "{tiled:?}");
                assert!(BANDS.get() - bands > 10, "{}", BANDS.get() - bands);
                assert!(STAGED.get() - staged > 5, "{}", STAGED.get() - staged);
            }
        }
        check(word, 0);
        check(half, 0);
    }

    #[test]
    fn padded_rows_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, fill: T, old: T) {
            let w = 4 / core::mem::size_of::<T>();
            let mut taken = 0;
            let (bands, groups) = (BANDS.get(), GROUPS.get());
            for (na, count, b_len) in [
                (16_usize, 64, 128),
                (37, 5, 32),
                (50, 20, 32),
                (19, 31, 32),
                (40, 1, 16),
                (33, 100, 112),
                (70, 16, 128),
                // Lines of data alone before the last, down the block in
                // one call each; more of a row's last lines than a group
                // holds.
                (40, 80, 128),
                (35, 130, 160),
                (20, 16, 256),
            ] {
                for (d, s) in [(0, 0), (3 * w, 5 * w), (1, 2), (7 * w, 0), (16 * w, 13 * w)] {
                    // Source columns whole lines apart plus `extra` units.
                    for extra in [0, 1] {
                        let sb = (na.div_ceil(16) * 16 + 16 + extra) * w;
                        // The last column ends the source: the rows past
                        // the block are not there to read.
                        let src_len = s + (count - 1) * sb + na * w;
                        let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                        let dst_len = d + na * b_len * w + 9;
                        let block = (na, count, b_len);
                        let want =
                            padded_rows_by_hand(&src, s, sb, block, w, fill, (d, dst_len), old);
                        let mut got = std::vec![old; dst_len];
                        let mut scratch = std::vec![old; 784 * w];
                        let done = stream_padded_rows(
                            &mut got,
                            d,
                            &src,
                            s,
                            block,
                            sb,
                            w,
                            fill,
                            &mut scratch,
                        );
                        simd::stream_fence();
                        if done {
                            taken += 1;
                            assert_eq!(got, want, "{block:?} sb {sb} at {d}/{s}");
                        } else {
                            assert!(got.iter().all(|&x| x == old));
                        }
                    }
                }
            }
            if line_tiles_here() {
                assert!(taken > 30, "{taken}");
                let (bands, groups) = (BANDS.get() - bands, GROUPS.get() - groups);
                assert!(bands > 10 && groups > 30, "{bands} {groups}");
            }
        }
        check(word, 2, 0);
        check(half, 0x1234, 0);
        check(byte, 0x11, 0);
    }

    /// What a padded block of `w`-element units writes, by a plain loop:
    /// `na` rows of `b_len` units from `d` in a destination of `dst_len`
    /// elements (the rest `old`), unit `j < count` of row `i` from
    /// `src[s + i*w + j*sb..][..w]` and `fill` after.
    #[allow(clippy::too_many_arguments)]
    fn padded_rows_by_hand<T: Copy>(
        src: &[T],
        s: usize,
        sb: usize,
        (na, count, b_len): (usize, usize, usize),
        w: usize,
        fill: T,
        (d, dst_len): (usize, usize),
        old: T,
    ) -> std::vec::Vec<T> {
        let mut want = std::vec![old; dst_len];
        for i in 0..na {
            for j in 0..b_len {
                for e in 0..w {
                    want[d + (i * b_len + j) * w + e] = if j < count {
                        src[s + i * w + j * sb + e]
                    } else {
                        fill
                    };
                }
            }
        }
        want
    }

    /// Padded blocks whose source rows lie pages apart, copied a stretch
    /// of rows at a time before the transposes, against a plain loop, at
    /// odd sizes and offsets, with more rows than one stretch holds; slots
    /// outside the block keep their old value. The copying path must run
    /// for every block it is meant for, and the visitor must give the same
    /// whichever path it picks.
    #[test]
    fn far_source_rows_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, fill: T, old: T) {
            let w = 4 / core::mem::size_of::<T>();
            for (na, count, b_len) in [
                (1_usize, 8, 16),
                (16, 64, 128),
                (21, 9, 9),
                (300, 64, 128),
                (300, 100, 112),
                (5, 7, 32),
            ] {
                for (d, s) in [(0, 0), (1, 3), (3 * w, 5 * w)] {
                    // Units a source row from the next: a page, or more.
                    for apart in [1024, 1031] {
                        let sb = apart * w;
                        let src_len = s + (count - 1) * sb + na * w;
                        let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                        let dst_len = d + na * b_len * w + 9;
                        let block = (na, count, b_len);
                        let want =
                            padded_rows_by_hand(&src, s, sb, block, w, fill, (d, dst_len), old);
                        let a = Axis {
                            count: na,
                            walk: b_len * w,
                            other: w,
                        };
                        let b = Axis {
                            count,
                            walk: w,
                            other: sb,
                        };
                        let at =
                            std::format!("{na}x{count} of {b_len}, rows {sb} apart, at {d}/{s}");
                        for copied in [false, true] {
                            let mut got = std::vec![old; dst_len];
                            simd::with_stage(old, |stage| {
                                let mut v = Gather {
                                    dst: &mut got,
                                    base: 0,
                                    src: &src,
                                    padding: Some(fill),
                                    stage,
                                    unit: w,
                                    end: 0,
                                };
                                if copied {
                                    let ran = simd::with_wide(old, usize::MAX, |wide| {
                                        v.padded_rows_copied(wide, d, s, a, b, b_len)
                                    });
                                    assert!(ran, "{at}");
                                } else {
                                    v.block_padded(d, s, a, b, b_len);
                                }
                            });
                            simd::stream_fence();
                            assert_eq!(got, want, "{at}, copied {copied}");
                        }
                    }
                }
            }
        }
        check(word, 2, 0);
        check(half, 0x1234, 0);
        check(byte, 0x11, 0);
    }

    /// Calls `check(make, old)` for elements of 1, 2, 4, 8 and 16 bytes.
    macro_rules! every_element_size {
        ($check:ident) => {
            $check(word, 0);
            $check(half, 0);
            $check(byte, 0);
            $check(|i| (i as u64) << 20 | 1, 0);
            $check(|i| ((i as u128) << 64 | 1).to_le_bytes(), [0; 16]);
        };
    }

    /// Tile rows joined into destination rows that start anywhere in a
    /// line, against a plain loop; slots outside the block keep their old
    /// value, and the path must be taken for the rows off a line (on 16
    /// bytes or not) when the stage holds two lines a row. The block
    /// starts on a line, an element past one, 16, 32 and 48 bytes past
    /// one and an element short of the next, so rows on 16 bytes but off a
    /// line come up for every element size.
    #[test]
    fn joined_rows_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let size = core::mem::size_of::<T>();
            let w = (4 / size).max(1);
            let (mut taken, mut on_16) = (0, 0);
            for (count, na, nb) in [(2, 1, 16), (3, 3, 32), (31, 8, 16), (5, 2, 20), (4, 5, 64)] {
                let nb = (nb * 4 / (w * size)).max(4);
                let piece = nb * w;
                let line = 64 / size;
                let starts = (0..line).filter(|&k| k < 2 || k * size % 16 == 0 || k == line - 1);
                for past_line in starts {
                    for extra in [0, 1, 3, 16 / size, 64 / size] {
                        let da = count * piece + extra;
                        let (first, sa, os) = (3, piece, na * piece + 7);
                        let src_len = first + count * os;
                        let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                        let dst_len = 64 + past_line + na * da + 9;
                        let mut want = std::vec![old; dst_len];
                        let mut got = std::vec![old; dst_len];
                        // `past_line` elements past a line boundary of `got`.
                        let lead = got.as_ptr().addr().next_multiple_of(64) - got.as_ptr().addr();
                        let d = lead / size + past_line;
                        for x in 0..count {
                            for i in 0..na {
                                for j in 0..piece {
                                    want[d + i * da + x * piece + j] =
                                        src[first + x * os + i * sa + j];
                                }
                            }
                        }
                        for stage_len in [na * 64 / size, na * 128 / size, 2048] {
                            got.fill(old);
                            let mut stage = std::vec![old; stage_len];
                            let o = Outer {
                                count,
                                d: piece,
                                s: os,
                            };
                            let b = Block {
                                na,
                                nb,
                                da,
                                db: w,
                                sa,
                                sb: w,
                            };
                            let joined =
                                stream_joined_rows(&mut got, d, &src, first, o, b, w, &mut stage);
                            // The rows' last partial lines, which wait in the
                            // stage for a piece that continues them.
                            if let Some(j) = joined {
                                j.finish(&mut got, &mut stage);
                            }
                            let done = joined.is_some();
                            simd::stream_fence();
                            let at = |k: usize| got.as_ptr().addr() + k * size;
                            let off = (0..na).any(|i| at(d + i * da) % 64 != 0);
                            let fits = piece * size % 64 == 0
                                && piece * size >= 128
                                && size <= 16
                                && stage_len * size >= na * 128;
                            assert_eq!(done, off && fits, "{count}x{na}x{nb} at {d}, da {da}");
                            if done {
                                taken += 1;
                                on_16 += usize::from((0..na).all(|i| at(d + i * da) % 16 == 0));
                                assert_eq!(got, want, "{count}x{na}x{nb} at {d}, da {da}");
                            } else {
                                assert!(got.iter().all(|&v| v == old));
                            }
                        }
                    }
                }
            }
            assert!(taken > 50 && on_16 > 10, "{taken}, {on_16} on 16 bytes");
        }
        every_element_size!(check);
    }

    /// Short rows packed a row at a time across their tiles, against a
    /// plain loop, at odd offsets both sides; slots outside the block keep
    /// their old value, and the path is taken exactly for blocks of two to
    /// sixteen tiles, rows of at most 8 KiB that are no whole number of
    /// pages, and pieces of a line or more.
    #[test]
    fn rows_across_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let size = core::mem::size_of::<T>();
            let mut taken = 0;
            // Tiles a row, rows a tile, bytes a piece, units a position.
            for (count, na, piece_bytes, w) in [
                (4, 8, 512, 1),
                (3, 8, 512, 1),
                (2, 3, 64, 1),
                (4, 2, 256, 2),
                (5, 8, 256, 1),
                (4, 8, 1024, 1),
                (2, 1, 512, 1),
                (3, 4, 48, 1),
                (8, 8, 512, 1),
                (15, 2, 512, 1),
                (16, 2, 512, 1),
                (17, 2, 128, 1),
            ] {
                let len = (piece_bytes / size).max(w) / w * w;
                for (d, s) in [(0, 0), (1, 3), (4, 5), (16, 2)] {
                    for pad in [0, 1, 7] {
                        // The source's rows: the tiles' pieces side by side.
                        let sa = count * len + pad;
                        let src: std::vec::Vec<T> = (0..s + na * sa + 5).map(make).collect();
                        let tile = na * len;
                        let mut want = std::vec![old; d + count * tile + 9];
                        for x in 0..count {
                            for i in 0..na {
                                for j in 0..len {
                                    want[d + x * tile + i * len + j] =
                                        src[s + i * sa + x * len + j];
                                }
                            }
                        }
                        let mut got = std::vec![old; want.len()];
                        let o = Outer {
                            count,
                            d: tile,
                            s: len,
                        };
                        let b = Block {
                            na,
                            nb: len / w,
                            da: len,
                            db: w,
                            sa,
                            sb: w,
                        };
                        let done = stream_rows_across(&mut got, d, &src, s, o, b, w);
                        simd::stream_fence();
                        let fits = (2..=ACROSS_TILES).contains(&count)
                            && na > 1
                            && len * size >= 64
                            && sa * size <= SHORT_SOURCE_ROW_BYTES
                            && sa * size % PAGE_BYTES != 0;
                        assert_eq!(done, fits, "{count}x{na}x{len} at {d}, {s}, row {sa}");
                        if done {
                            taken += 1;
                            assert_eq!(got, want, "{count}x{na}x{len} at {d}, {s}, row {sa}");
                        } else {
                            assert!(got.iter().all(|&v| v == old));
                        }
                    }
                }
            }
            assert!(taken > 20, "{taken}");
        }
        every_element_size!(check);
    }

    #[test]
    fn streamed_fills_match_plain_ones() {
        for len in [0, 1, 15, 16, 17, 100, 1000] {
            for off in [0, 1, 7] {
                for stage_len in [0, 16, 100] {
                    let mut got = std::vec![1u32; 1100];
                    let mut stage = std::vec![0u32; stage_len];
                    stream_fill(&mut got[off..off + len], 9, &mut stage);
                    simd::stream_fence();
                    let mut want = std::vec![1u32; 1100];
                    want[off..off + len].fill(9);
                    assert_eq!(got, want, "{len} at {off}, stage {stage_len}");
                }
            }
        }
    }

    fn check<T: Copy + PartialEq + core::fmt::Debug>(b: Block, old: T, value: fn(usize) -> T) {
        let (d, s) = (2, 7);
        let src_len = s + (b.na - 1) * b.sa + (b.nb - 1) * b.sb + 1 + 9;
        let dst_len = d + (b.na - 1) * b.da + (b.nb - 1) * b.db + 1 + 4;
        let src: std::vec::Vec<T> = (0..src_len).map(value).collect();
        let mut expected = std::vec![old; dst_len];
        for i in 0..b.na {
            for j in 0..b.nb {
                expected[d + i * b.da + j * b.db] = src[s + i * b.sa + j * b.sb];
            }
        }
        let mut got = std::vec![old; dst_len];
        copy_block(&mut got, d, &src, s, b);
        assert_eq!(got, expected, "{b:?}");
    }
}
