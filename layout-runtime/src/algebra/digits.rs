//! The digits of a layout: its tiled shape stepped by [`Tiled::step`],
//! each dim carrying the digit of a coordinate it holds.

use crate::algebra::tiling::{Carry, Dim, Refusal, Tiled};
use crate::fixed::Fixed;
use crate::Tile;

/// At most this many digits: every TPU tiling of rank 16 has at most 19
/// that are not of extent 1 (`T(1024)(128)(2,1)` and `T(8,128)(2,1)`),
/// and the layout keeps its evaluators within 4 KiB.
pub(crate) const MAX_DIGITS: usize = 24;

/// One dim of the tiled shape: a digit of one logical coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digit {
    /// The logical dim whose coordinate the digit is taken from; 0 for a
    /// digit that is always 0 (`radix` 1).
    pub(crate) dim: usize,
    /// What one step of the digit adds to the coordinate.
    pub(crate) place: usize,
    /// The digit is `(x / place) % radix`; 0 for the coordinate's most
    /// significant digit, `x / place`, bounded only by the dim.
    pub(crate) radix: usize,
    /// The extent of the digit's dim in the tiled shape: its radix in
    /// storage, at least `radix`.
    pub(crate) extent: usize,
    /// Slots between consecutive values of the digit in storage.
    pub(crate) stride: usize,
}

impl Digit {
    /// Whether a slot can hold a value of this digit that no coordinate
    /// has: storage is wider than the digit (a tile past its dim, or a
    /// dim that a tile prepended).
    pub(crate) fn reaches_padding(&self) -> bool {
        self.radix != 0 && self.extent > self.radix
    }
}

/// The digits of a layout, most major first (in storage order), with the
/// extent-1 dims of the tiled shape left out: they are always 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digits {
    pub(crate) list: Fixed<Digit, MAX_DIGITS>,
    /// Bit `d`: logical dim `d`'s digits spell values past its size, so a
    /// coordinate read back from storage must be checked against it.
    pub(crate) ragged: u16,
    /// The product of the tiled shape's extents: the slots the digits
    /// address (storage may be longer, by `L(n)`).
    pub(crate) slots: usize,
}

/// `(x_dim / place) % radix` (radix 0: no remainder); radix 1 is the constant 0.
#[derive(Clone, Copy)]
struct Symbol {
    dim: usize,
    place: usize,
    radix: usize,
}

const ZERO: Symbol = Symbol {
    dim: 0,
    place: 0,
    radix: 1,
};

/// Why a layout has no digits, for the callers that keep other forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoDigits {
    /// A `*` combines dims that are not all of extent 1 before the last,
    /// so the combined value is a sum of scaled coordinates; or a tile
    /// that neither divides the digit it splits nor covers it (`(3,4)`
    /// then `(2,3)`) splits a digit into digits of a digit.
    NotAChain,
    /// More than [`MAX_DIGITS`] digits, an empty array, or sizes past `usize`.
    Limits,
}

/// The digits of the layout of `dims`, `m2m` and `tiles` (validated).
pub(crate) fn digits(dims: &[usize], m2m: &[usize], tiles: &[Tile]) -> Result<Digits, NoDigits> {
    if dims.contains(&0) || m2m.len() != dims.len() || m2m.iter().any(|&d| d >= dims.len()) {
        return Err(NoDigits::Limits);
    }
    let whole = |d| {
        Ok(Symbol {
            dim: d,
            place: 1,
            radix: 0,
        })
    };
    let mut shape = Tiled::physical(dims, m2m, ZERO, whole)?;
    for tile in tiles {
        shape.step(tile, &mut Chain).map_err(|r| match r {
            Refusal::Rank | Refusal::Overflow => NoDigits::Limits,
            Refusal::Carried(e) => e,
        })?;
    }
    let mut out = Digits {
        list: Fixed::new(Digit {
            dim: 0,
            place: 0,
            radix: 1,
            extent: 1,
            stride: 0,
        }),
        ragged: 0,
        slots: 1,
    };
    // Strides, most minor first; the digits then reversed into storage order.
    let mut stride = 1usize;
    let mut minor_first = Fixed::<Digit, MAX_DIGITS>::new(out.list.slots()[0]);
    for v in shape.dims().iter().rev() {
        if v.extent != 1 {
            let s = v.value;
            let digit = Digit {
                dim: s.dim,
                place: s.place,
                radix: s.radix,
                extent: v.extent,
                stride,
            };
            minor_first.push(digit).ok_or(NoDigits::Limits)?;
        }
        stride = stride.checked_mul(v.extent).ok_or(NoDigits::Limits)?;
    }
    out.slots = stride;
    for d in minor_first.iter().rev() {
        out.list.push(*d).ok_or(NoDigits::Limits)?;
    }
    // A coordinate's digits spell at most `place * extent - 1` from its
    // most significant one, plus each lower digit's largest value.
    for (dim, &size) in dims.iter().enumerate() {
        let largest = out
            .list
            .iter()
            .filter(|g| g.dim == dim && g.radix != 1)
            .try_fold(0usize, |sum, g| {
                let top = match g.radix {
                    0 => g.extent,
                    r => r.min(g.extent),
                };
                (top - 1).checked_mul(g.place)?.checked_add(sum)
            })
            .ok_or(NoDigits::Limits)?;
        if largest >= size {
            out.ragged |= 1 << dim;
        }
    }
    Ok(out)
}

/// Digits through the tile step: a dim's value is a digit of one
/// coordinate, or the layout has no digits.
struct Chain;

impl Carry for Chain {
    type Value = Symbol;
    type Error = NoDigits;

    fn prepended(&mut self) -> Symbol {
        ZERO
    }

    fn combine(&mut self, major: Dim<Symbol>, minor: Dim<Symbol>) -> Result<Symbol, NoDigits> {
        // Dims of extent 1 before the last add nothing to the combined
        // value; any other makes a sum of two coordinates.
        if major.extent == 1 {
            Ok(minor.value)
        } else {
            Err(NoDigits::NotAChain)
        }
    }

    fn split(&mut self, dim: Dim<Symbol>, t: usize) -> Result<(Symbol, Symbol), NoDigits> {
        let s = dim.value;
        let zero = |s: Symbol| if s.radix == 1 { ZERO } else { s };
        Ok(match s.radix {
            // The constant 0 splits into two.
            1 => (ZERO, ZERO),
            // The most significant digit: a new most significant one above a
            // digit of radix `t`.
            0 => {
                let place = s.place.checked_mul(t).ok_or(NoDigits::Limits)?;
                (Symbol { place, ..s }, zero(Symbol { radix: t, ..s }))
            }
            // A tile at least as large as the digit: all of it in the inner
            // dim, the outer always 0.
            r if t >= r => (ZERO, s),
            r if r % t == 0 => {
                let place = s.place.checked_mul(t).ok_or(NoDigits::Limits)?;
                (
                    zero(Symbol {
                        place,
                        radix: r / t,
                        ..s
                    }),
                    zero(Symbol { radix: t, ..s }),
                )
            }
            // `(x % 3) / 2`: a digit of a digit.
            _ => return Err(NoDigits::NotAChain),
        })
    }
}
