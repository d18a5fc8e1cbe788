//! A bare binary that uses `layout!` and `parse`: it must build with
//! `core` alone. If anything in the dependency graph links `std`, std's own
//! `#[panic_handler]` collides with the one here (error E0152).
#![no_std]
#![no_main]

use core::fmt::Write;
use core::panic::PanicInfo;

use xla_layout::StaticLayout;

xla_layout::layout!(
    /// The bf16 TPU tiling, two rows packed per 32-bit word.
    pub struct Packed = "bf16[2,8,128]{2,1,0:T(8,128)(2,1)}"
);

/// Offsets of `[row, col]` in Figure 1 from the macro and from a spec
/// parsed at run time, and in the bf16 TPU tiling through `StaticLayout`,
/// so every code path is compiled into the binary. `usize::MAX` stands for
/// "outside the dims".
#[unsafe(no_mangle)]
pub extern "C" fn layout_demo(row: usize, col: usize) -> usize {
    let parsed = xla_layout::parse("f32[3,5]{1,0:T(2,2)}")
        .ok()
        .and_then(|l| l.try_offset(&[row, col]))
        .unwrap_or(usize::MAX);
    let fig = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}")
        .try_offset([row, col])
        .unwrap_or(usize::MAX);
    let packed = <Packed as StaticLayout>::try_offset(Packed, [0, row, col]).unwrap_or(usize::MAX);
    parsed ^ fig ^ packed ^ canonical_len()
}

/// The length of a layout's canonical text, written through `Display`
/// into a fixed buffer: formatting must need no allocator either.
fn canonical_len() -> usize {
    struct Counter(usize);
    impl Write for Counter {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut c = Counter(0);
    let _ = write!(c, "{}", xla_layout::layout!("f32[3,5]<1,0:T(2,2)>"));
    c.0
}

/// A `Vec` is tensor storage only with the `alloc` feature, which this
/// crate leaves off: the error must say so.
#[cfg(feature = "vec-storage")]
pub fn vec_storage() -> usize {
    extern crate alloc;
    let l = xla_layout::layout!("f32[3]{0:T(2)}");
    let t = xla_layout::tensor::Tensor::new(l, alloc::vec![0.0f32; 4]).ok();
    t.map_or(0, |t| t.storage().len())
}

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {}
}
