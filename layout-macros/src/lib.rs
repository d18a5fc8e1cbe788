//! The `layout!` procedural macro of `xla-layout`.
//!
//! Use it through the `xla-layout` crate, which passes its own path in so the
//! generated code works under any dependency name. This crate has no
//! semantics of its own: it calls `layout-runtime` to parse, validate and fold,
//! then writes the layout's constants and folded programs as the data of a
//! `FoldedSpec` impl, which the runtime's shared `Folded` type runs.

mod ast;
mod bitcast;
mod emit;
mod expand;
#[cfg(test)]
mod fuzz;
mod linear;
#[cfg(test)]
mod snapshots;
mod source;
mod tile;
mod tokens;

use proc_macro::TokenStream;

/// Expands `layout!`; see the `xla-layout` crate. Input: the facade's
/// `$crate` path, `;`, then what the user wrote.
#[doc(hidden)]
#[proc_macro]
pub fn __layout(input: TokenStream) -> TokenStream {
    expand::expand(input.into()).into()
}

/// Expands `assert_bitcast!`; see the `xla-layout` crate. Input: what the
/// user wrote.
#[doc(hidden)]
#[proc_macro]
pub fn __assert_bitcast(input: TokenStream) -> TokenStream {
    bitcast::expand(input.into()).into()
}
