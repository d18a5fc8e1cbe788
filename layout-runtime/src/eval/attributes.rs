//! The typed accessors of a layout's number attributes, read from the
//! slots that the table of attributes (`spec/attributes.rs`) gives them.

use crate::spec::attributes::{WrittenAttribute, ELEMENT_BITS, MEMORY_SPACE, TAIL_ALIGNMENT};
use crate::Layout;

impl Layout {
    /// Bits per element in storage: `E(n)` if written, else the type's width.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("s4[8]{0:E(4)}").unwrap().element_bits(), 4);
    /// assert_eq!(xla_layout::parse("pred[8]").unwrap().element_bits(), 8);
    /// ```
    pub fn element_bits(&self) -> u32 {
        self.explicit_element_bits().unwrap_or(self.element.bits())
    }

    /// `E(n)` as written, if it was.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("s4[8]").unwrap().explicit_element_bits(), None);
    /// ```
    pub fn explicit_element_bits(&self) -> Option<u32> {
        let bits = self.attributes.get(ELEMENT_BITS);
        // At most `MAX_ELEMENT_BITS`: validation and the compact words check.
        (bits != 0).then_some(bits as u32)
    }

    /// `L(n)`, 1 when not written.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[5]{0:L(4)}").unwrap().tail_alignment(), 4);
    /// ```
    pub fn tail_alignment(&self) -> usize {
        // At most `usize::MAX`: validation and the compact words check.
        self.attributes.get(TAIL_ALIGNMENT) as usize
    }

    /// `S(n)`, 0 when not written.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::parse("f32[5]{0:S(1)}").unwrap().memory_space(), 1);
    /// ```
    pub fn memory_space(&self) -> u64 {
        self.attributes.get(MEMORY_SPACE)
    }
}

impl Layout {
    /// The number attributes written, in XLA's order; for `layout!`, which
    /// names types and sets constants from them.
    #[doc(hidden)]
    pub fn __attributes(&self) -> impl Iterator<Item = WrittenAttribute> + '_ {
        self.attributes
            .written()
            .map(|(letters, n, value)| WrittenAttribute {
                letters,
                constant: n.constant,
                value,
            })
    }
}
