//! How every emitter prints numbers, step names and the steps of a folded
//! program: `offset` (by `linear`) and `index_of` (by `emit`) share these,
//! so an op prints one way everywhere. Which operator a step becomes comes
//! from the runtime's table of spellings (`Op::spelling`), which the C
//! printer follows too; only the Rust form of each operator is here.

use layout_runtime::program::{scaling, Operand, Operator, Spelling};
use layout_runtime::{Op, StepId};
use proc_macro2::{Ident, Literal, Punct, Spacing, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

/// A `usize` literal without a suffix.
pub(crate) fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// A constant operand of `operator`: shift amounts as typed `u32`
/// literals. With an unsuffixed one, `x << 3` leaves the right-hand side's
/// type open until integer fallback, and type checking weighs every `Shl`
/// impl of `usize` meanwhile, in every build that type-checks the expansion
/// afresh.
fn constant(operator: Operator, k: usize) -> Literal {
    match operator {
        Operator::Shl | Operator::Shr => {
            Literal::u32_suffixed(u32::try_from(k).expect("a shift of a usize is below 64"))
        }
        _ => lit(k),
    }
}

/// The name of step `step`'s value.
pub(crate) fn var(step: StepId) -> Ident {
    format_ident!("v{}", step)
}

/// Input `n` of an offset: entry `n` of the `index` argument.
pub(crate) fn index_input(n: u8) -> TokenStream {
    let n = lit(usize::from(n));
    quote!(index[#n])
}

/// `e * k`, wrapping, as a shift when `k` is a power of two.
pub(crate) fn scaled(e: TokenStream, k: usize) -> TokenStream {
    match scaling(k) {
        None => e,
        Some((operator, k)) => binary(
            &e,
            operator,
            &constant(operator, k).into_token_stream(),
            false,
        ),
    }
}

/// One step: its arguments printed by `arg`, input `n` by `input`.
/// Shifts, masks, divisions and remainders are parenthesised when `nested`
/// (the step is part of a larger expression), and bare as the whole
/// right-hand side of a `let`, where parentheses would be `unused_parens`.
pub(crate) fn op(
    op: Op,
    nested: bool,
    arg: &dyn Fn(StepId) -> TokenStream,
    input: &dyn Fn(u8) -> TokenStream,
) -> TokenStream {
    match op.spelling() {
        Spelling::Input(n) => input(n),
        Spelling::Same(a) => arg(a),
        Spelling::Binary(a, operator, operand) => {
            let rhs = match operand {
                Operand::Step(b) => arg(b),
                Operand::Constant(k) => constant(operator, k).into_token_stream(),
            };
            binary(&arg(a), operator, &rhs, nested)
        }
    }
}

/// `a <operator> b` as Rust: a wrapping method where the operator has one,
/// else the symbol, parenthesised when `nested` or when the operator always is.
fn binary(a: &TokenStream, operator: Operator, b: &TokenStream, nested: bool) -> TokenStream {
    if let Some(method) = operator.wrapping_method() {
        let method = Ident::new(method, Span::call_site());
        return quote!(#a.#method(#b));
    }
    let symbol = operator.symbol();
    let last = symbol.len() - 1;
    let symbol = symbol.chars().enumerate().map(|(i, c)| {
        let spacing = if i < last {
            Spacing::Joint
        } else {
            Spacing::Alone
        };
        Punct::new(c, spacing)
    });
    if nested || operator.always_grouped() {
        quote!((#a #(#symbol)* #b))
    } else {
        quote!(#a #(#symbol)* #b)
    }
}

#[cfg(test)]
mod tests {
    use layout_runtime::Op;
    use quote::quote;

    use super::{op, scaled, var};

    fn rust(step: Op, nested: bool) -> String {
        let arg = |a| {
            let v = var(a);
            quote!(#v)
        };
        op(step, nested, &arg, &super::index_input).to_string()
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
        assert_eq!(scaled(quote!(x), 1).to_string(), "x");
        assert_eq!(scaled(quote!(x), 4).to_string(), "(x << 2u32)");
    }
}
