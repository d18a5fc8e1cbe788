//! Digits: the arithmetic that lets a relayout copy blocks instead of elements.
//!
//! A layout's [`algebra::digits`] are what a walk needs: every dim of the
//! final tiled shape holds one mixed-radix digit of one logical index (or
//! of whole adjacent dims that `*` merged, read as one index). An
//! element's offset is then `Σ digit * stride`, one term per final dim,
//! and a slot holds an element exactly when, for every source, its digits
//! add up to an index inside it. A relayout becomes a strided N-d copy
//! with one bounds test per source, which [`walk`](super::walk) runs a
//! block at a time.
//!
//! Where the algebra has no digits (a `*` that mixes dims, a split of a
//! digit into digits of it), or a digit other than the most significant
//! has padding inside it (two of its values would name one index, which a
//! bounds test cannot tell), the callers fall back to the folded index
//! programs.

use crate::{algebra, Layout, MAX_RANK, MAX_TILED_RANK};

/// Source of every digit that is always 0 in an element (of the size-1
/// dims that tiling prepends, or past a digit a wider tile holds whole):
/// a slot holds an element only when all of these digits are 0.
pub(crate) const PHANTOM: u8 = 0;
/// Source id of a step that never makes a slot padding.
pub(crate) const ALWAYS: u8 = u8::MAX;
/// The phantom source, one per logical dim, one per merge of whole dims.
pub(crate) const MAX_SOURCES: usize = 1 + 2 * MAX_RANK;
/// Steps of a walk: refining one layout by another at most doubles the digits.
pub(crate) const MAX_STEPS: usize = 2 * MAX_TILED_RANK;

/// What a digit counts: logical dims `lo..=hi` read as one row-major index
/// below `bound` (one dim unless `*` merged whole dims).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source {
    pub(crate) lo: usize,
    pub(crate) hi: usize,
    pub(crate) bound: usize,
}

/// One dim of the final shape: values `0..count`, each worth `weight` in its
/// source's index and `stride` slots in storage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Digit {
    pub(crate) source: u8,
    pub(crate) weight: usize,
    pub(crate) count: usize,
    /// The most significant digit of its source (values past the source's
    /// bound are padding, never another element).
    pub(crate) top: bool,
    pub(crate) stride: usize,
}

const NO_DIGIT: Digit = Digit {
    source: PHANTOM,
    weight: 1,
    count: 1,
    top: true,
    stride: 0,
};

/// A layout (or a dense row-major array) as digits in storage order, size-1
/// digits dropped.
#[derive(Clone, Debug)]
pub(crate) struct Digits {
    pub(crate) stored: [Digit; MAX_TILED_RANK],
    pub(crate) n: usize,
    pub(crate) sources: [Source; MAX_SOURCES],
    pub(crate) n_sources: usize,
    /// Slots the digits cover; storage past them is `L(n)` padding.
    pub(crate) body: usize,
    pub(crate) storage_len: usize,
    pub(crate) dims: [usize; MAX_RANK],
}

impl Digits {
    fn empty(dims: &[usize]) -> Self {
        let mut d = Digits {
            stored: [NO_DIGIT; MAX_TILED_RANK],
            n: 0,
            sources: [Source {
                lo: usize::MAX,
                hi: usize::MAX,
                bound: 1,
            }; MAX_SOURCES],
            n_sources: 1,
            body: 1,
            storage_len: 1,
            dims: [1; MAX_RANK],
        };
        d.dims[..dims.len()].copy_from_slice(dims);
        d
    }

    fn add_source(&mut self, lo: usize, hi: usize, bound: usize) -> Option<u8> {
        let id = self.n_sources;
        *self.sources.get_mut(id)? = Source { lo, hi, bound };
        self.n_sources += 1;
        Some(id as u8)
    }

    /// An array of `dims` whose offsets are `Σ index[d] * strides[d]`
    /// (row-major strides make a dense row-major array).
    pub(crate) fn strided(dims: &[usize], strides: &[usize; MAX_RANK]) -> Option<Self> {
        let mut d = Digits::empty(dims);
        let mut n = 0;
        for (p, &extent) in dims.iter().enumerate() {
            let source = d.add_source(p, p, extent)?;
            if extent != 1 {
                d.stored[n] = Digit {
                    source,
                    count: extent,
                    stride: strides[p],
                    ..NO_DIGIT
                };
                n += 1;
            }
        }
        d.n = n;
        d.body = dims.iter().product();
        d.storage_len = d.body;
        Some(d)
    }

    /// `layout` as digits, or `None` when it leaves the digit form (see the
    /// module docs) or is empty: the layout's
    /// [`algebra::digits`](crate::algebra::digits), each run of logical
    /// dims a source, where no digit but a most significant one has
    /// padding inside it (two values of such a digit would name one index,
    /// which the walk's bounds tests cannot tell).
    pub(crate) fn of(layout: &Layout) -> Option<Self> {
        if layout.is_empty() {
            return None;
        }
        let dims = layout.dims();
        let digits =
            algebra::digits::<MAX_TILED_RANK>(dims, layout.minor_to_major(), layout.tiles())
                .ok()?;
        let mut out = Digits::empty(dims);
        // Sources of single dims in physical order, then runs as they come.
        let mut single = [PHANTOM; MAX_RANK];
        for &dim in layout.minor_to_major().iter().rev() {
            single[dim] = out.add_source(dim, dim, dims[dim])?;
        }
        let n = digits.list.len();
        // Phantom digits chain as one mixed-radix number, most minor first:
        // any value but 0 is padding, and adjacent ones merge into one step.
        let mut phantom = 1usize;
        for (i, g) in digits.list.iter().enumerate().rev() {
            let stored = match g.radix {
                1 => {
                    let weight = phantom;
                    phantom = phantom.checked_mul(g.extent)?;
                    Digit {
                        source: PHANTOM,
                        weight,
                        count: g.extent,
                        top: false,
                        stride: g.stride,
                    }
                }
                r if r != 0 && r != g.extent => return None,
                r => {
                    let source = if g.dim == g.last {
                        single[g.dim]
                    } else {
                        out.run(g.dim, g.last)?
                    };
                    Digit {
                        source,
                        weight: g.place,
                        count: g.extent,
                        top: r == 0,
                        stride: g.stride,
                    }
                }
            };
            *out.stored.get_mut(i)? = stored;
        }
        out.n = n;
        out.body = digits.slots;
        out.storage_len = layout.storage_len();
        Some(out)
    }

    /// The source of the row-major index of dims `lo..=hi`, added if new.
    fn run(&mut self, lo: usize, hi: usize) -> Option<u8> {
        let known = self.sources[..self.n_sources]
            .iter()
            .position(|s| (s.lo, s.hi) == (lo, hi));
        if let Some(id) = known {
            return u8::try_from(id).ok();
        }
        let bound = self.dims[lo..=hi].iter().product();
        self.add_source(lo, hi, bound)
    }

    /// Per logical dim, the storage stride of its index, when every element's
    /// offset is `Σ index[d] * stride[d]` (no dim split into several digits).
    pub(crate) fn affine_strides(&self) -> Option<[usize; MAX_RANK]> {
        let mut strides = [0usize; MAX_RANK];
        for g in &self.stored[..self.n] {
            if g.source == PHANTOM {
                continue;
            }
            if !(g.top && g.weight == 1) {
                return None;
            }
            let s = self.sources[usize::from(g.source)];
            let mut stride = g.stride;
            for d in (s.lo..=s.hi).rev() {
                strides[d] = stride;
                stride = stride.saturating_mul(self.dims[d]);
            }
        }
        Some(strides)
    }

    /// Whether `g` alone counts its whole source, without padding.
    fn whole(&self, g: Digit) -> bool {
        g.source != PHANTOM
            && g.top
            && g.weight == 1
            && g.count == self.sources[usize::from(g.source)].bound
    }

    /// Whether every storage slot holds an element.
    pub(crate) fn dense(&self) -> bool {
        self.body == self.storage_len && self.stored[..self.n].iter().all(|&g| self.whole(g))
    }

    /// The storage stride per step of `source`'s index, if a walk of other
    /// digits may address this array through it.
    pub(crate) fn source_stride(&self, source: u8, strides: &[usize; MAX_RANK]) -> Option<usize> {
        if source == PHANTOM {
            return Some(0);
        }
        let s = self.sources[usize::from(source)];
        let base = strides[s.hi];
        let mut expect = base;
        for d in (s.lo..s.hi).rev() {
            expect = expect.saturating_mul(self.dims[d + 1]);
            if self.dims[d] > 1 && strides[d] != expect {
                return None;
            }
        }
        Some(base)
    }
}
