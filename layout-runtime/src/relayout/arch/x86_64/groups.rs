//! `(4,1)` groups of bytes and `(2,1)` groups of 2-byte elements in
//! AVX-512 registers: 64 bytes of each of the `k` rows a step, put
//! together by two-table permutes (`vpermt2b`, `vpermt2w`) into `64 * k`
//! bytes of groups, which go out with streaming stores.

use core::arch::asm;

use super::Avx512Vbmi;

/// The permute tables of the packs, 64 bytes each: bytes of two
/// vectors' first and last 32 lanes in turn (`vpermt2b`), then the same
/// for 2-byte lanes (`vpermt2w`, 16-bit indices).
static TABLES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 64 {
        // Even lanes from the first vector, odd ones from the second.
        let other = if i % 2 == 1 { 64 } else { 0 };
        t[i] = (i / 2 + other) as u8;
        t[64 + i] = (32 + i / 2 + other) as u8;
        if i < 32 {
            let other = other / 2;
            t[128 + 2 * i] = (i / 2 + other) as u8;
            t[192 + 2 * i] = (16 + i / 2 + other) as u8;
        }
        i += 1;
    }
    t
};

/// The permute tables of the unpacks, 64 bytes each: the even and the
/// odd 2-byte lanes of two vectors (`vpermt2w`, 16-bit indices), then the
/// even and the odd bytes (`vpermt2b`).
static SPLITS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 64 {
        if i < 32 {
            t[2 * i] = (2 * i) as u8;
            t[64 + 2 * i] = (2 * i + 1) as u8;
        }
        t[128 + i] = (2 * i) as u8;
        t[192 + i] = (2 * i + 1) as u8;
        i += 1;
    }
    t
};

/// A row's 64 bytes into `zmm$z` from `{r$r}`, those under `k1` from
/// memory and the rest from `zmm24` (the fill), the same bytes `{ahead}`
/// further asked for.
macro_rules! group_load {
    ($z:literal, $r:literal) => {
        concat!(
            "prefetcht0 [{r",
            $r,
            "} + {ahead}]\n",
            "vmovdqa64 zmm",
            $z,
            ", zmm24\n",
            "vmovdqu8 zmm",
            $z,
            " {{k1}}, [{r",
            $r,
            "}]\n",
            "add {r",
            $r,
            "}, 64\n",
        )
    };
}

/// `zmm$z` to `{out} + $at` with streaming stores: whole (`line`), or
/// 16 bytes at a time (`quarters`, for `{out}` off a line).
macro_rules! group_store {
    (line, $z:literal, $at:literal) => {
        concat!("vmovntdq [{out} + ", $at, "], zmm", $z, "\n")
    };
    (quarters, $z:literal, $at:literal) => {
        concat!(
            "vmovntdq [{out} + ",
            $at,
            "], xmm",
            $z,
            "\n",
            "vextracti32x4 xmm8, zmm",
            $z,
            ", 1\n",
            "vmovntdq [{out} + ",
            $at,
            " + 16], xmm8\n",
            "vextracti32x4 xmm8, zmm",
            $z,
            ", 2\n",
            "vmovntdq [{out} + ",
            $at,
            " + 32], xmm8\n",
            "vextracti32x4 xmm8, zmm",
            $z,
            ", 3\n",
            "vmovntdq [{out} + ",
            $at,
            " + 48], xmm8\n",
        )
    };
}

/// The tables into `zmm20..zmm23`, the fill into `zmm24`, the mask into
/// `k1`.
macro_rules! group_setup {
    () => {
        concat!(
            "vmovdqu64 zmm20, [{tables}]\n",
            "vmovdqu64 zmm21, [{tables} + 64]\n",
            "vmovdqu64 zmm22, [{tables} + 128]\n",
            "vmovdqu64 zmm23, [{tables} + 192]\n",
            "vmovdqu64 zmm24, [{fill}]\n",
            "kmovq k1, {mask}\n",
        )
    };
}

/// `{n}` steps of four rows of bytes into groups.
macro_rules! groups4_asm {
    ($store:ident, $rows:expr, $out:expr, $n:expr, $mask:expr, $fill:expr, $ahead:expr) => {
        asm!(
            group_setup!(),
            "2:",
            group_load!(0, 0),
            group_load!(1, 1),
            group_load!(2, 2),
            group_load!(3, 3),
            // Rows 0 and 1 in pairs (low and high halves), 2 and 3 too,
            // then the pairs in pairs.
            "vmovdqa64 zmm4, zmm0",
            "vpermt2b zmm4, zmm20, zmm1",
            "vpermt2b zmm0, zmm21, zmm1",
            "vmovdqa64 zmm5, zmm2",
            "vpermt2b zmm5, zmm20, zmm3",
            "vpermt2b zmm2, zmm21, zmm3",
            "vmovdqa64 zmm6, zmm4",
            "vpermt2w zmm6, zmm22, zmm5",
            "vpermt2w zmm4, zmm23, zmm5",
            "vmovdqa64 zmm7, zmm0",
            "vpermt2w zmm7, zmm22, zmm2",
            "vpermt2w zmm0, zmm23, zmm2",
            group_store!($store, 6, 0),
            group_store!($store, 4, 64),
            group_store!($store, 7, 128),
            group_store!($store, 0, 192),
            "add {out}, 256",
            "dec {n}",
            "jnz 2b",
            "vzeroupper",
            tables = in(reg) TABLES.as_ptr(),
            fill = in(reg) $fill,
            mask = in(reg) $mask,
            ahead = in(reg) $ahead,
            r0 = inout(reg) $rows[0] => _,
            r1 = inout(reg) $rows[1] => _,
            r2 = inout(reg) $rows[2] => _,
            r3 = inout(reg) $rows[3] => _,
            out = inout(reg) $out => _,
            n = inout(reg) $n => _,
            // `vzeroupper` writes the upper halves of zmm0-15.
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("k1") _,
            options(nostack),
        )
    };
}

/// `{n}` steps of two rows of 2-byte elements into pairs.
macro_rules! groups2_asm {
    ($store:ident, $rows:expr, $out:expr, $n:expr, $mask:expr, $fill:expr, $ahead:expr) => {
        asm!(
            group_setup!(),
            "2:",
            group_load!(0, 0),
            group_load!(1, 1),
            "vmovdqa64 zmm6, zmm0",
            "vpermt2w zmm6, zmm22, zmm1",
            "vpermt2w zmm0, zmm23, zmm1",
            group_store!($store, 6, 0),
            group_store!($store, 0, 64),
            "add {out}, 128",
            "dec {n}",
            "jnz 2b",
            "vzeroupper",
            tables = in(reg) TABLES.as_ptr(),
            fill = in(reg) $fill,
            mask = in(reg) $mask,
            ahead = in(reg) $ahead,
            r0 = inout(reg) $rows[0] => _,
            r1 = inout(reg) $rows[1] => _,
            out = inout(reg) $out => _,
            n = inout(reg) $n => _,
            // `vzeroupper` writes the upper halves of zmm0-15.
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("k1") _,
            options(nostack),
        )
    };
}

/// `n` steps (at least one) of one group with the row bytes under
/// `mask`, as [`interleave_steps`] takes them.
///
/// # Safety
///
/// As [`interleave_steps`], for these steps and this mask.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn steps(
    k: usize,
    rows: [*const u8; 4],
    out: *mut u8,
    n: usize,
    mask: u64,
    fill: *const u8,
    ahead: usize,
) {
    let on_line = out.addr() % 64 == 0;
    // SAFETY: the caller's contract covers every byte read under the
    // mask, every byte written and the fill's 64; prefetches touch
    // nothing. The tables are 256 readable bytes. Every vector and mask
    // register the assembly writes (and zmm0-15, whose upper halves
    // `vzeroupper` clears) is declared clobbered whole, the
    // pointers and count it moves are scratch, the flags change (no
    // `preserves_flags`); no stack, and `vzeroupper` leaves the upper
    // halves clean.
    unsafe {
        match (k, on_line) {
            (4, true) => groups4_asm!(line, rows, out, n, mask, fill, ahead),
            (4, false) => groups4_asm!(quarters, rows, out, n, mask, fill, ahead),
            (_, true) => groups2_asm!(line, rows, out, n, mask, fill, ahead),
            (_, false) => groups2_asm!(quarters, rows, out, n, mask, fill, ahead),
        }
    }
}

/// `steps` steps of 64 bytes of each of `k` rows (`k` 4 for bytes, 2 for
/// 2-byte elements), row `j` from `src + j * pitch`, into groups from
/// `out` on: byte or element `x` of row `j` at group `x`, place `j`, so
/// each step writes `64 * k` bytes. Bytes of a row from `valid` on are
/// not read: the 64 bytes at `fill` (one element repeated) stand for
/// them. That for each place of the grid `outer` (outermost first; each
/// axis a count, then the bytes it moves `out` and `src` a step). Each
/// row's piece also asks for the line `ahead` bytes past it (the same
/// columns of a later band).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); `k` is
/// 2 or 4; for each place of `outer`, the first `valid` bytes of each row
/// are readable, and the `64 * k * steps` bytes from `out` writable (both
/// moved to the place); `out` starts on 16 bytes (at each place) and
/// overlaps no row; 64 bytes at `fill` are readable.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(in crate::relayout::arch) unsafe fn interleave_steps(
    _: Avx512Vbmi,
    out: *mut u8,
    src: *const u8,
    pitch: usize,
    k: usize,
    (count, valid): (usize, usize),
    fill: *const u8,
    outer: [(usize, usize, usize); 2],
    ahead: usize,
) {
    let whole = (valid / 64).min(count);
    let [(n0, o0, s0), (n1, o1, s1)] = outer;
    for x0 in 0..n0 {
        for x1 in 0..n1 {
            let out = out.wrapping_add(x0 * o0 + x1 * o1);
            let src = src.wrapping_add(x0 * s0 + x1 * s1);
            let rows: [*const u8; 4] = core::array::from_fn(|j| src.wrapping_add(j * pitch));
            let at = |s: usize| rows.map(|r| r.wrapping_add(64 * s));
            // SAFETY: the caller's contract, step by step: the whole
            // steps read 64 bytes of each row under `valid`; the step
            // `valid` cuts reads those before it; the steps past it read
            // nothing (an empty mask).
            unsafe {
                if whole > 0 {
                    steps(k, rows, out, whole, u64::MAX, fill, ahead);
                }
                if whole < count {
                    let cut = (1u64 << (valid % 64)) - 1;
                    let to = out.wrapping_add(64 * k * whole);
                    steps(k, at(whole), to, 1, cut, fill, 0);
                }
                if whole + 1 < count {
                    let to = out.wrapping_add(64 * k * (whole + 1));
                    steps(k, at(whole + 1), to, count - whole - 1, 0, fill, 0);
                }
            }
        }
    }
}

/// Row piece `$k` (`zmm$k`, for the row at `{r$k}`) joined to the piece
/// before it (slot `$k` of `{carry}`) and stored as `$store`
/// (`join_store!`).
macro_rules! split_row {
    ($k:literal, $store:ident) => {
        concat!("mov rax, {r", $k, "}\n", join_line!($k, $store))
    };
}

/// One step of a group, `k` rows of 64-byte pieces from `{input}`, each
/// joined and stored as `$store`.
macro_rules! split_asm {
    (4, $store:ident, $rows:expr, $input:expr, $carry:expr) => {
        asm!(
            "vmovdqu64 zmm16, [{iota}]",
            "vmovdqu64 zmm20, [{splits}]",
            "vmovdqu64 zmm21, [{splits} + 64]",
            "vmovdqu64 zmm22, [{splits} + 128]",
            "vmovdqu64 zmm23, [{splits} + 192]",
            "vmovdqu64 zmm4, [{input}]",
            "vmovdqu64 zmm5, [{input} + 64]",
            "vmovdqu64 zmm6, [{input} + 128]",
            "vmovdqu64 zmm7, [{input} + 192]",
            // Pairs of rows 0 and 1 (even 2-byte lanes) and of rows 2
            // and 3 (odd ones), columns 0..32 then 32..64; then each pair
            // into its rows.
            "vmovdqa64 zmm8, zmm4",
            "vpermt2w zmm8, zmm20, zmm5",
            "vpermt2w zmm4, zmm21, zmm5",
            "vmovdqa64 zmm9, zmm6",
            "vpermt2w zmm9, zmm20, zmm7",
            "vpermt2w zmm6, zmm21, zmm7",
            "vmovdqa64 zmm0, zmm8",
            "vpermt2b zmm0, zmm22, zmm9",
            "vmovdqa64 zmm1, zmm8",
            "vpermt2b zmm1, zmm23, zmm9",
            "vmovdqa64 zmm2, zmm4",
            "vpermt2b zmm2, zmm22, zmm6",
            "vmovdqa64 zmm3, zmm4",
            "vpermt2b zmm3, zmm23, zmm6",
            split_row!(0, $store),
            split_row!(1, $store),
            split_row!(2, $store),
            split_row!(3, $store),
            "vzeroupper",
            iota = in(reg) super::joins::IOTA.as_ptr(),
            splits = in(reg) SPLITS.as_ptr(),
            input = in(reg) $input,
            r0 = in(reg) $rows[0],
            r1 = in(reg) $rows[1],
            r2 = in(reg) $rows[2],
            r3 = in(reg) $rows[3],
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
    (2, $store:ident, $rows:expr, $input:expr, $carry:expr) => {
        asm!(
            "vmovdqu64 zmm16, [{iota}]",
            "vmovdqu64 zmm20, [{splits}]",
            "vmovdqu64 zmm21, [{splits} + 64]",
            "vmovdqu64 zmm4, [{input}]",
            "vmovdqu64 zmm5, [{input} + 64]",
            "vmovdqa64 zmm0, zmm4",
            "vpermt2w zmm0, zmm20, zmm5",
            "vmovdqa64 zmm1, zmm4",
            "vpermt2w zmm1, zmm21, zmm5",
            split_row!(0, $store),
            split_row!(1, $store),
            "vzeroupper",
            iota = in(reg) super::joins::IOTA.as_ptr(),
            splits = in(reg) SPLITS.as_ptr(),
            input = in(reg) $input,
            r0 = in(reg) $rows[0],
            r1 = in(reg) $rows[1],
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
}

/// The last line of each of `k` rows whose pieces [`deinterleave_step`]
/// joined: row `j`'s line at `rows[j]` (just past its last piece), its
/// first `h` bytes (as many as `rows[j]` is into its line) from the end
/// of slot `j` of `carry`, plainly.
macro_rules! split_tail_asm {
    (4, $rows:expr, $carry:expr) => {
        asm!(
            "vmovdqu64 zmm16, [{iota}]",
            split_row!(0, tail),
            split_row!(1, tail),
            split_row!(2, tail),
            split_row!(3, tail),
            "vzeroupper",
            iota = in(reg) super::joins::IOTA.as_ptr(),
            r0 = in(reg) $rows[0],
            r1 = in(reg) $rows[1],
            r2 = in(reg) $rows[2],
            r3 = in(reg) $rows[3],
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
    (2, $rows:expr, $carry:expr) => {
        asm!(
            "vmovdqu64 zmm16, [{iota}]",
            split_row!(0, tail),
            split_row!(1, tail),
            "vzeroupper",
            iota = in(reg) super::joins::IOTA.as_ptr(),
            r0 = in(reg) $rows[0],
            r1 = in(reg) $rows[1],
            carry = in(reg) $carry,
            out("rax") _,
            out("rcx") _,
            out("rdx") _,
            clobber_abi("sysv64"),
            options(nostack),
        )
    };
}

/// Where [`deinterleave_step`] writes a row's piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::relayout::arch) enum Piece {
    /// A row's first piece: its line from the piece's start, plainly.
    First,
    /// A later piece: the whole line it starts in, from the end of the
    /// piece before and its own start, streamed.
    Later,
    /// Past a row's last piece: the bytes of the last piece past the
    /// last line boundary, plainly (nothing is read from `input`).
    Tail,
}

/// One step of a group of `k` rows packed (the way back of
/// [`interleave_steps`]): `64 * k` bytes of groups at `input` into a
/// 64-byte piece of each row `j`, for `rows[j]`, joined as `piece` says
/// to slot `j` of `carry` (64 bytes each: the row's piece before), which
/// it then takes. With `h` the piece's bytes into its line, a later
/// piece's line is the last `h` bytes of the slot and the first `64 - h`
/// of the piece.
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); `k`
/// is 2 or 4; `input` is readable for `64 * k` bytes unless `piece` is
/// `Tail`; `carry` is readable and writable for `64 * k`; for each row,
/// the bytes `piece` writes (for `First`, from `rows[j]` to its line's
/// end; for `Later`, its line; for `Tail`, from its line's start to
/// `rows[j]`) are writable and overlap neither `input` nor `carry`.
#[inline]
pub(in crate::relayout::arch) unsafe fn deinterleave_step(
    _: Avx512Vbmi,
    k: usize,
    rows: [*mut u8; 4],
    input: *const u8,
    carry: *mut u8,
    piece: Piece,
) {
    // SAFETY: the caller's contract covers the input, the slots and the
    // bytes each piece writes; the tables and `IOTA` are readable. The
    // vector and mask registers are declared clobbered whole
    // (`clobber_abi`), `rax`, `rcx` and `rdx` are declared scratch, the
    // flags change (no `preserves_flags`); no stack, and `vzeroupper`
    // leaves the upper halves clean.
    unsafe {
        match (k, piece) {
            (4, Piece::Tail) => split_tail_asm!(4, rows, carry),
            (_, Piece::Tail) => split_tail_asm!(2, rows, carry),
            (4, Piece::First) => split_asm!(4, head, rows, input, carry),
            (4, Piece::Later) => split_asm!(4, stream, rows, input, carry),
            (_, Piece::First) => split_asm!(2, head, rows, input, carry),
            (_, Piece::Later) => split_asm!(2, stream, rows, input, carry),
        }
    }
}
