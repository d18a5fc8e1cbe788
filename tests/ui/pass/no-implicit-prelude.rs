//! `layout!` in every form in a crate without the prelude: the expansion
//! may only name things by absolute paths.
#![no_implicit_prelude]

::xla_layout::layout!(pub struct Figure1 = "f32[3,5]{1,0:T(2,2)}");

const OFFSET: usize = ::xla_layout::layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").offset([0, 2, 0]);

fn main() {
    ::xla_layout::layout!(struct Local = "f32[4]{0:T(2)}");

    let l = ::xla_layout::layout!("f32[10,20]{0,1}");
    let tokens = ::xla_layout::layout!(f32[8]{0:T(2,2)});
    let padded = ::xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]);
    ::core::assert_eq!(l.offset([3, 5]), 53);
    ::core::assert_eq!(l.try_offset([10, 0]), ::core::option::Option::None);
    ::core::assert_eq!(tokens.offset([5]), 9);
    ::core::assert_eq!(padded.storage_len(), 15);
    ::core::assert_eq!(Figure1.index_of(17), ::core::option::Option::Some([2, 3]));
    ::core::assert_eq!(Figure1.dim(-1), ::core::option::Option::Some(5));
    ::core::assert_eq!(Local.storage_len(), 4);
    ::core::assert_eq!(OFFSET, 256);
}
