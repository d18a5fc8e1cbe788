//! The strategy of pack and convert: which kernel writes each block the
//! walk of the destination's storage hands over.

use super::arch;
use super::kernels::{
    ask_band_share, band_rows, burst_band, copy_any, line_elements, line_units, short_group_rows,
    stream_fill, stream_interleaved_band, stream_joined_tiles, stream_lines, stream_padded_groups,
    stream_padded_rows, Block, Neighbours, Outer, FAR_ROW_BYTES, STAGED_ROWS,
};
use super::walk::{block3_padded_apart, block_then_padding_apart, Axis, Visitor, UNIT};

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
            self.end = end_of(d, &[a, b], self.unit);
        }
    }

    /// The rows of a band of tiles, each contiguous on both sides, in one
    /// call of [`arch::stream_runs`]: a call a row, the calls' bookkeeping
    /// cost as much as the copy. Where the band continues the last write
    /// and its rows lie back to back, every 16 bytes are streamed, as
    /// [`copy_any`] streams runs in order. `false`, nothing written, for
    /// other blocks; the caller moves the end of the last write.
    fn band_of_runs(&mut self, d: usize, other: usize, o: Axis, block: Block) -> bool {
        let len = block.nb * self.unit;
        if block.db != self.unit || block.sb != self.unit || block.na == 0 || o.count == 0 {
            return false;
        }
        let back_to_back = block.da == len && (o.count == 1 || o.walk == block.na * len);
        let granule = if back_to_back && d == self.end {
            16
        } else {
            64
        };
        let grid = [(o.count, o.walk, o.other), (block.na, block.da, block.sa)];
        let ask = arch::next_band::<T>(grid, len);
        arch::stream_runs(
            &mut self.dst[d..],
            &self.src[other..],
            grid,
            len,
            granule,
            ask,
        )
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
            stream_staged(self.dst, d + i0 * row, stage, &mut self.end);
        }
    }

    /// Whether rows `a` of `b_len` units, `b` of them data, lie back to
    /// back in the destination with the source's runs down them, for the
    /// streaming kernels of padded rows ([`stream_padded_rows`],
    /// [`stream_padded_groups`]).
    fn streams_padded_rows(&self, a: Axis, b: Axis, b_len: usize) -> bool {
        !self.stage.is_empty()
            && a.other == self.unit
            && b.walk == self.unit
            && a.walk == b_len * self.unit
    }

    /// [`Visitor::block_padded`] through `wide`, a stretch of rows at a
    /// time; `false`, nothing written, if `wide` holds too little.
    pub(crate) fn padded_rows_copied(
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

/// A run put together in a stage, streamed to `dst[start..]`, continuing
/// the last write where it starts at its `end` (which it moves).
fn stream_staged<T: Copy>(dst: &mut [T], start: usize, stage: &[T], end: &mut usize) {
    let stream_copy = if start == *end {
        arch::stream_copy_in_order
    } else {
        arch::stream_copy
    };
    stream_copy(&mut dst[start..][..stage.len()], stage);
    *end = start + stage.len();
}

/// Where a write of the walked storage from `d` over `axes` (none empty)
/// ends: past its last unit of `unit` elements.
fn end_of(d: usize, axes: &[Axis], unit: usize) -> usize {
    axes.iter()
        .fold(d + unit, |end, x| end + (x.count - 1) * x.walk)
}

impl<T: Copy> Gather<'_, T> {
    /// A band of `(2,1)` or `(4,1)` tiles whose source is one run, each
    /// group's rows back to back and each tile's groups and the band's
    /// tiles one after another (a rank-1 array in `T(1024)(128)(2,1)`, a
    /// row-major array one tile wide), in one call of
    /// [`arch::interleave_band`], each line read asking for the line
    /// [`STACKED_AHEAD_BYTES`] on. Through [`stream_interleaved_band`],
    /// whose loads nothing asked for ahead, `bf16[33554432]{0:T(1024)
    /// (128)(2,1)}` packed in 10.2-10.7 ms against 6.9-8.2 so,
    /// `T(512)(128)(2,1)` 9.5-11.1 against 7.0-9.1, `s8[67108864]{0:
    /// T(1024)(128)(4,1)}` 10.5-11.3 against 7.9-9.2 (three alternated
    /// runs, 2-vCPU Intel Xeon). `false`, nothing written, for other bands
    /// or where the kernel refuses them.
    fn stacked_band(&mut self, off: usize, other: usize, [band, o, a, b]: [Axis; 4]) -> bool {
        let size = core::mem::size_of::<T>();
        let rows_whole = a.other == 1 && b.other == a.count;
        let stacked = rows_whole
            && o.other == b.count * b.other
            && (band.count == 1 || band.other == o.count * o.other);
        if self.stage.is_empty() || !stacked || !short_group_rows::<T>(self.unit, a, b) {
            return false;
        }
        let to = off - self.base;
        let ahead = arch::Ahead::Rows(STACKED_AHEAD_BYTES / size);
        let done = self.interleave_band(to, other, [band, o, a, b], ahead);
        if done {
            self.end = end_of(to, &[band, o, a, b], self.unit);
            #[cfg(test)]
            tests::STACKED.with(|n| n.set(n.get() + 1));
        }
        done
    }

    /// Band `band` of `o` groups of `a` x `b` tiles (`(2,1)` or `(4,1)`
    /// tiles, as the walk hands them), read from `other` on and written
    /// at `to`, in one call of [`arch::interleave_band`], the source asked
    /// for as `ahead` says; `false`, nothing written, where the kernel
    /// refuses it.
    fn interleave_band(
        &mut self,
        to: usize,
        other: usize,
        [band, o, a, b]: [Axis; 4],
        ahead: arch::Ahead,
    ) -> bool {
        let whole = arch::GroupBand {
            from: other,
            pitch: b.other,
            to,
            columns: a.count,
            width: a.count,
            tiles: (band.count, band.walk, band.other),
            groups: (o.count, o.walk, o.other),
            ahead,
        };
        b.count * core::mem::size_of::<T>() == 4
            && arch::interleave_band(self.dst, self.src, whole, None)
    }

    /// [`Visitor::block3`] for a block of a band of tiles side by side,
    /// `near` the tiles beside it ([`Neighbours`], whose outputs this
    /// sets).
    fn block3_beside(
        &mut self,
        off: usize,
        other: usize,
        [o, a, b]: [Axis; 3],
        near: &mut Neighbours,
    ) {
        let block = Block::into_walked(a, b);
        // Whatever writes this block other than `stream_lines` writes it
        // whole, and no line of the tiles beside it.
        (near.wrote_prev, near.left_next) = (false, false);
        let outer = Outer::into_walked(o);
        let d = off - self.base;
        if !self.stage.is_empty() {
            // Rows contiguous on both sides first: no transpose takes them.
            if self.band_of_runs(d, other, o, block) {
                self.end = end_of(d, &[o, a, b], self.unit);
                return;
            }
            if line_units::<T>(self.unit)
                && (stream_lines(
                    self.dst, d, self.src, other, outer, block, self.unit, self.stage, near,
                ) || stream_joined_tiles(self.dst, d, self.src, other, outer, block, self.unit))
            {
                // No later run continues these lines.
                self.end = usize::MAX;
                return;
            }
            if self.unit == 1 && self.stacked_band(off, other, [UNIT, o, a, b]) {
                return;
            }
            if self.unit == 1 && stream_interleaved_band(self.dst, d, self.src, other, outer, block)
            {
                self.end = end_of(d, &[o, a, b], self.unit);
                return;
            }
        }
        for x in 0..o.count {
            self.block(off + x * o.walk, other + x * o.other, a, b);
        }
    }
}

/// How far on [`Gather::stacked_band`] asks for the source: 2 KiB and
/// 8 KiB measured alike or slower (caches flushed, 2-vCPU Intel Xeon).
const STACKED_AHEAD_BYTES: usize = 4 << 10;

impl<T: Copy> Visitor for Gather<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let src = self.src;
        self.block_from(src, off, other, a, b);
    }

    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        self.block3_beside(off, other, [o, a, b], &mut Neighbours::default());
    }

    /// A band of `(2,1)` or `(4,1)` tiles side by side (a tile row of a
    /// row-major array), read where it lies while the next band (the rows
    /// under it) is asked for: a short band in order ([`burst_band`]),
    /// a long one row piece by row piece as the kernel reads the same
    /// columns of this one. Without the requests the loads waited on
    /// memory (an AVX-512 kernel on `s8[100000,600]{1,0:T(8,128)(4,1)}`:
    /// 0.34 of the best copy without, 0.76-0.80 with the band at once,
    /// 0.50 piece by piece; `s8[17220,3897]`: 0.90, 0.79, 0.93; AMD EPYC
    /// Zen 4). Other bands go a tile at a time.
    fn block4(&mut self, off: usize, other: usize, band: Axis, o: Axis, a: Axis, b: Axis) {
        let rect = band_rows([band, o, a, b])
            .filter(|_| !self.stage.is_empty() && short_group_rows::<T>(self.unit, a, b));
        let Some(Block {
            na: rows,
            nb: width,
            da: pitch,
            ..
        }) = rect
        else {
            if self.stacked_band(off, other, [band, o, a, b]) {
                return;
            }
            // Tiles whose groups lie back to back share the lines where a
            // group ends and the next tile's begins: each call writes
            // those it shares with the previous tile ([`Neighbours`]).
            // Where one did not, the previous tile is written again
            // without leaving any (the same values; it never happens where
            // the tiles' calls take the same path, as they do).
            let beside = band.walk == a.count * a.walk;
            let mut left = false;
            for x in 0..band.count {
                let mut near = Neighbours {
                    prev: (beside && x > 0).then_some(band.other),
                    next: beside && x + 1 < band.count,
                    ..Neighbours::default()
                };
                let at = (off + x * band.walk, other + x * band.other);
                self.block3_beside(at.0, at.1, [o, a, b], &mut near);
                if left && !near.wrote_prev {
                    let before = (at.0 - band.walk, at.1 - band.other);
                    self.block3_beside(before.0, before.1, [o, a, b], &mut Neighbours::default());
                    #[cfg(test)]
                    tests::REDONE.with(|n| n.set(n.get() + 1));
                }
                left = near.left_next;
            }
            return;
        };
        // A short band's next band (the rows under it) asked for in the
        // order it lies, two lines for each line read (a ragged last tile
        // goes apart, so the reads cover less than the band); the same
        // columns of the next band for long ones. All at once before the
        // band (the prefetches then waited for free slots),
        // `bf16[48629,690]{1,0:T(4,128)(2,1)}` packed in 8.9-10.5 ms
        // against 7.8, `bf16[52428,640]` 6.4-6.9 against 4.9; a line for
        // each line read left `bf16[100000,300]`'s last rows to latency
        // (10.1 against 7.8). Linearly, the long bands' (`bf16[4096,8192]`)
        // took 6.3 against 5.5 (AMD EPYC Zen 4).
        let ahead = if burst_band::<T>(rows, width) {
            arch::Ahead::Linear(rows * pitch)
        } else {
            arch::Ahead::Rows(rows * pitch)
        };
        let to = off - self.base;
        self.end = end_of(to, &[band, o, a, b], self.unit);
        if self.interleave_band(to, other, [band, o, a, b], ahead) {
            return;
        }
        let outer = Outer::into_walked(o);
        let block = Block::into_walked(a, b);
        for x in 0..band.count {
            let (at, from) = (to + x * band.walk, other + x * band.other);
            // The next band's share of this tile, asked for as above but a
            // tile at a time: the kernel asks for nothing itself.
            if burst_band::<T>(rows, pitch) {
                ask_band_share(self.src, from, (rows, pitch, a.count));
            } else {
                for r in rows..2 * rows {
                    let row = from + r * pitch;
                    arch::prefetch_span(self.src, row, row + a.count);
                }
            }
            if !stream_interleaved_band(self.dst, at, self.src, from, outer, block) {
                for g in 0..o.count {
                    let (at, s) = (at + g * o.walk, from + g * o.other);
                    copy_any(self.dst, at, self.src, s, block, 1, &mut [], false);
                }
            }
        }
    }

    fn padding(&mut self, off: usize, len: usize) {
        if let Some(fill) = self.padding {
            let d = off - self.base;
            stream_fill(&mut self.dst[d..][..len], fill, self.stage);
            self.end = d + len;
        }
    }

    /// The rows of each block padded ([`stream_padded_groups`]) where
    /// they lie back to back in the destination, a block a group, and the
    /// source runs down them; otherwise as the walk hands them over.
    fn block3_padded(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis, b_len: usize) {
        let fits = line_units::<T>(self.unit) && self.streams_padded_rows(a, b, b_len);
        if let Some(fill) = self.padding.filter(|_| fits) {
            let d = off - self.base;
            let groups = (Outer::into_walked(o), a.count);
            let row = (b.count, b_len);
            if stream_padded_groups(
                self.dst, d, self.src, other, groups, row, b.other, self.unit, fill,
            ) {
                self.end = usize::MAX;
                return;
            }
        }
        block3_padded_apart(self, off, other, (o, a, b), b_len);
    }

    /// A block whose rows lie back to back, then its padding (a tile row
    /// of a ragged last tile column of `(2,1)` pairs: 50 pairs of 128),
    /// put together in the stage and streamed as one run. Apart, the
    /// elements went streamed and the padding plainly, and the line they
    /// share cost more than the rest of the tile (`bf16[48629,690]` in
    /// `T(4,128)(2,1)`: half of its pack's time).
    fn block_then_padding(&mut self, off: usize, other: usize, a: Axis, b: Axis, a_len: usize) {
        let run = a_len * a.walk;
        if let Some(fill) = self.padding {
            // A ragged group block (the last tile of a `(2,1)` or `(4,1)`
            // band): its columns and fill in one kernel call.
            let d = off - self.base;
            let band = arch::GroupBand {
                from: other,
                pitch: b.other,
                to: d,
                columns: a.count,
                width: a_len,
                tiles: (1, 0, 0),
                groups: (1, 0, 0),
                ahead: arch::Ahead::Rows(0),
            };
            if !self.stage.is_empty()
                && short_group_rows::<T>(self.unit, a, b)
                && b.count * core::mem::size_of::<T>() == 4
                && arch::interleave_band(self.dst, self.src, band, Some(fill))
            {
                self.end = d + run;
                return;
            }
        }
        let fill = match self.padding {
            // Every slot of the run written, from the block or the fill.
            Some(fill)
                if b.walk == self.unit && a.walk == b.count * b.walk && run <= self.stage.len() =>
            {
                fill
            }
            _ => return block_then_padding_apart(self, off, other, (a, b), a_len),
        };
        let (stage, d) = (&mut self.stage[..run], off - self.base);
        let block = Block::into_walked(a, b);
        copy_any(stage, 0, self.src, other, block, self.unit, &mut [], false);
        stage[a.count * a.walk..].fill(fill);
        stream_staged(self.dst, d, stage, &mut self.end);
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
    /// each. Runs of less than a line go straight: copied, the pack of
    /// `s8[1,60,207,4352]{2,3,1,0:T(32,128)(4,1)}` (a tile column of 79
    /// lanes in 128, 8 units of each lane a tile) took 15.5 ms against
    /// 10.1 (AMD EPYC Zen 4).
    fn block_padded(&mut self, off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        if let Some(fill) = self.padding {
            let d = off - self.base;
            if arch::TileKernel::best().is_some()
                && self.streams_padded_rows(a, b, b_len)
                && self.padded_tiles(self.src, d, other, (a, b, b_len), fill)
            {
                return;
            }
        }
        // Each source row's run in the block at least a line long: a
        // shorter one (the 8 units of a `T(32,128)(4,1)` tile's column)
        // costs a copy call for less than a line, and the transposes read
        // the same lines where they lie.
        let run_bytes = a
            .count
            .saturating_mul(self.unit)
            .saturating_mul(core::mem::size_of::<T>());
        let far = !self.stage.is_empty()
            && run_bytes >= 64
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
            Some(&init) if far && a.count > 0 => arch::with_wide(init, len, |wide| {
                self.padded_rows_copied(wide, off, other, a, b, b_len)
            }),
            _ => false,
        };
        if !copied {
            self.padded_rows(src, off, other, a, b, b_len);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;

    std::thread_local! {
        /// Bands [`Gather::stacked_band`](super::Gather::stacked_band)
        /// packed in one call on this thread.
        pub(crate) static STACKED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// Tiles of a band written again after the next tile's call did
        /// not write the lines they share, on this thread.
        pub(crate) static REDONE: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    }
}
