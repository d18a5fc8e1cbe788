//! Division by a constant fixed at run time, as compiled code divides by a
//! literal: a multiplication by a precomputed reciprocal and shifts.
//!
//! The method is libdivide's branch-free unsigned one (Granlund and
//! Montgomery, "Division by invariant integers using multiplication", 1994,
//! with the 65-bit multiplier folded into an add and a shift). It is exact
//! for every 64-bit dividend, so run-time offsets equal the generated
//! code's for every index, out of range ones included.

/// The most distinct constants the two programs of a layout share: the
/// divisors of one pool.
pub(crate) const MAX_CONSTANTS: usize = 20;

/// A divisor with its reciprocal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Divisor {
    /// The divisor; 0 stands for "no division": `x / 0` reads as `x` and
    /// `x % 0` as `x`, so a missing remainder costs no branch.
    pub(crate) value: u64,
    /// The low 64 bits of the 65-bit multiplier; 0 for powers of two. The
    /// shift, `floor(log2(value))`, is recomputed on use: it costs an
    /// instruction and saves a word.
    pub(crate) magic: u64,
}

impl Divisor {
    /// Neither divides nor takes a remainder.
    pub(crate) const NONE: Divisor = Divisor { value: 0, magic: 0 };

    /// The divisor `d`; `None` for 0.
    pub(crate) fn new(d: u64) -> Option<Divisor> {
        if d == 0 {
            return None;
        }
        let log = d.ilog2();
        if d.is_power_of_two() {
            return Some(Divisor { value: d, magic: 0 });
        }
        // m = floor(2^(64 + log) / d) < 2^64, as d > 2^log; then the
        // 65-bit multiplier is 2m (+1 when rounding needs it) + 1.
        let n = 1u128 << (64 + log);
        let m = n / u128::from(d);
        let rem = n % u128::from(d);
        let mut twice = 2 * m;
        if 2 * rem >= u128::from(d) {
            twice += 1;
        }
        // The bit of 2^64 is the add-and-shift in `div`.
        let magic = (twice + 1) as u64;
        // Never 0 for a divisor that is not a power of two; refused if it were.
        (magic != 0).then_some(Divisor { value: d, magic })
    }

    /// A divisor from the fields [`Divisor::new`] gave, for constants.
    pub(crate) const fn from_parts(value: u64, magic: u64) -> Divisor {
        Divisor { value, magic }
    }

    /// `floor(log2(value))`, 0 for `NONE`.
    #[inline]
    pub(crate) fn shift(self) -> u32 {
        self.value.checked_ilog2().unwrap_or(0)
    }

    /// `x / value`, exact for every `x` (`x` itself for `NONE`).
    #[inline]
    pub(crate) fn div(self, x: u64) -> u64 {
        divide(x, self.magic, self.shift())
    }

    /// `x % value`, exact for every `x` (`x` itself for `NONE`).
    #[inline]
    pub(crate) fn rem(self, x: u64) -> u64 {
        x.wrapping_sub(self.div(x).wrapping_mul(self.value))
    }
}

/// `x / d` for the divisor `d` of multiplier `magic` and shift
/// `floor(log2(d))`: a shift for a power of two (`magic` 0), else the
/// multiply, add and shift of the 65-bit multiplier.
#[inline]
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn divide(x: u64, magic: u64, shift: u32) -> u64 {
    if magic == 0 {
        x.wrapping_shr(shift)
    } else {
        let q = ((u128::from(magic) * u128::from(x)) >> 64) as u64;
        let t = (x.wrapping_sub(q) >> 1).wrapping_add(q);
        t.wrapping_shr(shift)
    }
}

/// `(m, s)` such that `x / d = (x m) >> s` for every `x < 2^n`, for a
/// divisor `d` of at least 1 and `n` at most 31: `s = n + l` with `l =
/// ceil(log2 d)`, and `m = ceil(2^s / d)`.
///
/// It is exact: `m d = 2^s + e` with `e < d <= 2^l`, so `x m / 2^s = x /
/// d + x e / (d 2^s)`, and `x e < 2^s` keeps the excess below `1 / d`,
/// less than the distance from `x / d` to the next integer. `m <=
/// 2^(n+1)`, so `x m < 2^(2n+1)` fits 64 bits; a power of two gets `m =
/// 2^n`, a plain shift.
pub(crate) fn multiplier(d: u64, n: u32) -> Option<(u64, u32)> {
    if n > 31 || d == 0 {
        return None;
    }
    let l = u64::BITS - (d - 1).leading_zeros();
    let m = (1u128 << (n + l)).div_ceil(u128::from(d));
    Some((u64::try_from(m).ok()?, n + l))
}

/// `r` such that `x / d` is the high word of `x r` for every `x < 2^n`:
/// [`multiplier`]'s `m` shifted to the top of a word, `m 2^(64 - s)`, so
/// that one widening multiply divides, without a shift by a variable
/// count. `None` for `d` of 0 or 1, or where `s = n + ceil(log2 d)` passes
/// 64. The same argument makes it exact: `m / 2^s = r / 2^64`. It fits a
/// word: `m <= 2^(n+1)` and `ceil(log2 d) >= 2` unless `d` is a power of
/// two, which gets `2^(64 - log2 d)`.
pub(crate) fn reciprocal(d: u64, n: u32) -> Option<u64> {
    if d < 2 {
        return None;
    }
    if d.is_power_of_two() {
        return Some(1 << (u64::BITS - d.trailing_zeros()));
    }
    let ceil_log = u64::BITS - (d - 1).leading_zeros();
    let shift = n.checked_add(ceil_log).filter(|&s| s <= u64::BITS)?;
    let multiplier = (1u128 << shift).div_ceil(u128::from(d));
    u64::try_from(multiplier << (u64::BITS - shift)).ok()
}

/// The high word of `x r`: the quotient of a [`reciprocal`].
#[inline]
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn high(x: u64, r: u64) -> u64 {
    ((u128::from(x) * u128::from(r)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    #[test]
    fn exact_at_the_edges() {
        let divisors = [
            1u64,
            2,
            3,
            5,
            6,
            7,
            10,
            127,
            128,
            129,
            1000,
            (1 << 32) - 1,
            1 << 32,
            (1 << 32) + 1,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for &d in &divisors {
            let v = Divisor::new(d).unwrap();
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u64::MAX,
                u64::MAX - 1,
                1 << 63,
            ];
            for n in edges.into_iter().chain((0..2000).map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x >> (x % 64)
            })) {
                assert_eq!(v.div(n), n / d, "{n} / {d}");
                assert_eq!(v.rem(n), n % d, "{n} % {d}");
            }
        }
        assert!(Divisor::new(0).is_none());
        // The reciprocals, at the edges of their ranges.
        for d in [
            2u64,
            3,
            5,
            7,
            9,
            125,
            977,
            1000,
            65_535,
            (1 << 31) - 1,
            1 << 40,
        ] {
            for n in [1u32, 8, 20, 31, 40] {
                let Some(r) = super::reciprocal(d, n) else {
                    assert!(n + (u64::BITS - (d - 1).leading_zeros()) > 64, "{d} {n}");
                    continue;
                };
                let top = (1u64 << n) - 1;
                for x in (0..2000)
                    .chain(top.saturating_sub(2000)..=top)
                    .chain([d - 1, d, d + 1])
                {
                    if x <= top {
                        assert_eq!(super::high(x, r), x / d, "{x} / {d} below 2^{n}");
                    }
                }
            }
        }
        assert!(super::reciprocal(1, 8).is_none() && super::reciprocal(0, 8).is_none());
        assert_eq!((Divisor::NONE.div(17), Divisor::NONE.rem(17)), (17, 17));
    }
}
