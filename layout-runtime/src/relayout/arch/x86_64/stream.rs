//! Copies with streaming stores: whole lines from the widest registers the
//! CPU has, in-order 16-byte pieces around them.

use core::arch::asm;

use super::{Avx, Avx512};
use crate::relayout::arch::PAGE;

/// The registers [`stream_copy`] streams whole lines from, each with the
/// proof its instructions run: four 16-byte `movntdq` a line (SSE2, every
/// x86-64 CPU), two 32-byte `vmovntdq` (AVX) or one 64-byte `vmovntdq`
/// (AVX-512F). Fewer, wider stores a line is what keeps up with the
/// memory: a copy streaming 16 bytes at a time moved 0.7-0.8 of the
/// bytes the 64-byte one did in the same time. Against 16-byte stores
/// (`benches/relayout_ab.py`, `b / a` of three runs, Intel Xeon family 6
/// model 207, a loaded host): packs of `f32 T(8,128)` 0.89-0.96, of
/// rows of 512 `f32` 0.88-0.93, column-major into `T(8,128)` 0.69-1.00;
/// the unpacks, whose pieces are shorter, 0.98-1.06.
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) enum Stores {
    Sse2,
    Avx(Avx),
    Avx512(Avx512),
}

impl Stores {
    /// The widest this CPU runs (asked once, then answered from a cache).
    #[inline]
    pub(in crate::relayout::arch) fn best() -> Stores {
        match (Avx512::detect(), Avx::detect()) {
            (Some(p), _) => Stores::Avx512(p),
            (None, Some(p)) => Stores::Avx(p),
            (None, None) => Stores::Sse2,
        }
    }
}

/// How far ahead of its loads [`stream_copy`] asks for the source: far
/// enough to cover a miss's latency at full bandwidth, as the copies the
/// relayouts are measured against do. Runs no longer than this are copied
/// without: each prefetch would ask for a line past the run's end, which
/// the copy does not read (a tile's row of 512 bytes, a line staged on
/// the stack).
const PREFETCH_AHEAD: usize = 1024;

/// The loop of [`stream_copy`] over `$lines` bytes of whole lines, a
/// line a step from `{s} + {k}` to `{d} + {k}` while the negative `{k}`
/// counts up to 0: `$ask` (a prefetch of the source `{ahead}` bytes on,
/// or a comment naming `{ahead}`, as every operand must be used), then
/// `$moves`, the loads and streaming stores of one line; after the loop
/// `$end` once (`vzeroupper` after `ymm` or `zmm` moves, which leaves the
/// upper halves clean for the SSE code that follows; nothing after
/// SSE2's, as a CPU without AVX has no `vzeroupper`). An `asm!` for the
/// caller's `unsafe` block, whose safety argument covers the bytes and
/// the alignment.
macro_rules! stream_lines_asm {
    ($s:expr, $d:expr, $lines:expr, $ask:literal, $moves:literal, $end:literal) => {
        asm!(
            "2:",
            $ask,
            $moves,
            "add {k}, 64",
            "jnz 2b",
            $end,
            s = in(reg) $s.add($lines),
            d = in(reg) $d.add($lines),
            k = inout(reg) $lines.wrapping_neg() => _,
            ahead = const PREFETCH_AHEAD,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            options(nostack),
        )
    };
}

/// [`stream_lines_asm`] with the moves of `$stores`' registers.
macro_rules! stream_lines_by {
    ($stores:expr, $s:expr, $d:expr, $lines:expr, $ask:literal) => {
        match $stores {
            Stores::Sse2 => stream_lines_asm!(
                $s,
                $d,
                $lines,
                $ask,
                "movdqu xmm0, [{s} + {k}]
                 movdqu xmm1, [{s} + {k} + 16]
                 movdqu xmm2, [{s} + {k} + 32]
                 movdqu xmm3, [{s} + {k} + 48]
                 movntdq [{d} + {k}], xmm0
                 movntdq [{d} + {k} + 16], xmm1
                 movntdq [{d} + {k} + 32], xmm2
                 movntdq [{d} + {k} + 48], xmm3",
                ""
            ),
            Stores::Avx(_) => stream_lines_asm!(
                $s,
                $d,
                $lines,
                $ask,
                "vmovdqu ymm0, [{s} + {k}]
                 vmovdqu ymm1, [{s} + {k} + 32]
                 vmovntdq [{d} + {k}], ymm0
                 vmovntdq [{d} + {k} + 32], ymm1",
                "vzeroupper"
            ),
            Stores::Avx512(_) => stream_lines_asm!(
                $s,
                $d,
                $lines,
                $ask,
                "vmovdqu64 zmm0, [{s} + {k}]
                 vmovntdq [{d} + {k}], zmm0",
                "vzeroupper"
            ),
        }
    };
}

/// Copies `src` into `dst` (equal lengths), with streaming stores from
/// the first `granule`-aligned byte of `dst` to the last whole
/// `granule` (16 or 64 bytes), plain ones outside: the whole lines with
/// the registers of `stores`, the 16-byte pieces before the first line
/// and after the last (a granule of 16 only) with `movntdq`.
pub(in crate::relayout::arch) fn stream_copy<T: Copy>(
    stores: Stores,
    dst: &mut [T],
    src: &[T],
    granule: usize,
) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    let granule = if granule == 16 { 16 } else { 64 };
    let bytes = core::mem::size_of_val(src);
    let d = dst.as_mut_ptr().cast::<u8>();
    let s = src.as_ptr().cast::<u8>();
    let head = d.align_offset(granule).min(bytes);
    let body = (bytes - head) / granule * granule;
    // The streamed part: 16-byte pieces up to the first line, lines, and
    // 16-byte pieces after (both 0 for a granule of 64, whose body starts
    // a line and is whole lines).
    let lead = d.wrapping_add(head).align_offset(64).min(body);
    let lines = (body - lead) / 64 * 64;
    let rest = body - lead - lines;
    let tail = bytes - head - body;
    // SAFETY: `d` and `s` are valid for `bytes` bytes (two slices of `n`
    // elements of `T`), and a unique borrow cannot overlap a shared one.
    // `head + lead + lines + rest + tail == bytes`, so every access is
    // inside them; the prefetches, which may point past them, are hints
    // that never fault. `copy_nonoverlapping` and the assembly copy bytes
    // without reading them as typed values, so padding bytes of `T` may
    // be anything. The streamed bytes from `d + head` on are 16-byte
    // aligned, as `movntdq` needs (`head` reaches a multiple of the
    // granule, `lead` and `rest` are multiples of 16), and the lines from
    // `d + head + lead` on 64-byte aligned, as the 32- and 64-byte
    // `vmovntdq` need. The `Avx` and `Avx512` proofs show the CPU and OS
    // run the instructions of their loops. Each loop declares the vector
    // registers it uses clobbered (the `xmm` names cover the whole `ymm`
    // and `zmm` registers, whose upper halves no code built without those
    // features holds anything in) and the flags changed, and uses no
    // stack.
    // A call to `memcpy` for an empty head or tail costs as much as a
    // line's worth of copying, hence the tests.
    unsafe {
        if head > 0 {
            core::ptr::copy_nonoverlapping(s, d, head);
        }
        let (s, d) = (s.add(head), d.add(head));
        stream_span(stores, s, d, [lead, lines, rest]);
        let at = lead + lines + rest;
        if tail > 0 {
            core::ptr::copy_nonoverlapping(s.add(at), d.add(at), tail);
        }
    }
}

/// Runs of `len` elements on a grid of two levels, `[(count, dst stride,
/// src stride); 2]`, outer first: run `(x, i)` from `src[x * s0 + i *
/// s1..]` to `dst[x * d0 + i * d1..]`, streamed in one loop. With a
/// `granule` of 64 every run must start a line of the destination and be
/// whole lines long; with 16 (runs the caller writes in the order the
/// destination lies, so that a line split between two runs completes in
/// the write-combining buffer) every run must start and end on 16 bytes,
/// and streams its 16-byte pieces before and after its whole lines. A run
/// a call of [`stream_copy`], a tile's 512-byte rows spent as long in its
/// bookkeeping as in the copy: the `f32 T(8,128)` unpack into a
/// destination on a line took 9.6-10.0 ms against 6.4-7.0 for a loop
/// without the calls. With `ask`, `(at, step)`, run `k` (in the order
/// the runs go) asks for the `step` source elements from `at + k * step`
/// ahead of their use ([`next_span`](crate::relayout::arch::next_span)).
/// `false`, nothing written, for other runs.
pub(in crate::relayout::arch) fn stream_runs<T: Copy>(
    stores: Stores,
    dst: &mut [T],
    src: &[T],
    grid: [(usize, usize, usize); 2],
    len: usize,
    granule: usize,
    ask: Option<(usize, usize)>,
) -> bool {
    let size = core::mem::size_of::<T>();
    let bytes = len.saturating_mul(size);
    let granule = if granule == 16 { 16 } else { 64 };
    let [(n0, d0, s0), (n1, d1, s1)] = grid;
    // The last element of the last run, plus one, on each side.
    let span = |a: usize, b: usize| {
        (n0.checked_sub(1)?.checked_mul(a)?)
            .checked_add(n1.checked_sub(1)?.checked_mul(b)?)?
            .checked_add(len)
    };
    let (Some(dst_span), Some(src_span)) = (span(d0, d1), span(s0, s1)) else {
        return false;
    };
    if bytes == 0
        || bytes % granule != 0
        || dst.as_ptr().addr() % granule != 0
        || (n0 > 1 && d0.saturating_mul(size) % granule != 0)
        || (n1 > 1 && d1.saturating_mul(size) % granule != 0)
        || dst_span > dst.len()
        || src_span > src.len()
    {
        return false;
    }
    let d = dst.as_mut_ptr().cast::<u8>();
    let s = src.as_ptr().cast::<u8>();
    // A span asked for alongside, in order: run `k` asks for `step`
    // elements from `at + k * step`. Prefetches never fault, so the span
    // needs no bounds.
    let ask = ask.map(|(at, step)| (s.wrapping_add(at.wrapping_mul(size)), step * size));
    // Run `(x, i)`: `(source, destination)` offsets in bytes.
    let at = |x: usize, i: usize| ((x * s0 + i * s1) * size, (x * d0 + i * d1) * size);
    // Runs a page or more apart in the source along the inner level (or
    // whose inner pass spans more than [`WIDE_PASS`]), next to each other
    // along the outer one (a permutation that keeps the minor dim:
    // `[4096,256,16]{2,0,1}`), go in blocks: a page of runs
    // from each source row, a kilobyte into each destination row, the
    // next block's runs asked for as this block's go. In the order of the
    // grid, every run read a page the last had left, 4,096 pages a row of
    // the destination, more than the TLB holds, with nothing to tell the
    // prefetchers where the next lay: `f32[4096,256,16]{2,0,1}` packed in
    // 14.1-14.9 ms against 6.7-7.5 so (AMD EPYC Zen 5, caches flushed);
    // blocks of a kilobyte by four, two by four and one by eight ran
    // 9-11 ms. Runs of a line or less whose destinations lie back to back
    // go a destination row of the block a call ([`stream_gathered`]).
    let (near, far) = (s0.saturating_mul(size), s1.saturating_mul(size));
    let wide = far >= PAGE || (far > near && far.saturating_mul(n1) >= WIDE_PASS);
    if n0 > 1 && n1 > 1 && near < PAGE && wide {
        let (bx, bi) = ((4096 / bytes).max(1), (1024 / bytes).max(1));
        let blocks = (0..n0)
            .step_by(bx)
            .flat_map(|x0| (0..n1).step_by(bi).map(move |i0| (x0, i0)));
        let mut next = blocks.clone().skip(1);
        for (x0, i0) in blocks {
            // What each run adds to its source offset to reach its place in
            // the next block (which may lie before it, hence wrapping); the
            // last block asks for its own lines again, a hint spent.
            let to_next = next
                .next()
                .map_or(0, |(a0, j0)| at(a0, j0).0.wrapping_sub(at(x0, i0).0));
            if d1 == len && bytes <= SHORT_RUN_BYTES {
                let count = n1.min(i0 + bi) - i0;
                for x in x0..n0.min(x0 + bx) {
                    let (from, to) = at(x, i0);
                    // SAFETY: runs `(x, i0..i0 + count)` lie inside both
                    // slices, as each run of the loops does (the span check
                    // above); their destinations lie back to back (`d1 ==
                    // len`) from one on 16 bytes (the granule's checks),
                    // `bytes` a multiple of 16; the prefetches never
                    // fault.
                    unsafe {
                        stream_gathered(s.add(from), s1 * size, d.add(to), [count, bytes, to_next]);
                    }
                }
                continue;
            }
            for x in x0..n0.min(x0 + bx) {
                for i in i0..n1.min(i0 + bi) {
                    let (from, to) = at(x, i);
                    let next_run = s.wrapping_add(from.wrapping_add(to_next));
                    for line in (0..bytes).step_by(64) {
                        super::prefetch(next_run.wrapping_add(line));
                    }
                    // SAFETY: as for the runs of the loop after this one.
                    unsafe { stream_run(stores, s.add(from), d.add(to), bytes) };
                }
            }
        }
        return true;
    }
    for x in 0..n0 {
        for i in 0..n1 {
            if let Some((at, step)) = ask {
                let next = at.wrapping_add((x * n1 + i) * step);
                for line in (0..step).step_by(64) {
                    super::prefetch(next.wrapping_add(line));
                }
            }
            let (from, to) = at(x, i);
            // SAFETY: run `(x, i)` lies inside both slices: its elements
            // are below `(n0 - 1) * stride0 + (n1 - 1) * stride1 + len`,
            // checked against their lengths above (no product overflows),
            // so `len * size` bytes from each start are valid, the
            // destination's a unique borrow the shared source cannot
            // overlap; it starts and ends on a multiple of the granule
            // (the slice's start, both strides and the length are).
            unsafe { stream_run(stores, s.add(from), d.add(to), bytes) };
        }
    }
    true
}

/// One line, `src[..64 bytes]` into `dst`, which starts a line, by
/// four 16-byte streaming stores: for a line just put together in a
/// stack buffer ([`deinterleave_line_streamed`](super::deinterleave_line_streamed)),
/// copied with none of [`stream_copy`]'s bookkeeping. Through
/// `stream_copy`, which the compiler then kept out of line, the `bf16
/// (2,1)` and `s8 (4,1)` unpacks took 1.2-1.5 times as long, with the
/// samples on its prologue; and 16-byte loads are what the stores that
/// just wrote the buffer can forward to.
#[inline]
pub(in crate::relayout::arch) fn stream_line<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = 64 / core::mem::size_of::<T>();
    assert_eq!(n * core::mem::size_of::<T>(), 64);
    let (dst, src) = (&mut dst[..n], &src[..n]);
    let d = dst.as_mut_ptr().cast::<u8>();
    assert_eq!(d.addr() % 64, 0);
    // SAFETY: `dst` and `src` are 64 bytes each (`n` elements of a size
    // dividing 64, asserted, the slicing checked), a unique borrow and a
    // shared one, so disjoint; `d` starts a line (asserted), as
    // `movntdq` needs 16 bytes of alignment. The bytes move as bytes,
    // through four registers declared clobbered; no stack, no flags.
    unsafe {
        asm!(
            "movdqu xmm0, [{s}]",
            "movdqu xmm1, [{s} + 16]",
            "movdqu xmm2, [{s} + 32]",
            "movdqu xmm3, [{s} + 48]",
            "movntdq [{d}], xmm0",
            "movntdq [{d} + 16], xmm1",
            "movntdq [{d} + 32], xmm2",
            "movntdq [{d} + 48], xmm3",
            s = in(reg) src.as_ptr(),
            d = in(reg) d,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            options(nostack, preserves_flags),
        );
    }
}

/// `lead` bytes from `s` to `d` by 16-byte streaming stores, then
/// `lines` bytes of whole lines with the registers of `stores` (asking
/// for the source ahead when there are more than [`PREFETCH_AHEAD`]
/// bytes), then `rest` bytes by 16-byte stores again: the streamed part
/// of [`stream_copy`] and of each run of [`stream_runs`].
///
/// # Safety
///
/// `s` and `d` must be valid for `lead + lines + rest` bytes and not
/// overlap; `d` must be 16-byte aligned and `d + lead` 64-byte aligned
/// where `lines` is not 0; `lead`, `lines` and `rest` must be multiples of
/// 16, `lines` of 64.
#[allow(clippy::inline_always)]
#[inline(always)]
unsafe fn stream_span(stores: Stores, s: *const u8, d: *mut u8, [lead, lines, rest]: [usize; 3]) {
    // SAFETY: the caller's contract covers each part: the pieces' bytes
    // and 16-byte alignment, the lines' bytes and 64-byte alignment; the
    // prefetches may point past the bytes and never fault.
    unsafe {
        stream_pieces(s, d, lead);
        let (s, d) = (s.add(lead), d.add(lead));
        if lines > PREFETCH_AHEAD {
            stream_lines_by!(stores, s, d, lines, "prefetcht1 [{s} + {k} + {ahead}]");
        } else if lines > 0 {
            stream_lines_by!(stores, s, d, lines, "# {ahead}");
        }
        stream_pieces(s.add(lines), d.add(lines), rest);
    }
}

/// One run of [`stream_runs`], `bytes` from `s` to `d`: its 16-byte
/// pieces up to its first line boundary, its whole lines, its pieces
/// after. Always inlined: a call a run, out of its loop, took a sixth
/// longer on the `f32[32768,512]` pack.
///
/// # Safety
///
/// `s` and `d` must be valid for `bytes` bytes and not overlap, `d` and
/// `bytes` multiples of 16.
#[allow(clippy::inline_always)]
#[inline(always)]
unsafe fn stream_run(stores: Stores, s: *const u8, d: *mut u8, bytes: usize) {
    let lead = d.align_offset(64).min(bytes);
    let lines = (bytes - lead) / 64 * 64;
    // SAFETY: the caller's contract; `lead` and `bytes - lead - lines` are
    // multiples of 16 under a line and `d + lead` starts one, as
    // `stream_span` needs.
    unsafe { stream_span(stores, s, d, [lead, lines, bytes - lead - lines]) };
}

/// The loop of [`stream_pieces`] and [`stream_gathered`], labelled
/// `$label`: `{k}` bytes from `$s` to `{d}`, 16 at a time, by streaming
/// stores through `xmm0`; `$s`, `{d}` and `{k}` change, and the flags.
#[rustfmt::skip]
macro_rules! pieces16 {
    ($label:literal, $s:literal) => {
        concat!(
            $label, ":\n",
            "movdqu xmm0, [", $s, "]\n",
            "movntdq [{d}], xmm0\n",
            "add ", $s, ", 16\n",
            "add {d}, 16\n",
            "sub {k}, 16\n",
            "jnz ", $label, "b\n",
        )
    };
}

/// Runs of this length or shorter go through [`stream_gathered`] in
/// [`stream_runs`]' blocks: a run a call of the line kernel spent its time
/// finding where the run's lines began (`f32[8192,256,8]{2,0,1}` packed
/// in 10.1-10.4 ms so, 6.2-6.7 now; runs of 96 bytes took longer).
const SHORT_RUN_BYTES: usize = 64;

/// Bytes of source one pass of [`stream_runs`]' inner level may span
/// before its grid goes in blocks even with runs less than a page apart:
/// past the L2 cache, the next pass reads every line again from further
/// out (`bf16[16,4096,32,16]{3,1,2,0}` packed, runs 1 KiB apart, took
/// four times the copy).
const WIDE_PASS: usize = 1 << 20;

/// `count` runs of `bytes` (a multiple of 16) from `s`, `stride` bytes
/// apart, to `d` and on, back to back, by 16-byte streaming stores; each
/// run first asks for its first and last lines `ahead` bytes on (the
/// address wraps: a hint may point anywhere).
///
/// # Safety
///
/// `s + k * stride` must be valid for `bytes` for each `k < count`, `d`
/// for `count * bytes`, 16-byte aligned, and not overlap them; `count`
/// and `bytes` not 0.
#[inline]
unsafe fn stream_gathered(
    s: *const u8,
    stride: usize,
    d: *mut u8,
    [count, bytes, ahead]: [usize; 3],
) {
    debug_assert!(count > 0 && bytes > 0 && bytes % 16 == 0);
    let last = ahead.wrapping_add(bytes - 1);
    // SAFETY: the caller's contract: each run's bytes, the destination's
    // and the alignment `movntdq` needs; the counts are not 0, so each
    // loop ends. Two registers and the flags change, declared; no stack.
    unsafe {
        asm!(
            "2:",
            "prefetcht1 [{s} + {ahead}]",
            "prefetcht1 [{s} + {last}]",
            "mov {p}, {s}",
            "mov {k}, {bytes}",
            pieces16!("3", "{p}"),
            "add {s}, {stride}",
            "sub {n}, 1",
            "jnz 2b",
            s = inout(reg) s => _,
            d = inout(reg) d => _,
            n = inout(reg) count => _,
            p = out(reg) _,
            k = out(reg) _,
            bytes = in(reg) bytes,
            stride = in(reg) stride,
            ahead = in(reg) ahead,
            last = in(reg) last,
            out("xmm0") _,
            options(nostack),
        );
    }
}

/// `len` bytes (a multiple of 16) from `s` to `d` by
/// 16-byte streaming stores.
///
/// # Safety
///
/// `s` and `d` must be valid for `len` bytes and not overlap, `d` 16-byte
/// aligned.
#[inline]
unsafe fn stream_pieces(s: *const u8, d: *mut u8, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY: the caller's contract: `len` bytes either side, the
    // alignment `movntdq` needs; one register, declared clobbered, and
    // no stack.
    unsafe {
        asm!(
            pieces16!("2", "{s}"),
            s = inout(reg) s => _,
            d = inout(reg) d => _,
            k = inout(reg) len => _,
            out("xmm0") _,
            options(nostack),
        );
    }
}
