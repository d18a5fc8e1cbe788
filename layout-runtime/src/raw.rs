//! A [`Layout`] as a flat list of words, each stored as a LEB128 varint
//! (most take one byte), so that `layout!` can print the folded value as
//! one byte-string literal and hand it to the run-time machinery without
//! parsing.
//!
//! The encoding is private to one build: the macro writes it with the same
//! `layout-runtime` that reads it. Reading never panics; bytes that were
//! not written by [`Layout::__bytes`] read as some layout, not an error.
//!
//! `layout!` prints the bytes into a [`Tables`], which decodes them on
//! first use. Both choices are for compile time: a `static Layout` decoded
//! by const evaluation cost every build that was not incremental (release
//! builds) about a third of each invocation's time, whether the program
//! ever asked for its tables or not, and an array of a hundred integer
//! literals costs its own type checking and MIR.

// Every value read back was written from a `usize`, `u32` or `u8` of the
// same build; the saturating reads only guard against foreign input.
#![allow(clippy::cast_possible_truncation)]

use crate::attributes::Attributes;
use crate::closed::Closed;
use crate::code::Code;
use crate::eval::{DigitInverse, DigitOffset};
use crate::fixed::Fixed;
use crate::layout::{Forms, InverseForm, OffsetForm};
use crate::{ElementType, Layout, Tile, TileDim, MAX_TILE_RANK};

/// Reads words in order; past the end every word is 0.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// The next LEB128 varint. Bits past the 64th of an overlong one are
    /// dropped; a varint cut short by the end reads as far as it goes.
    pub(crate) const fn word(&mut self) -> u64 {
        let (mut w, mut shift) = (0u64, 0u32);
        while self.at < self.bytes.len() {
            let b = self.bytes[self.at];
            self.at += 1;
            if shift < u64::BITS {
                w |= ((b & 0x7f) as u64) << shift;
            }
            shift = shift.saturating_add(7);
            if b & 0x80 == 0 {
                break;
            }
        }
        w
    }

    /// The next word, or `max` if it is larger.
    const fn at_most(&mut self, max: u64) -> u64 {
        let w = self.word();
        if w > max {
            max
        } else {
            w
        }
    }

    pub(crate) const fn usize(&mut self) -> usize {
        self.at_most(usize::MAX as u64) as usize
    }

    pub(crate) const fn u8(&mut self) -> u8 {
        self.at_most(u8::MAX as u64) as u8
    }

    /// A length, at most `cap`: foreign words cannot make a reader loop
    /// past a list's capacity.
    pub(crate) const fn count(&mut self, cap: usize) -> usize {
        self.at_most(cap as u64) as usize
    }

    pub(crate) const fn bool(&mut self) -> bool {
        self.word() != 0
    }
}

/// A `layout!` value's folded layout: its words, decoded into a
/// [`Layout`] the first time they are asked for, then shared. `layout!`
/// makes one `static` of it per invocation, which costs compile time only
/// for the words themselves.
#[doc(hidden)]
pub struct Tables {
    bytes: &'static [u8],
    layout: spin::Once<Layout>,
}

impl Tables {
    /// Tables for `bytes`, written by [`Layout::__bytes`]; nothing is
    /// decoded yet.
    #[must_use]
    pub const fn new(bytes: &'static [u8]) -> Self {
        Self {
            bytes,
            layout: spin::Once::new(),
        }
    }

    /// The layout, decoded on the first call by whichever thread comes
    /// first; the others spin until it is there.
    pub fn get(&'static self) -> &'static Layout {
        self.layout.call_once(|| Layout::__from_bytes(self.bytes))
    }
}

/// Where the words go.
pub(crate) type Writer<'a> = &'a mut dyn FnMut(u64);

const fn read_usizes<const N: usize>(r: &mut Reader) -> Fixed<usize, N> {
    let n = r.usize();
    let mut f = Fixed::new(0);
    let mut i = 0;
    while i < n && i < N {
        f.append(r.usize());
        i += 1;
    }
    f
}

fn write_usizes(w: Writer, values: &[usize]) {
    w(values.len() as u64);
    for &v in values {
        w(v as u64);
    }
}

/// `w` as a LEB128 varint: seven bits a byte, low bits first, the high bit
/// set on every byte but the last.
fn write_varint(mut w: u64, out: &mut dyn FnMut(u8)) {
    while w >= 0x80 {
        out((w & 0x7f) as u8 | 0x80);
        w >>= 7;
    }
    out(w as u8);
}

impl Layout {
    /// The bytes [`__from_bytes`](Self::__from_bytes) reads back into this
    /// layout; for `layout!`, which prints them.
    #[doc(hidden)]
    pub fn __bytes(&self, out: &mut dyn FnMut(u8)) {
        self.words(&mut |w| write_varint(w, out));
    }

    fn words(&self, w: Writer) {
        let element = ElementType::ALL
            .iter()
            .position(|&e| e == self.element)
            .unwrap_or(0);
        w(element as u64);
        write_usizes(w, self.dims());
        w(u64::from(self.dynamic));
        write_usizes(w, self.minor_to_major());
        w(self.tiles().len() as u64);
        for t in self.tiles() {
            w(t.dims().len() as u64);
            for d in t.dims() {
                // Sizes are at least 1, so 0 is free for `*`.
                w(match *d {
                    TileDim::Size(n) => n as u64,
                    TileDim::Combine => 0,
                });
            }
        }
        self.attributes.write(w);
        w(self.storage_len as u64);
        w(self.storage_bytes as u64);
        match &self.forms.offset {
            OffsetForm::Closed(c) => {
                w(0);
                c.write(w);
            }
            OffsetForm::Digits(d) => {
                w(1);
                d.write(w);
            }
            OffsetForm::Steps => w(2),
        }
        match &self.forms.inverse {
            InverseForm::Code(c) => {
                w(0);
                c.write(w);
            }
            InverseForm::Digits(d) => {
                w(1);
                d.write(w);
            }
            InverseForm::Fold => w(2),
        }
    }

    /// The layout [`__bytes`](Self::__bytes) wrote; for `layout!`'s statics.
    #[doc(hidden)]
    #[must_use]
    #[allow(clippy::many_single_char_names)]
    pub const fn __from_bytes(bytes: &[u8]) -> Layout {
        let mut r = Reader { bytes, at: 0 };
        let e = r.usize();
        let element = if e < ElementType::ALL.len() {
            ElementType::ALL[e]
        } else {
            ElementType::ALL[0]
        };
        let dims = read_usizes(&mut r);
        // Only bits below `MAX_RANK` can be set.
        let dynamic = (r.word() & 0xffff) as u16;
        let minor_to_major = read_usizes(&mut r);
        let levels = r.usize();
        let mut tiles = Fixed::new(Tile::EMPTY);
        let mut level = 0;
        while level < levels && level < crate::MAX_TILING_LEVELS {
            let n = r.usize();
            let mut dims = [TileDim::Combine; MAX_TILE_RANK];
            let mut i = 0;
            while i < n && i < MAX_TILE_RANK {
                dims[i] = match r.usize() {
                    0 => TileDim::Combine,
                    s => TileDim::Size(s),
                };
                i += 1;
            }
            let n = if n < MAX_TILE_RANK { n } else { MAX_TILE_RANK };
            if let Some(t) = Tile::from_dims(dims.split_at(n).0) {
                tiles.append(t);
            }
            level += 1;
        }
        let attributes = Attributes::read(&mut r);
        let storage_len = r.usize();
        let storage_bytes = r.usize();
        let offset = match r.word() {
            0 => OffsetForm::Closed(Closed::read(&mut r)),
            1 => OffsetForm::Digits(DigitOffset::read(&mut r)),
            _ => OffsetForm::Steps,
        };
        let inverse = match r.word() {
            0 => InverseForm::Code(Code::read(&mut r)),
            1 => InverseForm::Digits(DigitInverse::read(&mut r)),
            _ => InverseForm::Fold,
        };
        let forms = Forms { offset, inverse };
        Layout {
            element,
            dims,
            dynamic,
            minor_to_major,
            tiles,
            attributes,
            storage_len,
            storage_bytes,
            forms,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;
    use std::vec::Vec;

    use super::{write_varint, Reader, Tables};
    use crate::Layout;

    fn bytes(l: &Layout) -> Vec<u8> {
        let mut bytes = Vec::new();
        l.__bytes(&mut |b| bytes.push(b));
        bytes
    }

    /// Words as the writer encodes them, for reading foreign lists.
    fn encode(words: &[u64]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &w in words {
            write_varint(w, &mut |b| bytes.push(b));
        }
        bytes
    }

    fn round_trip(spec: &str) {
        let l = crate::parse(spec).unwrap();
        let back = Layout::__from_bytes(&bytes(&l));
        assert_eq!(back, l, "{spec}");
        assert!(back.forms == l.forms, "{spec}");
        assert_eq!(back.to_string(), l.to_string());
    }

    #[test]
    fn every_form_round_trips() {
        for spec in [
            "f32[]",
            "pred[3]{0:E(1)S(2)}",
            "s4[7,9]{0,1:T(2,4)(2,1)L(8)E(4)}",
            "bf16[64,256]{1,0:T(8,128)(2,1)}",
            "s32[2,<=2,2]{2,0,1}",
            "f32[3,4]{1,0:T()(2,2)}",
            "f64[4,4,4]{1,0,2:T()(7,4,1,1)(8,3,5,7,*,4,4)(2,8,2,4,4,7,2,8,3,2)}",
            "f32[3,<=15]{1,0:T(2,2)}",
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "f32[7,10]{1,0:T(3,4)(2,3)}",
            "f32[3,3,3,3,3,3,3,3,3]{8,7,6,5,4,3,2,1,0:T(2,2,2,2,2,2,2,2,2)(2,1)}",
            "s8[8589934597]{0:T(1000)}",
        ] {
            round_trip(spec);
        }
    }

    #[test]
    fn varints_round_trip() {
        let words = [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            u64::from(u32::MAX),
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        let bytes = encode(&words);
        // One byte up to 7 bits, ten for all 64.
        assert_eq!(encode(&[0x7f]), [0x7f]);
        assert_eq!(encode(&[0x80]), [0x80, 0x01]);
        assert_eq!(encode(&[u64::MAX]).len(), 10);
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
        };
        for &w in &words {
            assert_eq!(r.word(), w);
        }
        assert_eq!(r.word(), 0, "past the end");
    }

    #[test]
    fn malformed_varints_read_without_panic() {
        // Overlong: bits past the 64th dropped, then the next word.
        let mut overlong = [0xff; 20].to_vec();
        overlong.extend([0x7f, 5]);
        let mut r = Reader {
            bytes: &overlong,
            at: 0,
        };
        assert_eq!(r.word(), u64::MAX);
        assert_eq!(r.word(), 5);
        // Cut short by the end.
        let mut r = Reader {
            bytes: &[0x81],
            at: 0,
        };
        assert_eq!((r.word(), r.word()), (1, 0));
    }

    #[test]
    fn tables_decode_once() {
        static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
        let l = crate::parse("bf16[5,300]{0,1:T(8,128)(2,1)}").unwrap();
        let tables = TABLES.get_or_init(|| Tables::new(BYTES.get_or_init(|| bytes(&l))));
        let first: &'static Layout = tables.get();
        assert_eq!(*first, l);
        assert!(
            core::ptr::eq(first, tables.get()),
            "decoded once, then shared"
        );
    }

    #[test]
    fn foreign_words_read_without_panic() {
        let _ = Layout::__from_bytes(&[]);
        let _ = Layout::__from_bytes(&[0xff; 640]);
        let _ = Layout::__from_bytes(&encode(&[u64::MAX; 64]));
        let l = Layout::__from_bytes(&encode(&[7, 99, 1, 2, 3]));
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3), l.to_string());
        // Huge lengths of the compact forms, right where they start.
        let l = Layout::__from_bytes(&encode(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 1, u64::MAX]));
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3));
        let l = Layout::__from_bytes(&encode(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 0, 1, u64::MAX]));
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3), l.index_of(4));
    }
}
