extern crate std;

use super::*;
use crate::relayout::kernels::to_line_in;
use std::vec::Vec;

/// Every size, offset and stride against the plain loop; nothing
/// outside the block may change.
#[test]
fn transposes_match_a_plain_loop() {
    for na in 0..=13 {
        for nb in 0..=13 {
            for (d, s) in [(0, 0), (1, 3), (5, 2)] {
                for (pad_d, pad_s) in [(0, 0), (3, 1), (17, 64)] {
                    let (da, sb) = (nb + pad_d, na + pad_s);
                    let dst_len = d + na * da + 7;
                    let src_len = s + nb * sb + 5;
                    let src: Vec<u32> = (0..src_len as u32).map(|x| x * 7 + 1).collect();
                    let mut got = std::vec![u32::MAX; dst_len];
                    let (ta, tb) = transpose32(&mut got, d, da, &src, s, sb, (na, nb));
                    let mut want = std::vec![u32::MAX; dst_len];
                    for i in 0..ta {
                        for j in 0..tb {
                            want[d + i * da + j] = src[s + i + j * sb];
                        }
                    }
                    assert_eq!(got, want, "{na}x{nb} at {d}/{s}, strides {da}/{sb}");
                    if VECTOR_TRANSPOSE && na >= 4 && nb >= 4 {
                        assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                    }
                }
            }
        }
    }
    // Not 4 bytes: nothing done.
    let mut d16 = [0u16; 16];
    assert_eq!(
        transpose32(&mut d16, 0, 4, &[1u16; 16], 0, 4, (4, 4)),
        (0, 0)
    );
    assert_eq!(d16, [0; 16]);
    // A bound that fails: nothing done.
    let mut short = [0u32; 15];
    assert_eq!(
        transpose32(&mut short, 0, 4, &[1u32; 16], 0, 4, (4, 4)),
        (0, 0)
    );
}

/// Blocks wider and taller than a band, whose sizes leave every mix of
/// 8x8 and 4x4 tiles (and their parts of a band) at the edges, against
/// the plain loop, for 4-byte and smaller units.
#[test]
fn large_transposes_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let u = 4 / core::mem::size_of::<T>();
        for (na, nb) in [(64, 64), (68, 72), (76, 131), (137, 12), (8, 200), (20, 9)] {
            for (d, s, pad) in [(0, 0, 0), (3, 1, 5), (1, 6, 64)] {
                let (da, sb) = (nb * u + pad, na * u + pad + 1);
                let dst_len = d + na * da + 9;
                let src_len = s + nb * sb + 3;
                let src: Vec<T> = (0..src_len).map(make).collect();
                let mut got = std::vec![old; dst_len];
                let (ta, tb) = transpose_units(&mut got, d, da, &src, s, sb, (na, nb));
                let mut want = std::vec![old; dst_len];
                for i in 0..ta {
                    for j in 0..tb {
                        for k in 0..u {
                            want[d + i * da + j * u + k] = src[s + i * u + j * sb + k];
                        }
                    }
                }
                assert_eq!(got, want, "{na}x{nb} at {d}/{s}, pad {pad}");
                if VECTOR_TRANSPOSE {
                    assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                }
            }
        }
    }
    check(word, 0);
    check(half, 0);
    check(byte, 0);
}

/// 16x16 line tiles of 4-, 2- and 1-byte elements against a plain loop,
/// on every kernel this CPU runs and through [`tile16`]'s own choice:
/// scattered source runs at odd offsets, destination runs on lines and
/// off them, plain and streamed; nothing else may change, and a run
/// past the end or (streaming) off a line means nothing written.
#[test]
fn line_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(
        make: fn(usize) -> T,
        old: T,
    ) -> [usize; TileKernel::ALL.len()] {
        let size = core::mem::size_of::<T>();
        let (u, run) = (4 / size, 64 / size);
        let src: Vec<T> = (0..3000 / size * 4).map(make).collect();
        // Tiles done by each kernel.
        let mut ran = [0; TileKernel::ALL.len()];
        let kernels = TileKernel::ALL.map(Some);
        for (k, kernel) in kernels.into_iter().chain([None]).enumerate() {
            let runs = |kernel: Option<TileKernel>| match kernel {
                Some(kernel) => kernel.available(),
                None => line_tiles(),
            };
            for seed in 0..12 {
                let from: [usize; 16] =
                    core::array::from_fn(|c| (c * 251 + seed * 37 + 1) % (src.len() - run));
                for aligned in [false, true] {
                    for stream in [false, true] {
                        let pitch = run * (1 + seed % 3) + usize::from(!aligned) * (seed % 5);
                        let mut got = std::vec![old; 17 * pitch + 2 * run];
                        let lead = to_line_in(&got, 0);
                        let at = lead + usize::from(!aligned) * (1 + seed % 3);
                        // Rows in a scrambled order, none overlapping.
                        let to: [usize; 16] = core::array::from_fn(|r| at + (r * 7 % 16) * pitch);
                        let done = match kernel {
                            Some(kernel) => tile16_on(kernel, &mut got, &to, &src, &from, stream),
                            None => tile16(&mut got, &to, &src, &from, stream),
                        };
                        stream_fence();
                        let mut want = std::vec![old; got.len()];
                        if done {
                            if let Some(n) = ran.get_mut(k) {
                                *n += 1;
                            }
                            for (r, &t) in to.iter().enumerate() {
                                for (c, &f) in from.iter().enumerate() {
                                    for e in 0..u {
                                        want[t + c * u + e] = src[f + r * u + e];
                                    }
                                }
                            }
                        }
                        assert_eq!(
                            got, want,
                            "{kernel:?}, seed {seed}, aligned {aligned}, stream {stream}"
                        );
                        let on_lines = to.iter().all(|&t| got[t..].as_ptr().addr() % 64 == 0);
                        assert_eq!(done, runs(kernel) && (on_lines || !stream));
                    }
                }
            }
            // A run past either end: nothing done.
            let mut dst = std::vec![old; 16 * run];
            let to: [usize; 16] = core::array::from_fn(|r| r * run);
            let mut late = to;
            late[15] += 1;
            for kernel in TileKernel::ALL {
                assert!(!tile16_on(kernel, &mut dst, &late, &src, &to, false));
                assert!(!tile16_on(
                    kernel,
                    &mut dst,
                    &to,
                    &src[..16 * run - 1],
                    &to,
                    false
                ));
            }
            assert!(!tile16(&mut dst, &late, &src, &to, false));
            assert!(dst.iter().all(|&x| x == old));
        }
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    // Each kernel ran, plain and streamed, wherever the CPU has it (as
    // `std` sees it, apart from the detection the kernels use).
    #[cfg(target_arch = "x86_64")]
    for (k, kernel) in TileKernel::ALL.into_iter().enumerate() {
        let has = match kernel {
            TileKernel::Avx2 => std::is_x86_feature_detected!("avx2"),
        };
        for done in ran {
            assert_eq!(done[k] > 0, has, "kernel {k}: {ran:?}");
            if has {
                assert_eq!(done[k], 12 * 3, "kernel {k}: {ran:?}");
            }
        }
    }
}

/// Blended line tiles, one round, against a plain loop: 4-, 2- and 1-byte
/// elements, source and alternative runs scattered at odd offsets, every
/// row mask of a few kinds (none, all, every other row, one row in 4 or
/// 8, scattered), destination runs on lines in a scrambled order;
/// nothing else may change, and a run past the end or a destination run
/// off a line means nothing written.
#[test]
fn blended_line_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
        let size = core::mem::size_of::<T>();
        let (u, run) = (4 / size, 64 / size);
        let src: Vec<T> = (0..3000 / size * 4).map(make).collect();
        let mut ran = 0;
        for seed in 0..12 {
            let from: [usize; 16] =
                core::array::from_fn(|c| (c * 251 + seed * 37 + 1) % (src.len() - run));
            let alt: [usize; 16] =
                core::array::from_fn(|c| (c * 173 + seed * 59 + 3) % (src.len() - run));
            for rows in [
                0,
                0xffff,
                0xaaaa,
                0x8888,
                0x8080,
                0x4821_u16.rotate_left(seed as u32),
            ] {
                let pitch = run * (1 + seed % 3);
                let mut got = std::vec![old; 17 * pitch + 2 * run];
                let lead = to_line_in(&got, 0);
                let to: [usize; 16] = core::array::from_fn(|r| lead + (r * 7 % 16) * pitch);
                let done = TileKernel::best().is_some_and(|kernel| {
                    tile16_blend_run(kernel, &mut got, (&to, 0), &src, (&from, &alt, 0), rows, 1)
                });
                stream_fence();
                let mut want = std::vec![old; got.len()];
                if done {
                    ran += 1;
                    for (r, &t) in to.iter().enumerate() {
                        let runs = if rows >> r & 1 == 1 { &alt } else { &from };
                        for (c, &f) in runs.iter().enumerate() {
                            for e in 0..u {
                                want[t + c * u + e] = src[f + r * u + e];
                            }
                        }
                    }
                }
                assert_eq!(got, want, "seed {seed}, rows {rows:#06x}");
                assert_eq!(done, line_tiles());
            }
        }
        // A run past the end, or a destination run off its line: nothing
        // done. (The end is 16 runs from the first line boundary, so that
        // the late run passes it wherever the buffer starts.)
        let mut dst = std::vec![old; 17 * run];
        let lead = to_line_in(&dst, 0);
        let to: [usize; 16] = core::array::from_fn(|r| lead + r * run);
        let mut late = to;
        late[15] += run;
        let mut off = to;
        off[3] += 1;
        for kernel in TileKernel::ALL {
            let both = (&to, &to, 0);
            let short = &mut dst[..lead + 16 * run];
            assert!(!tile16_blend_run(
                kernel,
                short,
                (&late, 0),
                &src,
                both,
                1,
                1
            ));
            assert!(!tile16_blend_run(
                kernel,
                &mut dst,
                (&off, 0),
                &src,
                both,
                1,
                1
            ));
            let past = (&to, &late, 0);
            let near_end = &src[..16 * run + lead];
            assert!(!tile16_blend_run(
                kernel,
                &mut dst,
                (&to, 0),
                near_end,
                past,
                1,
                1
            ));
        }
        assert!(dst.iter().all(|&x| x == old));
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    assert!(
        ran.iter().all(|&n| n == if line_tiles() { 72 } else { 0 }),
        "{ran:?}"
    );
}

/// Runs of blended line tiles against the same tiles one by one in a
/// plain loop: 4-, 2- and 1-byte elements, 1-5 rounds, runs scattered at
/// odd offsets and moving on by an odd advance, row masks of a few kinds,
/// destination runs on lines in a scrambled order moving on by whole
/// lines; nothing else may change. A last round past the end of either
/// slice, or an advance off the lines, means nothing written; no round,
/// nothing written and done.
#[test]
fn blended_runs_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
        let size = core::mem::size_of::<T>();
        let (u, run) = (4 / size, 64 / size);
        let src: Vec<T> = (0..6000 / size * 4).map(make).collect();
        let mut ran = 0;
        for (seed, count) in (0..10).zip([1, 2, 3, 5, 4, 2, 1, 3, 5, 2]) {
            // Both sides move on alike, past a run and an odd few elements.
            let from_adv = run + 2 * seed + 1;
            let room = src.len() - run - (count - 1) * from_adv;
            let from: [usize; 16] = core::array::from_fn(|c| (c * 251 + seed * 37 + 1) % room);
            let alt: [usize; 16] = core::array::from_fn(|c| (c * 173 + seed * 59 + 3) % room);
            let rows = [
                0,
                0xffff,
                0xaaaa,
                0x8080,
                0x4821_u16.rotate_left(seed as u32),
            ][seed % 5];
            let pitch = run * (1 + seed % 3);
            let to_adv = 16 * pitch + run * (seed % 2);
            let mut got = std::vec![old; count * to_adv + 17 * pitch + 2 * run];
            let lead = to_line_in(&got, 0);
            let to: [usize; 16] = core::array::from_fn(|r| lead + (r * 7 % 16) * pitch);
            let runs = ((&to, to_adv), (&from, &alt, from_adv));
            let done = TileKernel::best().is_some_and(|kernel| {
                tile16_blend_run(kernel, &mut got, runs.0, &src, runs.1, rows, count)
            });
            stream_fence();
            let mut want = std::vec![old; got.len()];
            if done {
                ran += 1;
                for t in 0..count {
                    for (r, &d) in to.iter().enumerate() {
                        let picked = if rows >> r & 1 == 1 { &alt } else { &from };
                        for (c, &f) in picked.iter().enumerate() {
                            for e in 0..u {
                                want[d + t * to_adv + c * u + e] =
                                    src[f + t * from_adv + r * u + e];
                            }
                        }
                    }
                }
            }
            assert_eq!(got, want, "seed {seed}, {count} rounds, rows {rows:#06x}");
            assert_eq!(done, line_tiles());
        }
        // The last round past the end of either slice, or an advance off
        // the lines: nothing done; no round: done, nothing written.
        let mut dst = std::vec![old; 3 * 17 * run];
        let lead = to_line_in(&dst, 0);
        let to: [usize; 16] = core::array::from_fn(|r| lead + r * run);
        let from: [usize; 16] = core::array::from_fn(|c| c * run);
        for kernel in TileKernel::ALL {
            let short = &mut dst[..lead + 32 * run - 1];
            let both = (&from, &from, run);
            assert!(!tile16_blend_run(
                kernel,
                short,
                (&to, 16 * run),
                &src,
                both,
                1,
                2
            ));
            let near_end = &src[..17 * run - 1];
            let moved = (&to, 16 * run);
            assert!(!tile16_blend_run(
                kernel,
                &mut dst,
                moved,
                near_end,
                (&from, &from, run),
                0,
                2
            ));
            let mut late = from;
            late[9] = 16 * run + 1;
            let alt_past = (&from, &late, run);
            assert!(!tile16_blend_run(
                kernel, &mut dst, moved, near_end, alt_past, 0xffff, 1
            ));
            let off = (&to, 16 * run + 1);
            assert!(!tile16_blend_run(kernel, &mut dst, off, &src, both, 0, 2));
            assert!(tile16_blend_run(kernel, &mut dst, moved, &src, both, 0, 0));
        }
        assert!(dst.iter().all(|&x| x == old));
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    assert!(
        ran.iter().all(|&n| n == if line_tiles() { 10 } else { 0 }),
        "{ran:?}"
    );
}

/// Source elements of each size the relayout kernels move, for the
/// tests here and in `kernels`: none is 0 (the destinations' initial
/// value) or any fill those tests use (odd, top bit set).
pub(in crate::relayout) fn word(i: usize) -> u32 {
    (i as u32).wrapping_mul(0x9e37_79b9) | 1
}
pub(in crate::relayout) fn half(i: usize) -> u16 {
    i as u16 | 0x8000
}
pub(in crate::relayout) fn byte(i: usize) -> u8 {
    (i * 7) as u8 | 0x80
}

/// Tiles of runs in quarters against the plain loop, for both kernels
/// and every element size: quarters that continue each other and
/// quarters apart and out of order, source runs at odd offsets,
/// destination runs on lines and off them, plain and streamed. Nothing
/// else may change; a quarter past the end, or (streaming) a run off a
/// line, means nothing written.
#[test]
fn tiles_of_quarters_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
        let size = core::mem::size_of::<T>();
        let (u, run) = (4 / size, 64 / size);
        let src: Vec<T> = (0..80 * run).map(make).collect();
        let mut ran = 0;
        for kernel in TileKernel::ALL {
            for seed in 0..16 {
                // Source runs `run` or more apart; on odd seeds the
                // quarters lie in a scrambled order with gaps.
                let step = run + seed % 3 * (1 + seed % 5);
                let first = 1 + seed * 3 % 7;
                let from = if seed % 2 == 0 {
                    Quarters::even(first, step)
                } else {
                    Quarters {
                        bases: [3, 0, 2, 1].map(|q| first + q * (4 * step + 5)),
                        step,
                    }
                };
                for aligned in [false, true] {
                    for stream in [false, true] {
                        let pitch = run * (1 + seed % 3) + usize::from(!aligned) * (seed % 5);
                        let mut got = std::vec![old; 20 * pitch + 2 * run];
                        let lead = to_line_in(&got, 0);
                        let at = lead + usize::from(!aligned) * (1 + seed % 3);
                        // Destination quarters in order, with a gap of
                        // a row after the first two on odd seeds.
                        let gap = seed % 2;
                        let to = Quarters {
                            bases: [0, 4, 8 + gap, 12 + gap].map(|r| at + r * pitch),
                            step: pitch,
                        };
                        let done = tile16_quarters(kernel, &mut got, to, &src, from, stream);
                        stream_fence();
                        let mut want = std::vec![old; got.len()];
                        if done {
                            ran += 1;
                            for r in 0..16 {
                                for c in 0..16 {
                                    for e in 0..u {
                                        want[to.start(r) + c * u + e] =
                                            src[from.start(c) + r * u + e];
                                    }
                                }
                            }
                        }
                        assert_eq!(
                            got, want,
                            "{kernel:?}, seed {seed}, aligned {aligned}, stream {stream}"
                        );
                        let on_lines =
                            (0..16).all(|r| got[to.start(r)..].as_ptr().addr() % 64 == 0);
                        assert_eq!(done, kernel.available() && (on_lines || !stream));
                    }
                }
            }
            // A quarter one element past either end, or its end past
            // `usize`: nothing done.
            let mut dst = std::vec![old; 16 * run];
            let whole = Quarters::even(0, run);
            for q in 0..4 {
                let mut late = whole;
                late.bases[q] = 12 * run + 1;
                assert!(!tile16_quarters(kernel, &mut dst, late, &src, whole, false));
                let mut far = whole;
                far.bases[q] = usize::MAX - run;
                assert!(!tile16_quarters(kernel, &mut dst, whole, &src, far, false));
            }
            assert!(!tile16_quarters(
                kernel,
                &mut dst,
                whole,
                &src[..16 * run - 1],
                whole,
                false
            ));
            assert!(dst.iter().all(|&x| x == old));
        }
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    // Some tiles ran wherever the CPU has a kernel.
    assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
}

/// What a call of [`tile16_quarters_run`] of `count` tiles by `nb` bands
/// must write into `len` elements of `old`: each tile by
/// [`tile16_quarters`], the runs of tile `k` of band `b` `k * adv + b *
/// band` on from the first's on each side.
fn tile_by_tile<T: Copy>(
    kernel: TileKernel,
    (len, old): (usize, T),
    (to, to_adv, to_band): (Quarters, usize, usize),
    src: &[T],
    (from, from_adv, from_band): (Quarters, usize, usize),
    (count, nb): (usize, usize),
) -> Vec<T> {
    let shift = |q: Quarters, by: usize| Quarters {
        bases: q.bases.map(|x| x + by),
        step: q.step,
    };
    let mut want = std::vec![old; len];
    for b in 0..nb {
        for k in 0..count {
            assert!(tile16_quarters(
                kernel,
                &mut want,
                shift(to, b * to_band + k * to_adv),
                src,
                shift(from, b * from_band + k * from_adv),
                false
            ));
        }
    }
    want
}

/// One call of [`tile16_quarters_run`] of `count` tiles by `nb` bands,
/// streamed or not and asking `ahead` as given, into `len` elements of
/// `old` whose first run starts a line (runs `to_step` apart in a
/// quarter): what it wrote checked against [`tile_by_tile`] where it ran,
/// against nothing written where it refused, and that it ran wherever
/// the kernel is available. Whether it ran.
fn bands_match_tiles<T: Copy + PartialEq + core::fmt::Debug>(
    kernel: TileKernel,
    (len, old): (usize, T),
    (to_step, to_adv, to_band): (usize, usize, usize),
    src: &[T],
    (from, from_adv, from_band): (Quarters, usize, usize),
    (count, nb): (usize, usize),
    (stream, ahead, seed): (bool, Option<usize>, usize),
) -> bool {
    let mut got = std::vec![old; len];
    let to = Quarters::even(to_line_in(&got, 0), to_step);
    let bands = Bands {
        count: nb,
        to_adv: to_band,
        from_adv: from_band,
    };
    let done = tile16_quarters_run(
        kernel,
        &mut got,
        (to, to_adv),
        src,
        (from, from_adv),
        count,
        bands,
        stream,
        ahead,
    );
    stream_fence();
    let want = if done {
        let (to, from) = ((to, to_adv, to_band), (from, from_adv, from_band));
        tile_by_tile(kernel, (len, old), to, src, from, (count, nb))
    } else {
        std::vec![old; len]
    };
    assert_eq!(got, want, "{kernel:?}, seed {seed}, stream {stream}");
    assert_eq!(done, kernel.available());
    done
}

/// Several bands in one call, against the same tiles one by one: bands
/// longer than a block in blocks of [`BLOCK_BANDS`] bands, band by band,
/// where the destination's runs are a line apart, and across the bands
/// ([`ACROSS_TILES`], the next block's source asked for) where they are
/// a page or more apart, however short the bands; bands and tiles that
/// leave part blocks at the end, source runs on and off the lines, plain
/// and streamed, every element size.
#[test]
fn blocks_of_tiles_match_tile_by_tile() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
        let size = core::mem::size_of::<T>();
        let run = 64 / size;
        let mut ran = 0;
        for kernel in TileKernel::ALL {
            for seed in 0..18 {
                let count = [BLOCK_TILES + 1, 18 * ACROSS_TILES + 3, 3][seed / 6];
                let nb = [1, BLOCK_BANDS + 3, 2][seed % 3];
                // Rows of the source hold a band's tiles side by side, one
                // element off the lines in every other pair of seeds.
                let off = seed / 3 % 2;
                let from_step = count * run + off;
                let from = Quarters::even(off, from_step);
                let from_band = 16 * from_step;
                let src: Vec<T> = (0..off + nb * from_band).map(make).collect();
                let far = seed % 3 != 1;
                // Far: each tile's runs rows of the destination a page or
                // more apart, a band's tiles along them, bands below;
                // near: each tile 16 lines after the last.
                let (to_step, to_adv) = if far {
                    let row = (count * run).max(PAGE / size);
                    (row.next_multiple_of(run) + off * run, run)
                } else {
                    (run, 16 * run)
                };
                let to_band = if far { 16 * to_step } else { count * to_adv };
                let len = nb * to_band.max(16 * to_step) + count * to_adv + 2 * run;
                for stream in [false, true] {
                    let to = (to_step, to_adv, to_band);
                    let from = (from, run, from_band);
                    let ask = (stream, None, seed);
                    if bands_match_tiles(kernel, (len, old), to, &src, from, (count, nb), ask) {
                        ran += 1;
                    }
                }
            }
        }
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
}

/// The refusals of [`bands_of_tiles_match_tile_by_tile`] for a band of
/// two tiles or more whose source fits `src` exactly: the last tile one
/// element past either end, an advance that overflows, and (streaming)
/// a destination advance off the lines, each writing nothing.
fn refusals<T: Copy + PartialEq + core::fmt::Debug>(
    kernel: TileKernel,
    src: &[T],
    from: (Quarters, usize),
    count: usize,
    old: T,
) {
    let run = 64 / core::mem::size_of::<T>();
    let mut dst = std::vec![old; 17 * run + (count - 1) * run];
    let lead = to_line_in(&dst, 0);
    let to = Quarters::even(lead, run);
    let band = |dst: &mut [T], adv: usize, src: &[T], stream: bool| {
        tile16_quarters_run(
            kernel,
            dst,
            (to, adv),
            src,
            from,
            count,
            Bands::ONE,
            stream,
            None,
        )
    };
    assert!(!band(&mut dst, 3 * run, src, false));
    assert!(!band(&mut dst, run, &src[..src.len() - 1], false));
    assert!(!band(&mut dst, usize::MAX, src, false));
    assert!(!band(&mut dst, 1, src, true));
    // A second band: one element on (past the source's end), an advance
    // that overflows, and (streaming) a destination advance off the
    // lines.
    let bands = |dst: &mut [T], (to_adv, from_adv): (usize, usize), stream: bool| {
        let bands = Bands {
            count: 2,
            to_adv,
            from_adv,
        };
        tile16_quarters_run(
            kernel,
            dst,
            (to, 0),
            src,
            from,
            count,
            bands,
            stream,
            Some(2),
        )
    };
    assert!(!bands(&mut dst, (0, 1), false));
    assert!(!bands(&mut dst, (0, usize::MAX), false));
    assert!(!bands(&mut dst, (usize::MAX, 0), false));
    assert!(!bands(&mut dst, (1, 0), true));
    assert!(dst.iter().all(|&x| x == old));
    // The same band within bounds runs.
    assert_eq!(band(&mut dst, run, src, false), kernel.available());
}

/// Bands of tiles in one call against the same tiles one by one (the
/// kernel the test above checks against a plain loop), for both
/// kernels and every element size: 1 to 3 bands of 1 to 33 tiles
/// advancing along the runs or across them, quarters in and out of
/// order, odd source offsets, plain and streamed, asking ahead or not.
/// A band whose last tile passes either end, whose advance overflows,
/// or (streaming) whose destination advance is not whole lines writes
/// nothing, and so do bands whose last band would.
#[test]
fn bands_of_tiles_match_tile_by_tile() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) -> usize {
        let run = 64 / core::mem::size_of::<T>();
        let mut ran = 0;
        for kernel in TileKernel::ALL {
            for seed in 0..12 {
                let count = [1, 2, 5, 33][seed % 4];
                // Source runs one after another along the band, or
                // bands of runs side by side.
                let from_step = run + seed % 3;
                let from_adv = if seed % 2 == 0 {
                    run
                } else {
                    16 * from_step + 3
                };
                let from = if seed % 3 == 0 {
                    Quarters {
                        bases: [2, 0, 3, 1].map(|q| 1 + seed + q * 4 * from_step),
                        step: from_step,
                    }
                } else {
                    Quarters::even(1 + seed, from_step)
                };
                let nb = 1 + seed % 3;
                let from_band = count * from_adv + 16 * from_step + seed;
                let src_len = from.bases.iter().max().unwrap()
                    + 3 * from_step
                    + (count - 1) * from_adv
                    + (nb - 1) * from_band
                    + run;
                let src: Vec<T> = (0..src_len).map(make).collect();
                for stream in [false, true] {
                    let to_step = run * (1 + seed % 2);
                    let to_adv = if seed % 4 < 2 { 16 * to_step } else { run };
                    // Bands a whole number of lines apart, after each other.
                    let to_band = (16 * to_step + count * to_adv).next_multiple_of(run);
                    let len = 16 * to_step + (count - 1) * to_adv + (nb - 1) * to_band + 3 * run;
                    let ahead = [None, Some(1), Some(2), Some(3)][seed % 4];
                    let to = (to_step, to_adv, to_band);
                    let from = (from, from_adv, from_band);
                    let ask = (stream, ahead, seed);
                    if bands_match_tiles(kernel, (len, old), to, &src, from, (count, nb), ask) {
                        ran += 1;
                    }
                }
                if count > 1 {
                    // The source of one band exactly.
                    let one = &src[..src_len - (nb - 1) * from_band];
                    refusals(kernel, one, (from, from_adv), count, old);
                }
            }
        }
        ran
    }
    let ran = [check(word, 0), check(half, 0), check(byte, 0)];
    assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
}

/// What [`tile16_group_run`] writes, by a plain loop, into `len`
/// elements of `old`.
fn group_by_hand<T: Copy>(
    (tiles, to_adv): (&[GroupTile], usize),
    (src, from_adv): (&[T], usize),
    (count, fill): (usize, T),
    (len, old): (usize, T),
) -> Vec<T> {
    let u = 4 / core::mem::size_of::<T>();
    let mut want = std::vec![old; len];
    for k in 0..count {
        for tile in tiles {
            for (r, c, e) in (0..16 * 16 * u).map(|x| (x / (16 * u), x / u % 16, x % u)) {
                want[tile.to[r] + k * to_adv + c * u + e] =
                    tile.from[c].map_or(fill, |o| src[o + k * from_adv + r * u + e]);
            }
        }
    }
    want
}

/// Groups of tiles whose source runs are partly `fill`, run round after
/// round, against the same tiles one by one through a plain loop, for
/// both kernels and every element size: 1 to 8 tiles, fill runs
/// anywhere, odd source offsets, plain and streamed. A round past
/// either end, a streamed run or advance off the lines, or more tiles
/// than a group holds write nothing.
#[test]
fn groups_of_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(
        make: fn(usize) -> T,
        fill: T,
        old: T,
    ) -> usize {
        let run = 64 / core::mem::size_of::<T>();
        let mut ran = 0;
        for kernel in TileKernel::ALL {
            for seed in 0..10_usize {
                let (n, count) = (1 + seed % 8, [1, 3, 17][seed % 3]);
                let (sb, from_adv) = (run + seed % 3, run);
                let src_len = 1 + seed + (16 * n + 16) * sb + count * from_adv;
                let src: Vec<T> = (0..src_len).map(make).collect();
                let group = |dst: &mut [T], tiles: &[GroupTile], to_adv, count, stream| {
                    tile16_group_run(
                        kernel,
                        dst,
                        (tiles, to_adv),
                        &src,
                        from_adv,
                        count,
                        fill,
                        stream,
                    )
                };
                // Destination rows of `n` lines and one more, each
                // tile one line of every row; a round moves 16 rows on.
                let row = (n + 1) * run;
                let to_adv = 16 * row;
                let len = count * to_adv + 2 * run;
                for stream in [false, true] {
                    let mut got = std::vec![old; len];
                    let lead = to_line_in(&got, 0);
                    let tiles: Vec<GroupTile> = (0..n)
                        .map(|g| GroupTile {
                            to: core::array::from_fn(|r| lead + r * row + g * run),
                            from: core::array::from_fn(|c| {
                                ((c + g + seed) % 5 != 0).then(|| 1 + seed + (16 * g + c) * sb)
                            }),
                        })
                        .collect();
                    let done = group(&mut got, &tiles, to_adv, count, stream);
                    stream_fence();
                    let want = if done {
                        ran += 1;
                        group_by_hand(
                            (&tiles, to_adv),
                            (&src, from_adv),
                            (count, fill),
                            (len, old),
                        )
                    } else {
                        std::vec![old; len]
                    };
                    assert_eq!(got, want, "{kernel:?}, seed {seed}, stream {stream}");
                    assert_eq!(done, kernel.available());
                    // Refusals: the last round one element past the
                    // end, nine tiles, a streamed advance off the lines.
                    let mut short = std::vec![old; count * to_adv + lead - run - 1];
                    assert!(!group(&mut short, &tiles, to_adv, count, false));
                    assert!(short.iter().all(|&x| x == old));
                    // On `got`, whose runs start lines: nine tiles, a
                    // streamed advance off the lines, an advance that
                    // overflows.
                    got.fill(old);
                    let nine = [tiles[0]; GROUP_TILES + 1];
                    assert!(!group(&mut got, &nine, to_adv, count, false));
                    assert!(!group(&mut got, &tiles, to_adv + 1, 2, true));
                    assert!(!group(&mut got, &tiles, usize::MAX, 2, false));
                    assert!(got.iter().all(|&x| x == old));
                    // ... and with one element more, it runs.
                    short.push(old);
                    assert_eq!(
                        group(&mut short, &tiles, to_adv, count, false),
                        kernel.available()
                    );
                }
            }
        }
        ran
    }
    let ran = [check(word, 7, 0), check(half, 7, 0), check(byte, 7, 0)];
    assert!(ran.iter().all(|&n| (n > 0) == line_tiles()), "{ran:?}");
}

#[test]
fn stages_hold_their_initial_value() {
    with_stage(7u16, |s| {
        assert_eq!(s.len(), 4096);
        assert!(s.iter().all(|&x| x == 7));
    });
    with_stage([1u8; 3], |s| assert_eq!(s.len(), 8192 / 3));
    with_stage([0u64; 9], |s| assert!(s.is_empty()));
    with_stage(0u128, |s| assert!(s.len() == 512 || s.is_empty()));
    with_wide(3u32, usize::MAX, |w| {
        assert_eq!(w.len(), 64 * 1088 / 4);
        assert!(w.iter().all(|&x| x == 3));
    });
    with_wide(3u16, 100, |w| assert_eq!(w, [3; 100]));
    with_wide([0u64; 9], usize::MAX, |w| assert!(w.is_empty()));
}

/// Units of two 2-byte and four 1-byte elements, at odd offsets.
#[test]
fn unit_transposes_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let u = 4 / core::mem::size_of::<T>();
        for (na, nb) in [(4, 4), (5, 9), (8, 64), (13, 6), (3, 8)] {
            for (d, s) in [(0, 0), (1, 3)] {
                for (pad_d, pad_s) in [(0, 0), (3, 5)] {
                    let (da, sb) = (nb * u + pad_d, na * u + pad_s);
                    let dst_len = d + na * da + 3;
                    let src_len = s + nb * sb + 2;
                    let src: Vec<T> = (0..src_len).map(make).collect();
                    let mut got = std::vec![old; dst_len];
                    let (ta, tb) = transpose_units(&mut got, d, da, &src, s, sb, (na, nb));
                    let mut want = std::vec![old; dst_len];
                    for i in 0..ta {
                        for j in 0..tb {
                            for k in 0..u {
                                want[d + i * da + j * u + k] = src[s + i * u + j * sb + k];
                            }
                        }
                    }
                    assert_eq!(got, want, "{na}x{nb} at {d}/{s}");
                    if VECTOR_TRANSPOSE && na >= 4 && nb >= 4 {
                        assert_eq!((ta, tb), (na / 4 * 4, nb / 4 * 4));
                    }
                }
            }
        }
    }
    check(|i| i as u16 | 0x8000, 0);
    check(|i| i as u8 | 0x80, 0);
    check(|i| i as u32 | 1 << 31, 0);
}

/// Column counts for the group kernels: every one up to 70, and around
/// the AVX-512 kernel's steps (64 bytes of each row) past that.
fn group_counts() -> impl Iterator<Item = usize> {
    (0..70).chain([95, 96, 97, 127, 128, 129, 191, 192, 193, 250])
}

/// How many of `n` columns `k` rows `pitch` apart [`deinterleave_groups`]
/// does: every one with AVX-512 VBMI (rows that do not overlap), else
/// whole groups of 16 (rows 16 or more apart).
fn groups_done(n: usize, pitch: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if x86_64::Avx512Vbmi::detect().is_some() && pitch >= n {
        return n;
    }
    if pitch >= 16 {
        n / 16 * 16
    } else {
        0
    }
}

/// Byte interleaves at every column count up to 70 and some past it, odd
/// pitches and offsets.
#[test]
fn byte_interleaves_match_plain_loops() {
    for n in group_counts() {
        for pad in [0, 1, 17] {
            let pitch = n + pad;
            let src: Vec<u8> = (0..3 * pitch + n + 3).map(|x| (x * 7 + 3) as u8).collect();
            let mut out = std::vec![0u8; 4 * n + 5];
            let done = interleave4_bytes(&mut out[1..], &src[2..], pitch, n);
            let mut want = std::vec![0u8; 4 * n + 5];
            for x in 0..done {
                for j in 0..4 {
                    want[1 + x * 4 + j] = src[2 + j * pitch + x];
                }
            }
            assert_eq!(out, want, "interleave {n} columns, pitch {pitch}");
            if VECTOR_TRANSPOSE {
                assert_eq!(done, n / 16 * 16);
            }
            let input: Vec<i8> = (0..=4 * n).map(|x| (x * 5 + 1) as i8).collect();
            let mut dst = std::vec![0i8; 3 * pitch + n + 4];
            let done = deinterleave_groups(4, &mut dst[3..], pitch, &input[1..], n);
            let mut want = std::vec![0i8; 3 * pitch + n + 4];
            for x in 0..done {
                for j in 0..4 {
                    want[3 + j * pitch + x] = input[1 + x * 4 + j];
                }
            }
            assert_eq!(dst, want, "deinterleave {n} columns, pitch {pitch}");
            if VECTOR_TRANSPOSE {
                assert_eq!(done, groups_done(n, pitch), "{n} columns, pitch {pitch}");
            }
        }
    }
    assert_eq!(interleave4_bytes(&mut [0u16; 64], &[0u16; 64], 16, 16), 0);
    assert_eq!(
        deinterleave_groups(4, &mut [0u8; 63], 16, &[0u8; 64], 16),
        0
    );
}

/// Pairs of 2-byte elements into two rows at every column count up to
/// 70 and some past it, odd pitches and offsets, with values across the
/// whole 16-bit range (the SSE2 kernel sign-extends and packs), against a
/// plain loop; nothing outside the columns done changes.
#[test]
fn word_deinterleave_matches_a_plain_loop() {
    for n in group_counts() {
        for pad in [0, 1, 17] {
            let pitch = n + pad;
            let input: Vec<u16> = (0..=2 * n)
                .map(|x| (x as u16).wrapping_mul(40503) ^ 0x8001)
                .collect();
            let mut dst = std::vec![0x5a5au16; pitch + n + 4];
            let done = deinterleave_groups(2, &mut dst[3..], pitch, &input[1..], n);
            let mut want = std::vec![0x5a5au16; pitch + n + 4];
            for x in 0..done {
                for j in 0..2 {
                    want[3 + j * pitch + x] = input[1 + x * 2 + j];
                }
            }
            assert_eq!(dst, want, "{n} columns, pitch {pitch}");
            if VECTOR_TRANSPOSE {
                assert_eq!(done, groups_done(n, pitch), "{n} columns, pitch {pitch}");
            }
        }
    }
    let extremes = [0u16, 1, 0x7fff, 0x8000, 0xffff, 0x0080, 0xff7f, 0x8001];
    let input: Vec<u16> = (0..32).map(|x| extremes[x % 8]).collect();
    let mut dst = std::vec![0u16; 32];
    if deinterleave_groups(2, &mut dst, 16, &input, 16) == 16 {
        for x in 0..16 {
            assert_eq!([dst[x], dst[16 + x]], [input[2 * x], input[2 * x + 1]]);
        }
    }
    // Other sizes, rows that overlap and closer than the SSE2 kernel's 16
    // columns, and too short a side do nothing.
    assert_eq!(
        deinterleave_groups(2, &mut [0u8; 64], 32, &[0u8; 64], 32),
        0
    );
    assert_eq!(
        deinterleave_groups(2, &mut [0u16; 64], 8, &[0u16; 64], 16),
        0
    );
    assert_eq!(
        deinterleave_groups(2, &mut [0u16; 31], 16, &[0u16; 32], 16),
        0
    );
    assert_eq!(
        deinterleave_groups(2, &mut [0u16; 32], 16, &[0u16; 31], 16),
        0
    );
    // Group sizes without a kernel.
    for k in [0, 1, 3, 8] {
        assert_eq!(
            deinterleave_groups(k, &mut [0u8; 512], 64, &[0u8; 512], 32),
            0
        );
    }
}

/// The streamed interleaves of bytes (four rows) and 2-byte elements
/// (two rows) against plain loops: column counts around 16, every
/// start within a line (so both aligned and misaligned ones), odd
/// pitches; nothing outside the columns done may change, and they do
/// all whole groups of 16 exactly when the start is aligned.
#[test]
fn streamed_interleaves_match_plain_loops() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let k = 4 / size;
        for n in [0, 1, 15, 16, 17, 31, 32, 48, 70, 128] {
            for pad in [0, 1, 8, 16, 19] {
                let pitch = n + pad;
                for off in 0..64 / size {
                    let src: Vec<T> = (0..(k - 1) * pitch + n + 3).map(make).collect();
                    let mut buf = std::vec![old; k * n + 64];
                    let at = off + (64 - buf.as_ptr().addr() % 64) / size % (64 / size);
                    let at = at % (64 / size);
                    let done = interleave_stream(&mut buf[at..], &src[1..], pitch, n);
                    stream_fence();
                    let mut want = std::vec![old; k * n + 64];
                    for x in 0..done {
                        for j in 0..k {
                            want[at + x * k + j] = src[1 + j * pitch + x];
                        }
                    }
                    assert_eq!(buf, want, "interleave {n} of pitch {pitch} at {at}");
                    if VECTOR_TRANSPOSE {
                        let aligned = buf[at..].as_ptr().addr() % 16 == 0;
                        assert_eq!(done, if aligned { n / 16 * 16 } else { 0 });
                    }
                }
            }
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
    // Other sizes, too short an output, overlapping rows: nothing done.
    let mut wide = std::vec![0u32; 256];
    assert_eq!(interleave_stream(&mut wide, &[1u32; 256], 16, 16), 0);
    assert!(wide.iter().all(|&x| x == 0));
    let mut rows = std::vec![0u8; 64];
    assert_eq!(interleave_stream(&mut rows[..63], &[1u8; 64], 16, 16), 0);
    assert!(rows.iter().all(|&x| x == 0));
}

/// A line of each of two rows of 2-byte elements and four of bytes,
/// streamed, against a plain loop: every start within a line (only a
/// line boundary is taken), pitches of whole lines and not, inputs and
/// buffers at odd places; nothing outside the lines changes, and a
/// refusal writes nothing.
#[test]
fn streamed_lines_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let (k, line) = (4 / size, 64 / size);
        let mut taken = 0;
        for pitch in [line, 2 * line, 3 * line + 1, 5 * line, 4 * line - 8] {
            for off in (0..line).step_by(16 / size) {
                let input: Vec<T> = (0..k * line + 3).map(make).collect();
                let mut dst = std::vec![old; (k + 1) * pitch + 2 * line];
                let at = ((64 - dst.as_ptr().addr() % 64) / size + off) % line;
                let mut buf = std::vec![old; k * line + 5];
                let done = deinterleave_line_streamed(
                    k,
                    &mut dst[at..],
                    pitch,
                    &input[3..],
                    &mut buf[5..],
                );
                stream_fence();
                let mut want = std::vec![old; dst.len()];
                if done {
                    for x in 0..line {
                        for j in 0..k {
                            want[at + j * pitch + x] = input[3 + x * k + j];
                        }
                    }
                }
                assert_eq!(dst, want, "pitch {pitch} at {at}");
                let lined = dst[at..].as_ptr().addr() % 64 == 0 && (pitch * size) % 64 == 0;
                assert_eq!(done, VECTOR_TRANSPOSE && lined, "pitch {pitch} at {at}");
                taken += usize::from(done);
            }
        }
        assert!(!VECTOR_TRANSPOSE || taken >= 3, "{taken}");
        // Too short a destination, input or buffer, or groups of other
        // sizes: nothing written.
        let mut dst = std::vec![old; k * line + 64];
        let at = (64 - dst.as_ptr().addr() % 64) / size % line;
        let input: Vec<T> = (0..k * line).map(make).collect();
        let mut buf = std::vec![old; k * line];
        let ends = at + (k - 1) * line + line;
        assert!(!deinterleave_line_streamed(
            k,
            &mut dst[at..ends - 1],
            line,
            &input,
            &mut buf
        ));
        assert!(!deinterleave_line_streamed(
            k,
            &mut dst[at..],
            line,
            &input[1..],
            &mut buf
        ));
        assert!(!deinterleave_line_streamed(
            k,
            &mut dst[at..],
            line,
            &input,
            &mut buf[1..]
        ));
        assert!(!deinterleave_line_streamed(
            2 * k,
            &mut dst[at..],
            line,
            &input,
            &mut buf
        ));
        assert!(dst.iter().all(|&v| v == old));
    }
    check(|i| (i * 7 + 3) as u8, 0xee);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
    let mut wide = std::vec![0u32; 256];
    assert!(!deinterleave_line_streamed(
        1,
        &mut wide,
        16,
        &[1u32; 64],
        &mut [0u32; 64]
    ));
    assert!(wide.iter().all(|&x| x == 0));
}

/// Prefetches are hints: any range, inside the slice, past its end,
/// empty or reversed, asks for nothing outside it and changes nothing.
#[test]
fn prefetches_stay_inside_their_slice() {
    let data: Vec<u16> = (0..300).collect();
    for from in [0, 1, 31, 32, 33, 299, 300, 301, usize::MAX] {
        for to in [0, 1, 32, 100, 300, 1000, usize::MAX] {
            prefetch_span(&data, from, to);
            prefetch_span(&data[7..], from, to);
            prefetch_span::<u16>(&[], from, to);
        }
    }
    assert!(data.iter().enumerate().all(|(i, &x)| usize::from(x) == i));
}

/// Every length and both misalignments of either side, bytes and wider.
#[test]
fn streaming_copies_match_copy_from_slice() {
    let src: Vec<u8> = (0..700u32).map(|x| (x * 13 + 5) as u8).collect();
    for len in [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300, 511, 600] {
        for (d, s) in [(0, 0), (1, 0), (0, 3), (7, 9), (15, 16), (16, 1)] {
            let mut got = std::vec![0xaau8; 700];
            if d % 2 == 0 {
                stream_copy(&mut got[d..d + len], &src[s..s + len]);
            } else {
                stream_copy_in_order(&mut got[d..d + len], &src[s..s + len]);
            }
            stream_fence();
            let mut want = std::vec![0xaau8; 700];
            want[d..d + len].copy_from_slice(&src[s..s + len]);
            assert_eq!(got, want, "{len} bytes at {d} from {s}");
            // The streaming kernel itself, whatever the alignment.
            #[cfg(target_arch = "x86_64")]
            {
                for granule in [16, 64] {
                    let mut got = std::vec![0xaau8; 700];
                    let stores = x86_64::Stores::best();
                    x86_64::stream_copy(stores, &mut got[d..d + len], &src[s..s + len], granule);
                    stream_fence();
                    assert_eq!(
                        got, want,
                        "{len} bytes at {d} from {s}, streamed by {granule}"
                    );
                }
            }
        }
    }
    let wide: Vec<[u16; 3]> = (0..200u16).map(|x| [x, x + 1, x + 2]).collect();
    for off in 0..4 {
        let mut got = std::vec![[0u16; 3]; 200];
        stream_copy(&mut got[off..], &wide[..200 - off]);
        assert_eq!(&got[off..], &wide[..200 - off]);
        assert!(got[..off].iter().all(|&x| x == [0; 3]));
    }
}

/// Every set of streaming-store registers this CPU runs.
#[cfg(target_arch = "x86_64")]
fn store_widths() -> impl Iterator<Item = x86_64::Stores> {
    use x86_64::{Avx, Avx512, Stores};
    [
        Some(Stores::Sse2),
        Avx::detect().map(Stores::Avx),
        Avx512::detect().map(Stores::Avx512),
    ]
    .into_iter()
    .flatten()
}

/// Each width of streaming store this CPU has, against `copy_from_slice`:
/// every start in two lines of a line-aligned buffer, sources skewed from
/// it by whole lines, half lines and less, lengths short of a line, of
/// whole lines, and past the prefetch distance, each not a multiple of 64
/// by a few bytes as well, for both granules.
#[cfg(target_arch = "x86_64")]
#[test]
fn every_store_width_matches_copy_from_slice() {
    // Both sides on lines of 64 bytes, so that offsets are alignments and
    // `s - d` the skew of the loads against the stores.
    let mut from = std::vec![0u8; 3000 + 64];
    let first = from.as_ptr().align_offset(64);
    let src = &mut from[first..][..3000];
    for (x, b) in src.iter_mut().enumerate() {
        *b = (x * 29 + 7) as u8;
    }
    let src = &*src;
    let mut lines = std::vec![0u8; 3000 + 64];
    let first = lines.as_ptr().align_offset(64);
    let buf = &mut lines[first..][..3000];
    for stores in store_widths() {
        for len in [
            0,
            16,
            48,
            63,
            64,
            65,
            80,
            127,
            128,
            192,
            200,
            1024,
            1090,
            2048 + 17,
        ] {
            for d in 0..128 {
                for s in [0, 1, 16, 32, 61] {
                    for granule in [16, 64] {
                        buf.fill(0xaa);
                        x86_64::stream_copy(
                            stores,
                            &mut buf[d..d + len],
                            &src[s..s + len],
                            granule,
                        );
                        stream_fence();
                        let mut want = std::vec![0xaau8; buf.len()];
                        want[d..d + len].copy_from_slice(&src[s..s + len]);
                        assert_eq!(
                            buf, want,
                            "{stores:?}: {len} bytes at {d} from {s}, granule {granule}"
                        );
                    }
                }
            }
        }
    }
}

/// Grids of runs at every store width, against the plain loop: runs of
/// whole lines and not, destinations on lines and off by a few bytes,
/// strides that keep the runs on lines and some that do not, sources at
/// odd offsets; a grid refused writes nothing, and a grid whose runs all
/// start lines and are whole lines long is never refused.
#[cfg(target_arch = "x86_64")]
#[test]
fn grids_of_runs_match_a_plain_loop() {
    let src: Vec<u8> = (0..20_000).map(|x: usize| (x * 31 + 5) as u8).collect();
    let mut lines = std::vec![0u8; 24_000 + 64];
    let first = lines.as_ptr().align_offset(64);
    let buf = &mut lines[first..][..24_000];
    for stores in store_widths() {
        for len in [0, 48, 64, 100, 128, 192, 1088, 1152] {
            for grid in [
                [(1, 0, 0), (1, 0, 0)],
                [(1, 0, 0), (3, 1152, 1153)],
                [(3, 1280, 1301), (2, 4096, 1155)],
                [(2, 64 * 30, 1200), (4, 64 * 7, 3)],
                [(2, 1300, 1300), (2, 64 * 40, 2000)],
                [(2, 64 * 40, 1300), (2, 1250, 2000)],
                [(0, 64, 64), (3, 1280, 1280)],
                [(1, 13, 7), (2, 1280, 1280)],
            ] {
                // Asking for nothing, for the next span, or for lines far
                // outside the buffers (a prefetch never faults) writes the
                // same bytes.
                let next = next_span::<u8>(grid, len).map(|at| (at, len));
                let asks = [None, next, Some((1 << 40, 4096))];
                for d in [0, 1, 16, 64] {
                    for s in [0, 3, 16] {
                        for ask in asks {
                            buf.fill(0xaa);
                            let done = x86_64::stream_runs(
                                stores,
                                &mut buf[d..],
                                &src[s..],
                                grid,
                                len,
                                64,
                                ask,
                            );
                            stream_fence();
                            let [(n0, d0, s0), (n1, d1, s1)] = grid;
                            let mut want = std::vec![0xaau8; buf.len()];
                            if done {
                                for x in 0..n0 {
                                    for i in 0..n1 {
                                        let (to, from) = (d + x * d0 + i * d1, s + x * s0 + i * s1);
                                        want[to..to + len].copy_from_slice(&src[from..from + len]);
                                    }
                                }
                            }
                            let whole = len > 0 && len % 64 == 0 && d % 64 == 0;
                            let on_lines = (n0 < 2 || d0 % 64 == 0) && (n1 < 2 || d1 % 64 == 0);
                            let taken = n0 > 0 && n1 > 0 && whole && on_lines;
                            let what = std::format!(
                                "{stores:?}: {grid:?} of {len} at {d} from {s}, {ask:?}"
                            );
                            assert_eq!(done, taken, "{what}");
                            assert_eq!(buf, &want[..], "{what}");
                        }
                    }
                }
            }
        }
    }
}

/// Runs a page apart along the inner level of the grid and side by side
/// along the outer one, which `stream_runs` takes in blocks: several
/// blocks each way and partial ones at both ends, runs of a line and
/// longer and, with a granule of 16, shorter and off the lines.
#[cfg(target_arch = "x86_64")]
#[test]
fn stream_runs_in_blocks_match_the_grid_order() {
    for stores in store_widths() {
        for (len, granule, d) in [
            (64usize, 64, 0),
            (128, 64, 64),
            (192, 64, 0),
            (48, 16, 16),
            (80, 16, 48),
        ] {
            let (n0, n1) = (4096 / len + 3, 1024 / len + 5);
            // Source rows of `n0` runs back to back, a page and more apart.
            let pitch = (n0 * len).next_multiple_of(64) + 64;
            let src: Vec<u8> = (0..n1 * pitch)
                .map(|x: usize| (x * 7 + x / 251) as u8)
                .collect();
            let row = n1 * len + 64;
            let grid = [(n0, row, len), (n1, len, pitch)];
            let mut lines = std::vec![0u8; n0 * row + 192];
            let first = lines.as_ptr().align_offset(64);
            let buf = &mut lines[first..][..n0 * row + 128];
            buf.fill(0xaa);
            let done = x86_64::stream_runs(stores, &mut buf[d..], &src, grid, len, granule, None);
            stream_fence();
            assert!(done, "{stores:?}: {len}");
            let mut want = std::vec![0xaau8; buf.len()];
            for x in 0..n0 {
                for i in 0..n1 {
                    let (to, from) = (d + x * row + i * len, x * len + i * pitch);
                    want[to..to + len].copy_from_slice(&src[from..from + len]);
                }
            }
            assert_eq!(buf, &want[..], "{stores:?}: runs of {len} at {d}");
        }
    }
}

#[test]
fn next_spans_follow_bands_of_short_streams() {
    // An unpack's band: 8 rows of 32 tiles of (8,128) `f32`, a row of
    // each tile a run: 32 streams of a page, which fill 32768 elements,
    // and the next band starts there.
    let unpack = [(8, 4096, 128), (32, 128, 1024)];
    assert_eq!(next_span::<f32>(unpack, 128), Some(32768));
    // A pack's band of rows of 2 KiB: 8 streams of 2 KiB.
    assert_eq!(
        next_span::<f32>([(4, 1024, 128), (8, 128, 512)], 128),
        Some(4096)
    );
    // Rows of 16 KiB: streams of 16 KiB, left to the hardware; as bytes,
    // a quarter of that, a page.
    let pack = [(32, 1024, 128), (8, 128, 4096)];
    assert_eq!(next_span::<f32>(pack, 128), None);
    assert_eq!(next_span::<u8>(pack, 128), Some(32768));
    // Runs that do not continue each other are streams of a run each.
    assert_eq!(
        next_span::<f32>([(2, 0, 4096), (4, 0, 1024)], 1024),
        Some(8192)
    );
    assert_eq!(next_span::<f32>([(2, 0, 8192), (2, 0, 4096)], 4096), None);
    // One row of a band (the rest of its span is other rows), a band with
    // gaps between its runs, runs that overlap, and one run a row: none.
    assert_eq!(next_span::<f32>([(1, 0, 0), (32, 128, 1024)], 128), None);
    assert_eq!(
        next_span::<f32>([(8, 4096, 130), (32, 128, 1040)], 128),
        None
    );
    assert_eq!(next_span::<f32>([(8, 4096, 64), (32, 128, 512)], 128), None);
    assert_eq!(next_span::<f32>([(8, 4096, 128), (1, 0, 0)], 128), None);
    // Empty grids and spans past `usize` ask for nothing.
    assert_eq!(next_span::<f32>([(0, 0, 0), (32, 128, 1024)], 128), None);
    assert_eq!(next_span::<u8>([(2, 0, usize::MAX), (2, 0, 1)], 1), None);
}

#[test]
fn next_bands_cover_the_rows_under_tiles() {
    // Where the runs fill their span, `next_span`'s request, a run each.
    let unpack = [(8, 4096, 128), (32, 128, 1024)];
    assert_eq!(next_band::<f32>(unpack, 128), Some((32768, 128)));
    // A pack's band of 5 whole `(4,128)` tiles of `f32` rows of 704, the
    // ragged sixth apart: the next band is 4 rows of 704 on, 141 of them
    // a run, which cover it (20 runs of 141 >= 2816).
    let band = [(5, 512, 128), (4, 128, 704)];
    let (at, step) = next_band::<f32>(band, 128).unwrap();
    assert_eq!((at, step), (2816, 141));
    assert!(5 * 4 * step >= 4 * 704);
    // Rows whose tiles span more than a page are left to the hardware; a
    // band of one row, tiles not side by side, or wider than their rows
    // ask for nothing, nor do spans past `usize`.
    assert_eq!(next_band::<f32>([(9, 512, 128), (4, 128, 1200)], 128), None);
    assert_eq!(
        next_band::<u8>([(9, 512, 128), (4, 128, 1200)], 128),
        Some((4800, 134))
    );
    assert_eq!(next_band::<f32>([(5, 512, 128), (1, 128, 704)], 128), None);
    assert_eq!(next_band::<f32>([(5, 512, 130), (4, 128, 704)], 128), None);
    assert_eq!(next_band::<f32>([(5, 512, 128), (4, 128, 600)], 128), None);
    assert_eq!(next_band::<u8>([(2, 0, 1), (usize::MAX, 0, 4)], 1), None);
}

/// Each set of `s4` group steps this CPU runs, not only the widest the
/// dispatch picks (an AVX-512 machine checks the AVX2 steps too), against
/// a plain loop: one step at odd pitches, signed and not.
#[cfg(target_arch = "x86_64")]
#[test]
fn every_nibble_step_set_matches_a_plain_loop() {
    use super::x86_64::{Avx2, Avx512Bw, NibbleSteps, Store};
    let sets = [
        Avx512Bw::detect().map(NibbleSteps::Avx512),
        Avx2::detect().map(NibbleSteps::Avx2),
    ];
    for steps in sets.into_iter().flatten() {
        for pitch in [64, 67, 131, 1024] {
            let rows: Vec<u8> = (0..7 * pitch + 64).map(|i| (i * 89 % 253) as u8).collect();
            let mut got = [0u8; 256];
            let mut seen = Seen::new(3);
            steps.pack64(&mut got, &rows, pitch, Store::Plain, &mut seen);
            let greatest = (0..8).flat_map(|r| &rows[r * pitch..][..64]);
            let greatest = greatest.map(|v| v.wrapping_add(3)).max();
            assert_eq!(Some(seen.greatest()), greatest, "{steps:?}, pitch {pitch}");
            let want: Vec<u8> = (0..256)
                .map(|i| {
                    let (x, q) = (i / 4, i % 4);
                    rows[2 * q * pitch + x] & 0xf | rows[(2 * q + 1) * pitch + x] << 4
                })
                .collect();
            assert_eq!(got[..], want[..], "pack, {steps:?}, pitch {pitch}");
            // One value above the rest, at each row and each 16-column
            // edge in turn: every lane must reach `seen`.
            for r in 0..8 {
                for x in [0, 15, 16, 31, 32, 47, 48, 63] {
                    let mut spiked: Vec<u8> = rows.iter().map(|v| v % 16).collect();
                    spiked[r * pitch + x] = 200;
                    let (mut out, mut seen) = ([0u8; 256], Seen::new(3));
                    steps.pack64(&mut out, &spiked, pitch, Store::Plain, &mut seen);
                    assert_eq!(
                        seen.greatest(),
                        203,
                        "{steps:?}, pitch {pitch}, row {r}, {x}"
                    );
                }
            }
            for signed in [false, true] {
                let mut back = std::vec![0x5au8; 7 * pitch + 64];
                steps.unpack64(&mut back, pitch, &got, signed);
                for (i, &b) in back.iter().enumerate() {
                    let (r, x) = (i / pitch, i % pitch);
                    let want = if x < 64 {
                        let v = rows[r * pitch + x] & 0xf;
                        if signed && v >= 8 {
                            v | 0xf0
                        } else {
                            v
                        }
                    } else {
                        0x5a
                    };
                    assert_eq!(b, want, "unpack, {steps:?}, pitch {pitch}, row {r}, {x}");
                }
            }
        }
    }
}

/// The `s4` `(8,1)` group kernels against a plain loop: widths around
/// their 64-column steps, rows at odd pitches, groups at every place in a
/// line, streamed and not; nothing outside the groups or rows changes.
#[test]
fn nibble_groups_match_a_plain_loop() {
    #[cfg(target_arch = "x86_64")]
    let kernel = super::x86_64::NibbleSteps::best().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    let kernel = false;
    for n in [1, 5, 63, 64, 65, 127, 128, 200, 1008] {
        for pitch in [n.max(64), n + 3, 131, 1024] {
            if pitch < n {
                continue;
            }
            let rows: Vec<u8> = (0..7 * pitch + n).map(|i| (i * 37 % 251) as u8).collect();
            for at in [0, 1, 16, 20, 48] {
                for stream in [false, true] {
                    let mut got = std::vec![0xa5u8; at + 4 * n + 7];
                    let bias = (n * 7 + at) as u8;
                    let mut seen = Seen::new(bias);
                    let did =
                        pack_nibble_groups(&mut got[at..], &rows, pitch, n, stream, &mut seen);
                    stream_fence();
                    assert_eq!(did > 0, kernel);
                    // The greatest value read plus the bias, and nothing
                    // past the columns (the last step's others count as 0).
                    let greatest = (0..8)
                        .flat_map(|r| &rows[r * pitch..][..n])
                        .chain(if n % 64 == 0 { None } else { Some(&0) })
                        .map(|v| v.wrapping_add(bias))
                        .max();
                    if did > 0 {
                        assert_eq!(
                            Some(seen.greatest()),
                            greatest,
                            "{n} columns, pitch {pitch}"
                        );
                    }
                    let mut want = std::vec![0xa5u8; at + 4 * n + 7];
                    if did > 0 {
                        for x in 0..n {
                            for q in 0..4 {
                                let (lo, hi) =
                                    (rows[2 * q * pitch + x], rows[(2 * q + 1) * pitch + x]);
                                want[at + 4 * x + q] = lo & 0xf | hi << 4;
                            }
                        }
                        assert_eq!(did, n);
                    }
                    assert_eq!(
                        got, want,
                        "pack {n} columns, pitch {pitch}, at {at}, {stream}"
                    );
                }
            }
            let input: Vec<u8> = (0..4 * n + 5).map(|i| (i * 53 % 256) as u8).collect();
            for (signed, stream, at) in [(false, false, 1), (true, false, 1), (false, true, 0)]
                .into_iter()
                .chain([1, 17, 63].map(|at| (true, true, at)))
            {
                let mut got = std::vec![0x5au8; 8 * pitch + 64 + at];
                let did = unpack_nibble_groups(&mut got[at..], pitch, &input, n, signed, stream);
                stream_fence();
                assert_eq!(did > 0, kernel && pitch >= 64);
                let mut want = std::vec![0x5au8; 8 * pitch + 64 + at];
                if did > 0 {
                    for x in 0..n {
                        for r in 0..8 {
                            let v = input[4 * x + r / 2] >> (r % 2 * 4) & 0xf;
                            let v = if signed && v >= 8 { v | 0xf0 } else { v };
                            want[at + r * pitch + x] = v;
                        }
                    }
                    assert_eq!(did, n);
                }
                assert_eq!(
                    got, want,
                    "unpack {n} columns, pitch {pitch}, at {at}, {signed}, {stream}"
                );
            }
        }
    }
}

/// The packing kernels that check values see each byte they read: one
/// byte above the rest, at every few places of each row of a step (a
/// tile), is what each reports.
#[test]
fn packing_kernels_see_every_value() {
    let (pitch, bias) = (300, 8);
    let rows: Vec<u8> = (0..16 * pitch).map(|i| (i % 16) as u8).collect();
    let from: [usize; 16] = core::array::from_fn(|c| 7 + c * pitch);
    for c in 0..16 {
        for x in (0..128).step_by(5).chain([127]) {
            let mut one = rows.clone();
            one[from[c] + x] = 200;
            let mut out = std::vec![0u8; 64 + 16 * 128];
            let mut seen = Seen::new(bias);
            if squeeze_nibble_pairs(&mut out, &one[from[c]..][..128], &mut seen) > 0 {
                assert_eq!(seen.greatest(), 208, "row {c}, byte {x}");
            }
            // Eight rows of 100 columns: a whole step and a short one.
            if c < 8 && x < 100 {
                let mut seen = Seen::new(bias);
                if pack_nibble_groups(&mut out, &one[from[0]..], pitch, 100, false, &mut seen) > 0 {
                    assert_eq!(seen.greatest(), 208, "groups, row {c}, column {x}");
                }
            }
        }
    }
}

/// The transposed `s4` tile kernel unpacking against a plain loop: runs
/// and rows at odd places, apart by odd strides, signed and not; nothing
/// else changes.
#[test]
fn nibble_tiles_match_a_plain_loop() {
    #[cfg(target_arch = "x86_64")]
    let kernel = super::x86_64::Avx512Bw::detect().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    let kernel = false;
    for (at, step, pitch) in [(0, 64, 128), (16, 192, 131), (3, 77, 200), (64, 1024, 4397)] {
        let to: [usize; 16] = core::array::from_fn(|x| at + x * step);
        let from: [usize; 16] = core::array::from_fn(|c| 5 + c * pitch);
        let len = at + 15 * step + 64 + 9;
        let runs: Vec<u8> = (0..len).map(|i| (i * 71 % 256) as u8).collect();
        for signed in [false, true] {
            let mut got = std::vec![0x44u8; 15 * pitch + 128 + 5];
            let did = unpack_nibble_tile16(&mut got, &from, &runs, &to, signed);
            assert_eq!(did, kernel);
            let mut want = std::vec![0x44u8; 15 * pitch + 128 + 5];
            if did {
                for x in 0..16 {
                    for c in 0..16 {
                        for k in 0..8 {
                            let v = runs[to[x] + 4 * c + k / 2] >> (k % 2 * 4) & 0xf;
                            want[from[c] + 8 * x + k] = if signed && v >= 8 { v | 0xf0 } else { v };
                        }
                    }
                }
            }
            assert_eq!(
                got, want,
                "unpack at {at}, runs {step} apart, rows {pitch}, {signed}"
            );
        }
    }
}

/// The joined band kernel against a plain loop, over three bands down the
/// same runs (the first band's pieces start them, the others join the
/// piece before): bytes of 1, 2 and 4 at a time, runs starting at every
/// place in a line (odd offsets, strides of odd bytes), 1 to 3 tiles a
/// band. Each run's bytes from its start to its last line boundary are
/// written, the rest waits in the carry; nothing else changes.
#[test]
fn joined_bands_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let (w, run) = (4 / size, 64 / size);
        for tiles in 1..=3 {
            for (at, extra) in [(0, 0), (1, 1), (3, 5), (w, 17)] {
                // Runs of three pieces, `stride` elements apart.
                let stride = 3 * run + extra;
                let pitch = 16 * tiles * w + 3;
                let src: Vec<T> = (0..48 * pitch).map(make).collect();
                let len = at + 16 * tiles * stride + 9;
                let mut got = std::vec![old; len];
                let mut carry = std::vec![old; 16 * tiles * run];
                let mut ran = true;
                for band in 0..3 {
                    let rows: [usize; 16] = core::array::from_fn(|c| (16 * band + c) * pitch);
                    let job = JoinBand {
                        rows,
                        ahead: rows.map(|r| r + 16 * pitch),
                        tiles,
                        piece: at + band * run,
                        stride,
                        first: band == 0,
                    };
                    ran &= join_band16(&mut got, &src, &job, &mut carry);
                }
                stream_fence();
                assert_eq!(ran, joins_tiles());
                if !ran {
                    assert!(got.iter().all(|&x| x == old));
                    continue;
                }
                // Unit `i` of run `j` is unit `j` of row `i`.
                let value = |j: usize, i: usize, k: usize| src[i * pitch + j * w + k];
                let mut want = std::vec![old; len];
                for j in 0..16 * tiles {
                    let start = at + j * stride;
                    let end = start + 3 * run;
                    // The last line boundary before the run's end.
                    let addr = got.as_ptr().addr() + end * size;
                    let written = end - addr % 64 / size;
                    for (e, slot) in want[start..written].iter_mut().enumerate() {
                        *slot = value(j, e / w, e % w);
                    }
                    for e in 0..run {
                        let (i, k) = (32 + e / w, e % w);
                        assert_eq!(carry[j * run + e], value(j, i, k), "carry of run {j}");
                    }
                }
                assert_eq!(got, want, "{tiles} tiles at {at}, runs {stride} apart");
            }
        }
    }
    check(word, 0);
    check(half, 0);
    check(byte, 0);
}

/// The row squeeze of the transposed `s4` packs against a plain loop: rows
/// of every length to three steps and a half, from every place in a line,
/// into bytes at odd places; it does whole steps of 64 bytes (as many as
/// both slices hold), sees each byte it reads and changes nothing else.
#[test]
fn nibble_pairs_match_a_plain_loop() {
    #[cfg(target_arch = "x86_64")]
    let kernel = super::x86_64::Avx512Bw::detect().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    let kernel = false;
    let bytes: Vec<u8> = (0..300usize).map(|i| (i * 37 % 251) as u8).collect();
    for len in 0..=224 {
        for (from, at, room) in [(0, 0, 112), (5, 3, 112), (63, 17, 112), (1, 0, 40)] {
            let values = &bytes[from..from + len];
            let mut got = std::vec![0x5au8; at + room + 7];
            let bias = (len * 7 + from) as u8;
            let mut seen = Seen::new(bias);
            let did = squeeze_nibble_pairs(&mut got[at..at + room], values, &mut seen);
            let steps = if kernel { (len / 64).min(room / 32) } else { 0 };
            assert_eq!(did, 64 * steps, "{len} bytes from {from}, {room} of room");
            let mut want = std::vec![0x5au8; at + room + 7];
            for k in 0..32 * steps {
                want[at + k] = values[2 * k] & 0xf | values[2 * k + 1] << 4;
            }
            assert_eq!(got, want, "{len} bytes from {from} to {at}, {room} of room");
            let greatest = values[..did].iter().map(|v| v.wrapping_add(bias)).max();
            assert_eq!(
                seen.greatest(),
                greatest.unwrap_or(0),
                "{len} bytes from {from}"
            );
        }
    }
}

/// The joined transposed `s4` unpack against a plain loop, over three
/// tiles along the same rows (the first tile's pieces start them, the
/// others join the piece before): rows starting at every place in a
/// line, apart by odd strides, signed and not. Each row's bytes from its
/// start to its last line boundary are written, the rest waits in the
/// carry; nothing else changes.
#[test]
fn joined_nibble_unpacks_match_a_plain_loop() {
    for (at, pitch, step) in [
        (0, 384, 64),
        (16, 389, 193),
        (3, 400, 250),
        (64, 4397, 1024),
    ] {
        let runs: Vec<u8> = (0..15 * step + 3 * 64 + 9)
            .map(|i| (i * 71 % 256) as u8)
            .collect();
        for signed in [false, true] {
            let len = at + 15 * pitch + 3 * 128 + 5;
            let mut got = std::vec![0x44u8; len];
            let mut carry = std::vec![0u8; 1024];
            let mut ran = true;
            for t in 0..3 {
                let to: [usize; 16] = core::array::from_fn(|c| at + c * pitch + 128 * t);
                let from: [usize; 16] = core::array::from_fn(|x| x * step + 64 * t);
                let slots = (&mut carry[..], t == 0);
                ran &= unpack_nibble_tile16_joined(&mut got, &to, &runs, &from, signed, slots);
            }
            stream_fence();
            assert_eq!(ran, joins_tiles());
            let mut want = std::vec![0x44u8; len];
            if ran {
                // Value `k` of row `c`, tile `t`: in group `c` of run `k / 8`.
                let value = |c: usize, t: usize, k: usize| {
                    let v = runs[(k / 8) * step + 64 * t + 4 * c + k % 8 / 2] >> (k % 2 * 4) & 0xf;
                    if signed && v >= 8 {
                        v | 0xf0
                    } else {
                        v
                    }
                };
                for c in 0..16 {
                    let start = at + c * pitch;
                    let end = start + 3 * 128;
                    let written = end - (got.as_ptr().addr() + end) % 64;
                    for (n, slot) in want[start..end].iter_mut().enumerate() {
                        let v = value(c, n / 128, n % 128);
                        if start + n < written {
                            *slot = v;
                        } else {
                            assert_eq!(carry[64 * c + n % 64], v, "carry of row {c}");
                        }
                    }
                }
            }
            assert_eq!(
                got, want,
                "rows at {at}, {pitch} apart, runs {step}, {signed}"
            );
        }
    }
}

/// Whole bands of groups against a plain loop: bytes in fours and 2-byte
/// elements in pairs, one to three tiles of one to three groups, groups
/// of one and two 64-byte steps, columns that cut a step anywhere or
/// leave whole steps to the fill, every start on 16 bytes within a line
/// (so stores on and off lines), rows ending at the slice's end (the
/// masked loads read nothing past it); nothing outside the groups may
/// change.
#[test]
fn group_bands_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T, fill: T) {
        let size = core::mem::size_of::<T>();
        let k = 4 / size;
        let step = 64 / size;
        let vbmi = joins_tiles();
        for (tiles, groups) in [(1, 1), (2, 3), (3, 2)] {
            for width in [step, 2 * step] {
                for columns in [0, 1, step - 1, step, step + 5, width] {
                    if columns > width {
                        continue;
                    }
                    for (i, at) in (0..64 / size).step_by(16 / size).enumerate() {
                        let pitch = width + 3;
                        // Groups `k * width` apart; tiles one more apart.
                        let (dg, dt) = (k * width, groups * k * width + 16 / size);
                        let (sg, st) = (k * pitch, width);
                        let rows = (tiles - 1) * st + (groups - 1) * sg + (k - 1) * pitch + columns;
                        let src: Vec<T> = (0..rows).map(make).collect();
                        let len = at + (tiles - 1) * dt + groups * dg + 64;
                        let mut got = std::vec![old; len + 64];
                        let base = to_line_in(&got, 0);
                        let to = base + at;
                        let band = GroupBand {
                            from: 0,
                            pitch,
                            to,
                            columns,
                            width,
                            tiles: (tiles, dt, st),
                            groups: (groups, dg, sg),
                            // Every way of asking ahead (hints only).
                            ahead: match i % 3 {
                                0 => Ahead::Rows(0),
                                1 => Ahead::Rows(sg),
                                _ => Ahead::Linear(2 * sg),
                            },
                        };
                        let ran = interleave_band(&mut got, &src, band, Some(fill));
                        stream_fence();
                        assert_eq!(ran, vbmi);
                        let mut want = std::vec![old; len + 64];
                        if ran {
                            for t in 0..tiles {
                                for g in 0..groups {
                                    for x in 0..width {
                                        for j in 0..k {
                                            let d = to + t * dt + g * dg + x * k + j;
                                            want[d] = if x < columns {
                                                src[t * st + g * sg + j * pitch + x]
                                            } else {
                                                fill
                                            };
                                        }
                                    }
                                }
                            }
                        }
                        assert_eq!(got, want, "{tiles}x{groups} {columns} of {width} at {at}");
                    }
                }
            }
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee, 0x5a);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0, 0x7fc1);
}

/// Bands of groups [`interleave_band`] cannot write refused, nothing
/// written: a start off 16 bytes, a width of no whole 64 bytes or under
/// the columns, a last row past the source, a last group past the
/// destination, columns short of the width without a fill.
#[test]
fn group_bands_refuse_what_they_cannot_write() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T, fill: T) {
        let size = core::mem::size_of::<T>();
        let step = 64 / size;
        let src: Vec<T> = (0..8 * step).map(make).collect();
        let band = GroupBand {
            from: 0,
            pitch: step,
            to: 0,
            columns: step,
            width: step,
            tiles: (1, 0, 0),
            groups: (1, 0, 0),
            ahead: Ahead::Rows(0),
        };
        let mut got = std::vec![old; 16 * step];
        let base = to_line_in(&got, 0);
        for bad in [
            GroupBand {
                to: base + 1,
                ..band
            },
            GroupBand {
                width: step + 1,
                columns: 1,
                to: base,
                ..band
            },
            GroupBand {
                columns: step + 1,
                to: base,
                ..band
            },
            GroupBand {
                from: 7 * step,
                to: base,
                ..band
            },
            GroupBand {
                to: base,
                tiles: (2, 16 * step, 0),
                ..band
            },
        ] {
            assert!(!interleave_band(&mut got, &src, bad, Some(fill)));
            assert!(got.iter().all(|&x| x == old));
        }
        // Widths and steps past `usize`.
        for bad in [
            GroupBand {
                width: usize::MAX,
                columns: usize::MAX,
                to: base,
                ..band
            },
            GroupBand {
                to: base,
                tiles: (1, usize::MAX, usize::MAX),
                groups: (2, usize::MAX, 1),
                ..band
            },
        ] {
            assert!(!interleave_band(&mut got, &src, bad, Some(fill)));
        }
        // Columns short of the width with no fill for the rest.
        let short = GroupBand {
            columns: 1,
            to: base,
            ..band
        };
        assert!(!interleave_band(&mut got, &src, short, None));
        assert!(got.iter().all(|&x| x == old));
    }
    check(|i| (i * 7 + 3) as u8, 0xee, 0x5a);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0, 0x7fc1);
}

/// Whole bands of groups unpacked into joined rows against a plain loop:
/// bytes in fours and 2-byte elements in pairs, and rows as they lie
/// (groups of one row) of 1, 4 and 16-byte elements, one to five tiles of
/// one to eight groups (up to 32 rows; the tiles after the first in one
/// kernel call up to 8 rows), tiles of one to three 64-byte steps a row, rows starting at every place in their lines (odd
/// pitches, every first offset), the source's groups apart; nothing
/// outside the rows' runs may change.
#[test]
fn group_rows_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T, grouped: bool) {
        let size = core::mem::size_of::<T>();
        let k = if grouped { 4 / size } else { 1 };
        let step = 64 / size;
        let vbmi = joins_tiles();
        for (tiles, groups) in [(1, 1), (2, 3), (3, 2), (1, 8), (5, 1), (4, 4), (3, 8)] {
            for columns in [step, 2 * step, 3 * step] {
                for (extra, at) in [(0, 0), (1, 1), (3, 7), (19, 13), (step, 5)] {
                    let run = tiles * columns;
                    let pitch = run + extra;
                    let rows = groups * k;
                    // Groups a little apart in the source, tiles too.
                    let sg = k * columns + 3;
                    let st = groups * sg + 5;
                    let src: Vec<T> = (0..tiles * st).map(make).collect();
                    let len = at + rows * pitch + 64;
                    let mut got = std::vec![old; len];
                    let band = GroupRows {
                        grouped,
                        from: 2,
                        to: at,
                        pitch,
                        columns,
                        tiles: (tiles, st),
                        groups: (groups, sg),
                    };
                    let ran = deinterleave_band(&mut got, &src, band);
                    stream_fence();
                    assert_eq!(ran, vbmi);
                    let mut want = std::vec![old; len];
                    if ran {
                        for t in 0..tiles {
                            for g in 0..groups {
                                for x in 0..columns {
                                    for j in 0..k {
                                        let d = at + (g * k + j) * pitch + t * columns + x;
                                        want[d] = src[2 + t * st + g * sg + x * k + j];
                                    }
                                }
                            }
                        }
                    }
                    assert_eq!(
                        got, want,
                        "{tiles}x{groups} of {columns}, pitch {pitch} at {at}"
                    );
                }
            }
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee, true);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0, true);
    check(|i| (i * 7 + 3) as u8, 0xee, false);
    check(|i| (i as u32).wrapping_mul(0x9e37_79b9) | 1, 0, false);
    check(|i| [i as u64, !(i as u64)], [0; 2], false);
}

/// Bands [`deinterleave_band`] cannot write refused, nothing written:
/// rows that overlap, more than 32 rows, a tile of no whole 64 bytes a
/// row, a row past the destination, widths and steps past `usize`, and
/// groups of 4-byte elements (no kernel; nor a run of them through
/// [`deinterleave_run`]).
#[test]
fn group_rows_refuse_what_they_cannot_write() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T, grouped: bool) {
        let size = core::mem::size_of::<T>();
        let k = if grouped { 4 / size } else { 1 };
        let step = 64 / size;
        let src: Vec<T> = (0..64 * step).map(make).collect();
        let band = GroupRows {
            grouped,
            from: 0,
            to: 0,
            pitch: step,
            columns: step,
            tiles: (1, 0),
            groups: (1, 0),
        };
        let mut got = std::vec![old; 64 * step];
        for bad in [
            GroupRows {
                pitch: step - 1,
                groups: (2, k * step),
                ..band
            },
            GroupRows {
                groups: (33, k * step),
                ..band
            },
            GroupRows {
                columns: step + 1,
                pitch: step + 1,
                ..band
            },
            GroupRows {
                to: 63 * step + 1,
                ..band
            },
            GroupRows {
                columns: usize::MAX / 2 + 1,
                pitch: usize::MAX,
                ..band
            },
            GroupRows {
                tiles: (2, usize::MAX),
                ..band
            },
        ] {
            assert!(!deinterleave_band(&mut got, &src, bad));
            assert!(got.iter().all(|&x| x == old));
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee, true);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0, true);
    check(|i| (i as u32).wrapping_mul(0x9e37_79b9) | 1, 0, false);
    // Groups of 4-byte elements have no kernel.
    let mut got = std::vec![0u32; 256];
    let band = GroupRows {
        grouped: true,
        from: 0,
        to: 0,
        pitch: 16,
        columns: 16,
        tiles: (1, 0),
        groups: (1, 0),
    };
    assert!(!deinterleave_band(&mut got, &[1u32; 256], band));
    let run = GroupRows {
        groups: (4, 16),
        ..band
    };
    assert!(!deinterleave_run(&mut got, &[1u32; 256], run));
    assert!(got.iter().all(|&x| x == 0));
}

/// Runs of groups through [`deinterleave_run`] against the plain loop:
/// every row length it takes and one it refuses, groups packed and a
/// little apart in the source, a run starting at every byte offset of a
/// line; nothing outside the run may change.
#[test]
fn group_runs_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let k = 4 / size;
        let step = 64 / size;
        let vbmi = joins_tiles();
        for columns in [step, 2 * step, 3 * step, 4 * step] {
            // Every piece of a group in a register: 8 at most.
            let takes = matches!((k, columns / step), (4, 1 | 2) | (2, 1 | 2 | 4));
            for groups in [1, 2, 3, 7] {
                for apart in [0, 5] {
                    for at in [0, 1, 8, 31, step - 1] {
                        let group = k * columns;
                        let sg = group + apart;
                        let src: Vec<T> = (0..groups * sg + 3).map(make).collect();
                        let len = at + groups * group + 2 * step;
                        let mut got = std::vec![old; len];
                        let band = GroupRows {
                            grouped: true,
                            from: 3,
                            to: at,
                            pitch: columns,
                            columns,
                            tiles: (1, 0),
                            groups: (groups, sg),
                        };
                        let ran = deinterleave_run(&mut got, &src, band);
                        stream_fence();
                        assert_eq!(ran, vbmi && takes && groups >= 2, "{groups} of {columns}");
                        let mut want = std::vec![old; len];
                        if ran {
                            for g in 0..groups {
                                for j in 0..k {
                                    for x in 0..columns {
                                        let d = at + (g * k + j) * columns + x;
                                        want[d] = src[3 + g * sg + x * k + j];
                                    }
                                }
                            }
                        }
                        assert_eq!(got, want, "{groups} of {columns} at {at}, {apart} apart");
                    }
                }
            }
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
}

/// Runs [`deinterleave_run`] cannot write refused, nothing written: rows
/// apart (a pitch past the row), more than one tile, no groups, a run
/// past the destination, a group past the source, counts past `usize`
/// (groups of 4-byte elements, which have no kernel, with the bands').
#[test]
fn group_runs_refuse_what_they_cannot_write() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let step = 64 / size;
        let group = 4 / size * step;
        let src: Vec<T> = (0..8 * group).map(make).collect();
        let run = GroupRows {
            grouped: true,
            from: 0,
            to: 0,
            pitch: step,
            columns: step,
            tiles: (1, 0),
            groups: (8, group),
        };
        let mut got = std::vec![old; 8 * group];
        for bad in [
            GroupRows {
                pitch: step + 1,
                ..run
            },
            GroupRows {
                tiles: (2, 8 * group),
                ..run
            },
            GroupRows {
                groups: (0, group),
                ..run
            },
            GroupRows { to: 1, ..run },
            GroupRows { from: 1, ..run },
            GroupRows {
                groups: (usize::MAX, group),
                ..run
            },
            GroupRows {
                groups: (2, usize::MAX),
                ..run
            },
            GroupRows {
                grouped: false,
                ..run
            },
        ] {
            assert!(!deinterleave_run(&mut got, &src, bad), "{bad:?}");
            assert!(got.iter().all(|&x| x == old));
        }
        if joins_tiles() {
            assert!(deinterleave_run(&mut got, &src, run));
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
}

/// Rows of tiles through [`rows_in_order`] against the plain loop: pieces
/// shorter and longer than a line, whole or not, a ragged last piece or
/// none, rows starting at every place in their lines, one row or several;
/// nothing outside the rows may change.
#[test]
fn rows_in_order_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let line = 64 / size;
        #[cfg(target_arch = "x86_64")]
        let ran_expected = x86_64::Avx512BwBmi2::detect().is_some();
        #[cfg(not(target_arch = "x86_64"))]
        let ran_expected = false;
        for columns in [1, 3, line - 1, line, line + 1, 2 * line, 5 * line + 3] {
            for tiles in [0, 1, 2, 5] {
                for last in [0, 1, columns / 2, columns - 1] {
                    if tiles == 0 && last == 0 {
                        continue;
                    }
                    for rows in [1, 2, 7] {
                        for at in [0, 1, line / 2, line - 1] {
                            let ts = rows * columns + 3;
                            let rs = columns;
                            let src: Vec<T> = (0..2 + (tiles + 1) * ts).map(make).collect();
                            let width = tiles * columns + last;
                            let len = at + rows * width + line + 5;
                            let mut got = std::vec![old; len];
                            // The rows in two calls, the later rows first:
                            // the line they share written by each.
                            let half = rows / 2;
                            let part = |r0: usize, r1: usize| TileRows {
                                from: 2 + r0 * rs,
                                to: at + r0 * width,
                                rows: (r1 - r0, rs),
                                tiles: (tiles, ts),
                                columns,
                                last,
                            };
                            let ran = rows_in_order(&mut got, &src, part(half, rows))
                                & (half == 0 || rows_in_order(&mut got, &src, part(0, half)));
                            stream_fence();
                            assert_eq!(ran, ran_expected);
                            let mut want = std::vec![old; len];
                            if ran {
                                for i in 0..rows {
                                    for x in 0..width {
                                        let (t, c) = (x / columns, x % columns);
                                        want[at + i * width + x] = src[2 + i * rs + t * ts + c];
                                    }
                                }
                            }
                            assert_eq!(
                                got, want,
                                "{rows} rows of {tiles}x{columns} + {last} at {at}"
                            );
                        }
                    }
                }
            }
        }
    }
    check(|i| (i * 7 + 3) as u8, 0xee);
    check(|i| (i as u16).wrapping_mul(0x9e37) | 0x8001, 0);
    check(|i| (i as u32).wrapping_mul(0x9e37_79b9) | 1, 0);
    check(|i| [i as u64, !(i as u64)], [0; 2]);
}

/// Rows [`rows_in_order`] cannot write refused, nothing written: no
/// rows, a row past the destination, a piece past the source, counts
/// and strides past `usize`.
#[test]
fn rows_in_order_refuse_what_they_cannot_write() {
    let src: Vec<u32> = (0..1024).collect();
    let band = TileRows {
        from: 0,
        to: 0,
        rows: (4, 128),
        tiles: (1, 512),
        columns: 128,
        last: 100,
    };
    let mut got = std::vec![7u32; 4 * 228];
    for bad in [
        TileRows {
            rows: (0, 128),
            ..band
        },
        TileRows { to: 1, ..band },
        TileRows {
            tiles: (1, 1024),
            ..band
        },
        TileRows {
            rows: (4, usize::MAX),
            ..band
        },
        TileRows {
            tiles: (usize::MAX, 1),
            ..band
        },
        TileRows {
            last: usize::MAX,
            ..band
        },
    ] {
        assert!(!rows_in_order(&mut got, &src, bad), "{bad:?}");
        assert!(got.iter().all(|&x| x == 7));
    }
}

/// Runs of `s4` groups through [`unpack_nibble_run`] against the plain
/// loop, signed and not, starting at every byte offset of a line; fewer
/// than two groups or a group outside a slice refused, nothing written;
/// nothing outside the run may change.
#[test]
fn nibble_runs_match_a_plain_loop() {
    let vbmi = joins_tiles();
    for groups in [0, 1, 2, 3, 5] {
        for at in [0, 1, 16, 33, 63] {
            for signed in [false, true] {
                let input: Vec<u8> = (0..3 + 512 * groups)
                    .map(|i| (i as u8).wrapping_mul(37) ^ 0x5a)
                    .collect();
                let len = at + 1024 * groups + 70;
                let mut got = std::vec![0xeeu8; len];
                let ran = unpack_nibble_run(&mut got, at, &input, 3, groups, signed);
                stream_fence();
                assert_eq!(ran, vbmi && groups >= 2, "{groups} groups");
                let mut want = std::vec![0xeeu8; len];
                if ran {
                    for g in 0..groups {
                        for r in 0..8 {
                            for x in 0..128 {
                                let byte = input[3 + 512 * g + 4 * x + r / 2];
                                let v = (byte >> (4 * (r % 2))) & 15;
                                let v = if signed && v >= 8 { v | 0xf0 } else { v };
                                want[at + 1024 * g + 128 * r + x] = v;
                            }
                        }
                    }
                }
                assert_eq!(got, want, "{groups} groups at {at}, signed {signed}");
            }
        }
    }
    let input = [0u8; 1024];
    let mut got = [0u8; 2048];
    assert!(!unpack_nibble_run(&mut got, 1, &input, 0, 2, false));
    assert!(!unpack_nibble_run(&mut got, 0, &input, 1, 2, false));
    assert!(!unpack_nibble_run(
        &mut got,
        0,
        &input,
        0,
        usize::MAX,
        false
    ));
    assert!(got.iter().all(|&x| x == 0));
}

/// The value check against a plain loop: every length up to a few
/// vectors and the block sizes around, from every few places in a
/// vector's bytes, one byte outside at each place (first, inside, last)
/// and none, and one just past the end; the ranges of `s4`, `u4`, `s2`,
/// `u2` and `pred`.
#[test]
fn value_check_matches_a_plain_loop() {
    for (bias, limit) in [(8u8, 16u8), (0, 16), (2, 4), (0, 4), (0, 2)] {
        // Every byte held.
        let held: Vec<u8> = (0..4200u32)
            .map(|i| ((i * 37 % 251) as u8 % limit).wrapping_sub(bias))
            .collect();
        for len in (0..=200).chain([4095, 4096, 4097]) {
            for start in [0, 1, 7, 31] {
                let block = &held[start..start + len];
                assert!(!any_outside(block, bias, limit), "{len} at {start}");
                for at in [0, len / 2, len.saturating_sub(1)] {
                    if at >= len {
                        continue;
                    }
                    let mut bad = held.clone();
                    bad[start + at] = limit.wrapping_sub(bias);
                    let block = &bad[start..start + len];
                    assert!(any_outside(block, bias, limit), "{len} at {start}, {at}");
                    assert!(greatest(block, bias) >= limit, "{len} at {start}, {at}");
                }
                // A byte outside just past the end is not read.
                let mut past = held.clone();
                past[start + len] = limit.wrapping_sub(bias);
                let block = &past[start..start + len];
                assert!(!any_outside(block, bias, limit), "{len} at {start}");
            }
        }
    }
}
