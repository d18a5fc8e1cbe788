//! The copies a relayout is measured against: the same logical bytes moved
//! by `memcpy`, by `rep movsb` and by streaming (non-temporal) stores of
//! AVX2 and AVX-512 registers, each with and without software prefetch.
//! Which of them is fastest changes from machine to machine and, on a
//! shared host, from run to run, so the ceiling a relayout is quoted
//! against is the fastest of them timed in the same round.

use std::time::Instant;

/// One way to copy `src` into `dst` (of the same length).
pub struct Copy {
    pub name: &'static str,
    run: fn(&[u8], &mut [u8]),
}

/// How far ahead of the loads the prefetching copies touch the source:
/// far enough to cover the latency of a miss at full bandwidth.
const PREFETCH_AHEAD: usize = 1024;

/// Every copy this CPU can run; `memcpy` first.
pub fn available() -> Vec<Copy> {
    let mut copies = vec![Copy {
        name: "memcpy",
        run: |src, dst| dst.copy_from_slice(src),
    }];
    #[cfg(target_arch = "x86_64")]
    {
        copies.push(Copy {
            name: "rep_movsb",
            run: x86::rep_movsb,
        });
        if std::arch::is_x86_feature_detected!("avx2") {
            copies.push(Copy {
                name: "stream_avx2",
                run: |s, d| x86::stream(s, d, x86::Width::Avx2, false),
            });
            copies.push(Copy {
                name: "stream_avx2_prefetch",
                run: |s, d| x86::stream(s, d, x86::Width::Avx2, true),
            });
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            copies.push(Copy {
                name: "stream_avx512",
                run: |s, d| x86::stream(s, d, x86::Width::Avx512, false),
            });
            copies.push(Copy {
                name: "stream_avx512_prefetch",
                run: |s, d| x86::stream(s, d, x86::Width::Avx512, true),
            });
        }
    }
    copies
}

impl Copy {
    /// Seconds of one copy of `src` into `dst` on `threads` threads, each
    /// its own contiguous share (cut on 4 KiB pages).
    pub fn time(&self, src: &[u8], dst: &mut [u8], threads: usize) -> f64 {
        assert_eq!(src.len(), dst.len());
        let start = Instant::now();
        if threads <= 1 {
            (self.run)(src, dst);
        } else {
            let share = src.len().div_ceil(threads).next_multiple_of(4096);
            let run = self.run;
            std::thread::scope(|s| {
                for (from, to) in src.chunks(share).zip(dst.chunks_mut(share)) {
                    s.spawn(move || run(from, to));
                }
            });
        }
        start.elapsed().as_secs_f64()
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, reason = "the ceiling copies are written in assembly")]
mod x86 {
    use super::PREFETCH_AHEAD;

    pub fn rep_movsb(src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len());
        // SAFETY: `rep movsb` copies `rcx` bytes from `rsi` to `rdi`,
        // forward (the direction flag is clear at every Rust call
        // boundary); both slices hold `len` bytes and do not overlap, as
        // one is borrowed mutably.
        unsafe {
            core::arch::asm!(
                "rep movsb",
                inout("rcx") src.len() => _,
                inout("rsi") src.as_ptr() => _,
                inout("rdi") dst.as_mut_ptr() => _,
                options(nostack, preserves_flags),
            );
        }
    }

    #[derive(Clone, Copy)]
    pub enum Width {
        Avx2,
        Avx512,
    }

    /// Copies through registers of `width` with streaming stores, four
    /// registers a step, the destination aligned to a cache line (the
    /// bytes before the first line and after the last step by `memcpy`).
    pub fn stream(src: &[u8], dst: &mut [u8], width: Width, prefetch: bool) {
        assert_eq!(src.len(), dst.len());
        let head = dst.as_ptr().align_offset(64).min(dst.len());
        let step = match width {
            Width::Avx2 => 128,
            Width::Avx512 => 256,
        };
        let steps = (dst.len() - head) / step;
        let body = head + steps * step;
        dst[..head].copy_from_slice(&src[..head]);
        dst[body..].copy_from_slice(&src[body..]);
        if steps == 0 {
            return;
        }
        let (from, to) = (src[head..].as_ptr(), dst[head..].as_mut_ptr());
        // SAFETY: `from` and `to` have `steps * step` bytes inside `src`
        // and `dst` (`body <= len`), `to` is aligned to 64 bytes, and
        // `available` hands out these copies only where the CPU has the
        // instructions they run.
        unsafe {
            match width {
                Width::Avx2 => stream_avx2(from, to, steps, prefetch),
                Width::Avx512 => stream_avx512(from, to, steps, prefetch),
            }
        }
    }

    /// The copy loop of [`stream_avx2`] and [`stream_avx512`]: the
    /// prefetches (none, or some that read `{ahead}`) and the moves of one
    /// step, then the count, the fence and `vzeroupper`. One `asm!` each,
    /// so the loop runs exactly the instructions named.
    macro_rules! stream_loop {
        ($from:expr, $to:expr, $steps:expr, [$($prefetch:literal),*], $moves:expr) => {
            core::arch::asm!(
                "2:",
                $($prefetch,)*
                $moves,
                "dec {n}",
                "jnz 2b",
                "sfence",
                "vzeroupper",
                s = inout(reg) $from => _,
                d = inout(reg) $to => _,
                n = inout(reg) $steps => _,
                ahead = const PREFETCH_AHEAD,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                options(nostack),
            )
        };
    }

    /// One step of [`stream_avx2`]: 128 bytes through four `ymm` registers.
    macro_rules! avx2_moves {
        () => {
            concat!(
                "vmovdqu ymm0, [{s}]\n",
                "vmovdqu ymm1, [{s} + 32]\n",
                "vmovdqu ymm2, [{s} + 64]\n",
                "vmovdqu ymm3, [{s} + 96]\n",
                "vmovntdq [{d}], ymm0\n",
                "vmovntdq [{d} + 32], ymm1\n",
                "vmovntdq [{d} + 64], ymm2\n",
                "vmovntdq [{d} + 96], ymm3\n",
                "add {s}, 128\n",
                "add {d}, 128",
            )
        };
    }

    /// One step of [`stream_avx512`]: 256 bytes through four `zmm` registers.
    macro_rules! avx512_moves {
        () => {
            concat!(
                "vmovdqu64 zmm0, [{s}]\n",
                "vmovdqu64 zmm1, [{s} + 64]\n",
                "vmovdqu64 zmm2, [{s} + 128]\n",
                "vmovdqu64 zmm3, [{s} + 192]\n",
                "vmovntdq [{d}], zmm0\n",
                "vmovntdq [{d} + 64], zmm1\n",
                "vmovntdq [{d} + 128], zmm2\n",
                "vmovntdq [{d} + 192], zmm3\n",
                "add {s}, 256\n",
                "add {d}, 256",
            )
        };
    }

    /// `steps` times: 128 bytes from `from` into `to` through four `ymm`
    /// registers, by streaming stores.
    ///
    /// # Safety
    ///
    /// `from` and `to` must be valid for `128 * steps` bytes and not
    /// overlap, `to` aligned to 32 bytes, `steps` above 0, and the CPU must
    /// have AVX2.
    unsafe fn stream_avx2(from: *const u8, to: *mut u8, steps: usize, prefetch: bool) {
        // SAFETY: the loop reads and writes the `128 * steps` bytes the
        // caller vouches for; prefetches are hints and never fault;
        // `vmovntdq` gets the alignment it needs. The registers used are
        // declared clobbered (the `xmm` names cover the whole `ymm`
        // registers), and `vzeroupper` leaves the upper halves clean for
        // the SSE code that follows. `sfence` orders the streaming stores
        // before any later store, as a normal copy's would be.
        unsafe {
            if prefetch {
                stream_loop!(
                    from,
                    to,
                    steps,
                    [
                        "prefetcht0 [{s} + {ahead}]",
                        "prefetcht0 [{s} + {ahead} + 64]"
                    ],
                    avx2_moves!()
                );
            } else {
                // `{ahead}` in a comment: every operand must be named.
                stream_loop!(from, to, steps, ["# {ahead}"], avx2_moves!());
            }
        }
    }

    /// `steps` times: 256 bytes from `from` into `to` through four `zmm`
    /// registers, by streaming stores.
    ///
    /// # Safety
    ///
    /// `from` and `to` must be valid for `256 * steps` bytes and not
    /// overlap, `to` aligned to 64 bytes, `steps` above 0, and the CPU must
    /// have AVX-512F.
    unsafe fn stream_avx512(from: *const u8, to: *mut u8, steps: usize, prefetch: bool) {
        // SAFETY: as in `stream_avx2`, with `zmm` registers (the `xmm`
        // names cover them whole) and the 64-byte alignment they need.
        unsafe {
            if prefetch {
                stream_loop!(
                    from,
                    to,
                    steps,
                    [
                        "prefetcht0 [{s} + {ahead}]",
                        "prefetcht0 [{s} + {ahead} + 64]",
                        "prefetcht0 [{s} + {ahead} + 128]",
                        "prefetcht0 [{s} + {ahead} + 192]"
                    ],
                    avx512_moves!()
                );
            } else {
                stream_loop!(from, to, steps, ["# {ahead}"], avx512_moves!());
            }
        }
    }
}
