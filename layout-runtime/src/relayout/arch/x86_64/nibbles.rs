//! `s4` values in `(8,1)` groups, 64 columns a step in AVX-512BW
//! registers: eight rows of bytes, each holding one value in its low four
//! bits, into the 256 bytes of their 64 groups of four, and back.
//!
//! A group of column `x` is four bytes; byte `q` holds row `2q`'s value
//! in its low half and row `2q + 1`'s in its high half. From the rows,
//! each pair `2q, 2q + 1` makes one vector of bytes `q` (a shift and a
//! bitwise select), and the four vectors of bytes interleave into groups
//! within each 128-bit lane (bytes, then pairs of bytes); a 4x4 transpose
//! of lanes then puts the groups in column order. The way back runs the
//! same steps in reverse (the lane transpose is its own inverse).

use core::arch::asm;

use super::Avx512Bw;

/// `0x0f` in every byte: the low four bits each value keeps.
const LOW: u32 = 0x0f0f_0f0f;

/// The assembly of [`pack64`], storing `zmm0` to `zmm3` at `{o}` with
/// `$store`; for the caller's `unsafe` block, whose argument covers the
/// bytes and the alignment.
macro_rules! pack64_asm {
    ($store:expr, $r0:expr, $r3:expr, $r6:expr, $pitch:expr, $o:expr) => {
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
            "vshufi64x2 zmm8, zmm0, zmm1, 0x44",
            "vshufi64x2 zmm9, zmm2, zmm3, 0x44",
            "vshufi64x2 zmm10, zmm0, zmm1, 0xee",
            "vshufi64x2 zmm11, zmm2, zmm3, 0xee",
            "vshufi64x2 zmm0, zmm8, zmm9, 0x88",
            "vshufi64x2 zmm1, zmm8, zmm9, 0xdd",
            "vshufi64x2 zmm2, zmm10, zmm11, 0x88",
            "vshufi64x2 zmm3, zmm10, zmm11, 0xdd",
            $store,
            "vzeroupper",
            low = in(reg) LOW,
            r0 = in(reg) $r0,
            r3 = in(reg) $r3,
            r6 = in(reg) $r6,
            p = in(reg) $pitch,
            o = in(reg) $o,
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

/// The rows of one step, `rows[k*pitch..][..64]` for `k < 8`, into 64
/// groups, `out[..256]`; the low four bits of each byte are packed, the
/// rest ignored. Streamed stores need `out` on their boundary (asserted).
#[inline]
pub(in crate::relayout::arch) fn pack64(
    _: Avx512Bw,
    out: &mut [u8],
    rows: &[u8],
    pitch: usize,
    store: Store,
) {
    let out = &mut out[..256];
    // Rows 0 and 7 in bounds, so rows 1 to 6 between them are too.
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
    // SAFETY: the `Avx512Bw` token proves the CPU and OS run the AVX-512F
    // and AVX-512BW instructions below. Rows 0 and 7 were bounds-checked
    // by the slicing above and rows 1 to 6 lie between them (`r0 +
    // k*pitch`, `0 < k < 7`), inside `rows`; each is 64 bytes, read as
    // bytes. `out` is a checked unique slice of 256 bytes, which the
    // shared `rows` cannot overlap, on the boundary its streaming stores
    // need (asserted: 64 bytes for a zmm register's `vmovntdq`, 16 for
    // an xmm one's). The vector registers are declared clobbered whole
    // (`clobber_abi`); no stack, no flags, and `vzeroupper` leaves the
    // upper halves clean.
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
                o
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
                o
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
                o
            ),
        }
    }
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
    let input = &input[..256];
    assert!(pitch >= 64);
    let r7 = rows[7 * pitch..][..64].as_mut_ptr();
    let r0 = rows[..64].as_mut_ptr();
    let (r3, r6) = (r0.wrapping_add(3 * pitch), r0.wrapping_add(6 * pitch));
    debug_assert!(r6.wrapping_add(pitch) == r7);
    // `(v ^ s) - s` extends a four-bit `v` with sign bit `s` (8), and
    // leaves it alone with `s` 0.
    let sign: u32 = if signed { 0x0808_0808 } else { 0 };
    // SAFETY: the `Avx512Bw` token proves the CPU and OS run the AVX-512F
    // and AVX-512BW instructions below. Rows 0 and 7 were bounds-checked
    // by the slicing above and rows 1 to 6 lie between them, inside the
    // unique `rows`; they are `pitch >= 64` apart (asserted), so the
    // eight 64-byte runs written are disjoint. `input` is a checked slice
    // of 256 bytes, read as bytes, and cannot overlap the unique `rows`.
    // Registers, stack and flags as in `pack64`.
    unsafe {
        asm!(
            "vpbroadcastd zmm15, {low:e}",
            "vpbroadcastd zmm14, {sign:e}",
            "vbroadcasti32x4 zmm13, [{spread}]",
            "vmovdqu64 zmm0, [{i}]",
            "vmovdqu64 zmm1, [{i} + 64]",
            "vmovdqu64 zmm2, [{i} + 128]",
            "vmovdqu64 zmm3, [{i} + 192]",
            // The lane transpose of `pack64`, which undoes itself: lane
            // k of register j holds the groups of columns 16k + 4j...
            "vshufi64x2 zmm8, zmm0, zmm1, 0x44",
            "vshufi64x2 zmm9, zmm2, zmm3, 0x44",
            "vshufi64x2 zmm10, zmm0, zmm1, 0xee",
            "vshufi64x2 zmm11, zmm2, zmm3, 0xee",
            "vshufi64x2 zmm0, zmm8, zmm9, 0x88",
            "vshufi64x2 zmm1, zmm8, zmm9, 0xdd",
            "vshufi64x2 zmm2, zmm10, zmm11, 0x88",
            "vshufi64x2 zmm3, zmm10, zmm11, 0xdd",
            // ...whose bytes `q` gather in dword `q` of each lane...
            "vpshufb zmm0, zmm0, zmm13",
            "vpshufb zmm1, zmm1, zmm13",
            "vpshufb zmm2, zmm2, zmm13",
            "vpshufb zmm3, zmm3, zmm13",
            // ...and the dwords `q` of the four registers make bytes `q`
            // of 16 columns in order, in every lane.
            "vpunpckldq zmm8, zmm0, zmm1",
            "vpunpckhdq zmm9, zmm0, zmm1",
            "vpunpckldq zmm10, zmm2, zmm3",
            "vpunpckhdq zmm11, zmm2, zmm3",
            "vpunpcklqdq zmm0, zmm8, zmm10",
            "vpunpckhqdq zmm1, zmm8, zmm10",
            "vpunpcklqdq zmm2, zmm9, zmm11",
            "vpunpckhqdq zmm3, zmm9, zmm11",
            // Bytes `q` into rows 2q (low halves) and 2q + 1 (high).
            "vpsrlw zmm4, zmm0, 4",
            "vpsrlw zmm5, zmm1, 4",
            "vpsrlw zmm6, zmm2, 4",
            "vpsrlw zmm7, zmm3, 4",
            "vpandd zmm0, zmm0, zmm15",
            "vpandd zmm1, zmm1, zmm15",
            "vpandd zmm2, zmm2, zmm15",
            "vpandd zmm3, zmm3, zmm15",
            "vpandd zmm4, zmm4, zmm15",
            "vpandd zmm5, zmm5, zmm15",
            "vpandd zmm6, zmm6, zmm15",
            "vpandd zmm7, zmm7, zmm15",
            "vpxord zmm0, zmm0, zmm14",
            "vpxord zmm1, zmm1, zmm14",
            "vpxord zmm2, zmm2, zmm14",
            "vpxord zmm3, zmm3, zmm14",
            "vpxord zmm4, zmm4, zmm14",
            "vpxord zmm5, zmm5, zmm14",
            "vpxord zmm6, zmm6, zmm14",
            "vpxord zmm7, zmm7, zmm14",
            "vpsubb zmm0, zmm0, zmm14",
            "vpsubb zmm1, zmm1, zmm14",
            "vpsubb zmm2, zmm2, zmm14",
            "vpsubb zmm3, zmm3, zmm14",
            "vpsubb zmm4, zmm4, zmm14",
            "vpsubb zmm5, zmm5, zmm14",
            "vpsubb zmm6, zmm6, zmm14",
            "vpsubb zmm7, zmm7, zmm14",
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
            i = in(reg) input.as_ptr(),
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
