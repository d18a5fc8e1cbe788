//! The way back from `(2,1)` and `(4,1)` tiles: bands of group tiles
//! into the group kernels, and rows joined across tiles with streaming
//! stores.

use super::{
    arch, copy_block, join_head, keep_tail, line_elements, stream_joined_piece, to_line,
    to_line_in, Axis, Block, Outer, Piece, SHORT_ROW_BYTES,
};

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
/// in one process, time with over time without, four runs): the unpack
/// into rows of 4,000 bytes (1000 `f32`, the last tile padded) 0.67-0.73,
/// the ragged `f32[4093,4093]` 0.82-0.90, `f32[4096,4096]`, which has no
/// padded tile, 0.97-1.04.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Joined {
    /// Where row 0 continues in the destination, and the rows' stride.
    pub(crate) end: usize,
    pub(crate) stride: usize,
    pub(crate) rows: usize,
    /// The rows before this one have been continued.
    pub(crate) next: usize,
}

impl Joined {
    /// Writes the rows' last partial lines, from row `next` on, from
    /// `stage` to `dst` with plain stores.
    pub(crate) fn finish<T: Copy>(self, dst: &mut [T], stage: &mut [T]) {
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

/// A run of the destination written in order by [`group_rows_in_order`],
/// tile row after tile row, whose last tile row is still in the stage
/// (from its first line on): its whole lines, `lines` elements from `at`
/// in the destination and `first` in the stage, wait to be streamed, and
/// the run's last `waiting` elements, a partial line after them, for the
/// tile row that continues the run (which then writes that line whole)
/// or for the run's end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InOrder {
    end: usize,
    waiting: usize,
    at: usize,
    first: usize,
    lines: usize,
}

impl InOrder {
    /// Streams the waiting lines from `stage` into `dst`, then writes the
    /// waiting elements after them plainly: the run ends here.
    pub(crate) fn finish<T: Copy>(self, dst: &mut [T], stage: &[T]) {
        let st = &stage[to_line::<T>(stage.as_ptr().addr())..];
        self.stream(dst, st);
        let tail = &st[self.first + self.lines..][..self.waiting];
        dst[self.end - self.waiting..self.end].copy_from_slice(tail);
    }

    /// Streams the waiting lines from `st` (the stage from its first line
    /// on) into `dst`.
    fn stream<T: Copy>(&self, dst: &mut [T], st: &[T]) {
        let lines = &st[self.first..][..self.lines];
        arch::stream_copy_lines(&mut dst[self.at..][..self.lines], lines);
    }
}

/// Where a tile row's band of whole group tiles (as [`group_tiles`]
/// takes them) leaves its rows: the columns of the ragged last tile that
/// ends them, which the walk hands over next, a block per group. `Some`
/// only where [`group_rows_in_order`] takes the tile row: its rows lie
/// one after another in the destination, its bytes, at least two lines,
/// fit `stage` from a line on, and the ragged tile has columns short of
/// a whole tile.
pub(crate) fn ragged_columns<T>(axes: [Axis; 4], stage: &[T]) -> Option<usize> {
    let [_, _, cols, rows] = axes;
    let b = band_rows(axes)?;
    let last = b.da - b.nb;
    let len = b.na.checked_mul(b.da)?;
    let line = line_elements::<T>();
    let room = stage
        .len()
        .saturating_sub(to_line::<T>(stage.as_ptr().addr()) + line);
    let fits = (1..cols.count).contains(&last)
        && cols.walk == rows.count
        && rows.walk == 1
        && len.checked_mul(core::mem::size_of::<T>())? >= 128
        && len <= room;
    fits.then_some(last)
}

/// A tile row of group tiles whose rows lie one after another in the
/// destination from `to` on (a row-major array `bf16[48629,690]`
/// unpacked from `(4,128)(2,1)` tiles: 5 whole tiles and 50 columns of a
/// sixth a row), `axes` its band of whole tiles, followed by a ragged
/// tile as [`ragged_columns`] requires of `stage`: the tile row
/// before (`run`) streamed from the stage, its last partial line kept
/// where it continues at `to` (written plainly, with the run, otherwise),
/// then every group put apart into the stage, which mirrors the
/// destination's lines, and the tile row left in it for the next call or
/// [`InOrder::finish`] to stream: every line between two tile rows goes
/// out whole, streamed once.
///
/// The lines stream as the call begins, not as it ends: streamed at the
/// end, the walk's own stores before the next call waited behind them in
/// the store buffer (a loop of the same tile rows with 150 stores of its
/// own between them took 9.3-9.5 ms against 7.6-8.4 without; with the
/// lines streamed first, 8.2-8.5). Through a window of the destination
/// a tile row at a time, streamed with its two end lines plain,
/// `bf16[48629,690]{1,0:T(4,128)(2,1)}` unpacked in 11.4-13.1 ms against
/// 9.3-9.9 here (Intel Xeon, 2 vCPUs, caches flushed, alternated).
/// `false`, nothing written, for other tile rows or where the source does
/// not hold the tiles or the destination the rows.
pub(crate) fn group_rows_in_order<T: Copy>(
    (dst, to): (&mut [T], usize),
    (src, from): (&[T], usize),
    axes: [Axis; 4],
    stage: &mut [T],
    run: &mut Option<InOrder>,
) -> bool {
    let [band, groups, cols, rows] = axes;
    let (Some(last), Some(b)) = (ragged_columns(axes, stage), band_rows(axes)) else {
        return false;
    };
    let len = b.na * b.da;
    // The last element each side: the ragged tile's last group's last
    // column (or a whole tile's, where that lies further), the last row's.
    let ends = (|| {
        let group = (groups.count - 1).checked_mul(groups.walk)?;
        let whole = (band.count - 1)
            .checked_mul(band.walk)?
            .checked_add(cols.count * rows.count)?;
        let ragged = band
            .count
            .checked_mul(band.walk)?
            .checked_add(last * rows.count)?;
        let input = from.checked_add(group)?.checked_add(whole.max(ragged))?;
        Some(input <= src.len() && to.checked_add(len)? <= dst.len())
    })();
    if ends != Some(true) {
        return false;
    }
    #[cfg(test)]
    if super::tests::REFUSE_IN_ORDER.get() {
        return false;
    }
    let (line, skip) = (line_elements::<T>(), to_line::<T>(stage.as_ptr().addr()));
    let h = (line - to_line_in(dst, to)) % line;
    let carried = match run.take() {
        Some(r) if r.end == to && r.waiting == h => {
            r.stream(dst, &stage[skip..]);
            let tail = skip + r.first + r.lines;
            stage.copy_within(tail..tail + h, skip);
            true
        }
        Some(r) => {
            r.finish(dst, stage);
            false
        }
        None => false,
    };
    let st = &mut stage[skip..][..h + len];
    // The next tile row asked for after the lines before have gone out,
    // a tile at a time as this row's tiles are read: asked for before
    // the lines, or after the groups, it came later (`bf16[48629,690]`
    // unpacked in 11.9 and 10.7 ms against 9.4-9.6; without, 12.2), and
    // asked for all at once (96 lines there) later too (0.36-0.48 of the
    // best copy against 0.49-0.65 a tile at a time, Zen 5).
    let span = (band.count + 1) * band.walk;
    for t in 0..=band.count {
        let tile = from + t * band.walk;
        arch::prefetch_span(src, tile + span, tile + span + band.walk);
        let n = if t < band.count { cols.count } else { last };
        let block = Block {
            na: n,
            nb: rows.count,
            da: 1,
            db: b.da,
            sa: rows.count,
            sb: 1,
        };
        for g in 0..groups.count {
            let at = h + g * rows.count * b.da + t * cols.count;
            groups_apart(st, at, src, tile + g * groups.walk, block);
        }
    }
    #[cfg(test)]
    super::tests::IN_ORDER.with(|n| n.set((n.get().0 + 1, n.get().1)));
    let full = (h + len) / line * line;
    // A first line the run shares with what lies before it goes plainly.
    let first = if carried || h == 0 {
        0
    } else {
        dst[to..to + line - h].copy_from_slice(&st[h..line]);
        line
    };
    *run = Some(InOrder {
        end: to + len,
        waiting: h + len - full,
        at: to + first - h,
        first,
        lines: full - first,
    });
    true
}

/// The destination rows of a band of group tiles (as [`group_tiles`]
/// takes them), as a block of the same strides both sides: `na` rows
/// `da` apart, `nb` elements each, where the band's tiles lie side by
/// side and their groups one under the other (a tile row of a row-major
/// array; the other side's rows, for a pack); `None` otherwise.
pub(crate) fn band_rows([band, groups, cols, rows]: [Axis; 4]) -> Option<Block> {
    let pitch = rows.other;
    let width = band.count.checked_mul(cols.count)?;
    let count = groups.count.checked_mul(rows.count)?;
    let fits = (band.count == 1 || band.other == cols.count)
        && (groups.count == 1 || groups.other == rows.count.checked_mul(pitch)?)
        && cols.other == 1
        && width <= pitch
        && count > 0
        && width > 0;
    fits.then_some(Block {
        na: count,
        nb: width,
        da: pitch,
        db: 1,
        sa: pitch,
        sb: 1,
    })
}

/// One group block `b` (`b.na` columns of groups of `b.nb` elements into
/// `b.nb` rows `b.db` apart) into `dst` from `d` on: the group kernel
/// ([`arch::deinterleave_groups`]), then [`copy_block`] for the columns
/// it leaves.
fn groups_apart<T: Copy>(dst: &mut [T], d: usize, src: &[T], s: usize, b: Block) {
    let (rows, cols) = (b.nb, b.na);
    let input = &src[s..][..rows * cols];
    let done = arch::deinterleave_groups(rows, &mut dst[d..], b.db, input, cols);
    if done < cols {
        let rest = Block {
            na: cols - done,
            ..b
        };
        copy_block(dst, d + done, src, s + done * rows, rest);
    }
}

/// `band` tiles of `groups` blocks of [`short_group_rows`] (`cols` columns
/// of groups of `rows` elements, the way back from `(2,1)` and `(4,1)`
/// tiles) into the destination from `to` on, in one loop straight into
/// the group kernels ([`arch::deinterleave_groups`], then [`copy_block`]
/// for the columns they leave). With a `stage` (a destination past the
/// cache), a band that is one run of the destination
/// ([`stream_group_run`]) or whose rows join ([`stream_group_tiles`])
/// streams; otherwise each tile asks for the source [`AHEAD_BYTES`] on.
///
/// Each block through `copy_block`, and each tile through a call of its
/// own, cost enough to show against memory's speed. Measured with
/// `benches/relayout_ab.py` (one process, same buffers, AMD EPYC Zen 3,
/// `b / a` against the tile-a-call path): on the `s8 (4,1)` unpack the
/// band in one loop straight into the kernel 0.80-0.90, the band through
/// `copy_block` 0.97-1.00.
pub(crate) fn group_tiles<T: Copy>(
    dst: &mut [T],
    to: usize,
    src: &[T],
    from: usize,
    axes: [Axis; 4],
    stage: &mut [T],
    asked: &mut Asked,
) {
    let far = !stage.is_empty();
    if far
        && (stream_group_run((dst, to), (src, from), axes, stage)
            || stream_group_tiles((dst, to), (src, from), axes, stage))
    {
        return;
    }
    tiles_into(dst, to, src, from, axes, far.then_some(asked));
}

/// [`group_tiles`]' plain path: each tile's groups into the group kernel,
/// the source asked for [`AHEAD_BYTES`] on where it lies past the cache
/// (`asked`): without it, the loads of the source held 73% of the
/// samples (`bf16[48629,690]{1,0:T(4,128)(2,1)}` unpacked into a stage
/// in 13.1-14.3 ms against 14.8-15.2, alternated, Intel Xeon with 480
/// MiB of L3).
fn tiles_into<T: Copy>(
    dst: &mut [T],
    to: usize,
    src: &[T],
    from: usize,
    [band, groups, cols, rows]: [Axis; 4],
    mut asked: Option<&mut Asked>,
) {
    let block = Block::from_walked(cols, rows);
    let tile_len = groups.count.saturating_mul(groups.walk);
    let ahead = tiles_ahead::<T>(tile_len);
    for x in 0..band.count {
        let tile = from + x * band.walk;
        if let Some(asked) = asked.as_deref_mut() {
            let at = tile.saturating_add(ahead);
            asked.ask(src, at, at.saturating_add(tile_len));
        }
        for g in 0..groups.count {
            let (d, s) = (
                to + x * band.other + g * groups.other,
                tile + g * groups.walk,
            );
            groups_apart(dst, d, src, s, block);
        }
    }
}

/// How far the source has been asked for ahead of a walk in storage
/// order: the end of the last span asked for. Each band of whole tiles
/// asks for its tiles [`AHEAD_BYTES`] on, tile by tile, so a ragged last
/// tile after each band (which the walk hands over as blocks of its own)
/// was never asked for, and its loads waited on memory every tile row: a
/// span that starts at most its own length past the last one asked for
/// is asked for from there, the gap with it. Asking so,
/// `bf16[48629,690]{1,0:T(4,128)(2,1)}` unpacked in 12.6-13.0 ms against
/// 13.8-14.1 (four alternated runs, 2-vCPU Intel Xeon).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Asked(usize);

impl Asked {
    /// Asks for `src[from..to]` and what [`span`](Self::span) adds.
    pub(crate) fn ask<T>(&mut self, src: &[T], from: usize, to: usize) {
        let span = self.span(from, to);
        arch::prefetch_span(src, span.start, span.end);
    }

    /// The span to ask for in place of `from..to`: from the end of the
    /// last span asked for where that lies between `to - (to - from) * 2`
    /// and `to` (the span continues it, after a gap of at most its
    /// length, or overlaps it), `from..to` otherwise (the walk went
    /// elsewhere).
    pub(crate) fn span(&mut self, from: usize, to: usize) -> core::ops::Range<usize> {
        let reach = from.saturating_sub(to.saturating_sub(from));
        let start = if (reach..=to).contains(&self.0) {
            self.0
        } else {
            from
        };
        self.0 = to;
        start..to
    }
}

/// [`group_tiles`] for a band whose tiles' pieces of each destination row
/// join end to end (a row of `(2,1)` or `(4,1)` tiles unpacked into a
/// row-major array past the cache), every row in the same place in its
/// lines, on 16 bytes: a line of each row at a time, each written whole by
/// streaming stores ([`arch::deinterleave_line_streamed`]), each tile's
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
/// (see [`arch::deinterleave_line_streamed`]). Each group asks for its
/// source [`AHEAD_BYTES`] on, in whole tiles ([`tiles_ahead`]), as the
/// plain path does: without, the loads of the source held most of the
/// samples (`perf record -e cpu-clock`), and with it the `bf16` and `s8`
/// unpacks took 0.81-0.84 of the time (`benches/relayout_ab.py`, three
/// runs, Intel Xeon family 6 model 207). On AMD EPYC Zen 4 the plain
/// path's prefetch a tile had read the `bf16` unpack at 0.92 of `memcpy`
/// against 1.21 without, the prefetches waiting on the streaming stores.
pub(crate) fn stream_group_tiles<T: Copy>(
    (dst, to): (&mut [T], usize),
    (src, from): (&[T], usize),
    axes: [Axis; 4],
    stage: &mut [T],
) -> bool {
    let [band, groups, cols, rows] = axes;
    let size = core::mem::size_of::<T>();
    let (k, piece, line) = (rows.count, cols.count, line_elements::<T>());
    let at = dst.as_ptr().addr() + to * size;
    if !arch::group_kernel::<T>(k)
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
        let done = arch::deinterleave_line_streamed(k, &mut dst[d..], rows.other, input, buf);
        #[cfg(test)]
        super::tests::JOINED.with(|n| n.set(n.get() + usize::from(done)));
        if !done {
            plain(dst, d, input, 0, line);
        }
    };
    let last = band.count - 1;
    let ahead = tiles_ahead::<T>(groups.count.saturating_mul(groups.walk));
    for x in 0..band.count {
        let tile = from + x * band.walk;
        for g in 0..groups.count {
            let s = tile + g * groups.walk;
            let at = s.saturating_add(ahead);
            arch::prefetch_span(src, at, at.saturating_add(piece.saturating_mul(k)));
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

/// [`group_tiles`] for a band that is one run of the destination: each
/// group's rows back to back, each group after the one before, tile after
/// tile (a rank-1 array's `(1024)(128)(2,1)` tiles, or rows as wide as a
/// tile). Groups one after another in the source, too, go in one call of
/// [`arch::deinterleave_run`], which joins their pieces into whole lines
/// in registers. Otherwise as many groups as `stage` holds go apart into
/// it, and the stage streams out in the order the destination lies, 16
/// bytes at a time, so that the lines split between stages complete in
/// the write-combining buffer. `false`, nothing written, for other bands,
/// runs under a line, a `stage` under a group, or a destination off 16
/// bytes.
///
/// Through the stage, where the kernel takes the run,
/// `bf16[33554432]{0:T(512)(128)(2,1)}` unpacked in 4.4-5.2 ms against
/// 3.7-4.1 (the stage's loads wait behind the streaming stores by where
/// the stack puts it, up to 8.5 ms), `s8[524288,128]{1,0:T(8,128)(4,1)}`
/// 6.2 against 4.1 (AMD EPYC Zen 4).
///
/// Each group's rows streamed a group at a time (whole lines only; a
/// `Vec` starts 16 bytes into a line, so two lines of each group's 512
/// bytes went plainly, each read from memory first), the
/// `bf16[33554432]{0:T(1024)(128)(2,1)}` unpack took 9.0-9.3 ms against
/// 4.5-4.9, `s8[524288,128]{1,0:T(8,128)(4,1)}` 10.4 against 5.0-5.7
/// (AMD EPYC Zen 4).
fn stream_group_run<T: Copy>(
    (dst, to): (&mut [T], usize),
    (src, from): (&[T], usize),
    [band, groups, cols, rows]: [Axis; 4],
    stage: &mut [T],
) -> bool {
    let size = core::mem::size_of::<T>();
    let (k, piece) = (rows.count, cols.count);
    let group = k.saturating_mul(piece);
    let tile = groups.count.saturating_mul(group);
    let total = band.count.saturating_mul(tile);
    // The stage from a line on, so that no store into it straddles two.
    let skip = to_line::<T>(stage.as_ptr().addr()).min(stage.len());
    let stage = &mut stage[skip..];
    let per = stage.len() / group.max(1);
    let at = dst.as_ptr().addr() + to * size;
    if (cols.walk, cols.other, rows.walk) != (k, 1, 1)
        || rows.other != piece
        || groups.other != group
        || (band.count > 1 && band.other != tile)
    {
        return false;
    }
    // The kernel's groups: four rows of bytes or two of 2-byte elements.
    let contiguous = (band.count == 1 || band.walk == groups.count.saturating_mul(groups.walk))
        && k.saturating_mul(size) == 4;
    let run = arch::GroupRows {
        grouped: true,
        from,
        to,
        pitch: piece,
        columns: piece,
        tiles: (1, 0),
        groups: (band.count.saturating_mul(groups.count), groups.walk),
    };
    if contiguous && arch::deinterleave_run(dst, src, run) {
        return true;
    }
    if per == 0 || total.saturating_mul(size) < 64 || at % 16 != 0 {
        return false;
    }
    let block = Block::from_walked(cols, rows);
    let ahead = tiles_ahead::<T>(groups.count.saturating_mul(groups.walk));
    // Groups in the order the destination lies: group `q` of the run is
    // group `q % groups.count` of tile `q / groups.count`.
    let count = band.count * groups.count;
    for first in (0..count).step_by(per) {
        let staged = per.min(count - first);
        for p in 0..staged {
            let (x, g) = ((first + p) / groups.count, (first + p) % groups.count);
            let tile_at = from + x * band.walk;
            if g == 0 {
                let at = tile_at.saturating_add(ahead);
                arch::prefetch_span(src, at, at.saturating_add(groups.count * groups.walk));
            }
            let s = tile_at + g * groups.walk;
            groups_apart(stage, p * group, src, s, block);
        }
        let (d, len) = (to + first * group, staged * group);
        arch::stream_copy_in_order(&mut dst[d..][..len], &stage[..len]);
    }
    #[cfg(test)]
    super::tests::RUNS.with(|n| n.set(n.get() + 1));
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
pub(crate) const AHEAD_BYTES: usize = 12 << 10;

/// Elements from a tile of `tile_len` `T`s to the one whose source is
/// asked for ahead of it: [`AHEAD_BYTES`] in whole tiles, at least one.
pub(crate) fn tiles_ahead<T>(tile_len: usize) -> usize {
    let tile_bytes = tile_len.saturating_mul(core::mem::size_of::<T>());
    (AHEAD_BYTES / tile_bytes.max(1))
        .max(1)
        .saturating_mul(tile_len)
}

/// Row `row`'s two lines of the stage of [`stream_joined_rows`]: the
/// previous piece's last line of source elements, then this piece's first.
pub(crate) fn joined_lines<T>(stage: &mut [T], row: usize) -> &mut [T] {
    let line = line_elements::<T>();
    &mut stage[row * 2 * line..][..2 * line]
}

/// Bytes a joined row from which [`stream_joined_rows`] streams its
/// pieces in the order the destination lies, 16 bytes at a time where
/// its lines split on 16 bytes (rows of a `Vec`, which starts 16 bytes
/// into a line), rather than the pieces' whole lines first and their
/// split lines after, through the stage: the split lines complete in the
/// write-combining buffer, and no second pass reads their source. Against
/// the stage, `f32` rows of `T(8,128)` tiles unpacked into a `Vec` took
/// 0.88-0.94 of the time at 16 KiB, 0.93-0.97 at 8 KiB, 1.01-1.02 at 4
/// KiB, and 1.05-1.22 at 3, 2 and 1 KiB (`benches/relayout_ab.py`, two
/// runs, Intel Xeon family 6 model 207).
pub(crate) const IN_ORDER_ROW_BYTES: usize = 8 << 10;

/// `o.count` blocks `b` of `w`-element units whose rows join end to end in
/// the destination (the tiles of one tile row, unpacked into a row-major
/// array), when those rows do not all start on a line (a `Vec` starts 16
/// bytes into one; a row-major `f32[4093,4093]` or `f32[4096,1000]` has
/// rows in every place): each row one run of pieces, the stage keeping
/// two lines a row. The pieces' whole lines go many at a call
/// ([`arch::stream_runs`]), row by row as the destination lies (in the
/// order the source lies, tile by tile, the `f32 T(8,128)` unpack took
/// 1.12-1.20 times as long, `benches/relayout_ab.py`): rows all in the
/// same place in their lines in one call, rows in different places a
/// call a row. Then each row's first head goes plainly and the lines
/// split between its pieces are put together in the stage and streamed
/// whole. Rows of [`IN_ORDER_ROW_BYTES`] and more whose lines split on 16
/// bytes stream every piece whole instead, 16 bytes at a time, in the
/// order the destination lies. Only each joined row's end lines go with plain stores;
/// streaming the pieces alone (whole lines only) leaves one line in
/// eight to plain stores, each read from memory first: rows on 16 bytes
/// but off a line unpacked so at 0.66-0.80 of `memcpy`, joined at
/// 1.05-1.16 (`f32[4096,4092]`, AMD EPYC Zen 3). A piece a call
/// ([`stream_joined_piece`], which a row the kernel does not take still
/// goes through), the calls' bookkeeping took as long as the copies: the
/// `f32 T(8,128)` unpack of 4096 columns into a `Vec` took 8.6-9.3 ms
/// against 7.5-8.2, and of 1000 columns 9.8-10.3 against 7.8-8.5 (Intel
/// Xeon family 6 model 207).
///
/// Each row's last partial line stays in `stage` rather than going out
/// with plain stores, for a piece that may continue the rows: the rows
/// are returned, and [`Joined::finish`] writes what waits at the latest.
/// `None`, nothing written, for other blocks, rows all on lines (they
/// stream piece by piece), pieces under two lines, or a stage too small
/// for two lines a row.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub(crate) fn stream_joined_rows<T: Copy>(
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
    // Each piece's lines from its first boundary, `head` elements in, to
    // the last whole one.
    let body = |head: usize| if head == 0 { piece } else { piece - line };
    let same = b.na == 1 || (b.da * size) % 64 == 0;
    // Long rows whose lines split on 16 bytes stream in order (below).
    let long = o.count * piece * size >= IN_ORDER_ROW_BYTES;
    let sixteen = |head: usize| long && (head * size) % 16 == 0;
    // Rows all in one place go in one call: whole and in the order the
    // destination lies where their lines split on 16 bytes, else their
    // pieces' whole lines.
    let head = to_line_in(dst, d);
    let grid = [(b.na, b.da, b.sa), (o.count, piece, o.s)];
    // The block's rows read a row of each tile: they ask for the next
    // block's source in order (`arch::next_span`), a piece a run, rows
    // streamed in one call or a call a row alike, except short rows a
    // call a row: asking there, the unpack of rows of 4000 bytes took
    // 1.13-1.14 of the time (`relayout_ab.py`), the ragged rows of 16 KiB
    // 0.92-0.95.
    let next = arch::next_span::<T>(grid, piece);
    let ask = |row: usize, first: usize, from: usize| {
        next.map(|span| (s + span + (row * o.count + first) * piece - from, piece))
    };
    let all = same
        && if sixteen(head) {
            arch::stream_runs(&mut dst[d..], &src[s..], grid, piece, 16, ask(0, 0, s))
        } else {
            let (to, from, len) = (d + head, s + head, body(head));
            arch::stream_runs(&mut dst[to..], &src[from..], grid, len, 64, ask(0, 0, from))
        };
    // Rows back to back (a row-major destination of whole tiles a row):
    // each row also continues the one before, through one pair of lines.
    let back_to_back = b.na > 1 && b.da == o.count * piece;
    for i in 0..b.na {
        let (to, from) = (d + i * b.da, s + i * b.sa);
        let head = to_line_in(dst, to);
        let lines = joined_lines(stage, if back_to_back { 0 } else { i });
        let first = if back_to_back && i > 0 {
            Piece::Inside
        } else {
            Piece::First
        };
        // Rows in one place share their place in their lines, so `all`
        // streamed this row the way this test asks for.
        if sixteen(head) {
            if !all {
                let rest = (o, piece, ask(i, 1, from + o.s));
                stream_row_in_order(dst, to, src, from, rest, lines, first);
            }
            // The last piece's partial line, for a piece that continues
            // the row (it went out too, and goes again whole from here).
            let last = o.count - 1;
            keep_tail(
                dst,
                to + last * piece,
                &src[from + last * o.s..][..piece],
                lines,
            );
            continue;
        }
        let grid = [(1, 0, 0), (o.count, piece, o.s)];
        let streamed = all
            || arch::stream_runs(
                &mut dst[to + head..],
                &src[from + head..],
                grid,
                body(head),
                64,
                if long { ask(i, 0, from + head) } else { None },
            );
        for x in 0..o.count {
            let at = if x == 0 { first } else { Piece::Inside };
            let (to, from) = (to + x * piece, &src[from + x * o.s..][..piece]);
            if streamed {
                // The lines between are out: the split ones remain.
                join_head(dst, to, from, lines, at);
                keep_tail(dst, to, from, lines);
            } else {
                stream_joined_piece(dst, to, from, lines, at);
            }
        }
    }
    // Rows back to back leave only the last row's end waiting, in the
    // stage's first two lines.
    let rows = if back_to_back { 1 } else { b.na };
    Some(Joined {
        end: d + (b.na - rows) * b.da + o.count * piece,
        stride: b.da,
        rows,
        next: 0,
    })
}

/// One row of [`stream_joined_rows`] whose lines split on 16 bytes: every
/// piece streams 16 bytes at a time in the order the destination lies,
/// its split lines completed in the write-combining buffer by the next
/// piece's first stores: no line put together in the stage, no second
/// pass over the source for them. `rest` is the row's pieces (`o`), their
/// length and what the pieces after the first ask for ahead
/// ([`arch::stream_runs`]).
fn stream_row_in_order<T: Copy>(
    dst: &mut [T],
    to: usize,
    src: &[T],
    from: usize,
    (o, piece, ask): (Outer, usize, Option<(usize, usize)>),
    lines: &mut [T],
    first: Piece,
) {
    let from0 = &src[from..][..piece];
    let head = join_head(dst, to, from0, lines, first);
    arch::stream_copy_in_order(&mut dst[to + head..][..piece - head], &from0[head..]);
    let grid = [(1, 0, 0), (o.count - 1, piece, o.s)];
    let rest = &mut dst[to + piece..];
    if !arch::stream_runs(rest, &src[from + o.s..], grid, piece, 16, ask) {
        for x in 1..o.count {
            let at = to + x * piece;
            dst[at..][..piece].copy_from_slice(&src[from + x * o.s..][..piece]);
        }
    }
}

/// Whether a walked block `a` x `b` of single elements takes groups of 2
/// or 4 consecutive source elements (`b`) into as many destination rows,
/// each contiguous along `a` and shorter than [`SHORT_ROW_BYTES`]: the way
/// back from `(2,1)` and `(4,1)` tiles, whose rows stream only where
/// they join into longer runs ([`group_tiles`]).
///
/// [`Scatter::block3`] moves a whole tile of them (the walk's outer step,
/// four pair rows of a `bf16` `(8,128)(2,1)` tile, two quad rows of `s8`
/// `(4,1)`), [`Scatter::block4`] a band of such tiles, both in order
/// ([`group_rows_in_order`]) or through [`group_tiles`]. Measured on an AMD EPYC Zen 3 (2 vCPUs) against the
/// path that made the stream-or-stage decision and the prefetch per
/// block, a tile a call: `bf16` unpack 0.71-0.76 of `memcpy` to
/// 0.86-0.97, `s8` 0.63-0.69 to 0.83-0.98 (`cargo bench` runs).
pub(crate) fn short_group_rows<T>(unit: usize, a: Axis, b: Axis) -> bool {
    unit == 1
        && a.other == 1
        && b.walk == 1
        && a.walk == b.count
        && matches!(b.count, 2 | 4)
        && a.count.saturating_mul(core::mem::size_of::<T>()) < SHORT_ROW_BYTES
}

/// Blocks of source (storage order) asked for ahead by
/// [`prefetch_short_rows`].
pub(crate) const SOURCE_AHEAD: usize = 6;

/// Row pieces of destination asked for ahead by [`prefetch_short_rows`],
/// for rows of at most `PREFETCHED_ROW_BYTES`.
pub(crate) const DESTINATION_AHEAD: usize = 2;
pub(crate) const PREFETCHED_ROW_BYTES: usize = 128;

/// For a block of an unpack whose destination rows are short and apart
/// (`(4,1)` and `(2,1)` tiles: 128 or 256 bytes a row), which go out with
/// plain stores, when it comes alone (whole tiles of them go through
/// [`short_group_rows`] instead): asks for the source `SOURCE_AHEAD`
/// blocks further on, where the walk reads next if it goes on in storage
/// order, and, for rows of one or two lines, for each row's lines
/// `DESTINATION_AHEAD` pieces further along, where the next tiles write.
/// Pieces under a line ask for nothing there: the pieces after them are in
/// the lines being written (a `f32` `T(2,128)` tile transposed, 8 bytes a
/// row, asked 128 times a block for them, and its unpack took 1.5 times as
/// long).
/// Hints only: a wrong guess costs a few wasted reads, and nothing
/// outside the slices is asked for.
///
/// Measured under load, medians of five rounds each against the build
/// without: `s8 (4,1)` unpack 0.56 of `memcpy` to 0.62 with both (0.58
/// source only, 0.56 destination only); `bf16 (2,1)` 0.77 to 0.82 with the
/// source only, 0.66-0.72 with the destination too, whose rows of four
/// whole lines the hardware prefetchers follow by themselves.
pub(crate) fn prefetch_short_rows<T: Copy>(
    dst: &[T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
    width: usize,
) {
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
    arch::prefetch_span(src, ahead, ahead.saturating_add(span));
    if (64..=PREFETCHED_ROW_BYTES).contains(&bytes) {
        for i in 0..rows.na {
            let at = (d + i * rows.da).saturating_add(DESTINATION_AHEAD * len);
            arch::prefetch_span(dst, at, at.saturating_add(len));
        }
    }
}
