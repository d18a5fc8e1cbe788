//! The inline assembly, the only place with `core::arch`: here the proofs
//! of the CPU's features, prefetches, the 4x4 and 8x8 transposes and the
//! interleaves of a few rows; the streaming copies in `stream`, the 16x16
//! line tiles in `tile16`, the AVX-512 kernels in `groups` (bands of
//! `(2,1)` and `(4,1)` tiles), `joins` (tiles into rows anywhere in their
//! lines) and `nibbles` (`s4` values).

use core::arch::asm;

/// Asks for the cache line at `p` ahead of its use, into the L2 cache:
/// requests into the L1 cache hold one of its few fill buffers until the
/// line arrives, and a stream of them far ahead keeps the loads that need
/// their lines now waiting for buffers (`s8[8192,8192]` `(4,1)` unpacked
/// in 7.3 ms against 8.3, `bf16[48629,690]` `(2,1)` in 11.7 against 13.6,
/// `f32[16384,1000]` packed in 0.8 of the time; 2-vCPU Intel Xeon).
#[inline]
pub(super) fn prefetch(p: *const u8) {
    // SAFETY: `prefetcht1` is a hint: it reads nothing the program can
    // observe, writes nothing and never faults, whatever `p` is (an
    // address outside the process is simply ignored), so any pointer
    // value will do, including one past the end of a slice.
    unsafe {
        asm!("prefetcht1 [{p}]", p = in(reg) p, options(nostack, preserves_flags, readonly));
    }
}

/// [`prefetch`] into the L1 cache, for a line needed soon after.
#[inline]
pub(super) fn prefetch_near(p: *const u8) {
    // SAFETY: `prefetcht0` is a hint, as `prefetcht1` in `prefetch`: any
    // pointer value will do.
    unsafe {
        asm!("prefetcht0 [{p}]", p = in(reg) p, options(nostack, preserves_flags, readonly));
    }
}

/// A zero-sized proof that the CPU runs a feature's instructions (and
/// the OS saves the registers they use), made only by its `detect`,
/// which asks the CPU once (CPUID and XGETBV) and then answers from a
/// cache: each kernel that needs the feature takes one.
// Each `$feature` is a `tt`: `cpufeatures::new!` matches feature names
// token by token, which a `literal` fragment no longer is.
macro_rules! feature_proof {
    ($ty:ident, $cpu:ident, $($feature:tt),+; $name:literal, $bits:literal) => {
        cpufeatures::new!($cpu, $($feature),+);

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

feature_proof!(Avx, cpu_avx, "avx"; "AVX", "256");

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

feature_proof!(Avx512, cpu_avx512, "avx512f"; "AVX-512F", "512");
feature_proof!(Avx2, cpu_avx2, "avx2"; "AVX2", "256");
feature_proof!(Avx512Bw, cpu_avx512bw, "avx512f", "avx512bw"; "AVX-512F and BW", "512");
feature_proof!(Avx512Vbmi, cpu_avx512vbmi, "avx512f", "avx512bw", "avx512vbmi"; "AVX-512F, BW and VBMI", "512");
feature_proof!(Avx512BwBmi2, cpu_avx512bw_bmi2, "avx512f", "avx512bw", "bmi2"; "AVX-512F and BW and BMI2", "512");

/// [`greatest`](super::greatest), vectorized for AVX2.
#[inline]
pub(super) fn greatest_avx2(p: Avx2, bytes: &[u8], bias: u8) -> u8 {
    /// # Safety
    ///
    /// The CPU runs AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn greatest(_: Avx2, bytes: &[u8], bias: u8) -> u8 {
        super::greatest(bytes, bias)
    }
    // SAFETY: `p` shows the CPU runs AVX2; the loop reads `bytes` only,
    // through the slice.
    unsafe { greatest(p, bytes, bias) }
}

/// A 16x16 transpose of 4-byte units, in the 512-bit registers of
/// [`Avx512Bw`] kernels (defined before the modules that use it): `zmm0`..`zmm15` (register `c`
/// holding unit `x` of row `c`) become the columns (register `x` holding
/// unit `x` of every row, in order); `zmm16`..`zmm31` are scratch.
macro_rules! transpose16 {
    () => {
        concat!(
            "vpunpckldq zmm16, zmm0, zmm1\n",
            "vpunpckhdq zmm17, zmm0, zmm1\n",
            "vpunpckldq zmm18, zmm2, zmm3\n",
            "vpunpckhdq zmm19, zmm2, zmm3\n",
            "vpunpckldq zmm20, zmm4, zmm5\n",
            "vpunpckhdq zmm21, zmm4, zmm5\n",
            "vpunpckldq zmm22, zmm6, zmm7\n",
            "vpunpckhdq zmm23, zmm6, zmm7\n",
            "vpunpckldq zmm24, zmm8, zmm9\n",
            "vpunpckhdq zmm25, zmm8, zmm9\n",
            "vpunpckldq zmm26, zmm10, zmm11\n",
            "vpunpckhdq zmm27, zmm10, zmm11\n",
            "vpunpckldq zmm28, zmm12, zmm13\n",
            "vpunpckhdq zmm29, zmm12, zmm13\n",
            "vpunpckldq zmm30, zmm14, zmm15\n",
            "vpunpckhdq zmm31, zmm14, zmm15\n",
            "vpunpcklqdq zmm0, zmm16, zmm18\n",
            "vpunpckhqdq zmm1, zmm16, zmm18\n",
            "vpunpcklqdq zmm2, zmm17, zmm19\n",
            "vpunpckhqdq zmm3, zmm17, zmm19\n",
            "vpunpcklqdq zmm4, zmm20, zmm22\n",
            "vpunpckhqdq zmm5, zmm20, zmm22\n",
            "vpunpcklqdq zmm6, zmm21, zmm23\n",
            "vpunpckhqdq zmm7, zmm21, zmm23\n",
            "vpunpcklqdq zmm8, zmm24, zmm26\n",
            "vpunpckhqdq zmm9, zmm24, zmm26\n",
            "vpunpcklqdq zmm10, zmm25, zmm27\n",
            "vpunpckhqdq zmm11, zmm25, zmm27\n",
            "vpunpcklqdq zmm12, zmm28, zmm30\n",
            "vpunpckhqdq zmm13, zmm28, zmm30\n",
            "vpunpcklqdq zmm14, zmm29, zmm31\n",
            "vpunpckhqdq zmm15, zmm29, zmm31\n",
            // Register 4g + m: in lane q, unit 4q + m of rows 4g..4g+3.
            "vshufi32x4 zmm16, zmm0, zmm4, 0x88\n",
            "vshufi32x4 zmm17, zmm1, zmm5, 0x88\n",
            "vshufi32x4 zmm18, zmm2, zmm6, 0x88\n",
            "vshufi32x4 zmm19, zmm3, zmm7, 0x88\n",
            "vshufi32x4 zmm20, zmm0, zmm4, 0xdd\n",
            "vshufi32x4 zmm21, zmm1, zmm5, 0xdd\n",
            "vshufi32x4 zmm22, zmm2, zmm6, 0xdd\n",
            "vshufi32x4 zmm23, zmm3, zmm7, 0xdd\n",
            "vshufi32x4 zmm24, zmm8, zmm12, 0x88\n",
            "vshufi32x4 zmm25, zmm9, zmm13, 0x88\n",
            "vshufi32x4 zmm26, zmm10, zmm14, 0x88\n",
            "vshufi32x4 zmm27, zmm11, zmm15, 0x88\n",
            "vshufi32x4 zmm28, zmm8, zmm12, 0xdd\n",
            "vshufi32x4 zmm29, zmm9, zmm13, 0xdd\n",
            "vshufi32x4 zmm30, zmm10, zmm14, 0xdd\n",
            "vshufi32x4 zmm31, zmm11, zmm15, 0xdd\n",
            "vshufi32x4 zmm0, zmm16, zmm24, 0x88\n",
            "vshufi32x4 zmm1, zmm17, zmm25, 0x88\n",
            "vshufi32x4 zmm2, zmm18, zmm26, 0x88\n",
            "vshufi32x4 zmm3, zmm19, zmm27, 0x88\n",
            "vshufi32x4 zmm4, zmm20, zmm28, 0x88\n",
            "vshufi32x4 zmm5, zmm21, zmm29, 0x88\n",
            "vshufi32x4 zmm6, zmm22, zmm30, 0x88\n",
            "vshufi32x4 zmm7, zmm23, zmm31, 0x88\n",
            "vshufi32x4 zmm8, zmm16, zmm24, 0xdd\n",
            "vshufi32x4 zmm9, zmm17, zmm25, 0xdd\n",
            "vshufi32x4 zmm10, zmm18, zmm26, 0xdd\n",
            "vshufi32x4 zmm11, zmm19, zmm27, 0xdd\n",
            "vshufi32x4 zmm12, zmm20, zmm28, 0xdd\n",
            "vshufi32x4 zmm13, zmm21, zmm29, 0xdd\n",
            "vshufi32x4 zmm14, zmm22, zmm30, 0xdd\n",
            "vshufi32x4 zmm15, zmm23, zmm31, 0xdd\n",
        )
    };
}

/// `$m!(k, ...)` for `k` from 0 to 15, concatenated: a step for each of
/// the 16 rows or runs of a 16x16 tile.
macro_rules! each16 {
    ($m:ident $(, $arg:tt)*) => {
        concat!(
            $m!(0 $(, $arg)*), $m!(1 $(, $arg)*), $m!(2 $(, $arg)*), $m!(3 $(, $arg)*),
            $m!(4 $(, $arg)*), $m!(5 $(, $arg)*), $m!(6 $(, $arg)*), $m!(7 $(, $arg)*),
            $m!(8 $(, $arg)*), $m!(9 $(, $arg)*), $m!(10 $(, $arg)*), $m!(11 $(, $arg)*),
            $m!(12 $(, $arg)*), $m!(13 $(, $arg)*), $m!(14 $(, $arg)*), $m!(15 $(, $arg)*),
        )
    };
}

/// The indices of a joined line into `zmm$x`: `64 - h` on from `zmm16`
/// (bytes `0..64`), with `h` in `ecx`, so that `vpermt2b` takes the last
/// `h` bytes of the piece before and the first `64 - h` of the piece.
/// `rdx` is scratch.
macro_rules! join_index {
    ($x:literal) => {
        concat!(
            "mov edx, 64\n",
            "sub edx, ecx\n",
            "vpbroadcastb zmm",
            $x,
            ", edx\n",
            "vpaddb zmm",
            $x,
            ", zmm",
            $x,
            ", zmm16\n",
        )
    };
}

/// `vpermt2b zmm$t, zmm$x, zmm$other`: each byte of `zmm$t` replaced by
/// the byte of `zmm$t` (indices 0-63) or `zmm$other` (64-127) that
/// `zmm$x` names; the one spelling of the joins of pieces into lines.
macro_rules! vpermt2b {
    ($t:literal, $x:literal, $other:literal) => {
        concat!("vpermt2b zmm", $t, ", zmm", $x, ", zmm", $other, "\n")
    };
}

/// The line that the 64-byte piece in `zmm$k`, at `rax`, starts in,
/// joined from the piece before it on its run (slot `$k` of `{carry}`,
/// 64 bytes each) and itself, stored as `$store` (`join_store!`); the
/// piece then waits in its slot. With `h` the piece's bytes into its
/// line (`ecx`), the line takes the last `h` bytes of the piece before
/// and the first `64 - h` of this one (`vpermt2b` with indices `64 - h`
/// on from `zmm16`, which holds bytes `0..64`). `zmm17`, `zmm18`, `rcx`
/// and `rdx` are scratch; `rax` ends on the line.
macro_rules! join_line {
    ($k:literal, $store:ident) => {
        concat!(
            "mov ecx, eax\n",
            "and ecx, 63\n",
            join_index!(17),
            "vmovdqu64 zmm18, [{carry} + 64*",
            $k,
            "]\n",
            vpermt2b!(18, 17, $k),
            "vmovdqu64 [{carry} + 64*",
            $k,
            "], zmm",
            $k,
            "\n",
            "and rax, -64\n",
            join_store!($store),
        )
    };
}

/// A joined line (`zmm18` for the line at `rax`, `h` bytes in `cl`)
/// streamed; or, on a run's first line, whose first `h` bytes are not the
/// run's, stored plainly from the piece's start (`head`); or, on the line
/// past a run's last piece, only its first `h` bytes, plainly (`tail`).
/// `rdx` is scratch.
macro_rules! join_store {
    (stream) => {
        "vmovntdq [rax], zmm18\n"
    };
    (head) => {
        concat!(
            "mov rdx, -1\n",
            "shl rdx, cl\n",
            "kmovq k1, rdx\n",
            "vmovdqu8 [rax]{{k1}}, zmm18\n",
        )
    };
    (tail) => {
        concat!(
            "mov edx, 1\n",
            "shl rdx, cl\n",
            "dec rdx\n",
            "kmovq k1, rdx\n",
            "vmovdqu8 [rax]{{k1}}, zmm18\n",
        )
    };
}

/// `asm!` for the AVX-512 kernels (operands written last, each followed
/// by a comma): every vector register and `k1` and `k2` declared
/// clobbered whole (zmm0-15 too, whose upper halves
/// `vzeroupper` writes), no stack; the flags change. Declaring all
/// costs nothing where the code around keeps no vector values.
macro_rules! asm_avx512 {
    ($($body:tt)*) => {
        core::arch::asm!(
            $($body)*
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            out("k1") _, out("k2") _,
            options(nostack),
        )
    };
}

/// The line that piece `zmm$piece` of a run starts in, put together in
/// `zmm$t` and streamed to `{out} + $at`: the last `h` bytes of the piece
/// before (`zmm$before`) and the piece's first `64 - h` (the index in
/// `zmm$x`, from `join_index!`).
macro_rules! run_line {
    ($x:literal, $t:literal; $before:literal, $piece:literal, $at:literal) => {
        concat!(
            run_join!($x, $t; $before, $piece),
            "vmovntdq [{out} + ",
            $at,
            "], zmm",
            $t,
            "\n",
        )
    };
}

/// `zmm$t` made from `zmm$before` and `zmm$piece` by the indices in
/// `zmm$x` (`vpermt2b`), both left as they were.
macro_rules! run_join {
    ($x:literal, $t:literal; $before:literal, $piece:literal) => {
        concat!(
            "vmovdqa64 zmm",
            $t,
            ", zmm",
            $before,
            "\n",
            vpermt2b!($t, $x, $piece),
        )
    };
}

/// The end of a run: the last `{shift}` bytes of its last piece
/// (`zmm$last`), past the run's last whole line, written plainly at
/// `{out}` (the index in `zmm$x`, `zmm$t` scratch). `rcx` and `rdx` are
/// scratch.
macro_rules! run_tail {
    ($x:literal, $t:literal, $last:literal) => {
        concat!(
            run_join!($x, $t; $last, $last),
            "mov ecx, {shift:e}\n",
            "mov edx, 1\n",
            "shl rdx, cl\n",
            "dec rdx\n",
            "kmovq k1, rdx\n",
            "vmovdqu8 [{out}] {{k1}}, zmm",
            $t,
            "\n",
        )
    };
}

mod groups;
mod joins;
mod nibbles;
mod rows;
mod stream;
mod tile16;

pub(super) use groups::{
    band_tiles, deinterleave_plain, deinterleave_run, deinterleave_steps, deinterleave_tiles,
    interleave_steps, run_groups, Ahead, BandTiles, GroupRun, Piece,
};
pub(super) use nibbles::{
    squeeze_pairs as squeeze_nibble_pairs, unpack64 as unpack_nibbles64,
    unpack_band as unpack_nibble_band, unpack_run as unpack_nibble_run,
    unpack_tile16 as unpack_nibble_tile16, unpack_tile16_joined as unpack_nibble_tile16_joined,
    NibbleBand, NibbleRun, Steps as NibbleSteps, Store,
};

pub(super) use joins::join_band16;
pub(super) use rows::{rows_in_order, InOrderRows};
pub(super) use stream::{stream_copy, stream_line, stream_runs, Stores};
pub(super) use tile16::{tile16_avx2, tile16_avx2_blend, tile16_avx2_even, tile16_avx2_even_run};

/// Orders the streaming stores before anything written after.
pub(super) fn fence() {
    // SAFETY: `sfence` only orders stores; it reads and writes nothing.
    unsafe { asm!("sfence", options(nostack, preserves_flags)) }
}
