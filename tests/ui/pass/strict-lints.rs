//! Every form of `layout!` under rustc's strictest lints: the expansion
//! must not add a single warning to a crate that denies them all.
#![deny(
    warnings,
    missing_docs,
    unused,
    unused_qualifications,
    unused_results,
    unused_import_braces,
    unused_lifetimes,
    nonstandard_style,
    rust_2018_idioms,
    future_incompatible,
    missing_debug_implementations,
    missing_copy_implementations,
    trivial_casts,
    trivial_numeric_casts,
    single_use_lifetimes,
    elided_lifetimes_in_paths,
    let_underscore_drop,
    unit_bindings,
    unsafe_code
)]

use xla_layout::StaticLayout;

xla_layout::layout!(
    /// Figure 1 of the tiled layout document.
    pub struct Figure1 = "f32[3,5]{1,0:T(2,2)}"
);

/// An offset computed while compiling.
pub const OFFSET: usize = xla_layout::layout!("f32[8]{0:T(2,2)}").offset([5]);

fn slots<L: StaticLayout>(_: L) -> usize {
    L::STORAGE_LEN
}

fn main() {
    xla_layout::layout!(struct Packed = "bf16[2,8,128]{2,1,0:T(8,128)(2,1)}");

    let l = xla_layout::layout!("f32[10,20]{0,1}");
    let tokens = xla_layout::layout!(f32[3,5]{1,0:T(2,2)});
    let padded = xla_layout::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]);
    assert_eq!(l.offset([3, 5]), 53);
    assert_eq!(tokens.offset([2, 3]), 17);
    assert_eq!(padded.storage_len(), 15);
    assert_eq!(Figure1.index_of(17), Some([2, 3]));
    assert_eq!(Packed.offset([0, 2, 0]), 256);
    assert_eq!(OFFSET, 9);
    assert_eq!(slots(Figure1), 24);
}
