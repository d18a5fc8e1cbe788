//! Hygiene of `layout!`: it works in a module without the prelude, adds no
//! warning under strict lints (this file denies them, clippy's pedantic
//! group included when run under clippy), and works through a renamed
//! dependency, where no path `xla_layout` exists.
#![deny(warnings, missing_docs, unused, clippy::pedantic)]

mod nested;

/// `layout!` in every form where nothing from the prelude is in scope: the
/// expansion may only name things by absolute paths.
mod prelude_free {
    #![no_implicit_prelude]

    ::xla_layout::layout!(
        /// Figure 1 of the tiled layout document.
        pub struct Figure1 = "f32[3,5]{1,0:T(2,2)}"
    );

    /// An offset computed while compiling.
    pub const OFFSET: usize =
        ::xla_layout::layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").offset([0, 2, 0]);

    /// The expression form.
    pub fn expression() -> (usize, ::core::option::Option<[usize; 2]>, usize) {
        let l = ::xla_layout::layout!("f32[10,20]{0,1}");
        (l.offset([3, 5]), l.index_of(53), l.storage_len())
    }

    /// The bare-token form.
    pub fn tokens() -> usize {
        ::xla_layout::layout!(f32[8]{0:T(2,2)}).offset([5])
    }

    /// The `padded_dimensions` option.
    pub fn padded() -> usize {
        ::xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]).storage_len()
    }

    /// The named form, used through `StaticLayout` and `Display`.
    pub fn named() -> (usize, ::core::option::Option<usize>, usize, bool) {
        let text_ok =
            ::core::fmt::Write::write_fmt(&mut Sink, ::core::format_args!("{Figure1}")).is_ok();
        (
            <Figure1 as ::xla_layout::StaticLayout>::offset(Figure1, [2, 3]),
            Figure1.dim(-1),
            Figure1::STORAGE_LEN,
            text_ok,
        )
    }

    /// The named form inside a function body.
    pub fn named_local() -> usize {
        ::xla_layout::layout!(struct Local = "f32[4]{0:T(2)}");
        Local.storage_len()
    }

    /// Accepts `Display` output and checks it is Figure 1's canonical spec.
    struct Sink;

    impl ::core::fmt::Write for Sink {
        fn write_str(&mut self, s: &str) -> ::core::fmt::Result {
            if s == "f32[3,5]{1,0:T(2,2)}" {
                ::core::result::Result::Ok(())
            } else {
                ::core::result::Result::Err(::core::fmt::Error)
            }
        }
    }
}

#[test]
fn no_implicit_prelude_expression() {
    assert_eq!(prelude_free::expression(), (53, Some([3, 5]), 200));
}

#[test]
fn no_implicit_prelude_const() {
    assert_eq!(prelude_free::OFFSET, 256);
}

#[test]
fn no_implicit_prelude_tokens_and_option() {
    assert_eq!(prelude_free::tokens(), 9);
    assert_eq!(prelude_free::padded(), 15);
}

#[test]
fn no_implicit_prelude_named() {
    assert_eq!(prelude_free::named(), (17, Some(5), 24, true));
    assert_eq!(prelude_free::named_local(), 4);
}

#[test]
fn renamed_dependency_builds() {
    if let Err(report) = nested::cargo("build", "renamed") {
        panic!("{report}");
    }
}
