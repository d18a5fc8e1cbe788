//! The strategy of unpack and convert: which kernel reads each block the
//! walk of the source's storage hands over into the other array.

use super::arch;
use super::kernels::{
    copy_any, group_rows_in_order, group_tiles, join_head, joined_lines, line_elements, line_units,
    prefetch_short_rows, ragged_columns, short_group_rows, stream_joined_rows,
    stream_joined_strips, stream_joined_tiles, stream_lines, Asked, Block, InOrder, Joined,
    Neighbours, Outer, Piece, SHORT_ROW_BYTES,
};
use super::walk::{Axis, Visitor, UNIT};

/// The fewest bytes of a tile row [`Scatter::tile_rows`] takes: each call
/// writes its first and last lines plainly.
const IN_ORDER_BYTES: usize = 4 << 10;

/// A tile row of whole tiles waiting for the block of its ragged last
/// tile ([`Scatter::tile_rows`]): the walk's `block3` as it came.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    off: usize,
    d: usize,
    tiles: Axis,
    rows: Axis,
    cols: Axis,
}

/// The smallest band [`Scatter::joined_groups`] takes.
const JOINED_BAND_BYTES: usize = 4 << 10;

/// The shortest run of a tile row that [`Scatter::joined_rows`] takes
/// where more of the rows follow.
const SEAMED_RUN_BYTES: usize = 8 << 10;

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
    /// A tile row waiting for its ragged last tile; [`finish`](Self::finish)
    /// writes it at the latest.
    waiting: Option<Waiting>,
    /// The source asked for ahead of bands of group tiles.
    asked: Asked,
    /// A tile row of group tiles waiting for its ragged last tile
    /// ([`Scatter::ragged_group`]); [`finish`](Self::finish) writes it at
    /// the latest.
    rows_waiting: Option<RowsWaiting>,
    /// Rows written in order whose last tile row waits in `rows_stage`;
    /// [`finish`](Self::finish) writes it at the latest.
    in_order: Option<InOrder>,
    /// The stage of [`group_rows_in_order`], larger than `stage` (empty
    /// where `stage` is).
    rows_stage: &'a mut [T],
}

/// A band of whole group tiles (the walk's `block4`, as it came) whose
/// rows the ragged last tile ends, `got` of its groups (each a `block`
/// of the walk) already in.
#[derive(Clone, Copy, Debug)]
struct RowsWaiting {
    off: usize,
    to: usize,
    axes: [Axis; 4],
    last: usize,
    got: usize,
}

impl RowsWaiting {
    /// The block of the ragged tile's group `g` as the walk hands it
    /// over: where it lies in the source and the destination, and its
    /// columns of groups.
    fn group(&self, g: usize) -> (usize, usize, Block) {
        let [band, groups, cols, rows] = self.axes;
        let off = self.off + band.count * band.walk + g * groups.walk;
        let to = self.to + band.count * cols.count + g * groups.other;
        let block = Block {
            na: self.last,
            nb: rows.count,
            da: cols.other,
            db: rows.other,
            sa: cols.walk,
            sb: rows.walk,
        };
        (off, to, block)
    }
}

impl<T: Copy> Scatter<'_, T> {
    /// Runs `walk` over a visitor writing `dst` (the other array from
    /// position `base` on) from `src`, `unit` elements a position, through
    /// `stage` (empty: plain stores; otherwise with a stage of its own for
    /// tile rows written in order, [`arch::with_rows_stage`]), then writes
    /// what still waits in either.
    pub(crate) fn run(
        (src, dst, base): (&[T], &mut [T], usize),
        stage: &mut [T],
        unit: usize,
        walk: impl for<'b> FnOnce(&mut Scatter<'b, T>),
    ) {
        let init = stage.first().copied();
        let run = |rows_stage: &mut [T]| {
            let mut v = Scatter {
                src,
                dst,
                base,
                stage: &mut *stage,
                unit,
                joined: None,
                waiting: None,
                asked: Asked::default(),
                rows_waiting: None,
                in_order: None,
                rows_stage,
            };
            walk(&mut v);
            v.finish();
        };
        match init {
            Some(init) => arch::with_rows_stage(init, run),
            None => run(&mut []),
        }
    }

    /// Writes a tile row waiting for its ragged last tile, and what waits
    /// in the stage for rows joined or written in order, before anything
    /// else uses the stage and once the walk is done.
    fn finish(&mut self) {
        if let Some(r) = self.in_order.take() {
            r.finish(self.dst, self.rows_stage);
        }
        self.settle();
    }

    /// [`finish`](Self::finish) but for rows written in order, which the
    /// next tile row may continue.
    fn settle(&mut self) {
        if let Some(w) = self.rows_waiting.take() {
            // The walk went elsewhere: the band and the groups in so far
            // as they would have gone.
            #[cfg(test)]
            super::kernels::tests::IN_ORDER.with(|n| n.set((n.get().0, n.get().1 + 1)));
            self.group_band_now(w.off, w.to, w.axes);
            for g in 0..w.got {
                let (off, d, block) = w.group(g);
                copy_any(self.dst, d, self.src, off, block, 1, &mut [], false);
            }
        }
        if let Some(w) = self.waiting.take() {
            self.band(w.off, w.d, w.tiles, w.rows, w.cols);
        }
        if let Some(j) = self.joined.take() {
            j.finish(self.dst, self.stage);
        }
    }

    /// Tiles of `(2,1)` or `(4,1)` groups (see [`group_tiles`]): held back
    /// where the ragged tile that ends their rows comes next and the tile
    /// row goes in order ([`ragged_columns`], [`RowsWaiting`]), otherwise
    /// straight.
    fn group_band(&mut self, off: usize, to: usize, axes: [Axis; 4]) {
        if self.ragged_band(off, to, axes) {
            return;
        }
        // (An empty `rows_stage`, without streaming stores, holds none.)
        if let Some(last) = ragged_columns(axes, self.rows_stage) {
            self.settle();
            self.rows_waiting = Some(RowsWaiting {
                off,
                to,
                axes,
                last,
                got: 0,
            });
            return;
        }
        self.group_band_now(off, to, axes);
    }

    /// Takes band `axes` at `off` and `to` if it is the ragged tile a tile
    /// row waits for ([`RowsWaiting`]), all its groups at once. Otherwise
    /// (`false`) the waiting tile row goes as it would have.
    fn ragged_band(&mut self, off: usize, to: usize, axes: [Axis; 4]) -> bool {
        let Some(w) = self.rows_waiting else {
            return false;
        };
        let [_, groups, cols, rows] = w.axes;
        let (o, at, _) = w.group(0);
        let ragged = Axis {
            count: w.last,
            ..cols
        };
        let next = w.got == 0
            && (o, at) == (off, to)
            && axes[0].count == 1
            && axes[1..] == [groups, ragged, rows];
        if next && !self.in_order(w) {
            self.group_band_now(off, to, axes);
        }
        next
    }

    /// Takes block `block` at `off` and `d` if it is the next group of
    /// the ragged tile a tile row waits for ([`RowsWaiting`]), with the
    /// last the whole tile row. Otherwise (`false`) the waiting tile row
    /// and the groups in go as they would have.
    fn ragged_group(&mut self, off: usize, d: usize, block: Block) -> bool {
        let Some(mut w) = self.rows_waiting else {
            return false;
        };
        if w.group(w.got) != (off, d, block) {
            self.finish();
            return false;
        }
        w.got += 1;
        if w.got < w.axes[1].count {
            self.rows_waiting = Some(w);
        } else {
            self.in_order(w);
        }
        true
    }

    /// Writes tile row `w`, with the groups of its ragged tile it holds,
    /// through [`group_rows_in_order`]; where that refuses (`false`), as
    /// it would have gone otherwise.
    fn in_order(&mut self, w: RowsWaiting) -> bool {
        self.rows_waiting = None;
        let (dst, src) = ((&mut *self.dst, w.to), (self.src, w.off));
        let stage = &mut *self.rows_stage;
        let done = group_rows_in_order(dst, src, w.axes, stage, &mut self.in_order);
        if !done {
            self.rows_waiting = Some(w);
            self.finish();
        }
        done
    }

    /// [`group_band`](Self::group_band) for bands it does not hold back.
    fn group_band_now(&mut self, off: usize, to: usize, axes: [Axis; 4]) {
        self.finish();
        if !self.joined_groups(off, to, axes) {
            group_tiles(
                self.dst,
                to,
                self.src,
                off,
                axes,
                self.stage,
                &mut self.asked,
            );
        }
    }

    /// A band of group tiles whose rows run on side by side, each tile's
    /// groups one under the other (a tile row of a row-major array past
    /// the cache), in one call of [`arch::deinterleave_band`]: every row's
    /// whole lines streamed, joined from pieces that start anywhere in
    /// them. Bands under [`JOINED_BAND_BYTES`] (a tile of a 1-D array
    /// in `T(512)(128)(2,1)`) go as before, where the calls cost more than
    /// the joins save. `false`, nothing written, for other bands or where
    /// the kernel refuses them.
    fn joined_groups(&mut self, off: usize, to: usize, axes: [Axis; 4]) -> bool {
        let [band, groups, cols, rows] = axes;
        let bytes = [
            band.count,
            groups.count,
            cols.count,
            rows.count,
            core::mem::size_of::<T>(),
        ]
        .iter()
        .fold(1usize, |n, &x| n.saturating_mul(x));
        let fits = !self.stage.is_empty()
            && bytes >= JOINED_BAND_BYTES
            && rows.count * core::mem::size_of::<T>() == 4
            && (band.count == 1 || band.other == cols.count)
            && (groups.count == 1 || Some(groups.other) == rows.count.checked_mul(rows.other));
        if !fits {
            return false;
        }
        let band = arch::GroupRows {
            grouped: true,
            from: off,
            to,
            pitch: rows.other,
            columns: cols.count,
            tiles: (band.count, band.walk),
            groups: (groups.count, groups.walk),
        };
        arch::deinterleave_band(self.dst, self.src, band)
    }

    /// The tiles of one tile row, `o` side by side, each row of each a
    /// run on both sides (`f32` `T(8,128)` tiles unpacked into a row-major
    /// array), into rows that do not all start on a line, in one call of
    /// [`arch::deinterleave_band`]: every row's whole lines streamed,
    /// joined from 64-byte pieces. Through [`stream_joined_rows`], which
    /// streams each piece's whole lines and then the lines split between
    /// pieces from the stage, `f32[4093,4093]{1,0:T(8,128)}` unpacked in
    /// 7.0 ms against 4.7, `f32[1,12,540,2458]{3,2,1,0:T(4,128)}` in 8.7
    /// against 7.6 (best of three alternated runs, AMD EPYC Zen 4); rows
    /// 2,560 wide, on lines, took 4.8-6.9. Where a ragged last tile continues the rows, its
    /// pieces go as [`stream_joined_rows`] writes them, and the lines at
    /// the seams are written twice, plainly: below [`SEAMED_RUN_BYTES`] a
    /// row that cost more than it saved (`f32[16384,1000]{1,0:T(8,128)}`
    /// unpacked in 8.7-9.6 ms against 7.1-7.2). `false`, nothing written,
    /// for other blocks.
    fn joined_rows(&mut self, off: usize, d: usize, o: Outer, block: Block) -> bool {
        let size = core::mem::size_of::<T>();
        let columns = block.nb.saturating_mul(self.unit);
        let run = columns.saturating_mul(o.count);
        let fits = block.db == self.unit
            && block.sb == self.unit
            && (o.count == 1 || o.d == columns)
            && (block.da == run || run.saturating_mul(size) >= SEAMED_RUN_BYTES)
            && self.dst.get(d..).is_some_and(|rows| {
                rows.as_ptr().addr() % 64 != 0 || block.da.saturating_mul(size) % 64 != 0
            });
        if !fits {
            return false;
        }
        let band = arch::GroupRows {
            grouped: false,
            from: off,
            to: d,
            pitch: block.da,
            columns,
            tiles: (o.count, o.s),
            groups: (block.na, block.sa),
        };
        arch::deinterleave_band(self.dst, self.src, band)
    }

    /// A block of rows, each a run on both sides, whose destination rows
    /// do not all start on 16 bytes (a row-major array of 2,387 `f32`s a
    /// row unpacked from `T(1,128)`), [`arch::JOINED_ROWS`] rows (as many
    /// as it joins) a call of [`arch::deinterleave_band`]: each row's whole
    /// 64-byte pieces joined into the lines they start in and streamed,
    /// the few elements past them plainly. Streamed a row at a time, such
    /// rows could only go plainly (streaming stores need 16 bytes), their
    /// lines read before they are written:
    /// `f32[1,5,1179,2387]{3,2,1,0:T(1,128)}` unpacked in 5.3-5.6 ms
    /// against 3.3-3.5 (AMD EPYC Zen 4). Rows shorter than
    /// [`SHORT_ROW_BYTES`] stay plain, as in [`copy_any`]. `false`, nothing
    /// written, for other blocks.
    fn joined_block(&mut self, off: usize, d: usize, block: Block) -> bool {
        let size = core::mem::size_of::<T>();
        if size == 0 || 64 % size != 0 {
            return false;
        }
        let unit = self.unit;
        let len = block.nb.saturating_mul(unit);
        let piece = 64 / size;
        let whole = len / piece * piece;
        let on_16 = |at: usize| at.saturating_mul(size) % 16 == 0;
        let start = self.dst.as_ptr().addr() / size + d;
        let fits = block.db == unit
            && block.sb == unit
            && block.na > 0
            && len.saturating_mul(size) >= SHORT_ROW_BYTES
            && (!on_16(start) || (block.na > 1 && !on_16(block.da)))
            && block
                .last()
                .is_some_and(|l| d.checked_add(l).is_some_and(|e| e < self.dst.len()));
        if !fits {
            return false;
        }
        for i0 in (0..block.na).step_by(arch::JOINED_ROWS) {
            let m = arch::JOINED_ROWS.min(block.na - i0);
            let (to, from) = (d + i0 * block.da, off + i0 * block.sa);
            let band = arch::GroupRows {
                grouped: false,
                from,
                to,
                pitch: block.da,
                columns: whole,
                tiles: (1, 0),
                groups: (m, block.sa),
            };
            if !arch::deinterleave_band(self.dst, self.src, band) {
                if i0 == 0 {
                    return false;
                }
                let rest = Block {
                    na: block.na - i0,
                    ..block
                };
                copy_any(self.dst, to, self.src, from, rest, unit, &mut [], false);
                return true;
            }
            for i in 0..m {
                let (t, f) = (to + i * block.da + whole, from + i * block.sa + whole);
                self.dst[t..t + len - whole].copy_from_slice(&self.src[f..f + len - whole]);
            }
        }
        true
    }

    /// A tile row of whole tiles side by side (`tiles`; block `rows` x
    /// `cols` of each, each row a run on both sides) whose rows lie one
    /// after another in the destination and go on past the whole tiles (a
    /// ragged last tile, which the walk hands over next as a block of its
    /// own), each under [`SEAMED_RUN_BYTES`] in the whole tiles: the tile
    /// row waits for that block ([`Waiting`]), then goes row by row in the
    /// destination's order through [`arch::rows_in_order`], each line
    /// streamed whole once. The band kernels leave each row's last partial
    /// line for the ragged tile and write it twice, or stage it: unpacked
    /// so, `f32[24314,690]{1,0:T(4,128)}` took 10.7 ms against 4.9,
    /// `T(2,128)` 12.6 against 6.0, `f32[12000,1390]{1,0:T(4,128)}` 8.7
    /// against 4.6, `f32[16384,1000]{1,0:T(8,128)}` 5.5 against 4.7; wider
    /// rows went as fast or faster by the band kernels
    /// (`f32[4093,4093]{1,0:T(8,128)}` 3.8 against 4.4; AMD EPYC Zen 4).
    /// Tile rows under [`IN_ORDER_BYTES`] stay with them. `false`, nothing
    /// written or waiting, for other blocks.
    fn tile_rows(&mut self, off: usize, d: usize, tiles: Axis, rows: Axis, cols: Axis) -> bool {
        let (unit, size) = (self.unit, core::mem::size_of::<T>());
        let block = Block::from_walked(rows, cols);
        let columns = block.nb.saturating_mul(unit);
        let run = tiles.count.saturating_mul(columns);
        let fits = !self.stage.is_empty()
            && block.sb == unit
            && block.db == unit
            && tiles.count > 0
            && tiles.other == columns
            && block.na > 0
            && block.da > run
            && block.da - run < columns
            && run.saturating_mul(size) < SEAMED_RUN_BYTES
            && block.da.saturating_mul(block.na).saturating_mul(size) >= IN_ORDER_BYTES;
        if fits {
            self.waiting = Some(Waiting {
                off,
                d,
                tiles,
                rows,
                cols,
            });
        }
        fits
    }

    /// The block that ends the waiting tile row's rows (its ragged last
    /// tile), if `block` at `off` and `d` is that block: the whole tile
    /// row written. Otherwise the tile row goes as it came and `false`.
    fn end_waiting(&mut self, off: usize, d: usize, block: Block) -> bool {
        let Some(w) = self.waiting.take() else {
            return false;
        };
        let rows = Block::from_walked(w.rows, w.cols);
        let unit = self.unit;
        let run = w.tiles.count * rows.nb * unit;
        let last = rows.da - run;
        let ends = off == w.off + w.tiles.count * w.tiles.walk
            && d == w.d + run
            && (block.na, block.sa, block.da) == (rows.na, rows.sa, rows.da)
            && (block.sb, block.db) == (unit, unit)
            && block.nb * unit == last;
        let band = arch::TileRows {
            from: w.off,
            to: w.d,
            rows: (rows.na, rows.sa),
            tiles: (w.tiles.count, w.tiles.walk),
            columns: rows.nb * unit,
            last,
        };
        if ends && arch::rows_in_order(self.dst, self.src, band) {
            return true;
        }
        self.band(w.off, w.d, w.tiles, w.rows, w.cols);
        false
    }

    /// The band of tiles of a walk's `block3` (`o` tiles of block `a` x
    /// `b`) by the kernels for it, after [`tile_rows`](Self::tile_rows).
    fn band(&mut self, off: usize, d: usize, o: Axis, a: Axis, b: Axis) {
        let block = Block::from_walked(a, b);
        let outer = Outer::from_walked(o);
        if !self.stage.is_empty() {
            if self.joined_rows(off, d, outer, block) {
                return;
            }
            self.joined = stream_joined_rows(
                self.dst, d, self.src, off, outer, block, self.unit, self.stage,
            );
            if self.joined.is_some() {
                return;
            }
        }
        // A band of whole rows on lines, one call for all (see `stream_runs`),
        // row by row as the destination lies (see `stream_joined_rows`).
        // Where the tiles' rows lie back to back in the destination, the
        // runs go in its order and may split lines between them.
        let grid = [(block.na, block.da, block.sa), (o.count, o.other, o.walk)];
        let len = block.nb * self.unit;
        let granule = if o.count > 1 && o.other == len {
            16
        } else {
            64
        };
        let runs = !self.stage.is_empty()
            && block.db == self.unit
            && block.sb == self.unit
            && arch::stream_runs(
                &mut self.dst[d..],
                &self.src[off..],
                grid,
                len,
                granule,
                arch::next_span::<T>(grid, len).map(|at| (at, len)),
            );
        if runs {
            return;
        }
        let streamed = !self.stage.is_empty()
            && line_units::<T>(self.unit)
            && (stream_lines(
                self.dst,
                d,
                self.src,
                off,
                outer,
                block,
                self.unit,
                self.stage,
                &mut Neighbours::default(),
            ) || stream_joined_tiles(self.dst, d, self.src, off, outer, block, self.unit));
        if !streamed && !self.thin_rows(off, d, o, a, b) {
            for x in 0..o.count {
                self.block(off + x * o.walk, d + self.base + x * o.other, a, b);
            }
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
            let lines = joined_lines(self.stage, rows.next + i);
            let head = join_head(self.dst, to, from, lines, Piece::Inside);
            arch::stream_copy_lines(&mut self.dst[to + head..][..len - head], &from[head..]);
        }
        let next = rows.next + piece.na;
        self.joined = (next < rows.rows).then_some(Joined { next, ..rows });
        true
    }

    /// Blocks of fewer than four `rows` (a `T(2,128)` tile, or the pairs
    /// and quads of `(2,1)` and `(4,1)` tiles, transposed), whose rows the
    /// `outer` step continues in the destination: 16 rows of consecutive
    /// blocks copied into the stage, each a contiguous run of the source,
    /// then transposed from there as one block of 16 rows, which the
    /// vector transposes take (they need four rows or more). A block at a
    /// time, each unit went alone: the transposed `f32[4079,4113]` `T(2,128)`
    /// unpack took 54 ms against 20 now, `s8[15360,4400]` `(4,1)` 62
    /// against 18. `false`, nothing written, for other blocks or a stage
    /// too small.
    fn thin_rows(&mut self, off: usize, to: usize, outer: Axis, rows: Axis, cols: Axis) -> bool {
        let unit = self.unit;
        let thin = rows.count < 4 && outer.count >= 2 && cols.count >= 4;
        let runs = cols.walk == unit && cols.other != unit;
        if !thin || !runs || outer.other != rows.count * rows.other {
            return false;
        }
        let group = 16 / rows.count;
        let len = cols.count * unit;
        if self.stage.len() < group * rows.count * len {
            return false;
        }
        for x0 in (0..outer.count).step_by(group) {
            let staged = group.min(outer.count - x0) * rows.count;
            let stage = &mut self.stage[..staged * len];
            for (r, run) in stage.chunks_exact_mut(len).enumerate() {
                let (x, i) = (x0 + r / rows.count, r % rows.count);
                run.copy_from_slice(&self.src[off + x * outer.walk + i * rows.walk..][..len]);
            }
            let block = Block {
                na: staged,
                nb: cols.count,
                da: rows.other,
                db: cols.other,
                sa: len,
                sb: unit,
            };
            let at = to + x0 * outer.other;
            copy_any(self.dst, at, stage, 0, block, unit, &mut [], false);
        }
        true
    }
}

impl<T: Copy> Visitor for Scatter<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let block = Block::from_walked(a, b);
        let d = other - self.base;
        if self.ragged_group(off, d, block) {
            return;
        }
        if self.end_waiting(off, d, block) {
            return;
        }
        // The rows' last tile, padded (the walk hands it over as a block
        // of its own), ends rows joined before it.
        if self.continue_joined(d, off, block) {
            return;
        }
        self.finish();
        if !self.stage.is_empty() {
            if self.joined_block(off, d, block) {
                return;
            }
            prefetch_short_rows(self.dst, d, self.src, off, block, self.unit);
        }
        copy_any(
            self.dst, d, self.src, off, block, self.unit, self.stage, false,
        );
    }

    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        let d = other - self.base;
        if short_group_rows::<T>(self.unit, a, b) {
            // A whole tile of `(2,1)` or `(4,1)` groups at once: one call
            // a tile, not a stream-or-stage decision per pair or quad of
            // rows (see `group_band`).
            return self.group_band(off, d, [UNIT, o, a, b]);
        }
        self.finish();
        if !self.tile_rows(off, d, o, a, b) {
            self.band(off, d, o, a, b);
        }
    }

    fn block4(&mut self, off: usize, other: usize, band: Axis, o: Axis, a: Axis, b: Axis) {
        if short_group_rows::<T>(self.unit, a, b) {
            // A band of such tiles at once (see `group_band`).
            let to = other - self.base;
            return self.group_band(off, to, [band, o, a, b]);
        }
        // Tiles side by side whose runs start anywhere in their lines
        // go together (see `stream_joined_strips`).
        if band.count > 1 && !self.stage.is_empty() && line_units::<T>(self.unit) {
            self.finish();
            let (strips, outer) = (Outer::from_walked(band), Outer::from_walked(o));
            let (block, d) = (Block::from_walked(a, b), other - self.base);
            let (dst, src, unit) = (&mut *self.dst, self.src, self.unit);
            if stream_joined_strips(dst, d, src, off, strips, outer, block, unit) {
                return;
            }
        }
        for x in 0..band.count {
            self.block3(off + x * band.walk, other + x * band.other, o, a, b);
        }
    }

    fn padding(&mut self, _off: usize, _len: usize) {}

    fn ignores_padding(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::arch::tests::{byte, half};
    use super::super::kernels::tests::{IN_ORDER, REFUSE_IN_ORDER};
    use super::*;
    use core::mem::size_of;

    /// One call of the walk for [`tile_rows_go_in_order`]: `block` (no band,
    /// `o` the unit axis), `block3` (no band), or `block4`.
    type WalkCall = (usize, usize, Option<Axis>, Axis, Axis, Axis);

    /// A walk's call applied a value at a time.
    // The axes' names of the walk (`Visitor::block4`).
    #[allow(clippy::many_single_char_names)]
    fn apply_call<T: Copy>(dst: &mut [T], src: &[T], (off, other, band, o, a, b): WalkCall) {
        let band = band.unwrap_or(UNIT);
        for (x, g, i, j) in (0..band.count).flat_map(|x| {
            (0..o.count).flat_map(move |g| {
                (0..a.count).flat_map(move |i| (0..b.count).map(move |j| (x, g, i, j)))
            })
        }) {
            let s = off + x * band.walk + g * o.walk + i * a.walk + j * b.walk;
            let d = other + x * band.other + g * o.other + i * a.other + j * b.other;
            dst[d] = src[s];
        }
    }

    /// The walk's calls for tile rows of `whole` tiles of `2` groups of `k`
    /// rows of 128 columns and a ragged tile of `last` columns, tile row `t`
    /// going as `plan[t]` says ([`tile_rows_go_in_order`]), into rows from
    /// `d` on.
    // The axes' names of the walk (`Visitor::block4`).
    #[allow(clippy::many_single_char_names)]
    fn tile_row_calls(
        k: usize,
        (whole, last): (usize, usize),
        d: usize,
        plan: &[u8],
    ) -> std::vec::Vec<WalkCall> {
        let (groups, cols) = (2, 128);
        let pitch = whole * cols + last;
        let tile = groups * k * cols;
        let unit = UNIT;
        let rows = Axis {
            count: k,
            walk: 1,
            other: pitch,
        };
        let o = Axis {
            count: groups,
            walk: k * cols,
            other: k * pitch,
        };
        let a = |count| Axis {
            count,
            walk: k,
            other: 1,
        };
        let band = Axis {
            count: whole,
            walk: tile,
            other: cols,
        };
        let mut calls = std::vec::Vec::new();
        for (t, &how) in plan.iter().enumerate() {
            if how == 4 {
                continue;
            }
            let (off, to) = (t * (whole + 1) * tile, d + t * groups * k * pitch);
            calls.push((off, to, Some(band), o, a(cols), rows));
            let ragged = (off + whole * tile, to + whole * cols);
            if how == 3 {
                // The first source element, past the last row.
                let one = Axis { count: 1, ..rows };
                calls.push((
                    0,
                    d + plan.len() * groups * k * pitch + 1,
                    None,
                    unit,
                    a(1),
                    one,
                ));
            }
            if how == 1 {
                calls.push((ragged.0, ragged.1, None, o, a(last), rows));
            } else {
                for g in 0..if how == 2 { 1 } else { groups } {
                    let at = (ragged.0 + g * o.walk, ragged.1 + g * o.other);
                    calls.push((at.0, at.1, None, unit, a(last), rows));
                }
            }
        }
        calls
    }

    /// Tile rows of group tiles into rows that lie one after another, as the
    /// walk hands them over (a band of whole tiles, then the ragged tile a
    /// block a group or a band of groups), through [`Scatter`] with a stage:
    /// against the same calls applied a value at a time. Tile rows follow one
    /// another or leave a gap, start anywhere in a line, and some go astray
    /// (the ragged tile cut short by the next band, a block from elsewhere
    /// between the band and its ragged tile), which the held-back band must
    /// then write as it would have; so must every tile row where
    /// [`group_rows_in_order`] refuses it (forced).
    #[test]
    fn tile_rows_go_in_order() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let k = 4 / core::mem::size_of::<T>();
            let before = IN_ORDER.get();
            // Tile rows of whole lines too (widths of 8 elements times 8), so
            // that a tile row after a gap starts where the run's last line
            // would have continued.
            for (whole, last) in [(1, 1), (2, 50), (3, 127), (5, 50), (1, 8), (2, 120)] {
                let rows = 2 * k;
                let src: std::vec::Vec<T> = (0..5 * (whole + 1) * rows * 128).map(make).collect();
                // How each tile row goes: 0, 1 its ragged tile a block a group
                // or a band; 2 the next band comes after the first group; 3 a
                // block from elsewhere between; 4 left out (a gap).
                for (lead, how) in [
                    (0, [0, 0, 1, 0, 1]),
                    (16, [0, 4, 0, 2, 0]),
                    (34, [1, 3, 0, 0, 2]),
                ] {
                    for refuse in [false, true] {
                        // Room past the tile rows for up to a line's
                        // lead and the stray element after them.
                        let mut got = std::vec![old; 5 * rows * (whole * 128 + last) + 66];
                        let d = (lead + 64 - got.as_ptr().addr() % 64) % 64 / size_of::<T>();
                        let calls = tile_row_calls(k, (whole, last), d, &how);
                        let mut want = got.clone();
                        for &c in &calls {
                            apply_call(&mut want, &src, c);
                        }
                        REFUSE_IN_ORDER.set(refuse);
                        arch::with_stage(old, |stage| {
                            Scatter::run((&src, &mut got, 0), stage, 1, |v| {
                                for &(off, other, band, o, a, b) in &calls {
                                    match band {
                                        Some(band) => v.block4(off, other, band, o, a, b),
                                        None if o.count > 1 => v.block3(off, other, o, a, b),
                                        None => v.block(off, other, a, b),
                                    }
                                }
                            });
                        });
                        REFUSE_IN_ORDER.set(false);
                        arch::stream_fence();
                        let at = std::format!("{whole} tiles and {last}, {lead} bytes in");
                        assert_eq!(got, want, "{at}, {how:?}, refused {refuse}");
                    }
                }
            }
            let after = IN_ORDER.get();
            assert!(
                after.0 - before.0 > 20,
                "{} tile rows in order",
                after.0 - before.0
            );
            assert!(
                after.1 - before.1 > 5,
                "{} held back and gone another way",
                after.1 - before.1
            );
        }
        check(half, 0);
        check(byte, 0);
    }
}
