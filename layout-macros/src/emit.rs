//! Prints a folded layout as Rust: constants, and the index programs as
//! straight-line `let`s, with shifts and masks for powers of two.

use std::fmt::Write as _;

use layout_runtime::{
    InverseProgram, Layout, OffsetProgram, PaddingValue, Program, TileDim, Value,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ast::Input;
use crate::linear;
use crate::tokens::{self, var};

/// Where the expansion's items sit: a block of their own (the expression
/// form's, or the named form's `const _`), which imports the facade's
/// `__private` under this name, so every path the items write is one
/// token rather than seven or nine (tokens cost compile time). Nothing the
/// user wrote is inside that block, so nothing the name shadows can be meant.
const SHORT_PATHS: &str = "__xla";

/// What the block starts with: its names for the primitives, so a user's
/// `struct usize;` cannot interfere. The named form's block also names the
/// user's type, which could be called like a primitive: it spells them in
/// full instead.
const SHORT_PRIMITIVES: &str = "use ::core::primitive::{bool, isize, str, usize};";

/// The primitive type `name`, by name where [`SHORT_PRIMITIVES`] imports it.
fn prim(short: bool, name: &str) -> String {
    if short && matches!(name, "bool" | "isize" | "str" | "usize") {
        name.to_owned()
    } else {
        format!("::core::primitive::{name}")
    }
}

/// `let vN = ...;` for every step; `input(n)` names input `n`. The types
/// are inferred (all `usize`): annotations would only cost compile time.
fn steps(out: &mut String, program: &Program, input: &dyn Fn(u8) -> String) {
    for (i, &step) in program.steps().iter().enumerate() {
        let rhs = tokens::op(step, false, &var, input);
        // Writing to a `String` cannot fail.
        let _ = write!(out, "let {} = {rhs};", var(i as u16));
    }
}

fn value(v: Value) -> String {
    v.map_or_else(|| "0".to_owned(), var)
}

fn offset_body(p: &OffsetProgram) -> String {
    if let Some(body) = linear::offset_body(p) {
        return body;
    }
    // A coefficient too large for the linear form: the terms as folded.
    let mut body = String::new();
    steps(&mut body, p.program(), &tokens::index_input);
    let mut terms = p
        .terms()
        .iter()
        .map(|t| tokens::scaled(var(t.step), t.scale));
    match terms.next() {
        None => body.push('0'),
        Some(first) => {
            body.push_str(&first);
            for t in terms {
                let _ = write!(body, ".wrapping_add({t})");
            }
        }
    }
    body
}

/// The body of `index_of`; `p` is the path of the facade's `__private`.
fn index_of_body(inv: &InverseProgram, p: &str) -> String {
    let mut body = format!("if offset >= {} {{ return {p}::None; }}", inv.storage_len());
    steps(&mut body, inv.program(), &|_| "offset".to_owned());
    let checks: Vec<String> = inv
        .checks()
        .iter()
        .map(|c| format!("({} >= {})", var(c.step), c.bound))
        .collect();
    if !checks.is_empty() {
        let _ = write!(body, "if {} {{ return {p}::None; }}", checks.join(" | "));
    }
    let outputs: Vec<String> = inv.outputs().iter().map(|&o| value(o)).collect();
    let _ = write!(body, "{p}::Some([{}])", outputs.join(", "));
    body
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

/// The expression form's name for `[usize; rank]`, the type of an index:
/// each array type written costs an anonymous constant, so it is written
/// once.
const INDEX: &str = "Index";

/// The dims as the inside of an array literal: `2, 8, 128`.
fn dims_list(l: &Layout) -> String {
    l.dims()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The type of an index, `[usize; rank]`, in the text of the items.
fn index_type(short: bool, rank: usize) -> String {
    if short {
        INDEX.to_owned()
    } else {
        format!("[{}; {rank}]", prim(short, "usize"))
    }
}

/// `bytes` as a Rust byte string literal. By hand, not by `write!`: a
/// formatting call per byte was most of the macro's time on the tables.
fn byte_string(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(bytes.len() * 4 + 3);
    out.extend_from_slice(b"b\"");
    for &b in bytes {
        match b {
            b'\0' => out.extend_from_slice(b"\\0"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b' '..=b'~' => out.push(b),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]),
        }
    }
    out.push(b'"');
    // Every byte pushed is ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// `text` as tokens, by the compiler's own lexer when the macro runs in
/// it: `proc_macro2` would first lex it again itself, unoptimized.
fn lex(text: &str) -> Option<TokenStream> {
    if proc_macro::is_available() {
        text.parse::<proc_macro::TokenStream>()
            .ok()
            .map(TokenStream::from)
    } else {
        text.parse().ok()
    }
}

/// Code for a valid layout: the type, its `const fn`s and the trait.
///
/// The items are written as text and lexed once: in a user's build the
/// macro runs unoptimized, and building them token by token took most of
/// its time, while the compiler's lexer is optimized.
pub(crate) fn layout(input: &Input, l: &Layout) -> TokenStream {
    let short = input.named.is_none();
    let krate = &input.krate;
    let private = Ident::new(SHORT_PATHS, Span::call_site());
    let spec = l.to_string();
    let ty = match &input.named {
        Some((_, _, name)) => name.clone(),
        // Type errors name the hidden type, so it is named after the layout.
        None => Ident::new(&type_name(l), Span::call_site()),
    };
    let mut text = String::with_capacity(4096);
    if short {
        text.push_str(SHORT_PRIMITIVES);
        let _ = write!(text, "type {INDEX} = [usize; {}];", l.rank());
        // Nothing can name it, so nothing documents it: docs cost compile time.
        let _ = write!(text, "struct {ty};");
    }
    let _ = write!(
        text,
        "{SHORT_PATHS}::impls!({ty}, {spec:?}, {:?});",
        format!("layout!({spec:?})")
    );
    inherent_impl(&mut text, &ty, l, short);
    trait_impl(&mut text, &ty, l, input.padding_value, short);
    let Some(items) = lex(&text) else {
        // The text is the macro's own: a lexing error is a bug in it.
        return syn::Error::new(Span::call_site(), "layout!: the expansion does not lex")
            .to_compile_error();
    };
    let vis = match &input.named {
        Some((_, vis, _)) => quote!(#vis),
        None => quote!(),
    };
    let tiled_impl = crate::tile::tiled_impl(input, &vis, &ty, l);
    match &input.named {
        None => quote!({
            use #krate::__private as #private;
            #items
            #tiled_impl
            #ty
        }),
        Some((attrs, vis, name)) => {
            let user_docs = attrs.iter().any(|a| a.path().is_ident("doc"));
            // After the user's own docs, as a paragraph of its own.
            let doc = if user_docs {
                format!("\n\nThe XLA layout `{spec}`.")
            } else {
                format!("The XLA layout `{spec}`.")
            };
            // The impls sit in a `const _` block, whose `use` adds no name
            // to the user's scope.
            quote! {
                #(#attrs)* #[doc = #doc]
                #vis struct #name;
                const _: () = {
                    use #krate::__private as #private;
                    #items
                };
                #tiled_impl
            }
        }
    }
}

/// The inherent `impl`: the constants and `const fn`s, documented in the
/// named form only (`short`: the expression form).
///
/// The items carry no `#[allow(..)]`: they come from `layout!`, a macro of
/// another crate, and rustc and clippy lint no code from such a macro,
/// while checking each lint name costs every expansion compile time.
fn inherent_impl(out: &mut String, ty: &Ident, l: &Layout, short: bool) {
    let p = SHORT_PATHS;
    let (usize, isize, bool, str) = (
        prim(short, "usize"),
        prim(short, "isize"),
        prim(short, "bool"),
        prim(short, "str"),
    );
    let spec = l.to_string();
    let rank = l.rank();
    let index = index_type(short, rank);
    let dims = dims_list(l);
    let (len, storage_len, storage_bytes) = (l.len(), l.storage_len(), l.storage_bytes());
    let padding_len = l.padding_len();
    let true_rank = l.true_rank();
    let in_range = format!("{p}::inside(&index, &Self::DIMS)");
    let is_empty = l.is_empty();
    // One fold gives both programs.
    let (offset, inverse) = l.programs();
    let offset = offset_body(&offset);
    let index_of = index_of_body(&inverse, p);
    // Docs only where rustdoc can show them.
    let doc = |text: &str| {
        if short {
            String::new()
        } else {
            format!("#[doc = {text:?}]")
        }
    };
    let doc_len = doc(" Logical elements.");
    let doc_storage_bytes = doc(" Storage bytes.");
    let doc_padding_len = doc(" Storage slots that hold no element.");
    let _ = write!(
        out,
        "impl {ty} {{ \
         {doc_spec_const} pub const SPEC: &'static {str} = {spec:?}; \
         {doc_dims_const} pub const DIMS: {index} = [{dims}]; \
         {doc_len} pub const LEN: {usize} = {len}; \
         {doc_storage_len_const} pub const STORAGE_LEN: {usize} = {storage_len}; \
         {doc_storage_bytes} pub const STORAGE_BYTES: {usize} = {storage_bytes}; \
         {doc_padding_len} pub const PADDING_LEN: {usize} = {padding_len}; \
         {doc_offset} #[inline] #[cfg_attr(debug_assertions, track_caller)] \
         pub const fn offset(self, index: {index}) -> {usize} {{ \
         if ::core::cfg!(debug_assertions) && !{in_range} {{ {p}::outside_dims(&index, &Self::DIMS) }} \
         {offset} }} \
         {doc_try_offset} #[inline] \
         pub const fn try_offset(self, index: {index}) -> {p}::Option<{usize}> {{ \
         if {in_range} {{ {p}::Some(self.offset(index)) }} else {{ {p}::None }} }} \
         {doc_index_of} #[inline] \
         pub const fn index_of(self, offset: {usize}) -> {p}::Option<{index}> {{ {index_of} }} \
         {doc_len} pub const fn len(self) -> {usize} {{ {len} }} \
         {doc_is_empty} pub const fn is_empty(self) -> {bool} {{ {is_empty} }} \
         {doc_storage_len} pub const fn storage_len(self) -> {usize} {{ {storage_len} }} \
         {doc_storage_bytes} pub const fn storage_bytes(self) -> {usize} {{ {storage_bytes} }} \
         {doc_padding_len} pub const fn padding_len(self) -> {usize} {{ {padding_len} }} \
         {doc_rank} pub const fn rank(self) -> {usize} {{ {rank} }} \
         {doc_true_rank} pub const fn true_rank(self) -> {usize} {{ {true_rank} }} \
         {doc_dim} pub const fn dim(self, dim: {isize}) -> {p}::Option<{usize}> {{ {p}::dim_of(&Self::DIMS, dim) }} \
         {doc_runtime} pub fn runtime(self) -> {p}::Layout {{ <Self as {p}::StaticLayout>::runtime(self) }} \
         }}",
        doc_spec_const = doc(" The canonical spec."),
        doc_dims_const = doc(" The logical dims."),
        doc_storage_len_const = doc(" Storage slots, padding included."),
        doc_offset = doc(" The storage offset of `index`. Outside the dims: a panic in debug\n builds (a compile error in `const` evaluation), naming the index\n and the dims; unchecked in release builds, where the result is\n unspecified but never a panic."),
        doc_try_offset = doc(" The storage offset of `index`, or `None` outside the dims."),
        doc_index_of = doc(" The logical index at `offset`, or `None` for padding or past storage."),
        doc_is_empty = doc(" Whether some dim is 0."),
        doc_storage_len = doc(" Storage slots, padding and `L(n)` included."),
        doc_rank = doc(" The number of dims."),
        doc_true_rank = doc(" The number of dims greater than 1."),
        doc_dim = doc(" One dim's size; negative numbers count from the end."),
        doc_runtime = doc(" The same layout as a run-time `Layout`."),
    );
}

/// `impl StaticLayout`: the description as constants, methods forwarding to
/// the `const fn`s. Constants the trait derives from others, or whose
/// default is this layout's value, are left to the trait's defaults: every
/// item costs compile time.
fn trait_impl(
    out: &mut String,
    ty: &Ident,
    l: &Layout,
    padding: Option<PaddingValue>,
    short: bool,
) {
    let p = SHORT_PATHS;
    let (usize, str) = (prim(short, "usize"), prim(short, "str"));
    let index = index_type(short, l.rank());
    // Literals, not the inherent constants: a path would make each
    // constant depend on another, which costs compile time.
    let spec = l.to_string();
    let dims = dims_list(l);
    let storage_len = l.storage_len();
    let m2m = if is_row_major(l) {
        String::new()
    } else {
        let m2m: Vec<String> = l.minor_to_major().iter().map(ToString::to_string).collect();
        format!(
            "const MINOR_TO_MAJOR: &'static [{usize}] = &[{}];",
            m2m.join(", ")
        )
    };
    let tiles = if l.tiles().is_empty() {
        String::new()
    } else {
        let tiles: Vec<String> = l
            .tiles()
            .iter()
            .map(|t| {
                let dims: Vec<String> = t
                    .dims()
                    .iter()
                    .map(|d| match d {
                        TileDim::Size(n) => format!("{p}::TileDim::Size({n})"),
                        TileDim::Combine => format!("{p}::TileDim::Combine"),
                    })
                    .collect();
                format!("&[{}]", dims.join(", "))
            })
            .collect();
        format!(
            "const TILES: &'static [&'static [{p}::TileDim]] = &[{}];",
            tiles.join(", ")
        )
    };
    let element = format!("{:?}", l.element_type());
    // Each attribute written sets its constant; the others keep the
    // trait's defaults, which are the unwritten values.
    let mut attributes = String::new();
    for a in l.__attributes() {
        if let Some((name, ty)) = a.constant {
            let _ = write!(
                attributes,
                "const {name}: {} = {};",
                prim(short, ty),
                a.value
            );
        }
    }
    // One literal, not a hundred: each array element would cost type
    // checking and MIR.
    let mut bytes = Vec::new();
    l.__bytes(&mut |b| bytes.push(b));
    let bytes = byte_string(&bytes);
    let padding = padding.map_or_else(String::new, |v| {
        format!("const PADDING_VALUE: {p}::PaddingValue = {p}::PaddingValue::{v:?};")
    });
    let _ = write!(
        out,
        "impl {p}::StaticLayout for {ty} {{ \
         const SPEC: &'static {str} = {spec:?}; \
         const ELEMENT_TYPE: {p}::ElementType = {p}::ElementType::{element}; \
         const DIMS: &'static [{usize}] = &[{dims}]; \
         {m2m} {tiles} {attributes} \
         const STORAGE_LEN: {usize} = {storage_len}; \
         {padding} \
         type Index = {index}; \
         #[inline] #[cfg_attr(debug_assertions, track_caller)] \
         fn offset(self, index: {index}) -> {usize} {{ {ty}::offset(self, index) }} \
         #[inline] \
         fn index_of(self, offset: {usize}) -> {p}::Option<{index}> {{ {ty}::index_of(self, offset) }} \
         #[inline] \
         fn tables(self) -> {p}::Option<&'static {p}::Layout> {{ \
         static TABLES: {p}::Tables = {p}::Tables::new({bytes}); \
         {p}::Some(TABLES.get()) }} \
         }}"
    );
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
