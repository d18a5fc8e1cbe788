//! Prints a folded layout as Rust: a unit type and its one impl of the
//! runtime's `FoldedSpec`, the layout's constants and its index programs
//! as arrays of steps (shifts and masks for powers of two), which the
//! shared `Folded` type runs.

use std::fmt::Write as _;

use layout_runtime::{
    program::{InverseProgram, OffsetProgram, Program},
    Layout, PaddingValue, TileDim,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ast::Input;
use crate::linear;
use crate::tokens::{Arg, Steps};

/// Where the expansion's items sit: a block of their own (the expression
/// form's, or the named form's `const _`), which imports the facade's
/// `__private` under this name, so every path the items write is one
/// token rather than seven or nine (tokens cost compile time). Nothing the
/// user wrote is inside that block, so nothing the name shadows can be meant.
const SHORT_PATHS: &str = "__xla";

/// What the block starts with: its names for the primitives, so a user's
/// `struct usize;` cannot interfere, and for the steps of a program. The
/// named form's block also names the user's type, which could be called
/// like a primitive: it spells them in full instead.
const SHORT_PRIMITIVES: &str = "use ::core::primitive::{str, usize};";

/// The steps' names, imported by both forms' blocks.
const STEP_NAMES: &str = "use __xla::Step::{Input, Shr, Div, And, Rem, Shl, Mul, Add, Sub, Neg};";

/// The primitive type `name`, by name where [`SHORT_PRIMITIVES`] imports it.
fn prim(short: bool, name: &str) -> String {
    if short && matches!(name, "str" | "usize") {
        name.to_owned()
    } else {
        format!("::core::primitive::{name}")
    }
}

/// Every step of `program` into `out`: each step's number there.
fn program_steps(out: &mut Steps, program: &Program) -> Option<Vec<Arg>> {
    let mut ids: Vec<Arg> = Vec::with_capacity(program.steps().len());
    for &op in program.steps() {
        let id = out.op(op, &mut |_, a| ids.get(usize::from(a)).copied())?;
        ids.push(id);
    }
    Some(ids)
}

/// The offset's steps, the offset the last; `None` past the runtime's
/// limit of steps.
fn offset_steps(p: &OffsetProgram) -> Option<Steps> {
    let mut out = Steps::default();
    let sum = if let Some(sum) = linear::offset_steps(p, &mut out) {
        Some(sum)
    } else {
        // A coefficient too large for the linear form: the terms as folded.
        out = Steps::default();
        let ids = program_steps(&mut out, p.program())?;
        let mut sum = None;
        for t in p.terms() {
            let term = out.scaled(*ids.get(usize::from(t.step))?, t.scale)?;
            sum = Some(match sum {
                None => term,
                Some(sum) => out.add(sum, term)?,
            });
        }
        sum
    };
    if let Some(sum) = sum {
        out.finish(sum)?;
    }
    Some(out)
}

/// An inverse program as steps, with what `index_of` reads of them.
struct Inverse {
    steps: Steps,
    /// A step and the bound it must stay below.
    checks: Vec<(Arg, usize)>,
    /// Each dim's step, [`Arg::MAX`] for 0.
    outputs: Vec<Arg>,
}

/// The inverse's steps; `None` past the runtime's limit of steps.
fn inverse_steps(inv: &InverseProgram) -> Option<Inverse> {
    let mut steps = Steps::default();
    let ids = program_steps(&mut steps, inv.program())?;
    let id = |s| ids.get(usize::from(s)).copied();
    let checks = inv
        .checks()
        .iter()
        .map(|c| Some((id(c.step)?, c.bound)))
        .collect::<Option<Vec<_>>>()?;
    let outputs = inv
        .outputs()
        .iter()
        .map(|&o| o.map_or(Some(Arg::MAX), id))
        .collect::<Option<Vec<_>>>()?;
    Some(Inverse {
        steps,
        checks,
        outputs,
    })
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

/// The dims as the inside of an array literal: `2, 8, 128`.
fn dims_list(l: &Layout) -> String {
    l.dims()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
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

/// Code for a valid layout: the type and its `FoldedSpec` impl, and in the
/// named form the impls that make the type itself the layout.
///
/// The items are written as text and lexed once: in a user's build the
/// macro runs unoptimized, and building them token by token took most of
/// its time, while the compiler's lexer is optimized.
pub(crate) fn layout(
    input: &Input,
    l: &Layout,
    offset: &OffsetProgram,
    inverse: &InverseProgram,
) -> TokenStream {
    let short = input.named.is_none();
    let krate = &input.krate;
    let private = Ident::new(SHORT_PATHS, Span::call_site());
    let spec = l.to_string();
    let rank = l.rank();
    let ty = match &input.named {
        Some((_, _, name)) => name.clone(),
        // Type errors name the hidden type, so it is named after the layout.
        None => Ident::new(&type_name(l), Span::call_site()),
    };
    let mut text = String::with_capacity(4096);
    if short {
        text.push_str(SHORT_PRIMITIVES);
        // Nothing can name it, so nothing documents it: docs cost compile time.
        let _ = write!(text, "struct {ty};");
    } else {
        let _ = write!(text, "{SHORT_PATHS}::named!({ty}, {rank});");
    }
    text.push_str(STEP_NAMES);
    let programs = (offset, inverse);
    if let Err(message) = spec_impl(&mut text, &ty, l, programs, input.padding_value, short) {
        return syn::Error::new(Span::call_site(), message).to_compile_error();
    }
    if !short {
        named_trait_impl(&mut text, &ty, l, input.padding_value);
    }
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
        None => {
            let rank = proc_macro2::Literal::usize_unsuffixed(rank);
            quote!({
                use #krate::__private as #private;
                #items
                #tiled_impl
                #private::Folded::<#ty, #rank>::NEW
            })
        }
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

/// The description as constants, the same names in `FoldedSpec` and in
/// `StaticLayout` (a named type implements both): the spec, the element
/// type, the dims as `dims` types them, the storage, and where they differ
/// from the traits' defaults (the values when unwritten) `minor_to_major`,
/// the tiles, the attributes written and the padding value. Every item
/// costs compile time, so the defaults are left to the traits.
fn description(l: &Layout, padding: Option<PaddingValue>, short: bool, dims: &str) -> String {
    let p = SHORT_PATHS;
    let (usize, str) = (prim(short, "usize"), prim(short, "str"));
    let spec = l.to_string();
    let element = format!("{:?}", l.element_type());
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
    let padding = padding.map_or_else(String::new, |v| {
        format!("const PADDING_VALUE: {p}::PaddingValue = {p}::PaddingValue::{v:?};")
    });
    format!(
        "const SPEC: &'static {str} = {spec:?}; \
         const ELEMENT_TYPE: {p}::ElementType = {p}::ElementType::{element}; \
         {dims} const STORAGE_LEN: {usize} = {storage_len}; \
         type Buffer<T> = [T; {storage_len}]; \
         {m2m} {tiles} {attributes} {padding}"
    )
}

/// `impl FoldedSpec`: the description as constants (those whose default is
/// this layout's value left to the trait: every item costs compile time)
/// and the two programs (`l`'s offset and inverse, from the fold that made
/// it) as steps. An error only for programs past the runtime's limit of
/// steps, which no layout within the spec's limits has.
fn spec_impl(
    out: &mut String,
    ty: &Ident,
    l: &Layout,
    (offset, inverse): (&OffsetProgram, &InverseProgram),
    padding: Option<PaddingValue>,
    short: bool,
) -> Result<(), String> {
    let p = SHORT_PATHS;
    let usize = prim(short, "usize");
    let rank = l.rank();
    let spec = l.to_string();
    let description = description(
        l,
        padding,
        short,
        &format!("const DIMS: [{usize}; {rank}] = [{}];", dims_list(l)),
    );
    let too_long = || {
        format!(
            "layout!: `{spec}` folds to more than {} steps, the most `layout!` runs",
            crate::tokens::MAX_STEPS
        )
    };
    let offset = offset_steps(offset).ok_or_else(too_long)?;
    let inverse = inverse_steps(inverse).ok_or_else(too_long)?;
    let checks = if inverse.checks.is_empty() {
        String::new()
    } else {
        let checks: Vec<String> = inverse
            .checks
            .iter()
            .map(|(s, b)| format!("({s}, {b})"))
            .collect();
        format!(
            "const CHECKS: &'static [({p}::Arg, {usize})] = &[{}];",
            checks.join(", ")
        )
    };
    let outputs: Vec<String> = inverse.outputs.iter().map(ToString::to_string).collect();
    // One literal, not a hundred: each array element would cost type
    // checking and MIR.
    let mut bytes = Vec::new();
    l.__bytes(&mut |b| bytes.push(b));
    let bytes = byte_string(&bytes);
    let _ = write!(
        out,
        "impl {p}::FoldedSpec<{rank}> for {ty} {{ \
         {description} \
         const OFFSET: &'static [{p}::Step] = &[{offset}]; \
         const INVERSE: &'static [{p}::Step] = &[{inverse}]; \
         {checks} \
         const OUTPUTS: [{p}::Arg; {rank}] = [{outputs}]; \
         fn tables() -> &'static {p}::Layout {{ \
         static TABLES: {p}::Tables = {p}::Tables::new({bytes}); \
         TABLES.get() }} \
         }}",
        offset = offset.list(),
        inverse = inverse.steps.list(),
        outputs = outputs.join(", "),
    );
    Ok(())
}

/// A named type's `impl StaticLayout`: the same description as its
/// `FoldedSpec`, and the methods of `Folded<Name, N>`. (An expression's
/// `Folded` value has the runtime's one generic impl.)
fn named_trait_impl(out: &mut String, ty: &Ident, l: &Layout, padding: Option<PaddingValue>) {
    let p = SHORT_PATHS;
    let (usize, rank) = (prim(false, "usize"), l.rank());
    let description = description(
        l,
        padding,
        false,
        &format!("const DIMS: &'static [{usize}] = &[{}];", dims_list(l)),
    );
    let (index, folded) = (
        format!("[{usize}; {rank}]"),
        format!("{p}::Folded::<{ty}, {rank}>::NEW"),
    );
    let _ = write!(
        out,
        "impl {p}::StaticLayout for {ty} {{ \
         {description} \
         type Index = {index}; \
         #[inline] #[cfg_attr(debug_assertions, track_caller)] \
         fn offset(self, index: {index}) -> {usize} {{ {folded}.offset(index) }} \
         #[inline] \
         fn index_of(self, offset: {usize}) -> {p}::Option<{index}> {{ {folded}.index_of(offset) }} \
         #[inline] \
         fn tables(self) -> {p}::Option<&'static {p}::Layout> {{ \
         {p}::Some(<{ty} as {p}::FoldedSpec<{rank}>>::tables()) }} \
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
