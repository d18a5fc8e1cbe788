//! 16x16 tiles of 4-byte units whose destination runs start anywhere in
//! their lines (the rows of a row-major array whose width is no multiple
//! of a line), in AVX-512 registers: each run's piece joins the end of
//! the piece before it on the same run (`vpermt2b`) into the line the
//! piece starts in, which goes out whole with a streaming store.

use core::arch::asm;

use super::Avx512Vbmi;

/// Bytes `0..64`: with `64 - h` added, the indices that take the last
/// `h` bytes of the piece before and the first `64 - h` of this one
/// ([`join_line`]).
pub(super) static IOTA: [u8; 64] = {
    let mut bytes = [0u8; 64];
    let mut k = 0;
    while k < 64 {
        bytes[k] = k as u8;
        k += 1;
    }
    bytes
};

/// Piece `$k` of [`join_band16`] (`zmm$k`), at `r8`, joined and stored
/// by [`join_line`] as `$store`; `r8` then moves on to the next run.
macro_rules! join_piece {
    ($k:literal, $store:ident) => {
        concat!(
            "mov rax, r8\n",
            "add r8, {stride}\n",
            join_line!($k, $store)
        )
    };
}

/// Row `$c` of a tile of [`join_band16`] into `zmm$c`, `{t}` bytes into
/// it, and the same place in row `$c` of the next band asked for.
macro_rules! join_row {
    ($c:literal) => {
        concat!(
            "mov rax, [{ahead} + 8*",
            $c,
            "]\n",
            "prefetcht1 [rax + {t}]\n",
            "mov rax, [{rows} + 8*",
            $c,
            "]\n",
            "vmovdqu64 zmm",
            $c,
            ", [rax + {t}]\n",
        )
    };
}

/// The assembly of one tile of [`join_band16`], its lines stored as
/// `$store`.
macro_rules! join_tile_asm {
    ($store:ident, $rows:expr, $next:expr, $t:expr, $p:expr, $stride:expr, $carry:expr) => {
        asm!(
            each16!(join_row),
            transpose16!(),
            "vmovdqu64 zmm16, [{iota}]",
            each16!(join_piece, $store),
            "vzeroupper",
            iota = in(reg) IOTA.as_ptr(),
            rows = in(reg) $rows,
            ahead = in(reg) $next,
            t = in(reg) $t,
            inout("r8") $p,
            stride = in(reg) $stride,
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
}

/// A band of `tiles` 16x16 tiles of 4-byte units, side by side along 16
/// rows: `rows[c]` holds row `c`, 16 units a tile (tile `t` from byte
/// `64t`); units `k` of the rows of tile `t`, in row order, make the
/// 64-byte piece of run `16t + k`, which starts at `piece + (16t + k) *
/// stride`, and slot `16t + k` of `carry` (64 bytes each) holds the 64
/// bytes before it on its run. With `h` the piece's bytes into its line,
/// the line it starts in takes the last `h` bytes of the piece before
/// and its first `64 - h`, and goes out whole with a streaming store, or,
/// for a run's first piece (`first`), only from the piece's start and
/// plainly. The piece then waits in its slot for the next band. The same
/// bytes of the rows of `ahead` (the next band's) are asked for, tile by
/// tile.
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); each
/// of `rows` is readable for `64 * tiles` bytes; `carry` is readable and
/// writable for `1024 * tiles`; for each piece, its line is writable
/// from the piece's start to its end if `first`, whole otherwise; no row
/// overlaps a line or `carry`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(in crate::relayout::arch) unsafe fn join_band16(
    _: Avx512Vbmi,
    rows: &[*const u8; 16],
    ahead: &[*const u8; 16],
    tiles: usize,
    piece: *mut u8,
    stride: usize,
    carry: *mut u8,
    first: bool,
) {
    let rows = rows.as_ptr();
    let mut p = piece;
    for t in 0..tiles {
        let slots = carry.wrapping_add(1024 * t);
        let at = 64 * t;
        // SAFETY: the caller's contract covers the rows (`at + 64` bytes
        // in), the lines and the slots of tile `t`; prefetches touch
        // nothing. The pointer tables are borrowed whole. The vector and
        // mask registers are declared clobbered whole (`clobber_abi`),
        // `rax`, `rcx` and `rdx` are declared scratch, the flags change
        // (no `preserves_flags`); no stack, and `vzeroupper` leaves the
        // upper halves clean.
        unsafe {
            if first {
                join_tile_asm!(head, rows, ahead.as_ptr(), at, p, stride, slots);
            } else {
                join_tile_asm!(stream, rows, ahead.as_ptr(), at, p, stride, slots);
            }
        }
    }
}
