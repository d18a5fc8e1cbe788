//! Local items named like the ones the expansion uses must not change it.
#![allow(dead_code, non_camel_case_types)]

mod core {}
mod fmt {}
mod __private {}
struct Option;
struct Some;
struct None;
struct StaticLayout;
struct Layout;
struct ElementType;
struct TileDim;
struct Clone;
struct Copy;
struct Default;
struct PartialEq;
struct Hash;
struct Formatter;
struct Invalid;
struct __XlaLayout;
struct Bf16_4x8_T2x4_T2x1;

::xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");

fn main() {
    let l = ::xla_layout::layout!("bf16[4,8]{1,0:T(2,4)(2,1)}");
    ::std::assert_eq!(l.offset([1, 0]), 1);
    ::std::assert_eq!(Figure1.offset([2, 3]), 17);
    ::std::assert_eq!(::std::format!("{Figure1}"), "f32[3,5]{1,0:T(2,2)}");
    ::std::assert_eq!(<Figure1 as ::xla_layout::StaticLayout>::STORAGE_LEN, 24);
}
