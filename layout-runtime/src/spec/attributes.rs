//! The one table of layout attributes: every `X(..)` that may follow the
//! `:` of a layout, in XLA's print order, with what the library does with it.
//!
//! The parser's dispatch, validation, `Display`, the error catalogue's
//! wording, the TPU chooser, the compact words of `layout!` statics and the
//! macro's type names and constants all read [`ATTRIBUTES`], so they cannot
//! disagree about which attributes exist, how they are spelt or in which
//! order XLA prints them.
//!
//! # Adding an attribute
//!
//! A new attribute touches at most five files:
//!
//! 1. this file: one row of [`ATTRIBUTES`]; for a number, also its slot
//!    constant. A construct XLA prints that we refuse needs its row alone:
//!    the row carries the text shown and the reason.
//! 2. for a number, its typed accessor on `Layout` (`eval/attributes.rs`)
//!    and its setter on `LayoutBuilder` (`validate.rs`): the table reads
//!    no `Layout`, so that `eval/` builds on `spec/`'s data and not back.
//! 3. for a number that changes offsets or sizes, the code that gives it
//!    that meaning (`fold.rs`, or the size computation in `validate.rs`);
//!    for one that `StaticLayout` should expose, the trait's constant and
//!    default in `static_layout.rs` (the row names the constant, and
//!    `layout!` sets it). Metadata such as `S(n)` needs neither.
//! 4. the test that pins its meaning against XLA.
//!
//! Beyond these, test expectations that quote the list of attributes (the
//! "expected an attribute (`T`, `L`, `E`, `S`) or `}`" message in
//! `tests/edges_text.rs` and the `tests/ui` outputs) change with it, as the
//! message does.
//!
//! Everything else follows from the row: the grammar (`X(n)` in table
//! order, at most once), range checks and their errors, `Display`, the
//! duplicate and order errors and the order they quote, the "expected an
//! attribute" message, keeping it or not when the TPU chooser replaces a
//! layout, the compact words of `layout!` statics, and the macro's type
//! names and constants.

use core::fmt;

use crate::spec::error::ErrorKind;

/// One attribute: how it is written and what it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attribute {
    /// How XLA writes it before its group: `T`, `SC`, `#`.
    pub(crate) letters: &'static str,
    pub(crate) kind: Kind,
}

/// What an attribute holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// `T(..)(..)`: the tiling levels, one group each. They are a list, not
    /// a number, and folding reads them, so `Layout` keeps them apart.
    Tiles,
    /// `X(n)`: one non-negative integer.
    Number(Number),
    /// Printed by XLA but without meaning for dense offsets: the parser skips
    /// its groups and reports it.
    Refused {
        /// How the error shows it, e.g. `SC(...)`.
        shown: &'static str,
        /// Why it is rejected.
        why: &'static str,
    },
}

/// An attribute written `X(n)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Number {
    /// Where its value lives in [`Attributes`]; numbers take slots 0, 1, ...
    /// in table order.
    pub(crate) slot: usize,
    /// What the number is, as errors name it.
    pub(crate) what: &'static str,
    /// The largest value XLA keeps faithfully.
    pub(crate) max: u128,
    /// The value that means "not written": XLA's printer omits it (`L(1)`,
    /// `S(0)`), or XLA reads it as unset (`E(0)`).
    pub(crate) unset: u64,
    /// The error for a written zero, when zero is no value of it.
    pub(crate) zero: Option<ErrorKind>,
    /// Whether the TPU chooser keeps it from the layout whose tiling it
    /// replaces (metadata), rather than choosing it afresh.
    pub(crate) tpu_keeps: bool,
    /// The `StaticLayout` constant `layout!` sets when it is written: its
    /// name and primitive type.
    pub(crate) constant: Option<(&'static str, &'static str)>,
    /// Whether `layout!`'s compact words give it a presence word before
    /// the value (kept for `E`, whose words have always had one).
    pub(crate) presence_word: bool,
}

/// Slot of `L(n)`.
pub(crate) const TAIL_ALIGNMENT: usize = 0;
/// Slot of `E(n)`.
pub(crate) const ELEMENT_BITS: usize = 1;
/// Slot of `S(n)`.
pub(crate) const MEMORY_SPACE: usize = 2;

/// Every attribute, in XLA's print order; those we refuse come last, since
/// XLA's order among the ones we read is all the parser checks.
pub(crate) const ATTRIBUTES: &[Attribute] = &[
    Attribute {
        letters: "T",
        kind: Kind::Tiles,
    },
    Attribute {
        letters: "L",
        kind: Kind::Number(Number {
            slot: TAIL_ALIGNMENT,
            what: "`L(n)` alignment",
            max: usize::MAX as u128,
            unset: 1,
            zero: Some(ErrorKind::TailAlignmentZero),
            tpu_keeps: false,
            constant: Some(("TAIL_ALIGNMENT", "usize")),
            presence_word: false,
        }),
    },
    Attribute {
        letters: "E",
        kind: Kind::Number(Number {
            slot: ELEMENT_BITS,
            what: "`E(n)` element size in bits",
            max: crate::MAX_ELEMENT_BITS as u128,
            // XLA reads `E(0)` as "not set"; any other width is taken as
            // written, narrower than the type included (int4 values in `s8`).
            unset: 0,
            zero: None,
            tpu_keeps: false,
            constant: Some(("ELEMENT_BITS", "u32")),
            presence_word: true,
        }),
    },
    Attribute {
        letters: "S",
        kind: Kind::Number(Number {
            slot: MEMORY_SPACE,
            what: "`S(n)` memory space",
            max: crate::MAX_MEMORY_SPACE as u128,
            unset: 0,
            zero: None,
            tpu_keeps: true,
            constant: Some(("MEMORY_SPACE", "u64")),
            presence_word: false,
        }),
    },
    Attribute {
        letters: "D",
        kind: Kind::Refused {
            shown: "D(...)",
            why: "dim level types describe sparse arrays, which have no dense offsets",
        },
    },
    Attribute {
        letters: "#",
        kind: Kind::Refused {
            shown: "#(...)",
            why: "the index type belongs to sparse arrays, which have no dense offsets",
        },
    },
    Attribute {
        letters: "*",
        kind: Kind::Refused {
            shown: "*(...)",
            why: "the pointer type belongs to sparse arrays, which have no dense offsets",
        },
    },
    Attribute {
        letters: "SC",
        kind: Kind::Refused {
            shown: "SC(...)",
            why: "split configs spread one array over several allocations, so one offset cannot name an element",
        },
    },
    Attribute {
        letters: "P",
        kind: Kind::Refused {
            shown: "P(...)",
            why: "a physical shape replaces the layout described here; write that shape's spec instead",
        },
    },
    Attribute {
        letters: "M",
        kind: Kind::Refused {
            shown: "M(...)",
            why: "dynamic shape metadata prefixes the buffer with sizes that are only known at run time",
        },
    },
];

/// A written number attribute as `layout!` prints it: see
/// [`Layout::__attributes`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct WrittenAttribute {
    /// How it is written, e.g. `L`.
    pub letters: &'static str,
    /// The `StaticLayout` constant that holds it, and that constant's
    /// primitive type, if there is one.
    pub constant: Option<(&'static str, &'static str)>,
    /// Its value.
    pub value: u64,
}

/// How many number attributes the table has: the slots of [`Attributes`].
pub(crate) const NUMBERS: usize = count_numbers();

const fn count_numbers() -> usize {
    let mut i = 0;
    let mut n = 0;
    while i < ATTRIBUTES.len() {
        if let Kind::Number(number) = ATTRIBUTES[i].kind {
            // Slots in table order, so the compact words follow the table.
            assert!(
                number.slot == n,
                "number slots must be 0, 1, ... in table order"
            );
            // `layout!` spells written numbers into type names.
            let letters = ATTRIBUTES[i].letters.as_bytes();
            let mut j = 0;
            while j < letters.len() {
                assert!(
                    letters[j].is_ascii_alphabetic(),
                    "numbers are written with letters"
                );
                j += 1;
            }
            n += 1;
        }
        i += 1;
    }
    n
}

/// The attribute written `letters`, with its position in the table.
pub(crate) fn find(letters: &str) -> Option<(usize, &'static Attribute)> {
    ATTRIBUTES
        .iter()
        .enumerate()
        .find(|(_, a)| a.letters == letters)
}

/// Whether the next byte of a spec starts an attribute written as one
/// punctuation character (`#`, `*`): the lexer reads letters as words.
pub(crate) fn punctuation(byte: u8) -> Option<&'static str> {
    ATTRIBUTES
        .iter()
        .map(|a| a.letters)
        .find(|l| l.len() == 1 && l.as_bytes()[0] == byte && !byte.is_ascii_alphabetic())
}

/// The number attributes, in table order.
pub(crate) fn numbers() -> impl Iterator<Item = (&'static str, Number)> {
    ATTRIBUTES.iter().filter_map(|a| match a.kind {
        Kind::Number(n) => Some((a.letters, n)),
        _ => None,
    })
}

/// The values of a layout's number attributes, each its `unset` value when
/// not written, so equal layouts compare and hash equal however they were
/// written (`L(1)` or nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Attributes {
    pub(crate) values: [u64; NUMBERS],
}

impl Attributes {
    /// Nothing written.
    pub(crate) const UNSET: Attributes = Attributes {
        values: unset_values(),
    };

    pub(crate) const fn get(&self, slot: usize) -> u64 {
        self.values[slot]
    }

    /// Sets a slot; its `unset` value unsets it.
    pub(crate) fn set(&mut self, slot: usize, value: u64) {
        self.values[slot] = value;
    }

    /// The written attributes, in XLA's order: letters, number, value.
    pub(crate) fn written(&self) -> impl Iterator<Item = (&'static str, Number, u64)> + '_ {
        numbers()
            .map(|(letters, n)| (letters, n, self.values[n.slot]))
            .filter(|(_, n, v)| *v != n.unset)
    }

    /// Whether any attribute is written.
    pub(crate) fn any(&self) -> bool {
        self.written().next().is_some()
    }
}

pub(crate) const fn unset_values() -> [u64; NUMBERS] {
    let mut values = [0; NUMBERS];
    let mut i = 0;
    while i < ATTRIBUTES.len() {
        if let Kind::Number(n) = ATTRIBUTES[i].kind {
            values[n.slot] = n.unset;
        }
        i += 1;
    }
    values
}

/// The attributes the parser reads, in XLA's order, as `T, L, E, S`.
pub(crate) struct Order;

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let read = ATTRIBUTES
            .iter()
            .filter(|a| !matches!(a.kind, Kind::Refused { .. }));
        for (i, a) in read.enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(a.letters)?;
        }
        Ok(())
    }
}

/// What the grammar expects after the `:` of a layout closed by `close`,
/// naming every attribute it reads, as in
/// ``an attribute (`T`, `L`, `E`, `S`) or `}` ``.
pub(crate) fn expected(close: u8) -> &'static str {
    let text = if close == b'}' {
        &EXPECTED_BRACE
    } else {
        &EXPECTED_ANGLE
    };
    text.as_str()
}

static EXPECTED_BRACE: Text = Text::expected(b'}');
static EXPECTED_ANGLE: Text = Text::expected(b'>');

/// A short text built at compile time from the table, for errors that hold
/// a `&'static str`.
struct Text {
    bytes: [u8; Text::CAP],
    len: usize,
}

impl Text {
    const CAP: usize = 96;

    const fn expected(close: u8) -> Text {
        let mut t = Text {
            bytes: [0; Text::CAP],
            len: 0,
        };
        t.push(b"an attribute (");
        let mut first = true;
        let mut i = 0;
        while i < ATTRIBUTES.len() {
            let a = &ATTRIBUTES[i];
            if !matches!(a.kind, Kind::Refused { .. }) {
                if !first {
                    t.push(b", ");
                }
                first = false;
                t.push(b"`");
                t.push(a.letters.as_bytes());
                t.push(b"`");
            }
            i += 1;
        }
        t.push(b") or `");
        t.push(&[close]);
        t.push(b"`");
        t
    }

    const fn push(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            // Overflowing the buffer fails the build, not a parse.
            self.bytes[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
    }

    fn as_str(&'static self) -> &'static str {
        // Built from `&str` pieces and ASCII, so always UTF-8.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("an attribute")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::collections::HashSet;
    use std::string::ToString;

    use super::*;

    #[test]
    fn letters_are_distinct_and_refused_ones_show_their_letters() {
        let mut seen = HashSet::new();
        for a in ATTRIBUTES {
            assert!(seen.insert(a.letters), "`{}` twice", a.letters);
            if let Kind::Refused { shown, .. } = a.kind {
                assert_eq!(shown.strip_suffix("(...)"), Some(a.letters));
            }
        }
    }

    #[test]
    fn refused_attributes_come_after_the_ones_read() {
        let first_refused = ATTRIBUTES
            .iter()
            .position(|a| matches!(a.kind, Kind::Refused { .. }))
            .unwrap();
        assert!(ATTRIBUTES[first_refused..]
            .iter()
            .all(|a| matches!(a.kind, Kind::Refused { .. })));
    }

    #[test]
    fn texts_name_the_attributes_in_order() {
        assert_eq!(expected(b'}'), "an attribute (`T`, `L`, `E`, `S`) or `}`");
        assert_eq!(expected(b'>'), "an attribute (`T`, `L`, `E`, `S`) or `>`");
        assert_eq!(Order.to_string(), "T, L, E, S");
    }

    #[test]
    fn unset_values_are_not_written() {
        assert!(!Attributes::UNSET.any());
        let mut a = Attributes::UNSET;
        a.set(TAIL_ALIGNMENT, 1);
        assert_eq!(a, Attributes::UNSET);
        a.set(MEMORY_SPACE, 3);
        let written: std::vec::Vec<_> = a.written().map(|(l, _, v)| (l, v)).collect();
        assert_eq!(written, [("S", 3)]);
    }
}
