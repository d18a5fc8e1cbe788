//! `assert_bitcast!`: the runtime's `bitcast` check, run at compile time.
//!
//! Nothing here decides anything: the specs are parsed and compared by
//! `layout_runtime::bitcast`, the functions a program calls at run time, so
//! the macro and the run time cannot disagree.

use layout_runtime::bitcast;
use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{bracketed, Ident, LitInt, LitStr, Token};

/// `"from", "to"` and an optional `, transpose = [..]`.
struct Input {
    from: LitStr,
    to: LitStr,
    perm: Option<(Vec<usize>, Span)>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let from = input.parse()?;
        input.parse::<Token![,]>()?;
        let to = input.parse()?;
        let mut perm = None;
        if input.peek(Token![,]) && input.peek2(Ident) {
            input.parse::<Token![,]>()?;
            let name: Ident = input.parse()?;
            if name != "transpose" {
                return Err(syn::Error::new(
                    name.span(),
                    format!("unknown option `{name}`; expected `transpose = [..]`"),
                ));
            }
            input.parse::<Token![=]>()?;
            let content;
            let brackets = bracketed!(content in input);
            let dims = Punctuated::<LitInt, Token![,]>::parse_terminated(&content)?
                .iter()
                .map(LitInt::base10_parse)
                .collect::<syn::Result<Vec<usize>>>()?;
            perm = Some((dims, brackets.span.join()));
        }
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        Ok(Input { from, to, perm })
    }
}

/// The whole macro: nothing for a bitcast, else the errors. Never panics.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<Input>(input).and_then(|i| check(&i)) {
        Ok(()) => TokenStream::new(),
        Err(err) => err.to_compile_error(),
    }
}

/// A spec parsed as `layout!` parses it, its errors on the literal with the
/// caret excerpt.
fn layout(lit: &LitStr) -> syn::Result<layout_runtime::Layout> {
    let text = lit.value();
    layout_runtime::parse(&text).map_err(|errors| {
        errors
            .iter()
            .map(|e| syn::Error::new(lit.span(), format!("{e}\n{}", e.excerpt(&text))))
            .reduce(|mut a, b| {
                a.combine(b);
                a
            })
            .unwrap_or_else(|| syn::Error::new(lit.span(), "invalid layout spec"))
    })
}

fn check(input: &Input) -> syn::Result<()> {
    let (from, to) = match (layout(&input.from), layout(&input.to)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(mut a), Err(b)) => {
            a.combine(b);
            return Err(a);
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    let (result, what, span) = match &input.perm {
        None => (bitcast::reshape(&from, &to), "reshaping", input.to.span()),
        Some((perm, span)) => {
            let result = bitcast::transpose(&from, &to, perm);
            // A bad `perm` is the list's fault; a moving element, `to`'s.
            let span = match result {
                Err(
                    bitcast::Mismatch::PermLength { .. }
                    | bitcast::Mismatch::PermEntry { .. }
                    | bitcast::Mismatch::PermRepeat { .. },
                ) => *span,
                _ => input.to.span(),
            };
            (result, "transposing", span)
        }
    };
    result.map_err(|m| {
        syn::Error::new(
            span,
            format!("{what} `{from}` to `{to}` is no bitcast: {m}"),
        )
    })
}
