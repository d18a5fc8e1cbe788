//! Element values for relayout tests: distinct-looking, odd (so never zero),
//! and never equal to the garbage the tests' buffers start with.

/// A value type the relayout tests fill buffers with.
pub trait Value: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync {
    /// The value for element `i`.
    fn make(i: usize) -> Self;
    /// What buffers hold before a relayout writes them.
    const GARBAGE: Self;
}

macro_rules! value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            #[allow(clippy::cast_possible_truncation)]
            fn make(i: usize) -> Self {
                (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) as $t | 1
            }
            const GARBAGE: Self = 0;
        }
    )*};
}
value!(u8, u16, u32, u64, i8);
