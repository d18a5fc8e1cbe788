//! The digits of a layout: its tiled shape stepped by [`Tiled::step`],
//! each dim carrying the digit of a coordinate it holds.

use crate::algebra::tiling::{Carry, Dim, Refusal, Tiled};
use crate::fixed::Fixed;
use crate::Tile;

/// At most this many digits: every TPU tiling of rank 16 has at most 19
/// that are not of extent 1 (`T(1024)(128)(2,1)` and `T(8,128)(2,1)`),
/// and the layout keeps its evaluators within 4 KiB.
pub(crate) const MAX_DIGITS: usize = 24;

/// One dim of the tiled shape: a digit of one logical coordinate, or of
/// a run of adjacent logical dims that `*` merged whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digit {
    /// The logical dim whose coordinate the digit is taken from; 0 for a
    /// digit that is always 0 (`radix` 1).
    pub(crate) dim: usize,
    /// The last logical dim of the digit's coordinate: the digit is one of
    /// dims `dim..=last` read as one row-major index. `dim` itself unless
    /// a `*` combined whole, unpadded dims, adjacent in logical order with
    /// only size-1 dims between (`f32[3,5]{1,0:T(*,4)}`).
    pub(crate) last: usize,
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

/// The number of values of the coordinate of dims `dim..=last` (one dim,
/// or whole dims merged by `*`): the product of their sizes, or `None` if
/// it exceeds `usize`.
#[inline]
pub(crate) fn run_size(dims: &[usize], dim: usize, last: usize) -> Option<usize> {
    dims[dim..=last]
        .iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
}

impl Digit {
    /// [`run_size`] of the coordinate this digit is taken from.
    #[inline]
    pub(crate) fn size(&self, dims: &[usize]) -> Option<usize> {
        run_size(dims, self.dim, self.last)
    }

    /// Whether a slot can hold a value of this digit that no coordinate
    /// has: storage is wider than the digit (a tile past its dim, or a
    /// dim that a tile prepended).
    pub(crate) fn reaches_padding(&self) -> bool {
        self.radix != 0 && self.extent > self.radix
    }
}

/// The digits of a layout, most major first (in storage order), with the
/// extent-1 dims of the tiled shape left out: they are always 0. At most
/// `N`: the evaluators a layout keeps hold [`MAX_DIGITS`], a relayout walk
/// one per dim of the tiled shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digits<const N: usize = MAX_DIGITS> {
    pub(crate) list: Fixed<Digit, N>,
    /// Bit `d`: logical dim `d`'s digits spell values past its size, so a
    /// coordinate read back from storage must be checked against it (for
    /// a merged run, every dim of the run: their product).
    pub(crate) ragged: u16,
    /// The product of the tiled shape's extents: the slots the digits
    /// address (storage may be longer, by `L(n)`).
    pub(crate) slots: usize,
}

impl<const N: usize> Digits<N> {
    /// The largest coordinate of dims `dim..=last` the digits spell: at
    /// most `place * extent - 1` from its most significant digit, plus
    /// each lower digit's largest value; 0 for a coordinate of no digits,
    /// `None` past `usize`.
    pub(crate) fn largest(&self, dim: usize, last: usize) -> Option<usize> {
        self.list
            .iter()
            .filter(|h| h.radix != 1 && (h.dim, h.last) == (dim, last))
            .try_fold(0usize, |sum, h| {
                let top = match h.radix {
                    0 => h.extent,
                    r => r.min(h.extent),
                };
                (top - 1).checked_mul(h.place)?.checked_add(sum)
            })
    }

    /// The same digits in a list of at most `M`, or `None` if there are
    /// more: what [`digits`] with a width of `M` gives.
    pub(crate) fn narrowed<const M: usize>(&self) -> Option<Digits<M>> {
        Some(Digits {
            list: Fixed::from_slice(&self.list, self.list.slots()[0])?,
            ragged: self.ragged,
            slots: self.slots,
        })
    }
}

/// `(x / place) % radix` of the row-major index `x` of dims `dim..=last`
/// (radix 0: no remainder); radix 1 is the constant 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Symbol {
    dim: usize,
    last: usize,
    place: usize,
    radix: usize,
}

const ZERO: Symbol = Symbol {
    dim: 0,
    last: 0,
    place: 0,
    radix: 1,
};

/// Why a layout has no digits, for the callers that keep other forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoDigits {
    /// A `*` combines digits that are not one digit (of one coordinate,
    /// chained, or of whole adjacent dims), so the combined value is a
    /// sum of scaled coordinates; or a tile
    /// that neither divides the digit it splits nor covers it (`(3,4)`
    /// then `(2,3)`) splits a digit into digits of a digit.
    NotAChain,
    /// More than `N` digits, an empty array, or sizes past `usize`.
    Limits,
}

/// The digits of the layout of `dims`, `m2m` and `tiles` (validated).
pub(crate) fn digits<const N: usize>(
    dims: &[usize],
    m2m: &[usize],
    tiles: &[Tile],
) -> Result<Digits<N>, NoDigits> {
    if dims.contains(&0) || m2m.len() != dims.len() || m2m.iter().any(|&d| d >= dims.len()) {
        return Err(NoDigits::Limits);
    }
    let whole = |d| {
        Ok(Symbol {
            dim: d,
            last: d,
            place: 1,
            radix: 0,
        })
    };
    let mut shape = Tiled::physical(dims, m2m, ZERO, whole)?;
    for tile in tiles {
        shape.step(tile, &mut Chain { dims }).map_err(|r| match r {
            Refusal::Rank | Refusal::Overflow => NoDigits::Limits,
            Refusal::Carried(e) => e,
        })?;
    }
    let mut out = Digits {
        list: Fixed::new(Digit {
            dim: 0,
            last: 0,
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
    let mut minor_first = Fixed::<Digit, N>::new(out.list.slots()[0]);
    for v in shape.dims().iter().rev() {
        if v.extent != 1 {
            let s = v.value;
            let digit = Digit {
                dim: s.dim,
                last: s.last,
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
    for g in out.list.iter().filter(|g| g.radix != 1) {
        let size = g.size(dims).ok_or(NoDigits::Limits)?;
        let largest = out.largest(g.dim, g.last).ok_or(NoDigits::Limits)?;
        if largest >= size {
            for d in g.dim..=g.last {
                out.ragged |= 1 << d;
            }
        }
    }
    Ok(out)
}

/// Digits through the tile step: a dim's value is a digit of one
/// coordinate, or the layout has no digits.
struct Chain<'a> {
    /// The logical dims, to tell whole dims from digits of them.
    dims: &'a [usize],
}

impl Chain<'_> {
    /// Whether `v` alone is its whole coordinate, with no padding: the
    /// row-major index of its dims, every value of it an element.
    fn whole(&self, v: Dim<Symbol>) -> bool {
        v.value.radix == 0
            && v.value.place == 1
            && run_size(self.dims, v.value.dim, v.value.last) == Some(v.extent)
    }
}

impl Carry for Chain<'_> {
    type Value = Symbol;
    type Error = NoDigits;

    fn prepended(&mut self) -> Symbol {
        ZERO
    }

    fn combine(&mut self, major: Dim<Symbol>, minor: Dim<Symbol>) -> Result<Symbol, NoDigits> {
        let (a, b) = (major.value, minor.value);
        // A dim of extent 1 is always 0 and adds nothing.
        if minor.extent == 1 {
            return Ok(a);
        }
        if major.extent == 1 {
            return Ok(b);
        }
        if a.radix == 1 && b.radix == 1 {
            return Ok(ZERO);
        }
        if a.radix == 1 || b.radix == 1 {
            return Err(NoDigits::NotAChain);
        }
        // Two digits of one coordinate, the major one worth a whole turn
        // of the minor one: `(x / p) % (ra * rb)`, one digit.
        if (a.dim, a.last) == (b.dim, b.last)
            && b.radix == minor.extent
            && b.place.checked_mul(b.radix) == Some(a.place)
        {
            let radix = match a.radix {
                0 => 0,
                r => r.checked_mul(b.radix).ok_or(NoDigits::Limits)?,
            };
            return Ok(Symbol { radix, ..b });
        }
        // Whole dims in logical order, only size-1 dims between: one
        // row-major index of the run they span.
        if self.whole(major)
            && self.whole(minor)
            && a.last < b.dim
            && self.dims[a.last + 1..b.dim].iter().all(|&d| d == 1)
        {
            return Ok(Symbol { last: b.last, ..a });
        }
        Err(NoDigits::NotAChain)
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

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;

    use std::format;
    use std::string::{String, ToString};
    use std::vec;
    use std::vec::Vec;

    use super::digits;
    use crate::eval::closed::tests::{spec, Rng};
    use crate::{Layout, MAX_TILED_RANK};

    /// The row-major index of `index[lo..=hi]` over `dims[lo..=hi]`.
    fn run_index(dims: &[usize], index: &[usize], lo: usize, hi: usize) -> usize {
        (lo..=hi).fold(0, |x, d| x * dims[d] + index[d])
    }

    /// `l`'s digits against its offsets and inverse, every element and
    /// every slot: an element's digit values, at their strides, sum to its
    /// offset; a slot whose values are all inside their radices and whose
    /// coordinates are inside the dims is that element, any other slot is
    /// padding. Returns whether `l` has digits and whether a `*` merged
    /// whole dims.
    fn check(spec: &str, l: &Layout) -> (bool, bool) {
        let Ok(d) = digits::<MAX_TILED_RANK>(l.dims(), l.minor_to_major(), l.tiles()) else {
            return (false, false);
        };
        let dims = l.dims();
        let value = |g: &super::Digit, x: usize| match g.radix {
            1 => 0,
            0 => x / g.place,
            r => (x / g.place) % r,
        };
        let mut index = vec![0; dims.len()];
        for _ in 0..l.len() {
            let at: usize = d
                .list
                .iter()
                .map(|g| value(g, run_index(dims, &index, g.dim, g.last)) * g.stride)
                .sum();
            assert_eq!(at, l.offset(&index), "{spec} {index:?}");
            for k in (0..dims.len()).rev() {
                index[k] += 1;
                if index[k] < dims[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        for slot in 0..l.storage_len() {
            let mut runs = vec![0usize; dims.len()];
            let mut inside = slot < d.slots;
            for g in d.list.iter() {
                let v = (slot / g.stride) % g.extent;
                match g.radix {
                    1 => inside &= v == 0,
                    0 => {}
                    r => inside &= v < r,
                }
                if g.radix != 1 {
                    runs[g.dim] += v * g.place;
                }
            }
            let mut index = vec![0; dims.len()];
            for g in d.list.iter().filter(|g| g.radix != 1) {
                let size: usize = dims[g.dim..=g.last].iter().product();
                inside &= runs[g.dim] < size;
                let mut x = runs[g.dim];
                for k in (g.dim..=g.last).rev() {
                    index[k] = x % dims[k];
                    x /= dims[k];
                }
            }
            let want = inside.then(|| index.clone());
            let got = l.index_of(slot).map(|i| i.to_vec());
            assert_eq!(got, want, "{spec} slot {slot}");
        }
        (true, d.list.iter().any(|g| g.last != g.dim))
    }

    /// The layouts the digits are tested on: random ones and [`merged`]
    /// ones in turn, the same on every run.
    pub(crate) fn samples() -> impl Iterator<Item = String> {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        (0..4000).map(move |i| {
            if i % 2 == 0 {
                spec(&mut rng)
            } else {
                merged(&mut rng)
            }
        })
    }

    /// A layout whose `*` combines dims in logical order, most of them
    /// whole, some of size 1 between, then perhaps one more level.
    fn merged(rng: &mut Rng) -> String {
        let rank = 2 + rng.below(4);
        let dims: Vec<String> = (0..rank)
            .map(|_| match rng.below(4) {
                0 => "1".into(),
                _ => (2 + rng.below(6)).to_string(),
            })
            .collect();
        let order: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        let k = 2 + rng.below(rank - 1);
        let mut tile: Vec<String> = (0..k - 1)
            .map(|_| match rng.below(3) {
                0 => (1usize << rng.below(3)).to_string(),
                _ => "*".into(),
            })
            .collect();
        tile.push((1 + rng.below(8)).to_string());
        let more = match rng.below(3) {
            0 => format!("({})", 1usize << rng.below(3)),
            _ => String::new(),
        };
        format!(
            "f32[{}]{{{}:T({}){more}}}",
            dims.join(","),
            order.join(","),
            tile.join(",")
        )
    }

    /// Random layouts, and ones of `*` over dims in logical order (most of
    /// them whole, some of size 1 between), against the layout's offsets
    /// and inverse.
    #[test]
    fn digits_address_every_element_once() {
        let (mut with, mut runs) = (0, 0);
        for spec in samples() {
            let Ok(l) = crate::parse(&spec) else { continue };
            if l.storage_len() > 4096 {
                continue;
            }
            let (has, run) = check(&spec, &l);
            with += usize::from(has);
            runs += usize::from(run);
        }
        assert!(
            with >= 2000 && runs >= 600,
            "{with} with digits, {runs} merged"
        );
    }
}
