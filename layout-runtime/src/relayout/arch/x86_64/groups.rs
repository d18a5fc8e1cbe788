//! `(4,1)` groups of bytes and `(2,1)` groups of 2-byte elements in
//! AVX-512 registers: 64 bytes of each of the `k` rows a step, put
//! together by two-table permutes (`vpermt2b`, `vpermt2w`) into `64 * k`
//! bytes of groups, which go out with streaming stores.

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

/// A row's 64 bytes into `zmm$z` from its pointer `{$r}`, those under
/// `k1` from memory and the rest from `zmm24` (the fill), and the source
/// asked for: the same bytes `{ahead}` further (`rows`), or the two lines
/// at `{ahead}`, which then moves on two lines (`linear`).
macro_rules! group_load {
    ($z:literal, $r:ident, linear) => {
        concat!(
            "prefetcht1 [{ahead}]\n",
            "prefetcht1 [{ahead} + 64]\n",
            "add {ahead}, 128\n",
            group_load!(@load $z, $r),
        )
    };
    ($z:literal, $r:ident, rows) => {
        concat!(
            "prefetcht1 [{",
            stringify!($r),
            "} + {ahead}]\n",
            group_load!(@load $z, $r),
        )
    };
    (@load $z:literal, $r:ident) => {
        concat!(
            "vmovdqa64 zmm",
            $z,
            ", zmm24\n",
            "vmovdqu8 zmm",
            $z,
            " {{k1}}, [{",
            stringify!($r),
            "}]\n",
            "add {",
            stringify!($r),
            "}, 64\n",
        )
    };
}

/// `zmm$z` to `{out} + $at` with streaming stores: whole (`line`), or,
/// for a run that starts `{h}` bytes into a line (16, 32 or 48; `{out}`
/// then the line's start), joined to the piece before it (`joined`: the
/// line it starts in, the last `{h}` bytes of the piece before, kept in
/// `zmm19`, and its first `64 - h`, by the index in `zmm17`), or, the
/// run's first piece (`head`), its first `64 - h` bytes in 16-byte
/// quarters. Each piece then waits in `zmm19` for the next.
macro_rules! group_store {
    (line, $z:literal, $at:literal) => {
        concat!("vmovntdq [{out} + ", $at, "], zmm", $z, "\n")
    };
    (joined, $z:literal, $at:literal) => {
        concat!(
            run_join!(17, 18; 19, $z),
            "vmovntdq [{out} + ",
            $at,
            "], zmm18\n",
            "vmovdqa64 zmm19, zmm",
            $z,
            "\n",
        )
    };
    (head, $z:literal, $at:literal) => {
        concat!(
            group_quarters!($z, concat!("{out} + {h} + ", $at), "ja", 32, 16, "5"),
            "vmovdqa64 zmm19, zmm",
            $z,
            "\n",
        )
    };
}

/// The end of a run that started `{h}` bytes into a line: the last `{h}`
/// bytes of its last piece (`zmm19`) at `{out}`, the start of the line
/// past the last one joined, in 16-byte quarters.
macro_rules! group_tail {
    () => {
        concat!(
            run_join!(17, 18; 19, 19),
            group_quarters!(18, "{out}", "jb", 32, 48, "6"),
        )
    };
}

/// The first one to three 16-byte quarters of `zmm$z` streamed to
/// `[$at]` on: the second unless `{h}` compares `$skip` to `$two`, the
/// third unless to `$three` (`64 - h` bytes of a run's head: `ja`, 32,
/// 16; `h` of its tail: `jb`, 32, 48); `$label` a local label of its
/// own. `xmm8` is scratch.
macro_rules! group_quarters {
    ($z:literal, $at:expr, $skip:literal, $two:literal, $three:literal, $label:literal) => {
        concat!(
            "vmovntdq [",
            $at,
            "], xmm",
            $z,
            "\n",
            "cmp {h}, ",
            $two,
            "\n",
            $skip,
            " ",
            $label,
            "f\n",
            "vextracti32x4 xmm8, zmm",
            $z,
            ", 1\n",
            "vmovntdq [",
            $at,
            " + 16], xmm8\n",
            "cmp {h}, ",
            $three,
            "\n",
            $skip,
            " ",
            $label,
            "f\n",
            "vextracti32x4 xmm8, zmm",
            $z,
            ", 2\n",
            "vmovntdq [",
            $at,
            " + 32], xmm8\n",
            $label,
            ":\n",
        )
    };
}

/// Four rows of bytes in `zmm0..zmm3` into their groups: rows 0 and 1 in
/// pairs (low and high halves), 2 and 3 too, then the pairs in pairs;
/// the first piece stored as `$first`, the rest as `$store`.
macro_rules! join4 {
    ($first:ident, $store:ident) => {
        concat!(
            "vmovdqa64 zmm4, zmm0\n",
            "vpermt2b zmm4, zmm20, zmm1\n",
            "vpermt2b zmm0, zmm21, zmm1\n",
            "vmovdqa64 zmm5, zmm2\n",
            "vpermt2b zmm5, zmm20, zmm3\n",
            "vpermt2b zmm2, zmm21, zmm3\n",
            "vmovdqa64 zmm6, zmm4\n",
            "vpermt2w zmm6, zmm22, zmm5\n",
            "vpermt2w zmm4, zmm23, zmm5\n",
            "vmovdqa64 zmm7, zmm0\n",
            "vpermt2w zmm7, zmm22, zmm2\n",
            "vpermt2w zmm0, zmm23, zmm2\n",
            group_store!($first, 6, 0),
            group_store!($store, 4, 64),
            group_store!($store, 7, 128),
            group_store!($store, 0, 192),
        )
    };
}

/// Two rows of 2-byte elements in `zmm0` and `zmm1` into pairs, the
/// first piece stored as `$first`, the other as `$store`.
macro_rules! join2 {
    ($first:ident, $store:ident) => {
        concat!(
            "vmovdqa64 zmm6, zmm0\n",
            "vpermt2w zmm6, zmm22, zmm1\n",
            "vpermt2w zmm0, zmm23, zmm1\n",
            group_store!($first, 6, 0),
            group_store!($store, 0, 64),
        )
    };
}

/// `{n}` steps (at least one) of a group of rows `($z, $r)` (register,
/// pointer operand), each loaded under the mask and put into groups by
/// `$join` (`$first` for the first step), `$step` bytes of groups a step,
/// each load asking ahead as `$ask` (`group_load!`); the tables in
/// `zmm20..zmm23`, the fill in `zmm24`, the mask in `k1`. `$setup` comes
/// before the steps and `$end` after them; `$extra`, the operands they
/// name.
macro_rules! groups_asm {
    ($first:expr, $join:expr, $step:expr, $ask:ident, $rows:expr, $out:expr, $n:expr, $mask:expr,
     $fill:expr, $ahead:expr; $(($z:literal, $r:ident)),+; [$($setup:expr),*]; [$($end:expr),*];
     $($extra:tt)*) => {
        asm_avx512!(
            "vmovdqu64 zmm20, [{tables}]",
            "vmovdqu64 zmm21, [{tables} + 64]",
            "vmovdqu64 zmm22, [{tables} + 128]",
            "vmovdqu64 zmm23, [{tables} + 192]",
            "vmovdqu64 zmm24, [{fill}]",
            "kmovq k1, {mask}",
            $($setup,)*
            $(group_load!($z, $r, $ask),)+
            $first,
            "add {out}, {step}",
            "dec {n}",
            "jz 3f",
            "2:",
            $(group_load!($z, $r, $ask),)+
            $join,
            "add {out}, {step}",
            "dec {n}",
            "jnz 2b",
            "3:",
            $($end,)*
            "vzeroupper",
            tables = in(reg) TABLES.as_ptr(),
            fill = in(reg) $fill,
            mask = in(reg) $mask,
            ahead = inout(reg) $ahead => _,
            step = in(reg) $step,
            $($r = inout(reg) $rows[$z] => _,)+
            out = inout(reg) $out => _,
            n = inout(reg) $n => _,
            $($extra)*
        )
    };
}

/// [`groups_asm`] for four rows of bytes or two of 2-byte elements,
/// asking ahead as `$ask`: each piece streamed whole to a line (`line`),
/// or, for a run `h` bytes into a line (`joined`, `{out}` the line's
/// start), each line joined from two pieces in registers, and the run's
/// two partial end lines in quarters. Written 16 bytes a streaming store
/// throughout, the pack of `bf16[4096,8192]{1,0:T(8,128)(2,1)}` into a
/// `Vec` (16 bytes into a line) took 8.6-9.1 ms against 6.3-7.1 on the
/// lines (Intel Xeon, 16 cores, 300 MiB L3); joined, `s8[8192,8192]` in
/// `(8,128)(4,1)` tiles took 6.0-7.4 ms there against 7.0-9.2, and here
/// (2 vCPUs, `relayout_ab.py`) the `s8` and `bf16` packs 0.97-0.99 of the
/// time.
macro_rules! groups_rows {
    (4, line, $ask:ident, $($arg:expr),+) => {
        groups_asm!(join4!(line, line), join4!(line, line), 256usize, $ask, $($arg),+;
            (0, r0), (1, r1), (2, r2), (3, r3); []; [];)
    };
    (2, line, $ask:ident, $($arg:expr),+) => {
        groups_asm!(join2!(line, line), join2!(line, line), 128usize, $ask, $($arg),+;
            (0, r0), (1, r1); []; [];)
    };
    (4, joined($h:expr), $ask:ident, $($arg:expr),+) => {
        groups_asm!(join4!(head, joined), join4!(joined, joined), 256usize, $ask, $($arg),+;
            (0, r0), (1, r1), (2, r2), (3, r3); [group_index!()]; [group_tail!()];
            iota = in(reg) super::joins::IOTA.as_ptr(), h = in(reg) $h, back = in(reg) 64 - $h,)
    };
    (2, joined($h:expr), $ask:ident, $($arg:expr),+) => {
        groups_asm!(join2!(head, joined), join2!(joined, joined), 128usize, $ask, $($arg),+;
            (0, r0), (1, r1); [group_index!()]; [group_tail!()];
            iota = in(reg) super::joins::IOTA.as_ptr(), h = in(reg) $h, back = in(reg) 64 - $h,)
    };
}

/// The index of the joins of [`group_store`] into `zmm17`: byte `i` names
/// byte `64 - h + i` of the piece before and the next piece (`{back}` is
/// `64 - h`).
macro_rules! group_index {
    () => {
        concat!(
            "vmovdqu64 zmm16, [{iota}]\n",
            "vpbroadcastb zmm17, {back:e}\n",
            "vpaddb zmm17, zmm17, zmm16\n",
        )
    };
}

/// Where [`interleave_steps`] asks for the source ahead of its reads.
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) enum Ahead {
    /// Each row's line this many bytes past the one read (the same
    /// columns of a later band of long rows).
    Rows(usize),
    /// Two lines for each line read, in order from this many bytes past
    /// the first row's start (the rows under a band of short rows, which
    /// lie one after another).
    Linear(usize),
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
    ahead: Ahead,
    next: *const u8,
) {
    // Bytes into its line, and the line's start (`joined`).
    let h = out.addr() % 64;
    let line = out.wrapping_sub(h);
    let on_line = h == 0;
    // SAFETY: the caller's contract covers every byte read under the
    // mask, every byte written and the fill's 64; prefetches touch
    // nothing. The tables are 256 readable bytes, `IOTA` 64. Off a line,
    // `out` is on 16 bytes (the caller's contract), so `h` is 16, 32 or
    // 48: the head's quarters write the run's first `64 - h` bytes, each
    // joined line lies inside the run (it starts `64 - h` bytes or more
    // in and ends `h` bytes or more before the end), and the tail's
    // quarters write its last `h`. Every vector and mask register the
    // assembly writes (and zmm0-15, whose upper halves `vzeroupper`
    // clears) is declared clobbered whole, the pointers and count it
    // moves are scratch, the flags change (no `preserves_flags`); no
    // stack, and `vzeroupper` leaves the upper halves clean.
    unsafe {
        match (ahead, k, on_line) {
            (Ahead::Rows(a), 4, true) => groups_rows!(4, line, rows, rows, out, n, mask, fill, a),
            (Ahead::Rows(a), 4, false) => {
                groups_rows!(4, joined(h), rows, rows, line, n, mask, fill, a);
            }
            (Ahead::Rows(a), _, true) => groups_rows!(2, line, rows, rows, out, n, mask, fill, a),
            (Ahead::Rows(a), _, false) => {
                groups_rows!(2, joined(h), rows, rows, line, n, mask, fill, a);
            }
            (Ahead::Linear(_), 4, true) => {
                groups_rows!(4, line, linear, rows, out, n, mask, fill, next);
            }
            (Ahead::Linear(_), 4, false) => {
                groups_rows!(4, joined(h), linear, rows, line, n, mask, fill, next);
            }
            (Ahead::Linear(_), _, true) => {
                groups_rows!(2, line, linear, rows, out, n, mask, fill, next);
            }
            (Ahead::Linear(_), _, false) => {
                groups_rows!(2, joined(h), linear, rows, line, n, mask, fill, next);
            }
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
/// line read asks for another as `ahead` says.
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
    ahead: Ahead,
) {
    let whole = (valid / 64).min(count);
    let [(n0, o0, s0), (n1, o1, s1)] = outer;
    // The line a `Linear` ahead asks for next.
    let mut next = match ahead {
        Ahead::Linear(a) => src.wrapping_add(a),
        Ahead::Rows(_) => src,
    };
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
                    steps(k, rows, out, whole, u64::MAX, fill, ahead, next);
                    next = next.wrapping_add(128 * k * whole);
                }
                if whole < count {
                    let cut = (1u64 << (valid % 64)) - 1;
                    let to = out.wrapping_add(64 * k * whole);
                    let ahead = match ahead {
                        Ahead::Rows(_) => Ahead::Rows(0),
                        linear @ Ahead::Linear(_) => linear,
                    };
                    steps(k, at(whole), to, 1, cut, fill, ahead, next);
                    next = next.wrapping_add(128 * k);
                }
                if whole + 1 < count {
                    let to = out.wrapping_add(64 * k * (whole + 1));
                    let rest = count - whole - 1;
                    steps(k, at(whole + 1), to, rest, 0, fill, Ahead::Rows(0), next);
                }
            }
        }
    }
}

/// Row `$j`'s index (`zmm$x`: indices `64 - h` on, which take the last
/// `h` bytes of the piece before and the first `64 - h` of the next, `h`
/// as far as its pointer `{$r}` is into its line) and its piece before
/// (`zmm$p`, from slot `$j` of `{carry}`). `rcx` and `rdx` are scratch.
macro_rules! split_setup {
    ($j:literal, $r:ident, $p:literal, $x:literal) => {
        concat!(
            "mov rcx, {",
            stringify!($r),
            "}\n",
            "and ecx, 63\n",
            join_index!($x),
            "vmovdqu64 zmm",
            $p,
            ", [{carry} + 64*",
            $j,
            "]\n",
        )
    };
}

/// The line that piece `zmm$j` starts in, into `zmm18`: the piece before
/// (`zmm$p`) and the piece joined by the index in `zmm$x`; the piece then
/// becomes the piece before.
macro_rules! join_piece {
    ($j:literal, $p:literal, $x:literal) => {
        concat!(
            run_join!($x, 18; $p, $j),
            "vmovdqa64 zmm",
            $p,
            ", zmm",
            $j,
            "\n",
        )
    };
}

/// Row `$j`'s piece (`zmm$j`, for `{$r}`) joined to the piece before it
/// (`zmm$p`) by its index (`zmm$x`) into `zmm18`, the line the piece
/// starts in, stored as `$store` (`split_store!`); the piece then becomes
/// the piece before, and `{r$j}` moves on a piece.
macro_rules! split_line {
    ($j:literal, $r:ident, $p:literal, $x:literal, $store:ident) => {
        concat!(
            join_piece!($j, $p, $x),
            "mov rax, {",
            stringify!($r),
            "}\n",
            split_store!($store),
            "add {",
            stringify!($r),
            "}, 64\n",
        )
    };
}

/// The joined line (`zmm18`) for a piece at `rax`, stored as `$store`
/// (`join_store!`: streamed whole, the head of a row, or the tail past
/// its last piece) on the line the piece starts in. `rcx` and `rdx` are
/// scratch.
macro_rules! split_store {
    ($store:ident) => {
        concat!(
            "mov ecx, eax\n",
            "and ecx, 63\n",
            "and rax, -64\n",
            join_store!($store),
        )
    };
}

/// Four rows of bytes from `{input}` into `zmm0..zmm3`: pairs of rows 0
/// and 1 (even 2-byte lanes) and of rows 2 and 3 (odd ones), columns
/// 0..32 then 32..64, then each pair into its rows.
macro_rules! split4 {
    () => {
        concat!(
            "vmovdqu64 zmm4, [{input}]\n",
            "vmovdqu64 zmm5, [{input} + 64]\n",
            "vmovdqu64 zmm6, [{input} + 128]\n",
            "vmovdqu64 zmm7, [{input} + 192]\n",
            split4!(apart),
        )
    };
    // The groups already in `zmm4..zmm7`.
    (apart) => {
        concat!(
            "vmovdqa64 zmm8, zmm4\n",
            "vpermt2w zmm8, zmm20, zmm5\n",
            "vpermt2w zmm4, zmm21, zmm5\n",
            "vmovdqa64 zmm9, zmm6\n",
            "vpermt2w zmm9, zmm20, zmm7\n",
            "vpermt2w zmm6, zmm21, zmm7\n",
            "vmovdqa64 zmm0, zmm8\n",
            "vpermt2b zmm0, zmm22, zmm9\n",
            "vmovdqa64 zmm1, zmm8\n",
            "vpermt2b zmm1, zmm23, zmm9\n",
            "vmovdqa64 zmm2, zmm4\n",
            "vpermt2b zmm2, zmm22, zmm6\n",
            "vmovdqa64 zmm3, zmm4\n",
            "vpermt2b zmm3, zmm23, zmm6\n",
        )
    };
}

/// Two rows of 2-byte elements from `{input}` into `zmm0` and `zmm1`.
macro_rules! split2 {
    () => {
        concat!(
            "vmovdqu64 zmm4, [{input}]\n",
            "vmovdqu64 zmm5, [{input} + 64]\n",
            split2!(apart),
        )
    };
    // The groups already in `zmm4` and `zmm5`.
    (apart) => {
        concat!(
            "vmovdqa64 zmm0, zmm4\n",
            "vpermt2w zmm0, zmm20, zmm5\n",
            "vmovdqa64 zmm1, zmm4\n",
            "vpermt2w zmm1, zmm21, zmm5\n",
        )
    };
}

/// One row from `{input}` into `zmm0`.
macro_rules! split1 {
    () => {
        "vmovdqu64 zmm0, [{input}]\n"
    };
}

/// The tail of [`deinterleave_plain`]: the `$i`-th 64 bytes of the last
/// step's groups into `zmm$z` under the mask in `{m$i}`, the rest of the
/// register zero. A masked-off byte is never read (nor can it fault), so
/// the loads end where the groups do.
macro_rules! plain_tail_load {
    ($i:literal, $z:literal) => {
        concat!(
            "kmovq k1, {m",
            $i,
            "}\n",
            "vmovdqu8 zmm",
            $z,
            " {{k1}}{{z}}, [{input} + 64*",
            $i,
            "]\n",
        )
    };
}

/// Row `$j`'s 64 bytes, `zmm$j`, plainly to `{r$j}` under `$mask`
/// (empty: all of them), and the pointer moved on.
macro_rules! plain_store {
    ($j:literal, $mask:literal) => {
        concat!(
            "vmovdqu8 [{r",
            $j,
            "}]",
            $mask,
            ", zmm",
            $j,
            "\n",
            "add {r",
            $j,
            "}, 64\n",
        )
    };
}

/// [`deinterleave_plain`] for `k` rows: `{n}` whole steps of `$split`
/// (`split4!` or `split2!`, `$step` bytes of groups each), then, where
/// `{tail}` is not zero, the last step's groups under the masks `$m`
/// (into the registers `$z`, from `zmm4`) and its rows' bytes under
/// `{tail}`. A row `($j, $r)`: its number and the operand of its pointer.
macro_rules! plain_asm {
    ($split:ident, $step:literal, [$(($i:literal, $z:literal, $m:ident)),+];
     $(($j:literal, $r:ident)),+; $input:expr, $n:expr, $tail:expr, $masks:expr, $rows:expr) => {
        asm_avx512!(
            "vmovdqu64 zmm20, [{splits}]",
            "vmovdqu64 zmm21, [{splits} + 64]",
            "vmovdqu64 zmm22, [{splits} + 128]",
            "vmovdqu64 zmm23, [{splits} + 192]",
            "test {n}, {n}",
            "jz 3f",
            "2:",
            $split!(),
            $(plain_store!($j, ""),)+
            concat!("add {input}, ", $step),
            "dec {n}",
            "jnz 2b",
            "3:",
            "test {tail}, {tail}",
            "jz 4f",
            $(plain_tail_load!($i, $z),)+
            $split!(apart),
            "kmovq k2, {tail}",
            $(plain_store!($j, " {{k2}}"),)+
            "4:",
            "vzeroupper",
            splits = in(reg) SPLITS.as_ptr(),
            input = inout(reg) $input => _,
            n = inout(reg) $n => _,
            tail = in(reg) $tail,
            $($m = in(reg) $masks[$i],)+
            $($r = inout(reg) $rows[$j] => _,)+
        )
    };
}

/// `k` rows of groups (4 rows of bytes, or 2 of 2-byte elements) put
/// apart with plain stores: the `k * bytes` bytes of groups from `input`
/// into `bytes` bytes of each row, row `j` from `rows[j]` on. Each step
/// puts 64 bytes of every row together by the unpacks' permutes
/// ([`split4`], [`split2`]) and stores them plainly (the rows may be in
/// a stage, or in the cache); the last step, under 64 bytes a row, loads
/// and stores under masks, so a row of any length takes no other path (a
/// ragged tile's 50 columns among them). Through 16 columns a call of
/// SSE2 (and the ragged tile's last 2 through a plain loop), the groups
/// of a `bf16[48629,690]{1,0:T(4,128)(2,1)}` unpack took 0.25 us a tile
/// row in the cache against 0.17 here, and the unpack from memory
/// 12.5-13.2 ms against 11.9-12.2; `s8[100000,600]{1,0:T(8,128)(4,1)}`
/// 10.8-10.9 against 10.0 (Intel Xeon, alternated).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); `k`
/// is 2 or 4; `input` is readable for `k * bytes` bytes; for each row `j
/// < k`, the `bytes` bytes from `rows[j]` are writable and overlap
/// neither `input` nor another row.
pub(in crate::relayout::arch) unsafe fn deinterleave_plain(
    _: Avx512Vbmi,
    k: usize,
    rows: [*mut u8; 4],
    input: *const u8,
    bytes: usize,
) {
    let (n, rem) = (bytes / 64, bytes % 64);
    // The last step's groups, 64 bytes a register, and each row's bytes
    // (none: no last step).
    let mask = |len: usize| {
        if len >= 64 {
            u64::MAX
        } else {
            (1u64 << len) - 1
        }
    };
    let masks: [u64; 4] = core::array::from_fn(|i| mask((k * rem).saturating_sub(64 * i)));
    let tail = mask(rem);
    // SAFETY: the caller's contract covers the groups and the rows: the
    // whole steps read `64 * k` bytes each and write 64 of each row, in
    // order, and the last step reads and writes only the bytes its masks
    // let through (the groups' last `k * rem`, each row's last `rem`);
    // the tables are readable. Every register the assembly writes is
    // declared (the vector registers whole, and zmm0-15, whose upper
    // halves `vzeroupper` clears; `k1`, `k2`), the pointers and count it
    // moves are scratch, the flags change; no stack.
    unsafe {
        if k == 4 {
            plain_asm!(split4, "256", [(0, 4, m0), (1, 5, m1), (2, 6, m2), (3, 7, m3)];
                (0, r0), (1, r1), (2, r2), (3, r3); input, n, tail, masks, rows);
        } else {
            plain_asm!(split2, "128", [(0, 4, m0), (1, 5, m1)];
                (0, r0), (1, r1); input, n, tail, masks, rows);
        }
    }
}

/// Asks for the source a step of `$step` bytes reads 4 KiB on: the tiles
/// of a band, and the next band's, lie one after another. Left to the
/// hardware's prefetchers, the loads of the tiles held most samples on an
/// Intel Xeon (480 MiB of L3): unpacking `f32`, `s8 (4,1)` and `bf16
/// (2,1)` tiles took 6.6-8.2, 9.8-10.0 and 8.1-9.1 ms against 5.5-6.3,
/// 6.7-8.2 and 5.3-7.0 with these requests, a step each (alternated
/// builds). Into the L2 cache only: asked into the L1 cache, the requests
/// hold its few fill buffers while they wait (`s8[8192,8192]` `(4,1)`
/// unpacked in 8.3 ms against 7.3, `f32[4096,4096]` `T(8,128)` 7.3-7.4
/// against 6.5-6.7, three alternated runs, 2-vCPU Intel Xeon).
macro_rules! band_ask {
    // The line `$at` bytes into the step, 4 KiB on.
    (@line $at:literal) => {
        concat!("prefetcht1 [{input} + 4096 + ", $at, "]\n")
    };
    (64) => {
        band_ask!(@line 0)
    };
    (128) => {
        concat!(band_ask!(64), band_ask!(@line 64))
    };
    (256) => {
        concat!(band_ask!(128), band_ask!(@line 128), band_ask!(@line 192))
    };
}

/// `{n}` steps of a group of rows, `$split` (`split4!` and the others;
/// empty for a tail, which reads nothing) putting each step's rows into
/// `zmm0..`, each row's piece then joined and stored as `$store`, the
/// pieces before in and back out of the slots. A row `($j, $r, $p, $x)`:
/// its number, the operand of its pointer, and the registers of its piece
/// before and of its index.
macro_rules! split_asm {
    ($store:ident, $split:expr, $step:tt, $rows:expr, $input:expr, $n:expr, $carry:expr;
     $(($j:literal, $r:ident, $p:literal, $x:literal)),+) => {
        asm_avx512!(
            "vmovdqu64 zmm16, [{iota}]",
            "vmovdqu64 zmm20, [{splits}]",
            "vmovdqu64 zmm21, [{splits} + 64]",
            "vmovdqu64 zmm22, [{splits} + 128]",
            "vmovdqu64 zmm23, [{splits} + 192]",
            $(split_setup!($j, $r, $p, $x),)+
            "2:",
            split_ask!($store, $step),
            $split,
            $(split_line!($j, $r, $p, $x, $store),)+
            "add {input}, {step}",
            "dec {n}",
            "jnz 2b",
            $(concat!("vmovdqu64 [{carry} + 64*", $j, "], zmm", $p),)+
            "vzeroupper",
            iota = in(reg) super::joins::IOTA.as_ptr(),
            splits = in(reg) SPLITS.as_ptr(),
            step = in(reg) $step as usize,
            input = inout(reg) $input => _,
            n = inout(reg) $n => _,
            carry = in(reg) $carry,
            $($r = inout(reg) $rows[$j] => _,)+
            out("rax") _, out("rcx") _, out("rdx") _,
        )
    };
}

/// The requests of [`split_asm`]'s steps: [`band_ask`]'s, but none for a
/// tail, which reads nothing.
macro_rules! split_ask {
    (tail, $step:tt) => {
        ""
    };
    ($store:ident, $step:tt) => {
        band_ask!($step)
    };
}

/// [`split_asm`] for `k` rows (4, 2 or 1), each step's rows put
/// together by `$split`.
macro_rules! split_rows {
    (4, $store:ident, $split:expr, $rows:expr, $input:expr, $n:expr, $carry:expr) => {
        split_asm!($store, $split, 256, $rows, $input, $n, $carry;
            (0, r0, 24, 28), (1, r1, 25, 29), (2, r2, 26, 30), (3, r3, 27, 31))
    };
    (2, $store:ident, $split:expr, $rows:expr, $input:expr, $n:expr, $carry:expr) => {
        split_asm!($store, $split, 128, $rows, $input, $n, $carry;
            (0, r0, 24, 28), (1, r1, 25, 29))
    };
    (1, $store:ident, $split:expr, $rows:expr, $input:expr, $n:expr, $carry:expr) => {
        split_asm!($store, $split, 64, $rows, $input, $n, $carry; (0, r0, 24, 28))
    };
}

/// The registers of row `$r` of a band: its piece before (`zmm24..31`,
/// then `zmm6..13` for rows 8-15) and its index (`zmm10..15`, 17, 19: the
/// split leaves them alone), as the last two arguments of `$m`. Rows 8-15
/// come only in bands of 16 rows of 2-byte elements (`split2!` leaves
/// `zmm6..13` alone), where rows 12-15's pieces take the index registers
/// and every row's index is found each step instead (`band_row_fresh`).
macro_rules! band_regs {
    (0, $m:ident, $($a:tt)*) => { $m!($($a)* 24, 10) };
    (1, $m:ident, $($a:tt)*) => { $m!($($a)* 25, 11) };
    (2, $m:ident, $($a:tt)*) => { $m!($($a)* 26, 12) };
    (3, $m:ident, $($a:tt)*) => { $m!($($a)* 27, 13) };
    (4, $m:ident, $($a:tt)*) => { $m!($($a)* 28, 14) };
    (5, $m:ident, $($a:tt)*) => { $m!($($a)* 29, 15) };
    (6, $m:ident, $($a:tt)*) => { $m!($($a)* 30, 17) };
    (7, $m:ident, $($a:tt)*) => { $m!($($a)* 31, 19) };
    (8, $m:ident, $($a:tt)*) => { $m!($($a)* 6, 17) };
    (9, $m:ident, $($a:tt)*) => { $m!($($a)* 7, 17) };
    (10, $m:ident, $($a:tt)*) => { $m!($($a)* 8, 17) };
    (11, $m:ident, $($a:tt)*) => { $m!($($a)* 9, 17) };
    (12, $m:ident, $($a:tt)*) => { $m!($($a)* 10, 17) };
    (13, $m:ident, $($a:tt)*) => { $m!($($a)* 11, 17) };
    (14, $m:ident, $($a:tt)*) => { $m!($($a)* 12, 17) };
    (15, $m:ident, $($a:tt)*) => { $m!($($a)* 13, 17) };
}

/// Row `$r` of a band of 16 rows, piece `zmm$j` of its group, its index
/// found first.
macro_rules! band_row16 {
    ($r:tt, $j:literal) => {
        band_regs!($r, band_row_fresh, $r, $j,)
    };
}

/// [`band_row_at`] with the row's index found into `zmm17` first (`$x`,
/// its own index register, may hold another row's piece).
macro_rules! band_row_fresh {
    ($r:tt, $j:literal, $c:literal, $x:literal) => {
        concat!(
            band_pointer!($r),
            "mov ecx, eax\n",
            "and ecx, 63\n",
            join_index!(17),
            band_row_at!(@joined $j, $c, 17)
        )
    };
}

/// Row `$r`'s piece before from its slot (its index found each step).
macro_rules! band_load_fresh {
    ($r:tt, $c:literal, $x:literal) => {
        concat!("vmovdqu64 zmm", $c, ", [{carry} + 64*", $r, "]\n")
    };
}

/// Group `$g` of two rows of 2-byte elements in a band of 16 rows.
macro_rules! band_group16 {
    ($g:literal, $r0:tt, $r1:tt) => {
        band_group!($g, 128, split2!(), band_row16!($r0, 0), band_row16!($r1, 1))
    };
}

/// Row `$r` of the band, piece `zmm$j` of its group ([`band_row_at`]).
macro_rules! band_row {
    ($r:tt, $j:literal) => {
        band_regs!($r, band_row_at, $r, $j,)
    };
}

/// Row `$r` of the band: its piece (`zmm$j`) joined by its index
/// (`zmm$x`, [`band_index`]) to the piece before (`zmm$c`) into the line
/// the piece starts in, streamed. Its pointer is `{p}` plus `$r` pitches.
macro_rules! band_row_at {
    ($r:tt, $j:literal, $c:literal, $x:literal) => {
        concat!(band_pointer!($r), band_row_at!(@joined $j, $c, $x))
    };
    (@joined $j:literal, $c:literal, $x:literal) => {
        concat!(
            join_piece!($j, $c, $x),
            "and rax, -64\n",
            "vmovntdq [rax], zmm18\n",
        )
    };
}

/// Row `$r`'s pointer into `rax`: `{p}` plus `$r` pitches.
macro_rules! band_pointer {
    (0) => {
        "mov rax, {p}\n"
    };
    ($r:tt) => {
        concat!("imul rax, {pitch}, ", $r, "\n", "add rax, {p}\n")
    };
}

/// Row `$r`'s index into `zmm$x` (`join_index!`): the same for every piece
/// of the row, each 64 bytes after the last.
macro_rules! band_index {
    ($r:tt, $c:literal, $x:literal) => {
        concat!(
            band_pointer!($r),
            "mov ecx, eax\n",
            "and ecx, 63\n",
            join_index!($x)
        )
    };
}

/// Row `$r`'s piece before from its slot, and its index.
macro_rules! band_load {
    ($r:tt, $c:literal, $x:literal) => {
        concat!(
            "vmovdqu64 zmm",
            $c,
            ", [{carry} + 64*",
            $r,
            "]\n",
            band_index!($r, $c, $x)
        )
    };
}

/// Row `$r`'s piece before back to its slot.
macro_rules! band_keep {
    ($r:tt, $c:literal, $x:literal) => {
        concat!("vmovdqu64 [{carry} + 64*", $r, "], zmm", $c, "\n")
    };
}

/// Group `$g` of a tile: its steps of `64 * k` bytes, from `$g` group
/// strides past `{q}`, each into `zmm0..` by `$split` and then each of
/// its rows (`$row`, `band_row!`), `{p}` a step on the rows each step and
/// back to the tile's start after the last.
macro_rules! band_group {
    ($g:tt, $step:tt, $split:expr, $($row:expr),+) => {
        concat!(
            "imul {input}, {sg}, ",
            $g,
            "\n",
            "add {input}, {q}\n",
            "mov {cnt}, {steps}\n",
            "2:\n",
            band_ask!($step),
            $split,
            $($row,)+
            "add {p}, 64\n",
            "add {input}, ",
            $step,
            "\n",
            "dec {cnt}\n",
            "jnz 2b\n",
            "mov rdx, {steps}\n",
            "shl rdx, 6\n",
            "sub {p}, rdx\n",
        )
    };
}

/// Group `$g` of four rows of bytes (`split4!`), rows `$r..`.
macro_rules! band_group4 {
    ($g:literal, $r0:tt, $r1:tt, $r2:tt, $r3:tt) => {
        band_group!(
            $g,
            256,
            split4!(),
            band_row!($r0, 0),
            band_row!($r1, 1),
            band_row!($r2, 2),
            band_row!($r3, 3)
        )
    };
}

/// Group `$g` of two rows of 2-byte elements (`split2!`), rows `$r0` and
/// `$r1`.
macro_rules! band_group2 {
    ($g:literal, $r0:tt, $r1:tt) => {
        band_group!($g, 128, split2!(), band_row!($r0, 0), band_row!($r1, 1))
    };
}

/// Group `$g` of one row (`split1!`), row `$g`.
macro_rules! band_group1 {
    ($g:tt) => {
        band_group!($g, 64, split1!(), band_row!($g, 0))
    };
}

/// Every tile of a band, its groups one after another (`$group`,
/// `band_group!`), each row's piece before in `zmm24..` from the slots at
/// the start to the slots at the end: no slot is stored and loaded again
/// between tiles.
macro_rules! band_asm {
    ($tiles:expr, $carry:expr, [$($r:tt),+], $($group:expr),+) => {
        band_asm!(band_load, $tiles, $carry, [$($r),+], $($group),+)
    };
    ($load:ident, $tiles:expr, $carry:expr, [$($r:tt),+], $($group:expr),+) => {
        asm_avx512!(
            // A band of one group or one row uses no group or row stride.
            "/* {sg} {pitch} */",
            "vmovdqu64 zmm16, [rax]",
            "vmovdqu64 zmm20, [rcx]",
            "vmovdqu64 zmm21, [rcx + 64]",
            "vmovdqu64 zmm22, [rcx + 128]",
            "vmovdqu64 zmm23, [rcx + 192]",
            $(band_regs!($r, $load, $r,),)+
            "3:",
            $($group,)+
            "mov rdx, {steps}",
            "shl rdx, 6",
            "add {p}, rdx",
            "add {q}, {stride}",
            "dec {tiles}",
            "jnz 3b",
            $(band_regs!($r, band_keep, $r,),)+
            "vzeroupper",
            inout("rax") super::joins::IOTA.as_ptr() => _,
            inout("rcx") SPLITS.as_ptr() => _,
            out("rdx") _,
            q = inout(reg) $tiles.source => _,
            sg = in(reg) $tiles.group_bytes,
            stride = in(reg) $tiles.stride,
            steps = in(reg) $tiles.steps,
            cnt = out(reg) _,
            tiles = inout(reg) $tiles.count => _,
            p = inout(reg) $tiles.row => _,
            pitch = in(reg) $tiles.pitch,
            input = out(reg) _,
            carry = in(reg) $carry,
        )
    };
}

/// The later tiles of a band for [`deinterleave_tiles`]: `count` tiles
/// from the group at `source` (the first tile's first), `steps` steps a
/// tile, tiles `stride` bytes apart and groups `group_bytes` apart; the
/// rows' pieces from `row` on (row 0's), rows `pitch` bytes apart.
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) struct BandTiles {
    pub(in crate::relayout::arch) source: *const u8,
    pub(in crate::relayout::arch) group_bytes: usize,
    pub(in crate::relayout::arch) stride: usize,
    pub(in crate::relayout::arch) steps: usize,
    pub(in crate::relayout::arch) count: usize,
    pub(in crate::relayout::arch) row: *mut u8,
    pub(in crate::relayout::arch) pitch: usize,
}

/// Whether [`deinterleave_tiles`] takes `groups` groups of `k` rows: 8
/// rows at most, one piece before each in `zmm24..zmm31`, or 16 rows of
/// 2-byte elements (`T(16,128)(2,1)`), whose pieces before take
/// `zmm6..zmm13` too, their indices found each step (`bf16[4096,8192]`
/// unpacked in 3.5 ms against 4.1 a tile and a group a call, and
/// `bf16[1,7,1421,3124]` in 4.3-4.7 at every depth of the caller's stack
/// against 4.6-6.3).
pub(in crate::relayout::arch) fn band_tiles(k: usize, groups: usize) -> bool {
    matches!((k, groups), (4, 1 | 2) | (1 | 2, 1 | 2 | 4 | 8))
}

/// [`deinterleave_steps`]' later pieces of every tile of `tiles` in one
/// call, tile by tile and group by group, each row's piece before held in
/// a register (`zmm24..`) from tile to tile and its index too (`zmm10..`,
/// then 17 and 19). Called a tile and a group at a time, the slots that
/// carry the pieces between calls were stored behind the streaming stores
/// still waiting to leave, and a later load 4 KiB apart from a slot
/// waited for them: where the stack put the slots, one process in several
/// took 2.5 times as long (`s8[8192,8192]{1,0:T(8,128)(4,1)}` unpacked in
/// 4.0-4.3 ms or 10.7-11.2 by the depth of the caller's stack; in one
/// call, 3.7-4.0 at every depth, AMD EPYC Zen 4). A step of every group
/// at a time took twice as long on rows of 512 bytes a tile
/// (`f32[4093,4093]{1,0:T(8,128)}`: eight rows a line each in turn).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof);
/// [`band_tiles`]`(k, groups)`; `tiles.count` and `tiles.steps` at least
/// 1; for each tile `t` and group `g`, the `64 * k * steps` bytes from
/// `source + t * stride + g * group_bytes` (wrapping) are readable;
/// `carry` is readable and writable for `64 * k * groups` bytes; for each
/// row `r < k * groups`, the line each of the `count * steps` pieces from
/// `row + r * pitch` on starts in is writable (the piece starts 64 bytes
/// or more into the row's run) and overlaps neither the groups nor
/// `carry`.
pub(in crate::relayout::arch) unsafe fn deinterleave_tiles(
    _: Avx512Vbmi,
    k: usize,
    groups: usize,
    tiles: BandTiles,
    carry: *mut u8,
) {
    // SAFETY: the caller's contract covers the groups, the slots and the
    // lines; the tables and `IOTA` are readable; the prefetches, which may
    // point past the groups, are hints that never fault. Every register the
    // assembly writes is declared (the vector registers whole, and
    // zmm0-15, whose upper halves `vzeroupper` clears), the pointers and
    // counts it moves are scratch, the flags change; no stack.
    unsafe {
        match (k, groups) {
            (4, 1) => band_asm!(tiles, carry, [0, 1, 2, 3], band_group4!(0, 0, 1, 2, 3)),
            (4, _) => band_asm!(
                tiles,
                carry,
                [0, 1, 2, 3, 4, 5, 6, 7],
                band_group4!(0, 0, 1, 2, 3),
                band_group4!(1, 4, 5, 6, 7)
            ),
            (2, 1) => band_asm!(tiles, carry, [0, 1], band_group2!(0, 0, 1)),
            (2, 2) => band_asm!(
                tiles,
                carry,
                [0, 1, 2, 3],
                band_group2!(0, 0, 1),
                band_group2!(1, 2, 3)
            ),
            (2, 8) => band_asm!(
                band_load_fresh,
                tiles,
                carry,
                [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
                band_group16!(0, 0, 1),
                band_group16!(1, 2, 3),
                band_group16!(2, 4, 5),
                band_group16!(3, 6, 7),
                band_group16!(4, 8, 9),
                band_group16!(5, 10, 11),
                band_group16!(6, 12, 13),
                band_group16!(7, 14, 15)
            ),
            (2, _) => band_asm!(
                tiles,
                carry,
                [0, 1, 2, 3, 4, 5, 6, 7],
                band_group2!(0, 0, 1),
                band_group2!(1, 2, 3),
                band_group2!(2, 4, 5),
                band_group2!(3, 6, 7)
            ),
            (_, 1) => band_asm!(tiles, carry, [0], band_group1!(0)),
            (_, 2) => band_asm!(tiles, carry, [0, 1], band_group1!(0), band_group1!(1)),
            (_, 4) => band_asm!(
                tiles,
                carry,
                [0, 1, 2, 3],
                band_group1!(0),
                band_group1!(1),
                band_group1!(2),
                band_group1!(3)
            ),
            _ => band_asm!(
                tiles,
                carry,
                [0, 1, 2, 3, 4, 5, 6, 7],
                band_group1!(0),
                band_group1!(1),
                band_group1!(2),
                band_group1!(3),
                band_group1!(4),
                band_group1!(5),
                band_group1!(6),
                band_group1!(7)
            ),
        }
    }
}

/// One step of a group of a run ([`deinterleave_run`]): `$split` puts
/// each row's piece into `zmm0..`, each kept in a register of its own
/// (`($from, $to)`), the source 4 KiB on is asked for ([`band_ask!`]),
/// and `{input}` moves on `$step` bytes.
macro_rules! run_step {
    ($split:expr, $step:tt, $(($from:literal, $to:literal)),+) => {
        concat!(
            $split,
            band_ask!($step),
            $("vmovdqa64 zmm", $to, ", zmm", $from, "\n",)+
            "add {input}, ", $step, "\n",
        )
    };
}

/// The `$n` lines of a group of a run (2, 4 or 8), in the order the
/// destination lies: piece `j`, kept in `zmm(24 + j)`, joined to the one
/// before it (the group's first to the last piece carried in `zmm19`)
/// into the line it starts in (`run_line!`, the index in `zmm17`); then
/// the last piece carried on in `zmm19` and `{out}` moved past the lines.
macro_rules! run_lines {
    (2) => {
        concat!(
            run_line!(17, 18; 19, 24, 0),
            run_line!(17, 18; 24, 25, 64),
            "vmovdqa64 zmm19, zmm25\n",
            "add {out}, 128\n",
        )
    };
    (4) => {
        concat!(
            run_line!(17, 18; 19, 24, 0),
            run_line!(17, 18; 24, 25, 64),
            run_line!(17, 18; 25, 26, 128),
            run_line!(17, 18; 26, 27, 192),
            "vmovdqa64 zmm19, zmm27\n",
            "add {out}, 256\n",
        )
    };
    (8) => {
        concat!(
            run_line!(17, 18; 19, 24, 0),
            run_line!(17, 18; 24, 25, 64),
            run_line!(17, 18; 25, 26, 128),
            run_line!(17, 18; 26, 27, 192),
            run_line!(17, 18; 27, 28, 256),
            run_line!(17, 18; 28, 29, 320),
            run_line!(17, 18; 29, 30, 384),
            run_line!(17, 18; 30, 31, 448),
            "vmovdqa64 zmm19, zmm31\n",
            "add {out}, 512\n",
        )
    };
}

/// Every group of a run: its `$step`s (`run_step!`) keep each row's
/// pieces, then its `$lines` lines ([`run_lines`]) stream them in the
/// order the destination lies, the last piece carried to the next
/// group; the last piece's bytes past its line go plainly at the end.
macro_rules! run_asm {
    ($run:expr, $lines:tt, [$($step:expr),+]) => {
        asm_avx512!(
            "vmovdqu64 zmm16, [rdx]",
            "vmovdqu64 zmm20, [rcx]",
            "vmovdqu64 zmm21, [rcx + 64]",
            "vmovdqu64 zmm22, [rcx + 128]",
            "vmovdqu64 zmm23, [rcx + 192]",
            "vmovdqu64 zmm19, [rax]",
            "mov ecx, {shift:e}",
            join_index!(17),
            "2:",
            $($step,)+
            run_lines!($lines),
            "add {input}, {gap}",
            "dec {n}",
            "jnz 2b",
            run_tail!(17, 18, 19),
            "vzeroupper",
            inout("rax") $run.carry => _,
            inout("rcx") SPLITS.as_ptr() => _,
            inout("rdx") super::joins::IOTA.as_ptr() => _,
            input = inout(reg) $run.source => _,
            gap = in(reg) $run.gap,
            n = inout(reg) $run.groups => _,
            out = inout(reg) $run.out => _,
            shift = in(reg) $run.shift,
        )
    };
}

/// The groups [`deinterleave_run`] takes: `groups` of them (at least
/// one), the first at `source`, each `gap` bytes (wrapping) past the end
/// of the one before; the line the first group's first piece starts in
/// (`out`), `shift` bytes into it (under 64); the 64 bytes before that
/// piece on the run, as written (`carry`).
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) struct GroupRun {
    pub(in crate::relayout::arch) source: *const u8,
    pub(in crate::relayout::arch) gap: usize,
    pub(in crate::relayout::arch) groups: usize,
    pub(in crate::relayout::arch) out: *mut u8,
    pub(in crate::relayout::arch) shift: usize,
    pub(in crate::relayout::arch) carry: *const u8,
}

/// Whether [`deinterleave_run`] takes groups of `k` rows of `steps`
/// pieces each: every piece of a group in a register of its own
/// (`zmm24..zmm31`).
pub(in crate::relayout::arch) fn run_groups(k: usize, steps: usize) -> bool {
    matches!((k, steps), (4, 1 | 2) | (2, 1 | 2 | 4))
}

/// Groups of `k` rows whose rows lie one after another in the
/// destination, group after group (a rank-1 array's `T(512)(128)(2,1)`
/// tiles): each group's `steps` steps into a piece of each row, kept in
/// registers, then every piece joined to the one before it into the line
/// it starts in, streamed in the destination's order; the piece before
/// the next group's first stays in a register. Through a stage on the
/// stack, streamed from there, the stage's loads waited behind the
/// streaming stores by where the stack put it:
/// `bf16[33554432]{0:T(512)(128)(2,1)}` unpacked in 7.5-8.5 ms from most
/// depths of the caller's stack and 4.5 from a few; in registers,
/// 3.6-4.3 from every depth (AMD EPYC Zen 4). Each step asks for the
/// source 4 KiB on ([`band_ask!`]): without, its loads held most samples
/// on an Intel Xeon (480 MiB of L3), and the `T(1024)(128)(2,1)` unpack
/// took 8.6-8.7 ms against 5.3-5.8, `T(512)(128)(2,1)` 7.9-8.2 against
/// 5.4-6.1, `s8[67108864]{0:T(1024)(128)(4,1)}` 8.7-9.5 against 6.2-6.5
/// (three alternated runs, 2-vCPU).
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof);
/// [`run_groups`]`(k, steps)`; `run.groups` at least 1; each group's
/// `64 * k * steps` bytes are readable; `run.carry` is readable for 64
/// bytes; the `64 * k * steps * run.groups + run.shift` bytes from
/// `run.out` are writable and overlap no group.
pub(in crate::relayout::arch) unsafe fn deinterleave_run(
    _: Avx512Vbmi,
    k: usize,
    steps: usize,
    run: GroupRun,
) {
    // SAFETY: the caller's contract covers the groups, the carried piece
    // and the lines; the tables and `IOTA` are readable. Every register
    // the assembly writes is declared (the vector registers whole, and
    // zmm0-15, whose upper halves `vzeroupper` clears), the pointers and
    // count it moves are scratch, the flags change; no stack.
    unsafe {
        match (k, steps) {
            (4, 1) => run_asm!(
                run,
                4,
                [run_step!(
                    split4!(),
                    256,
                    (0, 24),
                    (1, 25),
                    (2, 26),
                    (3, 27)
                )]
            ),
            (4, _) => run_asm!(
                run,
                8,
                [
                    run_step!(split4!(), 256, (0, 24), (1, 26), (2, 28), (3, 30)),
                    run_step!(split4!(), 256, (0, 25), (1, 27), (2, 29), (3, 31))
                ]
            ),
            (_, 1) => run_asm!(run, 2, [run_step!(split2!(), 128, (0, 24), (1, 25))]),
            (_, 2) => run_asm!(
                run,
                4,
                [
                    run_step!(split2!(), 128, (0, 24), (1, 26)),
                    run_step!(split2!(), 128, (0, 25), (1, 27))
                ]
            ),
            _ => run_asm!(
                run,
                8,
                [
                    run_step!(split2!(), 128, (0, 24), (1, 28)),
                    run_step!(split2!(), 128, (0, 25), (1, 29)),
                    run_step!(split2!(), 128, (0, 26), (1, 30)),
                    run_step!(split2!(), 128, (0, 27), (1, 31))
                ]
            ),
        }
    }
}

/// Where [`deinterleave_steps`] writes each row's pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::relayout::arch) enum Piece {
    /// A row's first piece: its line from the piece's start, plainly.
    First,
    /// Later pieces: the whole line each starts in, from the end of the
    /// piece before and its own start, streamed.
    Later,
    /// Past a row's last piece: the bytes of the last piece past the
    /// last line boundary, plainly (nothing is read from `input`).
    Tail,
}

/// `n` steps (one for `First` and `Tail`) of a group of `k` rows packed
/// (the way back of [`interleave_steps`]; `k` 1: one row as it lies):
/// each `64 * k` bytes of groups from `input` on into a 64-byte piece of
/// each row `j`, for `rows[j]` and on, joined as `piece` says to the
/// piece before it on the row (slot `j` of `carry`, 64 bytes each, which
/// takes the last piece). With `h` as far as `rows[j]` is into its line, a
/// later piece's line is the last `h` bytes of the piece before and the
/// first `64 - h` of the piece.
///
/// # Safety
///
/// The CPU runs AVX-512F, BW and VBMI (the caller holds the proof); `k`
/// is 1, 2 or 4 and `n` at least 1; `input` is readable for `64 * k * n`
/// bytes unless `piece` is `Tail`; `carry` is readable and writable for
/// `64 * k`; for each row, the bytes `piece` writes (for `First`, from
/// `rows[j]` to its line's end; for `Later`, the line each of the `n`
/// pieces from `rows[j]` on starts in; for `Tail`, from its line's start
/// to `rows[j]`) are writable and overlap neither `input` nor `carry`.
#[inline]
pub(in crate::relayout::arch) unsafe fn deinterleave_steps(
    _: Avx512Vbmi,
    k: usize,
    rows: [*mut u8; 4],
    (input, n): (*const u8, usize),
    carry: *mut u8,
    piece: Piece,
) {
    // SAFETY: the caller's contract covers the input, the slots and the
    // bytes each piece writes; the tables and `IOTA` are readable; the
    // prefetches, which may point past the input, never fault. Every
    // register the assembly writes is declared (the vector registers
    // whole, and zmm0-15, whose upper halves `vzeroupper` clears), the
    // pointers and count it moves are scratch, the flags change (no
    // `preserves_flags`); no stack.
    unsafe {
        match (k, piece) {
            // A tail reads nothing and makes one step.
            (4, Piece::Tail) => split_rows!(4, tail, "", rows, input, 1usize, carry),
            (2, Piece::Tail) => split_rows!(2, tail, "", rows, input, 1usize, carry),
            (_, Piece::Tail) => split_rows!(1, tail, "", rows, input, 1usize, carry),
            (4, Piece::First) => split_rows!(4, head, split4!(), rows, input, n, carry),
            (4, Piece::Later) => split_rows!(4, stream, split4!(), rows, input, n, carry),
            (2, Piece::First) => split_rows!(2, head, split2!(), rows, input, n, carry),
            (2, Piece::Later) => split_rows!(2, stream, split2!(), rows, input, n, carry),
            (_, Piece::First) => split_rows!(1, head, split1!(), rows, input, n, carry),
            (_, Piece::Later) => split_rows!(1, stream, split1!(), rows, input, n, carry),
        }
    }
}
