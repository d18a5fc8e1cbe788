//! How every emitter prints numbers, step names and the steps of a folded
//! program: `offset` (by `linear`) and `index_of` (by `emit`) share these,
//! so an op prints one way everywhere. Which operator a step becomes comes
//! from the runtime's table of spellings (`Op::spelling`), which the C
//! printer follows too; only the Rust form of each operator is here.
//!
//! They print text, which the compiler lexes once for the whole expansion:
//! in a user's build the macro runs unoptimized, and building the same
//! code token by token cost most of its time.

use std::fmt::Write as _;

use layout_runtime::program::{scaling, Operand, Operator, Spelling};
use layout_runtime::{Op, StepId};

/// A constant operand of `operator`: shift amounts as typed `u32`
/// literals. With an unsuffixed one, `x << 3` leaves the right-hand side's
/// type open until integer fallback, and type checking weighs every `Shl`
/// impl of `usize` meanwhile, in every build that type-checks the expansion
/// afresh.
fn constant(operator: Operator, k: usize) -> String {
    match operator {
        Operator::Shl | Operator::Shr => {
            format!(
                "{}u32",
                u32::try_from(k).expect("a shift of a usize is below 64")
            )
        }
        _ => k.to_string(),
    }
}

/// The name of step `step`'s value.
pub(crate) fn var(step: StepId) -> String {
    format!("v{step}")
}

/// Input `n` of an offset: entry `n` of the `index` argument.
pub(crate) fn index_input(n: u8) -> String {
    format!("index[{n}]")
}

/// `e * k`, wrapping, as a shift when `k` is a power of two.
pub(crate) fn scaled(e: String, k: usize) -> String {
    match scaling(k) {
        None => e,
        Some((operator, k)) => binary(&e, operator, &constant(operator, k), false),
    }
}

/// One step: its arguments printed by `arg`, input `n` by `input`.
/// Shifts, masks, divisions and remainders are parenthesised when `nested`
/// (the step is part of a larger expression), and bare as the whole
/// right-hand side of a `let`, where parentheses would be `unused_parens`.
pub(crate) fn op(
    op: Op,
    nested: bool,
    arg: &dyn Fn(StepId) -> String,
    input: &dyn Fn(u8) -> String,
) -> String {
    match op.spelling() {
        Spelling::Input(n) => input(n),
        Spelling::Same(a) => arg(a),
        Spelling::Binary(a, operator, operand) => {
            let rhs = match operand {
                Operand::Step(b) => arg(b),
                Operand::Constant(k) => constant(operator, k),
            };
            binary(&arg(a), operator, &rhs, nested)
        }
    }
}

/// `a <operator> b` as Rust: a wrapping method where the operator has one,
/// else the symbol, parenthesised when `nested` or when the operator always is.
fn binary(a: &str, operator: Operator, b: &str, nested: bool) -> String {
    let mut out = String::with_capacity(a.len() + b.len() + 16);
    // Writing to a `String` cannot fail.
    let _ = if let Some(method) = operator.wrapping_method() {
        write!(out, "{a}.{method}({b})")
    } else if nested || operator.always_grouped() {
        write!(out, "({a} {} {b})", operator.symbol())
    } else {
        write!(out, "{a} {} {b}", operator.symbol())
    };
    out
}

#[cfg(test)]
mod tests {
    use layout_runtime::Op;
    use proc_macro2::TokenStream;

    use super::{op, var};

    /// `text` as the compiler prints its tokens, as the expansion is lexed.
    fn tokens(text: &str) -> String {
        text.parse::<TokenStream>().expect("lexes").to_string()
    }

    fn rust(step: Op, nested: bool) -> String {
        tokens(&op(step, nested, &var, &super::index_input))
    }

    fn scaled(e: &str, k: usize) -> String {
        tokens(&super::scaled(e.to_owned(), k))
    }

    #[test]
    fn each_op_reads_as_rust() {
        assert_eq!(rust(Op::Div(1, 8), false), "v1 >> 3u32");
        assert_eq!(rust(Op::Div(1, 8), true), "(v1 >> 3u32)");
        assert_eq!(rust(Op::Div(1, 6), false), "v1 / 6");
        assert_eq!(rust(Op::Mod(1, 8), true), "(v1 & 7)");
        assert_eq!(rust(Op::Mod(1, 6), false), "v1 % 6");
        assert_eq!(rust(Op::Mul(1, 8), false), "(v1 << 3u32)");
        assert_eq!(rust(Op::Mul(1, 6), true), "v1 . wrapping_mul (6)");
        assert_eq!(rust(Op::Add(1, 2), false), "v1 . wrapping_add (v2)");
        assert_eq!(rust(Op::Input(2), false), "index [2]");
        assert_eq!(scaled("x", 1), "x");
        assert_eq!(scaled("x", 4), "(x << 2u32)");
    }
}
