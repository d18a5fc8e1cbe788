//! The type of `layout!` values: [`Folded<S, N>`](Folded), one generic type
//! whose constants, `const fn`s and trait impls are written once, here.
//!
//! Each `layout!` writes only a unit type `S` and one impl of the hidden
//! trait [`FoldedSpec`]: the layout's constants and its two straight-line
//! programs (the offset's and the inverse's) as arrays of [`Step`]s. The
//! compiler's cost of an expansion is per item it holds, so the eighteen
//! constants and `const fn`s and nine trait impls each expansion carried
//! before are now items of this module, shared by every layout.
//!
//! The programs run in `run_short`: its [`UNROLLED`] steps are written
//! out, each behind a test of the program's length. In an optimized build
//! every test, every step's `match` and every operand is a constant of the
//! monomorphized function, so the code left is the same straight-line
//! arithmetic the steps spell (checked against the hand-written formula by
//! the assembly test), and in `const` evaluation the same function runs
//! step by step. Longer programs run in a loop (`run_long`), chosen by a
//! constant of the monomorphized function. An unoptimized build runs the
//! steps as written: a test and a call a step.

use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

use crate::eval::outside::{dim_of, inside, outside_dims};
use crate::eval::program::Operator;
use crate::eval::static_layout::{product, row_major, true_rank};
use crate::spec::element::bytes_of;
use crate::{tensor::TiledLayout, ElementType, Layout, PaddingValue, StaticLayout, TileDim};

/// Steps `run_short` writes out; a longer program runs in a loop instead.
pub const UNROLLED: usize = 64;

/// The most steps a program may have: four times the folded programs'
/// limit, for the steps the macro's linear form adds (a quotient, a
/// scaling and an addition per term of a sum at most).
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub const MAX_STEPS: usize = 4 * crate::MAX_PROGRAM_STEPS;

/// A step's operand: the number of an earlier step.
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub type Arg = u16;

/// One step of a program as `layout!` writes it: each names earlier steps
/// by number, and computes in `usize` with the wrapping arithmetic of the
/// folded programs (shifts and masks for powers of two, from the same
/// table of spellings, [`Op::spelling`](crate::program::Op::spelling)).
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Entry `n` of the index (the offset's program), or the offset (the
    /// inverse's, always `Input(0)`).
    Input(u8),
    /// `a >> k`.
    Shr(Arg, u32),
    /// `a / k`.
    Div(Arg, usize),
    /// `a & k`.
    And(Arg, usize),
    /// `a % k`.
    Rem(Arg, usize),
    /// `a << k`.
    Shl(Arg, u32),
    /// `a * k`, wrapping.
    Mul(Arg, usize),
    /// `a + b`, wrapping.
    Add(Arg, Arg),
    /// `a - b`, wrapping.
    Sub(Arg, Arg),
    /// `0 - a`, wrapping.
    Neg(Arg),
}

impl Step {
    /// `a <operator> k` for a constant `k`; `None` for `Add`, whose
    /// operands are steps, and for a shift past the word.
    pub const fn constant(a: Arg, operator: Operator, k: usize) -> Option<Step> {
        let shift = if k < usize::BITS as usize {
            k as u32
        } else {
            u32::MAX
        };
        Some(match operator {
            Operator::Shr if shift != u32::MAX => Step::Shr(a, shift),
            Operator::Shl if shift != u32::MAX => Step::Shl(a, shift),
            Operator::Div => Step::Div(a, k),
            Operator::And => Step::And(a, k),
            Operator::Rem => Step::Rem(a, k),
            Operator::Mul => Step::Mul(a, k),
            Operator::Shr | Operator::Shl | Operator::Add => return None,
        })
    }

    /// The step's value, earlier values in `v`, the inputs in `input`. A
    /// name of a step not yet computed reads 0 and a divisor 0 gives 0, so
    /// no program panics; the macro writes neither.
    // Always inlined where the build is optimized, and a call otherwise:
    // an unoptimized build would copy all ten arms into every step of every
    // layout's `offset`, for nothing: a from-scratch debug build of 200
    // `layout!`s took 2.3 s with it inlined, 1.0 s as a call.
    #[allow(clippy::inline_always)]
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    const fn eval(self, v: &[usize], input: &[usize]) -> usize {
        const fn at(v: &[usize], a: Arg) -> usize {
            let a = a as usize;
            if a < v.len() {
                v[a]
            } else {
                0
            }
        }
        match self {
            Step::Input(n) => {
                let n = n as usize;
                if n < input.len() {
                    input[n]
                } else {
                    0
                }
            }
            Step::Shr(a, k) => at(v, a) >> (k % usize::BITS),
            Step::Div(a, k) => match at(v, a).checked_div(k) {
                Some(q) => q,
                None => 0,
            },
            Step::And(a, k) => at(v, a) & k,
            Step::Rem(a, k) => match at(v, a).checked_rem(k) {
                Some(r) => r,
                None => 0,
            },
            Step::Shl(a, k) => at(v, a) << (k % usize::BITS),
            Step::Mul(a, k) => at(v, a).wrapping_mul(k),
            Step::Add(a, b) => at(v, a).wrapping_add(at(v, b)),
            Step::Sub(a, b) => at(v, a).wrapping_sub(at(v, b)),
            Step::Neg(a) => 0usize.wrapping_sub(at(v, a)),
        }
    }
}

/// The values of a program's steps, `steps[i]`'s at `i`, for a program of
/// at most [`UNROLLED`] steps.
#[allow(clippy::inline_always)]
#[inline(always)]
const fn run_short(steps: &[Step], input: &[usize]) -> [usize; UNROLLED] {
    let mut out = [0; UNROLLED];
    // Written out so that, with `steps` a constant, nothing of a loop is
    // left: each test folds, each `match` keeps one arm, each operand is a
    // constant index into `out`, which then lives in registers. Unfolded
    // (`const` evaluation, unoptimized builds), it stops after the last step.
    macro_rules! unrolled {
        ($($i:literal)*) => {'steps: {$(
            if $i >= steps.len() {
                break 'steps;
            }
            out[$i] = steps[$i].eval(&out, input);
        )*}};
    }
    unrolled!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
    );
    out
}

/// [`run_short`] for a program of any length (steps past [`MAX_STEPS`]
/// are not run): a loop over the steps.
#[inline]
const fn run_long(steps: &[Step], input: &[usize]) -> [usize; MAX_STEPS] {
    let mut out = [0; MAX_STEPS];
    let mut i = 0;
    while i < steps.len() && i < MAX_STEPS {
        out[i] = steps[i].eval(&out, input);
        i += 1;
    }
    out
}

/// The value of a program's last step (0 for no steps) in `v`.
#[allow(clippy::inline_always)]
#[inline(always)]
const fn last(v: &[usize], steps: usize) -> usize {
    match steps.checked_sub(1) {
        Some(i) if i < v.len() => v[i],
        _ => 0,
    }
}

/// The index an inverse program's values `v` give: `None` if a check fails.
#[allow(clippy::inline_always)]
#[inline(always)]
const fn index<const N: usize>(
    v: &[usize],
    checks: &[(Arg, usize)],
    outputs: &[Arg; N],
) -> Option<[usize; N]> {
    let mut c = 0;
    while c < checks.len() {
        let (step, bound) = checks[c];
        if (step as usize) < v.len() && v[step as usize] >= bound {
            return None;
        }
        c += 1;
    }
    let mut index = [0; N];
    let mut d = 0;
    while d < N {
        let out = outputs[d] as usize;
        if out < v.len() {
            index[d] = v[out];
        }
        d += 1;
    }
    Some(index)
}

/// What `layout!` writes for a layout: its description as constants, its
/// programs as [`Step`]s, and its compact tables. [`Folded<S, N>`](Folded)
/// is the value; `S` is the unit type that implements this.
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub trait FoldedSpec<const N: usize>: 'static {
    /// The canonical spec.
    const SPEC: &'static str;
    /// The element type.
    const ELEMENT_TYPE: ElementType;
    /// Bits per element (`E(n)` when written).
    const ELEMENT_BITS: u32 = Self::ELEMENT_TYPE.bits();
    /// The logical dims.
    const DIMS: [usize; N];
    /// `minor_to_major`.
    const MINOR_TO_MAJOR: &'static [usize] = row_major(N);
    /// The tiling levels.
    const TILES: &'static [&'static [TileDim]] = &[];
    /// `L(n)`.
    const TAIL_ALIGNMENT: usize = 1;
    /// `S(n)`.
    const MEMORY_SPACE: u64 = 0;
    /// Storage slots, padding and `L(n)` included.
    const STORAGE_LEN: usize;
    /// `[T; STORAGE_LEN]`, written with the number.
    type Buffer<T>;
    /// What padding slots hold after `pack`.
    const PADDING_VALUE: PaddingValue = PaddingValue::Zero;
    /// The offset's program over the index; the offset is its last step
    /// (0 when empty).
    const OFFSET: &'static [Step];
    /// The inverse's program over the offset.
    const INVERSE: &'static [Step];
    /// Padding checks: a step and the bound it must stay below.
    const CHECKS: &'static [(Arg, usize)] = &[];
    /// Each dim's step in [`INVERSE`](Self::INVERSE); [`Arg::MAX`] for 0.
    const OUTPUTS: [Arg; N];

    /// The compact tables, decoded once.
    fn tables() -> &'static Layout;
}

/// The value of a `layout!` expression: a zero-sized `Copy` type whose
/// `const fn`s compute offsets, indices and sizes of the layout `S` stands
/// for, `N` being its rank. Each `layout!` has its own `S`, so two layouts
/// are two types.
///
/// # Examples
///
/// ```
/// use xla_layout::layout;
/// let l = layout!("f32[3,5]{1,0:T(2,2)}");
/// const OFFSET: usize = layout!("f32[3,5]{1,0:T(2,2)}").offset([2, 3]);
/// assert_eq!(OFFSET, 17);
/// assert_eq!(l.index_of(17), Some([2, 3]));
/// assert_eq!((l.len(), l.storage_len(), l.padding_len()), (15, 24, 9));
/// assert_eq!(core::mem::size_of_val(&l), 0);
/// ```
pub struct Folded<S, const N: usize>(PhantomData<fn() -> S>);

impl<S: FoldedSpec<N>, const N: usize> Folded<S, N> {
    /// The value; `layout!` writes it.
    #[doc(hidden)]
    pub const NEW: Self = Folded(PhantomData);

    /// The canonical spec.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// // The named form's type is the one `Folded` is made of.
    /// xla_layout::layout!(struct Figure1 = "f32[3, 5]{1, 0: T(2, 2)}");
    /// assert_eq!(Folded::<Figure1, 2>::SPEC, "f32[3,5]{1,0:T(2,2)}");
    /// ```
    pub const SPEC: &'static str = S::SPEC;
    /// The logical dims.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// const DIMS: [usize; 2] = Folded::<Figure1, 2>::DIMS;
    /// assert_eq!(DIMS, [3, 5]);
    /// ```
    pub const DIMS: [usize; N] = S::DIMS;
    /// Logical elements.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// let logical = [0.0f32; Folded::<Figure1, 2>::LEN];
    /// assert_eq!(logical.len(), 15);
    /// ```
    pub const LEN: usize = product(&S::DIMS);
    /// Storage slots, padding and `L(n)` included.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// xla_layout::layout!(struct Aligned = "f32[3,5]{1,0:T(2,2)L(32)}");
    /// let storage = [0.0f32; Folded::<Aligned, 2>::STORAGE_LEN];
    /// assert_eq!(storage.len(), 32);
    /// ```
    pub const STORAGE_LEN: usize = S::STORAGE_LEN;
    /// Storage bytes.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// // 4-bit elements, two to a byte: 24 slots in 12 bytes.
    /// xla_layout::layout!(struct Nibbles = "s4[3,5]{1,0:T(2,2)E(4)}");
    /// assert_eq!(Folded::<Nibbles, 2>::STORAGE_BYTES, 12);
    /// ```
    // Only a byte count the parser refuses would not fit `usize`.
    #[allow(clippy::cast_possible_truncation)]
    pub const STORAGE_BYTES: usize = bytes_of(S::STORAGE_LEN, S::ELEMENT_BITS) as usize;
    /// Storage slots that hold no element.
    ///
    /// ```
    /// use xla_layout::Folded;
    /// xla_layout::layout!(struct Figure1 = "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(Folded::<Figure1, 2>::PADDING_LEN, 24 - 15);
    /// ```
    pub const PADDING_LEN: usize = S::STORAGE_LEN - Self::LEN;

    const SHORT_OFFSET: bool = S::OFFSET.len() <= UNROLLED;
    const SHORT_INVERSE: bool = S::INVERSE.len() <= UNROLLED;

    /// The storage offset of `index`. Outside the dims: a panic in debug
    /// builds (a compile error in `const` evaluation), naming the index and
    /// the dims; unchecked in release builds, where the result is
    /// unspecified but never a panic.
    ///
    /// Unchecked in release builds in `const` evaluation too: stable Rust
    /// gives a `const fn` no way to check only when evaluated by the
    /// compiler, so the check would cost every run-time call. For a
    /// constant, use [`strict_offset`](Self::strict_offset), which checks
    /// in every build.
    ///
    /// ```
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.offset([2, 3]), 17);
    /// ```
    // Always inlined, so the index's entries are read where the steps
    // read them: a separate function's array argument is turned into its
    // entries, read in order at the call, and that order changes how the
    // compiler regroups the sum (one instruction more in the assembly test).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[cfg_attr(debug_assertions, track_caller)]
    #[must_use]
    pub const fn offset(self, index: [usize; N]) -> usize {
        if cfg!(debug_assertions) && !inside(&index, &S::DIMS) {
            outside_dims(&index, &S::DIMS)
        }
        // A constant of each monomorphized copy, so the other arm is not
        // even compiled.
        if Self::SHORT_OFFSET {
            last(&run_short(S::OFFSET, &index), S::OFFSET.len())
        } else {
            last(&run_long(S::OFFSET, &index), S::OFFSET.len())
        }
    }

    /// The storage offset of `index`, checked in every build: outside the
    /// dims a panic naming the index and the dims, which in `const`
    /// evaluation is a compile error in release builds as in debug ones.
    /// The form for constants; a run-time loop that stays inside the dims
    /// wants [`offset`](Self::offset), whose check debug builds alone pay.
    ///
    /// ```
    /// const OFFSET: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").strict_offset([2, 3]);
    /// assert_eq!(OFFSET, 17);
    /// ```
    ///
    /// Outside the dims, the build fails in every profile:
    ///
    /// ```compile_fail,E0080
    /// const PAST: usize = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").strict_offset([0, 6]);
    /// let _ = PAST;
    /// ```
    #[inline]
    #[track_caller]
    #[must_use]
    pub const fn strict_offset(self, index: [usize; N]) -> usize {
        if !inside(&index, &S::DIMS) {
            outside_dims(&index, &S::DIMS)
        }
        self.offset(index)
    }

    /// The storage offset of `index`, or `None` outside the dims.
    ///
    /// ```
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.try_offset([2, 4]), Some(20));
    /// assert_eq!(l.try_offset([3, 0]), None);
    /// ```
    #[inline]
    #[must_use]
    pub const fn try_offset(self, index: [usize; N]) -> Option<usize> {
        if inside(&index, &S::DIMS) {
            Some(self.offset(index))
        } else {
            None
        }
    }

    /// The logical index at `offset`, or `None` for padding or past storage.
    ///
    /// ```
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.index_of(17), Some([2, 3]));
    /// assert_eq!(l.index_of(9), None); // padding
    /// ```
    #[inline]
    #[must_use]
    pub const fn index_of(self, offset: usize) -> Option<[usize; N]> {
        if offset >= S::STORAGE_LEN {
            return None;
        }
        if Self::SHORT_INVERSE {
            index(&run_short(S::INVERSE, &[offset]), S::CHECKS, &S::OUTPUTS)
        } else {
            index(&run_long(S::INVERSE, &[offset]), S::CHECKS, &S::OUTPUTS)
        }
    }

    /// The steps of the offset's and the inverse's programs, for tests of
    /// the programs longer than [`UNROLLED`]; not public API.
    #[doc(hidden)]
    pub const fn __steps(self) -> [usize; 2] {
        [S::OFFSET.len(), S::INVERSE.len()]
    }

    /// Logical elements.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").len(), 15);
    /// ```
    #[must_use]
    pub const fn len(self) -> usize {
        Self::LEN
    }

    /// Whether some dim is 0.
    ///
    /// ```
    /// assert!(xla_layout::layout!("f32[3,0]").is_empty());
    /// ```
    #[must_use]
    pub const fn is_empty(self) -> bool {
        Self::LEN == 0
    }

    /// Storage slots, padding and `L(n)` included.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").storage_len(), 24);
    /// ```
    #[must_use]
    pub const fn storage_len(self) -> usize {
        Self::STORAGE_LEN
    }

    /// Storage bytes.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").storage_bytes(), 96);
    /// ```
    #[must_use]
    pub const fn storage_bytes(self) -> usize {
        Self::STORAGE_BYTES
    }

    /// Storage slots that hold no element.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]{1,0:T(2,2)}").padding_len(), 9);
    /// ```
    #[must_use]
    pub const fn padding_len(self) -> usize {
        Self::PADDING_LEN
    }

    /// The number of dims.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]").rank(), 2);
    /// ```
    #[must_use]
    pub const fn rank(self) -> usize {
        N
    }

    /// The number of dims greater than 1.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[1,3,1,5]").true_rank(), 2);
    /// ```
    #[must_use]
    pub const fn true_rank(self) -> usize {
        true_rank(&S::DIMS)
    }

    /// One dim's size; negative numbers count from the end.
    ///
    /// ```
    /// assert_eq!(xla_layout::layout!("f32[3,5]").dim(-1), Some(5));
    /// ```
    #[must_use]
    pub const fn dim(self, dim: isize) -> Option<usize> {
        dim_of(&S::DIMS, dim)
    }

    /// The same layout as a run-time [`Layout`], from the compact tables.
    ///
    /// ```
    /// let l = xla_layout::layout!("f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(l.runtime(), xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap());
    /// ```
    #[must_use]
    pub fn runtime(self) -> Layout {
        S::tables().clone()
    }
}

// The impls `#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]` would
// give a unit struct, without the bounds on `S` a derive would add.
impl<S: FoldedSpec<N>, const N: usize> Clone for Folded<S, N> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: FoldedSpec<N>, const N: usize> Copy for Folded<S, N> {}

impl<S: FoldedSpec<N>, const N: usize> Default for Folded<S, N> {
    #[inline]
    fn default() -> Self {
        Self::NEW
    }
}

impl<S: FoldedSpec<N>, const N: usize> PartialEq for Folded<S, N> {
    #[inline]
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<S: FoldedSpec<N>, const N: usize> Eq for Folded<S, N> {}

impl<S: FoldedSpec<N>, const N: usize> Hash for Folded<S, N> {
    #[inline]
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// The spec, as [`Layout`] prints it.
impl<S: FoldedSpec<N>, const N: usize> fmt::Display for Folded<S, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(S::SPEC)
    }
}

/// `layout!("spec")`, as written.
impl<S: FoldedSpec<N>, const N: usize> fmt::Debug for Folded<S, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "layout!({:?})", S::SPEC)
    }
}

// `Default` for arrays stops at 32 entries, past any rank (`MAX_RANK`).
impl<S: FoldedSpec<N>, const N: usize> StaticLayout for Folded<S, N>
where
    [usize; N]: Default,
{
    const SPEC: &'static str = S::SPEC;
    const ELEMENT_TYPE: ElementType = S::ELEMENT_TYPE;
    const ELEMENT_BITS: u32 = S::ELEMENT_BITS;
    const DIMS: &'static [usize] = &S::DIMS;
    const MINOR_TO_MAJOR: &'static [usize] = S::MINOR_TO_MAJOR;
    const TILES: &'static [&'static [TileDim]] = S::TILES;
    const TAIL_ALIGNMENT: usize = S::TAIL_ALIGNMENT;
    const MEMORY_SPACE: u64 = S::MEMORY_SPACE;
    const STORAGE_LEN: usize = S::STORAGE_LEN;
    const PADDING_VALUE: PaddingValue = S::PADDING_VALUE;
    type Index = [usize; N];
    type Buffer<T> = S::Buffer<T>;

    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    fn offset(self, index: [usize; N]) -> usize {
        Folded::offset(self, index)
    }

    #[inline]
    fn index_of(self, offset: usize) -> Option<[usize; N]> {
        Folded::index_of(self, offset)
    }

    #[inline]
    fn tables(self) -> Option<&'static Layout> {
        Some(S::tables())
    }
}

/// `tile = Name` on a `layout!` expression: the layout of its first-level
/// tile, which the generic [`TiledLayout`] impl of [`Folded`] names.
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
pub trait FoldedTile {
    /// The tile's layout.
    type Tile: StaticLayout;
}

impl<S: FoldedSpec<N> + FoldedTile, const N: usize> TiledLayout for Folded<S, N>
where
    [usize; N]: Default,
{
    type Tile = S::Tile;
}
