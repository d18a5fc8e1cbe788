//! XLA element types: names, widths and the nearest-name suggestion.

use core::fmt;

macro_rules! element_types {
    ($($variant:ident => $name:literal, $bits:literal, $min_bits:literal;)*) => {
        /// An XLA element type, as written before the dims of a spec.
        ///
        /// # Examples
        ///
        /// ```
        /// use xla_layout::ElementType;
        /// let t = ElementType::from_name("BF16").unwrap();
        /// assert_eq!(t, ElementType::Bf16);
        /// assert_eq!(t.bits(), 16);
        /// assert_eq!(t.name(), "bf16");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ElementType {
            $(
                #[doc = concat!("`", $name, "`: ", stringify!($bits), " bits in storage.")]
                $variant,
            )*
        }

        impl ElementType {
            /// Every element type, in XLA's order of declaration.
            ///
            /// # Examples
            ///
            /// ```
            /// use xla_layout::ElementType;
            /// assert_eq!(ElementType::ALL[0], ElementType::Pred);
            /// for &t in ElementType::ALL {
            ///     let l = xla_layout::parse(&format!("{}[2]", t.name())).unwrap();
            ///     assert_eq!(l.element_type(), t);
            /// }
            /// ```
            pub const ALL: &'static [ElementType] = &[$(ElementType::$variant),*];

            /// The lowercase XLA name (`f32`, `bf16`, `f8e4m3fn`, ...).
            ///
            /// # Examples
            ///
            /// ```
            /// assert_eq!(xla_layout::ElementType::Pred.name(), "pred");
            /// ```
            pub const fn name(self) -> &'static str {
                match self { $(ElementType::$variant => $name),* }
            }

            /// Bits one element occupies when no `E(n)` is written (`pred` takes a
            /// byte, and so do the 6-bit floats, which XLA keeps one per byte).
            ///
            /// # Examples
            ///
            /// ```
            /// use xla_layout::ElementType;
            /// assert_eq!(ElementType::Pred.bits(), 8);
            /// assert_eq!(ElementType::S4.bits(), 4);
            /// ```
            pub const fn bits(self) -> u32 {
                match self { $(ElementType::$variant => $bits),* }
            }

            /// The bits that carry a value (`pred` fits in one bit, `f6e2m3fn` in six).
            ///
            /// XLA accepts any `E(n)`, narrower ones included (int4 values held in
            /// `s8`); this is the width below which a value of the type itself
            /// would not fit, which the bulk `_bits` methods check for integers.
            ///
            /// # Examples
            ///
            /// ```
            /// use xla_layout::ElementType;
            /// assert_eq!(ElementType::Pred.min_bits(), 1);
            /// assert_eq!(ElementType::F32.min_bits(), 32);
            /// ```
            pub const fn min_bits(self) -> u32 {
                match self { $(ElementType::$variant => $min_bits),* }
            }
        }
    };
}

element_types! {
    Pred => "pred", 8, 1;
    S1 => "s1", 1, 1;
    S2 => "s2", 2, 2;
    S4 => "s4", 4, 4;
    S8 => "s8", 8, 8;
    S16 => "s16", 16, 16;
    S32 => "s32", 32, 32;
    S64 => "s64", 64, 64;
    U1 => "u1", 1, 1;
    U2 => "u2", 2, 2;
    U4 => "u4", 4, 4;
    U8 => "u8", 8, 8;
    U16 => "u16", 16, 16;
    U32 => "u32", 32, 32;
    U64 => "u64", 64, 64;
    F16 => "f16", 16, 16;
    F32 => "f32", 32, 32;
    Bf16 => "bf16", 16, 16;
    F64 => "f64", 64, 64;
    F4e2m1fn => "f4e2m1fn", 4, 4;
    F6e2m3fn => "f6e2m3fn", 8, 6;
    F6e3m2fn => "f6e3m2fn", 8, 6;
    F8e3m4 => "f8e3m4", 8, 8;
    F8e4m3 => "f8e4m3", 8, 8;
    F8e4m3fn => "f8e4m3fn", 8, 8;
    F8e4m3b11fnuz => "f8e4m3b11fnuz", 8, 8;
    F8e4m3fnuz => "f8e4m3fnuz", 8, 8;
    F8e5m2 => "f8e5m2", 8, 8;
    F8e5m2fnuz => "f8e5m2fnuz", 8, 8;
    F8e8m0fnu => "f8e8m0fnu", 8, 8;
    C64 => "c64", 64, 64;
    C128 => "c128", 128, 128;
}

/// Names XLA gives to shapes that are not arrays: they have no memory layout.
pub(crate) const NON_ARRAY_TYPES: &[&str] = &["token", "opaque", "tuple"];

impl ElementType {
    /// `Some(true)` for signed integers, `Some(false)` for unsigned ones and
    /// `pred`, `None` for floats and complex numbers, whose bits cannot be
    /// narrowed without changing the value.
    pub(crate) const fn integer_signedness(self) -> Option<bool> {
        use ElementType as T;
        match self {
            T::S1 | T::S2 | T::S4 | T::S8 | T::S16 | T::S32 | T::S64 => Some(true),
            T::Pred | T::U1 | T::U2 | T::U4 | T::U8 | T::U16 | T::U32 | T::U64 => Some(false),
            _ => None,
        }
    }

    /// Looks a name up, ignoring ASCII case.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::ElementType;
    /// assert_eq!(ElementType::from_name("F8E4M3FN"), Some(ElementType::F8e4m3fn));
    /// assert_eq!(ElementType::from_name("f33"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<ElementType> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The known name closest to `name` by edit distance, for "did you mean" hints.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::ElementType;
    /// assert_eq!(ElementType::nearest("f33"), Some(ElementType::F32));
    /// assert_eq!(ElementType::nearest("bfloat16"), None);
    /// ```
    pub fn nearest(name: &str) -> Option<ElementType> {
        let (best, distance) = Self::ALL
            .iter()
            .map(|t| (*t, edit_distance(name, t.name())))
            // On a tie, a name of the same length: `s23` is more likely
            // `s32` swapped than `s2` with a stray key.
            .min_by_key(|&(t, d)| (d, t.name().len().abs_diff(name.len())))?;
        // Past a third of the name the guess is more noise than help.
        (distance <= 1 + name.len() / 3).then_some(best)
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Edit distance counting a swap of two neighbouring characters as one edit
/// (optimal string alignment: `f23` is one edit from `f32`), ASCII
/// case-insensitive, on names short enough for fixed row buffers (longer
/// inputs are simply far from every name).
fn edit_distance(a: &str, b: &str) -> usize {
    const CAP: usize = 32;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() >= CAP || b.len() >= CAP {
        return usize::MAX;
    }
    let same = |i: usize, j: usize| a[i].eq_ignore_ascii_case(&b[j]);
    // Rows i-2, i-1 and i of the distance table.
    let (mut prev, mut row) = ([0usize; CAP], [0usize; CAP]);
    for (j, slot) in row.iter_mut().enumerate().take(b.len() + 1) {
        *slot = j;
    }
    for i in 1..=a.len() {
        let before = prev;
        prev = row;
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(!same(i - 1, j - 1));
            let mut d = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && same(i - 1, j - 2) && same(i - 2, j - 1) {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
    }
    row[b.len()]
}

/// The bytes `slots` elements of `bits` bits take, rounded up to whole
/// bytes; widened, so no product overflows first. The parser's check of
/// storage bytes, the constants of `layout!` values and the summary all
/// count this way.
#[allow(clippy::cast_lossless)]
pub(crate) const fn bytes_of(slots: usize, bits: u32) -> u128 {
    (slots as u128 * bits as u128).div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_in_any_case() {
        for t in ElementType::ALL {
            assert_eq!(ElementType::from_name(t.name()), Some(*t));
            let upper: [u8; 16] = {
                let mut buf = [0u8; 16];
                for (d, s) in buf.iter_mut().zip(t.name().bytes()) {
                    *d = s.to_ascii_uppercase();
                }
                buf
            };
            let upper = core::str::from_utf8(&upper[..t.name().len()]).unwrap();
            assert_eq!(ElementType::from_name(upper), Some(*t));
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(ElementType::nearest("bf61"), Some(ElementType::Bf16));
        assert_eq!(ElementType::nearest("preds"), Some(ElementType::Pred));
        assert_eq!(ElementType::nearest("zzzzzzzzz"), None);
    }

    #[test]
    fn a_swap_of_neighbours_is_one_edit() {
        assert_eq!(edit_distance("f23", "f32"), 1);
        assert_eq!(edit_distance("fb16", "bf16"), 1);
        assert_eq!(edit_distance("F23", "f32"), 1);
        // Optimal string alignment: no edit of a swapped pair.
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(ElementType::nearest("f23"), Some(ElementType::F32));
        assert_eq!(ElementType::nearest("s23"), Some(ElementType::S32));
        assert_eq!(ElementType::nearest("fb16"), Some(ElementType::Bf16));
        assert_eq!(ElementType::nearest("u61"), Some(ElementType::U16));
        let err = crate::parse("f23[2]").unwrap_err();
        assert!(matches!(
            err.first().kind(),
            crate::ErrorKind::UnknownElementType {
                suggestion: Some(ElementType::F32),
                ..
            }
        ));
    }
}
