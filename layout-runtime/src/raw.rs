//! A [`Layout`] as a flat list of words, so that `layout!` can print the
//! folded value as a `static` and hand it to the run-time machinery without
//! parsing.
//!
//! The encoding is private to one build: the macro writes it with the same
//! `layout-runtime` that reads it. Reading never panics; a list that was
//! not written by [`Layout::__words`] reads as some layout, not an error.

// Every value read back was written from a `usize`, `u32` or `u8` of the
// same build; the saturating reads only guard against foreign input.
#![allow(clippy::cast_possible_truncation)]

use crate::attributes::Attributes;
use crate::closed::Closed;
use crate::code::Code;
use crate::fixed::Fixed;
use crate::{ElementType, Layout, Tile, TileDim, MAX_TILE_RANK};

/// Reads words in order; past the end every word is 0.
pub(crate) struct Reader<'a> {
    words: &'a [u64],
    at: usize,
}

impl Reader<'_> {
    pub(crate) const fn word(&mut self) -> u64 {
        if self.at < self.words.len() {
            self.at += 1;
            self.words[self.at - 1]
        } else {
            0
        }
    }

    pub(crate) const fn usize(&mut self) -> usize {
        let w = self.word();
        if w > usize::MAX as u64 {
            usize::MAX
        } else {
            w as usize
        }
    }

    pub(crate) const fn u8(&mut self) -> u8 {
        let w = self.word();
        if w > u8::MAX as u64 {
            u8::MAX
        } else {
            w as u8
        }
    }

    /// A length, at most `cap`: foreign words cannot make a reader loop
    /// past a list's capacity.
    pub(crate) const fn count(&mut self, cap: usize) -> usize {
        let n = self.usize();
        if n < cap {
            n
        } else {
            cap
        }
    }

    pub(crate) const fn bool(&mut self) -> bool {
        self.word() != 0
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

impl Layout {
    /// The words [`__from_words`](Self::__from_words) reads back into this
    /// layout; for `layout!`, which prints them.
    #[doc(hidden)]
    pub fn __words(&self, w: &mut dyn FnMut(u64)) {
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
        w(self.len as u64);
        w(self.storage_len as u64);
        w(self.storage_bytes as u64);
        w(u64::from(self.closed.is_some()));
        if let Some(c) = &self.closed {
            c.write(w);
        }
        w(u64::from(self.code.is_some()));
        if let Some(c) = &self.code {
            c.write(w);
        }
    }

    /// The layout [`__words`](Self::__words) wrote; for `layout!`'s statics.
    #[doc(hidden)]
    #[must_use]
    #[allow(clippy::many_single_char_names)]
    pub const fn __from_words(words: &[u64]) -> Layout {
        let mut r = Reader { words, at: 0 };
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
        let len = r.usize();
        let storage_len = r.usize();
        let storage_bytes = r.usize();
        let closed = if r.bool() {
            Some(Closed::read(&mut r))
        } else {
            None
        };
        let code = if r.bool() {
            Some(Code::read(&mut r))
        } else {
            None
        };
        Layout {
            element,
            dims,
            dynamic,
            minor_to_major,
            tiles,
            attributes,
            len,
            storage_len,
            storage_bytes,
            closed,
            code,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;
    use std::vec::Vec;

    use crate::Layout;

    fn round_trip(spec: &str) {
        let l = crate::parse(spec).unwrap();
        let mut words = Vec::new();
        l.__words(&mut |w| words.push(w));
        let back = Layout::__from_words(&words);
        assert_eq!(back, l, "{spec}");
        assert_eq!(back.closed, l.closed, "{spec}");
        assert_eq!(back.code, l.code, "{spec}");
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
    fn foreign_words_read_without_panic() {
        let _ = Layout::__from_words(&[]);
        let _ = Layout::__from_words(&[u64::MAX; 64]);
        let l = Layout::__from_words(&[7, 99, 1, 2, 3]);
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3), l.to_string());
        // Huge lengths of the compact forms, right where they start.
        let l = Layout::__from_words(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 1, u64::MAX]);
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3));
        let l = Layout::__from_words(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 0, 1, u64::MAX]);
        let _ = (l.offset_unchecked(&[1, 2]), l.index_of(3), l.index_of(4));
    }
}
