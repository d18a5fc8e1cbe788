//! The trait every `layout!` value implements, for code generic over layouts.

use core::fmt::{Debug, Display};
use core::hash::Hash;

use crate::{ElementType, Layout, TileDim};

/// A layout fixed at compile time by `layout!`: its description as
/// associated constants and its folded index code as methods.
///
/// Each `layout!` also has inherent `const fn` versions of these methods
/// (usable in `const` items); the trait is for generic code.
///
/// # Examples
///
/// ```
/// use layout_runtime::StaticLayout;
///
/// fn first_padding<L: StaticLayout>(l: L) -> Option<usize> {
///     (0..L::STORAGE_LEN).find(|&o| l.index_of(o).is_none())
/// }
///
/// // With the `xla-layout` facade: `first_padding(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}"))`.
/// # let _ = first_padding::<NoLayout>;
/// # #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)] struct NoLayout;
/// # impl core::fmt::Display for NoLayout { fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { f.write_str("f32[]") } }
/// # impl StaticLayout for NoLayout {
/// #     const SPEC: &'static str = "f32[]"; const ELEMENT_TYPE: layout_runtime::ElementType = layout_runtime::ElementType::F32;
/// #     const ELEMENT_BITS: u32 = 32; const RANK: usize = 0; const TRUE_RANK: usize = 0; const DIMS: &'static [usize] = &[];
/// #     const MINOR_TO_MAJOR: &'static [usize] = &[]; const TILES: &'static [&'static [layout_runtime::TileDim]] = &[];
/// #     const TAIL_ALIGNMENT: usize = 1; const MEMORY_SPACE: u64 = 0; const LEN: usize = 1; const STORAGE_LEN: usize = 1; const STORAGE_BYTES: usize = 4;
/// #     type Index = [usize; 0];
/// #     fn offset(self, _: [usize; 0]) -> usize { 0 } fn try_offset(self, _: [usize; 0]) -> Option<usize> { Some(0) }
/// #     fn index_of(self, o: usize) -> Option<[usize; 0]> { (o == 0).then_some([]) }
/// # }
/// ```
pub trait StaticLayout:
    Copy + Default + Debug + Display + Eq + Hash + Send + Sync + 'static
{
    /// The canonical spec string (what `Display` prints).
    const SPEC: &'static str;
    /// The element type.
    const ELEMENT_TYPE: ElementType;
    /// Bits per element in storage (`E(n)` or the type's width).
    const ELEMENT_BITS: u32;
    /// The number of dims.
    const RANK: usize;
    /// The number of dims greater than 1.
    const TRUE_RANK: usize;
    /// The logical dims.
    const DIMS: &'static [usize];
    /// Dims from fastest- to slowest-varying.
    const MINOR_TO_MAJOR: &'static [usize];
    /// The tiling levels.
    const TILES: &'static [&'static [TileDim]];
    /// `L(n)`, 1 when not written.
    const TAIL_ALIGNMENT: usize;
    /// `S(n)`, 0 when not written.
    const MEMORY_SPACE: u64;
    /// Logical elements.
    const LEN: usize;
    /// Storage slots, padding included.
    const STORAGE_LEN: usize;
    /// Storage bytes.
    const STORAGE_BYTES: usize;

    /// A logical index: `[usize; RANK]`.
    type Index: Copy
        + Debug
        + Default
        + Eq
        + Hash
        + AsRef<[usize]>
        + AsMut<[usize]>
        + Send
        + Sync
        + 'static;

    /// The storage offset of `index`, unchecked (see [`Layout::offset`]).
    fn offset(self, index: Self::Index) -> usize;

    /// The storage offset of `index`, or `None` outside the dims.
    fn try_offset(self, index: Self::Index) -> Option<usize>;

    /// The logical index at `offset`, or `None` for padding or past storage.
    fn index_of(self, offset: usize) -> Option<Self::Index>;

    /// One dim's size; negative numbers count from the end.
    fn dim(dim: isize) -> Option<usize> {
        crate::resolve_dim(Self::RANK, dim).and_then(|d| Self::DIMS.get(d).copied())
    }

    /// The same layout as a run-time [`Layout`].
    ///
    /// # Panics
    ///
    /// Never: `layout!` accepted this spec, and [`parse`](crate::parse) is the
    /// function it used.
    fn runtime(self) -> Layout {
        crate::parse(Self::SPEC).expect("layout! validated this spec with the same parser")
    }
}
