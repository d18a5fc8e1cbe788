//! The shapes and sizes of a layout, in a few lines.

use core::fmt::{self, Write};

use crate::Layout;

/// The shapes and sizes of a layout: canonical form, element width, the
/// physical shape, the shape after each tiling level, storage in slots and
/// bytes, and the padding overhead.
///
/// # Examples
///
/// ```
/// use xla_layout::render::Summary;
/// let l = xla_layout::parse("F32[3,5]{1,0:T(2,2)}").unwrap();
/// let expected = "\
/// layout    f32[3,5]{1,0:T(2,2)}
/// element   f32, 32 bits
/// dims      [3,5], minor_to_major {1,0}
/// physical  [3,5] (most major first)
/// level 1   T(2,2) -> [2,3,2,2]
/// storage   24 slots, 96 bytes
/// elements  15, 60 bytes
/// padding   9 slots, 37.5% of storage, 60.0% overhead
/// ";
/// assert_eq!(Summary::new(&l).to_string(), expected);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Summary<'a> {
    layout: &'a Layout,
}

impl<'a> Summary<'a> {
    /// The summary of `layout`.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("s4[64,128]{1,0:E(4)}").unwrap();
    /// let text = xla_layout::render::Summary::new(&l).to_string();
    /// assert!(text.contains("storage   8192 slots, 4096 bytes\n"));
    /// ```
    pub fn new(layout: &'a Layout) -> Self {
        Summary { layout }
    }
}

/// `part` as a percentage of `whole`, to one decimal, rounded half up.
struct Percent(usize, usize);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (part, whole) = (self.0 as u128, self.1 as u128);
        let tenths = (part * 1000 * 2 + whole) / (whole * 2);
        write!(f, "{}.{}%", tenths / 10, tenths % 10)
    }
}

/// Dims in brackets, as in a spec: `[2,3,2,2]`.
struct Dims<'a>(&'a [usize]);

impl fmt::Display for Dims<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            write!(f, "{d}")?;
        }
        f.write_char(']')
    }
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.layout;
        writeln!(f, "layout    {l}")?;
        write!(
            f,
            "element   {}, {} bits",
            l.element_type(),
            l.element_bits()
        )?;
        if let Some(bits) = l.explicit_element_bits() {
            write!(f, " (E({bits}))")?;
        }
        f.write_char('\n')?;
        write!(f, "dims      {}, minor_to_major {{", Dims(l.dims()))?;
        for (i, d) in l.minor_to_major().iter().enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("}\n")?;
        if let Some(physical) = l.tiled_shape(0) {
            writeln!(f, "physical  {} (most major first)", Dims(physical.dims()))?;
        }
        for (i, tile) in l.tiles().iter().enumerate() {
            if let Some(shape) = l.tiled_shape(i + 1) {
                writeln!(f, "level {:<3} T{tile} -> {}", i + 1, Dims(shape.dims()))?;
            }
        }
        if l.tail_alignment() != 1 {
            writeln!(
                f,
                "L({})      storage rounds up to a multiple of {} slots",
                l.tail_alignment(),
                l.tail_alignment()
            )?;
        }
        if l.memory_space() != 0 {
            writeln!(
                f,
                "S({})      memory space {} (no effect on offsets)",
                l.memory_space(),
                l.memory_space()
            )?;
        }
        writeln!(
            f,
            "storage   {} slots, {} bytes",
            l.storage_len(),
            l.storage_bytes()
        )?;
        let data_bytes = crate::spec::element::bytes_of(l.len(), l.element_bits());
        writeln!(f, "elements  {}, {data_bytes} bytes", l.len())?;
        let padding = l.storage_len() - l.len();
        if l.storage_len() == 0 {
            f.write_str("padding   none: the array is empty and takes no storage\n")
        } else if padding == 0 {
            f.write_str("padding   none\n")
        } else {
            writeln!(
                f,
                "padding   {padding} slots, {} of storage, {} overhead",
                Percent(padding, l.storage_len()),
                Percent(padding, l.len())
            )
        }
    }
}
