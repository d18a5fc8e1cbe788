//! What can go wrong in a relayout.

use core::fmt;

use super::bits::Fit;
use crate::ElementType;

/// Why a relayout refused its arguments. Nothing was written when one is
/// returned.
///
/// # Examples
///
/// ```
/// use xla_layout::RelayoutError;
/// let l = xla_layout::parse("f32[3,5]").unwrap();
/// let err = l.pack(&[0.0f32; 14], &mut [0.0; 15], xla_layout::Options::default()).unwrap_err();
/// assert_eq!(err, RelayoutError::LogicalLength { expected: 15, actual: 14 });
/// assert_eq!(err.to_string(), "the logical buffer holds 14 elements, but the layout has 15");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RelayoutError {
    /// The row-major buffer does not hold exactly one value per element.
    LogicalLength {
        /// [`Layout::len`](crate::Layout::len).
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// The storage buffer does not hold exactly one value per slot (for the
    /// `_bits` methods: one byte per storage byte).
    StorageLength {
        /// [`Layout::storage_len`](crate::Layout::storage_len), or
        /// [`storage_bytes`](crate::Layout::storage_bytes) for packed bits.
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// The Rust element type is not as wide as one storage slot.
    ElementSize {
        /// Bits per slot in the layout.
        layout_bits: u32,
        /// Bits of the Rust type.
        type_bits: usize,
    },
    /// The layout packs several elements per byte: use the `_bits` methods.
    PackedLayout {
        /// Bits per element.
        bits: u32,
    },
    /// A `_bits` method on a layout whose elements take whole bytes.
    NotPacked {
        /// Bits per element.
        bits: u32,
    },
    /// Packed elements whose width does not divide a byte (`E(3)`, `E(5)`, ...).
    UnsupportedBits {
        /// Bits per element.
        bits: u32,
    },
    /// A `_bits` method on a float type narrowed by `E(n)` (`f32[4]{0:E(4)}`):
    /// its bits cannot be cut without changing every value.
    NarrowedFloat {
        /// The element type.
        element: ElementType,
        /// Bits per element (`E(n)`).
        bits: u32,
    },
    /// A value (or the fill) of a sub-byte relayout that is not an element's
    /// byte (see [`BitElement`](crate::BitElement)): outside what the element
    /// type holds in `n` bits, -8 to 7 for `s4` or for `s8[21]{0:E(4)}`, 0 to
    /// 15 for `u4`, 0 to 1 for `pred`. A refused fill is found before
    /// anything is written; a refused value as the values are packed, after
    /// which the storage is left all zeros.
    ValueOutOfRange {
        /// Row-major position of the first such value; `None` for the fill.
        position: Option<usize>,
        /// The element type, whose signedness sets the range.
        element: ElementType,
        /// Bits per element (`E(n)`).
        bits: u32,
    },
    /// `convert` between layouts of different ranks.
    RankMismatch {
        /// Rank of the source layout.
        from: usize,
        /// Rank of the destination layout.
        to: usize,
    },
    /// `convert` between layouts whose dims differ.
    DimMismatch {
        /// The first dim that differs.
        dim: usize,
        /// Its size in the source layout.
        from: usize,
        /// Its size in the destination layout.
        to: usize,
    },
    /// `convert` between layouts of different element types.
    ElementMismatch {
        /// Element type of the source layout.
        from: ElementType,
        /// Element type of the destination layout.
        to: ElementType,
    },
    /// `convert` between layouts of different bits per element (`E(n)`).
    BitsMismatch {
        /// Bits per element of the source layout.
        from: u32,
        /// Bits per element of the destination layout.
        to: u32,
    },
}

impl fmt::Display for RelayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RelayoutError::LogicalLength { expected, actual } => write!(
                f,
                "the logical buffer holds {actual} elements, but the layout has {expected}"
            ),
            RelayoutError::StorageLength { expected, actual } => write!(
                f,
                "the storage buffer holds {actual} values, but the layout's storage takes {expected}"
            ),
            RelayoutError::ElementSize {
                layout_bits,
                type_bits,
            } => write!(
                f,
                "the layout stores {layout_bits} bits per element, but the Rust type has {type_bits}; \
                 use a type of the same width"
            ),
            RelayoutError::PackedLayout { bits } => write!(
                f,
                "the layout packs {bits}-bit elements into bytes; use `pack_bits`, `unpack_bits` or `convert_bits`"
            ),
            RelayoutError::NotPacked { bits } => write!(
                f,
                "the layout stores {bits} bits per element, whole bytes; use `pack`, `unpack` or `convert`"
            ),
            RelayoutError::UnsupportedBits { bits } => write!(
                f,
                "packed elements of {bits} bits are not supported; `E(1)`, `E(2)` and `E(4)` are"
            ),
            RelayoutError::NarrowedFloat { element, bits } => write!(
                f,
                "`{element}` elements cannot be narrowed to `E({bits})`: cutting a float's bits changes its value"
            ),
            RelayoutError::ValueOutOfRange {
                position,
                element,
                bits,
            } => {
                let (lo, hi) = Fit::new(element, bits).bounds();
                match position {
                    Some(p) => write!(f, "the value at position {p}")?,
                    None => f.write_str("the fill value")?,
                }
                let unit = if bits == 1 { "bit" } else { "bits" };
                let what = if element.integer_signedness().is_some() {
                    ""
                } else {
                    "the bit patterns "
                };
                write!(
                    f,
                    " does not fit in `E({bits})`: `{element}` stored in {bits} {unit} holds {what}{lo} to {hi}"
                )
            }
            RelayoutError::RankMismatch { from, to } => {
                write!(f, "cannot convert between rank {from} and rank {to}")
            }
            RelayoutError::DimMismatch { dim, from, to } => write!(
                f,
                "cannot convert: dim {dim} has size {from} in the source and {to} in the destination"
            ),
            RelayoutError::ElementMismatch { from, to } => {
                write!(f, "cannot convert `{from}` elements to `{to}`: the element types must match")
            }
            RelayoutError::BitsMismatch { from, to } => write!(
                f,
                "cannot convert {from}-bit storage to {to}-bit storage: the element widths must match"
            ),
        }
    }
}

impl core::error::Error for RelayoutError {}
