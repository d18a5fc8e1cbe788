//! Every form of `layout!` through a dependency renamed to `xl`.
#![deny(warnings, missing_docs, unused)]

use xl::StaticLayout;

xl::layout!(
    /// Figure 1 of the tiled layout document.
    pub struct Figure1 = "f32[3,5]{1,0:T(2,2)}"
);

/// An offset computed while compiling.
const OFFSET: usize = xl::layout!("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}").offset([0, 2, 0]);

// The build is the test: these fail to compile if a value is wrong.
const _: () = assert!(OFFSET == 256);
const _: () = assert!(xl::layout!(f32[8]{0:T(2,2)}).offset([5]) == 9);
const _: () = assert!(xl::layout!("f32[2,3]{0,1}", padded_dimensions = [3, 5]).storage_len() == 15);

const _: () = assert!(Figure1.offset([2, 3]) == 17);
const _: () = assert!(<Figure1 as StaticLayout>::STORAGE_LEN == 24);

fn main() {
    xl::layout!(struct Local = "f32[4]{0:T(2)}");
    assert_eq!(Local.storage_len(), 4);

    let l = xl::layout!("f32[10,20]{0,1}");
    assert_eq!(l.offset([3, 5]), 53);
    assert_eq!(l.runtime().to_string(), "f32[10,20]{0,1}");
    assert_eq!(Figure1.to_string(), "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(
        xl::parse("f32[3,5]{1,0:T(2,2)}").map(|r| r.storage_len()),
        Ok(24)
    );
}
