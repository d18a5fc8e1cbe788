//! Padded blocks whose rows lie back to back in the destination, written
//! a cache line of 16 rows at a time.

use super::{arch, Block, Outer, PREFETCH_TILES};

/// A padded block of 4-byte units (`w` elements each) whose rows lie back
/// to back in the destination, each `b_len` units: unit `j` of row `i` is
/// `src[s + i*w + j*sb..][..w]` for `j < count` and `fill` after, the
/// source contiguous down the rows (a 4-D permutation into `(2,1)` tiles
/// whose minor dim is padded). Written on the destination's cache lines in
/// 16x16 tiles of 16 rows by one line, the source read where it lies, 16
/// runs at a time: each line of data alone but the last down all the
/// whole bands in one call ([`arch::tile16_quarters_run`]); then, a band of 16
/// rows at a time in one call ([`arch::tile16_group_run`]), the rest of
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
/// 0.49-0.72). Tile by tile, as it
/// went before the calls, it read 0.36-0.38 of `memcpy` against 0.42-0.44
/// for the copies.
// `d`, `s`, `w` as in `Block` and `stream_lines`; `r`, `c` a unit's row and column.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub(crate) fn stream_padded_rows<T: Copy>(
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
    let Some(kernel) = arch::TileKernel::best() else {
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
                    arch::stream_copy(&mut dst[o..][..run], line);
                }
            }
            return;
        }
        let from: [usize; 16] = core::array::from_fn(|c| s + (r0 + cols[c].0) * w + cols[c].1 * sb);
        if data == 16 && arch::tile16(dst, &to, src, &from, true) {
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

/// A transpose into padded rows of 4-byte units (`w` elements each) that
/// lie back to back in groups of `na` rows, the groups `o.d` elements
/// apart in the destination and `o.s` in the source: unit `j` of row `i`
/// of a group is `src[s + i*w + j*sb..][..w]` for `j < count` and `fill`
/// up to `b_len`, the source contiguous down a group's rows (the ragged
/// last tile column of a transpose, a group its tile rows, or all its
/// rows). A stretch of rows at a time is put together whole in a stage,
/// its data in 16x16 tiles down 16 source runs at a time over the padding
/// the stage starts with, and streamed out a group's rows at a time:
/// every line a row's data shares with its padding, or a row with the
/// next, is written once, whole. Written as a block and then each row's
/// padding, those lines went in pieces with plain stores: the
/// `s8[1,74,207,4349]{2,3,1,0:T(32,128)(4,1)}` pack took 10.3-10.6 ms
/// against 7.4-8.6 so, `bf16[19,713,2457]{1,2,0:T(8,128)(2,1)}` 7.9-8.4
/// against 6.4-6.6 (AMD EPYC Zen 4). A stretch is as many rows as the
/// wide buffer holds (128 of 512 bytes): stretches of 32 and 64 rows took
/// that pack 8.3-9.4 and 7.6-7.7 ms against 7.2-7.5, and a stage of 16
/// rows with all the data columns a band (79 source runs read at once)
/// 16.3 ms against 13.3 on `s8[1,200,79,4349]`, which takes 10.2-11.3 so.
/// Rows back to back, 16 and more, go straight to their lines
/// ([`stream_padded_rows`]): the 4-D permutation "there" took 9.6-10.0
/// ms through this stage against 7.5-7.8. `false`, nothing written, for
/// other blocks, fewer than 16 rows (in a group, where the groups'
/// sources lie apart) or data columns, or without the tile kernel.
// `d`, `s`, `w` as in `Block` and `stream_lines`.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub(crate) fn stream_padded_groups<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    (o, na): (Outer, usize),
    (count, b_len): (usize, usize),
    sb: usize,
    w: usize,
    fill: T,
) -> bool {
    let size = core::mem::size_of::<T>();
    let row = b_len.saturating_mul(w);
    // Rows whose source runs follow one another: all of them, or a group's.
    let (passes, rows) = if o.count == 1 || o.s == na * w {
        (1, o.count.saturating_mul(na))
    } else {
        (o.count, na)
    };
    if w * size != 4 || count < 16 || count >= b_len || rows < 16 || o.count == 0 {
        return false;
    }
    let Some(kernel) = arch::TileKernel::best() else {
        return false;
    };
    let dst_end = (o.count - 1)
        .checked_mul(o.d)
        .and_then(|x| x.checked_add(na.checked_mul(row)?))
        .and_then(|x| x.checked_add(d));
    let src_end = (o.count - 1)
        .checked_mul(o.s)
        .and_then(|x| x.checked_add((na - 1).checked_mul(w)?))
        .and_then(|x| x.checked_add((count - 1).checked_mul(sb)?))
        .and_then(|x| x.checked_add(s + w));
    if dst_end.is_none_or(|end| end > dst.len()) || src_end.is_none_or(|end| end > src.len()) {
        return false;
    }
    let line = super::line_elements::<T>();
    // Rows a stage holds: as many whole tiles down as the wide buffer
    // takes, so that each tile column reads its 16 source runs a stretch
    // at a time.
    let per = (arch::WIDE_BYTES / size - line) / row / 16 * 16;
    let per = per.min(rows.div_ceil(16) * 16);
    if per == 0 {
        return false;
    }
    let len = per * row + line;
    arch::with_wide(fill, len, |wide| {
        if wide.len() < len {
            return false;
        }
        // Every unit of the stage starts as `fill`; the data columns are
        // written over stretch after stretch, the padding never.
        let skip = super::to_line::<T>(wide.as_ptr().addr());
        let stage = &mut wide[skip..][..per * row];
        for p in 0..passes {
            for i0 in (0..rows).step_by(per) {
                let m = (rows - i0).min(per);
                let from = s + p * o.s + i0 * w;
                let stretch = &mut stage[..m * row];
                stage_rows(kernel, stretch, src, from, (count, b_len), sb, w, fill);
                // Out a group's rows at a time.
                let mut i = p * rows + i0;
                let end = i + m;
                while i < end {
                    let (x, r) = (i / na, i % na);
                    let k = (na - r).min(end - i);
                    let out = &stage[(i - p * rows - i0) * row..][..k * row];
                    arch::stream_copy_lines(&mut dst[d + x * o.d + r * row..][..k * row], out);
                    i += k;
                }
            }
        }
        true
    })
}

/// The data of [`stream_padded_groups`]' rows into `stage` (whole rows,
/// their padding already `fill`), from the source run at `from` down
/// them: whole 16x16 tiles down 16 source runs at a time; the last data
/// columns as one more tile, its runs past the data read again from the
/// last column and their units put back to `fill` after; what the tiles
/// leave (those columns where a row is too short for the tile, the rows
/// under the last tile) with plain stores.
#[allow(clippy::too_many_arguments)]
fn stage_rows<T: Copy>(
    kernel: arch::TileKernel,
    stage: &mut [T],
    src: &[T],
    from: usize,
    (count, b_len): (usize, usize),
    sb: usize,
    w: usize,
    fill: T,
) {
    let row = b_len * w;
    let m = stage.len() / row;
    let (whole, tail) = (count / 16, count % 16);
    let under = m / 16 * 16;
    let columns = arch::Bands {
        count: whole,
        to_adv: 16 * w,
        from_adv: 16 * sb,
    };
    let done = arch::tile16_quarters_run(
        kernel,
        stage,
        (arch::Quarters::even(0, row), 16 * row),
        src,
        (arch::Quarters::even(from, sb), 16 * w),
        under / 16,
        columns,
        false,
        Some(PREFETCH_TILES),
    );
    let mut j0 = if done { 16 * whole } else { 0 };
    if done && tail > 0 && j0 + 16 <= b_len {
        let mut all = true;
        for t in (0..under).step_by(16) {
            let to: [usize; 16] = core::array::from_fn(|r| (t + r) * row + j0 * w);
            let runs: [usize; 16] =
                core::array::from_fn(|c| from + t * w + (j0 + c.min(tail - 1)) * sb);
            all &= arch::tile16_on(kernel, stage, &to, src, &runs, false);
        }
        for r in stage.chunks_exact_mut(row).take(under) {
            r[count * w..(j0 + 16) * w].fill(fill);
        }
        if all {
            j0 = count;
        }
    }
    let part = |na: usize, nb: usize| Block {
        na,
        nb,
        da: row,
        db: w,
        sa: w,
        sb,
    };
    let left = [
        (j0 * w, from + j0 * sb, part(under, count - j0)),
        (under * row, from + under * w, part(m - under, count)),
    ];
    for (at, run, block) in left {
        super::copy_any(stage, at, src, run, block, w, &mut [], false);
    }
}

/// The geometry of [`stream_padded_rows`]' block: as its arguments, with
/// `lead` the units before the destination's first line boundary and
/// `r_lo` the rows before the source's runs start lines.
#[derive(Clone, Copy)]
pub(crate) struct PaddedRows {
    pub(crate) d: usize,
    pub(crate) s: usize,
    pub(crate) w: usize,
    pub(crate) sb: usize,
    pub(crate) b_len: usize,
    pub(crate) count: usize,
    pub(crate) lead: usize,
    pub(crate) r_lo: usize,
}

impl PaddedRows {
    /// Column `c` of line `k` of a row: its row (this one, 0, or the next,
    /// 1) and its unit in that row.
    pub(crate) fn column(self, k: usize, c: usize) -> (usize, usize) {
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
    pub(crate) fn whole_bands<T: Copy>(
        self,
        kernel: arch::TileKernel,
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
            let to = arch::Quarters::even(d + (r_lo * b_len + lead + 16 * k) * w, row);
            let from = arch::Quarters::even(s + r_lo * w + (lead + 16 * k) * sb, sb);
            let done = arch::tile16_quarters_run(
                kernel,
                dst,
                (to, 16 * row),
                src,
                (from, 16 * w),
                whole,
                arch::Bands::ONE,
                true,
                None,
            );
            #[cfg(test)]
            super::tests::BANDS.with(|n| n.set(n.get() + usize::from(done && whole > 0)));
            if !done {
                by_tiles(dst, k);
            }
        }
        let mut group = [arch::GroupTile {
            to: [0; 16],
            from: [None; 16],
        }; arch::GROUP_TILES];
        let tail = first_tail..per_row;
        let grouped = tail.len() <= arch::GROUP_TILES && {
            for (tile, k) in group.iter_mut().zip(tail.clone()) {
                *tile = arch::GroupTile {
                    to: core::array::from_fn(|r| d + ((r_lo + r) * b_len + lead + 16 * k) * w),
                    from: core::array::from_fn(|c| {
                        let (next, j) = self.column(k, c);
                        (j < count).then(|| s + (r_lo + next) * w + j * sb)
                    }),
                };
            }
            let tiles = &group[..tail.len()];
            arch::tile16_group_run(
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
        super::tests::GROUPS.with(|n| n.set(n.get() + usize::from(grouped && whole > 0)));
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
pub(crate) fn mixed_tile<T: Copy>(
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
    if write.iter().all(|&yes| yes) && arch::tile16(dst, to, part, &runs, true) {
        return;
    }
    if !arch::tile16(edge, &runs, part, &runs, false) {
        for (r, out) in edge.chunks_exact_mut(run).enumerate() {
            for (c, u) in out.chunks_exact_mut(w).enumerate() {
                u.copy_from_slice(&part[c * run + r * w..][..w]);
            }
        }
    }
    for (r, out) in edge.chunks_exact(run).enumerate() {
        if write[r] {
            arch::stream_copy(&mut dst[to[r]..][..run], out);
        }
    }
}

/// `to.copy_from_slice(from)` for runs of 64 bytes, in fixed-size moves
/// (a call to `memcpy` per run costs more than the copy); a shorter `from`
/// fills the front of `to` only.
pub(crate) fn copy_run<T: Copy>(to: &mut [T], from: &[T]) {
    pub(crate) fn fixed<T: Copy, const N: usize>(to: &mut [T], from: &[T]) -> bool {
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
