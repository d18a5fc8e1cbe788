//! A [`Layout`] as a flat list of words, each stored as a LEB128 varint
//! (most take one byte), so that `layout!` can print the folded value as
//! one byte-string literal and hand it to the run-time machinery without
//! parsing.
//!
//! This is the one encoder and decoder of those words: each part of a
//! layout (its attributes, closed forms, compact code and places) is
//! written and read back here, next to the others, and none of the data
//! types it reads knows of it.
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

use crate::eval::closed::Closed;
use crate::eval::code::Code;
use crate::eval::layout::{Forms, InverseForm, OffsetForm};
use crate::eval::{DigitInverse, DigitOffset};
use crate::fixed::Fixed;
use crate::spec::attributes::Attributes;
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

/// The table of attributes, in table order.
mod attributes {
    use super::{Reader, Writer};
    use crate::spec::attributes::{numbers, unset_values, Attributes, Kind, ATTRIBUTES};

    impl Attributes {
        /// The words [`read`](Self::read) takes back, in table order.
        pub(crate) fn write(&self, w: Writer) {
            for (_, n) in numbers() {
                let v = self.values[n.slot];
                if n.presence_word {
                    w(u64::from(v != n.unset));
                }
                w(v);
            }
        }

        /// Reads what [`write`](Self::write) wrote. A value above its `max` is
        /// clamped to it, so foreign words still give values every accessor can
        /// represent.
        pub(crate) const fn read(r: &mut Reader<'_>) -> Attributes {
            let mut values = unset_values();
            let mut i = 0;
            while i < ATTRIBUTES.len() {
                if let Kind::Number(n) = ATTRIBUTES[i].kind {
                    let present = !n.presence_word || r.bool();
                    let v = r.word();
                    if present {
                        values[n.slot] = if v as u128 > n.max { n.max as u64 } else { v };
                    }
                }
                i += 1;
            }
            Attributes { values }
        }
    }
}

/// Closed forms: their live terms, slots and weights.
mod closed {
    use super::{Reader, Writer};
    use crate::eval::closed::{
        any_dims, Closed, ClosedInverse, Kind, Term, MAX_CHECKS, MAX_DIMS, MAX_SUMS, PER_DIM, POOL,
    };

    impl Closed {
        /// Writes the live terms, the slots eight to a word and the weights
        /// only when there are sums: the words `layout!` prints.
        pub(crate) fn write(&self, w: Writer) {
            w(match self.kind {
                Kind::Shifts => 0,
                Kind::Divides => 1,
            });
            let live = self.pool[1..]
                .iter()
                .rposition(|t| *t != Term::ZERO)
                .map_or(0, |p| p + 1);
            w(live as u64);
            for t in &self.pool[1..=live] {
                t.write(w);
            }
            let groups: [[u8; PER_DIM]; MAX_DIMS + MAX_SUMS] =
                core::array::from_fn(|g| match g.checked_sub(MAX_DIMS) {
                    None => self.dims[g],
                    Some(s) => self.sums[s],
                });
            for pair in groups.chunks(2) {
                let word = pair.iter().rev().fold(0u64, |word, slots| {
                    word << 32 | u64::from(u32::from_le_bytes(*slots))
                });
                w(word);
            }
            w(u64::from(self.has_sums));
            if self.has_sums {
                for weights in &self.weights {
                    for &weight in weights {
                        w(weight as u64);
                    }
                }
            }
            if self.kind == Kind::Divides {
                for &weight in &self.linear {
                    w(weight as u64);
                }
            }
        }

        /// The closed form [`write`](Self::write) wrote; any words give one
        /// that evaluates without a panic.
        #[allow(clippy::many_single_char_names)]
        pub(crate) const fn read(r: &mut Reader) -> Closed {
            let mut c = Closed::EMPTY;
            c.kind = match r.word() {
                0 => Kind::Shifts,
                _ => Kind::Divides,
            };
            let live = r.count(POOL - 1);
            let mut i = 1;
            while i <= live {
                c.pool[i] = Term::read(r);
                i += 1;
            }
            let mut g = 0;
            while g < MAX_DIMS + MAX_SUMS {
                let word = r.word();
                let mut half = 0;
                while half < 2 {
                    // Slots index the pool modulo its size, so any byte will do.
                    #[allow(clippy::cast_possible_truncation)]
                    let slots = ((word >> (32 * half)) as u32).to_le_bytes();
                    if g < MAX_DIMS {
                        c.dims[g] = slots;
                    } else {
                        c.sums[g - MAX_DIMS] = slots;
                    }
                    g += 1;
                    half += 1;
                }
            }
            c.has_dims = any_dims(&c.dims);
            c.has_sums = r.bool();
            if c.has_sums {
                let mut s = 0;
                while s < MAX_SUMS {
                    let mut d = 0;
                    while d < MAX_DIMS {
                        c.weights[s][d] = r.usize();
                        d += 1;
                    }
                    s += 1;
                }
            }
            if let Kind::Divides = c.kind {
                let mut d = 0;
                while d < MAX_DIMS {
                    c.linear[d] = r.usize();
                    d += 1;
                }
            }
            c
        }
    }

    impl Term {
        /// Writes the term as [`read`](Self::read) reads it.
        fn write(&self, w: Writer) {
            for word in [u64::from(self.a_shift), self.a_magic, self.b, self.scale] {
                w(word);
            }
        }

        /// The term [`write`](Self::write) wrote; any words give a term that
        /// evaluates without a panic.
        // The shift is masked below 64.
        #[allow(clippy::cast_possible_truncation)]
        const fn read(r: &mut Reader) -> Term {
            Term {
                a_shift: (r.word() & 63) as u8,
                a_magic: r.word(),
                b: r.word(),
                scale: r.word(),
            }
        }
    }

    impl ClosedInverse {
        /// Writes the form: the words `layout!` prints.
        pub(crate) fn write(&self, w: Writer) {
            w(match self.kind {
                Kind::Shifts => 0,
                Kind::Divides => 1,
            });
            let bytes = self.outputs.iter().flatten().flatten();
            let bytes = bytes.chain(self.checks.iter().flatten().flatten());
            let bytes = bytes.chain(&self.bounds);
            for &b in bytes.chain([&self.live_checks]) {
                w(u64::from(b));
            }
        }

        /// The form [`write`](Self::write) wrote; any words give one that
        /// evaluates without a panic: slots are read modulo the capacities.
        pub(crate) const fn read(r: &mut Reader) -> ClosedInverse {
            let mut c = ClosedInverse::EMPTY;
            c.kind = match r.word() {
                0 => Kind::Shifts,
                _ => Kind::Divides,
            };
            let mut i = 0;
            while i < (MAX_DIMS + MAX_CHECKS) * PER_DIM * 3 {
                let (group, slot, byte) = (i / (PER_DIM * 3), i / 3 % PER_DIM, i % 3);
                if group < MAX_DIMS {
                    c.outputs[group][slot][byte] = r.u8();
                } else {
                    c.checks[group - MAX_DIMS][slot][byte] = r.u8();
                }
                i += 1;
            }
            let mut b = 0;
            while b < MAX_CHECKS {
                c.bounds[b] = r.u8();
                b += 1;
            }
            c.live_checks = r.count(MAX_CHECKS) as u8;
            c
        }
    }
}

/// The compact code of the programs without a closed form.
mod code {
    use super::{Reader, Writer};
    use crate::algebra::divide::{Divisor, MAX_CONSTANTS};
    use crate::eval::closed::ClosedInverse;
    use crate::eval::code::{Code, Fast, Ins, Pair, MAX_OPS, MAX_TERMS, ZERO};
    use crate::eval::places::Places;
    use crate::fixed::Fixed;

    impl Ins {
        fn write(self, w: Writer) {
            let (tag, a, b) = match self {
                Ins::Input(n) => (0, n, 0),
                Ins::Div(a, k) => (1, a, k),
                Ins::Mod(a, k) => (2, a, k),
                Ins::Mul(a, k) => (3, a, k),
                Ins::Add(a, b) => (4, a, b),
            };
            w(tag);
            w(u64::from(a));
            w(u64::from(b));
        }

        const fn read(r: &mut Reader) -> Ins {
            let (tag, a, b) = (r.word(), r.u8(), r.u8());
            match tag {
                1 => Ins::Div(a, b),
                2 => Ins::Mod(a, b),
                3 => Ins::Mul(a, b),
                4 => Ins::Add(a, b),
                _ => Ins::Input(a),
            }
        }
    }

    impl Code {
        pub(crate) fn write(&self, w: Writer) {
            w(self.pool.len() as u64);
            for c in self.pool.iter() {
                w(c.value);
                w(c.magic);
            }
            write_ins(w, &self.forward);
            write_pairs(w, &self.terms);
            write_ins(w, &self.inverse);
            write_pairs(w, &self.checks);
            w(self.outputs.len() as u64);
            for &o in self.outputs.iter() {
                w(u64::from(o));
            }
            match &self.fast {
                Fast::None => w(0),
                Fast::Closed(c) => {
                    w(1);
                    c.write(w);
                }
                Fast::Places(p) => {
                    w(2);
                    p.write(w);
                }
            }
        }

        pub(crate) const fn read(r: &mut Reader) -> Code {
            let mut pool = Fixed::new(Divisor::NONE);
            let mut n = r.count(MAX_CONSTANTS);
            while n > 0 {
                let (value, magic) = (r.word(), r.word());
                pool.append(Divisor::from_parts(value, magic));
                n -= 1;
            }
            let forward = read_ins(r);
            let terms = read_pairs(r);
            let inverse = read_ins(r);
            let checks = read_pairs(r);
            let mut outputs = Fixed::new(ZERO);
            let mut n = r.count(crate::MAX_RANK);
            while n > 0 {
                outputs.append(r.u8());
                n -= 1;
            }
            let fast = match r.word() {
                0 => Fast::None,
                1 => Fast::Closed(ClosedInverse::read(r)),
                _ => Fast::Places(Places::read(r)),
            };
            Code {
                pool,
                forward,
                terms,
                inverse,
                checks,
                outputs,
                fast,
            }
        }
    }

    fn write_ins(w: Writer, ops: &[Ins]) {
        w(ops.len() as u64);
        for op in ops {
            op.write(w);
        }
    }

    const fn read_ins(r: &mut Reader) -> Fixed<Ins, MAX_OPS> {
        let mut ops = Fixed::new(Ins::Input(0));
        let mut n = r.count(MAX_OPS);
        while n > 0 {
            ops.append(Ins::read(r));
            n -= 1;
        }
        ops
    }

    fn write_pairs(w: Writer, pairs: &[Pair]) {
        w(pairs.len() as u64);
        for p in pairs {
            w(u64::from(p.step));
            w(u64::from(p.constant));
        }
    }

    const fn read_pairs(r: &mut Reader) -> Fixed<Pair, MAX_TERMS> {
        let mut pairs = Fixed::new(Pair {
            step: 0,
            constant: 0,
        });
        let mut n = r.count(MAX_TERMS);
        while n > 0 {
            let (step, constant) = (r.u8(), r.u8());
            pairs.append(Pair { step, constant });
            n -= 1;
        }
        pairs
    }
}

/// Places of at most one tiling level.
mod places {
    use super::{Reader, Writer};
    use crate::eval::places::{Division, Places, Slots, Value, MAX_DIMS, MAX_PLACES};

    impl Division {
        fn write(self, w: Writer) {
            w(u64::from(self.slot));
            w(u64::from(self.shift));
        }

        /// The division [`write`](Self::write) wrote.
        const fn read(r: &mut Reader) -> Division {
            Division {
                slot: r.u8(),
                shift: r.u8(),
            }
        }
    }

    impl Places {
        /// Writes the form: the words `layout!` prints.
        pub(crate) fn write(&self, w: Writer) {
            w(u64::from(self.limit));
            w(u64::from(self.rank));
            w(u64::from(self.count));
            for r in &self.radixes {
                r.write(w);
            }
            for &m in &self.muls {
                w(u64::from(m));
            }
            for d in &self.dims {
                w(match d.value {
                    Value::Carried => 0,
                    Value::Place => 1,
                    Value::Group => 2,
                });
                w(u64::from(d.outer));
                w(u64::from(d.inner));
                d.extent.write(w);
                w(u64::from(d.split));
                w(u64::from(d.tile));
                w(u64::from(d.bound));
            }
            for &p in &self.position {
                w(u64::from(p));
            }
        }

        /// The form [`write`](Self::write) wrote; any words give one that
        /// evaluates without a panic: slots are read modulo the capacities.
        pub(crate) const fn read(r: &mut Reader) -> Places {
            let mut p = Places {
                limit: r.u8(),
                radixes: [Division::UNREAD; MAX_PLACES],
                count: 0,
                muls: [0; MAX_PLACES + MAX_DIMS],
                dims: [Slots::EMPTY; MAX_DIMS],
                position: [0; MAX_DIMS],
                rank: r.count(MAX_DIMS) as u8,
            };
            p.count = r.count(MAX_PLACES) as u8;
            let mut i = 0;
            while i < MAX_PLACES {
                p.radixes[i] = Division::read(r);
                i += 1;
            }
            let mut i = 0;
            while i < MAX_PLACES + MAX_DIMS {
                p.muls[i] = r.word() as u32;
                i += 1;
            }
            let mut i = 0;
            while i < MAX_DIMS {
                let value = match r.word() {
                    0 => Value::Carried,
                    1 => Value::Place,
                    _ => Value::Group,
                };
                p.dims[i] = Slots {
                    value,
                    outer: r.u8(),
                    inner: r.u8(),
                    extent: Division::read(r),
                    split: r.bool(),
                    tile: r.u8(),
                    bound: r.u8(),
                };
                i += 1;
            }
            let mut i = 0;
            while i < MAX_DIMS {
                p.position[i] = r.u8();
                i += 1;
            }
            p
        }
    }
}

/// The forms compiled from a layout's digits.
mod digits {
    use super::{Reader, Writer};
    use crate::algebra::MAX_DIGITS;
    use crate::eval::digits::{DigitInverse, DigitOffset, Term, NO_TERM, SLOTS};
    use crate::MAX_RANK;

    impl DigitOffset {
        /// The words [`read`](Self::read) reads back, for `layout!`'s tables.
        pub(crate) fn write(&self, w: Writer) {
            for (shifts, scales) in self.shifts.iter().zip(&self.scales) {
                for (&shift, &scale) in shifts.iter().zip(scales) {
                    w(u64::from(shift));
                    w(scale as u64);
                }
            }
            w(u64::from(self.third));
        }

        /// The form [`write`](Self::write) wrote; any words give a form that
        /// evaluates without a panic.
        #[allow(clippy::cast_possible_truncation)]
        pub(crate) const fn read(r: &mut Reader) -> DigitOffset {
            let mut shifts = [[0; SLOTS]; MAX_RANK];
            let mut scales = [[0; SLOTS]; MAX_RANK];
            let mut d = 0;
            while d < MAX_RANK {
                let mut k = 0;
                while k < SLOTS {
                    shifts[d][k] = (r.word() & 63) as u8;
                    scales[d][k] = r.word() as usize;
                    k += 1;
                }
                d += 1;
            }
            DigitOffset {
                shifts,
                scales,
                third: r.word() != 0,
            }
        }
    }

    impl DigitInverse {
        /// The words [`read`](Self::read) reads back, for `layout!`'s tables.
        pub(crate) fn write(&self, w: Writer) {
            w(u64::from(self.fields));
            w(u64::from(self.steps));
            w(u64::from(self.straight));
            w(u64::from(self.minor_bits));
            w(self.minor_padding);
            for (&at, &mask) in self.at.iter().zip(&self.masks) {
                w(u64::from(at));
                w(mask);
            }
            w(self.over);
            w(self.guards);
            w(self.slots as u64);
            for t in &self.terms {
                w(t.a);
                w(t.mul);
            }
        }

        /// The form [`write`](Self::write) wrote; any words give a form that
        /// evaluates without a panic.
        #[allow(clippy::cast_possible_truncation)]
        pub(crate) const fn read(r: &mut Reader) -> DigitInverse {
            let fields = r.count(MAX_DIGITS);
            let steps = r.count(MAX_DIGITS - fields);
            let mut form = DigitInverse {
                terms: [NO_TERM; MAX_DIGITS],
                fields: fields as u8,
                steps: steps as u8,
                straight: r.word() != 0,
                minor_bits: r.u8(),
                minor_padding: r.word(),
                at: [0; MAX_RANK],
                masks: [0; MAX_RANK],
                over: 0,
                guards: 0,
                slots: 0,
            };
            let mut d = 0;
            while d < MAX_RANK {
                form.at[d] = (r.word() & 63) as u8;
                form.masks[d] = r.word();
                d += 1;
            }
            form.over = r.word();
            form.guards = r.word();
            form.slots = r.usize();
            let mut i = 0;
            while i < MAX_DIGITS {
                form.terms[i] = Term {
                    a: r.word(),
                    mul: r.word(),
                };
                i += 1;
            }
            form
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
