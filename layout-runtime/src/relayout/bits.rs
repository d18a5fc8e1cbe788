//! Sub-byte storage (`E(1)`, `E(2)`, `E(4)`): slots packed into bytes.
//!
//! Slot `k` of an `E(n)` layout occupies bits `(k*n) % 8 ..` of byte
//! `k*n / 8`, counting bit 0 as the least significant: the first slot of a
//! byte is in its low-order bits. This is XLA's order since early 2025 (its
//! `PackIntN`/`UnpackIntN` and LLVM's in-register order; earlier XLA put the
//! first element in the high-order bits).

use super::arch;
use super::kernels::{
    ask_band_share, copy_block, line_elements, tiles_ahead, to_line_in, Asked, Block,
};
use super::walk::{block_padded_apart, block_then_padding_apart, Axis, Visitor};
use crate::ElementType;

/// A Rust type that carries one sub-byte element, for
/// [`Layout::pack_bits`](crate::Layout::pack_bits) and friends.
///
/// [`to_bits`](Self::to_bits) is the element as a byte: its value extended
/// to eight bits by the signedness of the layout's element type, so an `s4`
/// of -3 is `-3i8` or `0xfdu8` alike, and a `u4` of 13 is `13u8`. Packing
/// stores the low `n` bits of that byte and refuses a byte that is not such
/// an extension ([`RelayoutError::ValueOutOfRange`](crate::RelayoutError::ValueOutOfRange)):
/// a value outside what the element type holds in `n` bits would lose its
/// high bits. Unpacking extends the `n` stored bits back by the Rust type:
/// with zeros for `u8`, with the sign bit for `i8` (so `s4` reads as
/// `-8..=7`), and to `true` for any non-zero value of `bool`. So `i8` for a
/// signed element type, and `u8` or `bool` for the others, read back every
/// value they packed.
///
/// # Examples
///
/// ```
/// use xla_layout::BitElement;
/// assert_eq!((-3i8).to_bits() & 0xf, 0b1101);
/// assert_eq!(i8::from_bits(0b1101, 4), -3);
/// assert_eq!(u8::from_bits(0b1101, 4), 13);
/// assert!(bool::from_bits(1, 1));
/// ```
pub trait BitElement: Copy {
    /// The value as a byte; only the low `n` of an `E(n)` layout are stored,
    /// and the rest must extend them (see the [trait docs](BitElement)).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::BitElement;
    /// assert_eq!(true.to_bits(), 1);
    /// assert_eq!((-1i8).to_bits(), 0xff);
    /// ```
    fn to_bits(self) -> u8;
    /// The value stored as `raw` (bits above `bits` are zero).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::BitElement;
    /// // `s2`: two bits, the high one the sign.
    /// assert_eq!(i8::from_bits(0b10, 2), -2);
    /// assert_eq!(i8::from_bits(0b01, 2), 1);
    /// assert!(!bool::from_bits(0, 1));
    /// ```
    fn from_bits(raw: u8, bits: u32) -> Self;

    /// `values` as bytes, where each value is one byte in memory and that
    /// byte is its [`to_bits`](Self::to_bits): the packs' vector kernels
    /// then read them directly. `None`, value by value, by default.
    #[doc(hidden)]
    #[inline]
    fn bits_of(values: &[Self]) -> Option<&[u8]> {
        let _ = values;
        None
    }

    /// `values` as bytes the unpacks' vector kernels may write, and
    /// whether [`from_bits`](Self::from_bits) extends with the sign (else
    /// with zeros), where every byte is a value and that is what it reads
    /// as. `None`, value by value, by default.
    #[doc(hidden)]
    #[inline]
    fn bits_into(values: &mut [Self]) -> Option<(&mut [u8], bool)> {
        let _ = values;
        None
    }
}

impl BitElement for u8 {
    #[inline]
    fn to_bits(self) -> u8 {
        self
    }
    #[inline]
    fn from_bits(raw: u8, _bits: u32) -> Self {
        raw
    }
    #[inline]
    fn bits_of(values: &[Self]) -> Option<&[u8]> {
        Some(values)
    }
    #[inline]
    fn bits_into(values: &mut [Self]) -> Option<(&mut [u8], bool)> {
        Some((values, false))
    }
}

impl BitElement for i8 {
    #[inline]
    fn to_bits(self) -> u8 {
        self.to_ne_bytes()[0]
    }
    #[inline]
    fn from_bits(raw: u8, bits: u32) -> Self {
        // (v ^ s) - s sign-extends an n-bit v with sign bit s: plain byte
        // arithmetic, which vectorizes where an arithmetic shift of bytes does not.
        let sign = 1u8 << (bits.clamp(1, 8) - 1);
        i8::from_ne_bytes([(raw ^ sign).wrapping_sub(sign)])
    }
    #[inline]
    fn bits_of(values: &[Self]) -> Option<&[u8]> {
        Some(bytemuck::cast_slice(values))
    }
    #[inline]
    fn bits_into(values: &mut [Self]) -> Option<(&mut [u8], bool)> {
        Some((bytemuck::cast_slice_mut(values), true))
    }
}

impl BitElement for bool {
    #[inline]
    fn to_bits(self) -> u8 {
        u8::from(self)
    }
    #[inline]
    fn from_bits(raw: u8, _bits: u32) -> Self {
        raw != 0
    }
    // Written as bytes, a `bool` could be left neither 0 nor 1: unpacked
    // value by value.
    #[inline]
    fn bits_of(values: &[Self]) -> Option<&[u8]> {
        Some(bytemuck::cast_slice(values))
    }
}

/// The bytes that carry an element of one type in `E(n)`: its values in
/// `k = min(n, the type's own bits)` bits (`pred` is one bit whatever `n`),
/// extended to a byte with the sign for a signed integer type and with
/// zeros otherwise (unsigned types, `pred`, and the bit patterns of a
/// sub-byte float). A byte `b` is one when `b + bias` (wrapping) is below
/// `limit = 2^k`: `bias` is `2^(k-1)` for a signed type, which moves
/// `-2^(k-1)..2^(k-1)` onto `0..2^k`, and 0 otherwise.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fit {
    bias: u8,
    limit: u8,
}

impl Fit {
    /// For `element` stored in `n` (1, 2 or 4) bits.
    pub(crate) fn new(element: ElementType, n: u32) -> Self {
        let k = n.min(element.min_bits()).clamp(1, 4);
        let bias = if element.integer_signedness() == Some(true) {
            1 << (k - 1)
        } else {
            0
        };
        Fit {
            bias,
            limit: 1 << k,
        }
    }

    /// Whether `byte` is an element's byte (see the type docs).
    #[inline]
    pub(crate) fn holds(self, byte: u8) -> bool {
        byte.wrapping_add(self.bias) < self.limit
    }

    /// The least and greatest value, as the element type reads them.
    pub(crate) fn bounds(self) -> (i16, i16) {
        let (bias, limit) = (i16::from(self.bias), i16::from(self.limit));
        (-bias, limit - bias - 1)
    }

    /// The position of the first of `values` whose byte is not an
    /// element's. Checked a block at a time with no early exit inside,
    /// which vectorizes (values held as bytes in 256-bit vectors where the
    /// CPU has them, [`arch::any_outside`]): on a refused pack, to name
    /// the value.
    pub(crate) fn first_outside<T: BitElement>(self, values: &[T]) -> Option<usize> {
        const BLOCK: usize = 4096;
        let (i, block) = values
            .chunks(BLOCK)
            .enumerate()
            .find(|(_, b)| self.any_outside(b))?;
        let at = block.iter().position(|v| !self.holds(v.to_bits()))?;
        Some(i * BLOCK + at)
    }

    /// Whether any of `values` is not an element's byte, with no early exit.
    fn any_outside<T: BitElement>(self, values: &[T]) -> bool {
        match T::bits_of(values) {
            Some(bytes) => arch::any_outside(bytes, self.bias, self.limit),
            None => {
                values
                    .iter()
                    .fold(0u8, |acc, v| acc | u8::from(!self.holds(v.to_bits())))
                    != 0
            }
        }
    }
}

/// Bit geometry of one `E(n)` layout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bits {
    pub(crate) n: u32,
    mask: u8,
    /// Slots per byte.
    per: usize,
}

impl Bits {
    /// `None` unless `n` divides 8 and is below 8.
    pub(crate) fn new(n: u32) -> Option<Self> {
        matches!(n, 1 | 2 | 4).then(|| Bits {
            n,
            mask: (1u8 << n) - 1,
            per: 8 / n as usize,
        })
    }

    #[inline]
    fn get(self, bytes: &[u8], slot: usize) -> u8 {
        let shift = (slot % self.per) as u32 * self.n;
        (bytes[slot / self.per] >> shift) & self.mask
    }

    #[inline]
    fn set(self, bytes: &mut [u8], slot: usize, value: u8) {
        let shift = (slot % self.per) as u32 * self.n;
        let byte = &mut bytes[slot / self.per];
        *byte = (*byte & !(self.mask << shift)) | ((value & self.mask) << shift);
    }

    /// The byte holding `per` slots of `value`.
    #[inline]
    fn repeat(self, value: u8) -> u8 {
        self.byte_of(|_| value)
    }

    /// The byte of `per` slots, slot `q` (from the lowest bits) holding
    /// the low `n` bits of `value(q)`, asked in order.
    #[inline]
    fn byte_of(self, mut value: impl FnMut(usize) -> u8) -> u8 {
        (0..self.per).fold(0, |acc, q| {
            acc | ((value(q) & self.mask) << (q as u32 * self.n))
        })
    }

    /// `Some(g)` when block `a` x `b` at walked slot `off` is columns of
    /// whole bytes: `b` runs over `g` bytes of rows (contiguous slots from a
    /// byte boundary, at most 8 bytes), one run per column of `a`, runs
    /// adjacent, columns contiguous on the logical side.
    #[inline]
    fn row_groups(self, off: usize, a: Axis, b: Axis) -> Option<usize> {
        let g = b.count / self.per;
        let fits = b.walk == 1
            && a.walk == b.count
            && a.other == 1
            && off % self.per == 0
            && b.count % self.per == 0
            && (1..=8).contains(&g);
        fits.then_some(g)
    }

    /// `Some(g)` when block `a` x `b` at walked slot `off` is columns of
    /// whole bytes cut short: as [`row_groups`](Self::row_groups) for runs
    /// of `len` slots, of which `b` takes the first `b.count` (the rows
    /// of a tile's groups past an array's edge, the rest padding).
    #[inline]
    fn short_row_groups(self, off: usize, a: Axis, b: Axis, len: usize) -> Option<usize> {
        let full = Axis { count: len, ..b };
        self.row_groups(off, a, full).filter(|_| b.count < len)
    }

    /// Writes `value` into slots `off..off + len`.
    pub(crate) fn fill(self, bytes: &mut [u8], mut off: usize, len: usize, value: u8) {
        let end = off + len;
        while off < end && off % self.per != 0 {
            self.set(bytes, off, value);
            off += 1;
        }
        let whole = (end - off) / self.per;
        bytes[off / self.per..off / self.per + whole].fill(self.repeat(value));
        off += whole * self.per;
        while off < end {
            self.set(bytes, off, value);
            off += 1;
        }
    }

    /// Clears the bits of the last byte past `slots` slots, so no stale bits survive.
    pub(crate) fn clear_tail(self, bytes: &mut [u8], slots: usize) {
        if slots % self.per != 0 {
            let used = (slots % self.per) as u32 * self.n;
            if let Some(last) = bytes.get_mut(slots / self.per) {
                *last &= (1u8 << used) - 1;
            }
        }
    }
}

/// Packs logical values into the walked bit storage (pack).
pub(crate) struct PackBits<'a, T> {
    pub(crate) dst: &'a mut [u8],
    pub(crate) src: &'a [T],
    pub(crate) bits: Bits,
    pub(crate) fill: u8,
    /// Whether `dst` is larger than the cache: groups of four bytes then go
    /// out with streaming stores.
    pub(crate) stream: bool,
    /// What the pack has found of its values: each path checks those it
    /// packs (see [`Checks`]).
    pub(crate) checks: Checks,
    /// Rows of transposed `s4` tiles that wait for the walk's next block
    /// (see `UnitTiles::pack_nibbles`).
    pub(crate) waiting: Waiting,
}

/// Rows of transposed `s4` tiles left for the walk's next block to
/// continue: their geometry, and where their values start.
pub(crate) type Waiting = Option<(UnitTiles, usize)>;

impl<T: BitElement> PackBits<'_, T> {
    /// [`Visitor::block_padded`] where each row of `a` is whole bytes of
    /// its own, contiguous on both sides (the last group of a transposed
    /// tile cut short: 5 values and 3 of the fill in a unit of 4 bytes):
    /// each byte put together from its values and the fill. Value by
    /// value, with the padding apart, those units of the transposed
    /// `s4[15262,4397]` pack, a 550th of its values, took a tenth of it.
    fn rows_padded(&mut self, off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        let (bits, fill) = (self.bits, self.fill);
        for i in 0..a.count {
            arch::prefetch(self.src, other + (i + ROWS_AHEAD) * a.other);
            let start = (off + i * a.walk) / bits.per;
            let values = &self.src[other + i * a.other..][..b.count];
            // Value by value: a few a row, too few for the vector check.
            for &v in values {
                self.checks.value(v);
            }
            let bytes = &mut self.dst[start..start + b_len / bits.per];
            for (k, byte) in bytes.iter_mut().enumerate() {
                *byte =
                    bits.byte_of(|q| values.get(k * bits.per + q).map_or(fill, |v| v.to_bits()));
            }
        }
    }

    /// Packs the rows still waiting for a block that did not come: call
    /// once the walk is done.
    pub(crate) fn settle(&mut self) {
        if let Some((w, from)) = self.waiting.take() {
            if let Some(bytes) = T::bits_of(self.src) {
                w.nibble_bands(self.dst, bytes, from, self.stream, &mut self.checks, None);
            }
        }
    }
}

/// What a pack has found of its values. The kernels that read values
/// into vector registers keep the greatest they see ([`arch::Seen`]);
/// every other path checks the values it packs as it packs them, a row or
/// a chunk at a time, while they are in the cache. A pass over the values
/// of its own, before the pack, read each of them twice: past the caches
/// that cost as much as the pack itself (`s4[8192,8192]` in `(8,128)(8,1)`
/// tiles packed in 11.6-12.6 ms against 5.5-5.7 unchecked, caches
/// flushed, 2-vCPU Intel Xeon), and after each piece of a call, from the
/// cache, still a sixth of the pack (`s4[165,983,413]` 9.0-9.4 ms
/// against 7.5-7.8 checked in the kernels).
pub(crate) struct Checks {
    pub(crate) seen: arch::Seen,
    fit: Fit,
    /// Whether a value checked outside the kernels did not fit.
    outside: bool,
}

impl Checks {
    /// Nothing found yet, for values that must be `fit`'s.
    pub(crate) fn new(fit: Fit) -> Self {
        Checks {
            seen: arch::Seen::new(fit.bias),
            fit,
            outside: false,
        }
    }

    /// Notes whether any of `values` does not fit.
    #[inline]
    fn values<T: BitElement>(&mut self, values: &[T]) {
        self.outside |= self.fit.any_outside(values);
    }

    /// Notes whether `value` does not fit.
    #[inline]
    fn value<T: BitElement>(&mut self, value: T) {
        self.outside |= !self.fit.holds(value.to_bits());
    }

    /// Whether any value found did not fit.
    pub(crate) fn any_outside(&self) -> bool {
        self.outside || self.seen.greatest() >= self.fit.limit
    }
}

impl<T: BitElement> Visitor for PackBits<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let bits = self.bits;
        let (src, checks) = (self.src, &mut self.checks);
        if let Some(g) = bits.row_groups(off, a, b) {
            let out = &mut self.dst[off / bits.per..];
            pack_rows(
                out,
                src,
                other,
                b.other,
                g,
                a.count,
                bits,
                self.stream,
                checks,
            );
            return;
        }
        for i in 0..a.count {
            let start = off + i * a.walk;
            let from = other + i * a.other;
            if b.walk == 1 && start % bits.per == 0 && b.count % bits.per == 0 {
                // Whole bytes: gather `per` values for each.
                let bytes = &mut self.dst[start / bits.per..(start + b.count) / bits.per];
                if b.other == 1 {
                    // A few kilobytes at a time, checked in the cache.
                    let values = &src[from..from + b.count];
                    let step = CHECKED_VALUES / bits.per * bits.per;
                    for (out, values) in bytes.chunks_mut(step / bits.per).zip(values.chunks(step))
                    {
                        pack_bytes(out, values, bits);
                        checks.values(values);
                    }
                    continue;
                }
                for (k, byte) in bytes.iter_mut().enumerate() {
                    let first = from + k * bits.per * b.other;
                    *byte = bits.byte_of(|q| {
                        let v = src[first + q * b.other];
                        checks.value(v);
                        v.to_bits()
                    });
                }
            } else {
                for j in 0..b.count {
                    let v = src[from + j * b.other];
                    checks.value(v);
                    bits.set(self.dst, start + j * b.walk, v.to_bits());
                }
            }
        }
    }

    /// Blocks whose rows are units of 4 bytes (an `s4` `(8,1)` group of a
    /// transposed tile, 8 values) go 16 rows of 16 blocks at a time
    /// through [`UnitTiles`]; the rest a block at a time.
    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        let (x_done, c_done) = match UnitTiles::of(self.bits, off, o, a, b) {
            Some(t) => match T::bits_of(self.src).filter(|_| self.bits.n == 4) {
                Some(bytes) => {
                    let (dst, checks) = (&mut *self.dst, &mut self.checks);
                    t.pack_nibbles(dst, bytes, other, self.stream, checks, &mut self.waiting)
                }
                None => t.pack(self.dst, self.src, other, self.stream, &mut self.checks),
            },
            None => (0, 0),
        };
        rest_of_tiles(self, (off, other), o, a, b, (x_done, c_done));
    }

    fn padding(&mut self, off: usize, len: usize) {
        self.bits.fill(self.dst, off, len, self.fill);
    }

    /// A tile row whose last tile is ragged (its columns of whole bytes,
    /// then padding), with streaming stores: packed and filled in a stage
    /// and streamed as one run, every 16 bytes (the walk writes the tile
    /// rows back to back, so the line split with the one before completes
    /// in the write-combining buffer). Apart,
    /// the columns went streamed and the padding plainly, and the lines
    /// they share cost more than the rest: `s4[165,983,413]` in
    /// `(8,128)(8,1)` tiles packed in 14.9 ms against 20.7 (14 with no
    /// streaming stores at all, which cost the aligned `s4[8192,8192]`
    /// 9.7-9.9 against 7.7), `s4[66576,1008]` 15.2 against 16.7 (best of
    /// three alternated runs, AMD EPYC Zen 4).
    fn block_then_padding(&mut self, off: usize, other: usize, a: Axis, b: Axis, a_len: usize) {
        let bits = self.bits;
        if let Some(g) = bits.row_groups(off, a, b).filter(|_| self.stream) {
            let run = &mut self.dst[off / bits.per..][..a_len * g];
            // The whole steps of the vector kernel streamed straight to
            // storage, the rest through the stage, which then streams from
            // a line on. (All the columns straight there, the run from the
            // stage started where they end, its head written plainly.)
            let whole = a.count / 64 * 64;
            let seen = &mut self.checks.seen;
            let done = nibble_groups(run, self.src, other, b.other, g, whole, bits, true, seen);
            let (len, bytes) = ((a.count - done) * g, (a_len - done) * g);
            // A kilobyte, cleared each time, holds what the kernel leaves
            // (under a tile and a step); a tile row without it takes more.
            let (mut small, mut big);
            let stage: &mut [u8] = if bytes <= 1024 {
                small = [0u8; 1024];
                &mut small
            } else {
                big = [0u8; 4096];
                &mut big
            };
            if bytes <= stage.len() {
                let fill = bits.repeat(self.fill);
                let (from, n, checks) = (other + done, a.count - done, &mut self.checks);
                pack_rows(stage, self.src, from, b.other, g, n, bits, false, checks);
                stage[len..bytes].fill(fill);
                return arch::stream_copy_in_order(&mut run[done * g..], &stage[..bytes]);
            }
            if done > 0 {
                let rest = Axis {
                    count: a.count - done,
                    ..a
                };
                let at = (off + done * a.walk, other + done * a.other);
                return block_then_padding_apart(self, at.0, at.1, (rest, b), a_len - done);
            }
        }
        block_then_padding_apart(self, off, other, (a, b), a_len);
    }

    /// Groups whose last rows are padding (a tile's rows past the edge of
    /// the array): the rows and the fill put together in a stage, then
    /// packed as whole groups. Value by value, with the padding a slot a
    /// group, the 7 rows of the last tiles of `s4[165,983,413]` cost as
    /// much as the other 976.
    fn block_padded(&mut self, off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        let bits = self.bits;
        let Some(g) = bits.short_row_groups(off, a, b, b_len) else {
            let whole = |slots: usize| slots % bits.per == 0;
            if b.walk == 1 && b.other == 1 && whole(off) && whole(a.walk) && whole(b_len) {
                return self.rows_padded(off, other, a, b, b_len);
            }
            return block_padded_apart(self, off, other, (a, b), b_len);
        };
        let mut stage = [0u8; SHORT_GROUPS];
        let width = SHORT_GROUPS / b_len / 64 * 64;
        for x0 in (0..a.count).step_by(width) {
            let cols = width.min(a.count - x0);
            for (r, row) in stage.chunks_exact_mut(width).take(b_len).enumerate() {
                if r < b.count {
                    let values = &self.src[other + r * b.other + x0..][..cols];
                    for (byte, v) in row.iter_mut().zip(values) {
                        *byte = v.to_bits();
                    }
                } else {
                    row[..cols].fill(self.fill);
                }
            }
            // Checked there: the values' bytes, and the fill, which fits.
            let out = &mut self.dst[off / bits.per + x0 * g..];
            let checks = &mut self.checks;
            pack_rows(out, &stage, 0, width, g, cols, bits, self.stream, checks);
        }
    }

    fn spread(&self) -> Option<usize> {
        Some(SPREAD_ROWS)
    }
}

/// Values a piece of the checks that follow the pack, a row or a chunk of
/// one at a time ([`Checks`]): they read the values from the cache.
const CHECKED_VALUES: usize = 4096;

/// Bytes of the stage of groups cut short (`PackBits::block_padded`, and
/// the same blocks unpacked): a run of 4 KiB for each pass, the rows of
/// an `(8,1)` group 512 columns long.
const SHORT_GROUPS: usize = 4096;

/// The blocks of a `block3` outside the `x_done` values of `o` and the
/// `c_done` rows of `a` that [`UnitTiles`] moved, a block at a time.
fn rest_of_tiles<V: Visitor>(
    v: &mut V,
    (off, other): (usize, usize),
    o: Axis,
    a: Axis,
    b: Axis,
    (x_done, c_done): (usize, usize),
) {
    let rows = Axis {
        count: a.count - c_done,
        ..a
    };
    for x in 0..o.count {
        let (off, other) = (off + x * o.walk, other + x * o.other);
        if x < x_done {
            if rows.count > 0 {
                v.block(off + c_done * a.walk, other + c_done * a.other, rows, b);
            }
        } else {
            v.block(off, other, a, b);
        }
    }
}

/// Blocks `a` x `b` for each value of `o` whose rows are units of 4
/// bytes of storage, one value of `o` after the other: `b` runs over
/// `32 / n` values contiguous on both sides, `a`'s units lie back to back
/// in storage, and `o` continues each row on the logical side. Transposed
/// sub-byte tiles (`s4` in `(8,1)` groups with `{0,1}`) are such blocks:
/// a row a call, each moved 8 values with a call's bookkeeping (0.05-0.07
/// of the copy). In 16x16 tiles of units instead, each a line of both
/// sides: the `s4` pack a band of 16 logical rows at a time, squeezed
/// into a stage and transposed out of it ([`UnitTiles::nibble_bands`]);
/// the `s4` unpack spread and transposed in registers by
/// [`arch::unpack_nibble_tile16`] (19.6 ms against 17.4 through a stage
/// before its runs were asked for ahead); for the narrower widths, 16
/// logical rows' 16 units packed (or unpacked) in a stage, and the units
/// transposed between the stage and storage by [`arch::tile16`].
#[derive(Clone, Copy)]
pub(crate) struct UnitTiles {
    bits: Bits,
    /// Values a unit.
    vals: usize,
    /// Bytes of storage from one value of `o` to the next, and of the
    /// first unit (the rows of `a` are units, 4 bytes apart).
    x_step: usize,
    at: usize,
    /// Logical values from one row of `a` to the next.
    pitch: usize,
    /// Tiles down `o` and along `a`.
    tiles: (usize, usize),
    /// Values of `o` and rows of `a`.
    counts: (usize, usize),
}

impl UnitTiles {
    fn of(bits: Bits, off: usize, o: Axis, a: Axis, b: Axis) -> Option<UnitTiles> {
        let vals = 32 / bits.n as usize;
        let fits = b.walk == 1
            && b.other == 1
            && b.count == vals
            && a.walk == vals
            && o.other == vals
            && off % vals == 0
            && o.walk % vals == 0
            && o.count >= 16
            && a.count >= 16
            && arch::TileKernel::best().is_some();
        fits.then(|| UnitTiles {
            bits,
            vals,
            x_step: o.walk / bits.per,
            at: off / bits.per,
            pitch: a.other,
            tiles: (o.count / 16, a.count / 16),
            counts: (o.count, a.count),
        })
    }

    /// Storage bytes of the 16 units of tile `(tx, tc)` down `o`.
    fn runs(self, tx: usize, tc: usize) -> [usize; 16] {
        self.runs_at(16 * tx, 16 * tc)
    }

    /// Storage bytes of the 16 runs from `x` on, each at row `c` of `a`.
    fn runs_at(self, x: usize, c: usize) -> [usize; 16] {
        core::array::from_fn(|k| self.unit(x + k, c))
    }

    /// Storage byte of unit `c` (a row of `a`) of run `x` (a value of `o`).
    fn unit(self, x: usize, c: usize) -> usize {
        self.at + x * self.x_step + 4 * c
    }

    /// Logical positions of the 16 rows of tile `(tx, tc)`, from `other`.
    fn logical(self, other: usize, tx: usize, tc: usize) -> [usize; 16] {
        let run = 16 * self.vals;
        core::array::from_fn(|c| other + (16 * tc + c) * self.pitch + tx * run)
    }

    /// Packs the tiles from `src` (logical, the first row at `other`) into
    /// `dst`, checking the values; returns the values of `o` and rows of
    /// `a` done: the widths other than `s4` (which go through
    /// [`pack_nibbles`](Self::pack_nibbles)), each tile's rows asked for
    /// [`UNITS_AHEAD`] tiles on and packed a word of 8 values at a time
    /// ([`pack_words`]). The way back there goes a byte at a time
    /// ([`unpack_bytes`]: 23 ms, a word at a time 41).
    fn pack<T: BitElement>(
        self,
        dst: &mut [u8],
        src: &[T],
        other: usize,
        stream: bool,
        checks: &mut Checks,
    ) -> (usize, usize) {
        let run = 16 * self.vals;
        let mut stage = [0u8; 1024];
        let from: [usize; 16] = core::array::from_fn(|c| 64 * c);
        let mut done = true;
        // Along the logical rows, 16 at a time: each read as one stream.
        for tc in 0..self.tiles.1 {
            for tx in 0..self.tiles.0 {
                let rows = self.logical(other, tx, tc);
                for (&row, unit) in rows.iter().zip(stage.chunks_exact_mut(64)) {
                    let ahead = row + UNITS_AHEAD * run;
                    arch::prefetch_span(src, ahead, ahead + run);
                    let values = &src[row..][..run];
                    pack_words(unit, values, self.bits);
                    checks.values(values);
                }
                let to = self.runs(tx, tc);
                done &= arch::tile16(dst, &to, &stage, &from, stream)
                    || arch::tile16(dst, &to, &stage, &from, false);
            }
        }
        if done {
            (16 * self.tiles.0, 16 * self.tiles.1)
        } else {
            (0, 0)
        }
    }

    /// The `s4` tiles of [`pack`](Self::pack), from the values' bytes, in
    /// bands of 16 logical rows ([`nibble_bands`](Self::nibble_bands)).
    /// Where the runs start inside their lines (a `Vec`'s data starts 16
    /// bytes into one), the rows past the block's last line boundary wait
    /// in `waiting` for the walk's next block, which continues them on
    /// the same lines, so that those lines go out whole too; rows that
    /// the next block does not continue go plainly then, or at the end
    /// ([`PackBits::settle`]). Written plainly at once, the rows at the
    /// two ends of each block took the transposed `s4[15262,4397]` pack
    /// into a `Vec` from 10.7-15.2 ms to 17.1-23.4 (Intel Xeon, caches
    /// flushed, best of six in each of six runs taken in turn).
    fn pack_nibbles(
        self,
        dst: &mut [u8],
        bytes: &[u8],
        other: usize,
        stream: bool,
        checks: &mut Checks,
        waiting: &mut Waiting,
    ) -> (usize, usize) {
        if !self.inside(dst, bytes, other) {
            return (0, 0);
        }
        let (tiles, from) = match waiting.take() {
            Some((w, w_other)) if w.continued_by(w_other, self, other) => {
                let rows = w.counts.1 + self.counts.1;
                let joined = UnitTiles {
                    counts: (self.counts.0, rows),
                    ..w
                };
                (joined, w_other)
            }
            Some((w, w_other)) => {
                w.nibble_bands(dst, bytes, w_other, stream, checks, None);
                (self, other)
            }
            None => (self, other),
        };
        tiles.nibble_bands(dst, bytes, from, stream, checks, Some(waiting));
        self.counts
    }

    /// Whether every unit of the block lies inside `dst` and every value
    /// it packs inside `bytes` (the rows from `other`): then no kernel of
    /// [`nibble_bands`](Self::nibble_bands) refuses it (the tile kernel
    /// runs here, or [`UnitTiles::of`] would have made no block).
    fn inside(self, dst: &[u8], bytes: &[u8], other: usize) -> bool {
        let (xs, cs) = self.counts;
        let last_unit = self.unit(xs - 1, cs - 1) + 4;
        let last_value = other + (cs - 1) * self.pitch + 8 * xs;
        last_unit <= dst.len() && last_value <= bytes.len()
    }

    /// Whether `next`, from logical position `other`, continues the rows
    /// of `self` (from `from`) on the same runs and logical rows.
    fn continued_by(self, from: usize, next: UnitTiles, other: usize) -> bool {
        let rows = self.counts.1;
        (self.x_step, self.pitch, self.vals, self.counts.0)
            == (next.x_step, next.pitch, next.vals, next.counts.0)
            && next.at == self.at + 4 * rows
            && other == from + rows * self.pitch
    }

    /// Packs the block (its rows from `other`) a band of 16 logical rows
    /// at a time: each row's values along `o` squeezed into bytes of two
    /// ([`arch::squeeze_nibble_pairs`]) in a stage, read one row after
    /// the other (the band's rows lie back to back), then the stage's
    /// units transposed 16 by 16 into the runs ([`arch::tile16`]), a
    /// line of each run a band, streamed; meanwhile the next band's rows
    /// are asked for, a share each tile. Where the runs start inside
    /// their lines, a first band takes the rows before the first line
    /// boundary; bands of fewer than 16 rows go plainly, but for the last
    /// one, which waits in `defer` if given. Tile by tile from 16 rows
    /// read at once (their lines asked for ahead, which waited on the
    /// line buffers), the transposed `s4[15262,4397]` pack into a `Vec`
    /// took 14.7-18.8 ms, so 10.5-14.8 (measured as above). Without the
    /// requests for the next band it takes 12.7-20.3.
    fn nibble_bands(
        self,
        dst: &mut [u8],
        bytes: &[u8],
        other: usize,
        stream: bool,
        checks: &mut Checks,
        mut defer: Option<&mut Waiting>,
    ) {
        let (xs, cs) = self.counts;
        let start = dst.as_ptr().addr().wrapping_add(self.at);
        let lines = stream && self.x_step % 64 == 0 && start % 4 == 0;
        let lead = if lines { (64 - start % 64) % 64 / 4 } else { 0 };
        // Units of `o` a piece: a band's rows split evenly into pieces
        // that the stage holds.
        let width = xs.div_ceil(xs.div_ceil(BAND_UNITS)).next_multiple_of(16);
        let pitch = 4 * width;
        let rows_at = |c0: usize| (if c0 < lead { lead } else { 16 }).min(cs - c0);
        arch::with_wide(0u8, 16 * pitch, |stage| {
            let bands = (lead > 0)
                .then_some(0)
                .into_iter()
                .chain((lead..cs).step_by(16));
            let mut pieces = bands
                .flat_map(|c0| (0..xs).step_by(width).map(move |x0| (c0, x0)))
                .peekable();
            while let Some((c0, x0)) = pieces.next() {
                let rows = rows_at(c0);
                if rows < 16 && c0 > 0 && lines {
                    if let Some(waiting) = defer.take() {
                        let rest = UnitTiles {
                            at: self.unit(0, c0),
                            counts: (xs, cs - c0),
                            ..self
                        };
                        *waiting = Some((rest, other + c0 * self.pitch));
                        return;
                    }
                }
                let n = width.min(xs - x0);
                for r in 0..rows {
                    let values = &bytes[other + (c0 + r) * self.pitch + 8 * x0..][..8 * n];
                    let out = &mut stage[r * pitch..][..4 * n];
                    let done = arch::squeeze_nibble_pairs(out, values, &mut checks.seen);
                    pack_words(&mut out[done / 2..], &values[done..], self.bits);
                    checks.values(&values[done..]);
                }
                // The next piece's rows, or past the block's last row
                // those the walk's next block starts with.
                let (c1, x1) = pieces.peek().copied().unwrap_or((cs, 0));
                let ask = 8 * width.min(xs - x1);
                let tiles = n.div_ceil(16);
                for t in 0..tiles {
                    for r in 0..16 {
                        let row = other + (c1 + r) * self.pitch + 8 * x1;
                        arch::prefetch_span(
                            bytes,
                            row + ask * t / tiles,
                            row + ask * (t + 1) / tiles,
                        );
                    }
                    let from: [usize; 16] = core::array::from_fn(|c| c * pitch + 64 * t);
                    let runs = (n - 16 * t).min(16);
                    if rows == 16 && runs == 16 {
                        let to = self.runs_at(x0 + 16 * t, c0);
                        // Inside (checked by the caller): only streaming
                        // stores off a line are refused.
                        let done = arch::tile16(dst, &to, stage, &from, stream)
                            || arch::tile16(dst, &to, stage, &from, false);
                        debug_assert!(done, "the block's runs lie inside `dst`");
                        continue;
                    }
                    // A band or tile cut short: transposed whole beside,
                    // its own units copied out.
                    let mut tile = [0u8; 1024];
                    let beside = core::array::from_fn(|x| 64 * x);
                    let done = arch::tile16(&mut tile, &beside, stage, &from, false);
                    debug_assert!(done, "a tile beside and the stage hold 16 runs");
                    for (x, units) in tile.chunks_exact(64).take(runs).enumerate() {
                        let at = self.unit(x0 + 16 * t + x, c0);
                        dst[at..][..4 * rows].copy_from_slice(&units[..4 * rows]);
                    }
                }
            }
        });
    }

    /// The `s4` tiles of [`unpack`](Self::unpack), into the values'
    /// bytes. Into logical rows past the cache (`far`), which start
    /// anywhere in their lines, each row's 128 values are joined in
    /// registers to the 64 bytes before them on the row
    /// ([`arch::unpack_nibble_tile16_joined`], a slot of 64 bytes a row
    /// of the 16 in `carry`) and streamed, each row's bytes past its last
    /// line boundary written after its last tile: the transposed
    /// `s4[15262,4397]` unpack took 7.8-8.2 ms so, 11.8-12.7 plainly.
    /// Returns what [`unpack`](Self::unpack) does: nothing done where a
    /// kernel refuses a tile.
    fn unpack_nibbles(
        self,
        src: &[u8],
        dst: &mut [u8],
        other: usize,
        (signed, far): (bool, bool),
    ) -> (usize, usize) {
        let run = 16 * self.vals;
        let join = far && arch::joins_tiles();
        let mut carry = [0u8; 1024];
        for tc in 0..self.tiles.1 {
            for tx in 0..self.tiles.0 {
                if tx + RUNS_AHEAD < self.tiles.0 {
                    for at in self.runs(tx + RUNS_AHEAD, tc) {
                        arch::prefetch_span(src, at, at + 64);
                    }
                }
                let (rows, runs) = (self.logical(other, tx, tc), self.runs(tx, tc));
                let done = if join {
                    let slots = (&mut carry[..], tx == 0);
                    arch::unpack_nibble_tile16_joined(dst, &rows, src, &runs, signed, slots)
                } else {
                    arch::unpack_nibble_tile16(dst, &rows, src, &runs, signed)
                };
                if !done {
                    return (0, 0);
                }
            }
            if join {
                // Each row's bytes past its last line boundary.
                let last = self.logical(other, self.tiles.0 - 1, tc);
                for (&row, slot) in last.iter().zip(carry.chunks_exact(64)) {
                    let end = row + run;
                    let waiting = (64 - to_line_in(dst, end)) % 64;
                    dst[end - waiting..end].copy_from_slice(&slot[64 - waiting..]);
                }
            }
        }
        (16 * self.tiles.0, 16 * self.tiles.1)
    }

    /// The way back of [`pack`](Self::pack), into `dst` from row `other`
    /// on, in the same order: each logical row written as one stream
    /// (tile by tile down the rows instead, the transposed `s4` unpack
    /// took 21-22 ms against 19.5-20).
    fn unpack<T: BitElement>(
        self,
        src: &[u8],
        dst: &mut [T],
        other: usize,
        far: bool,
    ) -> (usize, usize) {
        let run = 16 * self.vals;
        if let Some((bytes, signed)) =
            T::bits_into(dst).filter(|_| self.bits.n == 4 && arch::nibble_tiles())
        {
            // `s4`: each tile transposed and spread in registers.
            return self.unpack_nibbles(src, bytes, other, (signed, far));
        }
        if far {
            if let Some(done) = self.unpack_streamed(src, dst, other) {
                return done;
            }
        }
        let mut stage = [0u8; 1024];
        for tc in 0..self.tiles.1 {
            for tx in 0..self.tiles.0 {
                if !self.tile_rows(&mut stage, src, tx, tc) {
                    return (0, 0);
                }
                let rows = self.logical(other, tx, tc);
                for (&row, units) in rows.iter().zip(stage.chunks_exact(64)) {
                    unpack_bytes(&mut dst[row..][..run], units, self.bits);
                }
            }
        }
        (16 * self.tiles.0, 16 * self.tiles.1)
    }

    /// Tile `(tx, tc)` of `src` transposed into `tile`: its 16 runs'
    /// units of logical row `r` in bytes `64r..64r + 64`. `false` where
    /// the tile kernel refuses the tile's runs.
    fn tile_rows(self, tile: &mut [u8; 1024], src: &[u8], tx: usize, tc: usize) -> bool {
        let to: [usize; 16] = core::array::from_fn(|c| 64 * c);
        arch::tile16(tile, &to, src, &self.runs(tx, tc), false)
    }

    /// [`unpack`](Self::unpack) into logical rows past the cache: each
    /// band of 16 rows unpacked [`PIECE_VALUES`] values a row at a time
    /// into a stage, each row's piece then streamed whole lines at a time
    /// ([`arch::stream_copy_lines`]), the part past its last line boundary
    /// held in the stage before the next piece, so that every line but a
    /// row's two ends goes out whole. Where no kernel spreads the `s4`
    /// tiles in registers ([`arch::nibble_tiles`]), and for the narrower
    /// widths everywhere, this is what keeps each tile's 16 short rows
    /// from being written with plain stores, every line read from memory
    /// before it is overwritten (four times slower on the transposed
    /// `s4[15262,4397]`, AVX2). `None` where the stage does not hold a
    /// band (`T` wider than 64 bytes); `(0, 0)` where the tile kernel
    /// refuses a tile.
    fn unpack_streamed<T: BitElement>(
        self,
        src: &[u8],
        dst: &mut [T],
        other: usize,
    ) -> Option<(usize, usize)> {
        let run = 16 * self.vals;
        // Values of a line: the room before each row's piece for what the
        // last piece held back.
        let slot = line_elements::<T>();
        let tiles_a_piece = (PIECE_VALUES / run).max(1);
        let pitch = slot + tiles_a_piece * run;
        arch::with_wide(T::from_bits(0, self.bits.n), 16 * pitch, |stage| {
            if stage.len() < 16 * pitch {
                return None;
            }
            let mut tile = [0u8; 1024];
            for tc in 0..self.tiles.1 {
                let rows = self.logical(other, 0, tc);
                let mut held = [0usize; 16];
                for t0 in (0..self.tiles.0).step_by(tiles_a_piece) {
                    let n = tiles_a_piece.min(self.tiles.0 - t0);
                    for tx in t0..t0 + n {
                        if tx + RUNS_AHEAD < self.tiles.0 {
                            for at in self.runs(tx + RUNS_AHEAD, tc) {
                                arch::prefetch_span(src, at, at + 64);
                            }
                        }
                        if !self.tile_rows(&mut tile, src, tx, tc) {
                            return Some((0, 0));
                        }
                        for (r, units) in tile.chunks_exact(64).enumerate() {
                            let values = &mut stage[r * pitch + slot + (tx - t0) * run..][..run];
                            unpack_bytes(values, units, self.bits);
                        }
                    }
                    let last = t0 + n == self.tiles.0;
                    for (r, held) in held.iter_mut().enumerate() {
                        let (from, len) = (r * pitch + slot - *held, *held + n * run);
                        let at = rows[r] + t0 * run - *held;
                        // What lies past the piece's last line boundary.
                        let keep = if last {
                            0
                        } else {
                            ((slot - to_line_in(dst, at + len)) % slot).min(len)
                        };
                        let out = len - keep;
                        arch::stream_copy_lines(&mut dst[at..][..out], &stage[from..][..out]);
                        stage.copy_within(from + out..from + len, r * pitch + slot - keep);
                        *held = keep;
                    }
                }
            }
            Some((16 * self.tiles.0, 16 * self.tiles.1))
        })
    }
}

/// Values a row of [`UnitTiles::unpack_streamed`]'s band holds: 16 rows
/// of a kilobyte of bytes, a stage inside the first-level cache.
const PIECE_VALUES: usize = 1024;

/// How many tiles ahead along its 16 logical rows [`UnitTiles::pack`]
/// asks for the rows' values: sixteen streams, too many for the hardware
/// prefetchers to follow, had the pack wait on each load (the
/// transposed `s4[15262,4397]` pack, 4,397-byte rows, took 26-30 ms
/// without, 20-22 with 8 tiles, 23-27 with 16 or 32 on an AMD EPYC Zen
/// 4). On an Intel Xeon with AVX-512 the requests fill the line buffers
/// the streaming stores need: 17.8-18.0 ms without, 17.5-18.9 with 4,
/// 19.3-20.3 with 8 (best of six, three alternated runs). Four, between.
const UNITS_AHEAD: usize = 4;

/// How many rows ahead [`PackBits::rows_padded`] asks for a row's values,
/// which lie a row apart, each on a line of its own: the transposed
/// `s4[15262,4397]` pack took 10.6-18.2 ms without, 10.1-13.7 with 16
/// (best of six in ten runs taken in turn, caches flushed).
const ROWS_AHEAD: usize = 16;

/// The most units of `o` a piece of a band of [`UnitTiles::nibble_bands`]
/// holds: 16 rows of 2 KiB in its stage, inside the first-level cache.
/// Rows of 549 units measured alike whole (a stage of 35 KB) and in two
/// pieces (the transposed `s4[15262,4397]` pack).
const BAND_UNITS: usize = 512;
const _: () = assert!(16 * 4 * BAND_UNITS <= arch::WIDE_BYTES);

/// How many tiles ahead [`UnitTiles::unpack`] asks for a tile's 16 runs
/// of storage, each on a page of its own, which no hardware prefetcher
/// follows: the transposed `s4[15262,4397]` unpack took 17.8-17.9 ms
/// without, 11.4-12.0 with one tile (two or four: 12.0-12.2; AMD EPYC
/// Zen 4).
const RUNS_AHEAD: usize = 1;

/// [`pack_bytes`] for values a multiple of eight (a transposed tile's
/// runs of units), a word at a time ([`pack_words_of`]): through
/// [`pack_bytes`], which splits off the rest, the transposed `s4` pack
/// took 1.11-1.14 times as long.
fn pack_words<T: BitElement>(out: &mut [u8], values: &[T], bits: Bits) {
    match bits.n {
        4 => pack_words_of::<T, 4>(out, values),
        2 => pack_words_of::<T, 2>(out, values),
        _ => pack_words_of::<T, 1>(out, values),
    }
}

/// [`pack_bytes`] for eight `N`-bit values at a time: each eight bytes
/// read as one word, masked and squeezed by shifts of immediates, which
/// the compiler runs on as many words at once as a vector holds. With the
/// width a run-time value (one word at a time) the transposed `s4` pack
/// took 36 ms against 26-30; a byte at a time ([`pack_bytes_of`]) 51.
#[inline]
fn pack_words_of<T: BitElement, const N: u32>(out: &mut [u8], values: &[T]) {
    let mask = u64::from((1u8 << N) - 1) * 0x0101_0101_0101_0101;
    let bytes = N as usize;
    for (o, eight) in out.chunks_exact_mut(bytes).zip(values.chunks_exact(8)) {
        // Masked after: a mask a byte kept the compiler from reading the
        // eight bytes as one word.
        let x = u64::from_le_bytes(core::array::from_fn(|q| eight[q].to_bits())) & mask;
        o.copy_from_slice(&squeeze(x, N).to_le_bytes()[..bytes]);
    }
}

/// Eight fields of `n` bits, one at the bottom of each byte of `x`, packed
/// into the low `8 n` bits, the first lowest: three shift-and-or steps,
/// each halving the fields' count.
#[inline]
fn squeeze(x: u64, n: u32) -> u64 {
    let lanes = |w: u32, every: u64| ((1u64 << w) - 1) * every;
    let y = (x | x >> (8 - n)) & lanes(2 * n, 0x0001_0001_0001_0001);
    let z = (y | y >> (16 - 2 * n)) & lanes(4 * n, 0x0000_0001_0000_0001);
    (z | z >> (32 - 4 * n)) & ((1u64 << (8 * n)) - 1)
}

/// The most rows a block of the sub-byte packs and unpacks spans where
/// its rows lie far apart ([`Visitor::spread`]): their lines, 8 KiB, stay
/// in the first-level cache from one block to the next. A transposed `s4`
/// tile's column of 15,360 rows, a block of its own, read each line
/// afresh for every 8 values (pack and unpack at 0.03-0.04 of the copy).
const SPREAD_ROWS: usize = 128;

/// Packs `values` (contiguous, `per` a byte, whole bytes of them) into
/// `bytes`, the first value lowest: eight at a time as a word
/// ([`pack_words`]), the rest a byte at a time ([`pack_bytes_of`]).
fn pack_bytes<T: BitElement>(bytes: &mut [u8], values: &[T], bits: Bits) {
    let eights = values.len() / 8;
    let (words, rest) = bytes.split_at_mut(eights * bits.n as usize);
    let (word_values, rest_values) = values.split_at(eights * 8);
    pack_words(words, word_values, bits);
    match bits.per {
        2 => pack_bytes_of::<T, 2>(rest, rest_values, bits.mask),
        4 => pack_bytes_of::<T, 4>(rest, rest_values, bits.mask),
        _ => pack_bytes_of::<T, 8>(rest, rest_values, bits.mask),
    }
}

/// [`pack_bytes`] a byte at a time, the count of values a byte known to
/// the compiler: a row of a transposed `s4` tile (8 values, 4 bytes) went
/// value by value with run-time shifts and bounds checks, and its pack
/// at 2 ns a value.
fn pack_bytes_of<T: BitElement, const PER: usize>(bytes: &mut [u8], values: &[T], mask: u8) {
    let n = 8 / PER as u32;
    for (byte, group) in bytes.iter_mut().zip(values.chunks_exact(PER)) {
        *byte = group.iter().enumerate().fold(0, |acc, (q, v)| {
            acc | ((v.to_bits() & mask) << (q as u32 * n))
        });
    }
}

/// The way back of [`pack_bytes`]: each of `bytes` into `per` values.
fn unpack_bytes<T: BitElement>(values: &mut [T], bytes: &[u8], bits: Bits) {
    match bits.per {
        2 => unpack_bytes_of::<T, 2>(values, bytes, bits.mask),
        4 => unpack_bytes_of::<T, 4>(values, bytes, bits.mask),
        _ => unpack_bytes_of::<T, 8>(values, bytes, bits.mask),
    }
}

fn unpack_bytes_of<T: BitElement, const PER: usize>(values: &mut [T], bytes: &[u8], mask: u8) {
    let n = 8 / PER as u32;
    for (group, &byte) in values.chunks_exact_mut(PER).zip(bytes) {
        for (q, v) in group.iter_mut().enumerate() {
            *v = T::from_bits((byte >> (q as u32 * n)) & mask, n);
        }
    }
}

/// Columns per step of [`pack_rows`] and [`unpack_rows`]: a whole tile row
/// of `(8,128)` tiles in one step (measured against 64 on `s4 (8,1)`: pack
/// 0.65-0.9 of `memcpy` to 0.9-1.05, unpack 0.5-0.75 to 0.75-0.85).
const CHUNK: usize = 128;

/// Packs `per * g` logical rows of `n` (row `r` at `src[from + r*pitch..]`)
/// into `n` groups of `g` bytes: byte `q` of group `x` holds rows
/// `q*per..(q+1)*per` of column `x`. Each group of rows is first packed into
/// a byte row on the stack (a shift-and-or over contiguous values, which
/// vectorizes), then the byte rows are interleaved like whole elements,
/// groups of four with streaming stores if `stream`. Every value goes
/// into `checks`: those of the vector kernel as it reads them (see
/// [`nibble_groups`]), the rest a chunk at a time.
#[allow(clippy::too_many_arguments)]
fn pack_rows<T: BitElement>(
    out: &mut [u8],
    src: &[T],
    from: usize,
    pitch: usize,
    g: usize,
    n: usize,
    bits: Bits,
    stream: bool,
    checks: &mut Checks,
) {
    let first = nibble_groups(out, src, from, pitch, g, n, bits, stream, &mut checks.seen);
    if first == n {
        return;
    }
    let mut rows = [0u8; 8 * CHUNK];
    for x0 in (first..n).step_by(CHUNK) {
        let m = CHUNK.min(n - x0);
        let at = from + x0;
        match bits.n {
            4 => byte_rows::<T, 4>(&mut rows, g, &src[at..], pitch, m),
            2 => byte_rows::<T, 2>(&mut rows, g, &src[at..], pitch, m),
            _ => byte_rows::<T, 1>(&mut rows, g, &src[at..], pitch, m),
        }
        for r in 0..g * bits.per {
            checks.values(&src[at + r * pitch..][..m]);
        }
        let done = if stream && g == 4 {
            arch::interleave_stream(&mut out[x0 * g..][..m * g], &rows, CHUNK, m)
        } else {
            0
        };
        let block = Block {
            na: m - done,
            nb: g,
            da: g,
            db: 1,
            sa: 1,
            sb: CHUNK,
        };
        copy_block(out, (x0 + done) * g, &rows, done, block);
    }
}

/// The columns of [`pack_rows`] that go in one pass of vector registers
/// ([`arch::pack_nibble_groups`]: `s4` `(8,1)` groups, where the CPU has
/// the kernel and the values are their bytes), from the first; returns
/// how many. Through byte rows on the stack and an interleave, the `s4`
/// packs took 1.3-1.4 times as long (`s4[66576,1008]` 15.0 ms against
/// 11.3, best of three alternated runs, AMD EPYC Zen 4).
#[allow(clippy::too_many_arguments)]
fn nibble_groups<T: BitElement>(
    out: &mut [u8],
    src: &[T],
    from: usize,
    pitch: usize,
    g: usize,
    n: usize,
    bits: Bits,
    stream: bool,
    seen: &mut arch::Seen,
) -> usize {
    match T::bits_of(src) {
        Some(bytes) if bits.n == 4 && g == 4 => {
            ask_band_share(bytes, from, (8, pitch, n));
            arch::pack_nibble_groups(out, &bytes[from..], pitch, n, stream, seen)
        }
        _ => 0,
    }
}

/// [`pack_rows`]' byte rows for `N`-bit values: row `q` of `rows` packs
/// logical rows `q*per..(q+1)*per` of `src` (`pitch` apart), `m` columns
/// of each, the shifts immediates. With the width a run-time value and
/// each row cleared first, `s4 (8,1)` packs took 1.07-1.16 times as long
/// (`s4[66576,1008]` 18.6 ms against 16.0; five alternated runs, AMD EPYC
/// Zen 4).
#[inline]
fn byte_rows<T: BitElement, const N: u32>(
    rows: &mut [u8],
    g: usize,
    src: &[T],
    pitch: usize,
    m: usize,
) {
    let per = 8 / N as usize;
    let mask = ((1u16 << N) - 1) as u8;
    for (q, row) in rows.chunks_exact_mut(CHUNK).take(g).enumerate() {
        let row = &mut row[..m];
        let first = &src[q * per * pitch..][..m];
        for (acc, v) in row.iter_mut().zip(first) {
            *acc = v.to_bits() & mask;
        }
        for t in 1..per {
            let values = &src[(q * per + t) * pitch..][..m];
            for (acc, v) in row.iter_mut().zip(values) {
                *acc |= (v.to_bits() & mask) << (t as u32 * N);
            }
        }
    }
}

/// The inverse of [`pack_rows`], the rows' lines streamed if `stream`
/// (see [`arch::unpack_nibble_groups`]).
#[allow(clippy::too_many_arguments)]
fn unpack_rows<T: BitElement>(
    input: &[u8],
    dst: &mut [T],
    to: usize,
    pitch: usize,
    g: usize,
    n: usize,
    bits: Bits,
    stream: bool,
) {
    // As `pack_rows` does.
    let first = match T::bits_into(dst) {
        Some((bytes, signed)) if bits.n == 4 && g == 4 => {
            arch::unpack_nibble_groups(&mut bytes[to..], pitch, input, n, signed, stream)
        }
        _ => 0,
    };
    if first == n {
        return;
    }
    let mut rows = [0u8; 8 * CHUNK];
    for x0 in (first..n).step_by(CHUNK) {
        let m = CHUNK.min(n - x0);
        let block = Block {
            na: m,
            nb: g,
            da: 1,
            db: CHUNK,
            sa: g,
            sb: 1,
        };
        // Straight into the kernel where it takes the groups (four bytes,
        // `s4 (8,1)`): through `copy_block` each call costs enough to show.
        let done = arch::deinterleave_groups(g, &mut rows, CHUNK, &input[x0 * g..][..m * g], m);
        let rest = Block {
            na: m - done,
            ..block
        };
        copy_block(&mut rows, done, input, (x0 + done) * g, rest);
        // The widths (1, 2 or 4, as `Bits::new` allows) as constants, so
        // the loops below shift and mask by immediates.
        match bits.n {
            4 => spread_rows::<T, 4>(&rows, g, dst, to, pitch, x0, m),
            2 => spread_rows::<T, 2>(&rows, g, dst, to, pitch, x0, m),
            _ => spread_rows::<T, 1>(&rows, g, dst, to, pitch, x0, m),
        }
    }
}

/// Row `q` of `rows` (bytes of `CHUNK` columns) into logical rows
/// `q*per..(q+1)*per` of `dst`, columns `x0..x0 + m`, for `N`-bit values.
#[allow(clippy::too_many_arguments)]
#[inline]
fn spread_rows<T: BitElement, const N: u32>(
    rows: &[u8],
    g: usize,
    dst: &mut [T],
    to: usize,
    pitch: usize,
    x0: usize,
    m: usize,
) {
    let per = 8 / N as usize;
    let mask = ((1u16 << N) - 1) as u8;
    for (q, row) in rows.chunks_exact(CHUNK).take(g).enumerate() {
        for t in 0..per {
            let start = to + (q * per + t) * pitch + x0;
            let shift = t as u32 * N;
            for (slot, byte) in dst[start..start + m].iter_mut().zip(&row[..m]) {
                *slot = T::from_bits((byte >> shift) & mask, N);
            }
        }
    }
}

/// The most values [`UnpackBits`] stages of a block whose rows are one
/// run of the destination, 8 KiB of bytes: with the kernel writing its
/// rows straight there, every line of them was read before it was
/// written.
const STAGED_ROWS: usize = 8192;

/// Unpacks the walked bit storage into logical values (unpack).
pub(crate) struct UnpackBits<'a, T> {
    pub(crate) src: &'a [u8],
    pub(crate) dst: &'a mut [T],
    pub(crate) bits: Bits,
    /// Whether `dst` is larger than the cache: each block of row groups
    /// then asks for the source [`tiles_ahead`] on, where the walk, in
    /// storage order, reads next.
    pub(crate) far: bool,
    /// The source asked for ahead of the blocks, gaps and all: a block's
    /// values end before its tile row's padding, so spans as long as the
    /// values, a tile row apart, left lines of every tile row unasked,
    /// and the loads waited on them
    /// (`s4[165,983,413]{2,1,0:T(8,128)(8,1)E(4)}` unpacked in 5.2-5.3 ms
    /// against 4.1-4.5 asked whole; AMD EPYC Zen 5).
    pub(crate) asked: Asked,
    /// Where the blocks whose rows are one run of `dst` are unpacked
    /// before they are streamed there, only when `far` and the kernel
    /// writes `T`.
    pub(crate) stage: Option<RunStage<T>>,
}

impl<T: BitElement> UnpackBits<'_, T> {
    /// The stage [`UnpackBits`] needs, when `far`.
    pub(crate) fn stage_for(far: bool, bits: Bits) -> Option<RunStage<T>> {
        // Built only where it is used: small unpacks, called often, would
        // clear its 8 KiB each time.
        if !far {
            return None;
        }
        let mut values = [T::from_bits(0, bits.n); STAGED_ROWS + HELD];
        T::bits_into(&mut values)?;
        Some(RunStage {
            values,
            held: 0,
            at: 0,
        })
    }

    /// Writes what the stage holds back: call once the walk is done.
    pub(crate) fn finish(&mut self) {
        if let Some(stage) = &mut self.stage {
            stage.flush(self.dst);
        }
    }
}

/// Values past a 16-byte boundary of a destination that [`RunStage`]
/// holds back: fewer than 16 one-byte values.
const HELD: usize = 16;

/// A stage for runs of a destination written one after the other, each
/// streamed from it in order: what a run leaves past its last 16-byte
/// boundary is held back and goes at the head of the next, so that every
/// run but the first starts on 16 bytes. Rows of 413 `s4` values, a tile
/// row 3,304 bytes (8 short of a 16-byte boundary), each run streamed
/// whole, its split line written plainly at each end, unpacked in 14.2
/// ms, and written straight from the kernel in 10.5.
pub(crate) struct RunStage<T> {
    values: [T; STAGED_ROWS + HELD],
    /// Values held back, at `values[..held]`, for `dst[at..]`.
    held: usize,
    at: usize,
}

impl<T: Copy> RunStage<T> {
    /// Puts `len` values into the stage with `put`, after what it holds
    /// when they continue it (else that is written first), and streams
    /// all of them to `dst[at..]` up to the last 16-byte boundary.
    fn run(&mut self, dst: &mut [T], at: usize, len: usize, put: impl FnOnce(&mut [T])) {
        if self.held > 0 && self.at + self.held != at {
            self.flush(dst);
        }
        if self.held == 0 {
            self.at = at;
        }
        let total = self.held + len;
        put(&mut self.values[self.held..total]);
        let size = core::mem::size_of::<T>();
        let end = dst[self.at + total..].as_ptr().addr();
        let keep = (end % 16).div_ceil(size).min(total);
        let out = total - keep;
        arch::stream_copy_in_order(&mut dst[self.at..][..out], &self.values[..out]);
        self.values.copy_within(out..total, 0);
        self.at += out;
        self.held = keep;
    }

    /// Writes the values held back.
    fn flush(&mut self, dst: &mut [T]) {
        dst[self.at..][..self.held].copy_from_slice(&self.values[..self.held]);
        self.held = 0;
    }
}

impl<T: BitElement> UnpackBits<'_, T> {
    /// `o` groups of `s4` `(8,1)` tiles 128 columns wide (block `a` x
    /// `b`), each group's eight rows one after another in the
    /// destination and each group after the one before, on both sides (a
    /// rank-1 array's `T(1024)(128)(8,1)E(4)` tiles), past the cache:
    /// in one call of [`arch::unpack_nibble_run`], which joins the rows
    /// into whole lines in registers. Through the [`RunStage`] on the
    /// stack, whose loads waited behind the streaming stores by where the
    /// stack put it, the unpack read 0.84 of the best copy in one bench
    /// process and 0.31-0.33 in two others; so, 1.07-1.14 in four (AMD
    /// EPYC Zen 4). `false`, nothing written, for other blocks.
    fn group_run(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) -> bool {
        let bits = self.bits;
        let fits = self.far
            && bits.n == 4
            && bits.row_groups(off, a, b) == Some(4)
            && a.count == 128
            && b.other == a.count
            && o.walk == a.count * b.count
            && o.other == b.count * b.other;
        if !fits {
            return false;
        }
        // Values the stage holds go first (they end before this run, or
        // elsewhere).
        if let Some(stage) = &mut self.stage {
            stage.flush(self.dst);
        }
        let Some((bytes, signed)) = T::bits_into(self.dst) else {
            return false;
        };
        arch::unpack_nibble_run(bytes, other, self.src, off / bits.per, o.count, signed)
    }
}

impl<T: BitElement> Visitor for UnpackBits<'_, T> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let bits = self.bits;
        if let Some(g) = bits.row_groups(off, a, b) {
            if self.far {
                let (from, len) = (off / bits.per, a.count * g);
                let at = from.saturating_add(tiles_ahead::<u8>(len));
                self.asked.ask(self.src, at, at.saturating_add(len));
            }
            let input = &self.src[off / bits.per..];
            // The rows one run (a row-major array one tile wide or tall):
            // unpacked into a stage and streamed in order from there.
            let len = a.count * g * bits.per;
            let whole = b.other == a.count && len <= STAGED_ROWS;
            if let Some(stage) = self.stage.as_mut().filter(|_| whole) {
                let put =
                    |to: &mut [T]| unpack_rows(input, to, 0, b.other, g, a.count, bits, false);
                return stage.run(self.dst, other, len, put);
            }
            unpack_rows(input, self.dst, other, b.other, g, a.count, bits, self.far);
            return;
        }
        if let Some(g) = bits.short_row_groups(off, a, b, a.walk) {
            // Groups whose last rows are padding: unpacked whole into a
            // stage, the rows that are values copied out.
            let mut stage = [T::from_bits(0, bits.n); SHORT_GROUPS];
            let w = SHORT_GROUPS / a.walk / 64 * 64;
            for x0 in (0..a.count).step_by(w) {
                let m = w.min(a.count - x0);
                let input = &self.src[off / bits.per + x0 * g..];
                unpack_rows(input, &mut stage, 0, w, g, m, bits, false);
                for (r, row) in stage.chunks_exact(w).take(b.count).enumerate() {
                    self.dst[other + r * b.other + x0..][..m].copy_from_slice(&row[..m]);
                }
            }
            return;
        }
        for i in 0..a.count {
            let start = off + i * a.walk;
            let to = other + i * a.other;
            if b.walk == 1 && start % bits.per == 0 && b.count % bits.per == 0 {
                let bytes = &self.src[start / bits.per..(start + b.count) / bits.per];
                if b.other == 1 {
                    unpack_bytes(&mut self.dst[to..to + b.count], bytes, bits);
                    continue;
                }
                for (k, &byte) in bytes.iter().enumerate() {
                    let first = to + k * bits.per * b.other;
                    for q in 0..bits.per {
                        let raw = (byte >> (q as u32 * bits.n)) & bits.mask;
                        self.dst[first + q * b.other] = T::from_bits(raw, bits.n);
                    }
                }
            } else {
                for j in 0..b.count {
                    let raw = bits.get(self.src, start + j * b.walk);
                    self.dst[to + j * b.other] = T::from_bits(raw, bits.n);
                }
            }
        }
    }

    /// See [`PackBits`]' `block3`. Groups whose rows are one run of the
    /// destination, one after another (see [`Self::group_run`]), go in
    /// one call.
    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        if self.group_run(off, other, o, a, b) {
            return;
        }
        let done = match UnitTiles::of(self.bits, off, o, a, b) {
            Some(t) => t.unpack(self.src, self.dst, other, self.far),
            None => (0, 0),
        };
        rest_of_tiles(self, (off, other), o, a, b, done);
    }

    fn padding(&mut self, _off: usize, _len: usize) {}

    fn ignores_padding(&self) -> bool {
        true
    }

    fn spread(&self) -> Option<usize> {
        Some(SPREAD_ROWS)
    }
}

/// Writes the walked bit storage from another bit storage (convert).
pub(crate) struct GatherBits<'a> {
    pub(crate) dst: &'a mut [u8],
    pub(crate) src: &'a [u8],
    pub(crate) bits: Bits,
    pub(crate) fill: u8,
}

impl Visitor for GatherBits<'_> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let bits = self.bits;
        for i in 0..a.count {
            for j in 0..b.count {
                let v = bits.get(self.src, other + i * a.other + j * b.other);
                bits.set(self.dst, off + i * a.walk + j * b.walk, v);
            }
        }
    }

    fn padding(&mut self, off: usize, len: usize) {
        self.bits.fill(self.dst, off, len, self.fill);
    }
}

/// Reads the walked bit storage into another bit storage (convert).
pub(crate) struct ScatterBits<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) dst: &'a mut [u8],
    pub(crate) bits: Bits,
}

impl Visitor for ScatterBits<'_> {
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis) {
        let bits = self.bits;
        for i in 0..a.count {
            for j in 0..b.count {
                let v = bits.get(self.src, off + i * a.walk + j * b.walk);
                bits.set(self.dst, other + i * a.other + j * b.other, v);
            }
        }
    }

    fn padding(&mut self, _off: usize, _len: usize) {}

    fn ignores_padding(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::BitElement;

    /// Values packed into whole bytes (words of eight, then the rest)
    /// land where setting each slot alone puts them, masked, for each
    /// width, values of every kind and runs of one byte to many.
    #[test]
    fn bytes_pack_as_slots_do() {
        for n in [1u32, 2, 4] {
            let bits = super::Bits::new(n).unwrap();
            for seed in 0..2048u64 {
                // Whole bytes of values, a word's worth or not.
                let count = bits.per * (1 + seed as usize % 67);
                let values: Vec<u8> = (0..count)
                    .map(|k| {
                        (seed
                            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                            .rotate_left(k as u32 * 7)
                            & 0xff) as u8
                    })
                    .collect();
                let size = count / bits.per;
                let (mut want, mut got) = (std::vec![0u8; size], std::vec![0xeeu8; size]);
                for (k, &v) in values.iter().enumerate() {
                    bits.set(&mut want, k, v);
                }
                super::pack_bytes(&mut got, &values, bits);
                assert_eq!(got, want, "n {n} values {values:?}");
            }
        }
    }

    /// Sub-byte layouts whose packs stream from 256 bytes on (in this test
    /// build): tiles whole and ragged, tile rows cut short by the last row
    /// under an outer dim, the narrower widths, a rank-1 tiling, and
    /// transposed tiles of 16 by 16 groups, of every width, logical rows
    /// of several pieces (the narrower widths unpacked through
    /// `UnitTiles::unpack_streamed` on every machine, `s4` where no kernel
    /// spreads its tiles in registers).
    const STREAMED: [&str; 10] = [
        "s4[16,1024]{1,0:T(8,128)(8,1)E(4)}",
        "s4[19,300]{1,0:T(8,128)(8,1)E(4)}",
        "s4[5,19,300]{2,1,0:T(8,128)(8,1)E(4)}",
        "u2[40,256]{1,0:T(8,128)(16,1)E(2)}",
        "pred[64,200]{1,0:T(32,128)(32,1)E(1)}",
        "s4[3000]{0:T(1024)(128)(8,1)E(4)}",
        "s4[300,203]{0,1:T(8,128)(8,1)E(4)}",
        "s4[2,40,2300]{1,2,0:T(8,128)(8,1)E(4)}",
        "u2[40,2300]{0,1:T(8,128)(16,1)E(2)}",
        "pred[40,2300]{0,1:T(8,128)(32,1)E(1)}",
    ];

    /// Values of every slot of `l` (`spec`), each one its element type
    /// holds: the low bits sign-extended for a signed type.
    fn held_values(l: &crate::Layout, spec: &str) -> Vec<u8> {
        let n = l.element_bits();
        let signed = spec.starts_with('s');
        (0..l.len())
            .map(|i| (i * 7 + 3) as u8 & ((1 << n) - 1))
            .map(|v| {
                if signed {
                    i8::from_bits(v, n).to_bits()
                } else {
                    v
                }
            })
            .collect()
    }

    /// Packs streamed write what the slot iterator says, and the stale
    /// bytes of the output are all overwritten.
    #[test]
    fn streaming_bit_packs_match_the_slot_iterator() {
        for spec in STREAMED {
            let l = crate::parse(spec).unwrap();
            let n = l.element_bits();
            let mask = (1u8 << n) - 1;
            let logical = held_values(&l, spec);
            let mut want = std::vec![0u8; l.storage_bytes()];
            let bits = super::Bits::new(n).unwrap();
            for (slot, p) in l.slots().enumerate() {
                bits.set(&mut want, slot, p.map_or(0, |p| logical[p]));
            }
            let mut got = std::vec![0xa5u8; l.storage_bytes()];
            l.pack_bits(&logical, &mut got, crate::Options::default())
                .unwrap();
            assert_eq!(got, want, "{spec}");
            // Into logical rows that start at every kind of place in a
            // line: on one, a byte past, a unit past, half a line past.
            let stored: Vec<u8> = logical.iter().map(|v| v & mask).collect();
            let mut buffer = std::vec![0x5au8; l.len() + 128];
            let lead = (64 - buffer.as_ptr().addr() % 64) % 64;
            for start in [0, 1, 4, 32, 63] {
                let at = lead + start;
                buffer.fill(0x5a);
                let back = &mut buffer[at..at + l.len()];
                l.unpack_bits(&got, back, crate::Threads::One).unwrap();
                assert_eq!(back, &stored[..], "{spec}, {start} into a line");
                let outside = buffer[..at].iter().chain(&buffer[at + l.len()..]);
                assert!(outside.into_iter().all(|&b| b == 0x5a), "{spec}, {start}");
            }
        }
    }

    /// Transposed `s4` tiles packed in bands of 16 rows (`UnitTiles::
    /// nibble_bands`) into storage that starts at every place in a line
    /// (so that a block's last rows wait for the next block, on every
    /// boundary, and on none where the runs are not on 4 bytes), against
    /// the slot iterator: blocks that continue one another, blocks of a
    /// next slab that do not (the waiting rows then go on their own),
    /// rows of a band split into pieces, short bands and short tiles, and
    /// the units of the last group cut short, with the fill or zeros.
    /// Nothing outside the storage changes; a value that does not fit in
    /// the rows that waited is refused as any other.
    #[test]
    fn transposed_nibble_bands_match_the_slot_iterator() {
        for spec in [
            "s4[300,203]{0,1:T(8,128)(8,1)E(4)}",
            "s4[3,300,203]{1,2,0:T(8,128)(8,1)E(4)}",
            "s4[40,8300]{0,1:T(8,128)(8,1)E(4)}",
            "s4[291,40]{0,1:T(8,128)(8,1)E(4)}",
            "s4[2,2,150,131]{2,3,1,0:T(8,128)(8,1)E(4)}",
        ] {
            let l = crate::parse(spec).unwrap();
            let logical = held_values(&l, spec);
            let bits = super::Bits::new(4).unwrap();
            let len = l.storage_bytes();
            let mut buffer = std::vec![0u8; len + 128];
            let lead = (64 - buffer.as_ptr().addr() % 64) % 64;
            let fills = [0, 5].into_iter().cycle();
            for (start, fill) in [0, 4, 12, 16, 36, 48, 60, 1, 3].into_iter().zip(fills) {
                let mut want = std::vec![0u8; len];
                for (slot, p) in l.slots().enumerate() {
                    bits.set(&mut want, slot, p.map_or(fill, |p| logical[p]));
                }
                let at = lead + start;
                buffer.fill(0xa5);
                let options = crate::Options::fill(fill);
                l.pack_bits(&logical, &mut buffer[at..at + len], options)
                    .unwrap();
                assert_eq!(
                    buffer[at..at + len],
                    want[..],
                    "{spec}, {start} into a line, fill {fill}"
                );
                let outside = buffer[..at].iter().chain(&buffer[at + len..]);
                assert!(outside.into_iter().all(|&b| b == 0xa5), "{spec}, {start}");
            }
            // The last rows of the first block, which wait for the next,
            // in the squeeze's steps and after them.
            let cols = l.dims()[l.dims().len() - 1];
            for (row, col) in [(115, 9), (127, 9), (127, cols / 8 * 8 - 3), (128, 9)] {
                let position = row * cols + col;
                if position >= l.len() {
                    continue;
                }
                let mut bad = logical.clone();
                bad[position] = 16;
                let storage = &mut buffer[lead + 16..lead + 16 + len];
                let err = l
                    .pack_bits(&bad, storage, crate::Options::default())
                    .unwrap_err();
                assert!(
                    matches!(err, crate::RelayoutError::ValueOutOfRange { position: Some(p), .. } if p == position),
                    "{spec} at {position}: {err:?}"
                );
                assert!(storage.iter().all(|&b| b == 0), "{spec} at {position}");
            }
        }
    }

    /// A value that does not fit is refused wherever it lies, along every
    /// path of the pack (the kernels that check in registers, the rows,
    /// words and bytes checked after them; streamed or not); the storage
    /// is then cleared.
    #[test]
    fn every_value_is_checked_as_it_is_packed() {
        let others = [
            "s4[7,5,3]{0,2,1:T(2,2)}",
            // Transposed tiles of the narrower widths, through a stage.
            "u2[20,260]{0,1:T(16,128)(16,1)E(2)}",
            "pred[20,520]{0,1:T(32,128)(32,1)E(1)}",
            "u4[9001]",
            "u4[17,33]{0,1}",
            "u4[18,33]{0,1}",
            "u2[9,13]{1,0:T(4,8)}",
            "s4[40]",
        ];
        for spec in STREAMED.into_iter().chain(others) {
            let l = crate::parse(spec).unwrap();
            let logical = held_values(&l, spec);
            let mut storage = std::vec![0x5au8; l.storage_bytes()];
            // Every position of the small ones, a spread of the rest.
            let step = (l.len() / 150).max(1);
            for at in (0..l.len()).step_by(step).chain([l.len() - 1]) {
                let mut bad = logical.clone();
                bad[at] = 1 << l.element_bits();
                storage.fill(0x5a);
                let err = l
                    .pack_bits(&bad, &mut storage, crate::Options::default())
                    .unwrap_err();
                assert!(
                    matches!(err, crate::RelayoutError::ValueOutOfRange { position: Some(p), .. } if p == at),
                    "{spec} at {at}: {err:?}"
                );
                assert!(storage.iter().all(|&b| b == 0), "{spec} at {at}");
            }
        }
    }

    /// The first value outside, wherever it lies against the check's
    /// blocks, with more outside after it; `bool`s, checked as bytes too.
    #[test]
    fn the_first_value_outside_is_found() {
        let fit = super::Fit::new(crate::ElementType::S4, 4);
        let len = 3 * 4096 + 77;
        let held: Vec<i8> = (0..len).map(|i| (i % 16) as i8 - 8).collect();
        assert_eq!(fit.first_outside(&held), None);
        for at in [0, 1, 4095, 4096, 4097, 8191, len - 1] {
            let mut bad = held.clone();
            bad[at] = 8;
            for later in [at + 1, at + 4096, len - 1] {
                if later > at && later < len {
                    bad[later] = -9;
                }
            }
            assert_eq!(fit.first_outside(&bad), Some(at));
        }
        let pred = super::Fit::new(crate::ElementType::Pred, 1);
        assert_eq!(pred.first_outside(&[true; 5000]), None);
    }
}
