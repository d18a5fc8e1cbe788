//! How generated code writes each step of a [`Program`](crate::program::Program):
//! the one table of operator spellings that `layout!` (its steps) and
//! [`CCode`](crate::render::CCode) (C) both write from, so a step reads the
//! same in both, shifts and masks for powers of two included.

use super::steps::{Op, StepId};

/// An operator of generated code, after strength reduction.
///
/// # Examples
///
/// ```
/// use xla_layout::program::Operator;
/// assert_eq!(Operator::Shr.symbol(), ">>");
/// assert_eq!(Operator::Add.wrapping_method(), Some("wrapping_add"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `a >> s`: division by `2^s`.
    Shr,
    /// `a / k`.
    Div,
    /// `a & m`: remainder by `m + 1`, a power of two.
    And,
    /// `a % k`.
    Rem,
    /// `a << s`: multiplication by `2^s`.
    Shl,
    /// `a * k`.
    Mul,
    /// `a + b`.
    Add,
}

impl Operator {
    /// The infix symbol, as C writes it (and Rust, where there is no
    /// [`wrapping_method`](Self::wrapping_method)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(xla_layout::program::Operator::And.symbol(), "&");
    /// ```
    pub const fn symbol(self) -> &'static str {
        match self {
            Operator::Shr => ">>",
            Operator::Div => "/",
            Operator::And => "&",
            Operator::Rem => "%",
            Operator::Shl => "<<",
            Operator::Mul => "*",
            Operator::Add => "+",
        }
    }

    /// The method Rust calls instead of the symbol, for operators whose
    /// result may wrap: a storage offset wraps as C's `size_t` does,
    /// without overflow checks in debug builds.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::program::Operator;
    /// assert_eq!(Operator::Mul.wrapping_method(), Some("wrapping_mul"));
    /// assert_eq!(Operator::Div.wrapping_method(), None);
    /// ```
    pub const fn wrapping_method(self) -> Option<&'static str> {
        match self {
            Operator::Mul => Some("wrapping_mul"),
            Operator::Add => Some("wrapping_add"),
            _ => None,
        }
    }

    /// Whether the constant on the right is a shift count rather than a
    /// value (C writes values unsigned, `8u`, and counts bare).
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::program::Operator;
    /// assert!(Operator::Shl.shifts());
    /// assert!(!Operator::And.shifts());
    /// ```
    pub const fn shifts(self) -> bool {
        matches!(self, Operator::Shr | Operator::Shl)
    }

    /// Whether the infix form is parenthesised wherever it stands. A scaled
    /// term stands in a sum, and `<<` binds more loosely than `+` in both
    /// languages; the others are parenthesised only inside a larger
    /// expression.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::program::Operator;
    /// assert!(Operator::Shl.always_grouped());
    /// assert!(!Operator::Shr.always_grouped());
    /// ```
    pub const fn always_grouped(self) -> bool {
        matches!(self, Operator::Shl)
    }
}

/// The right operand of a [`Spelling::Binary`].
///
/// # Examples
///
/// ```
/// use xla_layout::program::{Operand, Operator, Spelling};
/// use xla_layout::program::Op;
/// assert_eq!(Op::Mod(3, 8).spelling(), Spelling::Binary(3, Operator::And, Operand::Constant(7)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The value of an earlier step.
    Step(StepId),
    /// A constant.
    Constant(usize),
}

/// How generated code writes one step; see [`Op::spelling`].
///
/// # Examples
///
/// ```
/// use xla_layout::program::{Operand, Operator, Spelling};
/// use xla_layout::program::Op;
/// assert_eq!(Op::Input(1).spelling(), Spelling::Input(1));
/// assert_eq!(Op::Div(0, 5).spelling(), Spelling::Binary(0, Operator::Div, Operand::Constant(5)));
/// assert_eq!(Op::Div(0, 8).spelling(), Spelling::Binary(0, Operator::Shr, Operand::Constant(3)));
/// assert_eq!(Op::Add(0, 1).spelling(), Spelling::Binary(0, Operator::Add, Operand::Step(1)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// Input `n`: dim `n` of the index, or the offset.
    Input(u8),
    /// An earlier step's value unchanged (a product by one).
    Same(StepId),
    /// `a <operator> operand`.
    Binary(StepId, Operator, Operand),
}

/// How a value multiplied by `k` is written: `None` for `k == 1` (the value
/// itself), else the operator and its constant.
///
/// # Examples
///
/// ```
/// use xla_layout::program::{scaling, Operator};
/// assert_eq!(scaling(1), None);
/// assert_eq!(scaling(16), Some((Operator::Shl, 4)));
/// assert_eq!(scaling(10), Some((Operator::Mul, 10)));
/// ```
pub const fn scaling(k: usize) -> Option<(Operator, usize)> {
    if k == 1 {
        None
    } else if k.is_power_of_two() {
        Some((Operator::Shl, k.trailing_zeros() as usize))
    } else {
        Some((Operator::Mul, k))
    }
}

impl Op {
    /// How generated code writes this step: divisions, remainders and
    /// products by powers of two become shifts and masks.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::program::{Operand, Operator, Spelling};
    /// use xla_layout::program::Op;
    /// assert_eq!(Op::Mul(2, 4).spelling(), Spelling::Binary(2, Operator::Shl, Operand::Constant(2)));
    /// assert_eq!(Op::Mul(2, 1).spelling(), Spelling::Same(2));
    /// ```
    pub const fn spelling(self) -> Spelling {
        match self {
            Op::Input(n) => Spelling::Input(n),
            Op::Div(a, k) if k.is_power_of_two() => {
                constant(a, Operator::Shr, k.trailing_zeros() as usize)
            }
            Op::Div(a, k) => constant(a, Operator::Div, k),
            Op::Mod(a, k) if k.is_power_of_two() => constant(a, Operator::And, k - 1),
            Op::Mod(a, k) => constant(a, Operator::Rem, k),
            Op::Mul(a, k) => match scaling(k) {
                None => Spelling::Same(a),
                Some((operator, c)) => constant(a, operator, c),
            },
            Op::Add(a, b) => Spelling::Binary(a, Operator::Add, Operand::Step(b)),
        }
    }
}

const fn constant(a: StepId, operator: Operator, k: usize) -> Spelling {
    Spelling::Binary(a, operator, Operand::Constant(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the spelled operator computes, as generated code computes it.
    fn apply(operator: Operator, a: usize, b: usize) -> usize {
        match operator {
            Operator::Shr => a >> b,
            Operator::Div => a / b,
            Operator::And => a & b,
            Operator::Rem => a % b,
            Operator::Shl => a << b,
            Operator::Mul => a.wrapping_mul(b),
            Operator::Add => a.wrapping_add(b),
        }
    }

    #[test]
    fn spellings_compute_what_the_ops_mean() {
        let values = [0, 1, 2, 3, 7, 8, 9, 127, 128, 1000, 65_535, 1 << 40];
        for k in 1..=300usize {
            for (op, meaning) in [
                (
                    Op::Div(0, k),
                    &(|a: usize| a / k) as &dyn Fn(usize) -> usize,
                ),
                (Op::Mod(0, k), &|a: usize| a % k),
                (Op::Mul(0, k), &|a: usize| a.wrapping_mul(k)),
            ] {
                for &a in &values {
                    let spelled = match op.spelling() {
                        Spelling::Same(0) => a,
                        Spelling::Binary(0, operator, Operand::Constant(c)) => {
                            if operator.shifts() {
                                assert!(c < 64, "{op:?}");
                            }
                            apply(operator, a, c)
                        }
                        other => panic!("{op:?} spelt {other:?}"),
                    };
                    assert_eq!(spelled, meaning(a), "{op:?} at {a}");
                }
            }
        }
        assert_eq!(
            Op::Add(2, 5).spelling(),
            Spelling::Binary(2, Operator::Add, Operand::Step(5))
        );
        assert_eq!(Op::Input(3).spelling(), Spelling::Input(3));
    }

    #[test]
    fn powers_of_two_become_shifts_and_masks() {
        let shape = |op: Op| match op.spelling() {
            Spelling::Binary(_, operator, Operand::Constant(c)) => Some((operator, c)),
            _ => None,
        };
        assert_eq!(shape(Op::Div(0, 64)), Some((Operator::Shr, 6)));
        assert_eq!(shape(Op::Mod(0, 64)), Some((Operator::And, 63)));
        assert_eq!(shape(Op::Mul(0, 64)), Some((Operator::Shl, 6)));
        assert_eq!(shape(Op::Div(0, 6)), Some((Operator::Div, 6)));
        assert_eq!(shape(Op::Mod(0, 6)), Some((Operator::Rem, 6)));
        assert_eq!(shape(Op::Mul(0, 6)), Some((Operator::Mul, 6)));
    }
}
