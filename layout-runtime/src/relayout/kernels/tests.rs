extern crate std;

use super::arch::tests::{byte, half, word};
use super::*;
use crate::relayout::gather::Gather;
use crate::relayout::walk::Visitor;

std::thread_local! {
    /// Bands of tiles [`stream_lines`] and [`stream_padded_rows`] ran in
    /// one call on this thread.
    pub(super) static BANDS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Groups of a row's last lines [`stream_padded_rows`] ran in one
    /// call on this thread.
    pub(super) static GROUPS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Columns of groups of rows that make no quarters
    /// [`TileGrid::down_columns`] ran in one call on this thread.
    pub(super) static COLUMNS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Bands [`TileGrid::copied_bands`] ran from a copy on this thread.
    pub(super) static STAGED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Lines [`stream_group_tiles`] streamed on this thread.
    pub(super) static JOINED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Bands [`stream_group_run`] streamed as one run on this thread.
    pub(super) static RUNS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Tile rows [`group_rows_in_order`] wrote, and tile rows held back
    /// for it that went another way, on this thread.
    pub(crate) static IN_ORDER: core::cell::Cell<(usize, usize)> = const { core::cell::Cell::new((0, 0)) };
    /// Whether [`group_rows_in_order`] refuses every tile row on this
    /// thread (as if the source did not hold it).
    pub(crate) static REFUSE_IN_ORDER: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// Tiles of lines shared by two tiles of a band that [`joined_edges`]
    /// wrote whole on this thread.
    pub(super) static BLENDED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// Calls of [`joined_edges`] to refuse the lines shared with the
    /// previous tile, a bit a call, lowest first (as if the kernel did
    /// not run there).
    pub(super) static REFUSED: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// Every orientation of both sides, dense and padded, against a plain
/// double loop, for elements of 4, 2 and 1 bytes (each size has its own
/// kernels); slots outside the block must keep their old value.
#[test]
fn blocks_match_a_plain_loop() {
    for na in 1..=19 {
        for nb in 1..=19 {
            for pad_d in [0, 3] {
                for pad_s in [0, 5] {
                    // (row-major, column-major) placement of each side.
                    for (da, db) in [(nb + pad_d, 1), (1, na + pad_d)] {
                        for (sa, sb) in [(nb + pad_s, 1), (1, na + pad_s)] {
                            let b = Block {
                                na,
                                nb,
                                da,
                                db,
                                sa,
                                sb,
                            };
                            check(b, u32::MAX, word);
                            check(b, 0xeeee, half);
                            check(b, 0xee, byte);
                        }
                    }
                }
            }
        }
    }
}

/// Bands of 1-5 tiles of 1-4 groups of `(2,1)`- and `(4,1)`-style
/// rows into row-major rows, the tiles side by side (a tile row) or one
/// under the other (a rank-1 array's tiles, one run of the destination
/// where rows are back to back), columns around the kernels' 16 (so that
/// some go to `copy_block`), rows apart or back to back, odd offsets,
/// with and without a stage, against a plain loop; sizes the kernels do
/// not take go through `copy_block` alone. Slots outside the band keep
/// their old value.
#[test]
fn group_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(k: usize, value: impl Fn(usize) -> T, old: T) {
        let (joined, runs) = (JOINED.get(), RUNS.get());
        for cols in [1, 15, 16, 17, 33, 64, 96, 128, 160, 192, 256] {
            for (tiles, groups) in [(1, 1), (1, 2), (2, 2), (3, 1), (3, 2), (5, 4)] {
                // Destinations at every 16 bytes of a line, and off them.
                let places = [(0, 0, 0, 0), (3, 2, 1, 5), (0, 0, 7, 0), (1, 3, 24, 2)];
                let lined = [(0, 0, 8, 0), (0, 0, 16, 0), (0, 2, 32, 1), (0, 0, 48, 0)];
                for stacked in [false, true] {
                    for (pad, gap, d, s) in places.into_iter().chain(lined) {
                        let wide = if stacked { cols } else { tiles * cols };
                        let pitch = wide + pad;
                        let tile = groups * k * cols + gap;
                        // Where tile `x`'s first row starts in the destination.
                        let across = if stacked { groups * k * pitch } else { cols };
                        let axes = [
                            Axis {
                                count: tiles,
                                walk: tile,
                                other: across,
                            },
                            Axis {
                                count: groups,
                                walk: k * cols,
                                other: k * pitch,
                            },
                            Axis {
                                count: cols,
                                walk: k,
                                other: 1,
                            },
                            Axis {
                                count: k,
                                walk: 1,
                                other: pitch,
                            },
                        ];
                        let src: std::vec::Vec<T> = (0..s + tiles * tile).map(&value).collect();
                        let mut want = std::vec![old; d + tiles * across + groups * k * pitch + 2];
                        for x in 0..tiles {
                            for g in 0..groups {
                                for i in 0..cols {
                                    for j in 0..k {
                                        want[d + x * across + (g * k + j) * pitch + i] =
                                            src[s + x * tile + g * k * cols + i * k + j];
                                    }
                                }
                            }
                        }
                        // No stage (plain stores), one too small to join
                        // rows, and the 8 KiB of a relayout's.
                        for stage in [0, 600, 8192 / core::mem::size_of::<T>()] {
                            // `got` starts a line, as `places` assume,
                            // wherever the allocator puts the buffer.
                            let mut buf = std::vec![old; want.len() + 64];
                            let lead =
                                buf.as_ptr().addr().next_multiple_of(64) - buf.as_ptr().addr();
                            let got = &mut buf[lead / core::mem::size_of::<T>()..][..want.len()];
                            let mut stage = std::vec![old; stage];
                            group_tiles(got, d, &src, s, axes, &mut stage, &mut Asked::default());
                            assert_eq!(
                                got,
                                want,
                                "{k} rows, {cols} columns, {tiles} x {groups}, stacked {stacked}, pad {pad}, d {d}, stage {}",
                                stage.len()
                            );
                        }
                    }
                }
            }
        }
        // Rows of whole lines joined wherever the kernels are, and runs
        // streamed whatever the element.
        if arch::group_kernel::<T>(k) {
            assert!(JOINED.get() - joined > 40, "{}", JOINED.get() - joined);
        }
        assert!(RUNS.get() - runs > 40, "{}", RUNS.get() - runs);
    }
    check(4, |i| (i * 7 + 3) as u8, 0xee);
    check(2, |i| (i as u16).wrapping_mul(40503) | 0x8000, 0xeeee);
    check(2, |i| i as u32 | 1 << 31, u32::MAX);
    check(4, |i| (i % 251) as u16, 0xeeee);
}

/// The streaming path against the plain one, for every orientation,
/// row lengths around a cache line, odd offsets and small stages (so
/// that rows go through the stage a few at a time).
/// The spans asked for ahead of bands of tiles: tile after tile they run
/// on; a ragged tile's gap between two bands is asked for with the next
/// tile; a jump further on, or back, starts afresh.
#[test]
fn asked_spans_fill_the_gaps_between_bands() {
    let mut asked = Asked::default();
    // The first span, then the next tile's.
    assert_eq!(asked.span(6144, 6656), 6144..6656);
    assert_eq!(asked.span(6656, 7168), 6656..7168);
    // A tile skipped (the ragged tile after a band): asked with the next.
    assert_eq!(asked.span(7680, 8192), 7168..8192);
    // Two tiles skipped: too far, the span alone.
    assert_eq!(asked.span(9216, 9728), 9216..9728);
    // Back, past the span's own length: the span alone.
    assert_eq!(asked.span(100, 612), 100..612);
    // Overlapping the last span: only what it had not asked for.
    assert_eq!(asked.span(356, 868), 612..868);
}

#[test]
fn streamed_blocks_match_plain_ones() {
    for (na, nb) in [
        (1, 16),
        (3, 17),
        (8, 128),
        (17, 5),
        (33, 40),
        (2, 300),
        (128, 8),
    ] {
        for pad in [0, 3] {
            for (da, db) in [(nb + pad, 1), (1, na + pad)] {
                for (sa, sb) in [(nb + pad, 1), (1, na + pad), (2 * nb + 1, 2)] {
                    let b = Block {
                        na,
                        nb,
                        da,
                        db,
                        sa,
                        sb,
                    };
                    for stage_len in [0, 16, 100, 1000, 4096] {
                        let (d, s) = (5, 3);
                        let src_len = s + (na - 1) * sa + (nb - 1) * sb + 1;
                        let dst_len = d + (na - 1) * da + (nb - 1) * db + 1 + 2;
                        let src: std::vec::Vec<u32> = (0..src_len as u32).collect();
                        let mut want = std::vec![7u32; dst_len];
                        copy_block(&mut want, d, &src, s, b);
                        let mut got = std::vec![7u32; dst_len];
                        let mut stage = std::vec![0u32; stage_len];
                        stream_block(&mut got, d, &src, s, b, 1, &mut stage, stage_len % 2 == 0);
                        arch::stream_fence();
                        assert_eq!(got, want, "{b:?}, stage {stage_len}");
                    }
                }
            }
        }
    }
}

/// Units of 2, 3, 4 and 8 elements (each length the copies know, and one
/// they do not), in every orientation, against element loops.
#[test]
fn unit_blocks_match_a_plain_loop() {
    for c in [2, 3, 4, 8] {
        for (na, nb) in [(1, 1), (4, 4), (5, 9), (8, 64), (13, 3)] {
            for (da, db) in [(nb * c + 2, c), (nb * c, c), (c, na * c + 6)] {
                for (sa, sb) in [(nb * c + 4, c), (c, na * c), (c * (nb + 1), 3 * c)] {
                    let b = Block {
                        na,
                        nb,
                        da,
                        db,
                        sa,
                        sb,
                    };
                    let (d, s) = (3, 5);
                    let src_len = s + (na - 1) * sa + (nb - 1) * sb + c + 1;
                    let dst_len = d + (na - 1) * da + (nb - 1) * db + c + 2;
                    let src: std::vec::Vec<u16> = (0..src_len as u16).collect();
                    let mut want = std::vec![u16::MAX; dst_len];
                    for i in 0..na {
                        for j in 0..nb {
                            for k in 0..c {
                                want[d + i * da + j * db + k] = src[s + i * sa + j * sb + k];
                            }
                        }
                    }
                    let mut got = std::vec![u16::MAX; dst_len];
                    copy_units(&mut got, d, &src, s, b, c);
                    assert_eq!(got, want, "{b:?} of {c}");
                    for stage_len in [8, 64, 1000] {
                        let mut got = std::vec![u16::MAX; dst_len];
                        let mut stage = std::vec![0u16; stage_len];
                        stream_block(&mut got, d, &src, s, b, c, &mut stage, stage_len > 60);
                        arch::stream_fence();
                        assert_eq!(got, want, "{b:?} of {c}, streamed, stage {stage_len}");
                    }
                }
            }
        }
    }
}

/// The row offsets [`stream_lines`] carries from tile to tile are the
/// ones it would divide for: groups shorter than, equal to, dividing,
/// and longer than 16 rows, outer strides below and above a group's
/// span, any start.
#[test]
fn carried_row_offsets_match_divided_ones() {
    for na in [1, 2, 3, 5, 8, 12, 16, 17, 40, 131] {
        for (outer, step) in [(na * 7, 7), (na * 7 + 33, 7), (3, 129), (1, 1)] {
            let rows = Rows16::new(na, outer, step);
            for start in [0, 1, 11, na, 3 * na + 5] {
                let mut at = rows.at(start);
                for band in 0..40 {
                    let i = start + 16 * band;
                    let want: [usize; 16] =
                        core::array::from_fn(|c| (i + c) / na * outer + (i + c) % na * step);
                    assert_eq!(
                        at.off, want,
                        "{na} {outer} {step} from {start}, band {band}"
                    );
                    // The same starts as quarters, where they are.
                    let runs = rows.runs(&at, 1000);
                    assert_eq!(runs.each(), want.map(|o| o.wrapping_add(1000)));
                    let within = (0..4).all(|q| (i + 4 * q) % na + 4 <= na);
                    assert_eq!(matches!(runs, Runs::Quarters(_)), within);
                    rows.advance(&mut at);
                }
            }
        }
    }
}

/// Whether the line tiles run here, asserting that they do wherever
/// `std` (apart from the detection the kernels use) sees AVX2, so that
/// the tests below run the kernel of this CPU.
fn line_tiles_here() -> bool {
    #[cfg(target_arch = "x86_64")]
    assert_eq!(arch::line_tiles(), std::is_x86_feature_detected!("avx2"));
    arch::line_tiles()
}

/// Line tiles of 3-D and 2-D transposes, both sides as rows, against a
/// plain loop: sizes around the 16-unit grid, odd offsets (so every
/// place in a line), group sizes that split tiles, 4-byte elements and
/// pairs of 2-byte ones; nothing outside the block may change.
#[test]
fn line_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        let mut tiled = [0; 2];
        let (bands, staged, columns) = (BANDS.get(), STAGED.get(), COLUMNS.get());
        for (count, na, nb) in [
            (1, 40, 130),
            (1, 131, 128),
            (37, 8, 128),
            (5, 12, 300),
            (300, 1, 144),
            // Bands of 32 tiles and more, run in one call: rows one
            // group, groups of 8, 16 and 4 rows, and groups of 5 (whose
            // tiles' rows are not in quarters), down the block; rows
            // one group, groups of 8 and 16, along it.
            (1, 600, 48),
            (80, 8, 32),
            (40, 16, 48),
            (160, 4, 32),
            (120, 5, 48),
            // Pairs of rows (`T(2,128)` tiles) and single rows apart,
            // their runs no quarters, a column of tiles at a time.
            (200, 2, 48),
            (70, 2, 131),
            (40, 1, 40),
            (1, 40, 600),
            (5, 8, 530),
            (3, 16, 530),
            // Short bands along rows close enough to be copied a band
            // at a time (one group, and groups of 16), and rows too
            // far apart for the stage.
            (1, 64, 64),
            (4, 16, 64),
            (2, 40, 96),
            (3, 32, 80),
            (1, 48, 272),
            // Copied eight bands at a time from the wide buffer, the last
            // group short: rows close together, and rows a page apart on
            // the other side (the tiles go across the bands).
            (1, 200, 64),
            (1, 1100, 64),
        ] {
            for (d, s) in [(0, 0), (3 * w, 5 * w), (1, 2)] {
                for rows_dst in [true, false] {
                    // Pitches of whole lines (16 units) plus `extra`.
                    for extra in [0, 1] {
                        let ni: usize = count * na;
                        let col = (ni.div_ceil(16) * 16 + 16 + extra) * w;
                        // Rows on the destination; the other way, the
                        // same block with the sides exchanged.
                        let row = (nb + extra) * w;
                        let b = Block {
                            na,
                            nb,
                            da: row,
                            db: w,
                            sa: w,
                            sb: col,
                        };
                        let (outer_d, outer_s) = (na * row + 16 * w, na * w);
                        let (b, (od, os)) = if rows_dst {
                            (b, (outer_d, outer_s))
                        } else {
                            (b.swapped_sides(), (outer_s, outer_d))
                        };
                        let o = Outer {
                            count,
                            d: od,
                            s: os,
                        };
                        let (src, want) = strided_copy((o, b, w), (d, s), make, old);
                        let dst_len = want.len();
                        // No stage, and the 8 KiB of a relayout's
                        // (short bands along close rows from copies).
                        for stage in [0, 8192 / core::mem::size_of::<T>()] {
                            let mut got = std::vec![old; dst_len];
                            let mut stage = std::vec![old; stage];
                            let done = stream_lines(
                                &mut got,
                                d,
                                &src,
                                s,
                                o,
                                b,
                                w,
                                &mut stage,
                                &mut Neighbours::default(),
                            );
                            arch::stream_fence();
                            if done {
                                tiled[usize::from(rows_dst)] += 1;
                                assert_eq!(
                                    got,
                                    want,
                                    "{o:?} {b:?} at {d}/{s}, stage {}",
                                    stage.len()
                                );
                            } else {
                                assert!(got.iter().all(|&x| x == old));
                            }
                        }
                    }
                }
            }
        }
        if line_tiles_here() {
            assert!(tiled.iter().all(|&n| n > 5), "{tiled:?}");
            assert!(BANDS.get() - bands > 10, "{}", BANDS.get() - bands);
            assert!(STAGED.get() - staged > 5, "{}", STAGED.get() - staged);
            assert!(COLUMNS.get() - columns > 5, "{}", COLUMNS.get() - columns);
        }
    }
    check(word, 0);
    check(half, 0);
}

/// Transposed packs of tiles side by side (a walk's band of tile
/// columns, as [`Gather::block4`] gets them) into storage that starts 16
/// or 48 bytes into a line, or on one, against a plain loop. Each tile's
/// call writes whole the lines its groups share with the tile before
/// ([`Neighbours`]); where a call does not (refused here, as if its
/// kernel had not run), the tile before is written again. Groups of 1 to
/// 16 rows, rows past the last whole tile of 16, rows of 64 and 128
/// units; 4-byte elements, pairs and quads of narrower ones. The tile
/// after each band's last (where a ragged tile would go) keeps its old
/// values.
#[test]
fn band_tiles_share_their_edge_lines() {
    // The axes' names of the walk (`Gather::block4`).
    #[allow(clippy::many_single_char_names)]
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let w = 4 / size;
        let redone = || crate::relayout::gather::tests::REDONE.get();
        let (blended, redone_before) = (BLENDED.get(), redone());
        for (na, groups, bands, nb) in [
            (2, 41, 4, 128),
            (1, 70, 3, 128),
            (4, 21, 5, 64),
            (8, 9, 2, 128),
            (16, 5, 3, 64),
        ] {
            // Each source row holds every unit of the tiles' rows, and a
            // few more.
            let sb = (groups * na + 7) * w;
            let tile = na * nb * w;
            let a = Axis {
                count: na,
                walk: nb * w,
                other: w,
            };
            let b = Axis {
                count: nb,
                walk: w,
                other: sb,
            };
            let o = Axis {
                count: groups,
                walk: (bands + 1) * tile,
                other: na * w,
            };
            let band = Axis {
                count: bands,
                walk: tile,
                other: nb * sb,
            };
            let src: std::vec::Vec<T> = (0..bands * nb * sb).map(make).collect();
            for lead in [16, 48, 0] {
                // The second and fourth calls refuse.
                for refused in [0, 0b1010] {
                    let mut got = std::vec![old; groups * o.walk + 64 / size];
                    // The first element `lead` bytes into its line.
                    let d = (lead + 64 - got.as_ptr().addr() % 64) % 64 / size;
                    let mut want = got.clone();
                    for (x, g, r, j) in (0..bands).flat_map(|x| {
                        (0..groups).flat_map(move |g| {
                            (0..na).flat_map(move |r| (0..nb).map(move |j| (x, g, r, j)))
                        })
                    }) {
                        let to = d + x * band.walk + g * o.walk + r * a.walk + j * b.walk;
                        let from = x * band.other + g * o.other + r * a.other + j * b.other;
                        want[to..][..w].copy_from_slice(&src[from..][..w]);
                    }
                    REFUSED.set(refused);
                    arch::with_stage(old, |stage| {
                        let mut v = Gather {
                            dst: &mut got,
                            base: 0,
                            src: &src,
                            padding: None,
                            stage,
                            unit: w,
                            end: 0,
                        };
                        v.block4(d, 0, band, o, a, b);
                    });
                    REFUSED.set(0);
                    arch::stream_fence();
                    let at = std::format!("{na}x{nb}, {groups} groups, {bands} tiles, {lead} in");
                    assert_eq!(got, want, "{at}, refused {refused:#b}");
                }
            }
        }
        if line_tiles_here() {
            assert!(BLENDED.get() - blended > 50, "{}", BLENDED.get() - blended);
            assert!(redone() - redone_before > 5, "{}", redone() - redone_before);
        }
    }
    check(word, 0);
    check(half, 0);
    check(byte, 0);
}

/// A source for the 3-D copy `o` x `b` of `w`-element units from `s` to
/// `d`, each element `make` of its place, and the destination it should
/// leave, `old` outside the copy; both a few elements longer than the
/// copy reaches, to catch writes past it.
// The names of `Block`, `Outer` and `stream_lines`.
#[allow(clippy::many_single_char_names)]
fn strided_copy<T: Copy>(
    (o, b, w): (Outer, Block, usize),
    (d, s): (usize, usize),
    make: fn(usize) -> T,
    old: T,
) -> (std::vec::Vec<T>, std::vec::Vec<T>) {
    let last = |at: usize, x: usize, a: usize, bb: usize| {
        at + (o.count - 1) * x + (b.na - 1) * a + (b.nb - 1) * bb + w
    };
    let src: std::vec::Vec<T> = (0..last(s, o.s, b.sa, b.sb) + 7).map(make).collect();
    let mut want = std::vec![old; last(d, o.d, b.da, b.db) + 9];
    for x in 0..o.count {
        for i in 0..b.na {
            for j in 0..b.nb {
                for k in 0..w {
                    want[d + x * o.d + i * b.da + j * b.db + k] =
                        src[s + x * o.s + i * b.sa + j * b.sb + k];
                }
            }
        }
    }
    (src, want)
}

/// Joined line tiles against a plain loop, each way there is (the one
/// this machine takes, runs carried in registers, runs through a
/// buffer): destination runs in every place in their lines (pitches of
/// whole lines plus 1, 3 or 9 units, odd offsets), groups that split
/// tiles, more runs than one buffer or one carry holds, sizes off the
/// 16-unit grid; 4-byte elements, pairs and quads of narrower ones.
/// Nothing outside the block may change.
#[test]
fn joined_tiles_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        let mut joined = 0;
        for (count, na, nb) in [
            (1, 64, 16),
            (1, 100, 37),
            (9, 8, 128),
            (40, 2, 130),
            (13, 5, 48),
            (1, 70, 300),
            (2, 40, 600),
        ] {
            for (d, s) in [(0, 0), (3 * w, 5 * w), (1, 2)] {
                for extra in [1, 3, 9] {
                    let ni: usize = count * na;
                    // Destination runs along `x` and `i`, source rows along `j`.
                    let col = (ni.div_ceil(16) * 16 + extra) * w;
                    let b = Block {
                        na,
                        nb,
                        da: w,
                        db: col,
                        sa: (nb + extra) * w,
                        sb: w,
                    };
                    let o = Outer {
                        count,
                        d: na * w,
                        s: na * b.sa + 16 * w,
                    };
                    let (src, want) = strided_copy((o, b, w), (d, s), make, old);
                    let mut got = std::vec![old; want.len()];
                    let done = stream_joined_tiles(&mut got, d, &src, s, o, b, w);
                    arch::stream_fence();
                    if done {
                        joined += 1;
                        assert_eq!(got, want, "{o:?} {b:?} at {d}/{s}");
                    } else {
                        assert!(got.iter().all(|&x| x == old));
                    }
                    // Each way, whatever this machine would take.
                    let init = src[s];
                    let mut got = std::vec![old; want.len()];
                    assert!(carried_tiles(
                        &mut got,
                        d,
                        &src,
                        s,
                        Outer::ONE,
                        o,
                        b,
                        w,
                        init
                    ));
                    arch::stream_fence();
                    assert_eq!(got, want, "carried: {o:?} {b:?} at {d}/{s}");
                    let mut got = std::vec![old; want.len()];
                    if buffered_tiles(&mut got, d, &src, s, o, b, w, init) {
                        arch::stream_fence();
                        assert_eq!(got, want, "buffered: {o:?} {b:?} at {d}/{s}");
                    } else {
                        assert!(!line_tiles_here());
                    }
                }
            }
        }
        if line_tiles_here() {
            assert_eq!(joined, 7 * 3 * 3);
        }
    }
    check(word, 0);
    check(half, 0);
    check(byte, 0);
}

/// Strips of joined line tiles side by side against a plain loop: 2 to
/// 23 strips (more than one carry holds), runs a whole number of tiles or
/// not, the strips' runs back to back or apart, at every place in their
/// lines; refused, nothing written, where every run starts a line.
#[test]
fn joined_strips_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        for (strips, count, na, nb) in [
            (2, 8, 8, 128),
            (5, 20, 4, 37),
            (40, 3, 32, 16),
            (3, 70, 1, 600),
        ] {
            for (d, s) in [(0, 0), (1, 2 * w)] {
                for extra in [0, 3, 9] {
                    let ni: usize = count * na;
                    let col = (ni + extra) * w;
                    let b = Block {
                        na,
                        nb,
                        da: w,
                        db: col,
                        sa: (nb * strips + 7) * w,
                        sb: w,
                    };
                    let o = Outer {
                        count,
                        d: na * w,
                        s: na * b.sa,
                    };
                    // The strips' runs back to back, or a line and a unit apart.
                    let gap = if extra == 9 { (16 + 1) * w } else { 0 };
                    let band = Outer {
                        count: strips,
                        d: nb * col + gap,
                        s: nb * w,
                    };
                    let len = |at: usize, q: usize, x: usize, a: usize, bb: usize| {
                        at + (strips - 1) * q + (count - 1) * x + (na - 1) * a + (nb - 1) * bb + w
                    };
                    let src: std::vec::Vec<T> =
                        (0..len(s, band.s, o.s, b.sa, b.sb) + 7).map(make).collect();
                    let mut want = std::vec![old; len(d, band.d, o.d, b.da, b.db) + 9];
                    for q in 0..strips {
                        for x in 0..count {
                            for i in 0..na {
                                for j in 0..nb {
                                    let to = d + q * band.d + x * o.d + i * b.da + j * b.db;
                                    let from = s + q * band.s + x * o.s + i * b.sa + j * b.sb;
                                    want[to..][..w].copy_from_slice(&src[from..][..w]);
                                }
                            }
                        }
                    }
                    let mut got = std::vec![old; want.len()];
                    let done = stream_joined_strips(&mut got, d, &src, s, band, o, b, w);
                    arch::stream_fence();
                    let on_lines = col * core::mem::size_of::<T>() % 64 == 0;
                    if done {
                        assert!(arch::joins_tiles() && !on_lines);
                        assert_eq!(got, want, "{band:?} {o:?} {b:?} at {d}/{s}");
                    } else {
                        assert!(!arch::joins_tiles() || on_lines || ni < LONG_RUNS);
                        assert!(got.iter().all(|&x| x == old));
                    }
                    let init = src[s];
                    let mut got = std::vec![old; want.len()];
                    if !on_lines && ni >= LONG_RUNS {
                        assert!(carried_tiles(&mut got, d, &src, s, band, o, b, w, init));
                        arch::stream_fence();
                        assert_eq!(got, want, "carried: {band:?} {o:?} {b:?} at {d}/{s}");
                    }
                }
            }
        }
    }
    check(word, 0);
    check(half, 0);
    check(byte, 0);
}

#[test]
fn padded_rows_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, fill: T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        let mut taken = 0;
        let (bands, groups) = (BANDS.get(), GROUPS.get());
        for (na, count, b_len) in [
            (16_usize, 64, 128),
            (37, 5, 32),
            (50, 20, 32),
            (19, 31, 32),
            (40, 1, 16),
            (33, 100, 112),
            (70, 16, 128),
            // Lines of data alone before the last, down the block in
            // one call each; more of a row's last lines than a group
            // holds.
            (40, 80, 128),
            (35, 130, 160),
            (20, 16, 256),
        ] {
            for (d, s) in [(0, 0), (3 * w, 5 * w), (1, 2), (7 * w, 0), (16 * w, 13 * w)] {
                // Source columns whole lines apart plus `extra` units.
                for extra in [0, 1] {
                    let sb = (na.div_ceil(16) * 16 + 16 + extra) * w;
                    // The last column ends the source: the rows past
                    // the block are not there to read.
                    let src_len = s + (count - 1) * sb + na * w;
                    let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                    let dst_len = d + na * b_len * w + 9;
                    let block = (na, count, b_len);
                    let want = padded_rows_by_hand(&src, s, sb, block, w, fill, (d, dst_len), old);
                    let mut got = std::vec![old; dst_len];
                    let mut scratch = std::vec![old; 784 * w];
                    let done =
                        stream_padded_rows(&mut got, d, &src, s, block, sb, w, fill, &mut scratch);
                    arch::stream_fence();
                    if done {
                        taken += 1;
                        assert_eq!(got, want, "{block:?} sb {sb} at {d}/{s}");
                    } else {
                        assert!(got.iter().all(|&x| x == old));
                    }
                }
            }
        }
        if line_tiles_here() {
            assert!(taken > 30, "{taken}");
            let (bands, groups) = (BANDS.get() - bands, GROUPS.get() - groups);
            assert!(bands > 10 && groups > 30, "{bands} {groups}");
        }
    }
    check(word, 2, 0);
    check(half, 0x1234, 0);
    check(byte, 0x11, 0);
}

/// Groups of padded rows, their sources one run down all the rows or a
/// run a group, fewer or more rows than a stage holds, last data columns
/// as a tile or not (a row too short for it), at odd places either side,
/// against a plain loop; slots outside the rows keep their old value.
#[test]
fn padded_groups_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, fill: T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        let mut taken = 0;
        for (groups, na, count, b_len) in [
            (9_usize, 8_usize, 79_usize, 128_usize),
            (5, 2, 111, 128),
            (3, 40, 41, 128),
            (1, 150, 73, 128),
            (2, 150, 16, 128),
            (4, 20, 16, 100),
            (2, 33, 99, 100),
            (3, 16, 30, 48),
            (1, 10, 20, 32),
            (2, 4, 17, 24),
        ] {
            // Sources one run down all the rows, or a run a group.
            for apart in [0, 7 * w] {
                for (d, s, gap) in [
                    (0, 0, 0),
                    (3 * w, 5 * w, b_len * w),
                    (1, 2, 9),
                    (16 * w, 13 * w, 64 * w),
                ] {
                    for extra in [0, 1] {
                        let rows = groups * na;
                        let o = Outer {
                            count: groups,
                            d: na * b_len * w + gap,
                            s: na * w + apart,
                        };
                        let sb = (rows + 16 + extra) * w + groups * apart;
                        let src_len = s + (groups - 1) * o.s + (na - 1) * w + (count - 1) * sb + w;
                        let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                        let dst_len = d + (groups - 1) * o.d + na * b_len * w + 9;
                        let mut want = std::vec![old; dst_len];
                        for x in 0..groups {
                            let from = s + x * o.s;
                            let block = (na, count, b_len);
                            let to = (d + x * o.d, dst_len);
                            let group =
                                padded_rows_by_hand(&src, from, sb, block, w, fill, to, old);
                            let at = d + x * o.d;
                            let len = na * b_len * w;
                            want[at..at + len].copy_from_slice(&group[at..at + len]);
                        }
                        let mut got = std::vec![old; dst_len];
                        let shape = ((o, na), (count, b_len));
                        let done = stream_padded_groups(
                            &mut got, d, &src, s, shape.0, shape.1, sb, w, fill,
                        );
                        arch::stream_fence();
                        if done {
                            taken += 1;
                            assert_eq!(got, want, "{shape:?} sb {sb} at {d}/{s}");
                        } else {
                            assert!(got.iter().all(|&x| x == old), "{shape:?}");
                        }
                    }
                }
            }
        }
        if line_tiles_here() {
            assert!(taken > 100, "{taken}");
        }
    }
    check(word, 2, 0);
    check(half, 0x1234, 0);
    check(byte, 0x11, 0);
}

/// What a padded block of `w`-element units writes, by a plain loop:
/// `na` rows of `b_len` units from `d` in a destination of `dst_len`
/// elements (the rest `old`), unit `j < count` of row `i` from
/// `src[s + i*w + j*sb..][..w]` and `fill` after.
#[allow(clippy::too_many_arguments)]
fn padded_rows_by_hand<T: Copy>(
    src: &[T],
    s: usize,
    sb: usize,
    (na, count, b_len): (usize, usize, usize),
    w: usize,
    fill: T,
    (d, dst_len): (usize, usize),
    old: T,
) -> std::vec::Vec<T> {
    let mut want = std::vec![old; dst_len];
    for i in 0..na {
        for j in 0..b_len {
            for e in 0..w {
                want[d + (i * b_len + j) * w + e] = if j < count {
                    src[s + i * w + j * sb + e]
                } else {
                    fill
                };
            }
        }
    }
    want
}

/// Padded blocks whose source rows lie pages apart, copied a stretch
/// of rows at a time before the transposes, against a plain loop, at
/// odd sizes and offsets, with more rows than one stretch holds; slots
/// outside the block keep their old value. The copying path must run
/// for every block it is meant for, and the visitor must give the same
/// whichever path it picks.
#[test]
fn far_source_rows_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, fill: T, old: T) {
        let w = 4 / core::mem::size_of::<T>();
        for (na, count, b_len) in [
            (1_usize, 8, 16),
            (16, 64, 128),
            (21, 9, 9),
            (300, 64, 128),
            (300, 100, 112),
            (5, 7, 32),
        ] {
            for (d, s) in [(0, 0), (1, 3), (3 * w, 5 * w)] {
                // Units a source row from the next: a page, or more.
                for apart in [1024, 1031] {
                    let sb = apart * w;
                    let src_len = s + (count - 1) * sb + na * w;
                    let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                    let dst_len = d + na * b_len * w + 9;
                    let block = (na, count, b_len);
                    let want = padded_rows_by_hand(&src, s, sb, block, w, fill, (d, dst_len), old);
                    let a = Axis {
                        count: na,
                        walk: b_len * w,
                        other: w,
                    };
                    let b = Axis {
                        count,
                        walk: w,
                        other: sb,
                    };
                    let at = std::format!("{na}x{count} of {b_len}, rows {sb} apart, at {d}/{s}");
                    for copied in [false, true] {
                        let mut got = std::vec![old; dst_len];
                        arch::with_stage(old, |stage| {
                            let mut v = Gather {
                                dst: &mut got,
                                base: 0,
                                src: &src,
                                padding: Some(fill),
                                stage,
                                unit: w,
                                end: 0,
                            };
                            if copied {
                                let ran = arch::with_wide(old, usize::MAX, |wide| {
                                    v.padded_rows_copied(wide, d, s, a, b, b_len)
                                });
                                assert!(ran, "{at}");
                            } else {
                                v.block_padded(d, s, a, b, b_len);
                            }
                        });
                        arch::stream_fence();
                        assert_eq!(got, want, "{at}, copied {copied}");
                    }
                }
            }
        }
    }
    check(word, 2, 0);
    check(half, 0x1234, 0);
    check(byte, 0x11, 0);
}

/// Calls `check(make, old)` for elements of 1, 2, 4, 8 and 16 bytes,
/// each aligned to its size (`u128`, not `[u8; 16]`), so that a buffer
/// of them has an element on every 16-byte boundary whatever the
/// allocator.
macro_rules! every_element_size {
    ($check:ident) => {
        $check(word, 0);
        $check(half, 0);
        $check(byte, 0);
        $check(|i| (i as u64) << 20 | 1, 0);
        $check(|i| (i as u128) << 64 | 1, 0);
    };
}

/// Tile rows joined into destination rows that start anywhere in a
/// line, against a plain loop; slots outside the block keep their old
/// value, and the path must be taken for the rows off a line (on 16
/// bytes or not) when the stage holds two lines a row. The block
/// starts on a line, an element past one, 16, 32 and 48 bytes past
/// one and an element short of the next, so rows on 16 bytes but off a
/// line come up for every element size.
#[test]
fn joined_rows_match_a_plain_loop() {
    fn check<T: Copy + PartialEq + core::fmt::Debug>(make: fn(usize) -> T, old: T) {
        let size = core::mem::size_of::<T>();
        let w = (4 / size).max(1);
        let (mut taken, mut on_16) = (0, 0);
        for (count, na, nb) in [(2, 1, 16), (3, 3, 32), (31, 8, 16), (5, 2, 20), (4, 5, 64)] {
            let nb = (nb * 4 / (w * size)).max(4);
            let piece = nb * w;
            let line = 64 / size;
            let starts = (0..line).filter(|&k| k < 2 || k * size % 16 == 0 || k == line - 1);
            for past_line in starts {
                for extra in [0, 1, 3, 16 / size, 64 / size] {
                    let da = count * piece + extra;
                    let (first, sa, os) = (3, piece, na * piece + 7);
                    let src_len = first + count * os;
                    let src: std::vec::Vec<T> = (0..src_len).map(make).collect();
                    let dst_len = 64 + past_line + na * da + 9;
                    let mut want = std::vec![old; dst_len];
                    let mut got = std::vec![old; dst_len];
                    // `past_line` elements past a line boundary of `got`.
                    let lead = got.as_ptr().addr().next_multiple_of(64) - got.as_ptr().addr();
                    let d = lead / size + past_line;
                    for x in 0..count {
                        for i in 0..na {
                            for j in 0..piece {
                                want[d + i * da + x * piece + j] = src[first + x * os + i * sa + j];
                            }
                        }
                    }
                    for stage_len in [na * 64 / size, na * 128 / size, 2048] {
                        got.fill(old);
                        let mut stage = std::vec![old; stage_len];
                        let o = Outer {
                            count,
                            d: piece,
                            s: os,
                        };
                        let b = Block {
                            na,
                            nb,
                            da,
                            db: w,
                            sa,
                            sb: w,
                        };
                        let joined =
                            stream_joined_rows(&mut got, d, &src, first, o, b, w, &mut stage);
                        // The rows' last partial lines, which wait in the
                        // stage for a piece that continues them.
                        if let Some(j) = joined {
                            j.finish(&mut got, &mut stage);
                        }
                        let done = joined.is_some();
                        arch::stream_fence();
                        let at = |k: usize| got.as_ptr().addr() + k * size;
                        let off = (0..na).any(|i| at(d + i * da) % 64 != 0);
                        let fits = piece * size % 64 == 0
                            && piece * size >= 128
                            && size <= 16
                            && stage_len * size >= na * 128;
                        assert_eq!(done, off && fits, "{count}x{na}x{nb} at {d}, da {da}");
                        if done {
                            taken += 1;
                            on_16 += usize::from((0..na).all(|i| at(d + i * da) % 16 == 0));
                            assert_eq!(got, want, "{count}x{na}x{nb} at {d}, da {da}");
                        } else {
                            assert!(got.iter().all(|&v| v == old));
                        }
                    }
                }
            }
        }
        assert!(taken > 50 && on_16 > 10, "{taken}, {on_16} on 16 bytes");
    }
    every_element_size!(check);
}

#[test]
fn streamed_fills_match_plain_ones() {
    for len in [0, 1, 15, 16, 17, 100, 1000] {
        for off in [0, 1, 7] {
            for stage_len in [0, 16, 100] {
                let mut got = std::vec![1u32; 1100];
                let mut stage = std::vec![0u32; stage_len];
                stream_fill(&mut got[off..off + len], 9, &mut stage);
                arch::stream_fence();
                let mut want = std::vec![1u32; 1100];
                want[off..off + len].fill(9);
                assert_eq!(got, want, "{len} at {off}, stage {stage_len}");
            }
        }
    }
}

fn check<T: Copy + PartialEq + core::fmt::Debug>(b: Block, old: T, value: fn(usize) -> T) {
    let (d, s) = (2, 7);
    let src_len = s + (b.na - 1) * b.sa + (b.nb - 1) * b.sb + 1 + 9;
    let dst_len = d + (b.na - 1) * b.da + (b.nb - 1) * b.db + 1 + 4;
    let src: std::vec::Vec<T> = (0..src_len).map(value).collect();
    let mut expected = std::vec![old; dst_len];
    for i in 0..b.na {
        for j in 0..b.nb {
            expected[d + i * b.da + j * b.db] = src[s + i * b.sa + j * b.sb];
        }
    }
    let mut got = std::vec![old; dst_len];
    copy_block(&mut got, d, &src, s, b);
    assert_eq!(got, expected, "{b:?}");
}
