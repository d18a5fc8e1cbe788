//! How every emitter prints numbers, step names and the steps of a folded
//! program: `offset` (by `linear`) and `index_of` (by `emit`) share these,
//! so an op prints one way everywhere.

use layout_runtime::{Op, StepId};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

/// A `usize` literal without a suffix.
pub(crate) fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// The shift that multiplies or divides by `k`, a power of two, as a
/// typed literal: with an unsuffixed one, `x << 3` leaves the right-hand
/// side's type open until integer fallback, and type checking weighs every
/// `Shl` impl of `usize` meanwhile, in every build that type-checks the
/// expansion afresh.
pub(crate) fn shift(k: usize) -> Literal {
    Literal::u32_suffixed(k.trailing_zeros())
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
    if k == 1 {
        e
    } else if k.is_power_of_two() {
        let s = shift(k);
        quote!((#e << #s))
    } else {
        let k = lit(k);
        quote!(#e.wrapping_mul(#k))
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
    let group = |e: TokenStream| if nested { quote!((#e)) } else { e };
    match op {
        Op::Input(n) => input(n),
        Op::Div(a, k) if k.is_power_of_two() => {
            let (a, s) = (arg(a), shift(k));
            group(quote!(#a >> #s))
        }
        Op::Div(a, k) => {
            let (a, k) = (arg(a), lit(k));
            group(quote!(#a / #k))
        }
        Op::Mod(a, k) if k.is_power_of_two() => {
            let (a, m) = (arg(a), lit(k - 1));
            group(quote!(#a & #m))
        }
        Op::Mod(a, k) => {
            let (a, k) = (arg(a), lit(k));
            group(quote!(#a % #k))
        }
        Op::Mul(a, k) => scaled(arg(a), k),
        Op::Add(a, b) => {
            let (a, b) = (arg(a), arg(b));
            quote!(#a.wrapping_add(#b))
        }
    }
}
