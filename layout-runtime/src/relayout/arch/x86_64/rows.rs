//! Rows of tiles written in the order the destination lies: each row's
//! pieces, one from each tile along it, appended to one run of whole
//! lines streamed out, however the pieces fall on the lines.

use super::Avx512BwBmi2;

/// The rows [`rows_in_order`] writes: `rows` of them, the first's first
/// piece at `source` and each row's `row_step` bytes (wrapping) past the
/// one before; `pieces` pieces of `piece` bytes a row, `stride` bytes
/// apart, then a last piece of `last` bytes (0: none) `stride` past
/// them; written one after another from `out` on. The source from
/// `ahead` bytes past `source` on (the next tile row) is asked for in
/// order as the rows are read.
#[derive(Clone, Copy, Debug)]
pub(in crate::relayout::arch) struct InOrderRows {
    pub(in crate::relayout::arch) source: *const u8,
    pub(in crate::relayout::arch) rows: usize,
    pub(in crate::relayout::arch) row_step: usize,
    pub(in crate::relayout::arch) pieces: usize,
    pub(in crate::relayout::arch) piece: usize,
    pub(in crate::relayout::arch) stride: usize,
    pub(in crate::relayout::arch) last: usize,
    pub(in crate::relayout::arch) out: *mut u8,
    pub(in crate::relayout::arch) ahead: usize,
}

/// Appends the `{len}` bytes from `{s}` to the run: the waiting line
/// (`zmm0`, its first `{h}` bytes written, `{h}` 0 to 63) filled from
/// their start and streamed, or plainly under `k2` if it is the run's
/// first, partial line; then every whole line, streamed; then the bytes
/// past them wait in `zmm0`. Each line read asks for the line `{q}` and
/// moves it on. The same steps whatever `{h}` is (a waiting line of
/// none is filled whole; no bytes past the whole lines wait as none).
/// `{p}` and `rax` are scratch.
macro_rules! append {
    () => {
        concat!(
            "mov {p}, {s}\n",
            "mov eax, 64\n",
            "sub rax, {h}\n",
            "cmp {len}, rax\n",
            "jb 26f\n",
            // The waiting line completed.
            "mov rax, -1\n",
            "shlx rax, rax, {h}\n",
            "kmovq k1, rax\n",
            "sub {p}, {h}\n",
            "prefetcht1 [{q}]\n",
            "add {q}, 64\n",
            "vmovdqu8 zmm0 {{k1}}, [{p}]\n",
            "kortestq k2, k2\n",
            "jnc 22f\n",
            "vmovntdq [{o}], zmm0\n",
            "24:\n",
            "add {o}, 64\n",
            "add {p}, 64\n",
            "sub {len}, 64\n",
            "add {len}, {h}\n",
            // Whole lines.
            "cmp {len}, 64\n",
            "jb 25f\n",
            "27:\n",
            "prefetcht1 [{q}]\n",
            "add {q}, 64\n",
            "vmovdqu64 zmm1, [{p}]\n",
            "vmovntdq [{o}], zmm1\n",
            "add {p}, 64\n",
            "add {o}, 64\n",
            "sub {len}, 64\n",
            "cmp {len}, 64\n",
            "jae 27b\n",
            // The bytes past them (maybe none) wait.
            "25:\n",
            "mov rax, -1\n",
            "bzhi rax, rax, {len}\n",
            "kmovq k1, rax\n",
            "vmovdqu8 zmm0 {{k1}} {{z}}, [{p}]\n",
            "mov {h}, {len}\n",
            "jmp 28f\n",
            // The run's first line, plainly from its start.
            "22:\n",
            "vmovdqu8 [{o}] {{k2}}, zmm0\n",
            "kxnorq k2, k2, k2\n",
            "jmp 24b\n",
            // Too few bytes to complete the waiting line.
            "26:\n",
            "mov rax, -1\n",
            "bzhi rax, rax, {len}\n",
            "shlx rax, rax, {h}\n",
            "kmovq k1, rax\n",
            "sub {p}, {h}\n",
            "vmovdqu8 zmm0 {{k1}}, [{p}]\n",
            "add {h}, {len}\n",
            "28:\n",
        )
    };
}

/// Every row of `rows`, its pieces appended in turn to one run from
/// `rows.out` on: each line of the run streamed whole once its bytes are
/// in, from the pieces' unaligned loads and, where a line holds the end
/// of one piece and the start of the next, a masked load of each; only
/// the run's first and last partial lines go plainly. The pieces of a
/// row need not be whole lines, nor start on one: a row-major array 690
/// `f32`s wide unpacked from `T(4,128)` (a piece of 200 bytes each row,
/// rows on no line) goes out as whole lines, each written once. A line
/// of the next tile row is asked for with each line read, and each row's
/// padding's lines at its end, in the order the next tile row lies: the
/// hardware's prefetchers leave rows read a piece of each tile at a time
/// to memory's latency, and asking for each piece's own lines one tile
/// row on took longer (`f32[24314,690]{1,0:T(2,128)}` unpacked in 7.9 ms
/// against 5.7, AMD EPYC Zen 4).
///
/// # Safety
///
/// The CPU runs AVX-512F and BW and BMI2 (the caller holds the proof);
/// `rows.rows` at least 1; every piece's bytes are readable; the
/// `rows.rows * (rows.pieces * rows.piece + rows.last)` bytes from
/// `rows.out` are writable and overlap no piece.
pub(in crate::relayout::arch) unsafe fn rows_in_order(_: Avx512BwBmi2, rows: InOrderRows) {
    let whole = rows.pieces;
    let count = whole + usize::from(rows.last > 0);
    // From the end of a row's last piece to the next row's first.
    let back = rows.row_step.wrapping_sub(count.wrapping_mul(rows.stride));
    // Lines of the source a row spans past the lines it writes (the
    // padding of a ragged last tile), asked for at the row's end.
    let span = count.wrapping_mul(rows.stride) / rows.rows.max(1);
    let width = whole.wrapping_mul(rows.piece).wrapping_add(rows.last);
    let extra = span.saturating_sub(width).div_ceil(64);
    let params = [whole, rows.last, back, extra];
    // SAFETY: the caller's contract covers every byte read (whole lines
    // inside a piece; masked loads, which touch nothing under a clear
    // bit, of a piece's bytes only) and every byte written (the lines of
    // the run, whole only where all their bytes belong to it, masked
    // otherwise); `params` is four readable words. Every register the
    // assembly writes is declared (the vector registers whole, and
    // zmm0-15, whose upper halves `vzeroupper` clears), the pointers and
    // counts it moves are scratch, the flags change; no stack.
    unsafe {
        asm_avx512!(
            "vmovq xmm29, [rax]",
            "vmovq xmm30, [rax + 8]",
            "vmovq xmm31, [rax + 16]",
            "vmovq xmm28, [rax + 24]",
            "kxnorq k2, k2, k2",
            "vpxorq zmm0, zmm0, zmm0",
            "mov {h}, {o}",
            "and {h}, 63",
            "jz 2f",
            "mov rax, -1",
            "shlx rax, rax, {h}",
            "kmovq k2, rax",
            "2:",
            "and {o}, -64",
            "3:",
            "vmovq {t}, xmm29",
            "test {t}, {t}",
            "jz 5f",
            "4:",
            "mov {len}, {piece}",
            append!(),
            "add {s}, {stride}",
            "dec {t}",
            "jnz 4b",
            "5:",
            "vmovq {len}, xmm30",
            "test {len}, {len}",
            "jz 6f",
            append!(),
            "add {s}, {stride}",
            "6:",
            "vmovq rax, xmm28",
            "test rax, rax",
            "jz 8f",
            "9:",
            "prefetcht1 [{q}]",
            "add {q}, 64",
            "dec rax",
            "jnz 9b",
            "8:",
            "vmovq rax, xmm31",
            "add {s}, rax",
            "dec {n}",
            "jnz 3b",
            // The bytes still waiting, plainly.
            "test {h}, {h}",
            "jz 7f",
            "mov rax, -1",
            "bzhi rax, rax, {h}",
            "kmovq k1, rax",
            "kandq k1, k1, k2",
            "vmovdqu8 [{o}] {{k1}}, zmm0",
            "7:",
            "vzeroupper",
            inout("rax") params.as_ptr() => _,
            s = inout(reg) rows.source => _,
            n = inout(reg) rows.rows => _,
            piece = in(reg) rows.piece,
            stride = in(reg) rows.stride,
            q = inout(reg) rows.source.wrapping_add(rows.ahead) => _,
            o = inout(reg) rows.out => _,
            h = out(reg) _,
            len = out(reg) _,
            t = out(reg) _,
            p = out(reg) _,
        );
    }
}
