//! `s4` values in `(8,1)` groups, 64 columns a step: eight rows of bytes,
//! each holding one value in its low four bits, into the 256 bytes of
//! their 64 groups of four, and back. The steps run in AVX-512BW
//! registers or, on CPUs without them, as two 32-column halves in AVX2's
//! ([`Steps`] picks).
//!
//! A group of column `x` is four bytes; byte `q` holds row `2q`'s value
//! in its low half and row `2q + 1`'s in its high half. From the rows,
//! each pair `2q, 2q + 1` makes one vector of bytes `q` (a shift and a
//! bitwise select), and the four vectors of bytes interleave into groups
//! within each 128-bit lane (bytes, then pairs of bytes); a 4x4 transpose
//! of lanes then puts the groups in column order. The way back runs the
//! same steps in reverse (the lane transpose is its own inverse).

use core::arch::asm;

use super::{Avx2, Avx512Bw, Avx512Vbmi};
use crate::relayout::arch::Seen;

/// `0x0f` in every byte: the low four bits each value keeps.
const LOW: u32 = 0x0f0f_0f0f;

/// The 4x4 transpose of 128-bit lanes of `zmm0`..`zmm3` (register `k`
/// then holds lane `k` of each, in order), `zmm8`..`zmm11` scratch: the
/// last step of [`pack64`], and, as it undoes itself, the first of
/// [`unpack64`].
macro_rules! lanes4x4 {
    () => {
        concat!(
            "vshufi64x2 zmm8, zmm0, zmm1, 0x44\n",
            "vshufi64x2 zmm9, zmm2, zmm3, 0x44\n",
            "vshufi64x2 zmm10, zmm0, zmm1, 0xee\n",
            "vshufi64x2 zmm11, zmm2, zmm3, 0xee\n",
            "vshufi64x2 zmm0, zmm8, zmm9, 0x88\n",
            "vshufi64x2 zmm1, zmm8, zmm9, 0xdd\n",
            "vshufi64x2 zmm2, zmm10, zmm11, 0x88\n",
            "vshufi64x2 zmm3, zmm10, zmm11, 0xdd\n",
        )
    };
}

/// The assembly of [`pack64`], storing `zmm0` to `zmm3` at `{o}` with
/// `$store`; for the caller's `unsafe` block, whose argument covers the
/// bytes and the alignment.
macro_rules! pack64_asm {
    ($store:expr, $r0:expr, $r3:expr, $r6:expr, $pitch:expr, $o:expr, $seen:expr, $bias:expr) => {
        asm!(
            "vpbroadcastd zmm15, {low:e}",
            "vmovdqu64 zmm0, [{r0}]",
            "vmovdqu64 zmm1, [{r0} + {p}]",
            "vmovdqu64 zmm2, [{r0} + {p}*2]",
            "vmovdqu64 zmm3, [{r3}]",
            "vmovdqu64 zmm4, [{r0} + {p}*4]",
            "vmovdqu64 zmm5, [{r3} + {p}*2]",
            "vmovdqu64 zmm6, [{r6}]",
            "vmovdqu64 zmm7, [{r6} + {p}]",
            // The value check: each byte plus the bias into the running
            // maxima at `{seen}`, while the rows are whole.
            "vpbroadcastb zmm14, {bias:e}",
            "vpaddb zmm8, zmm0, zmm14",
            "vpaddb zmm9, zmm1, zmm14",
            "vpaddb zmm10, zmm2, zmm14",
            "vpaddb zmm11, zmm3, zmm14",
            "vpmaxub zmm8, zmm8, zmm9",
            "vpmaxub zmm10, zmm10, zmm11",
            "vpaddb zmm9, zmm4, zmm14",
            "vpaddb zmm11, zmm5, zmm14",
            "vpaddb zmm12, zmm6, zmm14",
            "vpaddb zmm13, zmm7, zmm14",
            "vpmaxub zmm9, zmm9, zmm11",
            "vpmaxub zmm12, zmm12, zmm13",
            "vpmaxub zmm8, zmm8, zmm10",
            "vpmaxub zmm9, zmm9, zmm12",
            "vpmaxub zmm8, zmm8, zmm9",
            "vpmaxub zmm8, zmm8, [{seen}]",
            "vmovdqu64 [{seen}], zmm8",
            // Each odd row's low four bits to the top of its bytes (a
            // shift of 16-bit lanes moves nothing the select keeps),
            // then bytes `q` = low bits of row 2q, high of row 2q + 1:
            // `zmm15 ? even : odd` bit by bit (truth table 0xe4).
            "vpsllw zmm1, zmm1, 4",
            "vpsllw zmm3, zmm3, 4",
            "vpsllw zmm5, zmm5, 4",
            "vpsllw zmm7, zmm7, 4",
            "vpternlogd zmm0, zmm1, zmm15, 0xe4",
            "vpternlogd zmm2, zmm3, zmm15, 0xe4",
            "vpternlogd zmm4, zmm5, zmm15, 0xe4",
            "vpternlogd zmm6, zmm7, zmm15, 0xe4",
            // Bytes 0 and 1, 2 and 3 side by side, then the pairs: in
            // lane k, groups of columns 16k + 4j.. in register j.
            "vpunpcklbw zmm8, zmm0, zmm2",
            "vpunpckhbw zmm9, zmm0, zmm2",
            "vpunpcklbw zmm10, zmm4, zmm6",
            "vpunpckhbw zmm11, zmm4, zmm6",
            "vpunpcklwd zmm0, zmm8, zmm10",
            "vpunpckhwd zmm1, zmm8, zmm10",
            "vpunpcklwd zmm2, zmm9, zmm11",
            "vpunpckhwd zmm3, zmm9, zmm11",
            // The 4x4 transpose of lanes: output k takes lane k of each.
            lanes4x4!(),
            $store,
            "vzeroupper",
            low = in(reg) LOW,
            r0 = in(reg) $r0,
            r3 = in(reg) $r3,
            r6 = in(reg) $r6,
            p = in(reg) $pitch,
            o = in(reg) $o,
            seen = in(reg) $seen,
            bias = in(reg) $bias,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        )
    };
}

/// The streaming stores of one zmm register's 64 bytes at `{o} + $at`,
/// 16 at a time (`xmm4` holds each upper quarter in turn).
macro_rules! stream16 {
    ($zmm:literal, $xmm:literal, $at:literal) => {
        concat!(
            "vmovntdq [{o} + ",
            $at,
            "], ",
            $xmm,
            "\n",
            "vextracti32x4 xmm4, ",
            $zmm,
            ", 1\n",
            "vmovntdq [{o} + ",
            $at,
            " + 16], xmm4\n",
            "vextracti32x4 xmm4, ",
            $zmm,
            ", 2\n",
            "vmovntdq [{o} + ",
            $at,
            " + 32], xmm4\n",
            "vextracti32x4 xmm4, ",
            $zmm,
            ", 3\n",
            "vmovntdq [{o} + ",
            $at,
            " + 48], xmm4\n",
        )
    };
}

/// How [`pack64`] stores: plainly, or streamed 64 or 16 bytes at a time
/// (a destination on a line, or on 16 bytes only: a `Vec`'s data starts
/// 16 bytes into one, and a walk writes its storage in order, so the
/// write-combining buffer completes the lines split between steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::relayout::arch) enum Store {
    Plain,
    Stream64,
    Stream16,
}

/// The places of one pack step, checked: rows 0, 3 and 6 of `rows`
/// (`pitch` apart), whose rows 0 and 7 are in bounds, so that the rows
/// between are too, each 64 bytes; and `out[..256]`, on the boundary
/// `store` needs (asserted).
fn pack_places(
    out: &mut [u8],
    rows: &[u8],
    pitch: usize,
    store: Store,
) -> ([*const u8; 3], *mut u8) {
    let out = &mut out[..256];
    let (r0, r7) = (rows[..64].as_ptr(), rows[7 * pitch..][..64].as_ptr());
    let (r3, r6) = (r0.wrapping_add(3 * pitch), r0.wrapping_add(6 * pitch));
    debug_assert!(r6.wrapping_add(pitch) == r7);
    let o = out.as_mut_ptr();
    let align = match store {
        Store::Plain => 1,
        Store::Stream64 => 64,
        Store::Stream16 => 16,
    };
    assert!(o.addr() % align == 0);
    ([r0, r3, r6], o)
}

/// The places of one unpack step, checked as [`pack_places`]' rows, and
/// `pitch >= 64` (asserted), so that the eight rows' 64 bytes are
/// disjoint; `input[..256]`.
fn unpack_places(rows: &mut [u8], pitch: usize, input: &[u8]) -> ([*mut u8; 3], *const u8) {
    let input = &input[..256];
    assert!(pitch >= 64);
    let r7 = rows[7 * pitch..][..64].as_mut_ptr();
    let r0 = rows[..64].as_mut_ptr();
    let (r3, r6) = (r0.wrapping_add(3 * pitch), r0.wrapping_add(6 * pitch));
    debug_assert!(r6.wrapping_add(pitch) == r7);
    ([r0, r3, r6], input.as_ptr())
}

/// The rows of one step, `rows[k*pitch..][..64]` for `k < 8`, into 64
/// groups, `out[..256]`; the low four bits of each byte are packed, the
/// rest ignored, and each byte plus `seen`'s bias goes into its running
/// maxima. Streamed stores need `out` on their boundary (asserted).
#[inline]
pub(in crate::relayout::arch) fn pack64(
    _: Avx512Bw,
    out: &mut [u8],
    rows: &[u8],
    pitch: usize,
    store: Store,
    seen: &mut Seen,
) {
    let ([r0, r3, r6], o) = pack_places(out, rows, pitch, store);
    // SAFETY: the `Avx512Bw` token proves the CPU and OS run the AVX-512F
    // and AVX-512BW instructions below. Rows 0 and 7 were bounds-checked
    // by `pack_places` and rows 1 to 6 lie between them (`r0 +
    // k*pitch`, `0 < k < 7`), inside `rows`; each is 64 bytes, read as
    // bytes. `out` is a checked unique slice of 256 bytes, which the
    // shared `rows` cannot overlap, on the boundary its streaming stores
    // need (asserted: 64 bytes for a zmm register's `vmovntdq`, 16 for
    // an xmm one's). `seen.max` is 64 bytes of a unique borrow, read and
    // written whole. The vector
    // registers are declared clobbered whole (`clobber_abi`); no stack, no
    // flags, and `vzeroupper` leaves the upper halves clean.
    let (maxima, bias) = (seen.max.as_mut_ptr(), u32::from(seen.bias));
    unsafe {
        match store {
            Store::Plain => pack64_asm!(
                concat!(
                    "vmovdqu64 [{o}], zmm0\n",
                    "vmovdqu64 [{o} + 64], zmm1\n",
                    "vmovdqu64 [{o} + 128], zmm2\n",
                    "vmovdqu64 [{o} + 192], zmm3",
                ),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
            Store::Stream64 => pack64_asm!(
                concat!(
                    "vmovntdq [{o}], zmm0\n",
                    "vmovntdq [{o} + 64], zmm1\n",
                    "vmovntdq [{o} + 128], zmm2\n",
                    "vmovntdq [{o} + 192], zmm3",
                ),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
            Store::Stream16 => pack64_asm!(
                concat!(
                    stream16!("zmm0", "xmm0", "0"),
                    stream16!("zmm1", "xmm1", "64"),
                    stream16!("zmm2", "xmm2", "128"),
                    stream16!("zmm3", "xmm3", "192"),
                ),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
        }
    }
}

/// Half of [`pack64_avx2`]'s step: the 32 columns from byte `$c` of
/// each row into the 128 bytes of their groups, in `ymm4` to `ymm7` (in
/// order), the values' running maxima in `ymm13`; the low halves' mask in
/// `ymm15`, the bias in `ymm14`. The steps of [`pack64`] in 256-bit
/// registers, without a bitwise select (a mask, a mask's complement and
/// an or instead) and with the lanes put in order by `vperm2i128`.
macro_rules! pack32_avx2 {
    ($c:literal) => {
        concat!(
            "vmovdqu ymm0, [{r0} + ",
            $c,
            "]\n",
            "vmovdqu ymm1, [{r0} + {p} + ",
            $c,
            "]\n",
            "vmovdqu ymm2, [{r0} + {p}*2 + ",
            $c,
            "]\n",
            "vmovdqu ymm3, [{r3} + ",
            $c,
            "]\n",
            "vmovdqu ymm4, [{r0} + {p}*4 + ",
            $c,
            "]\n",
            "vmovdqu ymm5, [{r3} + {p}*2 + ",
            $c,
            "]\n",
            "vmovdqu ymm6, [{r6} + ",
            $c,
            "]\n",
            "vmovdqu ymm7, [{r6} + {p} + ",
            $c,
            "]\n",
            // The value check, while the rows are whole.
            "vpaddb ymm8, ymm0, ymm14\n",
            "vpaddb ymm9, ymm1, ymm14\n",
            "vpaddb ymm10, ymm2, ymm14\n",
            "vpaddb ymm11, ymm3, ymm14\n",
            "vpmaxub ymm8, ymm8, ymm9\n",
            "vpmaxub ymm10, ymm10, ymm11\n",
            "vpmaxub ymm13, ymm13, ymm8\n",
            "vpmaxub ymm13, ymm13, ymm10\n",
            "vpaddb ymm8, ymm4, ymm14\n",
            "vpaddb ymm9, ymm5, ymm14\n",
            "vpaddb ymm10, ymm6, ymm14\n",
            "vpaddb ymm11, ymm7, ymm14\n",
            "vpmaxub ymm8, ymm8, ymm9\n",
            "vpmaxub ymm10, ymm10, ymm11\n",
            "vpmaxub ymm13, ymm13, ymm8\n",
            "vpmaxub ymm13, ymm13, ymm10\n",
            // Bytes `q`: the low bits of row 2q, those of row 2q + 1 above.
            "vpsllw ymm1, ymm1, 4\n",
            "vpsllw ymm3, ymm3, 4\n",
            "vpsllw ymm5, ymm5, 4\n",
            "vpsllw ymm7, ymm7, 4\n",
            "vpand ymm0, ymm0, ymm15\n",
            "vpand ymm2, ymm2, ymm15\n",
            "vpand ymm4, ymm4, ymm15\n",
            "vpand ymm6, ymm6, ymm15\n",
            "vpandn ymm1, ymm15, ymm1\n",
            "vpandn ymm3, ymm15, ymm3\n",
            "vpandn ymm5, ymm15, ymm5\n",
            "vpandn ymm7, ymm15, ymm7\n",
            "vpor ymm0, ymm0, ymm1\n",
            "vpor ymm2, ymm2, ymm3\n",
            "vpor ymm4, ymm4, ymm5\n",
            "vpor ymm6, ymm6, ymm7\n",
            // Into groups within each lane: in lane k of register j, the
            // groups of columns 16k + 4j...
            "vpunpcklbw ymm8, ymm0, ymm2\n",
            "vpunpckhbw ymm9, ymm0, ymm2\n",
            "vpunpcklbw ymm10, ymm4, ymm6\n",
            "vpunpckhbw ymm11, ymm4, ymm6\n",
            "vpunpcklwd ymm0, ymm8, ymm10\n",
            "vpunpckhwd ymm1, ymm8, ymm10\n",
            "vpunpcklwd ymm2, ymm9, ymm11\n",
            "vpunpckhwd ymm3, ymm9, ymm11\n",
            // ...and the lanes in column order.
            "vperm2i128 ymm4, ymm0, ymm1, 0x20\n",
            "vperm2i128 ymm5, ymm2, ymm3, 0x20\n",
            "vperm2i128 ymm6, ymm0, ymm1, 0x31\n",
            "vperm2i128 ymm7, ymm2, ymm3, 0x31\n",
        )
    };
}

/// The stores of [`pack32_avx2`]'s `ymm4` to `ymm7` at `{o} + $at`, with
/// `$op` a 32-byte store (`vmovdqu` or `vmovntdq`).
macro_rules! store32x4 {
    ($op:literal, $at:literal) => {
        concat!(
            $op,
            " [{o} + ",
            $at,
            "], ymm4\n",
            $op,
            " [{o} + ",
            $at,
            " + 32], ymm5\n",
            $op,
            " [{o} + ",
            $at,
            " + 64], ymm6\n",
            $op,
            " [{o} + ",
            $at,
            " + 96], ymm7\n",
        )
    };
}

/// [`store32x4`] streamed 16 bytes at a time (`xmm8` holds each upper
/// half in turn).
macro_rules! stream16x8 {
    ($at:literal) => {
        concat!(
            "vmovntdq [{o} + ",
            $at,
            "], xmm4\n",
            "vextracti128 xmm8, ymm4, 1\n",
            "vmovntdq [{o} + ",
            $at,
            " + 16], xmm8\n",
            "vmovntdq [{o} + ",
            $at,
            " + 32], xmm5\n",
            "vextracti128 xmm8, ymm5, 1\n",
            "vmovntdq [{o} + ",
            $at,
            " + 48], xmm8\n",
            "vmovntdq [{o} + ",
            $at,
            " + 64], xmm6\n",
            "vextracti128 xmm8, ymm6, 1\n",
            "vmovntdq [{o} + ",
            $at,
            " + 80], xmm8\n",
            "vmovntdq [{o} + ",
            $at,
            " + 96], xmm7\n",
            "vextracti128 xmm8, ymm7, 1\n",
            "vmovntdq [{o} + ",
            $at,
            " + 112], xmm8\n",
        )
    };
}

/// The assembly of [`pack64_avx2`], the two halves stored by `$first`
/// and `$second`; for the caller's `unsafe` block, whose argument covers
/// the bytes and the alignment.
macro_rules! pack64_avx2_asm {
    ($first:expr, $second:expr, $r0:expr, $r3:expr, $r6:expr, $pitch:expr, $o:expr, $seen:expr, $bias:expr) => {
        asm!(
            "vmovd xmm15, {low:e}",
            "vpbroadcastd ymm15, xmm15",
            "vmovd xmm14, {bias:e}",
            "vpbroadcastb ymm14, xmm14",
            "vmovdqu ymm13, [{seen}]",
            pack32_avx2!("0"),
            $first,
            pack32_avx2!("32"),
            $second,
            "vmovdqu [{seen}], ymm13",
            "vzeroupper",
            low = in(reg) LOW,
            r0 = in(reg) $r0,
            r3 = in(reg) $r3,
            r6 = in(reg) $r6,
            p = in(reg) $pitch,
            o = in(reg) $o,
            seen = in(reg) $seen,
            bias = in(reg) $bias,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        )
    };
}

/// [`pack64`] in AVX2's 256-bit registers, 32 columns at a time: the same
/// step (64 columns into 256 bytes), the values' maxima in the first 32
/// bytes of `seen`.
#[inline]
pub(in crate::relayout::arch) fn pack64_avx2(
    _: Avx2,
    out: &mut [u8],
    rows: &[u8],
    pitch: usize,
    store: Store,
    seen: &mut Seen,
) {
    let ([r0, r3, r6], o) = pack_places(out, rows, pitch, store);
    // SAFETY: the `Avx2` token proves the CPU and OS run the AVX2
    // instructions below. Rows 0 and 7 were bounds-checked by
    // `pack_places` and rows 1 to 6 lie between them (`r0 + k*pitch`,
    // `0 < k < 7`), inside `rows`; each is 64 bytes, read as bytes, 32 at
    // a time.
    // `out` is a checked unique slice of 256 bytes, which the shared `rows`
    // cannot overlap, on the boundary its streaming stores need (asserted:
    // 32 bytes for a ymm register's `vmovntdq`, on a line, 16 for an xmm
    // one's). `seen.max` is 64 bytes of a unique borrow, of which the
    // first 32 are read and written. The vector registers are declared
    // clobbered whole (`clobber_abi`); no stack, no flags, and
    // `vzeroupper` leaves the upper halves clean.
    let (maxima, bias) = (seen.max.as_mut_ptr(), u32::from(seen.bias));
    unsafe {
        match store {
            Store::Plain => pack64_avx2_asm!(
                store32x4!("vmovdqu", "0"),
                store32x4!("vmovdqu", "128"),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
            Store::Stream64 => pack64_avx2_asm!(
                store32x4!("vmovntdq", "0"),
                store32x4!("vmovntdq", "128"),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
            Store::Stream16 => pack64_avx2_asm!(
                stream16x8!("0"),
                stream16x8!("128"),
                r0,
                r3,
                r6,
                pitch,
                o,
                maxima,
                bias
            ),
        }
    }
}

/// The registers the 64-column steps run in: AVX-512BW's where the CPU
/// has them ([`pack64`], [`unpack64`]), else AVX2's ([`pack64_avx2`],
/// [`unpack64_avx2`]).
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) enum Steps {
    Avx512(Avx512Bw),
    Avx2(Avx2),
}

impl Steps {
    /// The widest this CPU runs, if any.
    pub(in crate::relayout::arch) fn best() -> Option<Steps> {
        Avx512Bw::detect()
            .map(Steps::Avx512)
            .or_else(|| Avx2::detect().map(Steps::Avx2))
    }

    /// [`pack64`] in these registers.
    #[inline]
    pub(in crate::relayout::arch) fn pack64(
        self,
        out: &mut [u8],
        rows: &[u8],
        pitch: usize,
        store: Store,
        seen: &mut Seen,
    ) {
        match self {
            Steps::Avx512(p) => pack64(p, out, rows, pitch, store, seen),
            Steps::Avx2(p) => pack64_avx2(p, out, rows, pitch, store, seen),
        }
    }

    /// [`unpack64`] in these registers.
    #[inline]
    pub(in crate::relayout::arch) fn unpack64(
        self,
        rows: &mut [u8],
        pitch: usize,
        input: &[u8],
        signed: bool,
    ) {
        match self {
            Steps::Avx512(p) => unpack64(p, rows, pitch, input, signed),
            Steps::Avx2(p) => unpack64_avx2(p, rows, pitch, input, signed),
        }
    }
}

/// The constants of [`unpack64_rows`]: the low halves' mask in `zmm15`,
/// the sign (`{sign}`, from [`sign_bit`]) in `zmm14`, the byte shuffle
/// in `zmm13` (`{spread}`, [`SPREAD`]).
macro_rules! unpack64_constants {
    () => {
        concat!(
            "vpbroadcastd zmm15, {low:e}\n",
            "vpbroadcastd zmm14, {sign:e}\n",
            "vbroadcasti32x4 zmm13, [{spread}]\n",
        )
    };
}

/// The sign bit of each byte's four bits when the values are `signed`
/// (`s4` as `i8`), else 0: `(v ^ s) - s` extends a four-bit `v` with sign
/// bit `s`, and leaves it alone with `s` 0.
fn sign_bit(signed: bool) -> u32 {
    if signed {
        0x0808_0808
    } else {
        0
    }
}

/// [`unpack64`]'s 64 groups from `{i}` into eight rows of 64 bytes: rows
/// 0, 2, 4 and 6 in `zmm0..zmm3`, rows 1, 3, 5 and 7 in `zmm4..zmm7`;
/// the byte shuffle in `zmm13` ([`SPREAD`]), the sign in `zmm14`, the low
/// halves' mask in `zmm15`; `zmm8..zmm11` scratch.
macro_rules! unpack64_rows {
    () => {
        concat!(
            "vmovdqu64 zmm0, [{i}]\n",
            "vmovdqu64 zmm1, [{i} + 64]\n",
            "vmovdqu64 zmm2, [{i} + 128]\n",
            "vmovdqu64 zmm3, [{i} + 192]\n",
            // The lane transpose of `pack64`, which undoes itself: lane
            // k of register j holds the groups of columns 16k + 4j...
            lanes4x4!(),
            // ...whose bytes `q` gather in dword `q` of each lane...
            "vpshufb zmm0, zmm0, zmm13\n",
            "vpshufb zmm1, zmm1, zmm13\n",
            "vpshufb zmm2, zmm2, zmm13\n",
            "vpshufb zmm3, zmm3, zmm13\n",
            // ...and the dwords `q` of the four registers make bytes `q`
            // of 16 columns in order, in every lane.
            "vpunpckldq zmm8, zmm0, zmm1\n",
            "vpunpckhdq zmm9, zmm0, zmm1\n",
            "vpunpckldq zmm10, zmm2, zmm3\n",
            "vpunpckhdq zmm11, zmm2, zmm3\n",
            "vpunpcklqdq zmm0, zmm8, zmm10\n",
            "vpunpckhqdq zmm1, zmm8, zmm10\n",
            "vpunpcklqdq zmm2, zmm9, zmm11\n",
            "vpunpckhqdq zmm3, zmm9, zmm11\n",
            // Bytes `q` into rows 2q (low halves) and 2q + 1 (high).
            "vpsrlw zmm4, zmm0, 4\n",
            "vpsrlw zmm5, zmm1, 4\n",
            "vpsrlw zmm6, zmm2, 4\n",
            "vpsrlw zmm7, zmm3, 4\n",
            "vpandd zmm0, zmm0, zmm15\n",
            "vpandd zmm1, zmm1, zmm15\n",
            "vpandd zmm2, zmm2, zmm15\n",
            "vpandd zmm3, zmm3, zmm15\n",
            "vpandd zmm4, zmm4, zmm15\n",
            "vpandd zmm5, zmm5, zmm15\n",
            "vpandd zmm6, zmm6, zmm15\n",
            "vpandd zmm7, zmm7, zmm15\n",
            "vpxord zmm0, zmm0, zmm14\n",
            "vpxord zmm1, zmm1, zmm14\n",
            "vpxord zmm2, zmm2, zmm14\n",
            "vpxord zmm3, zmm3, zmm14\n",
            "vpxord zmm4, zmm4, zmm14\n",
            "vpxord zmm5, zmm5, zmm14\n",
            "vpxord zmm6, zmm6, zmm14\n",
            "vpxord zmm7, zmm7, zmm14\n",
            "vpsubb zmm0, zmm0, zmm14\n",
            "vpsubb zmm1, zmm1, zmm14\n",
            "vpsubb zmm2, zmm2, zmm14\n",
            "vpsubb zmm3, zmm3, zmm14\n",
            "vpsubb zmm4, zmm4, zmm14\n",
            "vpsubb zmm5, zmm5, zmm14\n",
            "vpsubb zmm6, zmm6, zmm14\n",
            "vpsubb zmm7, zmm7, zmm14\n",
        )
    };
}

/// The way back of [`pack64`]: 64 groups, `input[..256]`, into eight rows
/// of bytes, `rows[k*pitch..][..64]`, each value's four bits extended to
/// a byte with its sign bit if `signed` (an `s4` as `i8`) or with zeros.
#[inline]
pub(in crate::relayout::arch) fn unpack64(
    _: Avx512Bw,
    rows: &mut [u8],
    pitch: usize,
    input: &[u8],
    signed: bool,
) {
    let ([r0, r3, r6], input) = unpack_places(rows, pitch, input);
    let sign = sign_bit(signed);
    // SAFETY: the `Avx512Bw` token proves the CPU and OS run the AVX-512F
    // and AVX-512BW instructions below. Rows 0 and 7 were bounds-checked
    // by `unpack_places` and rows 1 to 6 lie between them, inside the
    // unique `rows`; they are `pitch >= 64` apart (asserted), so the
    // eight 64-byte runs written are disjoint. `input` is a checked slice
    // of 256 bytes, read as bytes, and cannot overlap the unique `rows`.
    // Registers, stack and flags as in `pack64`.
    unsafe {
        asm!(
            unpack64_constants!(),
            unpack64_rows!(),
            "vmovdqu64 [{r0}], zmm0",
            "vmovdqu64 [{r0} + {p}], zmm4",
            "vmovdqu64 [{r0} + {p}*2], zmm1",
            "vmovdqu64 [{r3}], zmm5",
            "vmovdqu64 [{r0} + {p}*4], zmm2",
            "vmovdqu64 [{r3} + {p}*2], zmm6",
            "vmovdqu64 [{r6}], zmm3",
            "vmovdqu64 [{r6} + {p}], zmm7",
            "vzeroupper",
            low = in(reg) LOW,
            sign = in(reg) sign,
            spread = in(reg) SPREAD.as_ptr(),
            i = in(reg) input,
            r0 = in(reg) r0,
            r3 = in(reg) r3,
            r6 = in(reg) r6,
            p = in(reg) pitch,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        );
    }
}

/// Half of [`unpack64_avx2`]'s step: the 32 groups (128 bytes) from
/// `{i} + $at` into the bytes of 32 columns of the eight rows, rows 0, 2,
/// 4 and 6 in `ymm0` to `ymm3`, rows 1, 3, 5 and 7 in `ymm4` to `ymm7`;
/// the byte shuffle in `ymm13`, the sign in `ymm14`, the low halves' mask
/// in `ymm15`. The steps of [`unpack64_rows`] in 256-bit registers, the
/// lanes first put back by `vperm2i128`.
macro_rules! unpack32_avx2 {
    ($at:literal) => {
        concat!(
            "vmovdqu ymm4, [{i} + ",
            $at,
            "]\n",
            "vmovdqu ymm5, [{i} + ",
            $at,
            " + 32]\n",
            "vmovdqu ymm6, [{i} + ",
            $at,
            " + 64]\n",
            "vmovdqu ymm7, [{i} + ",
            $at,
            " + 96]\n",
            // Lane k of register j: the groups of columns 16k + 4j...
            "vperm2i128 ymm0, ymm4, ymm6, 0x20\n",
            "vperm2i128 ymm1, ymm4, ymm6, 0x31\n",
            "vperm2i128 ymm2, ymm5, ymm7, 0x20\n",
            "vperm2i128 ymm3, ymm5, ymm7, 0x31\n",
            // ...whose bytes `q` gather in dword `q` of each lane...
            "vpshufb ymm0, ymm0, ymm13\n",
            "vpshufb ymm1, ymm1, ymm13\n",
            "vpshufb ymm2, ymm2, ymm13\n",
            "vpshufb ymm3, ymm3, ymm13\n",
            // ...and the dwords `q` of the four registers make bytes `q`
            // of 16 columns in order, in both lanes.
            "vpunpckldq ymm8, ymm0, ymm1\n",
            "vpunpckhdq ymm9, ymm0, ymm1\n",
            "vpunpckldq ymm10, ymm2, ymm3\n",
            "vpunpckhdq ymm11, ymm2, ymm3\n",
            "vpunpcklqdq ymm0, ymm8, ymm10\n",
            "vpunpckhqdq ymm1, ymm8, ymm10\n",
            "vpunpcklqdq ymm2, ymm9, ymm11\n",
            "vpunpckhqdq ymm3, ymm9, ymm11\n",
            // Bytes `q` into rows 2q (low halves) and 2q + 1 (high).
            "vpsrlw ymm4, ymm0, 4\n",
            "vpsrlw ymm5, ymm1, 4\n",
            "vpsrlw ymm6, ymm2, 4\n",
            "vpsrlw ymm7, ymm3, 4\n",
            "vpand ymm0, ymm0, ymm15\n",
            "vpand ymm1, ymm1, ymm15\n",
            "vpand ymm2, ymm2, ymm15\n",
            "vpand ymm3, ymm3, ymm15\n",
            "vpand ymm4, ymm4, ymm15\n",
            "vpand ymm5, ymm5, ymm15\n",
            "vpand ymm6, ymm6, ymm15\n",
            "vpand ymm7, ymm7, ymm15\n",
            "vpxor ymm0, ymm0, ymm14\n",
            "vpxor ymm1, ymm1, ymm14\n",
            "vpxor ymm2, ymm2, ymm14\n",
            "vpxor ymm3, ymm3, ymm14\n",
            "vpxor ymm4, ymm4, ymm14\n",
            "vpxor ymm5, ymm5, ymm14\n",
            "vpxor ymm6, ymm6, ymm14\n",
            "vpxor ymm7, ymm7, ymm14\n",
            "vpsubb ymm0, ymm0, ymm14\n",
            "vpsubb ymm1, ymm1, ymm14\n",
            "vpsubb ymm2, ymm2, ymm14\n",
            "vpsubb ymm3, ymm3, ymm14\n",
            "vpsubb ymm4, ymm4, ymm14\n",
            "vpsubb ymm5, ymm5, ymm14\n",
            "vpsubb ymm6, ymm6, ymm14\n",
            "vpsubb ymm7, ymm7, ymm14\n",
        )
    };
}

/// The stores of [`unpack32_avx2`]'s rows, 32 bytes each, `$c` bytes
/// into each row.
macro_rules! rows32_avx2 {
    ($c:literal) => {
        concat!(
            "vmovdqu [{r0} + ",
            $c,
            "], ymm0\n",
            "vmovdqu [{r0} + {p} + ",
            $c,
            "], ymm4\n",
            "vmovdqu [{r0} + {p}*2 + ",
            $c,
            "], ymm1\n",
            "vmovdqu [{r3} + ",
            $c,
            "], ymm5\n",
            "vmovdqu [{r0} + {p}*4 + ",
            $c,
            "], ymm2\n",
            "vmovdqu [{r3} + {p}*2 + ",
            $c,
            "], ymm6\n",
            "vmovdqu [{r6} + ",
            $c,
            "], ymm3\n",
            "vmovdqu [{r6} + {p} + ",
            $c,
            "], ymm7\n",
        )
    };
}

/// [`unpack64`] in AVX2's 256-bit registers, 32 columns at a time.
#[inline]
pub(in crate::relayout::arch) fn unpack64_avx2(
    _: Avx2,
    rows: &mut [u8],
    pitch: usize,
    input: &[u8],
    signed: bool,
) {
    let ([r0, r3, r6], input) = unpack_places(rows, pitch, input);
    let sign = sign_bit(signed);
    // SAFETY: the `Avx2` token proves the CPU and OS run the AVX2
    // instructions below. Rows 0 and 7 were bounds-checked by
    // `unpack_places` and rows 1 to 6 lie between them, inside the unique
    // `rows`;
    // they are `pitch >= 64` apart (asserted), so the eight 64-byte runs
    // written (32 bytes at a time) are disjoint. `input` is a checked
    // slice of 256 bytes, read as bytes, and cannot overlap the unique
    // `rows`; `SPREAD` is 16 bytes. Registers, stack and flags as in
    // `pack64_avx2`.
    unsafe {
        asm!(
            "vmovd xmm15, {low:e}",
            "vpbroadcastd ymm15, xmm15",
            "vmovd xmm14, {sign:e}",
            "vpbroadcastd ymm14, xmm14",
            "vbroadcasti128 ymm13, [{spread}]",
            unpack32_avx2!("0"),
            rows32_avx2!("0"),
            unpack32_avx2!("128"),
            rows32_avx2!("32"),
            "vzeroupper",
            low = in(reg) LOW,
            sign = in(reg) sign,
            spread = in(reg) SPREAD.as_ptr(),
            i = in(reg) input,
            r0 = in(reg) r0,
            r3 = in(reg) r3,
            r6 = in(reg) r6,
            p = in(reg) pitch,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        );
    }
}

/// The byte shuffle of [`unpack64`] within a lane of four groups: byte
/// `q` of group `g` (`4g + q`) to byte `4q + g`.
static SPREAD: [u8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];

/// `s4` values a byte each into bytes of two, along one logical row:
/// `out[k]` takes the low four bits of `src[2k]` low and those of
/// `src[2k + 1]` high, for `k < 32 * steps`, 64 bytes of `src` a step.
/// Each byte read, plus `seen`'s bias, goes into its running maxima.
///
/// # Safety
///
/// The CPU runs AVX-512F and BW (the caller holds the proof); `src` is
/// readable for `64 * steps` bytes and `out` writable for `32 * steps`,
/// and the two do not overlap.
#[inline]
pub(in crate::relayout::arch) unsafe fn squeeze_pairs(
    _: Avx512Bw,
    out: *mut u8,
    src: *const u8,
    steps: usize,
    seen: &mut Seen,
) {
    let (maxima, bias) = (seen.max.as_mut_ptr(), u32::from(seen.bias));
    // SAFETY: the caller's contract covers `src` and `out` for the steps
    // taken; `seen.max`, 64 bytes, is borrowed uniquely. The vector
    // registers are declared clobbered whole (`clobber_abi`); no stack,
    // and `vzeroupper` leaves the upper halves clean.
    unsafe {
        asm!(
            "vpbroadcastd zmm15, {low:e}",
            "vpbroadcastb zmm14, {bias:e}",
            "vmovdqu64 zmm13, [{seen}]",
            "test rcx, rcx",
            "jz 3f",
            "2:",
            "vmovdqu64 zmm0, [rsi]",
            "vpaddb zmm1, zmm0, zmm14",
            "vpmaxub zmm13, zmm13, zmm1",
            // Each 16-bit lane `lo | hi << 8` of two values in its low
            // four bits: `lo | hi << 4` in the low byte once the lane is
            // or-ed with itself shifted down by four, which the narrowing
            // store keeps.
            "vpandd zmm0, zmm0, zmm15",
            "vpsrlw zmm1, zmm0, 4",
            "vpord zmm0, zmm0, zmm1",
            "vpmovwb ymm0, zmm0",
            "vmovdqu [rdi], ymm0",
            "add rsi, 64",
            "add rdi, 32",
            "dec rcx",
            "jnz 2b",
            "3:",
            "vmovdqu64 [{seen}], zmm13",
            "vzeroupper",
            low = in(reg) LOW,
            bias = in(reg) bias,
            seen = in(reg) maxima,
            inout("rsi") src => _,
            inout("rdi") out => _,
            inout("rcx") steps => _,
            clobber_abi("sysv64"),
            options(nostack),
        );
    }
}

/// Run `$x` of [`unpack_tile16`] (64 bytes at `runs[$x]`) into `zmm$x`.
macro_rules! load_run {
    ($x:literal) => {
        concat!(
            "mov rax, [{runs} + 8*",
            $x,
            "]\n",
            "vmovdqu64 zmm",
            $x,
            ", [rax]\n"
        )
    };
}

/// The 16 groups in `zmm$c` spread to a byte a value, into `zmm18` and
/// `zmm19` (each byte widened to 16 bits, its high half moved up to the
/// second byte: `zmm29` selects those bits, `zmm30` keeps four of each
/// byte), extended by the sign in `zmm28`; `zmm16` and `zmm17` scratch.
macro_rules! spread {
    ($c:literal) => {
        concat!(
            "vextracti64x4 ymm17, zmm",
            $c,
            ", 1\n",
            "vpmovzxbw zmm16, ymm",
            $c,
            "\n",
            "vpmovzxbw zmm17, ymm17\n",
            "vpsllw zmm18, zmm16, 4\n",
            "vpsllw zmm19, zmm17, 4\n",
            "vpternlogd zmm18, zmm16, zmm29, 0xe4\n",
            "vpternlogd zmm19, zmm17, zmm29, 0xe4\n",
            "vpandd zmm18, zmm18, zmm30\n",
            "vpandd zmm19, zmm19, zmm30\n",
            "vpxord zmm18, zmm18, zmm28\n",
            "vpxord zmm19, zmm19, zmm28\n",
            "vpsubb zmm18, zmm18, zmm28\n",
            "vpsubb zmm19, zmm19, zmm28\n",
        )
    };
}

/// Row `$c` of [`unpack_tile16`]: its values ([`spread`]) stored at
/// `rows[$c]`.
macro_rules! spread_row {
    ($c:literal) => {
        concat!(
            spread!($c),
            "mov rax, [{rows} + 8*",
            $c,
            "]\n",
            "vmovdqu64 [rax], zmm18\n",
            "vmovdqu64 [rax + 64], zmm19\n",
        )
    };
}

/// Row `$c` of [`unpack_tile16_joined`]: its 128 values ([`spread`])
/// joined to the 64 bytes before them on the row (slot `$c` of
/// `{carry}`) into the two lines from the one they start in (with `h`
/// their bytes into it, in `ecx`: the last `h` bytes before and the
/// first `64 - h`, then the next 64; `vpermt2b` with indices `64 - h` on
/// from `zmm31`), the first stored as `$store` ([`join_store`], from
/// `zmm18`), the second streamed; the last 64 values then wait in the
/// slot.
macro_rules! spread_join_row {
    ($c:literal, $store:ident) => {
        concat!(
            spread!($c),
            "mov rax, [{rows} + 8*",
            $c,
            "]\n",
            "mov ecx, eax\n",
            "and ecx, 63\n",
            "mov edx, 64\n",
            "sub edx, ecx\n",
            "vpbroadcastb zmm17, edx\n",
            "vpaddb zmm17, zmm17, zmm31\n",
            "vmovdqu64 zmm16, [{carry} + 64*",
            $c,
            "]\n",
            "vpermt2b zmm16, zmm17, zmm18\n",
            "vpermt2b zmm18, zmm17, zmm19\n",
            "vmovdqu64 [{carry} + 64*",
            $c,
            "], zmm19\n",
            "vmovdqa64 zmm19, zmm18\n",
            "vmovdqa64 zmm18, zmm16\n",
            "and rax, -64\n",
            "vmovntdq [rax + 64], zmm19\n",
            join_store!($store),
        )
    };
}

/// A transposed tile of `s4` `(8,1)` groups, unpacked: the 16 runs at
/// `runs` (64 bytes, 16 groups of 8 values each) into 128 values of each
/// of the 16 rows at `rows`, group `c` of run `x` into values `8x..8x +
/// 8` of row `c`, each value's four bits extended to a byte with its sign
/// bit if `signed` or with zeros.
///
/// # Safety
///
/// The CPU runs AVX-512F and BW (the caller holds the proof); each of
/// `runs` is readable for 64 bytes, each of `rows` writable for 128, and
/// none of the rows overlaps a run.
#[inline]
pub(in crate::relayout::arch) unsafe fn unpack_tile16(
    _: Avx512Bw,
    rows: &[*mut u8; 16],
    runs: &[*const u8; 16],
    signed: bool,
) {
    let (rows, runs) = (rows.as_ptr(), runs.as_ptr());
    let sign = sign_bit(signed);
    // SAFETY: the caller's contract covers the runs and rows; the pointer
    // tables are borrowed whole. The vector registers are declared
    // clobbered whole (`clobber_abi`), `rax` is a declared scratch; no
    // stack, no flags, and `vzeroupper` leaves the upper halves clean.
    unsafe {
        asm!(
            each16!(load_run),
            transpose16!(),
            "vpbroadcastd zmm28, {sign:e}",
            "vpbroadcastd zmm29, {high:e}",
            "vpbroadcastd zmm30, {low:e}",
            each16!(spread_row),
            "vzeroupper",
            sign = in(reg) sign,
            high = in(reg) 0x0f00_0f00u32,
            low = in(reg) LOW,
            rows = in(reg) rows,
            runs = in(reg) runs,
            out("rax") _,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        );
    }
}

/// The assembly of [`unpack_tile16_joined`], the first line of each row
/// stored as `$store`.
macro_rules! unpack_tile16_joined_asm {
    ($store:ident, $rows:expr, $runs:expr, $sign:expr, $carry:expr) => {
        asm!(
            each16!(load_run),
            transpose16!(),
            "vpbroadcastd zmm28, {sign:e}",
            "vpbroadcastd zmm29, {high:e}",
            "vpbroadcastd zmm30, {low:e}",
            "vmovdqu64 zmm31, [{iota}]",
            each16!(spread_join_row, $store),
            "vzeroupper",
            sign = in(reg) $sign,
            high = in(reg) 0x0f00_0f00u32,
            low = in(reg) LOW,
            iota = in(reg) super::joins::IOTA.as_ptr(),
            rows = in(reg) $rows,
            runs = in(reg) $runs,
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
}

/// [`unpack_tile16`] into rows that start anywhere in their lines: each
/// row's 128 bytes join the 64 before them on the row, held in
/// `carry[64c..]`, into the two lines from the one they start in, which
/// go out whole with streaming stores, or, for a row's first piece
/// (`first`), the first only from the row's start and plainly; the last
/// 64 bytes then wait in the slot for the next tile.
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); each
/// of `runs` is readable for 64 bytes; `carry` is readable and writable
/// for 1024; for each row, the two lines from the one its start is in are
/// writable, the first only from the row's start if `first`; no run
/// overlaps a line or `carry`.
#[inline]
pub(in crate::relayout::arch) unsafe fn unpack_tile16_joined(
    _: Avx512Vbmi,
    rows: &[*mut u8; 16],
    runs: &[*const u8; 16],
    signed: bool,
    carry: *mut u8,
    first: bool,
) {
    let (rows, runs) = (rows.as_ptr(), runs.as_ptr());
    let sign = sign_bit(signed);
    // SAFETY: the caller's contract covers the runs, lines and carry; the
    // pointer tables are borrowed whole. The vector and mask registers are
    // declared clobbered whole (`clobber_abi`), `rax`, `rcx` and `rdx` are
    // declared scratch, the flags change (no `preserves_flags`); no stack,
    // and `vzeroupper` leaves the upper halves clean.
    unsafe {
        if first {
            unpack_tile16_joined_asm!(head, rows, runs, sign, carry);
        } else {
            unpack_tile16_joined_asm!(stream, rows, runs, sign, carry);
        }
    }
}

/// The groups [`unpack_run`] takes: `groups` of them (at least one), 512
/// bytes each, one after another from `source`; the line the first
/// group's first row starts in (`out`), `shift` bytes into it (under
/// 64); the 64 bytes before that row on the run, as written (`carry`).
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) struct NibbleRun {
    pub(in crate::relayout::arch) source: *const u8,
    pub(in crate::relayout::arch) groups: usize,
    pub(in crate::relayout::arch) out: *mut u8,
    pub(in crate::relayout::arch) shift: usize,
    pub(in crate::relayout::arch) carry: *const u8,
}

/// Groups of 128 columns of `(8,1)` nibbles whose eight rows of bytes lie
/// one after another in the destination, group after group (a rank-1
/// array's `T(1024)(128)(8,1)E(4)` tiles): each group's two steps of 64
/// columns into eight rows each ([`unpack64`]'s), the first step's kept
/// in registers, then the sixteen pieces joined each to the one before
/// it into the line it starts in and streamed in the destination's
/// order; the last piece waits in a register for the next group's first.
/// Through a stage on the stack, streamed from there, the stage's loads
/// waited behind the streaming stores by where the stack put it: the
/// rank-1 `s4` unpack read 0.84 of the best copy in one bench process,
/// 0.31-0.33 in two others; in registers, 1.07-1.14 in four (AMD EPYC
/// Zen 4; it reads half the bytes it writes).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof);
/// `run.groups` at least 1; the `512 * run.groups` bytes from
/// `run.source` are readable, and the 64 at `run.carry`; the `1024 *
/// run.groups + run.shift` bytes from `run.out` are writable and overlap
/// neither.
pub(in crate::relayout::arch) unsafe fn unpack_run(_: Avx512Vbmi, run: NibbleRun, signed: bool) {
    let sign = sign_bit(signed);
    // SAFETY: the caller's contract covers the groups, the carried piece
    // and the lines; `SPREAD` and `IOTA` are readable. Every register the
    // assembly writes is declared (the vector registers whole, and
    // zmm0-15, whose upper halves `vzeroupper` clears), the pointers and
    // count it moves are scratch, the flags change; no stack.
    unsafe {
        asm_avx512!(
            unpack64_constants!(),
            "vmovdqu64 zmm16, [rdx]",
            "vmovdqu64 zmm25, [{carry}]",
            "mov ecx, {shift:e}",
            join_index!(24),
            "2:",
            unpack64_rows!(),
            // The first 64 columns of rows 0 to 7 kept in zmm16-23.
            "vmovdqa64 zmm16, zmm0",
            "vmovdqa64 zmm17, zmm4",
            "vmovdqa64 zmm18, zmm1",
            "vmovdqa64 zmm19, zmm5",
            "vmovdqa64 zmm20, zmm2",
            "vmovdqa64 zmm21, zmm6",
            "vmovdqa64 zmm22, zmm3",
            "vmovdqa64 zmm23, zmm7",
            "add {i}, 256",
            unpack64_rows!(),
            "add {i}, 256",
            run_line!(24, 26; 25, 16, 0),
            run_line!(24, 26; 16, 0, 64),
            run_line!(24, 26; 0, 17, 128),
            run_line!(24, 26; 17, 4, 192),
            run_line!(24, 26; 4, 18, 256),
            run_line!(24, 26; 18, 1, 320),
            run_line!(24, 26; 1, 19, 384),
            run_line!(24, 26; 19, 5, 448),
            run_line!(24, 26; 5, 20, 512),
            run_line!(24, 26; 20, 2, 576),
            run_line!(24, 26; 2, 21, 640),
            run_line!(24, 26; 21, 6, 704),
            run_line!(24, 26; 6, 22, 768),
            run_line!(24, 26; 22, 3, 832),
            run_line!(24, 26; 3, 23, 896),
            run_line!(24, 26; 23, 7, 960),
            "vmovdqa64 zmm25, zmm7",
            "add {out}, 1024",
            "dec {n}",
            "jnz 2b",
            run_tail!(24, 26, 25),
            "vzeroupper",
            low = in(reg) LOW,
            sign = in(reg) sign,
            spread = in(reg) SPREAD.as_ptr(),
            inout("rdx") super::joins::IOTA.as_ptr() => _,
            out("rcx") _,
            carry = in(reg) run.carry,
            shift = in(reg) run.shift,
            i = inout(reg) run.source => _,
            n = inout(reg) run.groups => _,
            out = inout(reg) run.out => _,
        );
    }
}

/// The rows [`unpack_band`] writes: `steps` steps of 64 groups (256
/// bytes each, one after another from `source`) into eight rows of
/// bytes, row `k` from `starts[k]`, `64 * steps` bytes each; `lines[k]`
/// the first line boundary in row `k` (`starts[k] + h`, `h` under 64),
/// `heads[k]` the mask of its first `h` bytes, `tails[k]` that of the
/// first `64 - h`, and `index` row by row `h + i` for `i < 64`.
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) struct NibbleBand {
    pub(in crate::relayout::arch) source: *const u8,
    pub(in crate::relayout::arch) steps: usize,
    pub(in crate::relayout::arch) starts: [*mut u8; 8],
    pub(in crate::relayout::arch) lines: [*mut u8; 8],
    pub(in crate::relayout::arch) heads: [u64; 8],
    pub(in crate::relayout::arch) tails: [u64; 8],
    pub(in crate::relayout::arch) index: [[u8; 64]; 8],
}

/// `$step!(k, r, c, x)` for each row `k` of [`unpack_band`]: the row
/// comes out of a step in `zmm$r` ([`unpack64_rows`]: rows 0 to 7 in
/// zmm0, 4, 1, 5, 2, 6, 3, 7), waits in `zmm$c` and joins its lines
/// with the indices in `zmm$x`.
macro_rules! band_rows {
    ($step:ident) => {
        concat!(
            $step!(0, 0, 16, 24),
            $step!(1, 4, 17, 25),
            $step!(2, 1, 18, 26),
            $step!(3, 5, 19, 27),
            $step!(4, 2, 20, 28),
            $step!(5, 6, 21, 29),
            $step!(6, 3, 22, 30),
            $step!(7, 7, 23, 31),
        )
    };
}

/// Row `$k` of the first step of [`unpack_band`]: its first `h` bytes
/// (`zmm$r`, under the head mask) written plainly before its first line
/// boundary; the step waits in `zmm$c`.
macro_rules! band_head {
    ($k:literal, $r:literal, $c:literal, $x:literal) => {
        concat!(
            "kmovq k1, [{heads} + 8*",
            $k,
            "]\n",
            "mov rax, [{starts} + 8*",
            $k,
            "]\n",
            "vmovdqu8 [rax] {{k1}}, zmm",
            $r,
            "\n",
            "vmovdqa64 zmm",
            $c,
            ", zmm",
            $r,
            "\n",
        )
    };
}

/// Row `$k` of a later step of [`unpack_band`]: the line that starts in
/// the step before (`zmm$c`, its last `64 - h` bytes) and ends in this
/// one (`zmm$r`, its first `h`), joined with the row's index (`zmm$x`)
/// and streamed `{o}` bytes past the row's first line boundary; this
/// step then waits in `zmm$c`.
macro_rules! band_line {
    ($k:literal, $r:literal, $c:literal, $x:literal) => {
        concat!(
            vpermt2b!($c, $x, $r),
            "mov rax, [{lines} + 8*",
            $k,
            "]\n",
            "vmovntdq [rax + {o}], zmm",
            $c,
            "\n",
            "vmovdqa64 zmm",
            $c,
            ", zmm",
            $r,
            "\n",
        )
    };
}

/// Row `$k` after the last step of [`unpack_band`]: that step's bytes
/// past the row's last line boundary (`zmm$c`, from byte `h` on) moved
/// to the front (`zmm$x`, the row's index) and written plainly `{o}`
/// bytes past its first line boundary, where that line starts, under the
/// tail mask. (Written from the step's start under a mask, the store's
/// masked-off bytes fell on the line just streamed, and each such store
/// waited for that line to reach memory.)
macro_rules! band_tail {
    ($k:literal, $r:literal, $c:literal, $x:literal) => {
        concat!(
            vpermt2b!($c, $x, $c),
            "kmovq k1, [{tails} + 8*",
            $k,
            "]\n",
            "mov rax, [{lines} + 8*",
            $k,
            "]\n",
            "vmovdqu8 [rax + {o}] {{k1}}, zmm",
            $c,
            "\n",
        )
    };
}

/// [`unpack64`] for a band of eight rows that start anywhere in their
/// lines, step after step along them: each row's bytes before its first
/// line boundary written plainly, then every whole line joined in
/// registers from the two steps it spans and streamed, the bytes past
/// the last boundary written plainly at the end. Written straight from
/// [`unpack64`] (eight plain stores a step, each line read before it is
/// written), `s4[23950,2802]{1,0:T(8,128)(8,1)E(4)}` unpacked in 6.5-6.9
/// ms against 5.4-5.6, `s4[16384,4096]` 16 bytes into a line 5.6-5.8
/// against 4.3-4.5, on a line 5.3-6.9 against 4.0-5.1 (alternated runs,
/// AMD EPYC Zen 4).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof);
/// `band.steps` at least 2; the `256 * band.steps` bytes from
/// `band.source` are readable; each row's `64 * band.steps` bytes from
/// `band.starts[k]` are writable, overlap no other row nor the source,
/// and `band.lines`, `band.heads` and `band.index` are as
/// [`NibbleBand`] says.
pub(in crate::relayout::arch) unsafe fn unpack_band(
    _: Avx512Vbmi,
    band: &NibbleBand,
    signed: bool,
) {
    let sign = sign_bit(signed);
    // SAFETY: the caller's contract covers the source, the rows and the
    // tables, which `band` holds (read through its pointers, as bytes
    // and words). Every register the assembly writes is declared (the
    // vector registers and masks whole, `rax`, the pointer and counters
    // it moves), the flags change; no stack.
    unsafe {
        asm_avx512!(
            unpack64_constants!(),
            "vmovdqu64 zmm24, [{index}]",
            "vmovdqu64 zmm25, [{index} + 64]",
            "vmovdqu64 zmm26, [{index} + 128]",
            "vmovdqu64 zmm27, [{index} + 192]",
            "vmovdqu64 zmm28, [{index} + 256]",
            "vmovdqu64 zmm29, [{index} + 320]",
            "vmovdqu64 zmm30, [{index} + 384]",
            "vmovdqu64 zmm31, [{index} + 448]",
            unpack64_rows!(),
            band_rows!(band_head),
            "2:",
            "add {i}, 256",
            unpack64_rows!(),
            band_rows!(band_line),
            "add {o}, 64",
            "dec {n}",
            "jnz 2b",
            band_rows!(band_tail),
            "vzeroupper",
            low = in(reg) LOW,
            sign = in(reg) sign,
            spread = in(reg) SPREAD.as_ptr(),
            index = in(reg) band.index.as_ptr(),
            heads = in(reg) band.heads.as_ptr(),
            tails = in(reg) band.tails.as_ptr(),
            starts = in(reg) band.starts.as_ptr(),
            lines = in(reg) band.lines.as_ptr(),
            out("rax") _,
            i = inout(reg) band.source => _,
            n = inout(reg) band.steps - 1 => _,
            o = inout(reg) 0usize => _,
        );
    }
}
