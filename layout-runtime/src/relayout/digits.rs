//! Digits: the arithmetic that lets a relayout copy blocks instead of elements.
//!
//! Without `*`, every dim of the final tiled shape holds one mixed-radix digit
//! of one logical index: tiling an index `e` by `t` splits it into `e / t` and
//! `e % t`, and later levels split those again. An element's offset is then
//! `Σ digit * stride`, one term per final dim, and a slot holds an element
//! exactly when, for every logical dim, its digits add up to an index inside
//! the dim. A relayout becomes a strided N-d copy with one bounds test per
//! dim, which [`walk`](super::walk) runs a block at a time.
//!
//! Two things leave this form, and the callers then fall back to the folded
//! index programs: a `*` that mixes dims (merging whole adjacent dims is fine:
//! it only makes a larger dim), and a split of a digit that is not the most
//! significant of its dim by a tile that does not divide it, where two digit
//! values would name the same index.

#[cfg(test)]
use crate::TileDim;
use crate::{algebra, Layout, MAX_RANK, MAX_TILED_RANK};

/// Source of every size-1 dim that tiling prepends: such a slot holds an
/// element only when all of these digits are 0.
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

    /// The stepping `of` replaced, kept while the two are compared.
    #[cfg(test)]
    pub(crate) fn of_stepped(layout: &Layout) -> Option<Self> {
        if layout.is_empty() {
            return None;
        }
        let dims = layout.dims();
        let mut out = Digits::empty(dims);
        let mut shape = [NO_DIGIT; MAX_TILED_RANK];
        let mut len = 0;
        for &dim in layout.minor_to_major().iter().rev() {
            let source = out.add_source(dim, dim, dims[dim])?;
            shape[len] = Digit {
                source,
                count: dims[dim],
                ..NO_DIGIT
            };
            len += 1;
        }
        for tile in layout.tiles() {
            let k = tile.rank();
            if len < k {
                // Prepend size-1 dims, as the tile needs k dims.
                shape.copy_within(..len, k - len);
                shape[..k - len].fill(NO_DIGIT);
                len = k;
            }
            let base = len - k;
            let mut outer = [NO_DIGIT; MAX_TILED_RANK];
            let mut inner = [NO_DIGIT; MAX_TILED_RANK];
            let mut groups = 0;
            let mut merged: Option<Digit> = None;
            for (j, td) in tile.dims().iter().enumerate() {
                let cur = shape[base + j];
                let acc = match merged.take() {
                    None => cur,
                    Some(major) => out.merge(major, cur)?,
                };
                match *td {
                    TileDim::Combine => merged = Some(acc),
                    TileDim::Size(t) => {
                        let (o, i) = split(acc, t)?;
                        outer[groups] = o;
                        inner[groups] = i;
                        groups += 1;
                    }
                }
            }
            if base + 2 * groups > MAX_TILED_RANK {
                return None;
            }
            shape[base..base + groups].copy_from_slice(&outer[..groups]);
            shape[base + groups..base + 2 * groups].copy_from_slice(&inner[..groups]);
            len = base + 2 * groups;
        }
        let body = shape[..len].iter().map(|g| g.count).product();
        out.finish(&shape[..len], body);
        out.storage_len = layout.storage_len();
        Some(out)
    }

    /// Sets strides (row-major over `shape`), drops size-1 digits.
    #[cfg(test)]
    fn finish(&mut self, shape: &[Digit], body: usize) {
        let mut stride = 1usize;
        let mut kept = [NO_DIGIT; MAX_TILED_RANK];
        let mut n = 0;
        for g in shape.iter().rev() {
            if g.count != 1 {
                kept[n] = Digit { stride, ..*g };
                n += 1;
            }
            stride = stride.saturating_mul(g.count);
        }
        kept[..n].reverse();
        self.stored = kept;
        self.n = n;
        self.body = body;
        self.storage_len = body;
    }

    /// The digit `major * minor.count + minor`, if it is one digit of one source.
    #[cfg(test)]
    fn merge(&mut self, major: Digit, minor: Digit) -> Option<Digit> {
        if minor.count == 1 {
            return Some(major);
        }
        if major.count == 1 {
            return Some(minor);
        }
        let count = major.count.checked_mul(minor.count)?;
        if major.source == minor.source {
            if major.source == PHANTOM {
                // Zero exactly when both are: still "all phantom digits are 0".
                return Some(Digit {
                    count,
                    top: false,
                    ..minor
                });
            }
            if major.weight == minor.weight.checked_mul(minor.count)? {
                return Some(Digit {
                    count,
                    top: major.top,
                    ..minor
                });
            }
            return None;
        }
        if !self.whole(major) || !self.whole(minor) {
            return None;
        }
        let (a, b) = (
            self.sources[usize::from(major.source)],
            self.sources[usize::from(minor.source)],
        );
        // Whole dims merge into one row-major index when they are adjacent
        // in logical order (size-1 dims between them change nothing).
        if a.hi >= b.lo || self.dims[a.hi + 1..b.lo].iter().any(|&x| x != 1) {
            return None;
        }
        let source = self.add_source(a.lo, b.hi, count)?;
        Some(Digit {
            source,
            count,
            ..NO_DIGIT
        })
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

/// `e / t` and `e % t` of a digit `e`.
#[cfg(test)]
fn split(g: Digit, t: usize) -> Option<(Digit, Digit)> {
    if !g.top && g.source != PHANTOM && g.count % t != 0 {
        // Inner padding: two digit values would name one index.
        return None;
    }
    let outer = Digit {
        weight: g.weight.saturating_mul(t),
        count: g.count.div_ceil(t),
        ..g
    };
    let inner = Digit {
        count: t,
        top: false,
        ..g
    };
    Some((outer, inner))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    use super::{Digits, PHANTOM};
    use crate::eval::closed::tests::{spec, Rng};

    /// A stored digit as compared: source `(lo, hi, bound)`, weight, count, top, stride.
    type Seen = (Option<(usize, usize, usize)>, usize, usize, bool, usize);

    /// What a walk reads of digits: per stored digit its source's dims
    /// and bound (phantom: none, and its weight only nonzero), weight,
    /// count, top (phantom: none) and stride; the body and storage.
    fn walked(d: &Digits) -> Vec<Seen> {
        let mut v: Vec<_> = d.stored[..d.n]
            .iter()
            .map(|g| {
                if g.source == PHANTOM {
                    assert!(g.weight > 0);
                    (None, 0, g.count, false, g.stride)
                } else {
                    let s = d.sources[usize::from(g.source)];
                    (
                        Some((s.lo, s.hi, s.bound)),
                        g.weight,
                        g.count,
                        g.top,
                        g.stride,
                    )
                }
            })
            .collect();
        v.push((None, d.body, d.storage_len, false, 0));
        v
    }

    #[test]
    fn digits_from_the_algebra_equal_the_stepped_ones() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let (mut same, mut merged, mut gained) = (0, 0, 0);
        for i in 0..20000 {
            let spec = if i % 2 == 0 {
                spec(&mut rng)
            } else {
                let rank = 2 + rng.below(4);
                let dims: Vec<String> = (0..rank)
                    .map(|_| match rng.below(4) {
                        0 => "1".into(),
                        _ => (2 + rng.below(6)).to_string(),
                    })
                    .collect();
                let mut order: Vec<usize> = (0..rank).rev().collect();
                if rng.below(4) == 0 {
                    let j = rng.below(rank - 1);
                    order.swap(j, j + 1);
                }
                let order: Vec<String> = order.iter().map(ToString::to_string).collect();
                let k = 2 + rng.below(rank - 1);
                let mut tile: Vec<String> = (0..k - 1)
                    .map(|_| match rng.below(3) {
                        0 => (1usize << rng.below(3)).to_string(),
                        _ => "*".into(),
                    })
                    .collect();
                tile.push((1 + rng.below(8)).to_string());
                let more = match rng.below(3) {
                    0 => format!("({})", 1 + rng.below(8)),
                    1 => format!("(*,{})", 1 + rng.below(8)),
                    _ => String::new(),
                };
                format!(
                    "f32[{}]{{{}:T({}){more}}}",
                    dims.join(","),
                    order.join(","),
                    tile.join(",")
                )
            };
            let Ok(l) = crate::parse(&spec) else { continue };
            match (Digits::of_stepped(&l), Digits::of(&l)) {
                (Some(old), Some(new)) => {
                    assert_eq!(walked(&old), walked(&new), "{spec}");
                    same += 1;
                    merged +=
                        usize::from(new.sources[1..new.n_sources].iter().any(|s| s.lo < s.hi));
                }
                (Some(_), None) => panic!("{spec}: the algebra refuses, the stepping did not"),
                // Tiles of 1 make digits the stepping refused to split
                // (`f32[12,3]{1,0:T(8,1)(2)}`); the algebra makes them
                // constant, and their values past 0 padding.
                (None, Some(_)) => gained += 1,
                (None, None) => {}
            }
        }
        assert!(
            same >= 5000 && merged >= 1000,
            "{same} same, {merged} merged, {gained} gained"
        );
    }
}
