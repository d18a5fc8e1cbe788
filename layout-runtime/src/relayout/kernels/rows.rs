//! Short source rows packed a row at a time across a row of tiles, and
//! the line arithmetic the streaming kernels share.

use super::{arch, copy_block, copy_units, line_units, stream_block, stream_lines, Block, Outer};

/// Source rows at least this far apart are copied before a transpose
/// reads them: see [`Gather::block_padded`].
pub(crate) const FAR_ROW_BYTES: usize = 4096;

/// Elements of `T` in a cache line, rounded up (exact for the sizes of a
/// power of two the streaming kernels take): the gap between the rows of
/// [`Gather::block_padded`]'s copies, and [`stream_joined_rows`]' line.
pub(crate) fn line_elements<T>() -> usize {
    64usize.div_ceil(core::mem::size_of::<T>().max(1))
}

/// Elements of `T` from byte address `at` to the next line boundary (0 on
/// one), for addresses on elements.
pub(crate) fn to_line<T>(at: usize) -> usize {
    (64 - at % 64) % 64 / core::mem::size_of::<T>().max(1)
}

/// [`to_line`] from `slice[k]`.
pub(crate) fn to_line_in<T>(slice: &[T], k: usize) -> usize {
    to_line::<T>(slice.as_ptr().addr() + k * core::mem::size_of::<T>())
}

/// Where a piece of a run joined from pieces stands in the run: the first
/// (its head's line is shared with what lies before the run), inside, or
/// the last (its tail's line is shared with what lies after).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    First,
    Inside,
    Last,
}

/// Copies `from` into `dst[to..]`, one piece of a run that other pieces
/// continue on both sides, each line whole with streaming stores:
/// the lines inside the piece from the source, and the line it shares
/// with the piece before from `lines`, two lines of the stage that hold
/// the piece before's last line of source elements (put there by this
/// call for that piece) and, copied in now, this piece's first, the
/// shared line lying whole across them. Whole lines go into the stage,
/// not the shared line's two parts, whose lengths are known only at run
/// time and cost a call to `memcpy` each (8% of the samples of a program
/// unpacking `f32[4093,4093]`). The first piece's head and the
/// last's tail share their lines with what lies outside the run and go
/// with plain stores. Every piece must start at the same place in its
/// line and be at least a line long.
pub(crate) fn stream_joined_piece<T: Copy>(
    dst: &mut [T],
    to: usize,
    from: &[T],
    lines: &mut [T],
    piece: Piece,
) {
    let line = line_elements::<T>();
    let len = from.len();
    // Elements to the piece's first line boundary; its last line holds the
    // rest of that line's elements.
    let head = to_line_in(dst, to);
    let tail = (line - head) % line;
    let body = len - head - tail;
    if head > 0 {
        if piece == Piece::First {
            dst[to..][..head].copy_from_slice(&from[..head]);
        } else {
            lines[line..].copy_from_slice(&from[..line]);
            arch::stream_line(&mut dst[to + head - line..][..line], &lines[head..][..line]);
        }
    }
    arch::stream_copy_lines(&mut dst[to + head..][..body], &from[head..][..body]);
    if tail > 0 {
        if piece == Piece::Last {
            dst[to + len - tail..][..tail].copy_from_slice(&from[len - tail..]);
        } else {
            lines[..line].copy_from_slice(&from[len - line..]);
        }
    }
}

/// Source rows at most this long are packed a row at a time across a row
/// of tiles: see [`stream_rows_across`].
pub(crate) const SHORT_SOURCE_ROW_BYTES: usize = 8192;

/// The most tiles a row [`stream_rows_across`] takes: the counts measured.
pub(crate) const ACROSS_TILES: usize = 16;

/// Rows a whole number of these long go tile by tile: see [`stream_rows_across`].
pub(crate) const PAGE_BYTES: usize = 4096;

/// `o.count` blocks `b` of `w`-element units, tiles side by side along
/// short source rows (packing `f32[N,512]` into `T(8,128)`: 8 rows of 2
/// KiB, four tiles across them), the rows of each tile back to back in
/// the destination: read a row at a time across the tiles, not a tile at
/// a time down the rows, whose reads hop back and forth inside a few
/// pages. Each piece goes straight to the streaming copy, 16 bytes at a
/// time where it starts on 16 bytes (plainly otherwise); a line it shares
/// with the piece below is completed when that piece is written, `o.count`
/// pieces later. `false`, nothing written, for other blocks: rows longer
/// than 8 KiB or a whole number of 4 KiB pages, more than sixteen tiles a
/// row, pieces under a line.
///
/// Where the pieces are whole lines long but start inside a line (a `Vec`
/// starts 16 bytes into one) and `stage` holds two lines a tile, that shared
/// line is put together in `stage` and streamed whole (see
/// [`across_seams`]): streamed in two parts `o.count` pieces apart, each
/// part left the write-combining buffer alone, and the pack of
/// `f32[32768,512]` took 16.4 ms against 8.9 into a destination on a line
/// and 10.0 tile by tile (Intel Xeon family 6 model 207).
///
/// Measured on an AMD EPYC Zen 3, the time of `f32[32768,512]`'s pack over
/// `f32[4096,4096]`'s in one program, alternated with the build before:
/// 1.45-1.80 to 1.25-1.36 (`f32[65536,256]` 1.44-2.07 to 1.03-1.25;
/// `bf16[65536,512]` and `s8[262144,256]` gain as much). Through
/// `copy_any`, the dispatch per piece took as long as the copy. There,
/// rows of 3 KiB and more read faster tile by tile in a hand-written
/// program. On an AMD EPYC Zen 4, `benches/relayout_ab.py` (both orders in
/// one process) on packs of 64 MiB into `T(8,128)`, rows across against
/// tile by tile, three runs each: 768 columns 0.78-0.84 of the time, 896
/// 0.77-0.90, 1000 (the bench's narrow rows) 0.76-1.04 in eight runs,
/// median 0.87, 1152 0.81-0.95, 1280 0.81-0.89, 1800 0.87-0.98; rows of
/// whole pages no faster (1024 columns 0.93-1.14, 2048 1.06-1.10), nor
/// rows past 8 KiB (3000 columns 0.92-0.94, 4000 0.95-1.00, the ragged
/// `4093` 1.07-1.13).
// The names of `Block` and `Outer`; the stage is an eighth argument.
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub(crate) fn stream_rows_across<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    w: usize,
    stage: &mut [T],
) -> bool {
    let size = core::mem::size_of::<T>();
    let len = b.nb.saturating_mul(w);
    if !(2..=ACROSS_TILES).contains(&o.count)
        || b.na < 2
        || b.db != w
        || b.sb != w
        || b.da != len
        || o.s != len
        || len.saturating_mul(size) < 64
        || b.sa.saturating_mul(size) > SHORT_SOURCE_ROW_BYTES
        || b.sa.saturating_mul(size) % PAGE_BYTES == 0
    {
        return false;
    }
    if across_seams(dst, d, src, s, o, b, len, stage) {
        return true;
    }
    for i in 0..b.na {
        for x in 0..o.count {
            let to = d + x * o.d + i * b.da;
            let from = s + x * o.s + i * b.sa;
            arch::stream_copy_in_order(&mut dst[to..][..len], &src[from..][..len]);
        }
    }
    true
}

/// [`stream_rows_across`]'s rows when every piece, `len` elements, is
/// whole lines long and starts inside a line: each tile's rows are one
/// run of pieces ([`stream_joined_piece`]), the stage keeping two lines a
/// tile. `false`, nothing written, for other pieces or a stage under two
/// lines a tile.
#[allow(clippy::too_many_arguments)]
fn across_seams<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    o: Outer,
    b: Block,
    len: usize,
    stage: &mut [T],
) -> bool {
    let line = line_elements::<T>();
    if to_line_in(dst, d) == 0
        || line * core::mem::size_of::<T>() != 64
        || len % line != 0
        || o.d % line != 0
        || stage.len() < o.count * 2 * line
    {
        return false;
    }
    for i in 0..b.na {
        let piece = match i {
            0 => Piece::First,
            _ if i + 1 == b.na => Piece::Last,
            _ => Piece::Inside,
        };
        for (x, lines) in stage.chunks_exact_mut(2 * line).take(o.count).enumerate() {
            let from = &src[s + x * o.s + i * b.sa..][..len];
            stream_joined_piece(dst, d + x * o.d + i * b.da, from, lines, piece);
        }
    }
    true
}

/// One block of `width`-element units: streamed through `stage` when there
/// is one (destinations larger than the cache), else with plain stores.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_any<T: Copy>(
    dst: &mut [T],
    d: usize,
    src: &[T],
    s: usize,
    b: Block,
    width: usize,
    stage: &mut [T],
    in_order: bool,
) {
    if !stage.is_empty() {
        let whole = Outer {
            count: 1,
            d: 0,
            s: 0,
        };
        if line_units::<T>(width)
            && (stream_lines(dst, d, src, s, whole, b, width, stage)
                || stream_lines(dst, d, src, s, whole, b.transposed(), width, stage))
        {
            return;
        }
        stream_block(dst, d, src, s, b, width, stage, in_order);
    } else if width > 1 {
        copy_units(dst, d, src, s, b, width);
    } else {
        copy_block(dst, d, src, s, b);
    }
}
