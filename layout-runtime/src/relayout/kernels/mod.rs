//! Copy kernels for whole-element storage: a 2-D strided block at a time.
//!
//! The shapes that matter get their own loops, written so the compiler can
//! vectorize them: rows of contiguous elements (`T(8,128)`: 128 values of
//! one row), rows interleaved element by element (`(2,1)` and `(4,1)` pack
//! 2 or 4 rows into one word), and small transposes (column-major sources).

//!
//! The loops here are safe code; where a machine kernel does better, they
//! call it through [`arch`](super::arch), the one dispatch point. Which
//! kernel runs for which block is the strategies' choice
//! ([`Gather`](super::gather::Gather), [`Scatter`](super::scatter::Scatter)).

mod groups;
mod lines;
mod padded;
mod rows;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use groups::*;
pub(crate) use lines::*;
pub(crate) use padded::*;
pub(crate) use rows::*;

use super::arch;
use super::walk::Axis;

/// A 2-D copy: `dst[d + i*da + j*db] = src[s + i*sa + j*sb]` for
/// `i < na`, `j < nb`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    pub(crate) fn into_walked(a: Axis, b: Axis) -> Block {
        Block {
            na: a.count,
            nb: b.count,
            da: a.walk,
            db: b.walk,
            sa: a.other,
            sb: b.other,
        }
    }

    /// This block oriented so that the destination's rows of `width`-element
    /// units run along `j` (`db` set to `width`), or `None` when neither
    /// side's inner stride is a unit.
    pub(crate) fn destination_rows(self, width: usize) -> Option<Block> {
        let rows = if self.db == width || self.nb == 1 {
            self
        } else if self.da == width || self.na == 1 {
            self.transposed()
        } else {
            return None;
        };
        Some(Block { db: width, ..rows })
    }

    /// The destination offset of the block's last element from its first
    /// (`None` for an empty block or one past `usize`).
    pub(crate) fn last(self) -> Option<usize> {
        let i = self.na.checked_sub(1)?.checked_mul(self.da)?;
        i.checked_add(self.nb.checked_sub(1)?.checked_mul(self.db)?)
    }

    /// The copy of a walk's block `a` x `b` out of the walked storage
    /// (unpacking: the other array is the destination).
    pub(crate) fn from_walked(a: Axis, b: Axis) -> Block {
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

/// Rows of at most 8 elements and fewer bytes than this are copied by
/// moves of a fixed length ([`short_rows`]) rather than a `memcpy` call
/// each.
const SHORT_COPY_BYTES: usize = 32;

/// The rows of `b`, each `N` contiguous elements both sides.
fn short_rows<T: Copy, const N: usize>(dst: &mut [T], d: usize, src: &[T], s: usize, b: Block) {
    for i in 0..b.na {
        let (to, from) = (d + i * b.da, s + i * b.sa);
        dst[to..to + N].copy_from_slice(&src[from..from + N]);
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
        } else if b.nb <= 8 && b.nb * core::mem::size_of::<T>() < SHORT_COPY_BYTES {
            // Rows of a few elements (a pair of `bf16` of a `(2,1)` tile
            // transposed) by moves of a length the compiler knows: a
            // `memcpy` call a row took most of such a pack's time (a
            // loop of run-time length becomes that call too).
            match b.nb {
                1 => short_rows::<T, 1>(dst, d, src, s, b),
                2 => short_rows::<T, 2>(dst, d, src, s, b),
                3 => short_rows::<T, 3>(dst, d, src, s, b),
                4 => short_rows::<T, 4>(dst, d, src, s, b),
                5 => short_rows::<T, 5>(dst, d, src, s, b),
                6 => short_rows::<T, 6>(dst, d, src, s, b),
                7 => short_rows::<T, 7>(dst, d, src, s, b),
                _ => short_rows::<T, 8>(dst, d, src, s, b),
            }
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
    if arch::VECTOR_TRANSPOSE
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
            arch::transpose_units(dst, d, t.da, src, s, t.sb, (t.na, t.nb))
        }
        _ => (0, 0),
    };
    let t = t.unwrap_or(b);
    // Units of a length the compiler knows move by plain moves; of a
    // run-time length each was a `memcpy` call (most of the time of an
    // `s8 (4,1)` tile's transposed unpack). `copy_block`'s short rows do
    // the same apart: one helper over an iterator of places for both made
    // the transposed `(2,1)` and `(4,1)` unpacks take 1.3 times as long.
    match width {
        2 => units_left::<T, 2>(dst, d, src, s, t, (ti, tj)),
        4 => units_left::<T, 4>(dst, d, src, s, t, (ti, tj)),
        8 => units_left::<T, 8>(dst, d, src, s, t, (ti, tj)),
        _ => {
            for (i, j) in left(t, (ti, tj)) {
                dst[d + i * t.da + j * t.db..][..width]
                    .copy_from_slice(&src[s + i * t.sa + j * t.sb..][..width]);
            }
        }
    }
}

/// The units of `t` outside the `ti` x `tj` corner a vector kernel did:
/// `(i, j)` for `i < ti`, `j >= tj`, then every `j` for `i >= ti`.
fn left(t: Block, (ti, tj): (usize, usize)) -> impl Iterator<Item = (usize, usize)> {
    let top = (0..ti).flat_map(move |i| (tj..t.nb).map(move |j| (i, j)));
    let rest = (ti..t.na).flat_map(move |i| (0..t.nb).map(move |j| (i, j)));
    top.chain(rest)
}

/// [`copy_units`]' units left over, `W` elements each.
fn units_left<T: Copy, const W: usize>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    t: Block,
    done: (usize, usize),
) {
    for (i, j) in left(t, done) {
        dst[d + i * t.da + j * t.db..][..W].copy_from_slice(&src[s + i * t.sa + j * t.sb..][..W]);
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
    let Some(rows) = b.destination_rows(width) else {
        return plain(dst, d, src, s, b);
    };
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
        arch::stream_copy_in_order
    } else {
        arch::stream_copy
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
        let grid = [(1, 0, 0), (rows.na, rows.da, rows.sa)];
        let granule = if in_order && rows.da == len { 16 } else { 64 };
        let ask = arch::next_span::<T>(grid, len).map(|at| (at, len));
        if arch::stream_runs(&mut dst[d..], &src[s..], grid, len, granule, ask) {
            return;
        }
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

/// [`stream_interleaved`] for `o.count` blocks `b` of single elements (a
/// band of `(4,1)` or `(2,1)` tiles packed), in one loop: a tile's groups
/// a call of [`copy_any`], the dispatch took a sixth of the samples of the
/// `bf16 (8,128)(2,1)` pack. `false`, nothing written, for other blocks.
// The names of `Block`, `Outer` and `stream_interleaved`.
#[allow(clippy::many_single_char_names)]
pub(crate) fn stream_interleaved_band<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
) -> bool {
    let Some(rows) = b.destination_rows(1) else {
        return false;
    };
    if group_rows::<T>(rows).is_none() || rows.na < 16 || o.count == 0 {
        return false;
    }
    for x in 0..o.count {
        if !stream_interleaved(dst, d + x * o.d, src, s + x * o.s, rows) {
            copy_block(dst, d + x * o.d, src, s + x * o.s, rows);
        }
    }
    true
}

/// The `k` source rows a block of single elements (oriented by
/// [`Block::destination_rows`]) groups into its destination run, for the
/// blocks [`stream_interleaved`] takes: `(4,1)` tiles of bytes, `(2,1)`
/// tiles of 2-byte elements.
fn group_rows<T>(rows: Block) -> Option<usize> {
    let k = match core::mem::size_of::<T>() {
        1 => 4,
        2 => 2,
        _ => return None,
    };
    (rows.db == 1 && rows.sa == 1 && rows.nb == k && rows.da == k).then_some(k)
}

/// `(4,1)` tiles of bytes and `(2,1)` tiles of 2-byte elements: a
/// destination run (along `j`, rows back to back) that groups `k` rows of
/// the source, moved by kernels that write it with streaming stores
/// straight from registers, with no stage in between. `false` (nothing
/// written) for other blocks. The way back has no such kernel: streaming
/// 16 bytes at a time into four rows far apart measured slower than
/// staging whole rows (`s8` unpack 0.4 against 0.5 of `memcpy`).
fn stream_interleaved<T: Copy>(dst: &mut [T], d: usize, src: &[T], s: usize, rows: Block) -> bool {
    let Some(k) = group_rows::<T>(rows) else {
        return false;
    };
    // dst[d + i*k + j] = src[s + i + j*sb]: k rows into groups.
    let done = arch::interleave_stream(&mut dst[d..][..rows.na * k], &src[s..], rows.sb, rows.na);
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

/// The most bytes a band may hold for the next one to be asked for in
/// order as it is read ([`ask_band_share`], `arch::Ahead::Linear`).
const BURST_BYTES: usize = 8 << 10;

/// Whether a band of `rows` rows of `width` elements holds
/// [`BURST_BYTES`] or less: short enough that the hardware's prefetchers,
/// which learn a stream from its first lines, leave its rows to memory's
/// latency.
pub(crate) fn burst_band<T>(rows: usize, width: usize) -> bool {
    rows.saturating_mul(width)
        .saturating_mul(core::mem::size_of::<T>())
        <= BURST_BYTES
}

/// For a block of `rows` rows of `width` elements, `pitch` apart, read
/// from `src[from..]`, one of the blocks side by side that make a short
/// band ([`burst_band`] of its whole rows): asks for this block's share
/// of the next band, which lies right after this one, the same fraction
/// of its bytes as the block's columns are of a row (`rows` times its
/// columns on). The band's blocks so ask for the next band once, in
/// order, as the walk reads this one; the hardware's prefetchers leave
/// such short rows to memory's latency. `s4[66576,1008]{1,0:T(8,128)
/// (8,1)E(4)}` packed in 6.2-6.6 ms so against 8.0-8.3, `s4[131072,512]`
/// 3.6-3.8 against 8.6-8.7; for bands past [`BURST_BYTES`] (rows of 4 KiB:
/// 4.4-4.8 against 3.7-3.9) nothing is asked. Bands of half
/// [`AHEAD_BYTES`] or less ask for the band as many whole bands on as fit
/// in it, into the L2 cache: one band on is too near to hide memory's
/// latency, and asked into the L1 cache the requests hold its few fill
/// buffers (a rank-1 `s4` array in `T(1024)(128)(8,1)`, a band a
/// kilobyte, packed in 6.6-7.1 ms so against 7.7-9.3; 8.7-9.2 asking
/// into the L1 cache; caches flushed, 2-vCPU Intel Xeon). The next band
/// of the longer ones, needed soon, goes into the L1 cache
/// (`s4[131072,512]`, bands of 4 KiB: 6.0-6.4 ms so, 6.6-6.9 into the
/// L2). Hints only: nothing outside `src` is asked for.
pub(crate) fn ask_band_share<T>(
    src: &[T],
    from: usize,
    (rows, pitch, width): (usize, usize, usize),
) {
    if pitch == 0 || !burst_band::<T>(rows, pitch) {
        return;
    }
    let band = rows.saturating_mul(pitch);
    let ahead = AHEAD_BYTES / band.saturating_mul(core::mem::size_of::<T>()).max(1);
    let column = from % pitch;
    let next = (from - column).saturating_add(ahead.max(1).saturating_mul(band));
    let first = next.saturating_add(rows.saturating_mul(column));
    let last = first.saturating_add(rows.saturating_mul(width));
    if ahead > 1 {
        arch::prefetch_span(src, first, last);
    } else {
        arch::prefetch_near_span(src, first, last);
    }
}

/// How far on [`ask_band_share`] asks for short bands.
const AHEAD_BYTES: usize = 4 << 10;

/// See [`stream_block`].
pub(crate) const SHORT_ROW_BYTES: usize = 512;

/// Rows a stage should hold at least: fewer, and the source side of a
/// transpose reads too little of each cache line per pass.
pub(crate) const STAGED_ROWS: usize = 8;

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
        arch::stream_copy_lines(part, &stage[..part.len()]);
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
                let done = arch::interleave4_bytes(out, src, pitch, n);
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
                let done = arch::deinterleave_groups($k, dst, pitch, input, n);
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
    let (ti, tj) = match arch::transpose32(dst, d, b.da, src, s, b.sb, (b.na, b.nb)) {
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
