//! Prints a folded layout as Rust: constants, and the index programs as
//! straight-line `let`s, with shifts and masks for powers of two.

use std::fmt::Write as _;

use layout_runtime::{
    InverseProgram, Layout, OffsetProgram, PaddingValue, Program, TileDim, Value,
};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};

use crate::ast::Input;
use crate::linear;
use crate::tokens::{self, lit, var};

/// Primitive types by absolute path, so a user's `struct usize;` cannot
/// interfere; or, where the expansion's own block imports them
/// ([`SHORT_PATHS`]), by name.
struct Prims {
    usize: TokenStream,
    isize: TokenStream,
    u32: TokenStream,
    u64: TokenStream,
    bool: TokenStream,
    str: TokenStream,
}

impl Prims {
    /// The primitive type called `name`.
    fn named(&self, name: &str) -> TokenStream {
        match name {
            "usize" => self.usize.clone(),
            "isize" => self.isize.clone(),
            "u32" => self.u32.clone(),
            "u64" => self.u64.clone(),
            "bool" => self.bool.clone(),
            "str" => self.str.clone(),
            _ => {
                let name = Ident::new(name, Span::call_site());
                quote!(::core::primitive::#name)
            }
        }
    }
}

fn prims(short: bool) -> Prims {
    let [usize, isize, bool, str] = if short {
        [quote!(usize), quote!(isize), quote!(bool), quote!(str)]
    } else {
        [
            quote!(::core::primitive::usize),
            quote!(::core::primitive::isize),
            quote!(::core::primitive::bool),
            quote!(::core::primitive::str),
        ]
    };
    Prims {
        usize,
        isize,
        u32: quote!(::core::primitive::u32),
        u64: quote!(::core::primitive::u64),
        bool,
        str,
    }
}

/// What the expression form's block starts with: its own names for the
/// primitives it uses and for the facade's `__private`, so the rest of the
/// block names them in one token rather than in seven or nine (tokens cost
/// compile time). Nothing the user wrote is inside that block, so nothing
/// these names shadow can be meant. The named form's items sit in the
/// user's scope, which must not gain names, so it keeps absolute paths.
const SHORT_PATHS: &str = "__xla";

/// `let vN = ...;` for every step; `input(n)` names input `n`. The types
/// are inferred (all `usize`): annotations would only cost compile time.
fn steps(program: &Program, input: &dyn Fn(u8) -> TokenStream) -> Vec<TokenStream> {
    program
        .steps()
        .iter()
        .enumerate()
        .map(|(i, &step)| {
            let v = var(i as u16);
            let rhs = tokens::op(step, false, &|a| var(a).into_token_stream(), input);
            quote!(let #v = #rhs;)
        })
        .collect()
}

fn value(v: Value) -> TokenStream {
    v.map_or_else(|| quote!(0), |s| var(s).into_token_stream())
}

fn offset_body(p: &OffsetProgram) -> TokenStream {
    if let Some(body) = linear::offset_body(p) {
        return body;
    }
    // A coefficient too large for the linear form: the terms as folded.
    let lets = steps(p.program(), &tokens::index_input);
    let terms: Vec<TokenStream> = p
        .terms()
        .iter()
        .map(|t| tokens::scaled(var(t.step).into_token_stream(), t.scale))
        .collect();
    let sum = match terms.split_first() {
        None => quote!(0),
        Some((first, rest)) => quote!(#first #(.wrapping_add(#rest))*),
    };
    quote!(#(#lets)* #sum)
}

fn index_of_body(inv: &InverseProgram, p: &TokenStream) -> TokenStream {
    let lets = steps(inv.program(), &|_| quote!(offset));
    let storage = lit(inv.storage_len());
    let checks: Vec<TokenStream> = inv
        .checks()
        .iter()
        .map(|c| {
            let (v, b) = (var(c.step), lit(c.bound));
            quote!((#v >= #b))
        })
        .collect();
    let outputs: Vec<TokenStream> = inv.outputs().iter().map(|&o| value(o)).collect();
    let padding = if checks.is_empty() {
        quote!()
    } else {
        quote!(if #(#checks)|* { return #p::None; })
    };
    quote! {
        if offset >= #storage { return #p::None; }
        #(#lets)*
        #padding
        #p::Some([#(#outputs),*])
    }
}

/// The name of an expression-form `layout!`'s type, which rustc shows in
/// type errors: the spec as an identifier, `f32[3,5]{1,0:T(2,2)}` as
/// `F32_3x5_T2x2`. Dims are joined by `x`; a `minor_to_major` other than
/// row-major follows `m` as one hex digit a dim; each tiling level is
/// `T` with `c` for `*`; then each attribute written, as its letters and
/// number (`L`, `E`, `S` in XLA's order).
pub(crate) fn type_name(l: &Layout) -> String {
    let join = |values: &mut dyn Iterator<Item = String>| values.collect::<Vec<_>>().join("x");
    let element = l.element_type().to_string();
    let mut name: String = element
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    if l.rank() == 0 {
        name.push_str("_Scalar");
    } else {
        name.push('_');
        name.push_str(&join(&mut l.dims().iter().map(ToString::to_string)));
    }
    if !is_row_major(l) {
        name.push_str("_m");
        name.extend(
            l.minor_to_major()
                .iter()
                .map(|&d| char::from_digit(d as u32, 16).unwrap_or('_')),
        );
    }
    for tile in l.tiles() {
        name.push_str("_T");
        name.push_str(&join(&mut tile.dims().iter().map(|d| match d {
            TileDim::Size(n) => n.to_string(),
            TileDim::Combine => "c".to_owned(),
        })));
    }
    for a in l.__attributes() {
        // Writing to a `String` cannot fail.
        let _ = write!(name, "_{}{}", a.letters, a.value);
    }
    name
}

/// Whether `minor_to_major` is `[rank - 1, ..., 0]`, the spec's default.
fn is_row_major(l: &Layout) -> bool {
    l.minor_to_major()
        .iter()
        .rev()
        .enumerate()
        .all(|(i, &d)| i == d)
}

/// Code for a valid layout: the type, its `const fn`s and the trait.
pub(crate) fn layout(input: &Input, l: &Layout) -> TokenStream {
    let short = input.named.is_none();
    let prims = prims(short);
    let krate = &input.krate;
    let private = Ident::new(SHORT_PATHS, Span::call_site());
    let p = if short {
        quote!(#private)
    } else {
        quote!(#krate::__private)
    };
    let spec = l.to_string();
    let (attrs, vis, ty) = match &input.named {
        Some((attrs, vis, name)) => {
            let user_docs = attrs.iter().any(|a| a.path().is_ident("doc"));
            // After the user's own docs, as a paragraph of its own.
            let doc = if user_docs {
                format!("\n\nThe XLA layout `{spec}`.")
            } else {
                format!("The XLA layout `{spec}`.")
            };
            (quote!(#(#attrs)* #[doc = #doc]), quote!(#vis), name.clone())
        }
        // Type errors name the hidden type, so it is named after the layout.
        // Nothing can name it, so nothing documents it: docs cost compile time.
        None => (
            quote!(#[allow(non_camel_case_types)]),
            quote!(),
            Ident::new(&type_name(l), Span::call_site()),
        ),
    };
    let trait_impl = trait_impl(&p, &prims, &ty, l, input.padding_value);
    let tiled_impl = crate::tile::tiled_impl(input, &vis, &ty, l);
    let debug = format!("layout!({spec:?})");
    let inherent = inherent_impl(&p, &prims, &ty, l, short);
    let items = quote! {
        #attrs
        #vis struct #ty;
        #p::impls!(#ty, #spec, #debug);

        #inherent

        #trait_impl
        #tiled_impl
    };
    if short {
        quote!({
            use #krate::__private as #private;
            use ::core::primitive::{bool, isize, str, usize};
            #items
            #ty
        })
    } else {
        items
    }
}

/// The inherent `impl`: the constants and `const fn`s, documented in the
/// named form only (`short`: the expression form).
fn inherent_impl(
    p: &TokenStream,
    prims: &Prims,
    ty: &Ident,
    l: &Layout,
    short: bool,
) -> TokenStream {
    let Prims {
        usize,
        isize,
        bool,
        str,
        ..
    } = prims;
    let spec = l.to_string();
    let rank = lit(l.rank());
    let dims: Vec<Literal> = l.dims().iter().map(|&d| lit(d)).collect();
    let (len, storage_len, storage_bytes) =
        (lit(l.len()), lit(l.storage_len()), lit(l.storage_bytes()));
    let padding_len = lit(l.padding_len());
    let true_rank = lit(l.true_rank());
    let in_range = quote!(#p::inside(&index, &Self::DIMS));
    let is_empty = l.is_empty();
    // One fold gives both programs.
    let (offset, inverse) = l.programs();
    let offset = offset_body(&offset);
    let index_of = index_of_body(&inverse, p);
    // Docs only where rustdoc can show them.
    let doc = |text: &str| {
        if short {
            quote!()
        } else {
            quote!(#[doc = #text])
        }
    };
    let doc_spec_const = doc(" The canonical spec.");
    let doc_dims_const = doc(" The logical dims.");
    let doc_storage_len_const = doc(" Storage slots, padding included.");
    let doc_offset = doc(" The storage offset of `index`. Outside the dims: a panic in debug\n builds (a compile error in `const` evaluation), naming the index\n and the dims; unchecked in release builds, where the result is\n unspecified but never a panic.");
    let doc_try_offset = doc(" The storage offset of `index`, or `None` outside the dims.");
    let doc_index_of =
        doc(" The logical index at `offset`, or `None` for padding or past storage.");
    let doc_len = doc(" Logical elements.");
    let doc_is_empty = doc(" Whether some dim is 0.");
    let doc_storage_len = doc(" Storage slots, padding and `L(n)` included.");
    let doc_storage_bytes = doc(" Storage bytes.");
    let doc_padding_len = doc(" Storage slots that hold no element.");
    let doc_rank = doc(" The number of dims.");
    let doc_true_rank = doc(" The number of dims greater than 1.");
    let doc_dim = doc(" One dim's size; negative numbers count from the end.");
    let doc_runtime = doc(" The same layout as a run-time `Layout`.");
    quote! {
        #[allow(clippy::all, clippy::pedantic, clippy::nursery, unused, non_upper_case_globals)]
        impl #ty {
            #doc_spec_const
            pub const SPEC: &'static #str = #spec;
            #doc_dims_const
            pub const DIMS: [#usize; #rank] = [#(#dims),*];
            #doc_len
            pub const LEN: #usize = #len;
            #doc_storage_len_const
            pub const STORAGE_LEN: #usize = #storage_len;
            #doc_storage_bytes
            pub const STORAGE_BYTES: #usize = #storage_bytes;
            #doc_padding_len
            pub const PADDING_LEN: #usize = #padding_len;

            #doc_offset
            #[inline]
            #[cfg_attr(debug_assertions, track_caller)]
            pub const fn offset(self, index: [#usize; #rank]) -> #usize {
                // `cfg!`, not `#[cfg]`: it is the user's build that decides,
                // and release code stays exactly the arithmetic below.
                if ::core::cfg!(debug_assertions) && !#in_range {
                    #p::outside_dims(&index, &Self::DIMS)
                }
                #offset
            }

            #doc_try_offset
            #[inline]
            pub const fn try_offset(self, index: [#usize; #rank]) -> #p::Option<#usize> {
                if #in_range { #p::Some(self.offset(index)) } else { #p::None }
            }

            #doc_index_of
            #[inline]
            pub const fn index_of(self, offset: #usize) -> #p::Option<[#usize; #rank]> { #index_of }

            #doc_len
            pub const fn len(self) -> #usize { #len }
            #doc_is_empty
            pub const fn is_empty(self) -> #bool { #is_empty }
            #doc_storage_len
            pub const fn storage_len(self) -> #usize { #storage_len }
            #doc_storage_bytes
            pub const fn storage_bytes(self) -> #usize { #storage_bytes }
            #doc_padding_len
            pub const fn padding_len(self) -> #usize { #padding_len }
            #doc_rank
            pub const fn rank(self) -> #usize { #rank }
            #doc_true_rank
            pub const fn true_rank(self) -> #usize { #true_rank }
            #doc_dim
            pub const fn dim(self, dim: #isize) -> #p::Option<#usize> { #p::dim_of(&Self::DIMS, dim) }
            #doc_runtime
            pub fn runtime(self) -> #p::Layout { <Self as #p::StaticLayout>::runtime(self) }
        }

    }
}

/// `impl StaticLayout`: the description as constants, methods forwarding to
/// the `const fn`s. Constants the trait derives from others, or whose
/// default is this layout's value, are left to the trait's defaults: every
/// item costs compile time.
fn trait_impl(
    p: &TokenStream,
    prims: &Prims,
    ty: &Ident,
    l: &Layout,
    padding: Option<PaddingValue>,
) -> TokenStream {
    let Prims { usize, str, .. } = prims;
    let rank = lit(l.rank());
    let m2m = (!is_row_major(l)).then(|| {
        let m2m = l.minor_to_major().iter().map(|&d| lit(d));
        quote!(const MINOR_TO_MAJOR: &'static [#usize] = &[#(#m2m),*];)
    });
    let tiles = l.tiles().iter().map(|t| {
        let dims = t.dims().iter().map(|d| match d {
            TileDim::Size(n) => {
                let n = lit(*n);
                quote!(#p::TileDim::Size(#n))
            }
            TileDim::Combine => quote!(#p::TileDim::Combine),
        });
        quote!(&[#(#dims),*])
    });
    let tiles = (!l.tiles().is_empty())
        .then(|| quote!(const TILES: &'static [&'static [#p::TileDim]] = &[#(#tiles),*];));
    let element = Ident::new(&format!("{:?}", l.element_type()), Span::call_site());
    // Each attribute written sets its constant; the others keep the
    // trait's defaults, which are the unwritten values.
    let attributes = l.__attributes().filter_map(|a| {
        let (name, ty) = a.constant?;
        let name = Ident::new(name, Span::call_site());
        let ty = prims.named(ty);
        let value = Literal::u64_unsuffixed(a.value);
        Some(quote!(const #name: #ty = #value;))
    });
    // One literal, not a hundred: each array element would cost type
    // checking and MIR.
    let mut bytes = Vec::new();
    l.__bytes(&mut |b| bytes.push(b));
    let bytes = Literal::byte_string(&bytes);
    let padding = padding.map(|v| {
        let v = Ident::new(&format!("{v:?}"), Span::call_site());
        quote!(const PADDING_VALUE: #p::PaddingValue = #p::PaddingValue::#v;)
    });
    quote! {
        #[allow(clippy::all, clippy::pedantic, clippy::nursery)]
        impl #p::StaticLayout for #ty {
            const SPEC: &'static #str = #ty::SPEC;
            const ELEMENT_TYPE: #p::ElementType = #p::ElementType::#element;
            const DIMS: &'static [#usize] = &#ty::DIMS;
            #m2m
            #tiles
            #(#attributes)*
            const STORAGE_LEN: #usize = #ty::STORAGE_LEN;
            #padding
            type Index = [#usize; #rank];
            #[inline]
            #[cfg_attr(debug_assertions, track_caller)]
            fn offset(self, index: [#usize; #rank]) -> #usize { #ty::offset(self, index) }
            #[inline]
            fn index_of(self, offset: #usize) -> #p::Option<[#usize; #rank]> { #ty::index_of(self, offset) }
            #[inline]
            fn tables(self) -> #p::Option<&'static #p::Layout> {
                static TABLES: #p::Tables = #p::Tables::new(#bytes);
                #p::Some(TABLES.get())
            }
        }
    }
}

/// After an error: a value with the same method names, so uses of it
/// raise no second error.
pub(crate) fn fallback(input: &Input, errors: &TokenStream) -> TokenStream {
    let krate = &input.krate;
    if let Some((_, vis, name)) = &input.named {
        quote! {
            #errors
            #vis type #name = #krate::__private::Invalid;
            #[allow(non_upper_case_globals)]
            #vis const #name: #krate::__private::Invalid = #krate::__private::Invalid;
        }
    } else {
        quote!({ #errors #krate::__private::Invalid })
    }
}

#[cfg(test)]
mod tests {
    use super::type_name;

    fn name(spec: &str) -> String {
        let l = layout_runtime::parse(spec).expect("a valid spec");
        let name = type_name(&l);
        assert!(
            syn::parse_str::<syn::Ident>(&name).is_ok(),
            "{spec}: `{name}` is not an identifier"
        );
        name
    }

    #[test]
    fn type_names_spell_the_layout() {
        assert_eq!(name("f32[3,5]{1,0:T(2,2)}"), "F32_3x5_T2x2");
        assert_eq!(name("f32[10,20]{0,1}"), "F32_10x20_m01");
        assert_eq!(name("F32[4,6]"), "F32_4x6");
        assert_eq!(
            name("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}"),
            "Bf16_2x8x128_T8x128_T2x1"
        );
        assert_eq!(
            name("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"),
            "F32_2x7x8x11x10_Tcxcx2xcx3"
        );
        assert_eq!(
            name("s4[5,300]{0,1:T(3,7)(5,1)L(11)E(4)S(1)}"),
            "S4_5x300_m01_T3x7_T5x1_L11_E4_S1"
        );
        assert_eq!(name("pred[]"), "Pred_Scalar");
        assert_eq!(
            name(
                "f8e4m3fn[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]{0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}"
            ),
            "F8e4m3fn_1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1_m0123456789abcdef"
        );
    }
}
