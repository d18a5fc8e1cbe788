//! `tile = Name`: the layout of one first-level tile as a `layout!` type of
//! its own, and `impl TiledLayout` naming it. Only on request: emitting it
//! for every tiled layout would cost every such expansion another one.

use layout_runtime::{Layout, PaddingValue};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, ToTokens};

/// A nested `layout!` of the tile's layout named `name`, with `vis` (the
/// parent's), and the impl naming it; a compile error at `name` for a
/// layout without contiguous first-level tiles.
pub(crate) fn tiled_impl(
    krate: &TokenStream,
    vis: &TokenStream,
    ty: &Ident,
    l: &Layout,
    padding: Option<PaddingValue>,
    name: &Ident,
) -> TokenStream {
    let Some(tile) = layout_runtime::tensor::__tile_layout(l) else {
        return syn::Error::new(
            name.span(),
            format!(
                "`tile = {name}`: `{l}` has no first-level tiles that are contiguous in storage"
            ),
        )
        .to_compile_error();
    };
    let spec = Literal::string(&tile.to_string());
    let doc = format!("One first-level tile of `{l}`.");
    let padding = padding.map(|v| {
        let v = Ident::new(v.name(), proc_macro2::Span::call_site());
        quote!(, padding_value = #v)
    });
    let vis = vis.to_token_stream();
    quote! {
        #krate::__private::__layout! {
            #krate; #[doc = #doc] #vis struct #name = #spec #padding
        }
        impl #krate::__private::TiledLayout for #ty {
            type Tile = #name;
        }
    }
}
