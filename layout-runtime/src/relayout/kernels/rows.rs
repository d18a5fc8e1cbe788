//! Pieces of rows joined across tiles, the block copies every kernel
//! falls back to, and the line arithmetic the streaming kernels share.

use super::{
    arch, copy_block, copy_units, line_units, stream_block, stream_joined_tiles, stream_lines,
    Block, Neighbours, Outer,
};

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
/// (its head's line is shared with what lies before the run) or inside.
/// The last piece's tail waits in the stage like any other's, for a piece
/// that may continue the run (see [`Joined`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    First,
    Inside,
}

/// Copies `from` into `dst[to..]`, one piece of a run that other pieces
/// continue on both sides, each line whole with streaming stores:
/// the line it shares with the piece before ([`join_head`]), the lines
/// inside the piece from the source, and its last line kept for the
/// piece after ([`keep_tail`]). Every piece must start at the same place
/// in its line and be at least a line long.
pub(crate) fn stream_joined_piece<T: Copy>(
    dst: &mut [T],
    to: usize,
    from: &[T],
    lines: &mut [T],
    piece: Piece,
) {
    let line = line_elements::<T>();
    let head = join_head(dst, to, from, lines, piece);
    let body = (from.len() - head) / line * line;
    arch::stream_copy_lines(&mut dst[to + head..][..body], &from[head..][..body]);
    keep_tail(dst, to, from, lines);
}

/// The head of a piece of a joined run, `from` into `dst[to..]`, up to
/// its first line boundary, and returns its length. The first piece's
/// head shares its line with what lies before the run and goes with plain
/// stores; any other's completes the line the piece before started:
/// `lines`, two lines of the stage, hold the piece before's last line of
/// source elements ([`keep_tail`]) and, copied in now, this piece's
/// first, the shared line lying whole across them, streamed whole. Whole
/// lines go into the stage, not the shared line's two parts, whose
/// lengths are known only at run time and cost a call to `memcpy` each
/// (8% of the samples of a program unpacking `f32[4093,4093]`).
pub(crate) fn join_head<T: Copy>(
    dst: &mut [T],
    to: usize,
    from: &[T],
    lines: &mut [T],
    piece: Piece,
) -> usize {
    let line = line_elements::<T>();
    let head = to_line_in(dst, to);
    if head > 0 {
        if piece == Piece::First {
            dst[to..][..head].copy_from_slice(&from[..head]);
        } else {
            lines[line..].copy_from_slice(&from[..line]);
            arch::stream_line(&mut dst[to + head - line..][..line], &lines[head..][..line]);
        }
    }
    head
}

/// Keeps the last line of source elements of a piece of a joined run
/// (`from`, bound for `dst[to..]`) in the first of `lines`, for the piece
/// that continues the run ([`join_head`]), when its last line is partial.
pub(crate) fn keep_tail<T: Copy>(dst: &[T], to: usize, from: &[T], lines: &mut [T]) {
    let line = line_elements::<T>();
    if to_line_in(dst, to + from.len()) > 0 {
        lines[..line].copy_from_slice(&from[from.len() - line..]);
    }
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
    if b.na == 0 || b.nb == 0 {
        return;
    }
    if !stage.is_empty() {
        let whole = Outer::ONE;
        if line_units::<T>(width)
            && (stream_lines(
                dst,
                d,
                src,
                s,
                whole,
                b,
                width,
                stage,
                &mut Neighbours::default(),
            ) || stream_lines(
                dst,
                d,
                src,
                s,
                whole,
                b.transposed(),
                width,
                stage,
                &mut Neighbours::default(),
            ) || stream_joined_tiles(dst, d, src, s, whole, b, width)
                || stream_joined_tiles(dst, d, src, s, whole, b.transposed(), width))
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
