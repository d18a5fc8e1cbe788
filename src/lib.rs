#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
// docs.rs labels the runtime's feature-gated items (see its `lib.rs`).
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use layout_runtime::*;

/// Turns an XLA layout spec into a zero-sized value with `const fn` index code.
///
/// ```
/// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
/// assert_eq!(l.offset([2, 3]), 17);
/// assert_eq!(l.index_of(17), Some([2, 3]));
/// assert_eq!(l.storage_len(), 24);
/// // In a constant, `strict_offset`: an index outside the dims fails the
/// // build in every profile (`offset` checks in debug builds only).
/// const OFF: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").strict_offset([2, 3]);
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
///   tile as the `layout!` type `Name` ([`TiledLayout`](tensor::TiledLayout),
///   for [`Tensor::tile_tensors`](tensor::Tensor::tile_tensors)); an error
///   for a layout without such tiles.
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

/// Fails the build unless a reshape (or, with `transpose = [..]`, XLA's
/// transpose, output dim `i` being dim `perm[i]` of `from`) between two
/// layout specs is a bitcast: the check of
/// [`bitcast::reshape`](crate::bitcast::reshape) and
/// [`bitcast::transpose`](crate::bitcast::transpose), run by the compiler.
/// It expands to nothing; otherwise the build fails with the
/// [`Mismatch`](crate::bitcast::Mismatch) message on `to` (or on a bad
/// `perm`), and a bad spec with `layout!`'s message.
///
/// ```
/// xla_layout::assert_bitcast!(
///     "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
///     "bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}"
/// );
/// xla_layout::assert_bitcast!("f32[128,256]{1,0:T(8,128)}", "f32[256,128]{0,1:T(8,128)}", transpose = [1, 0]);
/// ```
///
/// ```compile_fail
/// // The tiles hold 4 rows instead of 8: column 128 moves.
/// xla_layout::assert_bitcast!("f32[8,256]{1,0:T(8,128)}", "f32[2,4,256]{2,1,0:T(4,128)}");
/// ```
///
/// There is no `const fn` form over `layout!` values yet: their types keep
/// the description the check reads (dims, order, tiles, as constants), but
/// the check sorts and merges terms with iterators and slice sorts, which
/// `const fn` cannot call on this crate's minimum Rust (1.85). Name the two
/// specs here instead; it runs the same code.
#[macro_export]
macro_rules! assert_bitcast {
    ($($input:tt)*) => {
        $crate::__private::__assert_bitcast! { $($input)* }
    };
}

/// The macro and the trait whose methods (`pack`, `unpack`, `slots`, ...)
/// `layout!` values carry: `use xla_layout::prelude::*;`.
///
/// ```
/// use xla_layout::prelude::*;
/// let l = layout!("f32[2,2]{1,0:T(2,2)}");
/// let mut storage = [0.0f32; 4];
/// l.pack(&[1.0, 2.0, 3.0, 4.0], &mut storage, xla_layout::Options::default()).unwrap();
/// assert_eq!(storage, [1.0, 2.0, 3.0, 4.0]);
/// ```
pub mod prelude {
    pub use crate::layout;
    pub use layout_runtime::StaticLayout;
}

/// The named form's impls that are the same for every layout: a named type
/// is a layout as a `layout!` expression's [`Folded`] value is, so each
/// inherent item forwards to `Folded<$ty, $rank>`, which `$ty` (its
/// `FoldedSpec`) makes that layout. Written once here rather than by the
/// proc macro, which runs unoptimized in a user's build; the macro writes
/// the `StaticLayout` impl, whose constants differ by layout.
#[doc(hidden)]
#[macro_export]
macro_rules! __layout_named {
    ($ty:ident, $rank:literal) => {
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
                ::core::fmt::Display::fmt(&$crate::__private::Folded::<$ty, $rank>::NEW, f)
            }
        }
        impl ::core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&$crate::__private::Folded::<$ty, $rank>::NEW, f)
            }
        }
        #[allow(clippy::len_without_is_empty, clippy::unused_self)]
        impl $ty {
            /// The canonical spec.
            pub const SPEC: &'static ::core::primitive::str =
                $crate::__private::Folded::<$ty, $rank>::SPEC;
            /// The logical dims.
            pub const DIMS: [::core::primitive::usize; $rank] =
                $crate::__private::Folded::<$ty, $rank>::DIMS;
            /// Logical elements.
            pub const LEN: ::core::primitive::usize = $crate::__private::Folded::<$ty, $rank>::LEN;
            /// Storage slots, padding included.
            pub const STORAGE_LEN: ::core::primitive::usize =
                $crate::__private::Folded::<$ty, $rank>::STORAGE_LEN;
            /// Storage bytes.
            pub const STORAGE_BYTES: ::core::primitive::usize =
                $crate::__private::Folded::<$ty, $rank>::STORAGE_BYTES;
            /// Storage slots that hold no element.
            pub const PADDING_LEN: ::core::primitive::usize =
                $crate::__private::Folded::<$ty, $rank>::PADDING_LEN;

            /// The storage offset of `index`. Outside the dims: a panic in debug
            /// builds (a compile error in `const` evaluation), naming the index
            /// and the dims; unchecked in release builds, where the result is
            /// unspecified but never a panic, also in `const` evaluation: for
            /// a constant, use `strict_offset`.
            #[inline]
            #[cfg_attr(debug_assertions, track_caller)]
            pub const fn offset(
                self,
                index: [::core::primitive::usize; $rank],
            ) -> ::core::primitive::usize {
                $crate::__private::Folded::<$ty, $rank>::NEW.offset(index)
            }
            /// The storage offset of `index`, checked in every build: outside
            /// the dims a panic naming the index and the dims, in `const`
            /// evaluation a compile error in release builds too.
            #[inline]
            #[track_caller]
            pub const fn strict_offset(
                self,
                index: [::core::primitive::usize; $rank],
            ) -> ::core::primitive::usize {
                $crate::__private::Folded::<$ty, $rank>::NEW.strict_offset(index)
            }
            /// The storage offset of `index`, or `None` outside the dims.
            #[inline]
            pub const fn try_offset(
                self,
                index: [::core::primitive::usize; $rank],
            ) -> $crate::__private::Option<::core::primitive::usize> {
                $crate::__private::Folded::<$ty, $rank>::NEW.try_offset(index)
            }
            /// The logical index at `offset`, or `None` for padding or past storage.
            #[inline]
            pub const fn index_of(
                self,
                offset: ::core::primitive::usize,
            ) -> $crate::__private::Option<[::core::primitive::usize; $rank]> {
                $crate::__private::Folded::<$ty, $rank>::NEW.index_of(offset)
            }
            /// Logical elements.
            pub const fn len(self) -> ::core::primitive::usize {
                Self::LEN
            }
            /// Whether some dim is 0.
            pub const fn is_empty(self) -> ::core::primitive::bool {
                Self::LEN == 0
            }
            /// Storage slots, padding and `L(n)` included.
            pub const fn storage_len(self) -> ::core::primitive::usize {
                Self::STORAGE_LEN
            }
            /// Storage bytes.
            pub const fn storage_bytes(self) -> ::core::primitive::usize {
                Self::STORAGE_BYTES
            }
            /// Storage slots that hold no element.
            pub const fn padding_len(self) -> ::core::primitive::usize {
                Self::PADDING_LEN
            }
            /// The number of dims.
            pub const fn rank(self) -> ::core::primitive::usize {
                $rank
            }
            /// The number of dims greater than 1.
            pub const fn true_rank(self) -> ::core::primitive::usize {
                $crate::__private::Folded::<$ty, $rank>::NEW.true_rank()
            }
            /// One dim's size; negative numbers count from the end.
            pub const fn dim(
                self,
                dim: ::core::primitive::isize,
            ) -> $crate::__private::Option<::core::primitive::usize> {
                $crate::__private::Folded::<$ty, $rank>::NEW.dim(dim)
            }
            /// The same layout as a run-time `Layout`.
            pub fn runtime(self) -> $crate::__private::Layout {
                $crate::__private::Folded::<$ty, $rank>::NEW.runtime()
            }
        }
    };
}

/// Paths the generated code uses; not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__layout_named as named;
    pub use core::fmt;
    pub use core::option::Option::{self, None, Some};
    pub use layout_macros::{__assert_bitcast, __layout};
    pub use layout_runtime::__Tables as Tables;
    pub use layout_runtime::__outside_dims as outside_dims;
    pub use layout_runtime::{
        __Arg as Arg, __FoldedSpec as FoldedSpec, __FoldedTile as FoldedTile, __Step as Step,
        Folded,
    };
    pub use layout_runtime::{__dim_of as dim_of, __inside as inside};
    pub use layout_runtime::{
        tensor::TiledLayout, ElementType, Layout, PaddingValue, StaticLayout, TileDim,
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
        pub const fn strict_offset<I: Copy>(self, _index: I) -> usize {
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
