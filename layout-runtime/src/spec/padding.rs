//! XLA's old `padding_value` (SPEC.md §7): what padding slots hold.

/// The value XLA's old padded layouts put in padding slots.
///
/// A layout string does not carry it; `layout!` takes it as an option
/// (`padding_value = lowest`), and [`pack`](crate::Layout::pack) writes it
/// as the fill of its [`Options`](crate::Options), made with [`PadValue::pad`].
///
/// # Examples
///
/// ```
/// use xla_layout::{PadValue, PaddingValue};
/// assert_eq!(f32::pad(PaddingValue::Lowest), f32::NEG_INFINITY);
/// assert_eq!(i8::pad(PaddingValue::Highest), i8::MAX);
/// assert_eq!(PaddingValue::from_name("ONE_PAD"), Some(PaddingValue::One));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PaddingValue {
    /// 0 (`ZERO_PAD`), the default.
    #[default]
    Zero,
    /// 1 (`ONE_PAD`).
    One,
    /// The lowest value: the minimum, or -infinity (`LOWEST_PAD`).
    Lowest,
    /// The highest value: the maximum, or +infinity (`HIGHEST_PAD`).
    Highest,
}

impl PaddingValue {
    /// Every padding value.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::PaddingValue;
    /// for v in PaddingValue::ALL {
    ///     assert_eq!(PaddingValue::from_name(v.name()), Some(v));
    /// }
    /// ```
    pub const ALL: [PaddingValue; 4] = [Self::Zero, Self::One, Self::Lowest, Self::Highest];

    /// The lowercase name used by `layout!` (`zero`, `one`, `lowest`, `highest`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::PaddingValue::Lowest.name(), "lowest");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Self::Zero => "zero",
            Self::One => "one",
            Self::Lowest => "lowest",
            Self::Highest => "highest",
        }
    }

    /// Reads `zero`, `one`, `lowest`, `highest`, or XLA's `ZERO_PAD`,
    /// `ONE_PAD`, `LOWEST_PAD`, `HIGHEST_PAD`, in any case.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::PaddingValue;
    /// assert_eq!(PaddingValue::from_name("Highest"), Some(PaddingValue::Highest));
    /// assert_eq!(PaddingValue::from_name("nan"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        let bare = name
            .len()
            .checked_sub(4)
            .filter(|&i| name.is_char_boundary(i) && name[i..].eq_ignore_ascii_case("_pad"))
            .map_or(name, |i| &name[..i]);
        Self::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(bare))
    }
}

/// Element types that can hold each [`PaddingValue`].
///
/// # Examples
///
/// ```
/// use xla_layout::{PadValue, PaddingValue};
/// assert_eq!(u16::pad(PaddingValue::One), 1);
/// assert!(bool::pad(PaddingValue::Highest));
/// ```
pub trait PadValue: Copy {
    /// This type's value for `value`.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{PadValue, PaddingValue};
    /// assert_eq!(i8::pad(PaddingValue::Lowest), i8::MIN);
    /// assert_eq!(f32::pad(PaddingValue::Highest), f32::INFINITY);
    /// ```
    fn pad(value: PaddingValue) -> Self;
}

macro_rules! pad_numbers {
    ($($(#[$attr:meta])* $t:ty => $zero:expr, $one:expr, $lowest:expr, $highest:expr;)*) => {$(
        $(#[$attr])*
        impl PadValue for $t {
            fn pad(value: PaddingValue) -> Self {
                match value {
                    PaddingValue::Zero => $zero,
                    PaddingValue::One => $one,
                    PaddingValue::Lowest => $lowest,
                    PaddingValue::Highest => $highest,
                }
            }
        }
    )*};
}

pad_numbers! {
    u8 => 0, 1, u8::MIN, u8::MAX;
    u16 => 0, 1, u16::MIN, u16::MAX;
    u32 => 0, 1, u32::MIN, u32::MAX;
    u64 => 0, 1, u64::MIN, u64::MAX;
    usize => 0, 1, usize::MIN, usize::MAX;
    i8 => 0, 1, i8::MIN, i8::MAX;
    i16 => 0, 1, i16::MIN, i16::MAX;
    i32 => 0, 1, i32::MIN, i32::MAX;
    i64 => 0, 1, i64::MIN, i64::MAX;
    isize => 0, 1, isize::MIN, isize::MAX;
    f32 => 0.0, 1.0, f32::NEG_INFINITY, f32::INFINITY;
    f64 => 0.0, 1.0, f64::NEG_INFINITY, f64::INFINITY;
    bool => false, true, false, true;
}

#[cfg(feature = "half")]
pad_numbers! {
    #[cfg_attr(docsrs, doc(cfg(feature = "half")))]
    half::bf16 => half::bf16::ZERO, half::bf16::ONE, half::bf16::NEG_INFINITY, half::bf16::INFINITY;
    #[cfg_attr(docsrs, doc(cfg(feature = "half")))]
    half::f16 => half::f16::ZERO, half::f16::ONE, half::f16::NEG_INFINITY, half::f16::INFINITY;
}
