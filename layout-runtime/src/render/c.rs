//! The index programs as a C header: the same straight-line steps `layout!`
//! prints as Rust (shifts and masks for powers of two), so one checked
//! layout can be used from C, C++ and CUDA kernels.

use core::fmt::{self, Write};

use crate::eval::program::{scaling, Operand, Operator, Spelling};
use crate::{
    program::{InverseProgram, OffsetProgram, Op, Program},
    Layout,
};

/// A self-contained C99 header (also valid C++ and CUDA) with two
/// functions for one layout:
///
/// - `size_t PREFIX_offset(const size_t *index)`: the storage offset of an
///   index inside the dims (unchecked: unspecified outside them);
/// - `int PREFIX_index_of(size_t offset, size_t *index)`: writes the index
///   stored at `offset` and returns 1, or returns 0 for padding or an offset
///   past the storage, as [`Layout::index_of`].
///
/// The functions are `static inline`, so any number of C files may include
/// the header, each getting its own inlined copy and no symbol to clash at
/// link time; an include guard named after the prefix lets one file include
/// it twice, and C++ sees them in an `extern "C"` block. The prefix is
/// `xla_layout` unless [`with_prefix`](Self::with_prefix) gives another, so
/// several layouts' headers can be included together. Under `nvcc` the
/// functions are also `__host__ __device__`; define `XLA_LAYOUT_FN` before
/// the first include to choose other qualifiers. Where a constant needs a
/// 64-bit `size_t`, the header fails to compile on a narrower target rather
/// than compute wrong offsets.
///
/// # Examples
///
/// ```
/// use xla_layout::render::CCode;
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let c = CCode::new(&l).to_string();
/// assert!(c.contains("#ifndef XLA_LAYOUT_H_xla_layout\n#define XLA_LAYOUT_H_xla_layout\n"));
/// assert!(c.contains("XLA_LAYOUT_FN size_t xla_layout_offset(const size_t *index)\n{\n"));
/// assert!(c.contains("    if (offset >= 24u) return 0;\n"));
/// assert!(c.ends_with("#endif /* XLA_LAYOUT_H_xla_layout */\n"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CCode<'a> {
    layout: &'a Layout,
    prefix: &'a str,
}

impl<'a> CCode<'a> {
    /// The functions `xla_layout_offset` and `xla_layout_index_of`.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[10,20]{0,1}").unwrap();
    /// let c = xla_layout::render::CCode::new(&l).to_string();
    /// assert!(c.contains("return v0 * 10u + v1;"));
    /// ```
    pub fn new(layout: &'a Layout) -> Self {
        CCode {
            layout,
            prefix: "xla_layout",
        }
    }

    /// The functions `{prefix}_offset` and `{prefix}_index_of`, or `None` if
    /// `prefix` is not a C identifier (ASCII letters, digits and `_`, not
    /// starting with a digit).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::render::CCode;
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// let c = CCode::with_prefix(&l, "fig2").unwrap().to_string();
    /// assert!(c.contains("int fig2_index_of(size_t offset, size_t *index)"));
    /// assert!(CCode::with_prefix(&l, "2fig").is_none());
    /// ```
    pub fn with_prefix(layout: &'a Layout, prefix: &'a str) -> Option<Self> {
        let ok = prefix
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        ok.then_some(CCode { layout, prefix })
    }
}

/// `vN`: the C name of step `N`.
struct Var(u16);

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// `vA <operator> operand` as C writes it: constants unsigned except shift
/// counts, parenthesised where the operator asks to be (statements and
/// sums are never nested deeper).
struct Binary(u16, Operator, Operand);

impl fmt::Display for Binary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Binary(a, operator, operand) = *self;
        let (open, close) = if operator.always_grouped() {
            ("(", ")")
        } else {
            ("", "")
        };
        write!(f, "{open}{} {} ", Var(a), operator.symbol())?;
        match operand {
            Operand::Step(b) => write!(f, "{}", Var(b))?,
            Operand::Constant(k) if operator.shifts() => write!(f, "{k}")?,
            Operand::Constant(k) => write!(f, "{k}u")?,
        }
        f.write_str(close)
    }
}

/// `v * k` as `layout!` writes it: a shift for a power of two.
struct Scaled(u16, usize);

impl fmt::Display for Scaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match scaling(self.1) {
            None => write!(f, "{}", Var(self.0)),
            Some((operator, k)) => write!(f, "{}", Binary(self.0, operator, Operand::Constant(k))),
        }
    }
}

/// `const size_t vN = ...;` for every step; `input` names input `n`.
fn steps(
    f: &mut dyn Write,
    program: &Program,
    input: &dyn Fn(&mut dyn Write, u8) -> fmt::Result,
) -> fmt::Result {
    for (i, op) in program.steps().iter().enumerate() {
        write!(f, "    const size_t {} = ", Var(i as u16))?;
        match op.spelling() {
            Spelling::Input(n) => input(f, n),
            Spelling::Same(a) => write!(f, "{}", Var(a)),
            Spelling::Binary(a, operator, operand) => {
                write!(f, "{}", Binary(a, operator, operand))
            }
        }?;
        f.write_str(";\n")?;
    }
    Ok(())
}

/// The largest constant the code uses, to know whether `size_t` must be 64 bits.
fn largest_constant(l: &Layout, offset: &OffsetProgram, inverse: &InverseProgram) -> usize {
    let ops = offset
        .program()
        .steps()
        .iter()
        .chain(inverse.program().steps());
    let from_ops = ops
        .map(|op| match *op {
            Op::Div(_, k) | Op::Mod(_, k) | Op::Mul(_, k) => k,
            Op::Input(_) | Op::Add(..) => 0,
        })
        .max()
        .unwrap_or(0);
    let scales = offset.terms().iter().map(|t| t.scale).max().unwrap_or(0);
    let bounds = inverse.checks().iter().map(|c| c.bound).max().unwrap_or(0);
    from_ops.max(scales).max(bounds).max(l.storage_len())
}

impl fmt::Display for CCode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (l, p) = (self.layout, self.prefix);
        let rank = l.rank();
        let last = rank.saturating_sub(1);
        writeln!(
            f,
            "/* The XLA layout {l}: {} elements in {} slots ({} bytes).",
            l.len(),
            l.storage_len(),
            l.storage_bytes()
        )?;
        f.write_str(" *\n")?;
        if rank == 0 {
            writeln!(
                f,
                " * {p}_offset(index): the storage offset of the scalar (index is not read)."
            )?;
            writeln!(
                f,
                " * {p}_index_of(offset, index): returns 1 if offset holds the scalar, else 0."
            )?;
        } else {
            writeln!(
                f,
                " * {p}_offset(index): the storage offset of index[0..{last}], which must lie"
            )?;
            write!(f, " *   inside the dims ")?;
            dims(f, l.dims())?;
            f.write_str("; outside them the result is unspecified.\n")?;
            writeln!(
                f,
                " * {p}_index_of(offset, index): writes the index stored at offset to"
            )?;
            writeln!(
                f,
                " *   index[0..{last}] and returns 1, or returns 0 for padding or offset >= {}.",
                l.storage_len()
            )?;
        }
        f.write_str(
            " *\n * Straight-line arithmetic generated by xla-layout: a C99 header, also\n * C++ and CUDA. The functions are static inline, so any number of files\n * may include it. */\n",
        )?;
        // Named after the prefix, the one thing two headers that may be
        // included together must differ in.
        writeln!(f, "#ifndef XLA_LAYOUT_H_{p}\n#define XLA_LAYOUT_H_{p}\n")?;
        f.write_str("#include <stddef.h>\n\n")?;
        f.write_str("#ifndef XLA_LAYOUT_FN\n#ifdef __CUDACC__\n#define XLA_LAYOUT_FN static inline __host__ __device__\n#else\n#define XLA_LAYOUT_FN static inline\n#endif\n#endif\n\n")?;
        f.write_str("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")?;
        let (offset, inverse) = l.programs();
        if largest_constant(l, &offset, &inverse) > 0xFFFF_FFFF {
            f.write_str("/* The constants below need a 64-bit size_t. */\n")?;
            writeln!(
                f,
                "typedef char {p}_needs_64_bit_size_t[sizeof(size_t) >= 8 ? 1 : -1];\n"
            )?;
        }
        self.offset(f, &offset)?;
        f.write_char('\n')?;
        self.index_of(f, &inverse)?;
        f.write_str("\n#ifdef __cplusplus\n}\n#endif\n\n")?;
        writeln!(f, "#endif /* XLA_LAYOUT_H_{p} */")
    }
}

fn dims(f: &mut dyn Write, dims: &[usize]) -> fmt::Result {
    f.write_char('[')?;
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        write!(f, "{d}")?;
    }
    f.write_char(']')
}

impl CCode<'_> {
    fn offset(&self, f: &mut dyn Write, p: &OffsetProgram) -> fmt::Result {
        writeln!(
            f,
            "XLA_LAYOUT_FN size_t {}_offset(const size_t *index)\n{{",
            self.prefix
        )?;
        if !p
            .program()
            .steps()
            .iter()
            .any(|op| matches!(op, Op::Input(_)))
        {
            f.write_str("    (void)index;\n")?;
        }
        steps(f, p.program(), &|f, n| write!(f, "index[{n}]"))?;
        f.write_str("    return ")?;
        match p.terms().split_first() {
            None => f.write_char('0')?,
            Some((first, rest)) => {
                write!(f, "{}", Scaled(first.step, first.scale))?;
                for t in rest {
                    write!(f, " + {}", Scaled(t.step, t.scale))?;
                }
            }
        }
        f.write_str(";\n}\n")
    }

    fn index_of(&self, f: &mut dyn Write, inv: &InverseProgram) -> fmt::Result {
        let l = self.layout;
        writeln!(
            f,
            "XLA_LAYOUT_FN int {}_index_of(size_t offset, size_t *index)\n{{",
            self.prefix
        )?;
        if inv.storage_len() == 0 {
            return f.write_str("    (void)offset;\n    (void)index;\n    return 0;\n}\n");
        }
        if l.rank() == 0 {
            f.write_str("    (void)index;\n")?;
        }
        writeln!(f, "    if (offset >= {}u) return 0;", inv.storage_len())?;
        steps(f, inv.program(), &|f, _| f.write_str("offset"))?;
        if let Some((first, rest)) = inv.checks().split_first() {
            write!(f, "    if (({} >= {}u)", Var(first.step), first.bound)?;
            for c in rest {
                write!(f, " || ({} >= {}u)", Var(c.step), c.bound)?;
            }
            f.write_str(") return 0;\n")?;
        }
        for (d, out) in inv.outputs().iter().enumerate() {
            match out {
                Some(s) => writeln!(f, "    index[{d}] = {};", Var(*s))?,
                None => writeln!(f, "    index[{d}] = 0;")?,
            }
        }
        f.write_str("    return 1;\n}\n")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::{Binary, Scaled};
    use crate::eval::program::{Operand, Spelling};
    use crate::program::Op;

    fn c(op: Op) -> std::string::String {
        match op.spelling() {
            Spelling::Input(n) => std::format!("index[{n}]"),
            Spelling::Same(a) => std::format!("v{a}"),
            Spelling::Binary(a, operator, operand) => Binary(a, operator, operand).to_string(),
        }
    }

    #[test]
    fn each_op_reads_as_c() {
        assert_eq!(c(Op::Div(1, 8)), "v1 >> 3");
        assert_eq!(c(Op::Div(1, 6)), "v1 / 6u");
        assert_eq!(c(Op::Mod(1, 8)), "v1 & 7u");
        assert_eq!(c(Op::Mod(1, 6)), "v1 % 6u");
        assert_eq!(c(Op::Mul(1, 8)), "(v1 << 3)");
        assert_eq!(c(Op::Mul(1, 6)), "v1 * 6u");
        assert_eq!(c(Op::Add(1, 2)), "v1 + v2");
        assert_eq!(Scaled(4, 1).to_string(), "v4");
        assert_eq!(Scaled(4, 2).to_string(), "(v4 << 1)");
        assert_eq!(
            Binary(0, crate::eval::program::Operator::Add, Operand::Constant(1)).to_string(),
            "v0 + 1u"
        );
    }
}
