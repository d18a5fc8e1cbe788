//! What the user wrote inside `layout!(...)`.

use layout_runtime::PaddingValue;
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitInt, LitStr, Token, Visibility};

/// The spec as a string literal, or as bare tokens.
pub(crate) enum SpecInput {
    Literal(LitStr),
    Tokens(TokenStream),
}

/// `layout!(...)` after the facade's prefix.
pub(crate) struct Input {
    /// The facade's `$crate`, used for every path the expansion names.
    pub(crate) krate: TokenStream,
    /// `Some` for the named form `[#[attr]] [vis] struct Name = spec`.
    pub(crate) named: Option<(Vec<Attribute>, Visibility, Ident)>,
    pub(crate) spec: SpecInput,
    /// `padded_dimensions = [..]`, SPEC.md §7.
    pub(crate) padded: Option<(Vec<usize>, Span)>,
    /// `padding_value = ...`, SPEC.md §7.
    pub(crate) padding_value: Option<PaddingValue>,
    /// `tile = Name`: also emit the layout of one first-level tile as the
    /// `layout!` type `Name` (`TiledLayout::Tile`).
    pub(crate) tile: Option<Ident>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let krate = input.step(|cursor| match cursor.token_tree() {
            Some((tt, rest)) => Ok((TokenStream::from(tt), rest)),
            None => Err(cursor.error("missing crate path")),
        })?;
        input.parse::<Token![;]>()?;
        let named =
            if input.peek(Token![struct]) || input.peek(Token![pub]) || input.peek(Token![#]) {
                let attrs = input.call(Attribute::parse_outer)?;
                let vis: Visibility = input.parse()?;
                input.parse::<Token![struct]>()?;
                let name: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                Some((attrs, vis, name))
            } else {
                None
            };
        let spec = if input.peek(LitStr) {
            SpecInput::Literal(input.parse()?)
        } else {
            let mut tokens = TokenStream::new();
            // A `,` starts the options only before `name =`: commas inside
            // `<1,0>` are not in a delimited group.
            let at_option = |input: ParseStream<'_>| {
                input.peek(Token![,]) && input.peek2(Ident) && input.peek3(Token![=])
            };
            while !input.is_empty() && !at_option(input) {
                let tt: TokenTree = input.parse()?;
                tokens.extend([tt]);
            }
            if tokens.is_empty() {
                return Err(input
                    .error("expected a layout spec, as in `layout!(\"f32[3,5]{1,0:T(2,2)}\")`"));
            }
            SpecInput::Tokens(tokens)
        };
        let mut padded = None;
        let mut padding_value = None;
        let mut tile = None;
        while input.parse::<Option<Token![,]>>()?.is_some() {
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let twice = || syn::Error::new(key.span(), format!("`{key}` is written twice"));
            if key == "padded_dimensions" {
                let content;
                let bracket = syn::bracketed!(content in input);
                let values = content.parse_terminated(LitInt::parse, Token![,])?;
                let values = values
                    .iter()
                    .map(LitInt::base10_parse::<usize>)
                    .collect::<syn::Result<Vec<_>>>()?;
                if padded.is_some() {
                    return Err(twice());
                }
                padded = Some((values, bracket.span.join()));
            } else if key == "tile" {
                let name: Ident = input.parse()?;
                if tile.is_some() {
                    return Err(twice());
                }
                tile = Some(name);
            } else if key == "padding_value" {
                let value: Ident = input.parse()?;
                let parsed = PaddingValue::from_name(&value.to_string()).ok_or_else(|| {
                    syn::Error::new(
                        value.span(),
                        format!("unknown padding value `{value}`; expected `zero`, `one`, `lowest` or `highest`"),
                    )
                })?;
                if padding_value.is_some() {
                    return Err(twice());
                }
                padding_value = Some(parsed);
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown option `{key}`; the options are `padded_dimensions = [..]`, `padding_value = zero|one|lowest|highest` and `tile = Name`"
                    ),
                ));
            }
        }
        Ok(Input {
            krate,
            named,
            spec,
            padded,
            padding_value,
            tile,
        })
    }
}
