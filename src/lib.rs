#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]

pub use layout_runtime::*;

/// Turns an XLA layout spec into a zero-sized value with `const fn` index code.
///
/// ```
/// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
/// assert_eq!(l.offset([2, 3]), 17);
/// assert_eq!(l.index_of(17), Some([2, 3]));
/// assert_eq!(l.storage_len(), 24);
/// const OFF: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").offset([2, 3]);
/// assert_eq!(OFF, 17);
/// ```
///
/// Forms:
/// - `layout!("spec")`: an expression; `<...>` may replace `{...}`. Its
///   type is named after the spec, as type errors show it: `F32_3x5_T2x2`
///   for `f32[3,5]{1,0:T(2,2)}`.
/// - `layout!(spec tokens)`: the same written without quotes, so an error
///   points at the very token at fault: `layout!(f32[3,5]{1,0:T(2,2)})`.
/// - `layout!(pub struct Name = "spec");`: a named type, for struct fields
///   and generic parameters (any attributes and visibility).
/// - a trailing `, padded_dimensions = [..]` describes XLA's old padded
///   layouts (SPEC.md §7), and `, padding_value = zero|one|lowest|highest`
///   what their padding holds ([`StaticLayout::PADDING_VALUE`]).
/// - a trailing `, tile = Name` also emits the layout of one first-level
///   tile as the `layout!` type `Name` ([`TiledLayout`], for
///   [`Tensor::tile_tensors`]); an error for a layout without such tiles.
///
/// Every value implements [`StaticLayout`]. A bad spec is a compile error with
/// the message and a caret under the offending text.
#[macro_export]
macro_rules! layout {
    ($($input:tt)*) => {
        // Braces, so the named form also expands as an item.
        $crate::__private::__layout! { $crate; $($input)* }
    };
}

/// The macro and the trait whose methods (`pack`, `unpack`, `slots`, ...)
/// `layout!` values carry: `use xla_layout::prelude::*;`.
///
/// ```
/// use xla_layout::prelude::*;
/// let l = layout!("f32[2,2]{1,0:T(2,2)}");
/// let mut storage = [0.0f32; 4];
/// l.pack(&[1.0, 2.0, 3.0, 4.0], &mut storage).unwrap();
/// assert_eq!(storage, [1.0, 2.0, 3.0, 4.0]);
/// ```
pub mod prelude {
    pub use crate::layout;
    pub use layout_runtime::StaticLayout;
}

/// What every `layout!` type implements whatever its layout: the impls
/// `#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]` would give a unit
/// struct (written out: derives cost more), and `Display` and `Debug`
/// printing the spec. One short invocation instead of their tokens, which
/// the proc macro would build, unoptimized in a user's build, one by one.
#[doc(hidden)]
#[macro_export]
macro_rules! __layout_impls {
    ($ty:ident, $spec:literal, $debug:literal) => {
        #[allow(clippy::expl_impl_clone_on_copy)]
        impl ::core::clone::Clone for $ty {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }
        impl ::core::marker::Copy for $ty {}
        impl ::core::default::Default for $ty {
            #[inline]
            fn default() -> Self {
                Self
            }
        }
        impl ::core::cmp::PartialEq for $ty {
            #[inline]
            fn eq(&self, _: &Self) -> ::core::primitive::bool {
                true
            }
        }
        impl ::core::cmp::Eq for $ty {}
        impl ::core::hash::Hash for $ty {
            #[inline]
            fn hash<H: ::core::hash::Hasher>(&self, _: &mut H) {}
        }
        impl ::core::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str($spec)
            }
        }
        impl ::core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str($debug)
            }
        }
    };
}

/// Paths the generated code uses; not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__layout_impls as impls;
    pub use core::fmt;
    pub use core::option::Option::{self, None, Some};
    pub use layout_macros::__layout;
    pub use layout_runtime::__Tables as Tables;
    pub use layout_runtime::__outside_dims as outside_dims;
    pub use layout_runtime::{__dim_of as dim_of, __inside as inside};
    pub use layout_runtime::{
        ElementType, Layout, PaddingValue, StaticLayout, TileDim, TiledLayout,
    };

    /// What a failed `layout!` stands for, so uses of it raise no second
    /// error. Its code never runs: the build has already failed.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct Invalid;

    #[allow(missing_docs, clippy::unused_self)]
    impl Invalid {
        pub const SPEC: &'static str = "";
        pub const DIMS: [usize; 0] = [];
        pub const LEN: usize = 0;
        pub const STORAGE_LEN: usize = 0;
        pub const STORAGE_BYTES: usize = 0;
        pub const PADDING_LEN: usize = 0;

        pub const fn offset<I: Copy>(self, _index: I) -> usize {
            0
        }
        pub const fn try_offset<I: Copy>(self, _index: I) -> Option<usize> {
            None
        }
        pub const fn index_of<I: Copy>(self, _offset: usize) -> Option<I> {
            None
        }
        pub const fn len(self) -> usize {
            0
        }
        pub const fn is_empty(self) -> bool {
            true
        }
        pub const fn storage_len(self) -> usize {
            0
        }
        pub const fn storage_bytes(self) -> usize {
            0
        }
        pub const fn padding_len(self) -> usize {
            0
        }
        pub const fn rank(self) -> usize {
            0
        }
        pub const fn true_rank(self) -> usize {
            0
        }
        pub const fn dim(self, _dim: isize) -> Option<usize> {
            None
        }
        pub fn runtime(self) -> Layout {
            // Any layout will do: this never runs.
            layout_runtime::LayoutBuilder::new(layout_runtime::ElementType::F32, &[])
                .build()
                .unwrap_or_else(|_| unreachable!("a scalar is always valid"))
        }
    }

    impl fmt::Display for Invalid {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("invalid layout")
        }
    }
}
