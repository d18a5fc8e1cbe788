//! 16x16 tiles of 4-byte units in vector registers, on the cache lines of
//! both sides, alone or run along bands in one call.

#[cfg(target_arch = "x86_64")]
use super::x86_64;
use super::PAGE;

/// The kernels [`tile16`] can run on: four 8x8 transposes in `ymm`
/// registers, half of them kept in a 512-byte buffer on the stack, so that
/// each destination line is still written whole by two consecutive stores
/// and each source line is read while the seven read with it are still in
/// the first-level cache.
///
/// There is no AVX-512 kernel: one that held a whole tile in `zmm`
/// registers, picked first where the CPU had AVX-512F, kept AVX-512
/// machines off every path written for AVX2 since (bands of tiles,
/// quarters, padded rows read where they lie), and on the one such
/// machine measured (AMD EPYC Zen 4) the AVX2 paths ran the 4-D
/// permutation into `T(8,128)(2,1)` at 0.78-0.82 of `memcpy` against
/// 0.24-0.32, and `{0,1}` to `{1,0}` at 0.99 against 0.78; with the AVX2
/// paths, the `zmm` tile was no faster than the `ymm` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TileKernel {
    /// AVX2. The instructions are AVX ones, but cores with AVX and not
    /// AVX2 (Sandy Bridge, Bulldozer) split 256-bit work in two and were
    /// never measured, so they keep the 8x8 and 4x4 paths.
    Avx2,
}

impl TileKernel {
    /// Every kernel, best first.
    pub(crate) const ALL: [TileKernel; 1] = [TileKernel::Avx2];

    /// Whether the CPU runs this kernel (asked once, then from a cache).
    pub(crate) fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                TileKernel::Avx2 => x86_64::Avx2::detect().is_some(),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = self;
            false
        }
    }

    /// The best kernel this machine runs, if any.
    pub(crate) fn best() -> Option<TileKernel> {
        TileKernel::ALL.into_iter().find(|k| k.available())
    }
}

/// Whether [`tile16`] has a kernel on this machine: x86-64 CPUs with
/// AVX2 (asked once at run time). The kernels ask
/// [`TileKernel::best`]; the tests ask this.
#[cfg(test)]
pub(crate) fn line_tiles() -> bool {
    TileKernel::best().is_some()
}

/// `dst[to[r] + c*u..][..u] = src[from[c] + r*u..][..u]` for `r`, `c` < 16,
/// `u = 4 / size_of::<T>()`: a 16x16 transpose of 4-byte units in which
/// every run either side is 64 bytes, a whole cache line when it starts
/// one; written with streaming stores if `stream`. `false`, nothing
/// written, for other sizes, without a [`TileKernel`], when a run is
/// out of bounds, or when streaming and a destination run does not start a
/// line.
pub(crate) fn tile16<T: Copy>(
    dst: &mut [T],
    to: &[usize; 16],
    src: &[T],
    from: &[usize; 16],
    stream: bool,
) -> bool {
    match TileKernel::best() {
        Some(kernel) => tile16_on(kernel, dst, to, src, from, stream),
        None => false,
    }
}

/// The elements of `T` in one 64-byte run of a [`tile16`] tile, for the
/// sizes the kernels move (1, 2 or 4 bytes).
pub(crate) fn tile_run<T>() -> Option<usize> {
    let size = core::mem::size_of::<T>();
    matches!(size, 1 | 2 | 4).then(|| 64 / size)
}

/// [`tile16`] on the given kernel; `false`, nothing written, also where
/// the CPU does not run it.
pub(crate) fn tile16_on<T: Copy>(
    kernel: TileKernel,
    dst: &mut [T],
    to: &[usize; 16],
    src: &[T],
    from: &[usize; 16],
    stream: bool,
) -> bool {
    let Some((to, [from])) = checked_runs(dst, to, src, [from], stream) else {
        return false;
    };
    // SAFETY: `checked_runs` gives pointers into the two slices with 64
    // bytes of each run inside its slice; `dst` is a unique borrow, so no
    // destination run overlaps a source run. Streaming runs start lines.
    unsafe { tile16_runs(kernel, &from, &to, stream) }
}

/// The runs of a tile as pointers: `to` in `dst` and each array of
/// `froms` in `src`, where each run's 64 bytes (`64 / size` elements)
/// lie inside its slice, and, `on_lines`, every destination run starts a
/// line; `None` otherwise, or for elements of other sizes than 1, 2 and
/// 4 bytes.
fn checked_runs<T: Copy, const N: usize>(
    dst: &mut [T],
    to: &[usize; 16],
    src: &[T],
    froms: [&[usize; 16]; N],
    on_lines: bool,
) -> Option<([*mut u8; 16], [[*const u8; 16]; N])> {
    let run = tile_run::<T>()?;
    if !super::runs_inside(to, run, dst.len())
        || !froms
            .iter()
            .all(|from| super::runs_inside(from, run, src.len()))
    {
        return None;
    }
    let (first, data) = (dst.as_mut_ptr(), src.as_ptr());
    let to = to.map(|o| first.wrapping_add(o).cast::<u8>());
    if on_lines && to.iter().any(|p| p.addr() % 64 != 0) {
        return None;
    }
    Some((
        to,
        froms.map(|from| from.map(|o| data.wrapping_add(o).cast::<u8>())),
    ))
}

/// [`tile16_on`] with streaming stores, row `r` of the tile (unit `r` of
/// each source run) read from the run at `alt[c]` instead of `from[c]`
/// where bit `r` of `rows` is set: the lines a transposed pack's edges
/// share between tiles side by side, each line's part from the next tile
/// read where that tile's rows lie. Run `count` times, each time `to_adv`
/// elements further on in `dst` and `from_adv` in `src` (both sides of
/// the source): the edge tiles of a band repeat one pattern of rows, and
/// go in one call with the bounds checked once, each moving source run's
/// line asked for [`GROUP_AHEAD`] rounds ahead, as
/// [`tile16_group_run`]'s. `false`, nothing written, where the CPU does
/// not run the kernel, a run of any round lies outside its slice, or a
/// destination run of any round does not start a line.
pub(crate) fn tile16_blend_run<T: Copy>(
    kernel: TileKernel,
    dst: &mut [T],
    (to, to_adv): (&[usize; 16], usize),
    src: &[T],
    (from, alt, from_adv): (&[usize; 16], &[usize; 16], usize),
    rows: u16,
    count: usize,
) -> bool {
    let Some(run) = tile_run::<T>() else {
        return false;
    };
    if count == 0 {
        return true;
    }
    let size = core::mem::size_of::<T>();
    let fits = |o: usize, adv: usize, len: usize| rounds_inside(o, run, len, (adv, count));
    if to_adv.wrapping_mul(size) % 64 != 0
        || !to.iter().all(|&o| fits(o, to_adv, dst.len()))
        || !from
            .iter()
            .chain(alt)
            .all(|&o| fits(o, from_adv, src.len()))
    {
        return false;
    }
    let Some((mut to, [mut from, mut alt])) = checked_runs(dst, to, src, [from, alt], true) else {
        return false;
    };
    #[cfg(target_arch = "x86_64")]
    if let (TileKernel::Avx2, Some(avx2)) = (kernel, x86_64::Avx2::detect()) {
        let (to_step, from_step) = (to_adv.wrapping_mul(size), from_adv.wrapping_mul(size));
        let ahead = from_step.wrapping_mul(GROUP_AHEAD - 1);
        for _ in 0..count {
            // SAFETY: `avx2` proves the feature; every run of this round
            // lies inside its slice (the last round's were checked above,
            // and this one's lie between the first's and theirs, computed
            // without overflow), 64 bytes each, every destination run on
            // a line (the first round's are, and the advance is whole
            // lines); `dst` is a unique borrow, so no destination run
            // overlaps a source run.
            unsafe { x86_64::tile16_avx2_blend(avx2, &from, &alt, rows, &to) };
            to = to.map(|p| p.wrapping_add(to_step));
            from = from.map(|p| p.wrapping_add(from_step));
            alt = alt.map(|p| p.wrapping_add(from_step));
            for (&f, &a) in from.iter().zip(&alt) {
                prefetch_at(f.wrapping_add(ahead));
                if a != f {
                    prefetch_at(a.wrapping_add(ahead));
                }
            }
        }
        return true;
    }
    let _ = (kernel, from, alt, rows, to);
    false
}

/// The 16 runs of one side of a [`tile16`] tile as four quarters of four
/// evenly spaced runs: run `k` starts `bases[k / 4] + (k % 4) * step`
/// elements in. Evenly spaced runs (the rows and columns of a plain
/// transpose) have bases `4 * step` apart; rows that pass from one group
/// to the next at a multiple of four (the rows of `T(8,128)` tiles, whose
/// tiles of 16 rows start 4 rows into a tile where the destination's
/// lines ask for it) have a base of their own per quarter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quarters {
    pub(crate) bases: [usize; 4],
    pub(crate) step: usize,
}

impl Quarters {
    /// Sixteen runs evenly spaced from `start`, `step` apart.
    pub(crate) fn even(start: usize, step: usize) -> Quarters {
        Quarters {
            bases: core::array::from_fn(|q| start.wrapping_add(step.wrapping_mul(4 * q))),
            step,
        }
    }

    /// The quarters `by` elements on, if no base passes `usize::MAX`.
    pub(crate) fn shifted(self, by: usize) -> Option<Quarters> {
        let mut bases = self.bases;
        for b in &mut bases {
            *b = b.checked_add(by)?;
        }
        Some(Quarters { bases, ..self })
    }

    /// Whether each quarter's last run, in the last of `count` rounds
    /// `adv` elements apart, ends inside `len` (so every run of every round
    /// does, lying between the first round's first and that one), for runs
    /// of `run` elements.
    pub(crate) fn inside(self, run: usize, len: usize, (adv, count): (usize, usize)) -> bool {
        self.bases.iter().all(|&base| {
            self.step
                .checked_mul(3)
                .and_then(|x| x.checked_add(base))
                .is_some_and(|last| rounds_inside(last, run, len, (adv, count)))
        })
    }

    /// Where run `k` starts, wrapping (checked by [`Quarters::inside`]
    /// before any use as an address).
    pub(crate) fn start(self, k: usize) -> usize {
        quarter_run(self.bases, self.step, k, usize::wrapping_add)
    }

    /// The quarters' byte addresses from `first`, the slice's start, and
    /// the step in bytes, for elements of `size` bytes.
    pub(crate) fn bytes<P: Copy>(
        self,
        first: P,
        size: usize,
        add: impl Fn(P, usize) -> P,
    ) -> ([P; 4], usize) {
        (
            self.bases.map(|b| add(first, b.wrapping_mul(size))),
            self.step.wrapping_mul(size),
        )
    }
}

/// [`tile16_on`] with each side's runs as [`Quarters`]: four bounds checks
/// a side instead of sixteen, and with AVX2 a kernel that makes the runs'
/// addresses in registers rather than reading them from arrays, which the
/// caller would put together on the stack while the last tile's streaming
/// stores still fill the store queue (measured on `{0,1}` to `{1,0}` and
/// back: 0.58-0.64 / 0.57-0.63 of `memcpy` against 0.55-0.56 / 0.55-0.56
/// through arrays, five alternated runs on an AMD EPYC Zen 3; the way back
/// from `T(8,128)` to column-major, whose tiles start 4 rows into a tile,
/// takes it too, and read the same, 0.40-0.56 against 0.42-0.53).
pub(crate) fn tile16_quarters<T: Copy>(
    kernel: TileKernel,
    dst: &mut [T],
    to: Quarters,
    src: &[T],
    from: Quarters,
    stream: bool,
) -> bool {
    let Some(run) = tile_run::<T>() else {
        return false;
    };
    let size = core::mem::size_of::<T>();
    if !to.inside(run, dst.len(), (0, 1)) || !from.inside(run, src.len(), (0, 1)) {
        return false;
    }
    let to = to.bytes(dst.as_mut_ptr().cast::<u8>(), size, <*mut u8>::wrapping_add);
    let from = from.bytes(src.as_ptr().cast::<u8>(), size, <*const u8>::wrapping_add);
    if stream && (to.0.iter().any(|p| p.addr() % 64 != 0) || to.1 % 64 != 0) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if kernel == TileKernel::Avx2 {
        if let Some(avx2) = x86_64::Avx2::detect() {
            // SAFETY: `avx2` proves the feature. Every quarter of each side
            // was checked above to end inside its slice, so every run of
            // 64 bytes (`64 / size` elements) does, and the pointers are
            // derived from those slices; `dst` is a unique borrow, so no
            // destination run overlaps a source run. When streaming, every
            // quarter starts a line and the step is whole lines, so every
            // destination run starts a line.
            unsafe { x86_64::tile16_avx2_even(avx2, from, to, stream) };
            return true;
        }
    }
    let to = core::array::from_fn(|k| quarter_run(to.0, to.1, k, <*mut u8>::wrapping_add));
    let from = core::array::from_fn(|k| quarter_run(from.0, from.1, k, <*const u8>::wrapping_add));
    // SAFETY: as above, for the runs as pointers.
    unsafe { tile16_runs(kernel, &from, &to, stream) }
}

/// [`tile16_quarters`] for `count` tiles in a row, tile `k`'s runs
/// `k * to_adv` and `k * from_adv` elements on from the first tile's (a
/// band of a transpose whose rows and columns both advance evenly): with
/// AVX2, the bounds checked once for the band and one call that runs the
/// kernel from a loop around it, instead of a call, a check of 32 runs and
/// the runs' addresses put together on the stack for every tile (other
/// kernels go tile by tile, the runs as arrays; measured
/// on `{0,1}` to `{1,0}`: the library's time over a hand-written loop of
/// the same tiles' 1.32-1.60 tile by tile, 0.95-1.07 in bands).
/// `bands` repeats the band, each band's runs `bands.to_adv` and
/// `bands.from_adv` elements on from the band before's (the bands of 16
/// rows down a block, in one call: on the way back from `T(8,128)` to
/// column-major, whose bands are 8 tiles long, a call and checks a band
/// and the tile-by-tile loop took 18.6-23.0 ms where a hand-written loop
/// of the same tiles took 15.6-18.8; all the bands in one call take
/// 16.3-18.2 ms against its 15.7-17.0). With
/// `ahead`, each tile first asks for the source runs of the tile that many
/// on, past a band's end those of the next band's first tiles.
/// `true` with nothing to do for no tiles; otherwise `false`, nothing
/// written, wherever [`tile16_quarters`] would give `false` for some tile
/// of the band, where a tile's runs would pass `usize::MAX`, or, streaming,
/// where the destination's advances are not whole lines.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tile16_quarters_run<T: Copy>(
    kernel: TileKernel,
    dst: &mut [T],
    (to, to_adv): (Quarters, usize),
    src: &[T],
    (from, from_adv): (Quarters, usize),
    count: usize,
    bands: Bands,
    stream: bool,
    ahead: Option<usize>,
) -> bool {
    let Some(run) = tile_run::<T>() else {
        return false;
    };
    if count == 0 || bands.count == 0 {
        return true;
    }
    let size = core::mem::size_of::<T>();
    // Every run of every tile lies between the first band's first tile's
    // and the last band's last tile's, the advances being non-negative.
    let inside = |q: Quarters, band_adv: usize, len: usize, adv: usize| {
        (bands.count - 1)
            .checked_mul(band_adv)
            .and_then(|by| q.shifted(by))
            .is_some_and(|last| last.inside(run, len, (adv, count)))
    };
    if !inside(to, bands.to_adv, dst.len(), to_adv)
        || !inside(from, bands.from_adv, src.len(), from_adv)
    {
        return false;
    }
    let to_bytes = to.bytes(dst.as_mut_ptr().cast::<u8>(), size, <*mut u8>::wrapping_add);
    let from_bytes = from.bytes(src.as_ptr().cast::<u8>(), size, <*const u8>::wrapping_add);
    let (to_adv_bytes, from_adv_bytes) = (to_adv.wrapping_mul(size), from_adv.wrapping_mul(size));
    let (to_band_bytes, from_band_bytes) = (
        bands.to_adv.wrapping_mul(size),
        bands.from_adv.wrapping_mul(size),
    );
    if stream
        && (to_bytes.0.iter().any(|p| p.addr() % 64 != 0)
            || to_bytes.1 % 64 != 0
            || to_adv_bytes % 64 != 0
            || to_band_bytes % 64 != 0)
    {
        return false;
    }
    let ahead = ahead.map(|tiles| Prefetch {
        tiles,
        ends: off_lines(from_bytes),
    });
    let walk = TileWalk {
        from: from_bytes,
        to: to_bytes,
        from_adv: (from_adv_bytes, from_band_bytes),
        to_adv: (to_adv_bytes, to_band_bytes),
        count,
        bands: bands.count,
        ahead,
    };
    #[cfg(target_arch = "x86_64")]
    if kernel == TileKernel::Avx2 {
        if let Some(avx2) = x86_64::Avx2::detect() {
            // SAFETY: `avx2` proves the feature. The last band's last
            // tile's quarters were checked above to end inside their
            // slices, computed without overflow, and every run of every
            // tile of every band lies between the first tile's start and
            // that end (`k * adv + b * band` on, the advances
            // non-negative), so every run of 64 bytes is inside its slice;
            // the pointers are derived from those slices; `dst` is a unique
            // borrow, so no destination run overlaps a source run. When
            // streaming, the first tile's destination quarters start lines
            // and the step and both advances are whole lines, so every
            // destination run starts a line. Asking ahead is a hint, for
            // any address.
            unsafe {
                if walk.ahead.is_some() {
                    x86_64::tile16_avx2_even_run::<true>(avx2, &walk, stream);
                } else {
                    x86_64::tile16_avx2_even_run::<false>(avx2, &walk, stream);
                }
            }
            return true;
        }
    }
    if !kernel.available() {
        return false;
    }
    walk.each::<true>(|from, to| {
        let to: [*mut u8; 16] =
            core::array::from_fn(|r| quarter_run(to.0, to.1, r, <*mut u8>::wrapping_add));
        let from: [*const u8; 16] =
            core::array::from_fn(|c| quarter_run(from.0, from.1, c, <*const u8>::wrapping_add));
        // SAFETY: as above, for each tile's runs of each band as pointers;
        // the kernel runs here (asked above), so nothing is left half
        // written.
        let ran = unsafe { tile16_runs(kernel, &from, &to, stream) };
        debug_assert!(ran, "checked above: the kernel runs here");
    });
    true
}

/// Bands and tiles of a block of [`TileWalk`]. A transpose walked band
/// by band writes each tile's 16 runs to 16 lines a row apart, a page
/// each, and a band of 256 tiles passes 4,096 pages before the next band
/// comes back to them: more than the TLB holds. In blocks, the next band
/// comes back after 64 tiles, and a band's 16 source runs still read 64
/// lines on, a page, before they turn. `f32[4096,4096]` `{0,1}` to
/// `{1,0}`, in a program alternating the two walks (Intel Xeon, AVX2
/// tiles): 7.5-8.4 ms in blocks against 10.3-12.4 band by band; in
/// `benches/relayout_ab.py`, 0.80-1.0 of the time before both ways.
/// Blocks of 16 by 16, 32 by 32 and 64 by 16 ran within a tenth of this.
pub(crate) const BLOCK_BANDS: usize = 16;
/// Tiles of a band in a block of [`TileWalk`] (see [`BLOCK_BANDS`]).
pub(crate) const BLOCK_TILES: usize = 64;

/// Tiles of a band in a block of [`TileWalk`] whose destination runs lie
/// a page or more apart, walked tile by tile across its
/// [`BLOCK_BANDS`] bands. Streaming stores that give such runs a line
/// each and pass on to other pages before they come back ran at a third
/// of the rate of stores that give each a few lines back to back (12 GB/s
/// against 38-41 for 256 bytes or more a visit, AMD EPYC Zen 5, 64 MiB,
/// every other access the same); in blocks walked across, each run takes
/// a line from each of the block's bands in turn. The source then turns
/// after a few lines of each of 256 rows, which the prefetchers do not
/// follow, so each tile asks for a share of the next block's lines, row
/// by row. `f32[4096,4096]` `{0,1}` both ways, alternated: 4.9-5.8 ms
/// against 6.6-7.3 in blocks of [`BLOCK_TILES`] band by band; blocks of
/// 8 by 8, 8 by 16, 16 by 4, 32 by 4 and 32 by 8 ran 5.2-6.3.
pub(crate) const ACROSS_TILES: usize = 8;

/// A tile's 16 runs on one side, as pointers: the four quarters' bases
/// and the step between a quarter's runs (see [`quarter_run`]).
type QuarterRuns<P> = ([P; 4], usize);

/// The tiles of [`tile16_quarters_run`] in bytes: the first tile's
/// quarters on each side, what a tile and a band add to every run's
/// start, how many tiles a band and how many bands, and how the tiles ask
/// ahead.
pub(crate) struct TileWalk {
    pub(crate) from: QuarterRuns<*const u8>,
    pub(crate) to: QuarterRuns<*mut u8>,
    /// `(tile, band)` advances of the source and of the destination.
    pub(crate) from_adv: (usize, usize),
    pub(crate) to_adv: (usize, usize),
    pub(crate) count: usize,
    pub(crate) bands: usize,
    pub(crate) ahead: Option<Prefetch>,
}

impl TileWalk {
    /// Calls `tile` with each tile's quarters on both sides: where the
    /// walk asks nothing ahead and the destination's runs are a page
    /// apart, in blocks of [`BLOCK_BANDS`] bands by [`ACROSS_TILES`]
    /// tiles walked across the bands; otherwise band by band or, where
    /// bands are longer than [`BLOCK_TILES`], in blocks of [`BLOCK_BANDS`]
    /// bands, each tile's source asked for ahead first if `ASK` and the
    /// walk asks ahead (`ASK` a constant, so that where the caller knows
    /// the walk does not, the loop carries no test).
    // Always inlined: in the AVX2 kernel's function, the loop around the
    // asm must stay a loop of that function, with no call a tile.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn each<const ASK: bool>(
        &self,
        mut tile: impl FnMut(QuarterRuns<*const u8>, QuarterRuns<*mut u8>),
    ) {
        let ahead = self.ahead.filter(|_| ASK);
        let across = ahead.is_none() && self.bands > 1 && self.to.1 >= PAGE;
        // Bands longer than a block go in blocks of bands by tiles; shorter
        // ones, and those whose tiles ask ahead along them, band by band
        // (unless across).
        if !across && (ahead.is_some() || self.count <= BLOCK_TILES) {
            self.block(0..self.bands, 0..self.count, ahead, &mut tile);
            return;
        }
        let block_tiles = if across { ACROSS_TILES } else { BLOCK_TILES };
        let blocks = || {
            (0..self.bands).step_by(BLOCK_BANDS).flat_map(move |b0| {
                (0..self.count).step_by(block_tiles).map(move |k0| {
                    (
                        b0..self.bands.min(b0 + BLOCK_BANDS),
                        k0..self.count.min(k0 + block_tiles),
                    )
                })
            })
        };
        if !across {
            for (bands, tiles) in blocks() {
                self.block(bands, tiles, None, &mut tile);
            }
            return;
        }
        let ends = off_lines(self.from);
        let mut next = blocks().skip(1);
        for (bands, tiles) in blocks() {
            self.block_across(bands, tiles, next.next(), ends, &mut tile);
        }
    }

    /// One block of [`each`](Self::each), tile by tile across its bands,
    /// so that each destination row gets a line from each band back to
    /// back; the source lines of the `next` block asked for as the tiles
    /// go, row by row of it, an even share a tile.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn block_across(
        &self,
        bands: core::ops::Range<usize>,
        tiles: core::ops::Range<usize>,
        next: Option<(core::ops::Range<usize>, core::ops::Range<usize>)>,
        ends: bool,
        tile: &mut impl FnMut(QuarterRuns<*const u8>, QuarterRuns<*mut u8>),
    ) {
        // The next block's source lines: 16 rows a band, a line a tile
        // along each row; `row` and `col` walk them.
        let (nb0, nrows, nk0, ncols) = next.map_or((0, 0, 0, 0), |(b, k)| {
            (b.start, 16 * b.len(), k.start, k.len())
        });
        let per = (nrows * ncols).div_ceil(bands.len() * tiles.len());
        let (mut row, mut col) = (0, 0);
        for k in tiles {
            for b in bands.clone() {
                for _ in 0..per {
                    if row >= nrows {
                        break;
                    }
                    let (from, _) = self.tile_at(nb0 + row / 16, nk0 + col);
                    ask_run(from, row % 16, ends, prefetch_near_at);
                    col += 1;
                    if col == ncols {
                        (row, col) = (row + 1, 0);
                    }
                }
                let (from, to) = self.tile_at(b, k);
                tile(from, to);
            }
        }
    }

    /// The quarters of tile `k` of band `b` on both sides.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn tile_at(&self, b: usize, k: usize) -> (QuarterRuns<*const u8>, QuarterRuns<*mut u8>) {
        let on =
            |(tile, band): (usize, usize)| k.wrapping_mul(tile).wrapping_add(b.wrapping_mul(band));
        let (from, to) = (self.from, self.to);
        (
            (from.0.map(|p| p.wrapping_add(on(self.from_adv))), from.1),
            (to.0.map(|p| p.wrapping_add(on(self.to_adv))), to.1),
        )
    }

    /// [`each`](Self::each) over tiles `tiles` of bands `bands`, band by
    /// band.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn block(
        &self,
        bands: core::ops::Range<usize>,
        tiles: core::ops::Range<usize>,
        ahead: Option<Prefetch>,
        tile: &mut impl FnMut(QuarterRuns<*const u8>, QuarterRuns<*mut u8>),
    ) {
        for b in bands {
            for k in tiles.clone() {
                if let Some(ahead) = ahead {
                    let next = b + 1 < self.bands;
                    ahead.ask(self.tile_at(b, 0).0, self.from_adv, k, (self.count, next));
                }
                let (from, to) = self.tile_at(b, k);
                tile(from, to);
            }
        }
    }
}

/// How many bands of tiles [`tile16_quarters_run`] runs, and what each
/// band adds to every run's start on each side, in elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bands {
    pub(crate) count: usize,
    pub(crate) to_adv: usize,
    pub(crate) from_adv: usize,
}

impl Bands {
    /// One band.
    pub(crate) const ONE: Bands = Bands {
        count: 1,
        to_adv: 0,
        from_adv: 0,
    };
}

/// How the tiles of [`tile16_quarters_run`] ask for their source ahead.
#[derive(Clone, Copy)]
pub(crate) struct Prefetch {
    /// How many tiles on.
    pub(crate) tiles: usize,
    /// Whether runs may end in a line after the one they start in.
    pub(crate) ends: bool,
}

impl Prefetch {
    /// Asks for the source runs of the tile `self.tiles` after tile `k` of
    /// a band of `count` whose first tile's runs are `from`, each tile
    /// `adv` bytes on; past the band's end, when there is a `next` band
    /// (`band_adv` bytes on), that band's first tiles.
    #[inline]
    pub(crate) fn ask(
        self,
        from: QuarterRuns<*const u8>,
        (adv, band_adv): (usize, usize),
        k: usize,
        (count, next): (usize, bool),
    ) {
        let t = k + self.tiles;
        let shift = if t < count {
            t.wrapping_mul(adv)
        } else if next {
            band_adv.wrapping_add((t - count).wrapping_mul(adv))
        } else {
            return;
        };
        let runs = (from.0.map(|p| p.wrapping_add(shift)), from.1);
        for c in 0..16 {
            ask_run(runs, c, self.ends, prefetch_at);
        }
    }
}

/// Asks (`ask`) for the line run `c` of `runs` starts in and, where runs
/// start off a line (`ends`), the next, which it ends in.
// Always inlined, as the walks that call it: no call inside a tile loop.
#[allow(clippy::inline_always)]
#[inline(always)]
fn ask_run(runs: QuarterRuns<*const u8>, c: usize, ends: bool, ask: fn(*const u8)) {
    let run = quarter_run(runs.0, runs.1, c, <*const u8>::wrapping_add);
    ask(run);
    if ends {
        ask(run.wrapping_add(63));
    }
}

/// Whether some of the 16 runs of a tile's quarters start off a line,
/// and so end in the next one.
fn off_lines((bases, step): QuarterRuns<*const u8>) -> bool {
    bases.iter().any(|p| p.addr() % 64 != 0) || step % 64 != 0
}

/// Asks for the cache line at `p`, into the L2 cache: a hint, for any
/// pointer value.
#[inline]
pub(crate) fn prefetch_at(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    x86_64::prefetch(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_at`] into the L1 cache, for a line needed soon after.
#[inline]
pub(crate) fn prefetch_near_at(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    x86_64::prefetch_near(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// One tile of a [`tile16_group_run`] group: where its 16 destination runs
/// start, and where its 16 source runs start, `None` for a run of the
/// group's fill value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupTile {
    pub(crate) to: [usize; 16],
    pub(crate) from: [Option<usize>; 16],
}

/// Most tiles a [`tile16_group_run`] group holds: its runs live on the
/// stack, and a padded row's end takes 6 in the 4-D permutation "there"
/// (`stream_padded_rows` goes tile by tile past 8).
pub(crate) const GROUP_TILES: usize = 8;

/// Rounds of a [`tile16_group_run`] between asking for a source run's
/// line and reading it. With up to 32 source runs a round (the 4-D
/// permutation "there") the bench read 0.63-0.73 of `memcpy` asking two
/// rounds ahead against 0.49-0.72 without, eight alternated runs (AMD
/// EPYC Zen 4); one round ahead measured between the two. On the
/// transposed pack of `s8[27049,2481]` into `(8,128)(4,1)` tiles, 16
/// source rows along which each round moves a line, two rounds left the
/// requests waiting (13.2-13.3 ms), four took 11.8-12.1, six 12.1, eight
/// 12.5 (Intel Xeon, alternated).
const GROUP_AHEAD: usize = 4;

/// [`tile16`] for a group of tiles (the lines of a row's end in a padded
/// transpose: the last line of data, lines of data and padding, lines of
/// padding alone, the line that runs into the next row), run `count`
/// times, the whole group at a time, each time `to_adv` and `from_adv`
/// elements further on (a source run of `fill` stays where it is): the
/// group's lines of a round written back to back, in one call with the
/// bounds checked once, each moving source run's line asked for
/// [`GROUP_AHEAD`] rounds ahead. `false`, nothing written,
/// where the kernel does not run, where any run of any round would lie
/// outside its slice, or, streaming, where a destination run or the
/// destination's advance is off the lines.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tile16_group_run<T: Copy>(
    kernel: TileKernel,
    dst: &mut [T],
    (tiles, to_adv): (&[GroupTile], usize),
    src: &[T],
    from_adv: usize,
    count: usize,
    fill: T,
    stream: bool,
) -> bool {
    let Some(run) = tile_run::<T>() else {
        return false;
    };
    if !kernel.available() || tiles.len() > GROUP_TILES {
        return false;
    }
    if count == 0 {
        return true;
    }
    let size = core::mem::size_of::<T>();
    let fits = |o: usize, adv: usize, len: usize| rounds_inside(o, run, len, (adv, count));
    let (first, data) = (dst.as_mut_ptr(), src.as_ptr());
    let on_line = |o: usize| first.wrapping_add(o).addr() % 64 == 0;
    for tile in tiles {
        if !tile.to.iter().all(|&o| fits(o, to_adv, dst.len()))
            || !tile
                .from
                .iter()
                .flatten()
                .all(|&o| fits(o, from_adv, src.len()))
            || (stream
                && !(tile.to.iter().all(|&o| on_line(o)) && to_adv.wrapping_mul(size) % 64 == 0))
        {
            return false;
        }
    }
    // 64 elements of at least a byte each: every fill run's 64 bytes.
    let line = [fill; 64];
    let fill_at = line.as_ptr().cast::<u8>();
    // Each tile's runs as pointers, moved on by the advances after each
    // round (a fill run by none): no run rebuilt per tile.
    let (to_step, from_step) = (to_adv.wrapping_mul(size), from_adv.wrapping_mul(size));
    let mut runs = [(
        [core::ptr::null_mut(); 16],
        [core::ptr::null(); 16],
        [0; 16],
    ); GROUP_TILES];
    for (runs, tile) in runs.iter_mut().zip(tiles) {
        *runs = (
            tile.to.map(|o| first.wrapping_add(o).cast::<u8>()),
            tile.from
                .map(|o| o.map_or(fill_at, |o| data.wrapping_add(o).cast::<u8>())),
            tile.from.map(|o| if o.is_some() { from_step } else { 0 }),
        );
    }
    let runs = &mut runs[..tiles.len()];
    for _ in 0..count {
        for (to, from, steps) in runs.iter_mut() {
            // SAFETY: every destination run of this round was checked
            // above to lie inside `dst` (the first and the last round's
            // do, and this one's starts between theirs, computed without
            // overflow), every source run inside `src` likewise or in
            // `line`, 64 bytes; the pointers are derived from those;
            // `dst` is a unique borrow, so no destination run overlaps a
            // source run or `line`. Streaming runs start lines: each first
            // run does and the advance is whole lines.
            let ran = unsafe { tile16_runs(kernel, from, to, stream) };
            debug_assert!(ran, "checked above: the kernel runs here");
            for p in to.iter_mut() {
                *p = p.wrapping_add(to_step);
            }
            for (p, &step) in from.iter_mut().zip(steps.iter()) {
                *p = p.wrapping_add(step);
                // This run's line `GROUP_AHEAD` rounds ahead, for a run
                // that moves (see there).
                if step != 0 {
                    prefetch_at(p.wrapping_add(step.wrapping_mul(GROUP_AHEAD - 1)));
                }
            }
        }
    }
    true
}

/// Whether the run of `run` elements at `start`, moved on `adv` elements a
/// round for `count` rounds (at least one), ends inside `len` in the last
/// round: then it does in every round, the advance being non-negative.
pub(crate) fn rounds_inside(
    start: usize,
    run: usize,
    len: usize,
    (adv, count): (usize, usize),
) -> bool {
    count
        .checked_sub(1)
        .and_then(|n| n.checked_mul(adv))
        .and_then(|more| more.checked_add(start))
        .and_then(|last| last.checked_add(run))
        .is_some_and(|end| end <= len)
}

/// Run `k` of quarters at `bases`, runs `step` apart within a quarter:
/// the one formula for where a run starts, in elements ([`Quarters::start`])
/// or in bytes (the runs [`tile16_quarters`] hands on as pointers).
pub(crate) fn quarter_run<P: Copy>(
    bases: [P; 4],
    step: usize,
    k: usize,
    add: impl Fn(P, usize) -> P,
) -> P {
    add(bases[k / 4 % 4], (k % 4).wrapping_mul(step))
}

/// Runs the tile kernel `kernel` on runs already checked; `false` where
/// the CPU does not run it.
///
/// # Safety
///
/// Each `from[c]` is valid for reading 64 bytes and each `to[r]` for
/// writing 64 bytes, none of which any `from` run overlaps; when `stream`,
/// every `to[r]` starts a 64-byte line.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
unsafe fn tile16_runs(
    kernel: TileKernel,
    from: &[*const u8; 16],
    to: &[*mut u8; 16],
    stream: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    match kernel {
        TileKernel::Avx2 => {
            if let Some(avx2) = x86_64::Avx2::detect() {
                // SAFETY: `avx2` proves the feature; the runs are the
                // caller's, as this function's contract states them.
                unsafe { x86_64::tile16_avx2(avx2, from, to, stream) };
                return true;
            }
        }
    }
    false
}

/// Asks for the cache line holding `src[at]` ahead of its use; a hint,
/// so `at` may be anything, past the end included.
pub(crate) fn prefetch<T>(src: &[T], at: usize) {
    prefetch_at(src.as_ptr().wrapping_add(at).cast());
}
