//! Machine kernels the compiler does not write from safe code: 4x4
//! transposes of 32-bit elements in vector registers, and copies with
//! non-temporal (streaming) stores, which write whole cache lines to memory
//! without reading them first, and prefetches of the columns a transpose
//! reads next. This is the workspace's only `unsafe` code.
//!
//! Everything here is SSE or SSE2, which every x86-64 CPU has, except the
//! 8x8 transpose, which needs AVX, and the 16x16 line tiles, which need
//! AVX2; those run only where the CPU reports the feature
//! (asked once at run time); other targets get the portable loops. The kernels
//! are inline assembly rather than intrinsics on purpose: they move the
//! bytes of any `Copy` type, whose padding may be uninitialised, and
//! assembly reads memory as bytes where an intrinsic would read typed
//! vector values. Every public function checks its bounds in safe code
//! before any `unsafe` block runs.

/// Whether [`transpose32`] has a vector kernel on this target.
pub(crate) const VECTOR_TRANSPOSE: bool = cfg!(target_arch = "x86_64");

/// `dst[d + i*da + j] = src[s + i + j*sb]` for `i < na`, `j < nb`, rounded
/// down to multiples of 4, for 4-byte `T`; returns the rounded `(na, nb)`
/// it did, `(0, 0)` if `T` is not 4 bytes, the target has no kernel or a
/// bound fails (the caller's portable loop then does it all).
pub(crate) fn transpose32<T: Copy>(
    dst: &mut [T],
    d: usize,
    da: usize,
    src: &[T],
    s: usize,
    sb: usize,
    (na, nb): (usize, usize),
) -> (usize, usize) {
    if core::mem::size_of::<T>() != 4 {
        return (0, 0);
    }
    transpose_units(dst, d, da, src, s, sb, (na, nb))
}

/// [`transpose32`] for 4-byte units of 1, 2 or 4 elements: unit `(i, j)`
/// is the `4 / size_of::<T>()` elements from `dst[d + i*da + j*u]` and from
/// `src[s + i*u + j*sb]`, `u` elements a unit. `(0, 0)` for other sizes.
pub(crate) fn transpose_units<T: Copy>(
    dst: &mut [T],
    d: usize,
    da: usize,
    src: &[T],
    s: usize,
    sb: usize,
    (na, nb): (usize, usize),
) -> (usize, usize) {
    let size = core::mem::size_of::<T>();
    let (na, nb) = (na / 4 * 4, nb / 4 * 4);
    if !matches!(size, 1 | 2 | 4) || !VECTOR_TRANSPOSE || na == 0 || nb == 0 {
        return (0, 0);
    }
    let u = 4 / size;
    // The last element either side touches.
    let last_dst = (na - 1)
        .checked_mul(da)
        .and_then(|x| x.checked_add(d.checked_add(nb * u - 1)?));
    let last_src = (nb - 1)
        .checked_mul(sb)
        .and_then(|x| x.checked_add(s.checked_add(na * u - 1)?));
    match (last_dst, last_src) {
        (Some(ld), Some(ls)) if ld < dst.len() && ls < src.len() => {}
        _ => return (0, 0),
    }
    #[cfg(target_arch = "x86_64")]
    {
        // Bands of rows and columns small enough that both sides stay in the
        // first-level cache and TLB while a band is done.
        const BAND: usize = 64;
        // The source runs of the next block down (`na` units further along
        // each column), all lines of a column requested together: each
        // column is a separate stream, too many for the hardware
        // prefetchers, and whole runs keep the memory's open rows useful.
        let run = na * u * core::mem::size_of::<T>();
        let ss = sb * core::mem::size_of::<T>();
        let next = src.as_ptr().wrapping_add(s + na * u).cast::<u8>();
        for j in 0..nb {
            let column = next.wrapping_add(j * ss);
            for k in (0..run).step_by(64) {
                prefetch_at(column.wrapping_add(k));
            }
        }
        let avx = x86::Avx::detect();
        // The part the 8x8 kernel covers; the 4x4 one does the rest.
        let wide = (na / 8 * 8, nb / 8 * 8);
        for i_band in (0..na).step_by(BAND) {
            for j_band in (0..nb).step_by(BAND) {
                let (i_end, j_end) = (na.min(i_band + BAND), nb.min(j_band + BAND));
                let mut i0 = i_band;
                while i0 < i_end {
                    // Eight rows at once where the CPU has the 8x8 kernel:
                    // each source run read is then 32 bytes, half a line.
                    let tall = avx.is_some() && i0 + 8 <= wide.0;
                    let mut j0 = j_band;
                    while j0 < j_end {
                        // In bounds: every tile lies inside (na, nb), whose
                        // last units were checked above.
                        let (to, at) = (d + i0 * da + j0 * u, s + i0 * u + j0 * sb);
                        match avx {
                            Some(avx) if tall && j0 + 8 <= wide.1 => {
                                x86::tile8(avx, dst, to, da, src, at, sb);
                                j0 += 8;
                                continue;
                            }
                            _ => x86::tile4(dst, to, da, src, at, sb),
                        }
                        if tall {
                            x86::tile4(dst, to + 4 * da, da, src, at + 4 * u, sb);
                        }
                        j0 += 4;
                    }
                    i0 += if tall { 8 } else { 4 };
                }
            }
        }
    }
    (na, nb)
}

/// Whether the group kernels take groups of `k` `T`s on this target: four
/// rows of bytes, two of 2-byte elements.
pub(crate) fn group_kernel<T>(k: usize) -> bool {
    VECTOR_TRANSPOSE && matches!((k, core::mem::size_of::<T>()), (4, 1) | (2, 2))
}

/// The bounds the group kernels rely on, checked once for each call:
/// `n` rounded down to 16 columns when `k` elements make four bytes (four
/// rows of bytes, two of 2-byte elements), the kernels run on this target,
/// the rows are at least 16 apart (so the 16-element runs the kernels move
/// never overlap), the packed side holds `k * n` and the side of `k` rows
/// `pitch` apart holds `(k - 1) * pitch + n`; 0 otherwise.
fn group_columns<T>(k: usize, n: usize, pitch: usize, packed_len: usize, rows_len: usize) -> usize {
    if !group_kernel::<T>(k) {
        return 0;
    }
    let n = n / 16 * 16;
    let fits = pitch >= 16
        && packed_len / k >= n
        && pitch
            .checked_mul(k - 1)
            .and_then(|p| p.checked_add(n))
            .is_some_and(|end| end <= rows_len);
    if fits {
        n
    } else {
        0
    }
}

/// `out[x*4 + j] = src[j*pitch + x]` for `j < 4` and `x < n` rounded down
/// to 16, for 1-byte `T`: four rows of bytes into groups of four (`s8`
/// `(4,1)` tiles). Returns how many columns it did: 0 for other sizes, other
/// targets or a bound that fails.
pub(crate) fn interleave4_bytes<T: Copy>(
    out: &mut [T],
    src: &[T],
    pitch: usize,
    n: usize,
) -> usize {
    let n = group_columns::<T>(4, n, pitch, out.len(), src.len());
    if n == 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    for x in (0..n).step_by(16) {
        x86::interleave4(&mut out[4 * x..][..64], src, x, pitch);
    }
    n
}

/// `dst[j*pitch + x] = input[x*k + j]` for `j < k` and `x < n` rounded
/// down to 16: `k`-element groups into `k` rows, four rows of bytes (the
/// inverse of [`interleave4_bytes`], the way back from `s8 (4,1)` tiles)
/// or two of 2-byte elements (`bf16 (2,1)`, in one pass over the pairs,
/// where the loops the compiler vectorizes read them once a row). Returns
/// how many columns it did: 0 for other `k`, sizes or targets, or a bound
/// that fails.
pub(crate) fn deinterleave_groups<T: Copy>(
    k: usize,
    dst: &mut [T],
    pitch: usize,
    input: &[T],
    n: usize,
) -> usize {
    let n = group_columns::<T>(k, n, pitch, input.len(), dst.len());
    if n == 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    if k == 4 {
        for x in (0..n).step_by(16) {
            x86::deinterleave4(dst, x, pitch, &input[4 * x..][..64]);
        }
    } else {
        for x in (0..n).step_by(16) {
            x86::deinterleave2(dst, x, pitch, &input[2 * x..][..32]);
        }
    }
    n
}

/// One line of `k` rows, `dst[j*pitch + i] = input[i*k + j]` for `i`
/// under a line's worth of `T`s (`k` rows as [`group_kernel`] takes them):
/// the groups go apart into `buf`, and each row's line then streams whole,
/// one row after the other. Returns `false`, nothing written, where
/// [`group_kernel`] has no kernel, `dst` does not start on a line, the
/// rows are not whole lines apart, or a bound fails.
///
/// A line at a time because the kernels write 16 bytes of each row in
/// turn: four rows of bytes (`(4,1)` tiles) streamed so kept four lines
/// open for a line's worth of columns, and a program unpacking
/// `s8[8192,8192]{1,0:T(8,128)(4,1)}` took twice as long as with each
/// row's line written in one go (11.2-11.5 ms against 5.3-5.4, AMD EPYC
/// Zen 4).
pub(crate) fn deinterleave_line_streamed<T: Copy>(
    k: usize,
    dst: &mut [T],
    pitch: usize,
    input: &[T],
    buf: &mut [T],
) -> bool {
    let size = core::mem::size_of::<T>();
    if !group_kernel::<T>(k) {
        return false;
    }
    let line = 64 / size;
    let fits = dst.as_ptr().addr() % 64 == 0
        && pitch.saturating_mul(size) % 64 == 0
        && pitch >= line
        && input.len() >= k * line
        && buf.len() >= k * line
        && pitch
            .checked_mul(k - 1)
            .and_then(|p| p.checked_add(line))
            .is_some_and(|end| end <= dst.len());
    if !fits {
        return false;
    }
    // The kernel steps here, not through `deinterleave_groups`: a call of
    // it a line read the `bf16` and `s8` unpacks at 0.74 and 0.56 of
    // `memcpy` against 1.06 and 0.98 (five alternated runs, AMD EPYC Zen 4).
    #[cfg(target_arch = "x86_64")]
    {
        for x in (0..line).step_by(16) {
            if k == 4 {
                x86::deinterleave4(buf, x, line, &input[4 * x..][..64]);
            } else {
                x86::deinterleave2(buf, x, line, &input[2 * x..][..32]);
            }
        }
        for j in 0..k {
            x86::stream_copy(&mut dst[j * pitch..][..line], &buf[j * line..][..line], 64);
        }
    }
    true
}

/// Rows the streamed interleaves move together for elements of `size`
/// bytes: four rows of bytes (`(4,1)` tiles), two of 2-byte elements
/// (`(2,1)`); 0 for other sizes or targets. Either way 16 columns make one
/// 64-byte line of groups.
fn stream_rows(size: usize) -> usize {
    match size {
        _ if !VECTOR_TRANSPOSE => 0,
        1 => 4,
        2 => 2,
        _ => 0,
    }
}

/// `out[x*k + j] = src[j*pitch + x]` for `j < k` and `x < n` rounded down
/// to 16, `k` rows as [`stream_rows`] gives them, with `out` written by
/// streaming stores, 64 bytes per 16 columns. Returns how many columns it
/// did: 0 (nothing written) for other sizes or targets, an `out` that does
/// not start on a 16-byte boundary, or a bound that fails.
///
/// `out` need not start on a line: a walk hands out consecutive runs of
/// the destination one after the other, so a line split between two calls
/// is completed in the write-combining buffer all the same (measured on
/// `s8 (4,1)` and `bf16 (2,1)` packs into a `Vec`, whose data starts 16
/// bytes into a line: 0.8-1.1 of `memcpy`, against 0.6-0.8 through a stage
/// that streams whole lines only).
pub(crate) fn interleave_stream<T: Copy>(
    out: &mut [T],
    src: &[T],
    pitch: usize,
    n: usize,
) -> usize {
    let k = stream_rows(core::mem::size_of::<T>());
    let n = n / 16 * 16;
    if k == 0 || n == 0 {
        return 0;
    }
    let fits = (k - 1)
        .checked_mul(pitch)
        .and_then(|p| p.checked_add(n))
        .is_some_and(|end| end <= src.len());
    if out.len() < k * n || !fits || out.as_ptr().addr() % 16 != 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let out = &mut out[..k * n];
        let rows: [&[T]; 4] =
            core::array::from_fn(|j| if j < k { &src[j * pitch..][..n] } else { &[] });
        if k == 4 {
            for (x, line) in (0..n).step_by(16).zip(out.chunks_exact_mut(64)) {
                x86::interleave4_nt(
                    line,
                    [&rows[0][x..], &rows[1][x..], &rows[2][x..], &rows[3][x..]],
                );
            }
        } else {
            for (x, line) in (0..n).step_by(16).zip(out.chunks_exact_mut(32)) {
                x86::interleave2_nt(line, [&rows[0][x..], &rows[1][x..]]);
            }
        }
    }
    n
}

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
/// paths, the `zmm` tile was no faster than the `ymm` one
/// (benches/README, "AVX2 on AVX-512 machines").
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
                TileKernel::Avx2 => x86::Avx2::detect().is_some(),
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
fn tile_run<T>() -> Option<usize> {
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
    let Some(run) = tile_run::<T>() else {
        return false;
    };
    let inside = |offs: &[usize; 16], len: usize| {
        offs.iter()
            .all(|&o| o.checked_add(run).is_some_and(|end| end <= len))
    };
    if !inside(to, dst.len()) || !inside(from, src.len()) {
        return false;
    }
    let (first, data) = (dst.as_mut_ptr(), src.as_ptr());
    let to = to.map(|o| first.wrapping_add(o).cast::<u8>());
    if stream && to.iter().any(|p| p.addr() % 64 != 0) {
        return false;
    }
    let from = from.map(|o| data.wrapping_add(o).cast::<u8>());
    // SAFETY: every run was checked above to lie inside its slice (`o + 64
    // / size` elements of `size` bytes: 64 bytes), and the pointers are
    // derived from those slices; `dst` is a unique borrow, so no
    // destination run overlaps a source run. Streaming runs were checked
    // to start lines.
    unsafe { tile16_runs(kernel, &from, &to, stream) }
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
    fn shifted(self, by: usize) -> Option<Quarters> {
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
    fn inside(self, run: usize, len: usize, (adv, count): (usize, usize)) -> bool {
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
    fn bytes<P: Copy>(self, first: P, size: usize, add: impl Fn(P, usize) -> P) -> ([P; 4], usize) {
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
        if let Some(avx2) = x86::Avx2::detect() {
            // SAFETY: `avx2` proves the feature. Every quarter of each side
            // was checked above to end inside its slice, so every run of
            // 64 bytes (`64 / size` elements) does, and the pointers are
            // derived from those slices; `dst` is a unique borrow, so no
            // destination run overlaps a source run. When streaming, every
            // quarter starts a line and the step is whole lines, so every
            // destination run starts a line.
            unsafe { x86::tile16_avx2_even(avx2, from, to, stream) };
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
/// the same tiles' 1.32-1.60 tile by tile, 0.95-1.07 in bands; see
/// `benches/README.md`).
/// `bands` repeats the band, each band's runs `bands.to_adv` and
/// `bands.from_adv` elements on from the band before's (the bands of 16
/// rows down a block, in one call: on the way back from `T(8,128)` to
/// column-major, whose bands are 8 tiles long, a call and checks a band
/// and the tile-by-tile loop took 18.6-23.0 ms where a hand-written loop
/// of the same tiles took 15.6-18.8; all the bands in one call take
/// 16.3-18.2 ms against its 15.7-17.0; see `benches/README.md`). With
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
        // A run that does not start a line ends in the next one.
        ends: from_bytes.0.iter().any(|p| p.addr() % 64 != 0) || from_bytes.1 % 64 != 0,
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
        if let Some(avx2) = x86::Avx2::detect() {
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
                    x86::tile16_avx2_even_run::<true>(avx2, &walk, stream);
                } else {
                    x86::tile16_avx2_even_run::<false>(avx2, &walk, stream);
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

/// The tiles of [`tile16_quarters_run`] in bytes: the first tile's
/// quarters on each side, what a tile and a band add to every run's
/// start, how many tiles a band and how many bands, and how the tiles ask
/// ahead.
struct TileWalk {
    from: ([*const u8; 4], usize),
    to: ([*mut u8; 4], usize),
    /// `(tile, band)` advances of the source and of the destination.
    from_adv: (usize, usize),
    to_adv: (usize, usize),
    count: usize,
    bands: usize,
    ahead: Option<Prefetch>,
}

impl TileWalk {
    /// Calls `tile` with each tile's quarters on both sides, band by band,
    /// each tile's source asked for ahead first if `ASK` and the walk asks
    /// ahead (`ASK` a constant, so that where the caller knows the walk
    /// does not, the loop carries no test).
    // Always inlined: in the AVX2 kernel's function, the loop around the
    // asm must stay a loop of that function, with no call a tile.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn each<const ASK: bool>(
        &self,
        mut tile: impl FnMut(([*const u8; 4], usize), ([*mut u8; 4], usize)),
    ) {
        let ahead = self.ahead.filter(|_| ASK);
        let ((from, step_from), (to, step_to)) = (self.from, self.to);
        for b in 0..self.bands {
            let from_b = from.map(|p| p.wrapping_add(b * self.from_adv.1));
            let to_b = to.map(|p| p.wrapping_add(b * self.to_adv.1));
            for k in 0..self.count {
                if let Some(ahead) = ahead {
                    let next = b + 1 < self.bands;
                    ahead.ask((from_b, step_from), self.from_adv, k, (self.count, next));
                }
                tile(
                    (
                        from_b.map(|p| p.wrapping_add(k * self.from_adv.0)),
                        step_from,
                    ),
                    (to_b.map(|p| p.wrapping_add(k * self.to_adv.0)), step_to),
                );
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
struct Prefetch {
    /// How many tiles on.
    tiles: usize,
    /// Whether runs may end in a line after the one they start in.
    ends: bool,
}

impl Prefetch {
    /// Asks for the source runs of the tile `self.tiles` after tile `k` of
    /// a band of `count` whose first tile's runs are `from`, each tile
    /// `adv` bytes on; past the band's end, when there is a `next` band
    /// (`band_adv` bytes on), that band's first tiles.
    #[inline]
    fn ask(
        self,
        from: ([*const u8; 4], usize),
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
        let bases = from.0.map(|p| p.wrapping_add(shift));
        for c in 0..16 {
            let run = quarter_run(bases, from.1, c, <*const u8>::wrapping_add);
            prefetch_at(run);
            if self.ends {
                prefetch_at(run.wrapping_add(63));
            }
        }
    }
}

/// Asks for the cache line at `p`: a hint, for any pointer value.
#[inline]
fn prefetch_at(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    x86::prefetch(p);
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

/// [`tile16`] for a group of tiles (the lines of a row's end in a padded
/// transpose: the last line of data, lines of data and padding, lines of
/// padding alone, the line that runs into the next row), run `count`
/// times, the whole group at a time, each time `to_adv` and `from_adv`
/// elements further on (a source run of `fill` stays where it is): the
/// group's lines of a round written back to back, in one call with the
/// bounds checked once, each moving source run's line asked for two
/// rounds ahead. `false`, nothing written,
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
                // This run's line two rounds ahead, for a run that moves:
                // with up to 32 source runs a round (the 4-D permutation
                // "there") the bench read 0.63-0.73 of `memcpy` with it
                // against 0.49-0.72 without, eight alternated runs; one
                // round ahead measured between the two (see
                // `benches/README.md`).
                if step != 0 {
                    prefetch_at(p.wrapping_add(step));
                }
            }
        }
    }
    true
}

/// Whether the run of `run` elements at `start`, moved on `adv` elements a
/// round for `count` rounds (at least one), ends inside `len` in the last
/// round: then it does in every round, the advance being non-negative.
fn rounds_inside(start: usize, run: usize, len: usize, (adv, count): (usize, usize)) -> bool {
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
fn quarter_run<P: Copy>(bases: [P; 4], step: usize, k: usize, add: impl Fn(P, usize) -> P) -> P {
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
            if let Some(avx2) = x86::Avx2::detect() {
                // SAFETY: `avx2` proves the feature; the runs are the
                // caller's, as this function's contract states them.
                unsafe { x86::tile16_avx2(avx2, from, to, stream) };
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

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::asm;

    /// Asks for the cache line at `p` ahead of its use.
    #[inline]
    pub(super) fn prefetch(p: *const u8) {
        // SAFETY: `prefetcht0` is a hint: it reads nothing the program can
        // observe, writes nothing and never faults, whatever `p` is (an
        // address outside the process is simply ignored), so any pointer
        // value will do, including one past the end of a slice.
        unsafe {
            asm!("prefetcht0 [{p}]", p = in(reg) p, options(nostack, preserves_flags, readonly));
        }
    }

    /// A zero-sized proof that the CPU runs a feature's instructions (and
    /// the OS saves the registers they use), made only by its `detect`,
    /// which asks the CPU once (CPUID and XGETBV) and then answers from a
    /// cache: each kernel that needs the feature takes one.
    // `$feature` is a `tt`: `cpufeatures::new!` matches feature names
    // token by token, which a `literal` fragment no longer is.
    macro_rules! feature_proof {
        ($ty:ident, $cpu:ident, $feature:tt, $name:literal, $bits:literal) => {
            cpufeatures::new!($cpu, $feature);

            #[doc = concat!(
                "Proof that the CPU runs ", $name, " instructions (and the OS saves the ",
                $bits, "-bit registers): only [`", stringify!($ty), "::detect`] makes one."
            )]
            #[derive(Clone, Copy, Debug)]
            pub(super) struct $ty(());

            impl $ty {
                /// Asks the CPU once, then answers from a cache.
                #[inline]
                pub(super) fn detect() -> Option<$ty> {
                    $cpu::get().then_some($ty(()))
                }
            }
        };
    }

    feature_proof!(Avx, cpu_avx, "avx", "AVX", "256");

    /// [`tile4`] for an 8x8 tile, in 256-bit registers: each of the eight
    /// source runs read and destination runs written is 32 bytes. Needs
    /// AVX only (the shuffles of 32-bit lanes are AVX; AVX2 adds nothing
    /// here).
    #[inline]
    pub(super) fn tile8<T: Copy>(
        _: Avx,
        dst: &mut [T],
        d: usize,
        dd: usize,
        src: &[T],
        s: usize,
        ss: usize,
    ) {
        let size = core::mem::size_of::<T>();
        let row = 32 / size;
        let (dst_row, src_row) = (&mut dst[d + 7 * dd..][..row], &src[s + 7 * ss..][..row]);
        let (d7, s7) = (dst_row.as_mut_ptr(), src_row.as_ptr());
        let (d0, s0) = (dst[d..][..row].as_mut_ptr(), src[s..][..row].as_ptr());
        let (dd, ss) = (dd * size, ss * size);
        // Rows 3 and 6, addressed from their own registers (the scaled
        // index of an address reaches 1, 2, 4 or 8 strides only).
        let (d3, s3) = (d0.wrapping_byte_add(3 * dd), s0.wrapping_byte_add(3 * ss));
        let (d6, s6) = (d0.wrapping_byte_add(6 * dd), s0.wrapping_byte_add(6 * ss));
        debug_assert!(d6.wrapping_byte_add(dd) == d7 && s6.wrapping_byte_add(ss) == s7);
        // SAFETY: the `Avx` token proves the CPU and OS run the AVX
        // instructions below. Rows 0 and 7 of both tiles were
        // bounds-checked by the slicing above, and rows 1 to 6 lie between
        // them (`d0 + k*dd` bytes, `0 < k < 7`), inside the same slices;
        // each row is 32 bytes. `dst` is a unique borrow, so no write
        // aliases `src`. The assembly moves bytes between memory and
        // vector registers, all of them declared clobbered whole (the System
        // V set does so on every x86-64 target; Windows' C set would leave
        // xmm6-15 out); it touches no stack and no flags, and clears the
        // upper halves (`vzeroupper`) so later SSE code pays no transition.
        unsafe {
            asm!(
                "vmovups ymm0, [{s0}]",
                "vmovups ymm1, [{s0} + {ss}]",
                "vmovups ymm2, [{s0} + {ss}*2]",
                "vmovups ymm3, [{s3}]",
                "vmovups ymm4, [{s0} + {ss}*4]",
                "vmovups ymm5, [{s3} + {ss}*2]",
                "vmovups ymm6, [{s6}]",
                "vmovups ymm7, [{s6} + {ss}]",
                "vunpcklps ymm8, ymm0, ymm1",
                "vunpckhps ymm9, ymm0, ymm1",
                "vunpcklps ymm10, ymm2, ymm3",
                "vunpckhps ymm11, ymm2, ymm3",
                "vunpcklps ymm12, ymm4, ymm5",
                "vunpckhps ymm13, ymm4, ymm5",
                "vunpcklps ymm14, ymm6, ymm7",
                "vunpckhps ymm15, ymm6, ymm7",
                // Units (c, r) and (c, r+4) of four columns, c < 4 in
                // 0..=3, c >= 4 in 4..=7.
                "vshufps ymm0, ymm8, ymm10, 0x44",
                "vshufps ymm1, ymm8, ymm10, 0xee",
                "vshufps ymm2, ymm9, ymm11, 0x44",
                "vshufps ymm3, ymm9, ymm11, 0xee",
                "vshufps ymm4, ymm12, ymm14, 0x44",
                "vshufps ymm5, ymm12, ymm14, 0xee",
                "vshufps ymm6, ymm13, ymm15, 0x44",
                "vshufps ymm7, ymm13, ymm15, 0xee",
                "vperm2f128 ymm8, ymm0, ymm4, 0x20",
                "vperm2f128 ymm9, ymm1, ymm5, 0x20",
                "vperm2f128 ymm10, ymm2, ymm6, 0x20",
                "vperm2f128 ymm11, ymm3, ymm7, 0x20",
                "vperm2f128 ymm12, ymm0, ymm4, 0x31",
                "vperm2f128 ymm13, ymm1, ymm5, 0x31",
                "vperm2f128 ymm14, ymm2, ymm6, 0x31",
                "vperm2f128 ymm15, ymm3, ymm7, 0x31",
                "vmovups [{d0}], ymm8",
                "vmovups [{d0} + {dd}], ymm9",
                "vmovups [{d0} + {dd}*2], ymm10",
                "vmovups [{d3}], ymm11",
                "vmovups [{d0} + {dd}*4], ymm12",
                "vmovups [{d3} + {dd}*2], ymm13",
                "vmovups [{d6}], ymm14",
                "vmovups [{d6} + {dd}], ymm15",
                "vzeroupper",
                s0 = in(reg) s0,
                s3 = in(reg) s3,
                s6 = in(reg) s6,
                ss = in(reg) ss,
                d0 = in(reg) d0,
                d3 = in(reg) d3,
                d6 = in(reg) d6,
                dd = in(reg) dd,
                clobber_abi("sysv64"),
                options(nostack, preserves_flags),
            );
        }
    }

    /// One 4x4 tile of 4-byte units: unit `(r, c)` of the destination,
    /// `dst[d + r*dd..]` plus `c` units, is unit `(c, r)` of the source,
    /// `src[s + c*ss..]` plus `r` units; strides in elements of `T`, whose
    /// size divides 4. The caller has checked the last unit both sides; the
    /// slicing below repeats it, cheaply.
    #[inline]
    pub(super) fn tile4<T: Copy>(
        dst: &mut [T],
        d: usize,
        dd: usize,
        src: &[T],
        s: usize,
        ss: usize,
    ) {
        let size = core::mem::size_of::<T>();
        let row = 16 / size;
        let (dst_row, src_row) = (&mut dst[d + 3 * dd..][..row], &src[s + 3 * ss..][..row]);
        let (d3, s3) = (dst_row.as_mut_ptr(), src_row.as_ptr());
        let (d0, s0) = (dst[d..][..row].as_mut_ptr(), src[s..][..row].as_ptr());
        let (dd, ss) = (dd * size, ss * size);
        // SAFETY: rows 0 and 3 of both tiles were bounds-checked by the
        // slicing above, and rows 1 and 2 lie between them (`d0 + k*dd`
        // bytes, `0 < k < 3`), inside the same slices; each row is 16 bytes. `dst` is a unique borrow, so no write aliases
        // `src`. The assembly only moves bytes between memory and xmm
        // registers it declares clobbered; it touches no stack and no flags.
        unsafe {
            asm!(
                "movups xmm0, [{s0}]",
                "movups xmm1, [{s0} + {ss}]",
                "movups xmm2, [{s0} + {ss}*2]",
                "movups xmm3, [{s3}]",
                "movaps xmm4, xmm0",
                "unpcklps xmm0, xmm1",
                "unpckhps xmm4, xmm1",
                "movaps xmm5, xmm2",
                "unpcklps xmm2, xmm3",
                "unpckhps xmm5, xmm3",
                "movaps xmm1, xmm0",
                "movlhps xmm0, xmm2",
                "movhlps xmm2, xmm1",
                "movaps xmm3, xmm4",
                "movlhps xmm4, xmm5",
                "movhlps xmm5, xmm3",
                "movups [{d0}], xmm0",
                "movups [{d0} + {dd}], xmm2",
                "movups [{d0} + {dd}*2], xmm4",
                "movups [{d3}], xmm5",
                s0 = in(reg) s0,
                s3 = in(reg) s3,
                ss = in(reg) ss,
                d0 = in(reg) d0,
                d3 = in(reg) d3,
                dd = in(reg) dd,
                out("xmm0") _, out("xmm1") _, out("xmm2") _,
                out("xmm3") _, out("xmm4") _, out("xmm5") _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// The 16-byte rows at the four pointers of `$rows` into 16 groups of
    /// four bytes, 64 bytes stored at `$to` with `$store` (`movdqu`, or
    /// `movntdq` for streaming stores to a 16-byte aligned `$to`): the one
    /// shuffle of [`interleave4`] and [`interleave4_nt`]. Expands to an
    /// `asm!`, so it goes inside the caller's `unsafe` block, whose safety
    /// argument covers the reads, the writes and the alignment. The
    /// assembly uses no stack and leaves the flags alone.
    macro_rules! interleave4_asm {
        ($store:literal, $rows:expr, $to:expr) => {
            asm!(
                "movdqu xmm0, [{r0}]",
                "movdqu xmm1, [{r1}]",
                "movdqu xmm2, [{r2}]",
                "movdqu xmm3, [{r3}]",
                "movdqa xmm4, xmm0",
                "punpcklbw xmm0, xmm1",
                "punpckhbw xmm4, xmm1",
                "movdqa xmm5, xmm2",
                "punpcklbw xmm2, xmm3",
                "punpckhbw xmm5, xmm3",
                "movdqa xmm1, xmm0",
                "punpcklwd xmm0, xmm2",
                "punpckhwd xmm1, xmm2",
                "movdqa xmm3, xmm4",
                "punpcklwd xmm4, xmm5",
                "punpckhwd xmm3, xmm5",
                concat!($store, " [{to}], xmm0"),
                concat!($store, " [{to} + 16], xmm1"),
                concat!($store, " [{to} + 32], xmm4"),
                concat!($store, " [{to} + 48], xmm3"),
                r0 = in(reg) $rows[0],
                r1 = in(reg) $rows[1],
                r2 = in(reg) $rows[2],
                r3 = in(reg) $rows[3],
                to = in(reg) $to,
                out("xmm0") _, out("xmm1") _, out("xmm2") _,
                out("xmm3") _, out("xmm4") _, out("xmm5") _,
                options(nostack, preserves_flags),
            )
        };
    }

    /// 16 columns of four 1-byte rows (`src[j*pitch + x..][..16]`) into 16
    /// groups of four, `out[..64]`.
    #[inline]
    pub(super) fn interleave4<T: Copy>(out: &mut [T], src: &[T], x: usize, pitch: usize) {
        let out = &mut out[..64];
        let rows = [
            src[x..][..16].as_ptr(),
            src[x + pitch..][..16].as_ptr(),
            src[x + 2 * pitch..][..16].as_ptr(),
            src[x + 3 * pitch..][..16].as_ptr(),
        ];
        // SAFETY: each row pointer starts a bounds-checked slice of 16
        // elements of a 1-byte `T` (the caller checked the size), and `out` is
        // a bounds-checked unique slice of 64; the assembly reads 16 bytes
        // from each row and writes 64 bytes to `out`, which cannot overlap
        // the shared `src`. It uses no stack and leaves the flags alone.
        unsafe { interleave4_asm!("movdqu", rows, out.as_mut_ptr()) }
    }

    /// 16 groups of four 1-byte elements, `input[..64]`, into 16 columns of
    /// four rows, `dst[j*pitch + x..][..16]`.
    #[inline]
    pub(super) fn deinterleave4<T: Copy>(dst: &mut [T], x: usize, pitch: usize, input: &[T]) {
        let input = &input[..64];
        // Rows 0 and 3 in bounds, so rows 1 and 2 between them are too.
        let _ = (&dst[x..][..16], &dst[x + 3 * pitch..][..16]);
        let first = dst[x..].as_mut_ptr();
        // SAFETY: as in `interleave4`, the other way round: the four rows,
        // `pitch >= 16` apart (checked by `group_columns`, and a line apart
        // in `deinterleave_line_streamed`), are disjoint 16-byte
        // runs inside the unique `dst` (rows 0 and 3 checked above), all
        // addressed from one pointer; 64 bytes of `input` are read.
        unsafe {
            let rows = [
                first,
                first.add(pitch),
                first.add(2 * pitch),
                first.add(3 * pitch),
            ];
            asm!(
                "movdqu xmm0, [{i}]",
                "movdqu xmm1, [{i} + 16]",
                "movdqu xmm2, [{i} + 32]",
                "movdqu xmm3, [{i} + 48]",
                "movdqa xmm4, xmm0",
                "punpcklbw xmm0, xmm1",
                "punpckhbw xmm4, xmm1",
                "movdqa xmm5, xmm2",
                "punpcklbw xmm2, xmm3",
                "punpckhbw xmm5, xmm3",
                "movdqa xmm1, xmm0",
                "punpcklbw xmm0, xmm4",
                "punpckhbw xmm1, xmm4",
                "movdqa xmm3, xmm2",
                "punpcklbw xmm2, xmm5",
                "punpckhbw xmm3, xmm5",
                "movdqa xmm4, xmm0",
                "punpcklbw xmm0, xmm1",
                "punpckhbw xmm4, xmm1",
                "movdqa xmm5, xmm2",
                "punpcklbw xmm2, xmm3",
                "punpckhbw xmm5, xmm3",
                "movdqa xmm1, xmm0",
                "punpcklqdq xmm0, xmm2",
                "punpckhqdq xmm1, xmm2",
                "movdqa xmm3, xmm4",
                "punpcklqdq xmm4, xmm5",
                "punpckhqdq xmm3, xmm5",
                "movdqu [{a}], xmm0",
                "movdqu [{b}], xmm1",
                "movdqu [{c}], xmm4",
                "movdqu [{d}], xmm3",
                i = in(reg) input.as_ptr(),
                a = in(reg) rows[0],
                b = in(reg) rows[1],
                c = in(reg) rows[2],
                d = in(reg) rows[3],
                out("xmm0") _, out("xmm1") _, out("xmm2") _,
                out("xmm3") _, out("xmm4") _, out("xmm5") _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// 16 pairs of 2-byte elements, `input[..32]`, into 16 columns of two
    /// rows, `dst[x..][..16]` and `dst[x + pitch..][..16]`: each half of a
    /// pair sign-extended to 32 bits (by shifts) and packed back, which
    /// saturates nothing, so every bit pattern comes through.
    #[inline]
    pub(super) fn deinterleave2<T: Copy>(dst: &mut [T], x: usize, pitch: usize, input: &[T]) {
        assert_eq!(core::mem::size_of::<T>(), 2);
        let input = &input[..32];
        // Both rows in bounds.
        let _ = (&dst[x..][..16], &dst[x + pitch..][..16]);
        let first = dst[x..].as_mut_ptr();
        // SAFETY: `T` is two bytes (asserted). The two rows, `pitch >= 16`
        // apart (checked by `group_columns`, and a line apart in
        // `deinterleave_line_streamed`), are disjoint 32-byte runs
        // inside the unique `dst` (both checked above), addressed from one
        // pointer; 64 bytes of the shared `input`, which cannot overlap
        // `dst`, are read. The assembly uses no stack and leaves the flags
        // alone.
        unsafe {
            asm!(
                "movdqu xmm0, [{i}]",
                "movdqu xmm1, [{i} + 16]",
                "movdqu xmm4, [{i} + 32]",
                "movdqu xmm5, [{i} + 48]",
                "movdqa xmm2, xmm0",
                "movdqa xmm3, xmm1",
                "movdqa xmm6, xmm4",
                "movdqa xmm7, xmm5",
                "pslld xmm0, 16",
                "pslld xmm1, 16",
                "pslld xmm4, 16",
                "pslld xmm5, 16",
                "psrad xmm0, 16",
                "psrad xmm1, 16",
                "psrad xmm4, 16",
                "psrad xmm5, 16",
                "psrad xmm2, 16",
                "psrad xmm3, 16",
                "psrad xmm6, 16",
                "psrad xmm7, 16",
                "packssdw xmm0, xmm1",
                "packssdw xmm4, xmm5",
                "packssdw xmm2, xmm3",
                "packssdw xmm6, xmm7",
                "movdqu [{a}], xmm0",
                "movdqu [{a} + 16], xmm4",
                "movdqu [{b}], xmm2",
                "movdqu [{b} + 16], xmm6",
                i = in(reg) input.as_ptr(),
                a = in(reg) first,
                b = in(reg) first.add(pitch),
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// Four rows of 16 bytes (the first 16 of each slice of 1-byte
    /// elements) into 16 groups of four, one line `line[..64]` written with
    /// streaming stores.
    #[inline]
    pub(super) fn interleave4_nt<T: Copy>(line: &mut [T], rows: [&[T]; 4]) {
        assert_eq!(core::mem::size_of::<T>(), 1);
        let line = &mut line[..64];
        let rows = rows.map(|r| r[..16].as_ptr());
        let to = line.as_mut_ptr();
        assert_eq!(to.addr() % 16, 0);
        // SAFETY: `T` is one byte (asserted), so each row pointer starts 16
        // readable bytes (the slicing above checked them) and `to` starts 64
        // writable, 16-byte aligned bytes (`movntdq` needs the alignment,
        // asserted) of a unique borrow, which no shared `rows` overlaps. The
        // assembly reads and writes only those bytes, as bytes; it uses no
        // stack and leaves the flags alone.
        unsafe { interleave4_asm!("movntdq", rows, to) }
    }

    /// Two rows of 16 2-byte elements (the first 16 of each slice) into 16
    /// pairs, one line `line[..32]` written with streaming stores.
    #[inline]
    pub(super) fn interleave2_nt<T: Copy>(line: &mut [T], rows: [&[T]; 2]) {
        assert_eq!(core::mem::size_of::<T>(), 2);
        let line = &mut line[..32];
        let [a, b] = rows.map(|r| r[..16].as_ptr());
        let o = line.as_mut_ptr();
        assert_eq!(o.addr() % 16, 0);
        // SAFETY: as in `interleave4_nt`: `T` is two bytes (asserted), so
        // each row pointer starts 32 readable bytes and `o` 64 writable,
        // 16-byte aligned bytes of a unique borrow, all checked above.
        unsafe {
            asm!(
                "movdqu xmm0, [{a}]",
                "movdqu xmm1, [{b}]",
                "movdqu xmm2, [{a} + 16]",
                "movdqu xmm3, [{b} + 16]",
                "movdqa xmm4, xmm0",
                "punpcklwd xmm0, xmm1",
                "punpckhwd xmm4, xmm1",
                "movdqa xmm5, xmm2",
                "punpcklwd xmm2, xmm3",
                "punpckhwd xmm5, xmm3",
                "movntdq [{o}], xmm0",
                "movntdq [{o} + 16], xmm4",
                "movntdq [{o} + 32], xmm2",
                "movntdq [{o} + 48], xmm5",
                a = in(reg) a,
                b = in(reg) b,
                o = in(reg) o,
                out("xmm0") _, out("xmm1") _, out("xmm2") _,
                out("xmm3") _, out("xmm4") _, out("xmm5") _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// Copies `src` into `dst` (equal lengths), with streaming stores from
    /// the first `granule`-aligned byte of `dst` to the last whole
    /// `granule` (16 or 64 bytes), plain ones outside.
    pub(super) fn stream_copy<T: Copy>(dst: &mut [T], src: &[T], granule: usize) {
        let n = dst.len().min(src.len());
        let (dst, src) = (&mut dst[..n], &src[..n]);
        let granule = if granule == 16 { 16 } else { 64 };
        let bytes = core::mem::size_of_val(src);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = d.align_offset(granule).min(bytes);
        let body = (bytes - head) / granule * granule;
        let lines = body / 64 * 64;
        let rest = body - lines;
        let tail = bytes - head - body;
        // SAFETY: `d` and `s` are valid for `bytes` bytes (two slices of `n`
        // elements of `T`), and a unique borrow cannot overlap a shared one.
        // `head + lines + rest + tail == bytes`, so every access is inside
        // them. `copy_nonoverlapping` and the assembly copy bytes without
        // reading them as typed values, so padding bytes of `T` may be
        // anything; the stores from `d + head` on are at least 16-byte
        // aligned, as `movntdq` needs (`rest` is a multiple of 16).
        // A call to `memcpy` for an empty head or tail costs as much as a
        // line's worth of copying, hence the tests.
        unsafe {
            if head > 0 {
                core::ptr::copy_nonoverlapping(s, d, head);
            }
            if lines > 0 {
                asm!(
                    "2:",
                    "movdqu xmm0, [{s}]",
                    "movdqu xmm1, [{s} + 16]",
                    "movdqu xmm2, [{s} + 32]",
                    "movdqu xmm3, [{s} + 48]",
                    "movntdq [{d}], xmm0",
                    "movntdq [{d} + 16], xmm1",
                    "movntdq [{d} + 32], xmm2",
                    "movntdq [{d} + 48], xmm3",
                    "add {s}, 64",
                    "add {d}, 64",
                    "sub {k}, 64",
                    "jnz 2b",
                    s = inout(reg) s.add(head) => _,
                    d = inout(reg) d.add(head) => _,
                    k = inout(reg) lines => _,
                    out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                    options(nostack),
                );
            }
            if rest > 0 {
                asm!(
                    "2:",
                    "movdqu xmm0, [{s}]",
                    "movntdq [{d}], xmm0",
                    "add {s}, 16",
                    "add {d}, 16",
                    "sub {k}, 16",
                    "jnz 2b",
                    s = inout(reg) s.add(head + lines) => _,
                    d = inout(reg) d.add(head + lines) => _,
                    k = inout(reg) rest => _,
                    out("xmm0") _,
                    options(nostack),
                );
            }
            if tail > 0 {
                core::ptr::copy_nonoverlapping(s.add(head + body), d.add(head + body), tail);
            }
        }
    }

    /// Run `$m` of eight whose addresses an array at `$array` holds, from
    /// its pointer `8*$k`, into `$reg`: one step of [`load8`] or
    /// [`rows8_out`].
    #[rustfmt::skip]
    macro_rules! from_array {
        ($m:literal, $reg:literal, $array:literal, $k:literal) => {
            concat!("mov ", $reg, ", [", $array, " + 64*", $k, " + 8*", $m, "]\n")
        };
    }

    /// Run `$m` of eight in quarters ([`Quarters`](super::Quarters)) into
    /// `$reg`: runs 0-3 from `$a`, runs 4-7 from `$b`, each address made
    /// from the last by `lea` (which leaves the flags alone) `$stride`
    /// bytes on.
    #[rustfmt::skip]
    macro_rules! from_quarters {
        (0, $reg:literal, $stride:literal, $a:literal, $b:literal) => {
            concat!("mov ", $reg, ", ", $a, "\n")
        };
        (4, $reg:literal, $stride:literal, $a:literal, $b:literal) => {
            concat!("mov ", $reg, ", ", $b, "\n")
        };
        ($m:literal, $reg:literal, $stride:literal, $a:literal, $b:literal) => {
            concat!("lea ", $reg, ", [", $reg, " + ", $stride, "]\n")
        };
    }

    /// Half `$r` (32 bytes) of each of eight source runs into
    /// `ymm0`-`ymm7`, the address of run `m` made in `rax` by `$step!(m,
    /// "rax", $arg...)` ([`from_array`] or [`from_quarters`]). A string
    /// for the `asm!` of [`tile16_avx2`], which declares the registers.
    #[rustfmt::skip]
    macro_rules! load8 {
        ($r:literal, $step:ident $(, $arg:literal)*) => {
            concat!(
                $step!(0, "rax" $(, $arg)*), "vmovups ymm0, [rax + 32*", $r, "]\n",
                $step!(1, "rax" $(, $arg)*), "vmovups ymm1, [rax + 32*", $r, "]\n",
                $step!(2, "rax" $(, $arg)*), "vmovups ymm2, [rax + 32*", $r, "]\n",
                $step!(3, "rax" $(, $arg)*), "vmovups ymm3, [rax + 32*", $r, "]\n",
                $step!(4, "rax" $(, $arg)*), "vmovups ymm4, [rax + 32*", $r, "]\n",
                $step!(5, "rax" $(, $arg)*), "vmovups ymm5, [rax + 32*", $r, "]\n",
                $step!(6, "rax" $(, $arg)*), "vmovups ymm6, [rax + 32*", $r, "]\n",
                $step!(7, "rax" $(, $arg)*), "vmovups ymm7, [rax + 32*", $r, "]\n",
            )
        };
    }

    /// The 8x8 transpose of [`tile8`] on `ymm0`-`ymm7`, whose row `m` of
    /// the result ends in `ymm8 + m`; `ymm0`-`ymm7` are scratch.
    #[rustfmt::skip]
    macro_rules! transpose8 {
        () => {
            concat!(
                "vunpcklps ymm8, ymm0, ymm1\n",
                "vunpckhps ymm9, ymm0, ymm1\n",
                "vunpcklps ymm10, ymm2, ymm3\n",
                "vunpckhps ymm11, ymm2, ymm3\n",
                "vunpcklps ymm12, ymm4, ymm5\n",
                "vunpckhps ymm13, ymm4, ymm5\n",
                "vunpcklps ymm14, ymm6, ymm7\n",
                "vunpckhps ymm15, ymm6, ymm7\n",
                "vshufps ymm0, ymm8, ymm10, 0x44\n",
                "vshufps ymm1, ymm8, ymm10, 0xee\n",
                "vshufps ymm2, ymm9, ymm11, 0x44\n",
                "vshufps ymm3, ymm9, ymm11, 0xee\n",
                "vshufps ymm4, ymm12, ymm14, 0x44\n",
                "vshufps ymm5, ymm12, ymm14, 0xee\n",
                "vshufps ymm6, ymm13, ymm15, 0x44\n",
                "vshufps ymm7, ymm13, ymm15, 0xee\n",
                "vperm2f128 ymm8, ymm0, ymm4, 0x20\n",
                "vperm2f128 ymm9, ymm1, ymm5, 0x20\n",
                "vperm2f128 ymm10, ymm2, ymm6, 0x20\n",
                "vperm2f128 ymm11, ymm3, ymm7, 0x20\n",
                "vperm2f128 ymm12, ymm0, ymm4, 0x31\n",
                "vperm2f128 ymm13, ymm1, ymm5, 0x31\n",
                "vperm2f128 ymm14, ymm2, ymm6, 0x31\n",
                "vperm2f128 ymm15, ymm3, ymm7, 0x31\n",
            )
        };
    }

    /// `ymm8`-`ymm15` into the buffer at `rdx`, 32 bytes apart from `256 *
    /// $r`: the first halves of destination rows `8*$r..`.
    #[rustfmt::skip]
    macro_rules! spill8 {
        ($r:literal) => {
            concat!(
                "vmovaps [rdx + 256*", $r, " + 0], ymm8\n",
                "vmovaps [rdx + 256*", $r, " + 32], ymm9\n",
                "vmovaps [rdx + 256*", $r, " + 64], ymm10\n",
                "vmovaps [rdx + 256*", $r, " + 96], ymm11\n",
                "vmovaps [rdx + 256*", $r, " + 128], ymm12\n",
                "vmovaps [rdx + 256*", $r, " + 160], ymm13\n",
                "vmovaps [rdx + 256*", $r, " + 192], ymm14\n",
                "vmovaps [rdx + 256*", $r, " + 224], ymm15\n",
            )
        };
    }

    /// One destination line at `$at`: its first half, at `$half` in the
    /// buffer ([`spill8`]) from `256 * $r`, through `ymm0`, its second from
    /// `$second`, stored with `$store`, two 32-byte stores back to back.
    #[rustfmt::skip]
    macro_rules! line_out {
        ($store:literal, $at:literal, $r:literal, $half:literal, $second:literal) => {
            concat!(
                "vmovaps ymm0, [rdx + 256*", $r, " + ", $half, "]\n",
                $store, " [", $at, "], ymm0\n",
                $store, " [", $at, " + 32], ", $second, "\n",
            )
        };
    }

    /// Destination rows `8*$r..`, the address of row `m` made in `$at` by
    /// `$step!(m, $at, $arg...)` ([`from_array`] or [`from_quarters`]):
    /// each row's first half from the buffer, its second from `ymm8 + m`.
    #[rustfmt::skip]
    macro_rules! rows8_out {
        ($store:literal, $r:literal, $at:literal, $step:ident $(, $arg:literal)*) => {
            concat!(
                $step!(0, $at $(, $arg)*), line_out!($store, $at, $r, "0", "ymm8"),
                $step!(1, $at $(, $arg)*), line_out!($store, $at, $r, "32", "ymm9"),
                $step!(2, $at $(, $arg)*), line_out!($store, $at, $r, "64", "ymm10"),
                $step!(3, $at $(, $arg)*), line_out!($store, $at, $r, "96", "ymm11"),
                $step!(4, $at $(, $arg)*), line_out!($store, $at, $r, "128", "ymm12"),
                $step!(5, $at $(, $arg)*), line_out!($store, $at, $r, "160", "ymm13"),
                $step!(6, $at $(, $arg)*), line_out!($store, $at, $r, "192", "ymm14"),
                $step!(7, $at $(, $arg)*), line_out!($store, $at, $r, "224", "ymm15"),
            )
        };
    }

    /// [`tile16_avx2`] with its 32-byte stores made by `$store` (`vmovups`,
    /// or `vmovntps` for streaming stores to 32-byte aligned runs): an
    /// `asm!` for the caller's `unsafe` block, whose safety argument covers
    /// the pointers read from the arrays at `$from` and `$to`, the memory
    /// behind them, the alignment, and `$buf`, 512 bytes writable and
    /// 32-byte aligned. The arrays come in `rdi` and `rsi`, the buffer in
    /// `rdx`, and each pointer in turn goes to `rax`, registers apart from
    /// the inputs and among those `clobber_abi` declares clobbered.
    macro_rules! tile16_avx2_asm {
        ($store:literal, $from:expr, $to:expr, $buf:expr) => {
            asm!(
                load8!(0, from_array, "rdi", 0), transpose8!(), spill8!(0),
                load8!(1, from_array, "rdi", 0), transpose8!(), spill8!(1),
                load8!(0, from_array, "rdi", 1), transpose8!(),
                rows8_out!($store, 0, "rax", from_array, "rsi", 0),
                load8!(1, from_array, "rdi", 1), transpose8!(),
                rows8_out!($store, 1, "rax", from_array, "rsi", 1),
                "vzeroupper",
                in("rdi") $from,
                in("rsi") $to,
                in("rdx") $buf,
                clobber_abi("sysv64"),
                options(nostack, preserves_flags),
            )
        };
    }

    /// [`tile16_avx2_asm`] for runs in quarters ([`Quarters`](super::Quarters)): the source's
    /// four bases in `rdi`, `r10`, `r12` and `r13` and its step in `r8`,
    /// the destination's in `rsi`, `r11`, `r14`, `r15` and `r9`, the buffer
    /// in `rdx`; `rax` walks the source runs and `rcx` the destination's.
    macro_rules! tile16_quarters_asm {
        ($store:literal, $from:expr, $to:expr, $buf:expr) => {
            asm!(
                load8!(0, from_quarters, "r8", "rdi", "r10"),
                transpose8!(),
                spill8!(0),
                load8!(1, from_quarters, "r8", "rdi", "r10"),
                transpose8!(),
                spill8!(1),
                load8!(0, from_quarters, "r8", "r12", "r13"),
                transpose8!(),
                rows8_out!($store, 0, "rcx", from_quarters, "r9", "rsi", "r11"),
                load8!(1, from_quarters, "r8", "r12", "r13"),
                transpose8!(),
                rows8_out!($store, 1, "rcx", from_quarters, "r9", "r14", "r15"),
                "vzeroupper",
                in("rdi") $from.0[0],
                in("r10") $from.0[1],
                in("r12") $from.0[2],
                in("r13") $from.0[3],
                in("r8") $from.1,
                in("rsi") $to.0[0],
                in("r11") $to.0[1],
                in("r14") $to.0[2],
                in("r15") $to.0[3],
                in("r9") $to.1,
                in("rdx") $buf,
                clobber_abi("sysv64"),
                options(nostack, preserves_flags),
            )
        };
    }

    /// [`tile16_avx2`] for runs in quarters: `from = (bases, step)` puts
    /// source run `c` at `bases[c / 4] + (c % 4) * step` (step in bytes),
    /// and `to` the destination runs the same way. Addresses are made in a
    /// register from the last rather than read from arrays of pointers,
    /// which the caller then need not put together and check run by run.
    ///
    /// # Safety
    ///
    /// As for [`tile16_avx2`], for the runs these pairs give.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile16_avx2_even(
        _: Avx2,
        from: ([*const u8; 4], usize),
        to: ([*mut u8; 4], usize),
        stream: bool,
    ) {
        let mut buf = TileBuffer(core::mem::MaybeUninit::uninit());
        let buf = buf.0.as_mut_ptr().cast::<u8>();
        // SAFETY: as in `tile16_avx2`: the caller's contract covers every
        // run the pairs give and the feature; the buffer is the same
        // local, aligned 512 bytes, written before it is read. The assembly
        // reads 64 bytes at each source run and writes 64 at each
        // destination run, as bytes, declares every register it changes
        // clobbered, and touches no stack of its own and no flags.
        unsafe {
            if stream {
                tile16_quarters_asm!("vmovntps", from, to, buf);
            } else {
                tile16_quarters_asm!("vmovups", from, to, buf);
            }
        }
    }

    /// [`tile16_avx2_even`] for `bands` bands of `count` tiles, tile `k`
    /// of band `b` with its bases `k * adv + b * band` bytes on from the
    /// first's on each side, from one loop: the asm is the same block,
    /// inlined here. With `ASK`, each tile first asks for the source of a
    /// tile further on ([`Prefetch::ask`](super::Prefetch::ask)); a
    /// constant, so that the loop without has nothing more to carry (a
    /// test a tile read the `{0,1}` to `{1,0}` way back 1-3% slower).
    ///
    /// # Safety
    ///
    /// As for [`tile16_avx2_even`], for the runs of every tile of every
    /// band.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile16_avx2_even_run<const ASK: bool>(
        _: Avx2,
        walk: &super::TileWalk,
        stream: bool,
    ) {
        let mut buf = TileBuffer(core::mem::MaybeUninit::uninit());
        let buf = buf.0.as_mut_ptr().cast::<u8>();
        walk.each::<ASK>(|from, to| {
            // SAFETY: as in `tile16_avx2_even`, for each tile's runs of
            // each band, which the caller's contract covers: the pointers
            // were made from the first tile's by the advances it states.
            unsafe {
                if stream {
                    tile16_quarters_asm!("vmovntps", from, to, buf);
                } else {
                    tile16_quarters_asm!("vmovups", from, to, buf);
                }
            }
        });
    }

    feature_proof!(Avx2, cpu_avx2, "avx2", "AVX2", "256");

    /// The 512 bytes in which [`tile16_avx2`], [`tile16_avx2_even`] and
    /// [`tile16_avx2_even_run`] keep the first halves of a tile's 16
    /// destination rows, aligned for the 32-byte moves.
    #[repr(C, align(64))]
    struct TileBuffer(core::mem::MaybeUninit<[u8; 512]>);

    /// [`tile16`] in 256-bit registers, which hold a quarter of a tile:
    /// four 8x8 transposes, source runs 0-7 first (their first halves, then
    /// their second), whose quarters (the first halves of all 16
    /// destination rows) go to a buffer on the stack, then runs 8-15, whose
    /// quarters stay in registers while each destination line is written by
    /// two consecutive stores, its first half from the buffer and its
    /// second from a register. Storing each quarter straight to the
    /// destination (rows 0-7, then 8-15) leaves 8 lines half written at a
    /// time and reads every source line in two visits with 15 other lines
    /// of the same cache set between them when the runs are a power of two
    /// apart: it measured 0.36 of `memcpy` on the column-major way back
    /// from `T(8,128)` against 0.59 through a buffer, and 0.57 against 0.72
    /// the other way. Buffering all four quarters (1 KiB) made 64 stores a
    /// tile, as many as a Zen 3 core's store queue holds, behind streaming
    /// stores that drain at the memory's pace; with half of them buffered,
    /// 48, `{0,1}` to `{1,0}` and back went from 0.50-0.56 / 0.42-0.53 of
    /// `memcpy` to 0.55-0.56 / 0.55-0.56 (five alternated runs, AMD EPYC
    /// Zen 3), and to 0.58-0.64 / 0.57-0.63 with [`tile16_avx2_even`]'s
    /// addresses.
    ///
    /// # Safety
    ///
    /// The CPU runs AVX2; each `from[c]` is valid for reading 64 bytes and
    /// each `to[r]` for writing 64 bytes, none of which any `from` run
    /// overlaps; when `stream`, every `to[r]` is 32-byte aligned.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile16_avx2(
        _: Avx2,
        from: &[*const u8; 16],
        to: &[*mut u8; 16],
        stream: bool,
    ) {
        let mut buf = TileBuffer(core::mem::MaybeUninit::uninit());
        let buf = buf.0.as_mut_ptr().cast::<u8>();
        // SAFETY: the caller's contract covers every pointer read from the
        // two arrays (both live for the call) and the feature; `buf` is a
        // local 512 bytes, 64-byte aligned (`TileBuffer`), so the aligned moves
        // (`vmovaps`) at its 32-byte offsets are in bounds and never fault,
        // and every byte of it is written before it is read. The assembly
        // reads 64 bytes at each `from` pointer and writes 64 at each `to`
        // pointer as bytes, declares every vector register clobbered, and
        // touches no stack of its own and no flags.
        unsafe {
            if stream {
                tile16_avx2_asm!("vmovntps", from.as_ptr(), to.as_ptr(), buf);
            } else {
                tile16_avx2_asm!("vmovups", from.as_ptr(), to.as_ptr(), buf);
            }
        }
    }

    /// Orders the streaming stores before anything written after.
    pub(super) fn fence() {
        // SAFETY: `sfence` only orders stores; it reads and writes nothing.
        unsafe { asm!("sfence", options(nostack, preserves_flags)) }
    }
}

/// Asks for every cache line of `src[from..to]` (clamped to `src`) ahead
/// of its use; nothing on other targets.
pub(crate) fn prefetch_span<T>(src: &[T], from: usize, to: usize) {
    let to = to.min(src.len());
    if from >= to {
        return;
    }
    let span = &src[from..to];
    let first = span.as_ptr().cast::<u8>();
    let bytes = core::mem::size_of_val(span);
    // Line by line from the first byte's line to the last byte's.
    let lead = first.addr() % 64;
    for k in (0..lead + bytes).step_by(64) {
        prefetch_at(first.wrapping_add(k).wrapping_sub(lead));
    }
}

/// Eight-byte words of the scratch buffer of [`with_stage`].
const STAGE_WORDS: usize = 1024;

/// Runs `f` on a scratch buffer of 8 KiB worth of `T`s, each `init`, on
/// the stack; an empty one if `T` is larger than 64 bytes or more aligned
/// than `u64` (then nothing is worth staging).
pub(crate) fn with_stage<T: Copy, R>(init: T, f: impl FnOnce(&mut [T]) -> R) -> R {
    with_words::<STAGE_WORDS, T, R>(init, usize::MAX, f)
}

/// Eight-byte words of the scratch buffer of [`with_wide`]: a kilobyte of
/// each of 64 source rows, each a line longer.
const WIDE_WORDS: usize = 64 * (1024 + 64) / 8;

/// [`with_stage`] with up to 68 KiB, at most `len` `T`s (each written
/// before use, so a small block pays for what it uses), for copies of a
/// transpose's source rows (`Gather::block_padded`).
pub(crate) fn with_wide<T: Copy, R>(init: T, len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    with_words::<WIDE_WORDS, T, R>(init, len, f)
}

/// [`with_stage`] with `W` eight-byte words, at most `len` `T`s of them.
// On the stack, as the core allocates nothing. The larger buffer is made
// only for relayouts whose destination passes the streaming threshold (8
// MiB), in programs with such arrays, whose threads have stacks of
// megabytes.
#[allow(clippy::large_stack_arrays)]
fn with_words<const W: usize, T: Copy, R>(init: T, len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    let size = core::mem::size_of::<T>();
    if size == 0 || size > 64 || core::mem::align_of::<T>() > core::mem::align_of::<u64>() {
        return f(&mut []);
    }
    let mut words = [core::mem::MaybeUninit::<u64>::uninit(); W];
    let n = (W * 8 / size).min(len);
    let first = words.as_mut_ptr().cast::<T>();
    // SAFETY: `words` is `8 * W` bytes, aligned for `u64` and so for `T`
    // (checked above), and `n` values of `T` fit in it (at most `8 * W /
    // size`). Every one is written before the slice is made, so the slice
    // holds only valid `T`s; it borrows `words`, which outlives `f`.
    let scratch = unsafe {
        for k in 0..n {
            first.add(k).write(init);
        }
        core::slice::from_raw_parts_mut(first, n)
    };
    f(scratch)
}

/// `dst.copy_from_slice(src)`, with streaming stores where the target has
/// them and `dst` starts on a 16-byte boundary: whole lines only, as for
/// rows far apart (a line written partly with streaming stores and partly
/// with plain ones is written back to memory twice). Runs that start
/// elsewhere (a tile's piece of a row of odd width) are copied plainly:
/// streamed, they measured at 0.6 of `memcpy` against 0.75-0.95 plainly,
/// while runs on 16-byte boundaries gain from streaming whatever the
/// source. Rows joined from many such pieces (`f32[4093,4093]` unpacked)
/// stream through [`stream_copy_lines`] instead, their split lines
/// completed between pieces.
pub(crate) fn stream_copy<T: Copy>(dst: &mut [T], src: &[T]) {
    stream_copy_granule(dst, src, 64, 16);
}

/// [`stream_copy`] for a run that continues the previous one, the way a
/// walk writes its storage in order: every 16 bytes are streamed, as the
/// line split with the previous run is completed in the write-combining
/// buffer (measured: `f32 T(8,128)` packs into a `Vec`, whose 512-byte
/// tile rows start 16 bytes into a line, went from 0.8-0.9 of `memcpy` to
/// 1.1-1.4, the ragged `4093 x 4093` from 0.8 to 1.05-1.1).
pub(crate) fn stream_copy_in_order<T: Copy>(dst: &mut [T], src: &[T]) {
    stream_copy_granule(dst, src, 16, 16);
}

/// [`stream_copy`] wherever `dst` starts: the whole lines inside it
/// streamed, the partial lines at its ends plain. For a long run put
/// together from pieces (a destination row joined from the rows of many
/// tiles), whose two partial lines are few beside its whole ones.
pub(crate) fn stream_copy_lines<T: Copy>(dst: &mut [T], src: &[T]) {
    stream_copy_granule(dst, src, 64, 1);
}

/// The streaming copy behind the three above: every `granule` bytes from
/// the first boundary in `dst` on streamed, the rest plain, when `dst`
/// starts on a multiple of `start` bytes (a power of two, tested with a
/// mask: a copy runs per row piece); a plain copy otherwise.
fn stream_copy_granule<T: Copy>(dst: &mut [T], src: &[T], granule: usize, start: usize) {
    debug_assert!(start.is_power_of_two());
    #[cfg(target_arch = "x86_64")]
    {
        if dst.len() == src.len() && dst.as_ptr().addr() & (start - 1) == 0 {
            x86::stream_copy(dst, src, granule);
            return;
        }
    }
    let _ = (granule, start);
    dst.copy_from_slice(src);
}

/// Makes streaming stores visible in order with later stores: call once
/// after the last [`stream_copy`] of a relayout.
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    x86::fence();
}

#[cfg(test)]
pub(super) mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    /// Every size, offset and stride against the plain loop; nothing
    /// outside the block may change.
    #[test]
    fn transposes_match_a_plain_loop() {
        for na in 0..=13 {
            for nb in 0..=13 {
                for (d, s) in [(0, 0), (1, 3), (5, 2)] {
                    for (pad_d, pad_s) in [(0, 0), (3, 1), (17, 64)] {
                        let (da, sb) = (nb + pad_d, na + pad_s);
                        let dst_len = d + na * da + 7;
                        let src_len = s + nb * sb + 5;
                        let src: Vec<u32> = (0..src_len as u32).map(|x| x * 7 + 1).collect();
                        let mut got = std::vec![u32::MAX; dst_len];
                        let (ta, tb) = transpose32(&mut got, d, da, &src, s, sb, (na, nb));
                        let mut want = std::vec![u32::MAX; dst_len];
                        for i in 0..ta {
                            for j in 0..tb {
                                want[d + i * da + j] = src[s + i + j * sb];
                            }
                        }
                        assert_eq!(got, want, "{na}x{nb} at {d}/{s}, strides {da}/{sb}");
                        if VECTOR_TRANSPOSE && na >= 4 && nb >= 4 {
                            assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                        }
                    }
                }
            }
        }
        // Not 4 bytes: nothing done.
        let mut d16 = [0u16; 16];
        assert_eq!(
            transpose32(&mut d16, 0, 4, &[1u16; 16], 0, 4, (4, 4)),
            (0, 0)
        );
        assert_eq!(d16, [0; 16]);
        // A bound that fails: nothing done.
        let mut short = [0u32; 15];
        assert_eq!(
            transpose32(&mut short, 0, 4, &[1u32; 16], 0, 4, (4, 4)),
            (0, 0)
        );
    }

    /// Blocks wider and taller than a band, whose sizes leave every mix of
    /// 8x8 and 4x4 tiles (and their parts of a band) at the edges, against
    /// the plain loop, for 4-byte and smaller units.
    #[test]
    fn large_transposes_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let u = 4 / core::mem::size_of::<T>();
            for (na, nb) in [(64, 64), (68, 72), (76, 131), (137, 12), (8, 200), (20, 9)] {
                for (d, s, pad) in [(0, 0, 0), (3, 1, 5), (1, 6, 64)] {
                    let (da, sb) = (nb * u + pad, na * u + pad + 1);
                    let dst_len = d + na * da + 9;
                    let src_len = s + nb * sb + 3;
                    let src: Vec<T> = (0..src_len).map(make).collect();
                    let mut got = std::vec![old; dst_len];
                    let (ta, tb) = transpose_units(&mut got, d, da, &src, s, sb, (na, nb));
                    let mut want = std::vec![old; dst_len];
                    for i in 0..ta {
                        for j in 0..tb {
                            for k in 0..u {
                                want[d + i * da + j * u + k] = src[s + i * u + j * sb + k];
                            }
                        }
                    }
                    assert_eq!(got, want, "{na}x{nb} at {d}/{s}, pad {pad}");
                    if VECTOR_TRANSPOSE {
                        assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                    }
                }
            }
        }
        check(word, 0);
        check(half, 0);
        check(byte, 0);
    }

    /// 16x16 line tiles of 4-, 2- and 1-byte elements against a plain loop,
    /// on every kernel this CPU runs and through [`tile16`]'s own choice:
    /// scattered source runs at odd offsets, destination runs on lines and
    /// off them, plain and streamed; nothing else may change, and a run
    /// past the end or (streaming) off a line means nothing written.
    #[test]
    fn line_tiles_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(
            make: fn(usize) -> T,
            old: T,
        ) -> [usize; TileKernel::ALL.len()] {
            let size = core::mem::size_of::<T>();
            let (u, run) = (4 / size, 64 / size);
            let src: Vec<T> = (0..3000 / size * 4).map(make).collect();
            // Tiles done by each kernel.
            let mut ran = [0; TileKernel::ALL.len()];
            let kernels = TileKernel::ALL.map(Some);
            for (k, kernel) in kernels.into_iter().chain([None]).enumerate() {
                let runs = |kernel: Option<TileKernel>| match kernel {
                    Some(kernel) => kernel.available(),
                    None => line_tiles(),
                };
                for seed in 0..12 {
                    let from: [usize; 16] =
                        core::array::from_fn(|c| (c * 251 + seed * 37 + 1) % (src.len() - run));
                    for aligned in [false, true] {
                        for stream in [false, true] {
                            let pitch = run * (1 + seed % 3) + usize::from(!aligned) * (seed % 5);
                            let mut got = std::vec![old; 17 * pitch + 2 * run];
                            let lead = (64 - got.as_ptr().addr() % 64) % 64 / size;
                            let at = lead + usize::from(!aligned) * (1 + seed % 3);
                            // Rows in a scrambled order, none overlapping.
                            let to: [usize; 16] =
                                core::array::from_fn(|r| at + (r * 7 % 16) * pitch);
                            let done = match kernel {
                                Some(kernel) => {
                                    tile16_on(kernel, &mut got, &to, &src, &from, stream)
                                }
                                None => tile16(&mut got, &to, &src, &from, stream),
                            };
                            stream_fence();
                            let mut want = std::vec![old; got.len()];
                            if done {
                                if let Some(n) = ran.get_mut(k) {
                                    *n += 1;
                                }
                                for (r, &t) in to.iter().enumerate() {
                                    for (c, &f) in from.iter().enumerate() {
                                        for e in 0..u {
                                            want[t + c * u + e] = src[f + r * u + e];
                                        }
                                    }
                                }
                            }
                            assert_eq!(
                                got, want,
                                "{kernel:?}, seed {seed}, aligned {aligned}, stream {stream}"
                            );
                            let on_lines = to.iter().all(|&t| got[t..].as_ptr().addr() % 64 == 0);
                            assert_eq!(done, runs(kernel) && (on_lines || !stream));
                        }
                    }
                }
                // A run past either end: nothing done.
                let mut dst = std::vec![old; 16 * run];
                let to: [usize; 16] = core::array::from_fn(|r| r * run);
                let mut late = to;
                late[15] += 1;
                for kernel in TileKernel::ALL {
                    assert!(!tile16_on(kernel, &mut dst, &late, &src, &to, false));
                    assert!(!tile16_on(
                        kernel,
                        &mut dst,
                        &to,
                        &src[..16 * run - 1],
                        &to,
                        false
                    ));
                }
                assert!(!tile16(&mut dst, &late, &src, &to, false));
                assert!(dst.iter().all(|&x| x == old));
            }
            ran
        }
        let ran = [check(word, 0), check(half, 0), check(byte, 0)];
        // Each kernel ran, plain and streamed, wherever the CPU has it (as
        // `std` sees it, apart from the detection the kernels use).
        #[cfg(target_arch = "x86_64")]
        for (k, kernel) in TileKernel::ALL.into_iter().enumerate() {
            let has = match kernel {
                TileKernel::Avx2 => std::is_x86_feature_detected!("avx2"),
            };
            for done in ran {
                assert_eq!(done[k] > 0, has, "kernel {k}: {ran:?}");
                if has {
                    assert_eq!(done[k], 12 * 3, "kernel {k}: {ran:?}");
                }
            }
        }
    }

    /// Source elements of each size the relayout kernels move, for the
    /// tests here and in `kernels`: none is 0 (the destinations' initial
    /// value) or any fill those tests use (odd, top bit set).
    pub(in crate::relayout) fn word(i: usize) -> u32 {
        (i as u32).wrapping_mul(0x9e37_79b9) | 1
    }
    pub(in crate::relayout) fn half(i: usize) -> u16 {
        i as u16 | 0x8000
    }
    pub(in crate::relayout) fn byte(i: usize) -> u8 {
        (i * 7) as u8 | 0x80
    }

    /// Tiles of runs in quarters against the plain loop, for both kernels
    /// and every element size: quarters that continue each other and
    /// quarters apart and out of order, source runs at odd offsets,
    /// destination runs on lines and off them, plain and streamed. Nothing
    /// else may change; a quarter past the end, or (streaming) a run off a
    /// line, means nothing written.
    #[test]
    fn tiles_of_quarters_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
            let size = core::mem::size_of::<T>();
            let (u, run) = (4 / size, 64 / size);
            let src: Vec<T> = (0..80 * run).map(make).collect();
            let mut ran = 0;
            for kernel in TileKernel::ALL {
                for seed in 0..16 {
                    // Source runs `run` or more apart; on odd seeds the
                    // quarters lie in a scrambled order with gaps.
                    let step = run + seed % 3 * (1 + seed % 5);
                    let first = 1 + seed * 3 % 7;
                    let from = if seed % 2 == 0 {
                        Quarters::even(first, step)
                    } else {
                        Quarters {
                            bases: [3, 0, 2, 1].map(|q| first + q * (4 * step + 5)),
                            step,
                        }
                    };
                    for aligned in [false, true] {
                        for stream in [false, true] {
                            let pitch = run * (1 + seed % 3) + usize::from(!aligned) * (seed % 5);
                            let mut got = std::vec![old; 20 * pitch + 2 * run];
                            let lead = (64 - got.as_ptr().addr() % 64) % 64 / size;
                            let at = lead + usize::from(!aligned) * (1 + seed % 3);
                            // Destination quarters in order, with a gap of
                            // a row after the first two on odd seeds.
                            let gap = seed % 2;
                            let to = Quarters {
                                bases: [0, 4, 8 + gap, 12 + gap].map(|r| at + r * pitch),
                                step: pitch,
                            };
                            let done = tile16_quarters(kernel, &mut got, to, &src, from, stream);
                            stream_fence();
                            let mut want = std::vec![old; got.len()];
                            if done {
                                ran += 1;
                                for r in 0..16 {
                                    for c in 0..16 {
                                        for e in 0..u {
                                            want[to.start(r) + c * u + e] =
                                                src[from.start(c) + r * u + e];
                                        }
                                    }
                                }
                            }
                            assert_eq!(
                                got, want,
                                "{kernel:?}, seed {seed}, aligned {aligned}, stream {stream}"
                            );
                            let on_lines =
                                (0..16).all(|r| got[to.start(r)..].as_ptr().addr() % 64 == 0);
                            assert_eq!(done, kernel.available() && (on_lines || !stream));
                        }
                    }
                }
                // A quarter one element past either end, or its end past
                // `usize`: nothing done.
                let mut dst = std::vec![old; 16 * run];
                let whole = Quarters::even(0, run);
                for q in 0..4 {
                    let mut late = whole;
                    late.bases[q] = 12 * run + 1;
                    assert!(!tile16_quarters(kernel, &mut dst, late, &src, whole, false));
                    let mut far = whole;
                    far.bases[q] = usize::MAX - run;
                    assert!(!tile16_quarters(kernel, &mut dst, whole, &src, far, false));
                }
                assert!(!tile16_quarters(
                    kernel,
                    &mut dst,
                    whole,
                    &src[..16 * run - 1],
                    whole,
                    false
                ));
                assert!(dst.iter().all(|&x| x == old));
            }
            ran
        }
        let ran = [check(word, 0), check(half, 0), check(byte, 0)];
        // Some tiles ran wherever the CPU has a kernel.
        assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
    }

    /// The refusals of [`bands_of_tiles_match_tile_by_tile`] for a band of
    /// two tiles or more whose source fits `src` exactly: the last tile one
    /// element past either end, an advance that overflows, and (streaming)
    /// a destination advance off the lines, each writing nothing.
    fn refusals<T: Copy + PartialEq + core::fmt::Debug>(
        kernel: TileKernel,
        src: &[T],
        from: (Quarters, usize),
        count: usize,
        old: T,
    ) {
        let run = 64 / core::mem::size_of::<T>();
        let mut dst = std::vec![old; 17 * run + (count - 1) * run];
        let lead = (64 - dst.as_ptr().addr() % 64) % 64 * run / 64;
        let to = Quarters::even(lead, run);
        let band = |dst: &mut [T], adv: usize, src: &[T], stream: bool| {
            tile16_quarters_run(
                kernel,
                dst,
                (to, adv),
                src,
                from,
                count,
                Bands::ONE,
                stream,
                None,
            )
        };
        assert!(!band(&mut dst, 3 * run, src, false));
        assert!(!band(&mut dst, run, &src[..src.len() - 1], false));
        assert!(!band(&mut dst, usize::MAX, src, false));
        assert!(!band(&mut dst, 1, src, true));
        // A second band: one element on (past the source's end), an advance
        // that overflows, and (streaming) a destination advance off the
        // lines.
        let bands = |dst: &mut [T], (to_adv, from_adv): (usize, usize), stream: bool| {
            let bands = Bands {
                count: 2,
                to_adv,
                from_adv,
            };
            tile16_quarters_run(
                kernel,
                dst,
                (to, 0),
                src,
                from,
                count,
                bands,
                stream,
                Some(2),
            )
        };
        assert!(!bands(&mut dst, (0, 1), false));
        assert!(!bands(&mut dst, (0, usize::MAX), false));
        assert!(!bands(&mut dst, (usize::MAX, 0), false));
        assert!(!bands(&mut dst, (1, 0), true));
        assert!(dst.iter().all(|&x| x == old));
        // The same band within bounds runs.
        assert_eq!(band(&mut dst, run, src, false), kernel.available());
    }

    /// Bands of tiles in one call against the same tiles one by one (the
    /// kernel the test above checks against a plain loop), for both
    /// kernels and every element size: 1 to 3 bands of 1 to 33 tiles
    /// advancing along the runs or across them, quarters in and out of
    /// order, odd source offsets, plain and streamed, asking ahead or not.
    /// A band whose last tile passes either end, whose advance overflows,
    /// or (streaming) whose destination advance is not whole lines writes
    /// nothing, and so do bands whose last band would.
    #[test]
    fn bands_of_tiles_match_tile_by_tile() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
            let run = 64 / core::mem::size_of::<T>();
            let mut ran = 0;
            for kernel in TileKernel::ALL {
                for seed in 0..12 {
                    let count = [1, 2, 5, 33][seed % 4];
                    // Source runs one after another along the band, or
                    // bands of runs side by side.
                    let from_step = run + seed % 3;
                    let from_adv = if seed % 2 == 0 {
                        run
                    } else {
                        16 * from_step + 3
                    };
                    let from = if seed % 3 == 0 {
                        Quarters {
                            bases: [2, 0, 3, 1].map(|q| 1 + seed + q * 4 * from_step),
                            step: from_step,
                        }
                    } else {
                        Quarters::even(1 + seed, from_step)
                    };
                    let nb = 1 + seed % 3;
                    let from_band = count * from_adv + 16 * from_step + seed;
                    let src_len = from.bases.iter().max().unwrap()
                        + 3 * from_step
                        + (count - 1) * from_adv
                        + (nb - 1) * from_band
                        + run;
                    let src: Vec<T> = (0..src_len).map(make).collect();
                    for stream in [false, true] {
                        let to_step = run * (1 + seed % 2);
                        let to_adv = if seed % 4 < 2 { 16 * to_step } else { run };
                        // Bands a whole number of lines apart, after each other.
                        let to_band = (16 * to_step + count * to_adv).next_multiple_of(run);
                        let len =
                            16 * to_step + (count - 1) * to_adv + (nb - 1) * to_band + 3 * run;
                        let mut got = std::vec![old; len];
                        let lead = (64 - got.as_ptr().addr() % 64) % 64 * run / 64;
                        let to = Quarters::even(lead, to_step);
                        let bands = Bands {
                            count: nb,
                            to_adv: to_band,
                            from_adv: from_band,
                        };
                        let ahead = [None, Some(1), Some(2), Some(3)][seed % 4];
                        let done = tile16_quarters_run(
                            kernel,
                            &mut got,
                            (to, to_adv),
                            &src,
                            (from, from_adv),
                            count,
                            bands,
                            stream,
                            ahead,
                        );
                        stream_fence();
                        let mut want = std::vec![old; len];
                        if done {
                            ran += 1;
                            let shift = |q: Quarters, adv: usize, k: usize| Quarters {
                                bases: q.bases.map(|b| b + k * adv),
                                step: q.step,
                            };
                            for b in 0..nb {
                                let (to, from) = (shift(to, to_band, b), shift(from, from_band, b));
                                for k in 0..count {
                                    let tile = shift(to, to_adv, k);
                                    assert!(tile16_quarters(
                                        kernel,
                                        &mut want,
                                        tile,
                                        &src,
                                        shift(from, from_adv, k),
                                        false
                                    ));
                                }
                            }
                        }
                        assert_eq!(got, want, "{kernel:?}, seed {seed}, stream {stream}");
                        assert_eq!(done, kernel.available());
                    }
                    if count > 1 {
                        // The source of one band exactly.
                        let one = &src[..src_len - (nb - 1) * from_band];
                        refusals(kernel, one, (from, from_adv), count, old);
                    }
                }
            }
            ran
        }
        let ran = [check(word, 0), check(half, 0), check(byte, 0)];
        assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
    }

    /// What [`tile16_group_run`] writes, by a plain loop, into `len`
    /// elements of `old`.
    fn group_by_hand<T: Copy>(
        (tiles, to_adv): (&[GroupTile], usize),
        (src, from_adv): (&[T], usize),
        (count, fill): (usize, T),
        (len, old): (usize, T),
    ) -> Vec<T> {
        let u = 4 / core::mem::size_of::<T>();
        let mut want = std::vec![old; len];
        for k in 0..count {
            for tile in tiles {
                for (r, c, e) in (0..16 * 16 * u).map(|x| (x / (16 * u), x / u % 16, x % u)) {
                    want[tile.to[r] + k * to_adv + c * u + e] =
                        tile.from[c].map_or(fill, |o| src[o + k * from_adv + r * u + e]);
                }
            }
        }
        want
    }

    /// Groups of tiles whose source runs are partly `fill`, run round after
    /// round, against the same tiles one by one through a plain loop, for
    /// both kernels and every element size: 1 to 8 tiles, fill runs
    /// anywhere, odd source offsets, plain and streamed. A round past
    /// either end, a streamed run or advance off the lines, or more tiles
    /// than a group holds write nothing.
    #[test]
    fn groups_of_tiles_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(
            make: fn(usize) -> T,
            fill: T,
            old: T,
        ) -> usize {
            let (size, run) = (core::mem::size_of::<T>(), 64 / core::mem::size_of::<T>());
            let mut ran = 0;
            for kernel in TileKernel::ALL {
                for seed in 0..10_usize {
                    let (n, count) = (1 + seed % 8, [1, 3, 17][seed % 3]);
                    let (sb, from_adv) = (run + seed % 3, run);
                    let src_len = 1 + seed + (16 * n + 16) * sb + count * from_adv;
                    let src: Vec<T> = (0..src_len).map(make).collect();
                    let group = |dst: &mut [T], tiles: &[GroupTile], to_adv, count, stream| {
                        tile16_group_run(
                            kernel,
                            dst,
                            (tiles, to_adv),
                            &src,
                            from_adv,
                            count,
                            fill,
                            stream,
                        )
                    };
                    // Destination rows of `n` lines and one more, each
                    // tile one line of every row; a round moves 16 rows on.
                    let row = (n + 1) * run;
                    let to_adv = 16 * row;
                    let len = count * to_adv + 2 * run;
                    for stream in [false, true] {
                        let mut got = std::vec![old; len];
                        let lead = (64 - got.as_ptr().addr() % 64) % 64 / size;
                        let tiles: Vec<GroupTile> = (0..n)
                            .map(|g| GroupTile {
                                to: core::array::from_fn(|r| lead + r * row + g * run),
                                from: core::array::from_fn(|c| {
                                    ((c + g + seed) % 5 != 0).then(|| 1 + seed + (16 * g + c) * sb)
                                }),
                            })
                            .collect();
                        let done = group(&mut got, &tiles, to_adv, count, stream);
                        stream_fence();
                        let want = if done {
                            ran += 1;
                            group_by_hand(
                                (&tiles, to_adv),
                                (&src, from_adv),
                                (count, fill),
                                (len, old),
                            )
                        } else {
                            std::vec![old; len]
                        };
                        assert_eq!(got, want, "{kernel:?}, seed {seed}, stream {stream}");
                        assert_eq!(done, kernel.available());
                        // Refusals: the last round one element past the
                        // end, nine tiles, a streamed advance off the lines.
                        let mut short = std::vec![old; count * to_adv + lead - run - 1];
                        assert!(!group(&mut short, &tiles, to_adv, count, false));
                        assert!(short.iter().all(|&x| x == old));
                        // On `got`, whose runs start lines: nine tiles, a
                        // streamed advance off the lines, an advance that
                        // overflows.
                        got.fill(old);
                        let nine = [tiles[0]; GROUP_TILES + 1];
                        assert!(!group(&mut got, &nine, to_adv, count, false));
                        assert!(!group(&mut got, &tiles, to_adv + 1, 2, true));
                        assert!(!group(&mut got, &tiles, usize::MAX, 2, false));
                        assert!(got.iter().all(|&x| x == old));
                        // ... and with one element more, it runs.
                        short.push(old);
                        assert_eq!(
                            group(&mut short, &tiles, to_adv, count, false),
                            kernel.available()
                        );
                    }
                }
            }
            ran
        }
        let ran = [check(word, 7, 0), check(half, 7, 0), check(byte, 7, 0)];
        assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
    }

    #[test]
    fn stages_hold_their_initial_value() {
        with_stage(7u16, |s| {
            assert_eq!(s.len(), 4096);
            assert!(s.iter().all(|&x| x == 7));
        });
        with_stage([1u8; 3], |s| assert_eq!(s.len(), 8192 / 3));
        with_stage([0u64; 9], |s| assert!(s.is_empty()));
        with_stage(0u128, |s| assert!(s.len() == 512 || s.is_empty()));
        with_wide(3u32, usize::MAX, |w| {
            assert_eq!(w.len(), 64 * 1088 / 4);
            assert!(w.iter().all(|&x| x == 3));
        });
        with_wide(3u16, 100, |w| assert_eq!(w, [3; 100]));
        with_wide([0u64; 9], usize::MAX, |w| assert!(w.is_empty()));
    }

    /// Units of two 2-byte and four 1-byte elements, at odd offsets.
    #[test]
    fn unit_transposes_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let u = 4 / core::mem::size_of::<T>();
            for (na, nb) in [(4, 4), (5, 9), (8, 64), (13, 6), (3, 8)] {
                for (d, s) in [(0, 0), (1, 3)] {
                    for (pad_d, pad_s) in [(0, 0), (3, 5)] {
                        let (da, sb) = (nb * u + pad_d, na * u + pad_s);
                        let dst_len = d + na * da + 3;
                        let src_len = s + nb * sb + 2;
                        let src: Vec<T> = (0..src_len).map(make).collect();
                        let mut got = std::vec![old; dst_len];
                        let (ta, tb) = transpose_units(&mut got, d, da, &src, s, sb, (na, nb));
                        let mut want = std::vec![old; dst_len];
                        for i in 0..ta {
                            for j in 0..tb {
                                for k in 0..u {
                                    want[d + i * da + j * u + k] = src[s + i * u + j * sb + k];
                                }
                            }
                        }
                        assert_eq!(got, want, "{na}x{nb} at {d}/{s}");
                        if VECTOR_TRANSPOSE && na >= 4 && nb >= 4 {
                            assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                        }
                    }
                }
            }
        }
        check(|i| i as u16 | 0x8000, 0);
        check(|i| i as u8 | 0x80, 0);
        check(|i| i as u32 | 1 << 31, 0);
    }

    /// Byte interleaves at every column count up to 70, odd pitches and offsets.
    #[test]
    fn byte_interleaves_match_plain_loops() {
        for n in 0..70 {
            for pad in [0, 1, 17] {
                let pitch = n + pad;
                let src: Vec<u8> = (0..3 * pitch + n + 3).map(|x| (x * 7 + 3) as u8).collect();
                let mut out = std::vec![0u8; 4 * n + 5];
                let done = interleave4_bytes(&mut out[1..], &src[2..], pitch, n);
                let mut want = std::vec![0u8; 4 * n + 5];
                for x in 0..done {
                    for j in 0..4 {
                        want[1 + x * 4 + j] = src[2 + j * pitch + x];
                    }
                }
                assert_eq!(out, want, "interleave {n} columns, pitch {pitch}");
                if VECTOR_TRANSPOSE {
                    assert_eq!(done, n / 16 * 16);
                }
                let input: Vec<i8> = (0..=4 * n).map(|x| (x * 5 + 1) as i8).collect();
                let mut dst = std::vec![0i8; 3 * pitch + n + 4];
                let done = deinterleave_groups(4, &mut dst[3..], pitch, &input[1..], n);
                let mut want = std::vec![0i8; 3 * pitch + n + 4];
                for x in 0..done {
                    for j in 0..4 {
                        want[3 + j * pitch + x] = input[1 + x * 4 + j];
                    }
                }
                assert_eq!(dst, want, "deinterleave {n} columns, pitch {pitch}");
            }
        }
        assert_eq!(interleave4_bytes(&mut [0u16; 64], &[0u16; 64], 16, 16), 0);
        assert_eq!(
            deinterleave_groups(4, &mut [0u8; 63], 16, &[0u8; 64], 16),
            0
        );
    }

    /// Pairs of 2-byte elements into two rows at every column count up to
    /// 70, odd pitches and offsets, with values across the whole 16-bit
    /// range (the kernel sign-extends and packs), against a plain loop;
    /// nothing outside the columns done changes.
    #[test]
    fn word_deinterleave_matches_a_plain_loop() {
        for n in 0..70 {
            for pad in [0, 1, 17] {
                let pitch = n + pad;
                let input: Vec<u16> = (0..=2 * n)
                    .map(|x| (x as u16).wrapping_mul(40503) ^ 0x8001)
                    .collect();
                let mut dst = std::vec![0x5a5au16; pitch + n + 4];
                let done = deinterleave_groups(2, &mut dst[3..], pitch, &input[1..], n);
                let mut want = std::vec![0x5a5au16; pitch + n + 4];
                for x in 0..done {
                    for j in 0..2 {
                        want[3 + j * pitch + x] = input[1 + x * 2 + j];
                    }
                }
                assert_eq!(dst, want, "{n} columns, pitch {pitch}");
                if VECTOR_TRANSPOSE && pitch >= 16 {
                    assert_eq!(done, n / 16 * 16);
                }
            }
        }
        let extremes = [0u16, 1, 0x7fff, 0x8000, 0xffff, 0x0080, 0xff7f, 0x8001];
        let input: Vec<u16> = (0..32).map(|x| extremes[x % 8]).collect();
        let mut dst = std::vec![0u16; 32];
        if deinterleave_groups(2, &mut dst, 16, &input, 16) == 16 {
            for x in 0..16 {
                assert_eq!([dst[x], dst[16 + x]], [input[2 * x], input[2 * x + 1]]);
            }
        }
        // Other sizes, rows closer than the kernel's 16 columns, and too
        // short a side do nothing.
        assert_eq!(
            deinterleave_groups(2, &mut [0u8; 64], 32, &[0u8; 64], 32),
            0
        );
        assert_eq!(
            deinterleave_groups(2, &mut [0u16; 64], 8, &[0u16; 64], 16),
            0
        );
        assert_eq!(
            deinterleave_groups(2, &mut [0u16; 31], 16, &[0u16; 32], 16),
            0
        );
        assert_eq!(
            deinterleave_groups(2, &mut [0u16; 32], 16, &[0u16; 31], 16),
            0
        );
        // Group sizes without a kernel.
        for k in [0, 1, 3, 8] {
            assert_eq!(
                deinterleave_groups(k, &mut [0u8; 512], 64, &[0u8; 512], 32),
                0
            );
        }
    }

    /// The streamed interleaves of bytes (four rows) and 2-byte elements
    /// (two rows) against plain loops: column counts around 16, every
    /// start within a line (so both aligned and misaligned ones), odd
    /// pitches; nothing outside the columns done may change, and they do
    /// all whole groups of 16 exactly when the start is aligned.
    #[test]
    fn streamed_interleaves_match_plain_loops() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let size = core::mem::size_of::<T>();
            let k = 4 / size;
            for n in [0, 1, 15, 16, 17, 31, 32, 48, 70, 128] {
                for pad in [0, 1, 8, 16, 19] {
                    let pitch = n + pad;
                    for off in 0..64 / size {
                        let src: Vec<T> = (0..(k - 1) * pitch + n + 3).map(make).collect();
                        let mut buf = std::vec![old; k * n + 64];
                        let at = off + (64 - buf.as_ptr().addr() % 64) / size % (64 / size);
                        let at = at % (64 / size);
                        let done = interleave_stream(&mut buf[at..], &src[1..], pitch, n);
                        stream_fence();
                        let mut want = std::vec![old; k * n + 64];
                        for x in 0..done {
                            for j in 0..k {
                                want[at + x * k + j] = src[1 + j * pitch + x];
                            }
                        }
                        assert_eq!(buf, want, "interleave {n} of pitch {pitch} at {at}");
                        if VECTOR_TRANSPOSE {
                            let aligned = buf[at..].as_ptr().addr() % 16 == 0;
                            assert_eq!(done, if aligned { n / 16 * 16 } else { 0 });
                        }
                    }
                }
            }
        }
        check(|i| (i * 7 + 3) as u8, 0xee);
        check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
        // Other sizes, too short an output, overlapping rows: nothing done.
        let mut wide = std::vec![0u32; 256];
        assert_eq!(interleave_stream(&mut wide, &[1u32; 256], 16, 16), 0);
        assert!(wide.iter().all(|&x| x == 0));
        let mut rows = std::vec![0u8; 64];
        assert_eq!(interleave_stream(&mut rows[..63], &[1u8; 64], 16, 16), 0);
        assert!(rows.iter().all(|&x| x == 0));
    }

    /// A line of each of two rows of 2-byte elements and four of bytes,
    /// streamed, against a plain loop: every start within a line (only a
    /// line boundary is taken), pitches of whole lines and not, inputs and
    /// buffers at odd places; nothing outside the lines changes, and a
    /// refusal writes nothing.
    #[test]
    fn streamed_lines_match_a_plain_loop() {
        fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
            let size = core::mem::size_of::<T>();
            let (k, line) = (4 / size, 64 / size);
            let mut taken = 0;
            for pitch in [line, 2 * line, 3 * line + 1, 5 * line, 4 * line - 8] {
                for off in (0..line).step_by(16 / size) {
                    let input: Vec<T> = (0..k * line + 3).map(make).collect();
                    let mut dst = std::vec![old; (k + 1) * pitch + 2 * line];
                    let at = ((64 - dst.as_ptr().addr() % 64) / size + off) % line;
                    let mut buf = std::vec![old; k * line + 5];
                    let done = deinterleave_line_streamed(
                        k,
                        &mut dst[at..],
                        pitch,
                        &input[3..],
                        &mut buf[5..],
                    );
                    stream_fence();
                    let mut want = std::vec![old; dst.len()];
                    if done {
                        for x in 0..line {
                            for j in 0..k {
                                want[at + j * pitch + x] = input[3 + x * k + j];
                            }
                        }
                    }
                    assert_eq!(dst, want, "pitch {pitch} at {at}");
                    let lined = dst[at..].as_ptr().addr() % 64 == 0 && (pitch * size) % 64 == 0;
                    assert_eq!(done, VECTOR_TRANSPOSE && lined, "pitch {pitch} at {at}");
                    taken += usize::from(done);
                }
            }
            assert!(!VECTOR_TRANSPOSE || taken >= 3, "{taken}");
            // Too short a destination, input or buffer, or groups of other
            // sizes: nothing written.
            let mut dst = std::vec![old; k * line + 64];
            let at = (64 - dst.as_ptr().addr() % 64) / size % line;
            let input: Vec<T> = (0..k * line).map(make).collect();
            let mut buf = std::vec![old; k * line];
            let ends = at + (k - 1) * line + line;
            assert!(!deinterleave_line_streamed(
                k,
                &mut dst[at..ends - 1],
                line,
                &input,
                &mut buf
            ));
            assert!(!deinterleave_line_streamed(
                k,
                &mut dst[at..],
                line,
                &input[1..],
                &mut buf
            ));
            assert!(!deinterleave_line_streamed(
                k,
                &mut dst[at..],
                line,
                &input,
                &mut buf[1..]
            ));
            assert!(!deinterleave_line_streamed(
                2 * k,
                &mut dst[at..],
                line,
                &input,
                &mut buf
            ));
            assert!(dst.iter().all(|&v| v == old));
        }
        check(|i| (i * 7 + 3) as u8, 0xee);
        check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
        let mut wide = std::vec![0u32; 256];
        assert!(!deinterleave_line_streamed(
            1,
            &mut wide,
            16,
            &[1u32; 64],
            &mut [0u32; 64]
        ));
        assert!(wide.iter().all(|&x| x == 0));
    }

    /// Prefetches are hints: any range, inside the slice, past its end,
    /// empty or reversed, asks for nothing outside it and changes nothing.
    #[test]
    fn prefetches_stay_inside_their_slice() {
        let data: Vec<u16> = (0..300).collect();
        for from in [0, 1, 31, 32, 33, 299, 300, 301, usize::MAX] {
            for to in [0, 1, 32, 100, 300, 1000, usize::MAX] {
                prefetch_span(&data, from, to);
                prefetch_span(&data[7..], from, to);
                prefetch_span::<u16>(&[], from, to);
            }
        }
        assert!(data.iter().enumerate().all(|(i, &x)| usize::from(x) == i));
    }

    /// Every length and both misalignments of either side, bytes and wider.
    #[test]
    fn streaming_copies_match_copy_from_slice() {
        let src: Vec<u8> = (0..700u32).map(|x| (x * 13 + 5) as u8).collect();
        for len in [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300, 511, 600] {
            for (d, s) in [(0, 0), (1, 0), (0, 3), (7, 9), (15, 16), (16, 1)] {
                let mut got = std::vec![0xaau8; 700];
                if d % 2 == 0 {
                    stream_copy(&mut got[d..d + len], &src[s..s + len]);
                } else {
                    stream_copy_in_order(&mut got[d..d + len], &src[s..s + len]);
                }
                stream_fence();
                let mut want = std::vec![0xaau8; 700];
                want[d..d + len].copy_from_slice(&src[s..s + len]);
                assert_eq!(got, want, "{len} bytes at {d} from {s}");
                // The streaming kernel itself, whatever the alignment.
                #[cfg(target_arch = "x86_64")]
                {
                    for granule in [16, 64] {
                        let mut got = std::vec![0xaau8; 700];
                        x86::stream_copy(&mut got[d..d + len], &src[s..s + len], granule);
                        stream_fence();
                        assert_eq!(
                            got, want,
                            "{len} bytes at {d} from {s}, streamed by {granule}"
                        );
                    }
                }
            }
        }
        let wide: Vec<[u16; 3]> = (0..200u16).map(|x| [x, x + 1, x + 2]).collect();
        for off in 0..4 {
            let mut got = std::vec![[0u16; 3]; 200];
            stream_copy(&mut got[off..], &wide[..200 - off]);
            assert_eq!(&got[off..], &wide[..200 - off]);
            assert!(got[..off].iter().all(|&x| x == [0; 3]));
        }
    }
}
