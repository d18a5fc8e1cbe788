//! The 16x16 tiles of 4-byte units on cache lines, in 256-bit registers (AVX2).

use core::arch::asm;

use super::Avx2;

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

/// [`load8`] from the arrays of [`tile16_avx2_blend`]: half `$r` of run
/// `8*$k + m` into `ymm0 + m` from the pointer array at `rdi`, then,
/// where lane `l` of the row mask for half `$r` (32 bytes at `r8`) is
/// set, unit `l` from the same half of the run the array at `rcx` gives
/// instead (`ymm14` the alternative, `ymm15` the mask: both free before
/// every load of [`tile16_avx2_asm`]).
#[rustfmt::skip]
macro_rules! load8_blend {
    ($r:literal, $k:literal) => {
        concat!(
            "vmovaps ymm15, [r8 + 32*", $r, "]\n",
            blend1!(0, $r, $k), blend1!(1, $r, $k), blend1!(2, $r, $k), blend1!(3, $r, $k),
            blend1!(4, $r, $k), blend1!(5, $r, $k), blend1!(6, $r, $k), blend1!(7, $r, $k),
        )
    };
}

/// One run of [`load8_blend`]: run `8*$k + $m`, half `$r`, into
/// `ymm0 + $m`.
#[rustfmt::skip]
macro_rules! blend1 {
    ($m:literal, $r:literal, $k:literal) => {
        concat!(
            from_array!($m, "rax", "rdi", $k), "vmovups ymm", $m, ", [rax + 32*", $r, "]\n",
            from_array!($m, "rax", "rcx", $k), "vmovups ymm14, [rax + 32*", $r, "]\n",
            "vblendvps ymm", $m, ", ymm", $m, ", ymm14, ymm15\n",
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
pub(in crate::relayout::arch) unsafe fn tile16_avx2_even(
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
pub(in crate::relayout::arch) unsafe fn tile16_avx2_even_run<const ASK: bool>(
    _: Avx2,
    walk: &crate::relayout::arch::TileWalk,
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

/// [`tile16_avx2`] with streaming stores, where row `r` (unit `r` of
/// every source run) comes from the run `alt` gives where bit `r` of
/// `rows` is set: lines whose source rows are not the same for every
/// column (the lines a transposed pack's edges share between two tiles
/// side by side, one part from each). The masks go to the assembly as
/// two 32-byte vectors, a lane a row.
///
/// # Safety
///
/// As for [`tile16_avx2`] with `stream`, and each `alt[c]` valid for
/// reading 64 bytes that no `to` run overlaps.
#[target_feature(enable = "avx2")]
pub(in crate::relayout::arch) unsafe fn tile16_avx2_blend(
    _: Avx2,
    from: &[*const u8; 16],
    alt: &[*const u8; 16],
    rows: u16,
    to: &[*mut u8; 16],
) {
    let masks = RowMasks(core::array::from_fn(|r| {
        if rows >> r & 1 == 1 {
            u32::MAX
        } else {
            0
        }
    }));
    let mut buf = TileBuffer(core::mem::MaybeUninit::uninit());
    let buf = buf.0.as_mut_ptr().cast::<u8>();
    // SAFETY: as in `tile16_avx2`: the caller's contract covers every
    // pointer read from the three arrays (all live for the call), the
    // feature, and the destination runs' alignment for `vmovntps`; `buf`
    // is the same local 512 bytes and `masks` a local 64 bytes, both
    // 32-byte aligned for `vmovaps`. The assembly reads 64 bytes at each
    // `from` and `alt` pointer and writes 64 at each `to` pointer, as
    // bytes, declares every vector register clobbered, and touches no
    // stack of its own and no flags.
    unsafe {
        asm!(
            load8_blend!(0, 0), transpose8!(), spill8!(0),
            load8_blend!(1, 0), transpose8!(), spill8!(1),
            load8_blend!(0, 1), transpose8!(),
            rows8_out!("vmovntps", 0, "rax", from_array, "rsi", 0),
            load8_blend!(1, 1), transpose8!(),
            rows8_out!("vmovntps", 1, "rax", from_array, "rsi", 1),
            "vzeroupper",
            in("rdi") from.as_ptr(),
            in("rcx") alt.as_ptr(),
            in("r8") masks.0.as_ptr(),
            in("rsi") to.as_ptr(),
            in("rdx") buf,
            clobber_abi("sysv64"),
            options(nostack, preserves_flags),
        );
    }
}

/// The row masks of [`tile16_avx2_blend`], aligned for `vmovaps`.
#[repr(C, align(32))]
struct RowMasks([u32; 16]);

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
pub(in crate::relayout::arch) unsafe fn tile16_avx2(
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
