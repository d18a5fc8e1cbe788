//! `impl TiledLayout`: the layout of one first-level tile as a `layout!`
//! type of its own, emitted only for layouts that have such tiles.

use layout_runtime::{Layout, PaddingValue};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

/// A nested `layout!` for the tile's layout and the impl naming it, inside an
/// anonymous `const` so the tile type takes no name in the user's scope;
/// nothing for a layout without contiguous first-level tiles, or for a tile
/// type itself: one level, so a tiled layout costs one extra expansion.
pub(crate) fn tiled_impl(
    krate: &TokenStream,
    ty: &Ident,
    l: &Layout,
    padding: Option<PaddingValue>,
    is_tile: bool,
) -> TokenStream {
    let Some(tile) = layout_runtime::tensor::__tile_layout(l).filter(|_| !is_tile) else {
        return TokenStream::new();
    };
    let spec = Literal::string(&tile.to_string());
    // Named after the parent, so it can never shadow it inside the block.
    let name = format_ident!("{ty}Tile");
    let padding = padding.map(|v| {
        let v = Ident::new(v.name(), proc_macro2::Span::call_site());
        quote!(, padding_value = #v)
    });
    quote! {
        const _: () = {
            #krate::__private::__layout! {
                #krate; @ #[allow(non_camel_case_types)] pub struct #name = #spec #padding
            }
            impl #krate::__private::TiledLayout for #ty {
                type Tile = #name;
            }
        };
    }
}
