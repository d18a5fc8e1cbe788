//! parse -> validate and fold (in `layout-runtime`) -> emit, or errors.

use layout_runtime::ErrorKind;
use proc_macro2::TokenStream;

use crate::ast::Input;
use crate::emit;
use crate::source::Source;

/// The whole macro: never panics, whatever the input.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<Input>(input) {
        Ok(input) => expand_input(&input)
            .unwrap_or_else(|err| emit::fallback(&input, &err.to_compile_error())),
        Err(err) => err.to_compile_error(),
    }
}

/// The expansion of valid input, or every error found.
fn expand_input(input: &Input) -> Result<TokenStream, syn::Error> {
    let src = Source::new(&input.spec);
    // The layout and its programs from one fold.
    let padded = input.padded.as_ref().map(|(padded, _)| &padded[..]);
    match layout_runtime::__parse_with_programs(&src.text, padded) {
        Ok((layout, offset, inverse)) => Ok(emit::layout(input, &layout, &offset, &inverse)),
        Err(errors) => {
            let padded_span = input.padded.as_ref().map(|(_, s)| *s);
            let combined = errors
                .iter()
                .map(|e| {
                    if matches!(e.kind(), ErrorKind::PaddedDimensions { .. }) {
                        // Errors about `padded_dimensions` point at it.
                        return syn::Error::new(padded_span.unwrap_or(src.whole()), e.to_string());
                    }
                    if src.is_literal() {
                        syn::Error::new(src.whole(), format!("{e}\n{}", e.excerpt(&src.text)))
                    } else {
                        syn::Error::new(src.span(e.span().start, e.span().end), e.to_string())
                    }
                })
                .reduce(|mut a, b| {
                    a.combine(b);
                    a
                })
                .unwrap_or_else(|| syn::Error::new(src.whole(), "invalid layout spec"));
            Err(combined)
        }
    }
}
