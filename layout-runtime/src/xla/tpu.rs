//! The TPU tiling chooser of SPEC.md §6: the tiles XLA uses on TPUs, as the
//! documents name them, for any element type and shape.
//!
//! A TPU vector register is 8 sublanes of 128 lanes of 32 bits, so the
//! tiles cover 8 rows of 128 elements of the two most minor physical dims,
//! and narrower types pack several rows into one 32-bit word with a second
//! level `(p,1)`, where `p = 32 / bits`:
//!
//! | element | rank 2 and up | rank 1 |
//! |---|---|---|
//! | 32 bits and wider | `(8,128)` | `(1024)` |
//! | 16 bits (`bf16`, `f16`, `s16`, `u16`) | `(8,128)(2,1)` | `(1024)(128)(2,1)` |
//! | 8 bits (`s8`, `u8`, every `f8*`) | `(8,128)(4,1)` | `(1024)(128)(4,1)` |
//! | 4 bits (`s4`, `u4`, `f4e2m1fn`) | `(8,128)(8,1)E(4)` | `(1024)(128)(8,1)E(4)` |
//! | 2 bits (`s2`, `u2`) | `(16,128)(16,1)E(2)` | `(2048)(128)(16,1)E(2)` |
//! | `pred`, `s1`, `u1` | `(32,128)(32,1)E(1)` | `(4096)(128)(32,1)E(1)` |
//! | scalar | untiled | |
//!
//! Choices made where the documents are brief:
//!
//! - **Small second-minor dim.** When the second most minor physical dim has
//!   size 1 or 2 the first tile has 2 rows, for size 3 or 4 it has 4 rows,
//!   to save memory, as the documents' "TPU small tile format" says; but never
//!   fewer rows than the packing needs (`bf16[2,256]` gets `(2,128)(2,1)`,
//!   `s8[3,256]` gets `(4,128)(4,1)`, `s4[2,256]` keeps `(8,128)(8,1)`).
//!   Newer TPUs use `(1,128)` for size 1; this chooser follows the documents.
//! - **`pred`** gets the documents' proposed 1-bit format, `(32,128)(32,1)`
//!   with `E(1)`. Today's XLA stores a `pred` in a byte; for that format use
//!   the 8-bit tiling with [`LayoutBuilder`] directly.
//! - **Sub-byte types** carry an explicit `E(n)`, as XLA dumps print them.
//! - **Rank 1.** The documents name `(1024)(128)(2,1)` for 16-bit vectors:
//!   1024 elements cut into rows of 128, pairs of rows packed. Other widths
//!   follow the same pattern with `p` rows packed (and at least 8 rows, one
//!   register); 32-bit and wider vectors fill one register, `(1024)`.
//! - **Wider than 32 bits** (`f64`, `s64`, `c64`, `c128`): the documents
//!   name nothing; they get the 32-bit tiling.
//! - **Scalars** are left untiled: there is nothing to cover with tiles.
//!
//! # Examples
//!
//! ```
//! use xla_layout::{tpu::tpu_layout, ElementType};
//! let l = tpu_layout(ElementType::Bf16, &[8, 1, 1280, 16384]).unwrap();
//! assert_eq!(l.to_string(), "bf16[8,1,1280,16384]{3,2,1,0:T(8,128)(2,1)}");
//! ```

use core::fmt;

use crate::{ElementType, Layout, LayoutBuilder, ParseError, TileDim::Size};

/// Rows of 128 lanes in one tile and rows packed into one 32-bit word.
struct Choice {
    /// Rank of the shape: 0 (untiled), 1, or 2 for any rank of 2 and up.
    rank: usize,
    rows: usize,
    packing: usize,
    /// Bits per element as stored (`pred` packed to 1).
    bits: u32,
    /// Size of the second most minor physical dim, for rank 2 and up.
    second: usize,
    element: ElementType,
}

/// The chooser itself, on the physical dims (most major first).
fn choose(element: ElementType, physical: &[usize]) -> Choice {
    let bits = if element == ElementType::Pred {
        1
    } else {
        element.bits()
    };
    let packing = if bits >= 32 { 1 } else { (32 / bits) as usize };
    let (rank, second, small) = match *physical {
        [] => (0, 0, 0),
        [_] => (1, 0, 8),
        [.., second, _] => (
            2,
            second,
            if second <= 2 {
                2
            } else if second <= 4 {
                4
            } else {
                8
            },
        ),
    };
    Choice {
        rank,
        rows: small.max(packing),
        packing,
        bits,
        second,
        element,
    }
}

impl Choice {
    /// `E(n)` to write: sub-byte types carry it, as XLA dumps print them.
    fn explicit_bits(&self) -> Option<u32> {
        (self.rank > 0 && self.bits < 8).then_some(self.bits)
    }
}

/// Which rule of the table chose a TPU tiling, in words; see [`tpu_rule`].
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("bf16[16,256]").unwrap();
/// let rule = xla_layout::tpu::tpu_rule(&l).to_string();
/// assert_eq!(rule, "16-bit elements: 8 rows of 128, 2 rows packed into each 32-bit word");
/// ```
pub struct TpuRule(Choice);

impl fmt::Display for TpuRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.0;
        if c.rank == 0 {
            return f.write_str("a scalar: untiled");
        }
        if c.element == ElementType::Pred {
            f.write_str("pred in the proposed 1-bit format")?;
        } else if c.bits >= 32 {
            f.write_str("32-bit and wider elements")?;
        } else {
            write!(f, "{}-bit elements", c.bits)?;
        }
        if c.rank == 1 {
            write!(
                f,
                ", rank 1: {} elements cut into rows of 128",
                128 * c.rows
            )?;
        } else if c.rows < 8 {
            write!(
                f,
                ", second-minor dim of size {}: {} rows of 128",
                c.second, c.rows
            )?;
        } else {
            write!(f, ": {} rows of 128", c.rows)?;
        }
        if c.packing > 1 {
            write!(f, ", {} rows packed into each 32-bit word", c.packing)?;
        }
        Ok(())
    }
}

/// Builds the chosen tiling onto `builder` for a shape of this physical rank.
fn apply(mut builder: LayoutBuilder, c: &Choice) -> Result<Layout, ParseError> {
    match c.rank {
        0 => {}
        1 if c.packing == 1 => builder = builder.tile(&[Size(128 * c.rows)]),
        1 => {
            builder = builder
                .tile(&[Size(128 * c.rows)])
                .tile(&[Size(128)])
                .tile(&[Size(c.packing), Size(1)]);
        }
        _ => {
            builder = builder.tile(&[Size(c.rows), Size(128)]);
            if c.packing > 1 {
                builder = builder.tile(&[Size(c.packing), Size(1)]);
            }
        }
    }
    if let Some(bits) = c.explicit_bits() {
        builder = builder.element_bits(bits);
    }
    builder.build()
}

/// The TPU layout of SPEC.md §6 for a row-major array of `element` with
/// these `dims`; see the module docs for the table and the choices made.
///
/// # Errors
///
/// What [`LayoutBuilder::build`] reports: too many dims, or storage that
/// does not fit in `usize`.
///
/// # Examples
///
/// ```
/// use xla_layout::{tpu::tpu_layout, ElementType};
/// let t = |e, d: &[usize]| tpu_layout(e, d).unwrap().to_string();
/// assert_eq!(t(ElementType::F32, &[16, 256]), "f32[16,256]{1,0:T(8,128)}");
/// assert_eq!(t(ElementType::F32, &[2, 256]), "f32[2,256]{1,0:T(2,128)}");
/// assert_eq!(t(ElementType::S8, &[16, 256]), "s8[16,256]{1,0:T(8,128)(4,1)}");
/// assert_eq!(t(ElementType::S4, &[16, 256]), "s4[16,256]{1,0:T(8,128)(8,1)E(4)}");
/// assert_eq!(t(ElementType::Pred, &[64, 128]), "pred[64,128]{1,0:T(32,128)(32,1)E(1)}");
/// assert_eq!(t(ElementType::Bf16, &[2048]), "bf16[2048]{0:T(1024)(128)(2,1)}");
/// assert_eq!(t(ElementType::F32, &[]), "f32[]");
/// ```
pub fn tpu_layout(element: ElementType, dims: &[usize]) -> Result<Layout, ParseError> {
    let builder = LayoutBuilder::new(element, dims);
    let choice = choose(element, dims);
    apply(builder, &choice)
}

/// The TPU tiling for the element type, dims and `minor_to_major` of
/// `layout` (its memory space kept; its tiles, `L(n)` and `E(n)` replaced).
///
/// # Errors
///
/// As [`tpu_layout`].
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("bf16[256,3]{0,1}").unwrap();
/// let t = xla_layout::tpu::tpu_layout_like(&l).unwrap();
/// assert_eq!(t.to_string(), "bf16[256,3]{0,1:T(4,128)(2,1)}");
/// ```
pub fn tpu_layout_like(layout: &Layout) -> Result<Layout, ParseError> {
    let mut builder = LayoutBuilder::new(layout.element_type(), layout.dims())
        .minor_to_major(layout.minor_to_major());
    builder.keep_attributes(&layout.attributes, |n| n.tpu_keeps);
    let physical = physical(layout);
    let choice = choose(layout.element_type(), &physical[..layout.rank()]);
    apply(builder, &choice)
}

/// Which rule of the table chooses the tiling for `layout`'s element type
/// and physical shape, in words.
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[2,300]").unwrap();
/// assert_eq!(
///     xla_layout::tpu::tpu_rule(&l).to_string(),
///     "32-bit and wider elements, second-minor dim of size 2: 2 rows of 128"
/// );
/// ```
pub fn tpu_rule(layout: &Layout) -> TpuRule {
    let physical = physical(layout);
    TpuRule(choose(layout.element_type(), &physical[..layout.rank()]))
}

fn physical(layout: &Layout) -> [usize; crate::MAX_RANK] {
    let mut dims = [0; crate::MAX_RANK];
    for (p, &d) in layout.minor_to_major().iter().rev().enumerate() {
        dims[p] = layout.dims()[d];
    }
    dims
}
