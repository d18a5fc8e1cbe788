//! Transposes of 4-byte units too large for the caches, in 16x16 tiles
//! placed on the cache lines of both sides.

use core::ops::Range;

use super::{arch, copy_any, line_elements, to_line, to_line_in, Block};
use crate::relayout::walk::Axis;

/// The outermost digit of a 3-D copy: `count` values, `d` elements apart
/// in the destination and `s` in the source.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outer {
    pub(crate) count: usize,
    pub(crate) d: usize,
    pub(crate) s: usize,
}

impl Outer {
    /// A single value: one block.
    pub(crate) const ONE: Outer = Outer {
        count: 1,
        d: 0,
        s: 0,
    };

    /// A walk's outer axis `o` of a copy into the walked storage
    /// (packing), as [`Block::into_walked`].
    pub(crate) fn into_walked(o: Axis) -> Outer {
        Outer {
            count: o.count,
            d: o.walk,
            s: o.other,
        }
    }

    /// A walk's outer axis `o` of a copy out of the walked storage
    /// (unpacking), as [`Block::from_walked`].
    pub(crate) fn from_walked(o: Axis) -> Outer {
        Outer {
            count: o.count,
            d: o.other,
            s: o.walk,
        }
    }
}

/// Units down a column of the source from which [`stream_lines`] puts its
/// tiles on the column's lines.
pub(crate) const LONG_COLUMNS: usize = 256;

/// Units along the source's runs from which [`stream_lines`] takes a block.
pub(crate) const LONG_RUNS: usize = 64;

/// Runs [`buffered_tiles`] joins at a time: 8 lines of each fill the
/// wide buffer.
const MAX_JOINED_RUNS: usize = 128;

/// Tiles ahead along the inner loop of [`stream_lines`] whose source lines
/// are asked for.
pub(crate) const PREFETCH_TILES: usize = 2;

/// Tiles in a band from which [`stream_lines`] runs bands in one call
/// without prefetching: the hardware's prefetcher follows streams that
/// long, and shorter bands (a `T(8,128)` tile's 8 tiles across, on the way
/// back to column-major) need each tile to ask for the lines of the tile
/// [`PREFETCH_TILES`] on, into the next band (measured there: 23.5-24.2 ms
/// in one call without against 17.8-18.8 ms tile by tile with it; all the
/// bands in one call with it, 0.84-0.93 of the time tile by tile).
pub(crate) const LONG_BAND: usize = 32;

/// The row side of [`stream_lines`]: row `i` starts `i / na * outer + i %
/// na * step` units in.
#[derive(Clone, Copy)]
pub(crate) struct Rows16 {
    pub(crate) na: usize,
    pub(crate) outer: usize,
    pub(crate) step: usize,
    /// 16 rows on: rows past whole groups, what that adds without passing
    /// a group's end, and what passing one adds more.
    pub(crate) rem: usize,
    pub(crate) skip: usize,
    pub(crate) carry: usize,
}

/// The starts of 16 consecutive rows, with each row's place in its group
/// of `na`.
#[derive(Clone, Copy)]
pub(crate) struct At16 {
    pub(crate) off: [usize; 16],
    pub(crate) r: [usize; 16],
}

impl Rows16 {
    pub(crate) fn new(na: usize, outer: usize, step: usize) -> Rows16 {
        Rows16 {
            na,
            outer,
            step,
            rem: 16 % na,
            skip: (16 / na * outer).wrapping_add(16 % na * step),
            carry: outer.wrapping_sub(na * step),
        }
    }

    /// The 16 rows at `at`, `base` further on, as [`arch::Quarters`], and
    /// what every row's start gains from one band of 16 rows to the next,
    /// where every band from `at` on has its rows in quarters and one
    /// amount for all: rows all `step` apart (one group, or groups back to
    /// back), or groups of 4, 8 or 16 rows whose quarters `at` puts inside
    /// them.
    pub(crate) fn steady(self, at: &At16, base: usize) -> Option<(arch::Quarters, usize)> {
        if self.outer == self.na.wrapping_mul(self.step) {
            let first = base.wrapping_add(at.off[0]);
            Some((
                arch::Quarters::even(first, self.step),
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

    pub(crate) fn at(self, i: usize) -> At16 {
        At16 {
            off: core::array::from_fn(|c| {
                (i + c) / self.na * self.outer + (i + c) % self.na * self.step
            }),
            r: core::array::from_fn(|c| (i + c) % self.na),
        }
    }

    /// The 16 rows at `at`, `base` further on: [`arch::Quarters`] where
    /// each quarter lies inside one group (so its rows are `step` apart),
    /// else each row's start.
    pub(crate) fn runs(self, at: &At16, base: usize) -> Runs {
        if (0..4).all(|q| at.r[4 * q] + 4 <= self.na) {
            Runs::Quarters(arch::Quarters {
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
    pub(crate) fn advance(self, at: &mut At16) {
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
pub(crate) enum Runs {
    Quarters(arch::Quarters),
    Each([usize; 16]),
}

/// One side of a band of tiles: the first tile's runs and what each tile
/// adds to every run's start.
type Band = (arch::Quarters, usize);

impl Runs {
    pub(crate) fn each(self) -> [usize; 16] {
        match self {
            Runs::Quarters(q) => core::array::from_fn(|k| q.start(k)),
            Runs::Each(offsets) => offsets,
        }
    }
}

/// Columns of tiles that [`TileGrid::down_columns`] runs as one group,
/// a round of each column's tiles back to back: where the destination's
/// runs lie far apart (a tile's rows of `(8,128)(4,1)` tiles 212 KiB
/// apart), streaming stores that give each run a line and move on wrote
/// at a third of the rate of those that give each 256 bytes or more in
/// turn (AMD EPYC Zen 5); four columns give each run four lines.
const COLUMN_GROUP: usize = 4;

/// Bands of [`TileGrid::copied_bands`] copied and run at a time: a
/// band a call gives each destination row a line and passes on (see
/// [`COLUMN_GROUP`]); several go across the bands. The 4-D `bf16`
/// permutation's way back (destination rows 16 KiB apart, 4 tiles a
/// band): 12.5-14.1 ms a band at a time, 8.1-10.5 four at a time,
/// 8.4-9.4 eight (AMD EPYC Zen 5, alternated); its `f32` untiled way back
/// 8.9-11.0 ms against 6.0-6.9 four at a time.
const COPIED_BANDS: usize = 8;

/// The grid of 16x16 tiles of [`stream_lines`] from (`i_lo`, `j_lo`): the
/// row side's starts, the column side's step, units `w` a position.
#[derive(Clone, Copy)]
pub(crate) struct TileGrid {
    pub(crate) d: usize,
    pub(crate) s: usize,
    pub(crate) w: usize,
    pub(crate) rows: Rows16,
    pub(crate) col_step: usize,
    pub(crate) i_lo: usize,
    pub(crate) j_lo: usize,
    pub(crate) tiles_i: usize,
    pub(crate) tiles_j: usize,
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
    pub(crate) fn down_columns<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        tile: impl Fn(&mut [T], Runs, Runs, usize, usize),
        band: impl Fn(&mut [T], Band, Band, usize, arch::Bands) -> bool,
        kernel: arch::TileKernel,
    ) {
        let (d, s, w, col_step) = (self.d, self.s, self.w, self.col_step);
        let (i_lo, j_lo, tiles_i) = (self.i_lo, self.j_lo, self.tiles_i);
        let j_hi = j_lo + 16 * self.tiles_j;
        // Every column at once: short ones (rows of 64 units up, the 4-D
        // permutation back: 4 tiles a column) each tile asking for its
        // source ahead (one call a column, tile by tile, spent more time
        // finding the rows of each tile than moving it); long ones in
        // blocks of columns, which a call a column cannot walk
        // (`arch::BLOCK_BANDS`).
        if self.tiles_j > 1 {
            let at = self.rows.at(i_lo);
            if let Some((to, adv)) = self.rows.steady(&at, d + j_lo * w) {
                let from = arch::Quarters::even(s + j_lo * col_step + i_lo * w, col_step);
                let bands = arch::Bands {
                    count: self.tiles_j,
                    to_adv: 16 * w,
                    from_adv: 16 * col_step,
                };
                if band(dst, (to, adv), (from, 16 * w), tiles_i, bands) {
                    return;
                }
            }
        }
        let mut tj = 0;
        while tj < self.tiles_j {
            let j0 = j_lo + 16 * tj;
            let mut at = self.rows.at(i_lo);
            if let Some((to, adv)) = self.rows.steady(&at, d + j0 * w) {
                let from = arch::Quarters::even(s + j0 * col_step + i_lo * w, col_step);
                if band(dst, (to, adv), (from, 16 * w), tiles_i, arch::Bands::ONE) {
                    tj += 1;
                    continue;
                }
            }
            // Groups of rows that a band holds whole (the pairs of rows of
            // `T(2,128)` and `(8,128)(4,1)` tiles) advance evenly too,
            // though their runs make no quarters: [`COLUMN_GROUP`] columns
            // in one call, each run carried from tile to tile. Tile by
            // tile, finding each tile's runs took a third of the samples,
            // and the pack of `f32[4079,4113]{0,1:T(2,128)}` 9.8-10.2 ms
            // against 6.6-6.8, `s8[27049,2481]{0,1:T(8,128)(4,1)}` 9.2-9.4
            // against 8.0-8.2 (AMD EPYC Zen 4).
            if self.rows.rem == 0 {
                let n = COLUMN_GROUP.min(self.tiles_j - tj);
                let columns: [arch::GroupTile; COLUMN_GROUP] = core::array::from_fn(|k| {
                    let j0 = j0 + 16 * k.min(n - 1);
                    arch::GroupTile {
                        to: at.off.map(|o| d + j0 * w + o),
                        from: core::array::from_fn(|c| Some(s + (j0 + c) * col_step + i_lo * w)),
                    }
                });
                let run = (&columns[..n], self.rows.skip);
                // Every run is the source's: the group's fill is never read.
                let done = src.first().is_some_and(|&fill| {
                    arch::tile16_group_run(kernel, dst, run, src, 16 * w, tiles_i, fill, true)
                });
                #[cfg(test)]
                super::tests::COLUMNS.with(|n| n.set(n.get() + usize::from(done)));
                if done {
                    tj += n;
                    continue;
                }
            }
            for ti in 0..tiles_i {
                let i0 = i_lo + 16 * ti;
                let to = self.rows.runs(&at, d + j0 * w);
                let from =
                    Runs::Quarters(arch::Quarters::even(s + j0 * col_step + i0 * w, col_step));
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
                        arch::prefetch(src, f);
                        arch::prefetch(src, f + 16 * w - 1);
                    }
                }
                tile(dst, to, from, i0, j0);
                self.rows.advance(&mut at);
            }
            tj += 1;
        }
    }

    /// Rows on the source: bands of 16 source rows, left to right; short
    /// bands whose rows lie close together each from a copy of its rows in
    /// `stage` ([`TileGrid::copied_bands`]).
    pub(crate) fn along_rows<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        tile: impl Fn(&mut [T], Runs, Runs, usize, usize),
        band: impl Fn(&mut [T], Band, Band, usize, arch::Bands) -> bool,
        (stage, kernel): (&mut [T], arch::TileKernel),
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
            let to = arch::Quarters::even(d + j_lo * col_step + i_lo * w, col_step);
            let bands = arch::Bands {
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
                let to = arch::Quarters::even(d + j_lo * col_step + i0 * w, col_step);
                let one = arch::Bands::ONE;
                if band(dst, (to, 16 * col_step), (from, 16 * w), tiles_j, one) {
                    at = next;
                    continue;
                }
            }
            for tj in 0..tiles_j {
                let j0 = j_lo + 16 * tj;
                let to = Runs::Quarters(arch::Quarters::even(d + j0 * col_step + i0 * w, col_step));
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
                        arch::prefetch(src, f);
                        arch::prefetch(src, f + 16 * w - 1);
                    }
                }
                tile(dst, to, from, i0, j0);
            }
            at = next;
        }
    }

    /// Every band along the source's rows, `first` the first band's source
    /// runs and what each band adds to them, each band's rows copied whole
    /// into `stage` in one piece (padding between them included), up to
    /// [`COPIED_BANDS`] bands a span apart, and their tiles run from the
    /// copy in one call of `kernel`, asking for nothing ahead (tile by tile
    /// from the source where that call refuses). Where `stage` holds one
    /// band and the wide scratch buffer two or more, the copies go there.
    /// `false`, nothing written, where a band's rows span more than either
    /// holds from its first line boundary on.
    ///
    /// The tiles read their 16 rows a line at a time across the rows, an
    /// order the memory reads more slowly than the rows one after the
    /// other: over the data halves of 512-byte rows (the 4-D `bf16`
    /// permutation's way back), 8.5-11 ms for 128 MiB against 5.5-7.4 ms
    /// in the rows' order, and 5.7-6.5 ms copying 8 KiB of rows at a time
    /// and reading the copy in the tiles' order (AMD EPYC Zen 4).
    pub(crate) fn copied_bands<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        band: Band,
        (stage, kernel): (&mut [T], arch::TileKernel),
        tile: &impl Fn(&mut [T], Runs, Runs, usize, usize),
    ) -> bool {
        // Where the stage holds one band, the wide scratch buffer
        // (streaming relayouts only, as this is) if it holds two or more.
        let line = line_elements::<T>();
        let stride = self
            .band_span::<T>(band.0)
            .map_or(usize::MAX, |(_, _, stride)| stride);
        let two = stride.saturating_mul(2).saturating_add(line);
        let want = stride
            .saturating_mul(COPIED_BANDS)
            .saturating_add(line)
            .min(arch::WIDE_BYTES / core::mem::size_of::<T>().max(1));
        if self.tiles_i > 1 && stage.len() < two && want >= two {
            if let Some(&init) = src.first() {
                let done = arch::with_wide(init, want, |wide| {
                    self.copied_bands_in(dst, src, band, (wide, kernel), tile)
                });
                if done {
                    return true;
                }
            }
        }
        self.copied_bands_in(dst, src, band, (stage, kernel), tile)
    }

    /// What a band of [`copied_bands`](Self::copied_bands) whose first
    /// band's runs are `first` reads: from its first row's start to its
    /// last row's end, the same span for every band: where it starts, its
    /// length, and its length in whole lines (how far apart bands copied
    /// together lie, each on the lines where the first starts).
    fn band_span<T>(self, first: arch::Quarters) -> Option<(usize, usize, usize)> {
        let starts = (0..16).map(|k| first.start(k));
        let (lo, top) = (starts.clone().min()?, starts.max()?);
        let span = top
            .saturating_sub(lo)
            .saturating_add(16 * self.w * self.tiles_j);
        Some((
            lo,
            span,
            span.checked_next_multiple_of(line_elements::<T>())?,
        ))
    }

    /// [`copied_bands`](Self::copied_bands) through `stage`.
    fn copied_bands_in<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        (first, from_band): Band,
        (stage, kernel): (&mut [T], arch::TileKernel),
        tile: &impl Fn(&mut [T], Runs, Runs, usize, usize),
    ) -> bool {
        let (w, col_step, tiles_j) = (self.w, self.col_step, self.tiles_j);
        let Some((lo, span, stride)) = self.band_span::<T>(first) else {
            return false;
        };
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
        let runs = arch::Quarters {
            bases: first.bases.map(|b| b.wrapping_sub(lo)),
            step: first.step,
        };
        // Up to COPIED_BANDS bands a call, `stride` apart, so that the
        // tiles go across them (`arch::ACROSS_TILES`).
        let per = (stage.len() / stride.max(1)).clamp(1, COPIED_BANDS);
        let mut ti = 0;
        while ti < self.tiles_i {
            let n = per.min(self.tiles_i - ti);
            for g in 0..n {
                let at = lo + (ti + g) * from_band;
                stage[g * stride..][..span].copy_from_slice(&src[at..][..span]);
            }
            let i0 = self.i_lo + 16 * ti;
            let to = arch::Quarters::even(self.d + self.j_lo * col_step + i0 * w, col_step);
            let to = (to, 16 * col_step);
            let bands = arch::Bands {
                count: n,
                to_adv: 16 * w,
                from_adv: stride,
            };
            let done = arch::tile16_quarters_run(
                kernel,
                dst,
                to,
                stage,
                (runs, 16 * w),
                tiles_j,
                bands,
                true,
                None,
            );
            #[cfg(test)]
            super::tests::STAGED.with(|n| n.set(n.get() + usize::from(done)));
            if !done {
                for ti in ti..ti + n {
                    let i0 = self.i_lo + 16 * ti;
                    for tj in 0..tiles_j {
                        let j0 = self.j_lo + 16 * tj;
                        let to = arch::Quarters::even(self.d + j0 * col_step + i0 * w, col_step);
                        let from = arch::Quarters {
                            bases: first
                                .bases
                                .map(|b| b.wrapping_add(ti * from_band + 16 * w * tj)),
                            step: first.step,
                        };
                        tile(dst, Runs::Quarters(to), Runs::Quarters(from), i0, j0);
                    }
                }
            }
            ti += n;
        }
        true
    }
}

/// Whether units of `width` elements are the 4 bytes [`stream_lines`]
/// moves: tested before calling it, which stays out of line, so that the
/// blocks of other sizes (interleaves, row copies) keep their short path.
#[inline]
pub(crate) fn line_units<T>(width: usize) -> bool {
    width * core::mem::size_of::<T>() == 4
}

/// The tiles beside a block of [`stream_lines`] in a walk's band of
/// tiles side by side (the tile columns of a transposed pack), whose rows
/// the destination holds back to back with the block's: the line where a
/// group of rows of one tile ends and the same group of the next begins
/// holds a part of each ([`joined_edges`]). The next tile's call writes
/// it whole, from both tiles' sources (the previous tile's rows were read
/// just before, by its own call).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Neighbours {
    /// How far back the previous tile's source lies, in elements, where
    /// the block follows that tile and its call came just before.
    pub(crate) prev: Option<usize>,
    /// Whether the next tile follows the block and its call comes next.
    pub(crate) next: bool,
    /// Out: whether the call wrote the lines it shares with the previous
    /// tile whole.
    pub(crate) wrote_prev: bool,
    /// Out: whether the call left lines it shares with the next tile to
    /// that tile's call (which must then write them, or the walk this
    /// block again without neighbours).
    pub(crate) left_next: bool,
}

/// A transpose of 4-byte units (`w` elements each) too large for the
/// caches: `dst[d + x*o.d + i*b.da + j*b.db] = src[s + x*o.s + i*b.sa +
/// j*b.sb]`, where one side is contiguous along `j` (its "rows", each value
/// of `x` and `i` one) and the other along `x` and `i` together (its
/// "columns"). It goes in 16x16 tiles of [`arch::tile16`] placed on the
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
pub(crate) fn stream_lines<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
    stage: &mut [T],
    near: &mut Neighbours,
) -> bool {
    let size = core::mem::size_of::<T>();
    let Some(kernel) = arch::TileKernel::best() else {
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
    let plain = |dst: &mut [T], is: Range<usize>, js: Range<usize>| {
        plain_part((dst, d), (src, s), (o, b), w, is, js);
    };
    let tile = |dst: &mut [T], to: Runs, from: Runs, i0: usize, j0: usize| {
        let done = match (to, from) {
            (Runs::Quarters(to), Runs::Quarters(from)) => {
                arch::tile16_quarters(kernel, dst, to, src, from, true)
            }
            _ => arch::tile16_on(kernel, dst, &to.each(), src, &from.each(), true),
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
    let band = |dst: &mut [T], to: Band, from: Band, count: usize, bands: arch::Bands| {
        let ahead = (count < LONG_BAND).then_some(PREFETCH_TILES);
        let done = (ahead.is_none() || bands.count > 1)
            && arch::tile16_quarters_run(kernel, dst, to, src, from, count, bands, true, ahead);
        #[cfg(test)]
        super::tests::BANDS.with(|n| n.set(n.get() + usize::from(done)));
        done
    };
    let (lo, hi) = if rows_dst {
        grid.down_columns(dst, src, tile, band, kernel);
        // The rows before `i_lo` and past `i_hi` as one more row of tiles
        // each, over rows the grid wrote already (the same values again):
        // the tiles' source runs need not start lines. Copied plainly, the
        // 14 rows past the last tile of each block of the transposed pack
        // of `s8[27049,2481]` into `(8,128)(4,1)` tiles (the units at the
        // end of each source row; each line of each of those destination
        // rows read for ownership first) took a tenth of the pack.
        for first in [0, ni - 16] {
            if first < i_lo || first + 16 > i_hi {
                let one = TileGrid {
                    i_lo: first,
                    tiles_i: 1,
                    ..grid
                };
                one.down_columns(dst, src, tile, band, kernel);
            }
        }
        (0, ni)
    } else {
        grid.along_rows(dst, src, tile, band, (stage, kernel));
        (i_lo, i_hi)
    };
    plain(dst, 0..lo, 0..nj);
    plain(dst, hi..ni, 0..nj);
    // `rows_dst` has the source's rows evenly spaced already.
    if rows_dst && j_lo > 0 && b.da == nj * w {
        let edges = (lo..hi, j_lo, j_hi, nj);
        let tiles = (kernel, stage, near);
        joined_edges((dst, d), (src, s), (o, b), edges, tiles, plain);
    } else {
        plain(dst, lo..hi, 0..j_lo);
        plain(dst, lo..hi, j_hi..nj);
    }
    true
}

/// The columns `0..j_lo` and `j_hi..nj` of rows `rows` of block `b` (at
/// `d` in `dst`, `s` in `src`) whose destination rows lie back to back,
/// `b.da = nj` units apart, in groups of `b.na` (a tile's rows; the groups
/// `o.d` apart), and whose source rows are evenly spaced: row `i` is `i *
/// sa` in. The part of a row before its first whole line and the part of
/// the row above past its last make one line: 16 of them go as a tile,
/// whose source runs are the columns from `j_hi` one row up and those
/// before `j_lo`. As two strips, each of those lines was written twice, in
/// pieces, without streaming: a quarter of the lines of rows of 64 units
/// (the 4-D permutation), and more than half its time; an eighth of the
/// lines of `T(8,128)` rows filled from a column-major array, and a third
/// of its time. `plain` copies what no tile covers.
///
/// A row that starts a group shares no line with the row above, but with
/// what lies before the group. Where that is the same group of the
/// previous tile of a band (`near.prev`), each such line is written
/// whole, the tile's row mixing that tile's tail and this block's head
/// ([`shared_lines`]); where the next tile's call will do the same
/// (`near.next`), the lines this block's groups share with it are left to
/// it. Otherwise the tiles holding such lines go through `stage`
/// (16 lines), the lines inside groups streamed from it, the parts of the
/// others written plainly, each line read for ownership first (packing
/// `s8[27049,2481]{0,1:T(8,128)(4,1)}` into a `Vec`, half the edges'
/// lines, and the edges took 2.5 of 11.8 ms). Sets `near`'s outputs.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names)]
fn joined_edges<T: Copy>(
    (dst, d): (&mut [T], usize),
    (src, s): (&[T], usize),
    (o, b): (Outer, Block),
    (rows, j_lo, j_hi, nj): (Range<usize>, usize, usize, usize),
    (kernel, stage, near): (arch::TileKernel, &mut [T], &mut Neighbours),
    plain: impl Fn(&mut [T], Range<usize>, Range<usize>),
) {
    let (i_lo, i_hi) = (rows.start, rows.end);
    let tail = nj - j_hi;
    // Where row `i` starts, and whether every row continues the one above.
    let joined = o.count == 1 || o.d == b.na * b.da;
    let row = |i: usize| {
        if joined {
            d + i * b.da
        } else {
            d + (i / b.na) * o.d + (i % b.na) * b.da
        }
    };
    let (unit, line) = (b.db, 16 * b.db);
    let skip = to_line::<T>(stage.as_ptr().addr());
    let staged: [usize; 16] = core::array::from_fn(|r| skip + r * line);
    let mut from: [usize; 16] = core::array::from_fn(|c| {
        if c < tail {
            s + i_lo * b.sa + (j_hi + c) * b.sb
        } else {
            s + (i_lo + 1) * b.sa + (c - tail) * b.sb
        }
    });
    // The tiles cover rows `i_lo + 1..end`, 16 rows each.
    let steps = i_hi.saturating_sub(i_lo + 1) / 16;
    let end = i_lo + 1 + 16 * steps;
    let shared = !joined && tail + j_lo == 16 && steps > 0;
    // The line after the last row of a group that starts at `q - b.na`,
    // whose next group starts at `q`, left to the next tile's call: that
    // call writes it with the tile whose rows hold `q - b.na`, inside its
    // tiles' rows.
    let leave = |q: usize| shared && near.next && q >= i_lo + 1 + b.na && q < end;
    let blend = near.prev.filter(|_| {
        #[cfg(test)]
        if super::tests::REFUSED.with(|r| r.replace(r.get() >> 1)) & 1 == 1 {
            return false;
        }
        shared && kernel.available()
    });
    plain(dst, i_lo..i_lo + 1, 0..j_lo);
    // The lines from the tail of row `i - 1` to the head of row `i`.
    let mut i = i_lo + 1;
    let (mut left, mut whole) = (false, blend.is_some());
    while i + 16 <= i_hi {
        // The source runs of the tile `EDGE_AHEAD` on, 16 short streams
        // the hardware's prefetchers hardly start on; and the lines of the
        // tile half as far on written plainly in two parts (where a row
        // starts a group), read for ownership at the first part's store.
        // Without either, the edges (an eighth of the lines) took a third
        // of the pack of `s8[27049,2481]{0,1:T(8,128)(4,1)}` into a `Vec`.
        for &f in &from {
            let ahead = f + EDGE_AHEAD * 16 * b.sa;
            arch::prefetch_span(src, ahead, ahead + 16 * b.sa);
        }
        let starts = (0..16)
            .filter(|r| (i + r) % b.na == 0)
            .fold(0u16, |m, r| m | 1 << r);
        let to: [usize; 16] = core::array::from_fn(|r| row(i - 1 + r) + j_hi * b.db);
        if let Some(back) = blend {
            // Where groups divide a tile's 16 rows, every tile has the
            // same rows that start one, and all move on alike: all the
            // tiles left in one call. Tile by tile, finding each tile's
            // runs and asking for them made the edges (an eighth of the
            // lines) cost 2.1-2.5 ms of the 10-12 of a transposed pack
            // into a `Vec`, 2.1-2.5 times a band of the grid.
            let tiles = if 16 % b.na == 0 { (i_hi - i) / 16 } else { 1 };
            // Where row `i + r` starts a group, the line before its head.
            let lines: [usize; 16] = core::array::from_fn(|r| {
                if starts >> r & 1 == 1 {
                    row(i + r) + j_lo * b.db - line
                } else {
                    to[r]
                }
            });
            let lines = (&lines, row(i + 16) - row(i));
            let prev = (tail, b.na * b.sa, back, b.sa);
            let done = shared_lines(kernel, (dst, lines), (src, &from), prev, (starts, tiles));
            whole &= done;
            if done {
                let starting = (i..i + 16 * tiles).filter(|k| k % b.na == 0);
                left |= starting.clone().any(leave);
                for k in starting.filter(|&k| !leave(k)) {
                    plain(dst, k - 1..k, j_hi..nj);
                }
                from = from.map(|f| f + 16 * tiles * b.sa);
                i += 16 * tiles;
                continue;
            }
        }
        if !joined {
            let ahead = (i + EDGE_AHEAD / 2 * 16, i_hi);
            ask_split_lines(dst, &row, ahead, b.na, j_hi * b.db);
        }
        let done = if joined || starts == 0 {
            arch::tile16_on(kernel, dst, &to, src, &from, true)
        } else if arch::tile16_on(kernel, stage, &staged, src, &from, false) {
            for (r, &at) in to.iter().enumerate() {
                let lined = &stage[staged[r]..][..line];
                if starts >> r & 1 == 1 {
                    left |= leave(i + r);
                    if !leave(i + r) {
                        dst[at..][..tail * unit].copy_from_slice(&lined[..tail * unit]);
                    }
                    dst[row(i + r)..][..j_lo * unit].copy_from_slice(&lined[tail * unit..]);
                } else {
                    arch::stream_line(&mut dst[at..][..line], lined);
                }
            }
            true
        } else {
            false
        };
        if !done {
            plain(dst, i - 1..i + 15, j_hi..nj);
            plain(dst, i..i + 16, 0..j_lo);
        }
        from = from.map(|f| f + 16 * b.sa);
        i += 16;
    }
    plain(dst, i - 1..i_hi, j_hi..nj);
    plain(dst, i..i_hi, 0..j_lo);
    (near.wrote_prev, near.left_next) = (whole, left);
}

/// Asks for the lines [`joined_edges`] writes in two parts in the tile of
/// rows `k..k + 16` (if it ends by `end`): where row `k + r` starts a
/// group (of `na` rows, row `i` at `row(i)`), the line holding the tail
/// of the row before (from `tail` on) and the one holding its head.
fn ask_split_lines<T>(
    dst: &[T],
    row: &impl Fn(usize) -> usize,
    (k, end): (usize, usize),
    na: usize,
    tail: usize,
) {
    if k + 16 <= end {
        for r in (0..16).filter(|r| (k + r) % na == 0) {
            arch::prefetch(dst, row(k - 1 + r) + tail);
            arch::prefetch(dst, row(k + r));
        }
    }
}

/// `tiles` tiles of [`joined_edges`]' lines, each `to_adv` on in `dst` and
/// 16 rows on in `src` from the last, those at the rows `starts` marks
/// (rows that start a group) shared with the previous tile of a band:
/// there the first `tail` source runs are that tile's, `prev = (tail,
/// down, back, sa)` putting them `down` elements on and `back` elements
/// back from `from`'s (`sa` a row); every line streamed whole to `lines`.
/// `false`, nothing written, where [`arch::tile16_blend_run`] refuses (a
/// run outside `src`, which a walk's band never makes).
fn shared_lines<T: Copy>(
    kernel: arch::TileKernel,
    (dst, (lines, to_adv)): (&mut [T], (&[usize; 16], usize)),
    (src, from): (&[T], &[usize; 16]),
    (tail, down, back, sa): (usize, usize, usize, usize),
    (starts, tiles): (u16, usize),
) -> bool {
    let alt: [usize; 16] = core::array::from_fn(|c| {
        if c < tail {
            // Wrapping: a run before `src` is refused as one past its end.
            (from[c] + down).wrapping_sub(back)
        } else {
            from[c]
        }
    });
    let runs = (from, &alt, 16 * sa);
    let done = arch::tile16_blend_run(kernel, dst, (lines, to_adv), src, runs, starts, tiles);
    #[cfg(test)]
    super::tests::BLENDED.with(|n| n.set(n.get() + if done { tiles } else { 0 }));
    done
}

/// Tiles ahead whose source [`joined_edges`] asks for, and twice how far
/// ahead it asks for the lines it writes in two parts (measured: the
/// transposed pack of `s8[27049,2481]` into `(8,128)(4,1)` tiles, 17.3-18.7
/// ms without either, 14.6-15.4 with both; the source 2 or 8 tiles ahead
/// no better than 4).
const EDGE_AHEAD: usize = 4;

/// Rows `is` and columns `js` of the 3-D copy `o` x `b` (row `i` is value
/// `i / b.na` of `o`, row `i % b.na` of `b`) with plain stores: what the
/// line tiles leave.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names)]
fn plain_part<T: Copy>(
    (dst, d): (&mut [T], usize),
    (src, s): (&[T], usize),
    (o, b): (Outer, Block),
    w: usize,
    is: Range<usize>,
    js: Range<usize>,
) {
    // An empty part of each row would still cost a call a row: the tiles
    // of a transposed pack into storage that starts a line leave no
    // columns, and the 620 empty rows of each of 212 blocks took 0.75 of
    // 11 ms packing `s8[27049,2481]` into `(8,128)(4,1)` tiles.
    if js.is_empty() {
        return;
    }
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
}

/// [`stream_lines`] for a destination whose runs lie at different places
/// in their lines, which its tiles cannot put on the lines of both sides
/// (the rows of a row-major array whose width is no multiple of 16 units:
/// `s8[14903,4503]` unpacked from transposed `(4,1)` tiles, which went a
/// 4x4 or 8x8 tile at a time with plain stores, each line of the
/// destination read before it was written). The 16x16 tiles go across
/// many runs 16 units at a time, reading the source's rows in order, and
/// each run's pieces (a line's worth of units each) are joined into whole
/// lines, streamed; only the two lines at a run's ends, which it shares
/// with what lies beside it, go plainly. Where the CPU has
/// [`arch::join_band16`], each piece joins the end of the one before it
/// in registers ([`carried_tiles`]); elsewhere each run's pieces lie back
/// to back in a buffer, and every few pieces its lines go out from there
/// ([`buffered_tiles`]). Joined piece by piece through two lines of a
/// stage ([`join_head`](super::join_head)), each line was read back right
/// after it was written, before the store could reach the cache, and the
/// join took 30 ns. `dst[d + x*o.d + i*b.da + j*b.db] = src[s + x*o.s +
/// i*b.sa + j*b.sb]`, the destination's runs along `x` and `i`. `false`,
/// nothing written, for other blocks, short runs, or without the kernels.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names)]
#[inline(never)]
pub(crate) fn stream_joined_tiles<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
) -> bool {
    stream_joined_strips(dst, d, src, s, Outer::ONE, o, b, w)
}

/// [`stream_joined_tiles`] of `strips.count` blocks side by side along
/// `j`, each `strips.d` on in the destination and `strips.s` in the
/// source (a band of tiles, whose runs are a tile's columns): on
/// machines with [`arch::join_band16`], their runs go together, so that
/// the source's rows are read across all the strips' columns at once.
/// `false`, nothing written, where [`stream_joined_tiles`] refuses a
/// strip, for several strips without that kernel, and for several strips
/// whose runs all start lines (other kernels do those).
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names, clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn stream_joined_strips<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    strips: Outer,
    o: Outer,
    b: Block,
    w: usize,
) -> bool {
    let size = core::mem::size_of::<T>();
    let (ni, nj) = (o.count * b.na, b.nb);
    let runs = b.da == w && b.sb == w && (o.count == 1 || o.d == b.na * w);
    if w * size != 4
        || arch::TileKernel::best().is_none()
        || !runs
        || ni < LONG_RUNS
        || nj < 16
        || strips.count == 0
    {
        return false;
    }
    let Some(&init) = src.get(s) else {
        return false;
    };
    if arch::joins_tiles() {
        let on_lines = (b.db * size) % 64 == 0 && (strips.d * size) % 64 == 0;
        !(strips.count > 1 && on_lines) && carried_tiles(dst, d, src, s, strips, o, b, w, init)
    } else {
        strips.count == 1 && buffered_tiles(dst, d, src, s, o, b, w, init)
    }
}

/// [`stream_joined_strips`] of one strip without [`arch::join_band16`]:
/// each run's pieces put together in a buffer, then streamed a few lines
/// of each run at a time.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names, clippy::too_many_arguments)]
pub(crate) fn buffered_tiles<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
    init: T,
) -> bool {
    let line = line_elements::<T>();
    let (ni, nj) = (o.count * b.na, b.nb);
    let (i_full, j_full) = (ni / 16 * 16, nj / 16 * 16);
    // Runs at a time, and each one's space: the last line of its pieces
    // before, then up to `k` pieces.
    let group = j_full.min(MAX_JOINED_RUNS);
    let k = (arch::WIDE_BYTES / 64 / group.max(1)).min(9) - 1;
    let space = (k + 1) * line;
    arch::with_wide(init, group * space, |buf| {
        if buf.len() < group * space {
            return false;
        }
        let rows = Rows16::new(b.na, o.s, b.sa);
        for j_lo in (0..j_full).step_by(group) {
            let runs = group.min(j_full - j_lo);
            let buf = &mut buf[..runs * space];
            let mut at = rows.at(0);
            // Pieces of each run in the buffer, and where they start.
            let (mut held, mut start) = (0, 0);
            for i0 in (0..i_full).step_by(16) {
                let mut next = at;
                rows.advance(&mut next);
                let ask = i0 + 16 < i_full;
                for j0 in (0..runs).step_by(16) {
                    let col = s + (j_lo + j0) * b.sb;
                    if ask {
                        // The next 16 rows lie pages away: the line of
                        // each that the tile below will read is asked for
                        // now.
                        for r in next.off {
                            arch::prefetch_span(src, col + r, col + r + 16 * b.sb);
                        }
                    }
                    let from = at.off.map(|r| col + r);
                    let to: [usize; 16] =
                        core::array::from_fn(|r| (j0 + r) * space + (1 + held) * line);
                    if !arch::tile16(buf, &to, src, &from, false) {
                        for (c, &f) in from.iter().enumerate() {
                            for (r, &t) in to.iter().enumerate() {
                                buf[t + c * w..][..w].copy_from_slice(&src[f + r * w..][..w]);
                            }
                        }
                    }
                }
                at = next;
                held += 1;
                if held == k || i0 + 16 == i_full {
                    for (j, run) in buf.chunks_exact_mut(space).enumerate() {
                        let to = d + (j_lo + j) * b.db + start * w;
                        flush_run(dst, to, run, held, start == 0);
                    }
                    start += 16 * held;
                    held = 0;
                }
            }
            // Each run's last line, partly written.
            for (j, run) in buf.chunks_exact(space).enumerate() {
                let end = d + (j_lo + j) * b.db + i_full * w;
                let waiting = (line - to_line_in(dst, end)) % line;
                if waiting > 0 {
                    dst[end - waiting..end].copy_from_slice(&run[line - waiting..line]);
                }
            }
        }
        // The units past the last tile down and across.
        plain_part((dst, d), (src, s), (o, b), w, i_full..ni, 0..j_full);
        plain_part((dst, d), (src, s), (o, b), w, 0..ni, j_full..nj);
        true
    })
}

/// Runs [`carried_tiles`] carries a piece of at a time (64 bytes each: 32
/// KiB, the first-level cache of the machines with the kernel): with 256,
/// `f32[8192,2047]` from column-major took 10.5 ms against 8.8 (each
/// source row read 1 KiB at a time, not 2), and `s8[27049,2481]` from
/// transposed `(4,1)` tiles 10.8 against 10.0; 1,024 measured the same as
/// 512 (AMD EPYC Zen 4).
const JOINED_RUNS: usize = 512;

/// [`stream_joined_strips`] with [`arch::join_band16`]: tiles across up
/// to [`JOINED_RUNS`] runs at a time (whole strips, or part of one), 16
/// source rows a band from the top, each piece joined in registers to the
/// end of the piece before it on its run (held in `carry`, a slot of 64
/// bytes a run) and streamed a line at a time. A strip whose runs are no
/// multiple of 16 ends in a tile over its last 16 runs, which writes the
/// lines of the runs it shares with the tile before once more, the same.
/// At the end each run's bytes past its last line boundary go plainly
/// from `carry`, and its units past the last band from a tile over the
/// last 16 rows. Through a buffer ([`buffered_tiles`]: each run's pieces
/// written there, then copied out a few lines at a time), the same
/// transposes took 1.4-2x as long (`f32[8192,2047]` 15.0-15.3 ms against
/// 8.4-8.8): the copies out waited on no reads, and the reads on no
/// copies.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names, clippy::too_many_arguments)]
pub(crate) fn carried_tiles<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    strips: Outer,
    o: Outer,
    b: Block,
    w: usize,
    init: T,
) -> bool {
    let line = line_elements::<T>();
    let (ni, nb) = (o.count * b.na, b.nb);
    let i_full = ni / 16 * 16;
    // Tiles a strip, and the run where tile `t` starts.
    let (whole, per_strip) = (nb / 16, nb.div_ceil(16));
    let first_run = |t: usize| (16 * t).min(nb - 16);
    // Strips at a time, and tiles of each at a time.
    let per_group = JOINED_RUNS / 16;
    let (at_once, chunk) = if per_strip >= per_group {
        (1, per_group)
    } else {
        (per_group / per_strip, per_strip)
    };
    let slots = 16 * line;
    arch::with_wide(init, at_once * chunk * slots + slots, |wide| {
        if wide.len() < at_once * chunk * slots + slots {
            return false;
        }
        let (carry, tail) = wide.split_at_mut(at_once * chunk * slots);
        let rows = Rows16::new(b.na, o.s, b.sa);
        for q_lo in (0..strips.count).step_by(at_once) {
            let group = q_lo..strips.count.min(q_lo + at_once);
            for t_lo in (0..per_strip).step_by(chunk) {
                let tiles = t_lo..per_strip.min(t_lo + chunk);
                let mut at = rows.at(0);
                for i0 in (0..i_full).step_by(16) {
                    let mut next = at;
                    if i0 + 16 < i_full {
                        rows.advance(&mut next);
                    }
                    for (g, q) in group.clone().enumerate() {
                        let (c, r) = (s + q * strips.s, d + q * strips.d + i0 * w);
                        let carry = &mut carry[g * chunk * slots..][..tiles.len() * slots];
                        // The whole tiles in one call, the last one on its own.
                        let ends = [tiles.start.max(tiles.end.min(whole)), tiles.end];
                        let mut t0 = tiles.start;
                        for t1 in ends {
                            if t1 == t0 {
                                continue;
                            }
                            let j = first_run(t0);
                            let band = arch::JoinBand {
                                rows: at.off.map(|o| c + o + j * w),
                                ahead: next.off.map(|o| c + o + j * w),
                                tiles: t1 - t0,
                                piece: r + j * b.db,
                                stride: b.db,
                                first: i0 == 0,
                            };
                            let part =
                                &mut carry[(t0 - tiles.start) * slots..][..(t1 - t0) * slots];
                            if !arch::join_band16(dst, src, &band, part) {
                                plain_joined(dst, src, &band, part, w);
                            }
                            t0 = t1;
                        }
                    }
                    at = next;
                }
                // Each run's bytes past its last line boundary, and the
                // rows past the last band: the units of a tile over the
                // last 16 rows (`ni >= LONG_RUNS`), put together in `tail`.
                let rest = (ni - i_full) * w;
                let last = rows.at(ni - 16);
                for (g, q) in group.clone().enumerate() {
                    let carry = &carry[g * chunk * slots..][..tiles.len() * slots];
                    let (c, r) = (s + q * strips.s, d + q * strips.d);
                    for (t, tile) in tiles.clone().zip(carry.chunks_exact(slots)) {
                        let j = first_run(t);
                        if rest > 0 {
                            let from = last.off.map(|o| c + o + j * w);
                            let to = core::array::from_fn(|k| k * line);
                            if !arch::tile16(tail, &to, src, &from, false) {
                                plain_tile(tail, &to, src, &from, w);
                            }
                        }
                        for (k, slot) in tile.chunks_exact(line).enumerate() {
                            let end = r + (j + k) * b.db + i_full * w;
                            let waiting = (line - to_line_in(dst, end)) % line;
                            dst[end - waiting..end].copy_from_slice(&slot[line - waiting..]);
                            dst[end..][..rest]
                                .copy_from_slice(&tail[(k + 1) * line - rest..][..rest]);
                        }
                    }
                }
            }
        }
        true
    })
}

/// The 16x16 tile of [`arch::tile16`] with plain loops: units `k` of the
/// rows at `src[from[c]..]` into the run at `dst[to[k]..]`.
fn plain_tile<T: Copy>(dst: &mut [T], to: &[usize; 16], src: &[T], from: &[usize; 16], w: usize) {
    for (k, &t) in to.iter().enumerate() {
        for (c, &f) in from.iter().enumerate() {
            dst[t + c * w..][..w].copy_from_slice(&src[f + k * w..][..w]);
        }
    }
}

/// [`arch::join_band16`] with plain stores, for a band it refuses: each
/// piece written whole, after the end of the piece before it (in its
/// slot of `carry`) unless it is its run's first, then put in its slot.
fn plain_joined<T: Copy>(
    dst: &mut [T],
    src: &[T],
    band: &arch::JoinBand,
    carry: &mut [T],
    w: usize,
) {
    let line = line_elements::<T>();
    for (n, slot) in carry
        .chunks_exact_mut(line)
        .take(16 * band.tiles)
        .enumerate()
    {
        let (t, k) = (n / 16, n % 16);
        let to = band.piece + n * band.stride;
        let waiting = (line - to_line_in(dst, to)) % line;
        if !band.first {
            dst[to - waiting..to].copy_from_slice(&slot[line - waiting..]);
        }
        for (r, &row) in band.rows.iter().enumerate() {
            slot[r * w..][..w].copy_from_slice(&src[row + (16 * t + k) * w..][..w]);
        }
        dst[to..][..line].copy_from_slice(slot);
    }
}

/// Writes the `pieces` of one run of [`stream_joined_tiles`] (lines
/// `1..=pieces` of `run`) to `dst[to..]`, streaming every line they finish
/// (the first joined to the last line before them, `run`'s line 0, unless
/// they start the run), and leaves their last line in line 0 for the
/// pieces after.
fn flush_run<T: Copy>(dst: &mut [T], to: usize, run: &mut [T], pieces: usize, first: bool) {
    // `run` lies over `dst[to - line..to + len]`.
    let line = line_elements::<T>();
    let head = to_line_in(dst, to);
    let len = pieces * line;
    if head == 0 {
        arch::stream_copy_lines(&mut dst[to..][..len], &run[line..][..len]);
    } else if first {
        // The line before the run's first boundary is shared with what
        // lies before the run.
        dst[to..][..head].copy_from_slice(&run[line..][..head]);
        let body = len - line;
        arch::stream_copy_lines(&mut dst[to + head..][..body], &run[line + head..][..body]);
    } else {
        arch::stream_copy_lines(&mut dst[to + head - line..][..len], &run[head..][..len]);
    }
    run.copy_within(len..len + line, 0);
}
