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
pub(super) fn tile4<T: Copy>(dst: &mut [T], d: usize, dd: usize, src: &[T], s: usize, ss: usize) {
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

feature_proof!(Avx512, cpu_avx512, "avx512f", "AVX-512F", "512");

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
pub(super) enum Stores {
    Sse2,
    Avx(Avx),
    Avx512(Avx512),
}

impl Stores {
    /// The widest this CPU runs (asked once, then answered from a cache).
    #[inline]
    pub(super) fn best() -> Stores {
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
pub(super) fn stream_copy<T: Copy>(stores: Stores, dst: &mut [T], src: &[T], granule: usize) {
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
/// without the calls. `false`, nothing written, for other runs.
pub(super) fn stream_runs<T: Copy>(
    stores: Stores,
    dst: &mut [T],
    src: &[T],
    grid: [(usize, usize, usize); 2],
    len: usize,
    granule: usize,
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
    for x in 0..n0 {
        for i in 0..n1 {
            // SAFETY: run `(x, i)` lies inside both slices: its elements
            // are below `(n0 - 1) * stride0 + (n1 - 1) * stride1 + len`,
            // checked against their lengths above (no product overflows),
            // so `len * size` bytes from each start are valid, the
            // destination's a unique borrow the shared source cannot
            // overlap. The run starts and ends on a multiple of the granule
            // (the slice's start, both strides and the length are), so
            // `lead` and `rest` are multiples of 16 under a line, `lead +
            // lines + rest == bytes`, the 16-byte stores are on 16 bytes
            // as `movntdq` needs and the lines start lines, as the 32- and
            // 64-byte `vmovntdq` need; the prefetches may point past the
            // runs and never fault. The loops' registers and flags are
            // declared as in `stream_copy`.
            unsafe {
                let s = s.add((x * s0 + i * s1) * size);
                let d = d.add((x * d0 + i * d1) * size);
                let lead = d.align_offset(64).min(bytes);
                let lines = (bytes - lead) / 64 * 64;
                stream_span(stores, s, d, [lead, lines, bytes - lead - lines]);
            }
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
pub(super) fn stream_line<T: Copy>(dst: &mut [T], src: &[T]) {
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
            stream_lines_by!(stores, s, d, lines, "prefetcht0 [{s} + {k} + {ahead}]");
        } else if lines > 0 {
            stream_lines_by!(stores, s, d, lines, "# {ahead}");
        }
        stream_pieces(s.add(lines), d.add(lines), rest);
    }
}

/// `len` bytes (a multiple of 16, under a line) from `s` to `d` by
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
            "2:",
            "movdqu xmm0, [{s}]",
            "movntdq [{d}], xmm0",
            "add {s}, 16",
            "add {d}, 16",
            "sub {k}, 16",
            "jnz 2b",
            s = inout(reg) s => _,
            d = inout(reg) d => _,
            k = inout(reg) len => _,
            out("xmm0") _,
            options(nostack),
        );
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
