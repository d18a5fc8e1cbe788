//! A grammar-aware generator of layout specs and a mutator of spec text, for
//! the hostile-input tests.
//!
//! The generator walks SPEC.md §1 and writes specs that are valid by
//! construction: any element type in any case, optional white space between
//! tokens, `{}` or `<>`, bounded dynamic dims `<=N`, a `minor_to_major`
//! permutation, tiling levels with `*` (never most minor) and empty ones
//! (`T()`), and `L`, `E` (narrower than the type too), `S` in XLA's order. Next to the text it
//! keeps what the text means, so a test can check the parsed layout field by
//! field and the canonical form it should print.
//!
//! The mutator damages spec text the way files, peers and typos do: it deletes,
//! repeats, swaps and truncates, splices two specs, and inserts grammar
//! punctuation, attribute letters, numbers at the edges of `usize`, `i64` and
//! `u128`, white space, NUL, control and non-ASCII characters.
//!
//! This file depends on nothing but `std`: the facade tests include it as
//! `common::specgen`, and the macro crate's unit tests include the very same
//! file with `#[path]`, so both feed the same inputs to `parse` and to the
//! macro's expansion.

use std::fmt::Write as _;

pub use super::rng::Rng;

/// XLA's element types: canonical name, storage bits, bits of a value.
pub const ELEMENTS: &[(&str, u32, u32)] = &[
    ("pred", 8, 1),
    ("s1", 1, 1),
    ("s2", 2, 2),
    ("s4", 4, 4),
    ("s8", 8, 8),
    ("s16", 16, 16),
    ("s32", 32, 32),
    ("s64", 64, 64),
    ("u1", 1, 1),
    ("u2", 2, 2),
    ("u4", 4, 4),
    ("u8", 8, 8),
    ("u16", 16, 16),
    ("u32", 32, 32),
    ("u64", 64, 64),
    ("f16", 16, 16),
    ("f32", 32, 32),
    ("bf16", 16, 16),
    ("f64", 64, 64),
    ("f4e2m1fn", 4, 4),
    ("f6e2m3fn", 8, 6),
    ("f6e3m2fn", 8, 6),
    ("f8e3m4", 8, 8),
    ("f8e4m3", 8, 8),
    ("f8e4m3fn", 8, 8),
    ("f8e4m3b11fnuz", 8, 8),
    ("f8e4m3fnuz", 8, 8),
    ("f8e5m2", 8, 8),
    ("f8e5m2fnuz", 8, 8),
    ("f8e8m0fnu", 8, 8),
    ("c64", 64, 64),
    ("c128", 128, 128),
];

/// Numbers at the edges of the integer types the core uses, as text.
pub const EDGE_NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "127",
    "128",
    "129",
    "255",
    "256",
    "4096",
    "4097",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "0000000000000000000000000000000000000001",
    "99999999999999999999999999999999999999999999999999",
];

/// Text the mutator inserts: the grammar's punctuation and letters, the
/// constructs XLA prints that the core rejects, and characters no spec holds.
const INSERTS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "(",
    ")",
    ",",
    ":",
    "*",
    "-",
    "?",
    "<=",
    "#",
    "=",
    "T",
    "L",
    "E",
    "S",
    "P",
    "SC",
    "M",
    "D",
    "T(",
    "(2,1)",
    "(*,2)",
    "(0)",
    "()",
    "E(",
    "L(",
    "S(",
    "P(",
    "P(((",
    ")))",
    "#(",
    "*(",
    "SC(1)",
    "M(2)",
    "D(C)",
    "f32",
    "bf16",
    "token",
    "tuple",
    "(f32[2]",
    ", f32[3]",
    "{1,0}",
    ":T(8,128)",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\0",
    "\u{1}",
    "\u{7f}",
    "\u{a0}",
    "\u{3000}",
    "\u{200b}",
    "\u{202e}",
    "\u{feff}",
    "é",
    "ß",
    "Σ",
    "😀",
    "\u{10ffff}",
];

/// A generated valid spec: its text and what the text means.
#[derive(Clone, Debug)]
pub struct GenSpec {
    /// The text, with the generator's choices of case, brackets and spacing.
    pub text: String,
    /// Canonical (lowercase) element type name.
    pub type_name: &'static str,
    /// Storage bits of the element type (no `E(n)`).
    pub type_bits: u32,
    /// Logical dims in written order (a bounded dynamic dim at its bound).
    pub dims: Vec<usize>,
    /// Which dims are written `<=N`.
    pub dynamic: Vec<bool>,
    /// The effective `minor_to_major` (row-major when none is written).
    pub minor_to_major: Vec<usize>,
    /// One entry per tiling level, major to minor; `None` is `*`.
    pub tiles: Vec<Vec<Option<usize>>>,
    /// `L(n)`, 1 when not written.
    pub tail_alignment: usize,
    /// `E(n)` when written and not 0 (XLA reads `E(0)` as "not set").
    pub element_bits: Option<u32>,
    /// `S(n)`, 0 when not written.
    pub memory_space: u64,
}

impl GenSpec {
    /// What `Display` must print: lowercase type, `{}`, no spaces, attributes
    /// in XLA's order, defaults left out, and no `{}` for an untiled scalar
    /// with nothing else to say.
    pub fn canonical(&self) -> String {
        let mut attrs = String::new();
        if !self.tiles.is_empty() {
            attrs.push('T');
            for tile in &self.tiles {
                attrs.push('(');
                attrs.push_str(&join(
                    tile.iter().map(|d| d.map_or("*".into(), |n| n.to_string())),
                ));
                attrs.push(')');
            }
        }
        if self.tail_alignment != 1 {
            let _ = write!(attrs, "L({})", self.tail_alignment);
        }
        if let Some(bits) = self.element_bits {
            let _ = write!(attrs, "E({bits})");
        }
        if self.memory_space != 0 {
            let _ = write!(attrs, "S({})", self.memory_space);
        }
        let mut text = format!("{}[{}]", self.type_name, join(self.dim_texts()));
        if self.dims.is_empty() && attrs.is_empty() {
            return text;
        }
        text.push('{');
        text.push_str(&join(self.minor_to_major.iter().map(ToString::to_string)));
        if !attrs.is_empty() {
            text.push(':');
            text.push_str(&attrs);
        }
        text.push('}');
        text
    }

    /// Each dim as written: `N`, or `<=N` for a bounded dynamic dim.
    pub fn dim_texts(&self) -> impl Iterator<Item = String> + '_ {
        self.dims
            .iter()
            .zip(&self.dynamic)
            .map(|(d, &dy)| if dy { format!("<={d}") } else { d.to_string() })
    }

    /// The number of elements, exactly (saturating at `u128::MAX`, far above
    /// any `usize`).
    pub fn exact_len(&self) -> u128 {
        if self.dims.contains(&0) {
            return 0;
        }
        self.dims
            .iter()
            .fold(1u128, |a, &d| a.saturating_mul(d as u128))
    }

    /// The physical shape after every tiling level, by SPEC.md §4, in `u128`
    /// with saturation; `zero_as_one` replaces zero dims by 1 to get an upper
    /// bound on every intermediate product.
    pub fn tiled_shape(&self, zero_as_one: bool) -> Vec<u128> {
        let rank = self.dims.len();
        let mut shape: Vec<u128> = (0..rank)
            .map(|p| {
                let d = self.dims[self.minor_to_major[rank - 1 - p]] as u128;
                if zero_as_one {
                    d.max(1)
                } else {
                    d
                }
            })
            .collect();
        for tile in &self.tiles {
            while shape.len() < tile.len() {
                shape.insert(0, 1);
            }
            let prefix = shape.len() - tile.len();
            let mut counts = Vec::new();
            let mut sizes = Vec::new();
            let mut carry = 1u128;
            for (j, entry) in tile.iter().enumerate() {
                let d = shape[prefix + j];
                match entry {
                    None => carry = carry.saturating_mul(d),
                    Some(t) => {
                        counts.push(carry.saturating_mul(d).div_ceil(*t as u128));
                        sizes.push(*t as u128);
                        carry = 1;
                    }
                }
            }
            shape.truncate(prefix);
            shape.extend(counts);
            shape.extend(sizes);
        }
        shape
    }

    /// Storage slots, exactly, saturating in `u128`: the product of the tiled
    /// shape rounded up to `L(n)`.
    pub fn exact_storage_len(&self) -> u128 {
        let shape = self.tiled_shape(false);
        let slots = if shape.contains(&0) {
            0
        } else {
            shape.iter().fold(1u128, |a, &d| a.saturating_mul(d))
        };
        let l = self.tail_alignment as u128;
        slots.div_ceil(l).saturating_mul(l)
    }

    /// Bits per element in storage.
    pub fn bits(&self) -> u32 {
        self.element_bits.unwrap_or(self.type_bits)
    }

    /// Whether every size involved, bounded from above, fits in `usize`, so the
    /// spec must parse. Specs outside this bound may still parse; then their
    /// sizes must be exact.
    pub fn fits(&self) -> bool {
        // Tiling never shrinks a product (`ceil(d/t)*t >= d`), and zero dims
        // counted as 1 only raise it, so this bounds every product the core
        // forms on the way: dims, combined groups, strides and storage.
        let shape = self.tiled_shape(true);
        let slots = shape.iter().fold(1u128, |a, &d| a.saturating_mul(d));
        let l = self.tail_alignment as u128;
        let storage = slots.div_ceil(l).saturating_mul(l);
        storage <= usize::MAX as u128
            && storage.saturating_mul(u128::from(self.bits())).div_ceil(8) <= usize::MAX as u128
    }

    /// Whether storage is small enough to materialise slot by slot.
    pub fn is_small(&self) -> bool {
        self.fits() && self.exact_storage_len() <= 4096 && self.exact_len() <= 4096
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(",")
}

/// Writes `token` into `out`, sometimes with white space before it.
fn put(rng: &mut Rng, out: &mut String, token: &str) {
    if rng.one_in(12) {
        const SPACES: [&str; 5] = [" ", "  ", "\t", "\n", " \r\n"];
        out.push_str(SPACES[rng.pick(SPACES.len())]);
    }
    out.push_str(token);
}

/// A dim: mostly small, sometimes 0, sometimes large or at an edge.
fn gen_dim(rng: &mut Rng) -> usize {
    match rng.pick(40) {
        0..=2 => 0,
        3..=5 => 1,
        6..=29 => 2 + rng.pick(7),
        30..=34 => 1 + rng.pick(300),
        35 | 36 => 1 << rng.pick(40),
        37 => usize::MAX - rng.pick(3),
        38 => i64::MAX as usize + rng.pick(3),
        _ => rng.next_u64() as usize,
    }
}

/// A tile extent: mostly small, sometimes one of TPU's, rarely huge.
fn gen_tile(rng: &mut Rng) -> usize {
    match rng.pick(40) {
        0..=27 => 1 + rng.pick(4),
        28..=33 => 1 + rng.pick(9),
        34..=37 => *rng.choose(&[8, 32, 128, 1024]),
        38 => 1 << rng.pick(63),
        // XLA's tile dims are `int64`: the largest is `i64::MAX`.
        _ => i64::MAX as usize - rng.pick(2),
    }
}

/// Writes `s` with each ASCII letter's case chosen at random.
fn any_case(rng: &mut Rng, s: &str) -> String {
    match rng.pick(4) {
        0 => s.to_ascii_uppercase(),
        1 => s
            .chars()
            .map(|c| {
                if rng.one_in(2) {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect(),
        _ => s.to_string(),
    }
}

/// Tiling levels for a shape of `rank` dims: tile lengths up to two past the
/// current rank (so size-1 dims get prepended), `*` anywhere but last, and
/// never past the tiled-rank limit (64), so the spec stays valid.
fn gen_tiles(rng: &mut Rng, rank: usize) -> Vec<Vec<Option<usize>>> {
    let levels = match rng.pick(10) {
        0..=3 => 0,
        4..=6 => 1,
        7 | 8 => 2 + rng.pick(2),
        _ => 4 + rng.pick(5),
    };
    let mut tiles = Vec::new();
    let mut tiled_rank = rank;
    for _ in 0..levels {
        // Sometimes `T()`, which tiles no dims.
        let len = if rng.one_in(15) {
            0
        } else {
            1 + rng.pick((tiled_rank + 2).min(16))
        };
        let tile: Vec<Option<usize>> = (0..len)
            .map(|j| (j + 1 == len || !rng.one_in(5)).then(|| gen_tile(rng)))
            .collect();
        let groups = tile.iter().filter(|d| d.is_some()).count();
        if tiled_rank.max(len) + groups > 64 {
            break;
        }
        tiled_rank = tiled_rank.max(len) + groups;
        tiles.push(tile);
    }
    tiles
}

/// One valid spec, by SPEC.md §1's grammar.
pub fn generate(rng: &mut Rng) -> GenSpec {
    let &(type_name, type_bits, min_bits) = rng.choose(ELEMENTS);
    let rank = match rng.pick(30) {
        0 => 0,
        1 => 16,
        2 => 7 + rng.pick(9),
        _ => 1 + rng.pick(5),
    };
    let dims: Vec<usize> = (0..rank).map(|_| gen_dim(rng)).collect();
    // XLA's bounds are `int64`; 2^63 there means `?`.
    let dynamic: Vec<bool> = dims
        .iter()
        .map(|&d| rng.one_in(12) && i64::try_from(d).is_ok())
        .collect();
    let mut minor_to_major: Vec<usize> = (0..rank).rev().collect();
    if rng.one_in(2) {
        for i in (1..rank).rev() {
            minor_to_major.swap(i, rng.pick(i + 1));
        }
    }
    let tiles = gen_tiles(rng, rank);
    // As written: `L(1)`, `E(0)` and `S(0)` are written sometimes, and mean
    // the same as nothing.
    let tail = rng.one_in(8).then(|| match rng.pick(6) {
        0 => 1,
        1 => usize::MAX,
        _ => *rng.choose(&[2, 3, 4, 8, 16, 128, 1024]),
    });
    let bits = rng.one_in(8).then(|| match rng.pick(6) {
        0 => 0,
        1 => min_bits,
        2 => 4096,
        // Narrower than the type, as XLA's int4-in-`s8` layouts.
        3 => 1 + rng.pick(type_bits as usize) as u32,
        _ => (min_bits + rng.pick(64) as u32).min(4096),
    });
    let space = rng.one_in(10).then(|| match rng.pick(4) {
        0 => 0,
        1 => 127,
        _ => rng.pick(8) as u64,
    });
    let mut g = GenSpec {
        text: String::new(),
        type_name,
        type_bits,
        dims,
        dynamic,
        minor_to_major,
        tiles,
        tail_alignment: tail.unwrap_or(1),
        element_bits: bits.filter(|&b| b != 0),
        memory_space: space.unwrap_or(0),
    };
    let written = [
        ("L", tail.map(|n| n.to_string())),
        ("E", bits.map(|n| n.to_string())),
        ("S", space.map(|n| n.to_string())),
    ];
    g.text = write_text(rng, &g, &written);
    g
}

/// The text of `g`, with random case, brackets and spacing; `written` are
/// the `L`, `E`, `S` attributes as written (values that mean "not set" too).
fn write_text(rng: &mut Rng, g: &GenSpec, written: &[(&str, Option<String>); 3]) -> String {
    let mut text = String::new();
    if rng.one_in(20) {
        text.push(' ');
    }
    text.push_str(&any_case(rng, g.type_name));
    put(rng, &mut text, "[");
    put_list(rng, &mut text, g.dim_texts());
    put(rng, &mut text, "]");
    let rank = g.dims.len();
    let has_attrs = !g.tiles.is_empty() || written.iter().any(|(_, v)| v.is_some());
    let row_major = g.minor_to_major.iter().rev().copied().eq(0..rank);
    let write_m2m = rank > 0 && (!row_major || !rng.one_in(3));
    if write_m2m || has_attrs || (rank == 0 && rng.one_in(4)) {
        let (open, close) = if rng.one_in(4) {
            ("<", ">")
        } else {
            ("{", "}")
        };
        put(rng, &mut text, open);
        put_list(
            rng,
            &mut text,
            g.minor_to_major.iter().map(ToString::to_string),
        );
        if has_attrs || rng.one_in(10) {
            put(rng, &mut text, ":");
        }
        if !g.tiles.is_empty() {
            put(rng, &mut text, "T");
            for tile in &g.tiles {
                put(rng, &mut text, "(");
                put_list(
                    rng,
                    &mut text,
                    tile.iter().map(|d| d.map_or("*".into(), |n| n.to_string())),
                );
                put(rng, &mut text, ")");
            }
        }
        for (letter, value) in written {
            if let Some(v) = value {
                for token in [letter, "(", v.as_str(), ")"] {
                    put(rng, &mut text, token);
                }
            }
        }
        put(rng, &mut text, close);
    }
    if rng.one_in(20) {
        text.push_str(" \n");
    }
    text
}

/// Writes `items` separated by commas, each token perhaps after white space.
fn put_list(rng: &mut Rng, out: &mut String, items: impl Iterator<Item = String>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            put(rng, out, ",");
        }
        put(rng, out, &item);
    }
}

/// A random character: grammar, ASCII, control, or any Unicode scalar.
fn random_char(rng: &mut Rng) -> char {
    match rng.pick(4) {
        0 => *rng.choose(&[
            '[', ']', '{', '}', '<', '>', '(', ')', ',', ':', '*', '-', '?', '=',
        ]),
        1 => char::from(rng.pick(128) as u8),
        2 => char::from_u32(rng.pick(0x11_0000) as u32).unwrap_or('\u{fffd}'),
        _ => char::from(b'0' + rng.pick(10) as u8),
    }
}

/// The character positions of the digit runs in `chars`.
fn digit_runs(chars: &[char]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    runs
}

/// `text` damaged by one to four random edits; `donor` is another spec to
/// splice from. The result is always valid UTF-8 (edits work on `char`s).
pub fn mutate(rng: &mut Rng, text: &str, donor: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..=rng.pick(4) {
        let n = chars.len();
        let at = rng.pick(n + 1);
        match rng.pick(12) {
            0 if n > 0 => {
                let end = (at + 1 + rng.pick(3)).min(n);
                chars.drain(at.min(n - 1)..end.max(at.min(n - 1) + 1).min(n));
            }
            1 | 2 => {
                let insert = rng.choose(INSERTS);
                chars.splice(at..at, insert.chars());
            }
            3 => {
                let insert = random_char(rng);
                chars.insert(at, insert);
            }
            4 => {
                let runs = digit_runs(&chars);
                if !runs.is_empty() {
                    let (s, e) = *rng.choose(&runs);
                    chars.splice(s..e, rng.choose(EDGE_NUMBERS).chars());
                }
            }
            5 if n > 0 => {
                // Repeat a slice: many dims, levels, attributes or brackets.
                let start = rng.pick(n);
                let end = (start + 1 + rng.pick(8)).min(n);
                let piece: Vec<char> = chars[start..end].to_vec();
                let times = if rng.one_in(20) {
                    200 + rng.pick(2000)
                } else {
                    1 + rng.pick(8)
                };
                let mut repeated = Vec::with_capacity(piece.len() * times);
                for _ in 0..times {
                    repeated.extend_from_slice(&piece);
                }
                chars.splice(end..end, repeated);
            }
            6 if n > 1 => {
                let other = rng.pick(n);
                chars.swap(at.min(n - 1), other);
            }
            7 => chars.truncate(at),
            8 => {
                let donor: Vec<char> = donor.chars().collect();
                let from = rng.pick(donor.len() + 1);
                chars.truncate(at);
                chars.extend_from_slice(&donor[from..]);
            }
            9 if n > 0 => {
                let i = at.min(n - 1);
                chars[i] = if chars[i].is_ascii_lowercase() {
                    chars[i].to_ascii_uppercase()
                } else {
                    random_char(rng)
                };
            }
            10 => {
                let runs = digit_runs(&chars);
                if !runs.is_empty() {
                    // Nudge a number to its neighbour: off-by-one in ranks and permutations.
                    let (s, e) = *rng.choose(&runs);
                    let digits: String = chars[s..e].iter().collect();
                    if let Ok(v) = digits.parse::<u128>() {
                        let nudged = if rng.one_in(2) {
                            v.saturating_add(1)
                        } else {
                            v.saturating_sub(1)
                        };
                        chars.splice(s..e, nudged.to_string().chars());
                    }
                }
            }
            _ => {
                // Delete one character: the commonest typo.
                if n > 0 {
                    chars.remove(at.min(n - 1));
                }
            }
        }
    }
    chars.into_iter().collect()
}
