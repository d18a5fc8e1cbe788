//! Machine kernels the compiler does not write from safe code: 4x4
//! transposes of 32-bit elements in vector registers, and copies with
//! non-temporal (streaming) stores, which write whole cache lines to memory
//! without reading them first, and prefetches of the columns a transpose
//! reads next. This is the workspace's only `unsafe` code.
//!
//! Everything here is SSE or SSE2, which every x86-64 CPU has, except the
//! 8x8 transpose, which needs AVX, the 16x16 line tiles, which need AVX2,
//! the streaming copies' whole lines, stored 32 bytes at a time with AVX
//! and 64 with AVX-512F, and the packed sub-byte kernels: the `s4` group
//! steps in AVX-512BW registers or, without them, AVX2's, the rest
//! AVX-512BW or VBMI only. Each runs only where the CPU reports its
//! feature (asked once at run time); elsewhere, and on other targets, the
//! portable loops do the work. The kernels are inline assembly rather than intrinsics on
//! purpose: they move the bytes of any `Copy` type, whose padding may be
//! uninitialised, and assembly reads memory as bytes where an intrinsic
//! would read typed vector values (it also needs no AVX-512 intrinsics,
//! which the crate's oldest supported Rust, 1.85, lacks). Every public
//! function checks its bounds in safe code before any `unsafe` block runs.
//!
//! This module is the one dispatch point: the kernels outside it call the
//! safe functions here, which pick the machine code for the CPU they run
//! on or fall back to a portable loop (or to nothing done, which the
//! caller then does itself).
//!
//! - `mod.rs`: transposes and interleaves of a few rows, streaming copies,
//!   prefetches and the stack buffers the streaming kernels stage through;
//! - `tiles`: the 16x16 tiles of 4-byte units on cache lines;
//! - `x86_64`: the inline assembly, the only place with `core::arch`: its
//!   `stream` the streaming copies, its `tile16` the 16x16 line tiles.

mod tiles;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(test)]
pub(super) mod tests;

pub(crate) use tiles::*;

/// Destinations from this size on are written with streaming stores: they
/// would not stay in cache anyway, and a store that misses the cache
/// otherwise reads the line from memory first. Tests lower it to reach the
/// streaming kernels with small arrays.
#[cfg(not(test))]
pub(crate) const STREAM_BYTES: usize = 8 << 20;
#[cfg(test)]
pub(crate) const STREAM_BYTES: usize = 256;

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
        let avx = x86_64::Avx::detect();
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
                                x86_64::tile8(avx, dst, to, da, src, at, sb);
                                j0 += 8;
                                continue;
                            }
                            _ => x86_64::tile4(dst, to, da, src, at, sb),
                        }
                        if tall {
                            x86_64::tile4(dst, to + 4 * da, da, src, at + 4 * u, sb);
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

/// Whether `k` rows `pitch` elements apart, `n` of each, lie in a slice
/// of `len`: the last row ends at `(k - 1) * pitch + n`. The bound every
/// kernel of a few rows checks before it runs.
fn rows_fit(k: usize, pitch: usize, n: usize, len: usize) -> bool {
    k.checked_sub(1)
        .and_then(|rows| rows.checked_mul(pitch))
        .and_then(|start| start.checked_add(n))
        .is_some_and(|end| end <= len)
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
    let fits = pitch >= 16 && packed_len / k >= n && rows_fit(k, pitch, n, rows_len);
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
        x86_64::interleave4(&mut out[4 * x..][..64], src, x, pitch);
    }
    n
}

/// `dst[j*pitch + x] = input[x*k + j]` for `j < k` and `x < n`: `k`-element
/// groups into `k` rows, four rows of bytes (the inverse of
/// [`interleave4_bytes`], the way back from `s8 (4,1)` tiles) or two of
/// 2-byte elements (`bf16 (2,1)`, in one pass over the pairs, where the
/// loops the compiler vectorizes read them once a row). With AVX-512
/// VBMI, every column, 64 bytes of each row a step
/// ([`x86_64::deinterleave_plain`], where the rows do not overlap);
/// otherwise `n` rounded down to 16. Returns how many columns it did: 0
/// for other `k`, sizes or targets, or a bound that fails.
pub(crate) fn deinterleave_groups<T: Copy>(
    k: usize,
    dst: &mut [T],
    pitch: usize,
    input: &[T],
    n: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        let size = core::mem::size_of::<T>();
        let fits = group_kernel::<T>(k)
            && n > 0
            && pitch >= n
            && input.len() / k >= n
            && rows_fit(k, pitch, n, dst.len());
        if fits {
            let first = dst.as_mut_ptr().cast::<u8>();
            let rows = core::array::from_fn(|j| first.wrapping_add(j.min(k - 1) * pitch * size));
            // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI;
            // `group_kernel` makes `k` 4 (bytes) or 2 (2-byte elements),
            // so `k * n` elements are `k * n * size` bytes. `input` holds
            // them (checked above), and each of the `k` rows, `n * size`
            // bytes from `j * pitch` elements in, lies inside the unique
            // `dst` (`rows_fit`), apart from the others (`pitch >= n`)
            // and from the shared `input`.
            unsafe { x86_64::deinterleave_plain(p, k, rows, input.as_ptr().cast(), n * size) };
            return n;
        }
    }
    let n = group_columns::<T>(k, n, pitch, input.len(), dst.len());
    if n == 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    if k == 4 {
        for x in (0..n).step_by(16) {
            x86_64::deinterleave4(dst, x, pitch, &input[4 * x..][..64]);
        }
    } else {
        for x in (0..n).step_by(16) {
            x86_64::deinterleave2(dst, x, pitch, &input[2 * x..][..32]);
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
        && rows_fit(k, pitch, line, dst.len());
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
                x86_64::deinterleave4(buf, x, line, &input[4 * x..][..64]);
            } else {
                x86_64::deinterleave2(buf, x, line, &input[2 * x..][..32]);
            }
        }
        for j in 0..k {
            x86_64::stream_line(&mut dst[j * pitch..][..line], &buf[j * line..][..line]);
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
    if out.len() < k * n || !rows_fit(k, pitch, n, src.len()) || out.as_ptr().addr() % 16 != 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let out = &mut out[..k * n];
        let rows: [&[T]; 4] =
            core::array::from_fn(|j| if j < k { &src[j * pitch..][..n] } else { &[] });
        if k == 4 {
            for (x, line) in (0..n).step_by(16).zip(out.chunks_exact_mut(64)) {
                x86_64::interleave4_nt(
                    line,
                    [&rows[0][x..], &rows[1][x..], &rows[2][x..], &rows[3][x..]],
                );
            }
        } else {
            for (x, line) in (0..n).step_by(16).zip(out.chunks_exact_mut(32)) {
                x86_64::interleave2_nt(line, [&rows[0][x..], &rows[1][x..]]);
            }
        }
    }
    n
}

/// A band of `(4,1)` tiles of bytes or `(2,1)` tiles of 2-byte elements
/// packed ([`interleave_band`]): `k` rows a group as [`stream_rows`]
/// gives them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupBand {
    /// Where the first group's first row starts in the source, and the
    /// elements from one row of a group to the next.
    pub(crate) from: usize,
    pub(crate) pitch: usize,
    /// Where the first group starts in the destination.
    pub(crate) to: usize,
    /// Columns of a group read from the rows, and written: those past
    /// the rows' take the fill (a ragged last tile).
    pub(crate) columns: usize,
    pub(crate) width: usize,
    /// Tiles, then each tile's groups: how many, and the elements from
    /// one to the next in the destination and in the source.
    pub(crate) tiles: (usize, usize, usize),
    pub(crate) groups: (usize, usize, usize),
    /// Where the source is asked for ahead of the reads.
    pub(crate) ahead: Ahead,
}

/// Where [`interleave_band`] asks for the source ahead of its reads, in
/// elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ahead {
    /// Each row piece's line this far past the piece (0: none): the same
    /// columns of a later band of long rows.
    Rows(usize),
    /// Two lines for each line read, in order from this far past the
    /// first row's start: the rows under a band of short rows, which lie
    /// one after another, asked for whole while the band is read.
    Linear(usize),
}

/// Whether [`interleave_band`] has a kernel on this machine (AVX-512
/// VBMI): the tests ask, where they count the bands it wrote.
#[cfg(test)]
pub(crate) fn group_bands() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::Avx512Vbmi::detect().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Every group of `band` as [`interleave_stream`] writes one, in one
/// call: `dst[to + t*dt + g*dg + x*k + j] = src[from + t*st + g*sg +
/// j*pitch + x]` for `x < columns`, `fill` for `columns <= x < width`.
/// `false`, nothing written, without AVX-512 VBMI, for other sizes, for
/// a width that is no whole number of 64 bytes or under the columns (or
/// over them without a `fill`), for a destination group that starts off
/// 16 bytes, or for a group or row outside its slice.
pub(crate) fn interleave_band<T: Copy>(
    dst: &mut [T],
    src: &[T],
    band: GroupBand,
    fill: Option<T>,
) -> bool {
    let size = core::mem::size_of::<T>();
    let k = stream_rows(size);
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        let GroupBand {
            from,
            pitch,
            to,
            columns,
            width,
            tiles: (nt, dt, st),
            groups: (ng, dg, sg),
            ahead,
        } = band;
        // The last group of the last tile, the furthest on both sides
        // (all steps go forward).
        let last = |n: usize, step: usize| n.checked_sub(1)?.checked_mul(step);
        let ends = (|| {
            let out = to
                .checked_add(last(nt, dt)?)?
                .checked_add(last(ng, dg)?)?
                .checked_add(k.checked_mul(width)?)?;
            let rows = from
                .checked_add(last(nt, st)?)?
                .checked_add(last(ng, sg)?)?
                .checked_add(last(k, pitch)?)?
                .checked_add(columns)?;
            Some((out, rows))
        })();
        // Exact modulo 16 however far the product wraps.
        let on_16 = |e: usize| e.wrapping_mul(size) % 16 == 0;
        let fits = k > 0
            && width > 0
            && (columns == width || (columns < width && fill.is_some()))
            && width.saturating_mul(size) % 64 == 0
            && ends.is_some_and(|(out, rows)| out <= dst.len() && rows <= src.len())
            && dst[to..].as_ptr().addr() % 16 == 0
            && on_16(dt)
            && on_16(dg);
        if !fits {
            return false;
        }
        let bytes = |(n, d, s): (usize, usize, usize)| (n, d * size, s * size);
        // Bytes for the columns past the rows' (none without a fill).
        let (zeros, repeated) = ([0u8; 64], fill.map(|f| [f; 64]));
        let pattern = repeated
            .as_ref()
            .map_or(zeros.as_ptr(), |p| p.as_ptr().cast());
        // SAFETY: `size` is 1 or 2 (`k` is not 0), so `k` is 4 or 2; every
        // step goes forward, so the furthest group and row are those of
        // the last tile's last group, which end inside `dst` and `src`
        // (checked above, without overflow): each group's `k * width`
        // elements are `64 * k * steps` bytes, each row's `columns` the
        // bytes under `valid`; every group starts on 16 bytes (the first
        // does, and both steps are multiples of 16 bytes); `dst` is a
        // unique borrow, so no row overlaps it; `pattern` points to 64
        // bytes or more (64 `T`s of 1 or 2 bytes, or 64 zeros) that live
        // to the end of this block.
        unsafe {
            x86_64::interleave_steps(
                p,
                dst[to..].as_mut_ptr().cast(),
                src[from..].as_ptr().cast(),
                pitch * size,
                k,
                (width * size / 64, columns * size),
                pattern,
                [bytes(band.tiles), bytes(band.groups)],
                match ahead {
                    Ahead::Rows(a) => x86_64::Ahead::Rows(a * size),
                    Ahead::Linear(a) => x86_64::Ahead::Linear(a * size),
                },
            );
        }
        return true;
    }
    let _ = (dst, src, band, k, size, fill);
    false
}

/// A band of tiles unpacked into the rows of a row-major array
/// ([`deinterleave_band`]): each tile's groups `k` rows of `(4,1)` tiles
/// of bytes or `(2,1)` tiles of 2-byte elements as [`stream_rows`] gives
/// them (`grouped`), or single rows as they lie (other tiles).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupRows {
    pub(crate) grouped: bool,
    /// Where the first tile's first group starts in the source.
    pub(crate) from: usize,
    /// Where the first row starts in the destination, and the elements
    /// from one row to the next.
    pub(crate) to: usize,
    pub(crate) pitch: usize,
    /// Columns of a tile.
    pub(crate) columns: usize,
    /// Tiles, side by side along the rows, then each tile's groups, one
    /// under the other: how many, and the elements from one to the next
    /// in the source.
    pub(crate) tiles: (usize, usize),
    pub(crate) groups: (usize, usize),
}

impl GroupRows {
    /// Whether [`deinterleave_band`]'s kernel can write this band of
    /// groups of `k` rows of `size`-byte elements from a source of
    /// `src_len` elements into a destination of `dst_len`: rows that fit
    /// its slots and do not overlap, tiles of whole 64 bytes a row, every
    /// row and group inside its slice (computed without overflow).
    #[cfg(target_arch = "x86_64")]
    fn fits(self, k: usize, size: usize, dst_len: usize, src_len: usize) -> bool {
        let (nt, st) = self.tiles;
        let (ng, sg) = self.groups;
        let rows = ng.saturating_mul(k);
        let run = nt.saturating_mul(self.columns);
        let last = |n: usize, step: usize| n.checked_sub(1)?.checked_mul(step);
        let ends = (|| {
            let out = self
                .to
                .checked_add(last(rows, self.pitch)?)?
                .checked_add(run)?;
            let input = self
                .from
                .checked_add(last(nt, st)?)?
                .checked_add(last(ng, sg)?)?
                .checked_add(k.checked_mul(self.columns)?)?;
            Some((out, input))
        })();
        let tile = self.columns.saturating_mul(size);
        k > 0
            && (1..=JOINED_ROWS).contains(&rows)
            && tile >= 64
            && tile % 64 == 0
            && (rows == 1 || self.pitch >= run)
            && ends.is_some_and(|(out, input)| out <= dst_len && input <= src_len)
    }
}

/// The most rows [`deinterleave_band`] joins at once: a 64-byte slot each.
pub(crate) const JOINED_ROWS: usize = 32;

/// Every group of `band` into its rows, `dst[to + (g*k + j)*pitch +
/// t*columns + x] = src[from + t*st + g*sg + x*k + j]`, in 64-byte pieces
/// of each row, each joined to the piece before it into the line it
/// starts in, which goes out whole with a streaming store (the rows start
/// anywhere in their lines: a row-major array of any width); only each
/// row's first and last partial lines go plainly (`k` is 1 unless
/// `band.grouped`). The tiles after the first go in one kernel call where
/// the band has 8 rows or fewer (16 of 2-byte elements), the pieces
/// before in registers. `false`,
/// nothing written, without AVX-512 VBMI, for
/// groups of other sizes, for a tile that is no
/// whole number of 64 bytes a row, for more than [`JOINED_ROWS`] rows,
/// for rows that overlap, or for a row or group outside its slice.
pub(crate) fn deinterleave_band<T: Copy>(dst: &mut [T], src: &[T], band: GroupRows) -> bool {
    let size = core::mem::size_of::<T>();
    let k = if band.grouped { stream_rows(size) } else { 1 };
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        if !band.fits(k, size, dst.len(), src.len()) {
            return false;
        }
        let GroupRows {
            grouped: _,
            from,
            to,
            pitch,
            columns,
            tiles: (nt, st),
            groups: (ng, sg),
        } = band;
        let tile = columns * size;
        let mut carry = [0u8; 64 * JOINED_ROWS];
        let (out, input) = (dst.as_mut_ptr().cast::<u8>(), src.as_ptr().cast::<u8>());
        let steps = tile / 64;
        // Row `j` of group `g`, `at` bytes into its run.
        let row = |g: usize, at: usize| -> [*mut u8; 4] {
            core::array::from_fn(|j| {
                let r = (g * k + j.min(k - 1)) * pitch;
                out.wrapping_add((to + r) * size + at)
            })
        };
        // Tiles after the first in one call, where its registers hold a
        // piece of every row (`x86_64::band_tiles`: 8 rows, or 16 of 2-byte
        // elements). Bands of more rows (`s8` `T(32,128)(4,1)`) run a tile
        // and a group a call: in one call for each 8 rows, the rows' runs
        // one after another took longer (6.5 ms against 4.6-6.2).
        let in_one = nt > 1 && x86_64::band_tiles(k, ng);
        let per_tile = if in_one { 1 } else { nt };
        for t in 0..per_tile {
            for g in 0..ng {
                let group = input.wrapping_add((from + t * st + g * sg) * size);
                let slots = carry[64 * k * g..].as_mut_ptr();
                let at = t * tile;
                // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI; `k`
                // is 4, 2 (`size` 1 or 2) or 1. The group (`64 * k *
                // steps` bytes, `k * columns` elements) lies inside `src`
                // and each row's run (`tile * nt` bytes) inside `dst`
                // (checked above); the pieces of tile `t` start `t *
                // tile` bytes into their runs, 64 bytes apart. A first
                // piece writes from its start to its line's end, inside
                // the run (at least 64 bytes); a later one the line it
                // starts in, which starts after the run's start (64 bytes
                // or more in) and ends before the piece's end. The rows
                // are disjoint (`pitch` at least the run), `dst` is a
                // unique borrow, and the slots, `k` of 64 bytes from `64
                // * k * g`, lie in the local `carry` (at most
                // `JOINED_ROWS` rows).
                unsafe {
                    if t == 0 {
                        let first = (group, 1);
                        x86_64::deinterleave_steps(
                            p,
                            k,
                            row(g, 0),
                            first,
                            slots,
                            x86_64::Piece::First,
                        );
                        if steps > 1 {
                            let rest = (group.wrapping_add(64 * k), steps - 1);
                            x86_64::deinterleave_steps(
                                p,
                                k,
                                row(g, 64),
                                rest,
                                slots,
                                x86_64::Piece::Later,
                            );
                        }
                    } else {
                        let all = (group, steps);
                        x86_64::deinterleave_steps(
                            p,
                            k,
                            row(g, at),
                            all,
                            slots,
                            x86_64::Piece::Later,
                        );
                    }
                }
            }
        }
        if in_one {
            let tiles = x86_64::BandTiles {
                source: input.wrapping_add((from + st) * size),
                group_bytes: sg * size,
                stride: st * size,
                steps,
                count: nt - 1,
                row: out.wrapping_add(to * size + tile),
                pitch: pitch * size,
            };
            // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI;
            // `band_tiles(k, ng)` holds, `nt - 1` and `steps` are at
            // least 1. Tile `t`'s group `g` (from tile 1 on: `(t + 1) *
            // st + g * sg` elements from `from`) lies inside `src`, its
            // `64 * k * steps` bytes `k * columns` elements (checked
            // above, without overflow); `carry` holds a slot of 64 bytes
            // for each of the `k * ng` rows. Each row's pieces from tile
            // 1 on start `tile` bytes or more into its run, 64 bytes
            // apart, and each line one starts in ends before the piece's
            // end, inside the run, which lies inside `dst`; the rows are
            // disjoint (`pitch` at least the run), `dst` is a unique
            // borrow, and `carry` is local.
            unsafe { x86_64::deinterleave_tiles(p, k, ng, tiles, carry.as_mut_ptr()) };
        }
        for g in 0..ng {
            let slots = carry[64 * k * g..].as_mut_ptr();
            // SAFETY: as above; each row's tail writes from its last line
            // boundary to the run's end (`row` at `nt * tile`), inside the
            // run, and reads its slot.
            unsafe {
                let none = (input, 1);
                let end = row(g, nt * tile);
                x86_64::deinterleave_steps(p, k, end, none, slots, x86_64::Piece::Tail);
            }
        }
        return true;
    }
    let _ = (dst, src, band, k, size);
    false
}

/// [`deinterleave_band`] for a band whose rows are one run of the
/// destination: one tile (`band.tiles.0` 1) of any number of groups, each
/// row as long as the tile (`band.pitch` is `band.columns`), so that each
/// group's rows follow the last group's (a rank-1 array's
/// `T(512)(128)(2,1)` tiles, or rows as wide as a tile). The first group
/// goes plainly; every later one in one kernel call, its pieces joined
/// into whole lines and streamed in the destination's order, the run
/// starting anywhere in its line. `false`, nothing written, without
/// AVX-512 VBMI, for groups of other sizes, for rows of other than 64,
/// 128 or 256 bytes (64 or 128 of bytes), for fewer than two groups, or
/// for a row or group outside its slice.
pub(crate) fn deinterleave_run<T: Copy>(dst: &mut [T], src: &[T], band: GroupRows) -> bool {
    let size = core::mem::size_of::<T>();
    let k = stream_rows(size);
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        let GroupRows {
            grouped,
            from,
            to,
            pitch,
            columns,
            tiles: (nt, _),
            groups: (ng, sg),
        } = band;
        let row = columns.saturating_mul(size);
        let steps = row / 64;
        let group = k * columns;
        let ends = (|| {
            let out = to.checked_add(ng.checked_mul(group)?)?;
            let input = from
                .checked_add(ng.checked_sub(1)?.checked_mul(sg)?)?
                .checked_add(group)?;
            Some((out, input))
        })();
        let fits = grouped
            && nt == 1
            && pitch == columns
            && ng >= 2
            && row % 64 == 0
            && x86_64::run_groups(k, steps)
            && ends.is_some_and(|(out, input)| out <= dst.len() && input <= src.len());
        if !fits {
            return false;
        }
        // The first group plainly; its last 64 bytes, as written, are the
        // piece before the second group's first.
        for j in 0..k {
            for x in 0..columns {
                dst[to + j * columns + x] = src[from + x * k + j];
            }
        }
        let at = dst
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add((to + group) * size);
        let shift = at.addr() % 64;
        let run = x86_64::GroupRun {
            source: src.as_ptr().cast::<u8>().wrapping_add((from + sg) * size),
            gap: sg.wrapping_sub(group).wrapping_mul(size),
            groups: ng - 1,
            out: at.wrapping_sub(shift),
            shift,
            carry: at.wrapping_sub(64),
        };
        // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI;
        // `run_groups(k, steps)` holds and `ng - 1` is at least 1. Group
        // `g` from 1 on (`g * sg` elements from `from`, `64 * k * steps`
        // bytes) lies inside `src` (checked above, without overflow). The
        // carried piece is the first group's last 64 bytes (`row` at
        // least 64), inside `dst`. The lines start at the line the second
        // group starts in, after the run's start (a group is 128 bytes or
        // more), and end `shift` bytes past the last group's end, at the
        // run's end, inside `dst`; `dst` is a unique borrow, so no group
        // overlaps them.
        unsafe {
            x86_64::deinterleave_run(p, k, steps, run);
        }
        return true;
    }
    let _ = (dst, src, band, k, size);
    false
}

/// Rows of tiles side by side, unpacked into rows that lie one after
/// another in the destination ([`rows_in_order`]): `rows` (how many, and
/// the elements from one to the next in the source), each `tiles` pieces
/// of `columns` elements (how many, and the elements from one tile to the
/// next), then a last piece of `last` elements (0: none; a ragged last
/// tile) one tile past them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileRows {
    /// Where the first row's first piece starts in the source.
    pub(crate) from: usize,
    /// Where the first row starts in the destination.
    pub(crate) to: usize,
    pub(crate) rows: (usize, usize),
    pub(crate) tiles: (usize, usize),
    pub(crate) columns: usize,
    pub(crate) last: usize,
}

/// Every row of `band` into the destination, one after another from
/// `to`: `dst[to + i*w + t*columns + x] = src[from + i*rs + t*ts + x]`
/// with `w` the row's length (`tiles * columns + last`), `x < columns`
/// for the whole tiles and `x < last` for `t = tiles`. The rows are
/// appended in order to one run, each line streamed whole once its
/// bytes are in, whatever line the pieces start on; only the run's first
/// and last partial lines go plainly. `false`, nothing written, without
/// AVX-512BW and BMI2, for no rows, or for a row or piece outside its
/// slice.
pub(crate) fn rows_in_order<T: Copy>(dst: &mut [T], src: &[T], band: TileRows) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512BwBmi2::detect() {
        let size = core::mem::size_of::<T>();
        let TileRows {
            from,
            to,
            rows: (nr, rs),
            tiles: (nt, ts),
            columns,
            last,
        } = band;
        let ends = (|| {
            let width = nt.checked_mul(columns)?.checked_add(last)?;
            let out = to.checked_add(nr.checked_mul(width)?)?;
            let first = from.checked_add(nr.checked_sub(1)?.checked_mul(rs)?)?;
            let whole = match nt {
                0 => first,
                _ => first
                    .checked_add((nt - 1).checked_mul(ts)?)?
                    .checked_add(columns)?,
            };
            let ragged = first.checked_add(nt.checked_mul(ts)?)?.checked_add(last)?;
            let input = if last > 0 { whole.max(ragged) } else { whole };
            Some((out, input))
        })();
        if !ends.is_some_and(|(out, input)| out <= dst.len() && input <= src.len()) {
            return false;
        }
        let (out, input) = (dst.as_mut_ptr(), src.as_ptr());
        let rows = x86_64::InOrderRows {
            source: input.wrapping_add(from).cast::<u8>(),
            rows: nr,
            row_step: rs.wrapping_mul(size),
            pieces: nt,
            piece: columns * size,
            stride: ts.wrapping_mul(size),
            last: last * size,
            out: out.wrapping_add(to).cast::<u8>(),
            // The same place in the next tile row.
            ahead: (nt + usize::from(last > 0))
                .wrapping_mul(ts)
                .wrapping_mul(size),
        };
        // SAFETY: `p` shows the CPU runs AVX-512F and BW and BMI2; `nr`
        // is at least 1 (`nr - 1` was checked). Row `i`'s whole pieces
        // (`columns` elements from `from + i*rs + t*ts`, `t < nt`) and
        // its last (`last` from `from + i*rs + nt*ts`) end by the last
        // row's, inside `src` (checked above, without overflow); the
        // `nr` rows of `nt*columns + last` elements from `to` lie inside
        // `dst`, a unique borrow, so they overlap no piece.
        unsafe { x86_64::rows_in_order(p, rows) };
        return true;
    }
    let _ = (dst, src, band);
    false
}

/// The greatest value plus `bias` (wrapping) each of 64 lanes has read:
/// the value check that packing kernels keep as they read the values
/// (see [`pack_nibble_groups`]), which a kernel call reads and writes
/// once. A check of its own after the pack read the values again, from
/// the cache: `s4[165,983,413]` in `(8,128)(8,1)` tiles packed in 9.0-9.4
/// ms so, against 7.2-7.8 unchecked.
pub(crate) struct Seen {
    pub(crate) max: [u8; 64],
    pub(crate) bias: u8,
}

impl Seen {
    /// Nothing seen yet, for values checked as `v + bias`.
    pub(crate) const fn new(bias: u8) -> Self {
        Seen { max: [0; 64], bias }
    }

    /// The greatest value plus the bias seen in any lane.
    pub(crate) fn greatest(&self) -> u8 {
        self.max.iter().fold(0, |m, &b| m.max(b))
    }
}

/// `s4` values into `(8,1)` groups: byte `q` of the group of column `x`,
/// `out[4*x + q]`, takes the low four bits of `rows[2*q*pitch + x]` low
/// and those of `rows[(2*q + 1)*pitch + x]` high, for `q < 4` and `x <
/// n`; with streaming stores if `stream` and `out` starts on 16 bytes (as
/// [`stream_copy_in_order`], 64 at a time on a line). 64 columns a step,
/// a last step of fewer through a copy of its columns on the stack (its
/// other columns 0). Each value read, plus the bias, goes into `seen`.
/// The steps run in AVX-512BW registers, or in AVX2's where the CPU has
/// no AVX-512BW. Returns how many columns it did: `n`, or 0, nothing
/// written or seen, without AVX2 or for a bound that fails.
pub(crate) fn pack_nibble_groups(
    out: &mut [u8],
    rows: &[u8],
    pitch: usize,
    n: usize,
    stream: bool,
    seen: &mut Seen,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(steps) = x86_64::NibbleSteps::best() {
        let fits = n > 0 && out.len() / 4 >= n && rows_fit(8, pitch, n, rows.len());
        if fits {
            let store = match out.as_ptr().addr() % 64 {
                _ if !stream => x86_64::Store::Plain,
                0 => x86_64::Store::Stream64,
                at if at % 16 == 0 => x86_64::Store::Stream16,
                _ => x86_64::Store::Plain,
            };
            let whole = n / 64 * 64;
            for (x, groups) in (0..whole).step_by(64).zip(out.chunks_exact_mut(256)) {
                steps.pack64(groups, &rows[x..], pitch, store, seen);
            }
            let m = n - whole;
            if m > 0 {
                let mut part = [0u8; 8 * 64];
                for (k, row) in part.chunks_exact_mut(64).enumerate() {
                    row[..m].copy_from_slice(&rows[k * pitch + whole..][..m]);
                }
                let mut groups = [0u8; 256];
                steps.pack64(&mut groups, &part, 64, x86_64::Store::Plain, seen);
                let end = &mut out[4 * whole..][..4 * m];
                if stream {
                    stream_copy_in_order(end, &groups[..4 * m]);
                } else {
                    end.copy_from_slice(&groups[..4 * m]);
                }
            }
            return n;
        }
    }
    let _ = (out, rows, pitch, stream, seen);
    0
}

/// The way back of [`pack_nibble_groups`]: `rows[(2*q + h)*pitch + x]`
/// for `h < 2` gets half `h` of `input[4*x + q]`, extended to a byte with
/// its sign bit if `signed` or with zeros, for `x < n`; with `stream`
/// (rows past the cache), every whole line of the rows streamed where
/// the CPU runs AVX-512 VBMI ([`x86_64::unpack_nibble_band`], for rows of
/// 128 columns or more that do not overlap). Returns how many columns it
/// did: `n`, or 0, nothing written, without AVX2, for rows less than 64
/// bytes apart or a bound that fails.
pub(crate) fn unpack_nibble_groups(
    rows: &mut [u8],
    pitch: usize,
    input: &[u8],
    n: usize,
    signed: bool,
    stream: bool,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(steps) = x86_64::NibbleSteps::best() {
        let fits =
            n > 0 && pitch >= 64 && input.len() / 4 >= n && rows_fit(8, pitch, n, rows.len());
        if fits {
            let whole = n / 64 * 64;
            let band =
                x86_64::Avx512Vbmi::detect().filter(|_| stream && whole >= 128 && pitch >= n);
            if let Some(v) = band {
                let starts: [*mut u8; 8] =
                    core::array::from_fn(|k| rows[k * pitch..][..whole].as_mut_ptr());
                let heads: [usize; 8] =
                    core::array::from_fn(|k| starts[k].addr().wrapping_neg() % 64);
                let band = x86_64::NibbleBand {
                    source: input[..4 * whole].as_ptr(),
                    steps: whole / 64,
                    starts,
                    lines: core::array::from_fn(|k| starts[k].wrapping_add(heads[k])),
                    heads: heads.map(|h| (1u64 << h) - 1),
                    tails: heads.map(|h| u64::MAX >> h),
                    // Each row's line: its last `64 - h` bytes of a step,
                    // then the first `h` of the next.
                    index: heads.map(|h| core::array::from_fn(|i| (h + i) as u8)),
                };
                // SAFETY: `v` shows the CPU runs AVX-512F, BW and VBMI;
                // `whole / 64` is at least 2. The source's `4 * whole`
                // bytes were sliced from `input` above. Each row's
                // `whole` bytes were sliced from `rows` (a unique borrow
                // the source cannot overlap), rows `pitch >= n >= whole`
                // apart, so disjoint; `lines`, `heads` and `index` are
                // built from each row's start as `NibbleBand` says.
                unsafe { x86_64::unpack_nibble_band(v, &band, signed) };
            } else {
                for (x, groups) in (0..whole).step_by(64).zip(input.chunks_exact(256)) {
                    steps.unpack64(&mut rows[x..], pitch, groups, signed);
                }
            }
            let m = n - whole;
            if m > 0 {
                let mut groups = [0u8; 256];
                groups[..4 * m].copy_from_slice(&input[4 * whole..][..4 * m]);
                let mut part = [0u8; 8 * 64];
                steps.unpack64(&mut part, 64, &groups, signed);
                for (k, row) in part.chunks_exact(64).enumerate() {
                    rows[k * pitch + whole..][..m].copy_from_slice(&row[..m]);
                }
            }
            return n;
        }
    }
    let _ = (rows, pitch, input, signed, stream);
    0
}

/// Groups of `s4` values in `(8,1)` tiles 128 columns wide whose eight
/// rows lie one after another in the destination, group after group (a
/// rank-1 array's `T(1024)(128)(8,1)E(4)` tiles): `bytes[to + 1024*g +
/// 128*(2*q + h) + x]` gets half `h` of `input[from + 512*g + 4*x + q]`,
/// extended as [`unpack_nibble_groups`] does, for `g < groups`. The first
/// group goes plainly; every later one in one kernel call, its rows
/// joined into whole lines and streamed in the destination's order,
/// the run starting anywhere in its line. `false`, nothing written,
/// without AVX-512 VBMI, for fewer than two groups, or for a group
/// outside its slice.
pub(crate) fn unpack_nibble_run(
    bytes: &mut [u8],
    to: usize,
    input: &[u8],
    from: usize,
    groups: usize,
    signed: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let (Some(p), Some(bw)) = (x86_64::Avx512Vbmi::detect(), x86_64::Avx512Bw::detect()) {
        let fits = groups >= 2
            && groups
                .checked_mul(1024)
                .and_then(|n| n.checked_add(to))
                .is_some_and(|end| end <= bytes.len())
            && groups
                .checked_mul(512)
                .and_then(|n| n.checked_add(from))
                .is_some_and(|end| end <= input.len());
        if !fits {
            return false;
        }
        // The first group plainly, 64 columns at a time; its last 64
        // bytes, as written, are the piece before the second group's.
        for half in 0..2 {
            let rows = &mut bytes[to + 64 * half..];
            x86_64::unpack_nibbles64(bw, rows, 128, &input[from + 256 * half..], signed);
        }
        let at = bytes.as_mut_ptr().wrapping_add(to + 1024);
        let shift = at.addr() % 64;
        let run = x86_64::NibbleRun {
            source: input.as_ptr().wrapping_add(from + 512),
            groups: groups - 1,
            out: at.wrapping_sub(shift),
            shift,
            carry: at.wrapping_sub(64),
        };
        // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI; `groups -
        // 1` is at least 1. Groups 1 to `groups - 1` (512 bytes each from
        // `from + 512`) lie inside `input` (checked above, without
        // overflow); the carried piece is the first group's last 64
        // bytes, inside `bytes`. The lines start at the line the second
        // group starts in, after the run's start (a group is 1,024
        // bytes), and end `shift` bytes past the last group's end, at the
        // run's end, inside `bytes`, a unique borrow that no group
        // overlaps.
        unsafe { x86_64::unpack_nibble_run(p, run, signed) };
        return true;
    }
    let _ = (bytes, to, input, from, groups, signed);
    false
}

/// Whether each of 16 runs of `n` elements from `starts` ends inside a
/// slice of `len`: the bounds the tile kernels check before they run.
pub(crate) fn runs_inside(starts: &[usize; 16], n: usize, len: usize) -> bool {
    starts
        .iter()
        .all(|&o| o.checked_add(n).is_some_and(|end| end <= len))
}

/// `s4` values a byte each into bytes of two, along a logical row:
/// `out[k]` takes the low four bits of `bytes[2k]` low and those of
/// `bytes[2k + 1]` high, 64 bytes of `bytes` a step, as many steps as
/// both slices hold; each byte read, plus the bias, goes into `seen`.
/// Returns the bytes of `bytes` done, a multiple of 64: 0, nothing
/// written or seen, without AVX-512BW. The caller packs the rest.
pub(crate) fn squeeze_nibble_pairs(out: &mut [u8], bytes: &[u8], seen: &mut Seen) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Bw::detect() {
        let steps = (bytes.len() / 64).min(out.len() / 32);
        // SAFETY: `p` shows the CPU runs AVX-512F and BW; `steps` steps
        // read `64 * steps` bytes of `bytes` and write `32 * steps` of
        // `out`, inside both (the least of the two counts); `out` is a
        // unique borrow, so it does not overlap `bytes`.
        unsafe { x86_64::squeeze_nibble_pairs(p, out.as_mut_ptr(), bytes.as_ptr(), steps, seen) };
        return 64 * steps;
    }
    let _ = (out, bytes, seen);
    0
}

/// Whether the 16 runs of `n` bytes from `to` lie inside a slice of
/// `len`, and so does the part of each run's first line before it unless
/// `first` (at most 63 bytes: inside from 64 bytes in), with a carry of
/// `carry` bytes holding their 16 slots: the bounds the joined `s4`
/// kernels check before they run.
fn joined_inside(
    (to, n, len): (&[usize; 16], usize, usize),
    (carry, first): (usize, bool),
) -> bool {
    (first || to.iter().all(|&o| o >= 64)) && carry >= 1024 && runs_inside(to, n, len)
}

/// Whether this machine runs [`unpack_nibble_tile16`] (AVX-512BW): where
/// it does not, the callers transpose the units first ([`tile16`]) and
/// spread the values after.
pub(crate) fn nibble_tiles() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::Avx512Bw::detect().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A transposed tile of `s4` `(8,1)` groups, unpacked: group `c` of the
/// run at `runs[from[x]..]` (64 bytes) into bytes `8x..8x + 8` of the row
/// at `rows[to[c]..]` (128 bytes), the first value from the lowest bits,
/// for `x` and `c` under 16, each value's four bits extended to a byte
/// with its sign bit if `signed` or with zeros. `false`, nothing written,
/// without AVX-512BW or for a run outside its slice.
pub(crate) fn unpack_nibble_tile16(
    rows: &mut [u8],
    to: &[usize; 16],
    runs: &[u8],
    from: &[usize; 16],
    signed: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Bw::detect() {
        if !runs_inside(to, 128, rows.len()) || !runs_inside(from, 64, runs.len()) {
            return false;
        }
        let targets = to.map(|o| rows.as_mut_ptr().wrapping_add(o));
        let sources = from.map(|o| runs.as_ptr().wrapping_add(o));
        // SAFETY: `p` shows the CPU runs AVX-512F and BW. Every run and
        // row lies inside its slice (checked above) and the pointers come
        // from those slices; `rows` is a unique borrow, so no row overlaps
        // a run.
        unsafe { x86_64::unpack_nibble_tile16(p, &targets, &sources, signed) };
        return true;
    }
    let _ = (rows, to, runs, from, signed);
    false
}

/// Whether any of `bytes`, plus `bias` (wrapping), is `limit` or more: the
/// value check of the sub-byte packs' paths outside the kernels that
/// check in registers, on each row or chunk just packed, and of a
/// refused pack's search for the first value out of range. In 256-bit
/// vectors where the CPU has AVX2: with the 128-bit ones every x86-64 CPU
/// has, checking 64 MiB took 6.4-8.2 ms, against 3.6-6.7 (reading it at
/// all, 4-5).
pub(crate) fn any_outside(bytes: &[u8], bias: u8, limit: u8) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx2::detect() {
        return x86_64::greatest_avx2(p, bytes, bias) >= limit;
    }
    greatest(bytes, bias) >= limit
}

/// The greatest of `bytes`, each plus `bias` (wrapping): a loop the
/// compiler vectorizes for the features of the function it is inlined
/// into.
// Always inlined: called out of line, it would be compiled once, for the
// baseline target, and the AVX2 caller would run that.
#[allow(clippy::inline_always)]
#[inline(always)]
fn greatest(bytes: &[u8], bias: u8) -> u8 {
    bytes.iter().fold(0, |m, &b| m.max(b.wrapping_add(bias)))
}

/// Whether this machine runs [`join_band16`].
pub(crate) fn joins_tiles() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::Avx512Vbmi::detect().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A band of [`JoinBand::tiles`] 16x16 tiles of 4-byte units along 16
/// rows, into runs that start anywhere in their lines (see
/// [`join_band16`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct JoinBand {
    /// Where each of the 16 rows starts in the source.
    pub(crate) rows: [usize; 16],
    /// The next band's rows, whose same units are asked for ahead.
    pub(crate) ahead: [usize; 16],
    pub(crate) tiles: usize,
    /// Where the first run's piece starts in the destination, and the
    /// elements from one run's piece to the next's.
    pub(crate) piece: usize,
    pub(crate) stride: usize,
    /// Whether these are the runs' first pieces.
    pub(crate) first: bool,
}

/// The tiles of `band`: units `k` of the 16 rows of tile `t` (row `c`'s
/// from `src[band.rows[c] + 16t * w..]`, `w` elements a unit), in row
/// order, make the piece (64 bytes) of run `n = 16t + k`, at
/// `dst[band.piece + n * band.stride..]`, whose run holds the piece
/// before it in slot `n` of `carry` (64 bytes each, the last band's
/// pieces). The line
/// each piece starts in goes out whole, the end of the piece before and
/// then the piece's start, with a streaming store; on a run's first
/// piece, only from the piece on, plainly. Each piece then takes its slot
/// for the next band; the bytes past a run's last line boundary wait
/// there, for the caller to write. `false`, nothing written, without
/// AVX-512 VBMI, for `T` not of 1, 2 or 4 bytes, or for a row, piece or
/// line outside its slice (a line before the first line boundary of `dst`
/// unless `band.first`).
pub(crate) fn join_band16<T: Copy>(
    dst: &mut [T],
    src: &[T],
    band: &JoinBand,
    carry: &mut [T],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        let size = core::mem::size_of::<T>();
        if !matches!(size, 1 | 2 | 4) || band.tiles == 0 {
            return false;
        }
        let run = 64 / size;
        // The last piece's end, and the first piece's line: at most 63
        // bytes before it, inside `dst` from `run` elements on.
        let end = (16 * band.tiles - 1)
            .checked_mul(band.stride)
            .and_then(|x| x.checked_add(band.piece))
            .and_then(|x| x.checked_add(run));
        let lines = band.first || band.piece >= run;
        let rows = band.tiles.checked_mul(run);
        let (Some(end), Some(rows)) = (end, rows) else {
            return false;
        };
        if !lines
            || end > dst.len()
            || carry.len() / 16 / run < band.tiles
            || !runs_inside(&band.rows, rows, src.len())
        {
            return false;
        }
        let from = band.rows.map(|o| src.as_ptr().wrapping_add(o).cast::<u8>());
        let ahead = band
            .ahead
            .map(|o| src.as_ptr().wrapping_add(o).cast::<u8>());
        let piece = dst.as_mut_ptr().wrapping_add(band.piece).cast::<u8>();
        // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI. Every row
        // lies inside `src` for the band's tiles (checked above); the
        // pieces, `stride` elements apart, lie between the first and the
        // last, which ends inside `dst` (checked), and so does each
        // piece's line from its start to its end; the part before the
        // piece, written unless `first`, is at most 63 bytes, inside `dst`
        // as each piece starts `run` elements (64 bytes) in or more.
        // `carry` holds the band's slots (checked). The pointers come from
        // those slices, and `dst` and `carry` are unique borrows, so no
        // line or slot overlaps a row. The rows ahead are only asked for.
        unsafe {
            x86_64::join_band16(
                p,
                &from,
                &ahead,
                band.tiles,
                piece,
                band.stride * size,
                carry.as_mut_ptr().cast(),
                band.first,
            );
        }
        return true;
    }
    let _ = (dst, src, band, carry);
    false
}

/// [`unpack_nibble_tile16`] into rows that start anywhere in their lines,
/// streamed: each row's 128 bytes join the 64 before them on the row,
/// held in `carry[64c..]` (16 slots, the last tile's rows), into the two
/// lines from the one they start in, which go out whole with streaming
/// stores; on a row's `first` piece, whose first line holds bytes before
/// it that are not its own, that line goes plainly from the piece's
/// start. The last 64 bytes of each row's piece then take its slot for
/// the next tile; the bytes past a row's last line boundary wait there,
/// for the caller to write. `false`, nothing written, without AVX-512
/// VBMI, or for a row, run or line outside its slice (a line before
/// `rows`' first line boundary unless `first`).
pub(crate) fn unpack_nibble_tile16_joined(
    rows: &mut [u8],
    to: &[usize; 16],
    runs: &[u8],
    from: &[usize; 16],
    signed: bool,
    (carry, first): (&mut [u8], bool),
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = x86_64::Avx512Vbmi::detect() {
        if !joined_inside((to, 128, rows.len()), (carry.len(), first))
            || !runs_inside(from, 64, runs.len())
        {
            return false;
        }
        let targets = to.map(|o| rows.as_mut_ptr().wrapping_add(o));
        let sources = from.map(|o| runs.as_ptr().wrapping_add(o));
        let slots = carry.as_mut_ptr();
        // SAFETY: `p` shows the CPU runs AVX-512F, BW and VBMI. Every row
        // piece and run lies inside its slice (checked above); the two
        // lines from a piece's first end at most where the piece does, and
        // the part of the first before the piece, written unless `first`,
        // is at most 63 bytes, inside `rows` as each piece starts 64 bytes
        // in or more (checked). `carry` holds 16 slots of 64 bytes
        // (checked). The pointers come from those slices, and `rows` and
        // `carry` are unique borrows, so no line or slot overlaps a run.
        unsafe {
            x86_64::unpack_nibble_tile16_joined(p, &targets, &sources, signed, slots, first);
        }
        return true;
    }
    let _ = (rows, to, runs, from, signed, carry, first);
    false
}

/// Asks for every cache line of `src[from..to]` (clamped to `src`) ahead
/// of its use, into the L2 cache ([`prefetch_at`]); nothing on other
/// targets.
pub(crate) fn prefetch_span<T>(src: &[T], from: usize, to: usize) {
    each_line(src, from, to, prefetch_at);
}

/// [`prefetch_span`] into the L1 cache, for lines needed soon after (see
/// `kernels::ask_band_share`).
pub(crate) fn prefetch_near_span<T>(src: &[T], from: usize, to: usize) {
    each_line(src, from, to, prefetch_near_at);
}

/// `ask` on each cache line of `src[from..to]` (clamped to `src`), from
/// the first byte's line to the last byte's.
#[inline]
fn each_line<T>(src: &[T], from: usize, to: usize, ask: fn(*const u8)) {
    let to = to.min(src.len());
    if from >= to {
        return;
    }
    let span = &src[from..to];
    let first = span.as_ptr().cast::<u8>();
    let bytes = core::mem::size_of_val(span);
    let lead = first.addr() % 64;
    for k in (0..lead + bytes).step_by(64) {
        ask(first.wrapping_add(k).wrapping_sub(lead));
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

/// Eight-byte words of the scratch buffer of [`with_rows_stage`].
const ROWS_STAGE_WORDS: usize = 2048;

/// [`with_stage`] with 16 KiB, beside the stage, for tile rows written in
/// order (`kernels::group_rows_in_order`), which it holds whole: tile
/// rows of 8.8 KB (`bf16[30000,1100]{1,0:T(4,128)(2,1)}`) went another
/// way past the 8 KiB stage, unpacked in 11.0-11.6 ms against 9.4-9.6 in
/// order; rows of 31-37 KB went slower in order, their stage past the
/// first-level cache (7.7-8.0 against 9.7-10.3; Intel Xeon, 48 KiB of
/// L1).
pub(crate) fn with_rows_stage<T: Copy, R>(init: T, f: impl FnOnce(&mut [T]) -> R) -> R {
    with_words::<ROWS_STAGE_WORDS, T, R>(init, usize::MAX, f)
}

/// Eight-byte words of the scratch buffer of [`with_wide`]: a kilobyte of
/// each of 64 source rows, each a line longer.
const WIDE_WORDS: usize = 64 * (1024 + 64) / 8;

/// Bytes of the scratch buffer of [`with_wide`].
pub(crate) const WIDE_BYTES: usize = WIDE_WORDS * 8;

/// [`with_stage`] with up to 68 KiB, at most `len` `T`s (each written
/// before use, so a small block pays for what it uses), for copies of a
/// transpose's source rows (`Gather::block_padded`), and the runs of the
/// joined line tiles (`stream_joined_tiles`) or the bands of copied rows
/// (`TileGrid::copied_bands`), which a block of those copies may call:
/// two at most at once.
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

/// `dst.copy_from_slice(src)` of one line, `dst` starting one, with
/// streaming stores where the target has them: a line put together in a
/// stage, with none of [`stream_copy`]'s bookkeeping.
pub(crate) fn stream_line<T: Copy>(dst: &mut [T], src: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::stream_line(dst, src);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Runs of `len` elements on a grid of two levels, `[(count, dst stride,
/// src stride); 2]`, outer first, with streaming stores, in one call: the
/// rows of a band of tiles. With a `granule` of 64 ([`stream_copy`]'s
/// lines) every destination run must start a line and be whole lines
/// long; with 16 ([`stream_copy_in_order`]'s, for runs written in the
/// order the destination lies) start and end on 16 bytes. `false`,
/// nothing written, otherwise. `ask`, `(at, step)`: run `k`, in the
/// order the runs go, asks for the `step` source elements from `at + k *
/// step` on ahead of their use (see [`next_span`]).
pub(crate) fn stream_runs<T: Copy>(
    dst: &mut [T],
    src: &[T],
    grid: [(usize, usize, usize); 2],
    len: usize,
    granule: usize,
    ask: Option<(usize, usize)>,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::stream_runs(x86_64::Stores::best(), dst, src, grid, len, granule, ask)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (dst, src, grid, len, granule, ask);
        false
    }
}

/// Bytes of a page: where the hardware's prefetchers stop a stream.
const PAGE: usize = 4096;

/// For runs of `T` on `grid` (as [`stream_runs`] takes it) that fill
/// their source span in short streams, the source offset of the span
/// after it, where the next band of a walk reads: each run then asks for
/// its share of that span, in order ([`stream_runs`]' `ask`, a run's
/// length a step). A stream is what the runs of one inner index read as
/// the outer one advances; hardware prefetchers learn a stream from its
/// first lines and stop at a page, so streams of a page or less (an
/// unpack's row of each tile across a band of `(8,128)` tiles: 32 streams
/// of 4 KiB; a pack of rows of 2 KiB) end before they are learned, while
/// longer ones (a pack of rows of 16 KiB) are better left to them.
/// Measured in one process (`benches/relayout_ab.py`, AMD EPYC Zen 4):
/// the `f32 T(8,128)` unpack took 0.73-0.82 of the time without asking,
/// the ragged one 0.91-0.93, the pack of rows of 2 KiB 0.67-0.77; asking
/// on the pack of rows of 16 KiB took 1.12-1.14.
pub(crate) fn next_span<T>(grid: [(usize, usize, usize); 2], len: usize) -> Option<usize> {
    let [(n0, _, s0), (n1, _, s1)] = grid;
    if n1 < 2 {
        return None;
    }
    let span = n0
        .checked_sub(1)?
        .checked_mul(s0)?
        .checked_add(n1.checked_sub(1)?.checked_mul(s1)?)?
        .checked_add(len)?;
    let runs = n0.checked_mul(n1)?.checked_mul(len)?;
    let stream = if s0 == len { n0 * len } else { len };
    let short = stream.saturating_mul(core::mem::size_of::<T>()) <= PAGE;
    (short && span == runs).then_some(span)
}

/// [`next_span`]'s request as `(at, step)` ([`stream_runs`]' `ask`), and
/// also for runs of tiles side by side along rows longer than they
/// cover (a pack's band of whole tiles, its ragged last tile apart), in
/// short streams: the next band is the rows under them, `rows * pitch`
/// on, and each run asks for its share of those rows, `pitch / tiles`
/// elements rounded up. Without asking, such bands were left to the
/// hardware's prefetchers, which stop at each band's short rows:
/// `f32[23831,704]{1,0:T(4,128)}` packed in 8.0-8.6 ms against 6.0-6.7,
/// `f32[24314,690]` 8.5-8.8 against 7.2 (alternated runs, AMD EPYC Zen
/// 4).
pub(crate) fn next_band<T>(grid: [(usize, usize, usize); 2], len: usize) -> Option<(usize, usize)> {
    if let Some(at) = next_span::<T>(grid, len) {
        return Some((at, len));
    }
    let [(tiles, _, step), (rows, _, pitch)] = grid;
    let covered = tiles.checked_mul(len)?;
    let short = covered.saturating_mul(core::mem::size_of::<T>()) <= PAGE;
    (step == len && covered < pitch && rows > 1 && short)
        .then(|| Some((rows.checked_mul(pitch)?, pitch.div_ceil(tiles))))
        .flatten()
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
            x86_64::stream_copy(x86_64::Stores::best(), dst, src, granule);
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
    x86_64::fence();
}
