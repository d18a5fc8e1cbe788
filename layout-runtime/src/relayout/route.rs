//! Choosing how to walk: digit walks where the layouts allow, slot by slot
//! through the folded index programs where they do not.

use super::digits::Digits;
use super::walk::{Visitor, Walk, UNIT};
use crate::{program::InverseProgram, Layout, MAX_RANK};

/// One end of a relayout: a layout's storage, or a dense row-major array.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Side<'a> {
    Layout(&'a Layout),
    RowMajor(&'a [usize]),
    /// Only ever addressed, never walked: offsets `Σ index[d] * strides[d]`.
    #[cfg(feature = "ndarray")]
    Strided(&'a [usize], [usize; MAX_RANK]),
}

impl Side<'_> {
    pub(crate) fn digits(&self) -> Option<Digits> {
        match self {
            Side::Layout(l) => Digits::of(l),
            Side::RowMajor(dims) => Digits::strided(dims, &row_major_strides(dims)),
            #[cfg(feature = "ndarray")]
            Side::Strided(dims, strides) => Digits::strided(dims, strides),
        }
    }

    pub(crate) fn storage_len(&self) -> usize {
        match self {
            Side::Layout(l) => l.storage_len(),
            Side::RowMajor(dims) => dims.iter().product(),
            #[cfg(feature = "ndarray")]
            Side::Strided(..) => 0,
        }
    }

    fn rank(&self) -> usize {
        match self {
            Side::Layout(l) => l.rank(),
            Side::RowMajor(dims) => dims.len(),
            #[cfg(feature = "ndarray")]
            Side::Strided(dims, _) => dims.len(),
        }
    }

    /// The inverse program folded once, for a layout without compact code.
    fn folded_inverse(&self) -> Option<InverseProgram> {
        if let Side::Layout(l) = self {
            l.folded_inverse()
        } else {
            None
        }
    }

    /// Writes the logical index at slot `k` into `index`; `false` for padding.
    fn index_of(&self, folded: Option<&InverseProgram>, k: usize, index: &mut [usize]) -> bool {
        match self {
            Side::Layout(l) => l.index_into_folded(folded, k, index),
            Side::RowMajor(dims) => {
                let mut rest = k;
                for (i, &d) in index.iter_mut().zip(dims.iter()).rev() {
                    *i = rest % d;
                    rest /= d;
                }
                true
            }
            #[cfg(feature = "ndarray")]
            Side::Strided(..) => false,
        }
    }

    fn offset(&self, index: &[usize]) -> usize {
        match self {
            Side::Layout(l) => l.offset(index),
            Side::RowMajor(dims) => index
                .iter()
                .zip(dims.iter())
                .fold(0, |acc, (&i, &d)| acc * d + i),
            #[cfg(feature = "ndarray")]
            Side::Strided(_, strides) => index.iter().zip(strides).map(|(&i, &s)| i * s).sum(),
        }
    }
}

/// Strides of a dense row-major array.
fn row_major_strides(dims: &[usize]) -> [usize; MAX_RANK] {
    let mut strides = [0; MAX_RANK];
    let mut acc = 1usize;
    for (s, &d) in strides.iter_mut().zip(dims).rev() {
        *s = acc;
        acc = acc.saturating_mul(d);
    }
    strides
}

/// How to visit every slot of the walked side.
// No allocator: the walk lives inline, and a plan is made once per call.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub(crate) enum Route {
    /// Digit by digit, a block at a time.
    Walk(Walk),
    /// One slot at a time through the index programs.
    Slots,
}

impl Route {
    /// Walks the storage of `walked`, addressing `other`.
    pub(crate) fn over(walked: &Side, other: &Side) -> Route {
        let (Some(mine), Some(theirs)) = (walked.digits(), other.digits()) else {
            return Route::Slots;
        };
        if let Some(strides) = theirs.affine_strides() {
            if let Some(w) = Walk::affine(&mine, &strides) {
                return Route::Walk(w);
            }
        }
        match Walk::refined(&mine, &theirs) {
            Some(w) => Route::Walk(w),
            None => Route::Slots,
        }
    }

    /// Runs `v` over every slot of `walked` (the same `walked` and `other`
    /// as given to [`over`](Self::over)).
    pub(crate) fn run<V: Visitor>(&self, walked: &Side, other: &Side, v: &mut V) {
        match self {
            Route::Walk(w) => w.run(v),
            Route::Slots => run_slots(walked, other, v),
        }
    }
}

fn run_slots<V: Visitor>(walked: &Side, other: &Side, v: &mut V) {
    run_slot_range(walked, other, v, 0..walked.storage_len());
}

/// Walked slots `range` one at a time through the index programs.
// Out of line, a call a relayout: optimized, the loop reads a `Side`'s
// payload past its variant's and branches on it where that cannot
// matter, which memcheck reports; `.ci/memcheck.supp` names this function
// (inlined into `Route::run`, a suppression would have to name that).
#[inline(never)]
pub(crate) fn run_slot_range<V: Visitor>(
    walked: &Side,
    other: &Side,
    v: &mut V,
    range: core::ops::Range<usize>,
) {
    let mut index = [0; MAX_RANK];
    let rank = walked.rank();
    let folded = walked.folded_inverse();
    let mut padding_from = None;
    let end = range.end;
    for k in range {
        if walked.index_of(folded.as_ref(), k, &mut index) {
            if let Some(start) = padding_from.take() {
                v.padding(start, k - start);
            }
            let o = other.offset(&index[..rank]);
            v.block(k, o, UNIT, UNIT);
        } else if padding_from.is_none() {
            padding_from = Some(k);
        }
    }
    if let Some(start) = padding_from {
        v.padding(start, end - start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walks(spec: &str) -> bool {
        let l = crate::parse(spec).unwrap();
        matches!(
            Route::over(&Side::Layout(&l), &Side::RowMajor(l.dims())),
            Route::Walk(_)
        )
    }

    #[test]
    fn digit_walks_cover_the_common_layouts() {
        for spec in [
            "f32[4096,4096]{1,0:T(8,128)}",
            "f32[4093,4093]{1,0:T(8,128)}",
            "bf16[19,260]{1,0:T(8,128)(2,1)}",
            "s8[33,129]{1,0:T(8,128)(4,1)}",
            "s4[40,256]{1,0:T(8,128)(8,1)E(4)}",
            "bf16[3000]{0:T(1024)(128)(2,1)}",
            "f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "f32[4,1,5]{2,1,0:T(*,*,2)}",
            "f32[11,10]{1,0:T(*,3)}",
            "u32[]{:T(128)}",
            "f32[7,5]{0,1:L(16)}",
            "f32[5,9,140]{0,2,1:T(8,128)}",
        ] {
            assert!(walks(spec), "{spec}");
        }
        // Inner padding: 5 = 2*3 - 1, then the inner 2 is tiled by 4.
        assert!(!walks("f32[5]{0:T(2)(4)}"));
        // `*` mixing the inner digits of two dims.
        assert!(!walks("f32[11,10]{1,0:T(2,2)(*,3)}"));
    }
}
