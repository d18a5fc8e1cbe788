//! `tile = Name`: the layout of one first-level tile as a `layout!` type of
//! its own, and `impl TiledLayout` naming it. Only on request: emitting it
//! for every tiled layout would cost every such expansion another one.

use layout_runtime::Layout;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use crate::ast::Input;

/// For `tile = name`: a nested `layout!` of the tile's layout named `name`,
/// with `vis` (the parent's), and the impl naming it; a compile error at
/// `name` for a layout without contiguous first-level tiles. Nothing without
/// the option.
pub(crate) fn tiled_impl(input: &Input, vis: &TokenStream, ty: &Ident, l: &Layout) -> TokenStream {
    let Some(name) = &input.tile else {
        return TokenStream::new();
    };
    let krate = &input.krate;
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
    let padding = input.padding_value.map(|v| {
        let v = Ident::new(v.name(), proc_macro2::Span::call_site());
        quote!(, padding_value = #v)
    });
    // An expression's value is the shared `Folded`, whose `TiledLayout`
    // reads the tile from its spec type; a named type is its own.
    let tiled_impl = if input.named.is_some() {
        quote!(impl #krate::__private::TiledLayout for #ty { type Tile = #name; })
    } else {
        quote!(impl #krate::__private::FoldedTile for #ty { type Tile = #name; })
    };
    quote! {
        #krate::__private::__layout! {
            #krate; #[doc = #doc] #vis struct #name = #spec #padding
        }
        #tiled_impl
    }
}
