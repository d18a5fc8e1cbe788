//! Walking one array's storage in order while addressing another.
//!
//! A [`Walk`] pairs each digit of the walked storage with the stride it has in
//! the other array. The walker visits the digits outermost first and hands
//! every block it proves free of padding to a [`Visitor`] as a 2-D strided
//! copy over the two innermost digits; padding comes out as contiguous runs.
//! Bounds are tested once per block, not per element.

use super::digits::{Digits, ALWAYS, MAX_SOURCES, MAX_STEPS, PHANTOM};
use crate::MAX_RANK;

/// One digit of a block: `count` values, `walk` slots apart in the walked
/// storage and `other` apart in the other array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    pub(crate) count: usize,
    pub(crate) walk: usize,
    pub(crate) other: usize,
}

/// A digit that takes one value.
pub(crate) const UNIT: Axis = Axis {
    count: 1,
    walk: 0,
    other: 0,
};

/// Receives what a walk finds.
pub(crate) trait Visitor {
    /// Elements at walked slots `off + i*a.walk + j*b.walk` and other
    /// positions `other + i*a.other + j*b.other`, for `i < a.count`, `j < b.count`.
    fn block(&mut self, off: usize, other: usize, a: Axis, b: Axis);
    /// [`block`](Self::block) for each value of `o`, outermost: one call
    /// for visitors that move the three digits at once (a transpose whose
    /// tiles span several blocks), a block at a time otherwise.
    fn block3(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis) {
        for x in 0..o.count {
            self.block(off + x * o.walk, other + x * o.other, a, b);
        }
    }
    /// [`block3`](Self::block3) for each value of `band`, outermost: one call
    /// for visitors that move a band of tiles in one loop (the way back
    /// from `(2,1)` and `(4,1)` tiles), a `block3` at a time otherwise.
    fn block4(&mut self, off: usize, other: usize, band: Axis, o: Axis, a: Axis, b: Axis) {
        for x in 0..band.count {
            self.block3(off + x * band.walk, other + x * band.other, o, a, b);
        }
    }
    /// Walked slots `off..off + len` are padding.
    fn padding(&mut self, off: usize, len: usize);
    /// [`block`](Self::block), then padding for the values of `a` from
    /// `a.count` to `a_len`, each with all of `b`: a block, and a run of
    /// padding after it, unless a visitor does both at once.
    fn block_then_padding(&mut self, off: usize, other: usize, a: Axis, b: Axis, a_len: usize) {
        block_then_padding_apart(self, off, other, (a, b), a_len);
    }
    /// Whether [`padding`](Self::padding) does nothing (visitors that read
    /// the walked storage, and the edge's clipped visitors): a block cut
    /// short by a bound may then go with the blocks of the carried steps
    /// around it, ordered for the other side, its padding left out.
    fn ignores_padding(&self) -> bool {
        false
    }
    /// The most rows of a block whose rows lie far apart on the other side,
    /// for visitors that move such blocks row by row: longer ones are cut
    /// into groups of this many, each walked across the other steps
    /// before the next, so that the rows' lines stay in cache. `None`
    /// (the default): blocks as the steps make them, for visitors whose
    /// kernels order large blocks themselves.
    fn spread(&self) -> Option<usize> {
        None
    }
    /// [`block`](Self::block), with each row along `b` followed by padding
    /// up to `b_len` values of `b`: the block, then that padding row by
    /// row, unless a visitor does both at once.
    fn block_padded(&mut self, off: usize, other: usize, a: Axis, b: Axis, b_len: usize) {
        block_padded_apart(self, off, other, (a, b), b_len);
    }
    /// [`block_padded`](Self::block_padded) for each value of `o`,
    /// outermost: one call for visitors that write the rows of many
    /// blocks and their padding together (the ragged last tile column of
    /// a transpose, its tile rows `o` apart), the [`block3`](Self::block3)
    /// and then each row's padding otherwise.
    fn block3_padded(&mut self, off: usize, other: usize, o: Axis, a: Axis, b: Axis, b_len: usize) {
        block3_padded_apart(self, off, other, (o, a, b), b_len);
    }
}

/// [`Visitor::block3_padded`] as the [`Visitor::block3`], then the padding
/// of each row: what visitors do that do not put them together.
pub(crate) fn block3_padded_apart<V: Visitor + ?Sized>(
    v: &mut V,
    off: usize,
    other: usize,
    (o, a, b): (Axis, Axis, Axis),
    b_len: usize,
) {
    v.block3(off, other, o, a, b);
    if b.count < b_len {
        let len = (b_len - b.count) * b.walk;
        for x in 0..o.count {
            for i in 0..a.count {
                v.padding(off + x * o.walk + i * a.walk + b.count * b.walk, len);
            }
        }
    }
}

/// [`Visitor::block_padded`] as the block, then the padding of each row:
/// what visitors do that do not put them together.
pub(crate) fn block_padded_apart<V: Visitor + ?Sized>(
    v: &mut V,
    off: usize,
    other: usize,
    (a, b): (Axis, Axis),
    b_len: usize,
) {
    v.block(off, other, a, b);
    if b.count < b_len {
        for x in 0..a.count {
            v.padding(
                off + x * a.walk + b.count * b.walk,
                (b_len - b.count) * b.walk,
            );
        }
    }
}

/// [`Visitor::block_then_padding`] as two calls, the block's and the
/// padding's: what visitors do that do not put them together.
pub(crate) fn block_then_padding_apart<V: Visitor + ?Sized>(
    v: &mut V,
    off: usize,
    other: usize,
    (a, b): (Axis, Axis),
    a_len: usize,
) {
    v.block(off, other, a, b);
    if a.count < a_len {
        v.padding(off + a.count * a.walk, (a_len - a.count) * a.walk);
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) axis: Axis,
    pub(crate) source: u8,
    pub(crate) weight: usize,
}

const NO_STEP: Step = Step {
    axis: UNIT,
    source: ALWAYS,
    weight: 1,
};

/// The walked storage as steps, with validity bookkeeping.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    pub(crate) steps: [Step; MAX_STEPS],
    pub(crate) n: usize,
    pub(crate) bounds: [usize; MAX_SOURCES],
    /// Largest sum this step and later steps of its source can add.
    tail: [usize; MAX_STEPS],
    /// The previous step of the same source (`usize::MAX`: none).
    prev: [usize; MAX_STEPS],
    pub(crate) body: usize,
    pub(crate) storage_len: usize,
    /// Contiguous elements both sides at every position the walk names
    /// (see [`folded`](Self::folded)); 1 for a plain walk.
    pub(crate) fold: usize,
    /// The elements a fold left out: see [`Edge`].
    pub(crate) edge: Option<Edge>,
}

/// The elements of the last, partial unit of a folded source: a fold
/// moves whole units only, so a bound that is not a multiple of the unit
/// (an `s8` `(4,1)` tile transposed from rows of 2481 bytes) is rounded
/// down to one, and the last unit's `len` elements, which start at `off`
/// (`other` on the other side), go through [`run_edge`](Walk::run_edge),
/// a walk of their own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    source: u8,
    len: usize,
    /// Where the partial unit's first element lies, walked and other.
    off: usize,
    other: usize,
}

/// A source's bound over its partial unit from which a fold leaves that
/// unit to the edge: the edge walk moves each of its elements alone, so
/// they must be few beside the units.
const EDGE_SHARE: usize = 128;

impl Walk {
    fn new(walked: &Digits) -> Self {
        let mut bounds = [1; MAX_SOURCES];
        for (b, s) in bounds.iter_mut().zip(&walked.sources[..walked.n_sources]) {
            *b = s.bound;
        }
        Walk {
            steps: [NO_STEP; MAX_STEPS],
            n: 0,
            bounds,
            tail: [0; MAX_STEPS],
            prev: [usize::MAX; MAX_STEPS],
            body: walked.body,
            storage_len: walked.storage_len,
            fold: 1,
            edge: None,
        }
    }

    /// Drops the innermost step when that step is `c` elements contiguous
    /// on both sides and every other step of the walked storage is a
    /// multiple of `c` (leaves the walk as it is otherwise): each position
    /// it names then starts a unit of `c` elements, which kernels move as
    /// one wider element (two `bf16` as one 4-byte unit). The other side's
    /// strides need not be: its units may start anywhere (rows of 2481
    /// bytes). A bounded step folds too where it is its source's digit of
    /// weight 1 and the source's other digits are whole units: its bound,
    /// when not a multiple of `c`, is rounded down to one and the last
    /// unit's elements left to an [`Edge`], if the bound is at least
    /// [`EDGE_SHARE`] times as many and the digits spell the unit's place.
    /// In place, since a walk is kilobytes to copy and every relayout call
    /// folds one.
    pub(crate) fn fold(&mut self, c: usize) {
        let Some(&last) = self.steps[..self.n].last() else {
            return;
        };
        if c < 2
            || self.n < 2
            || self.fold != 1
            || last.axis
                != (Axis {
                    count: c,
                    walk: 1,
                    other: 1,
                })
            || !self.steps[..self.n - 1]
                .iter()
                .all(|st| st.axis.walk % c == 0)
        {
            return;
        }
        // A bounded unit is whole or all padding when its source's bound
        // and other digits are whole units: the bound then tests the
        // unit's first element for all of it. A bound inside a unit is
        // rounded down, and that unit's elements left to the edge.
        if last.source != ALWAYS {
            let s = usize::from(last.source);
            let bound = self.bounds[s];
            let whole = self.steps[..self.n - 1]
                .iter()
                .filter(|st| st.source == last.source)
                .all(|st| st.weight % c == 0);
            let len = bound % c;
            if last.weight != 1 || !whole || (len > 0 && bound < EDGE_SHARE * len) {
                return;
            }
            if len > 0 {
                let Some((off, other)) = self.position(last.source, bound - len) else {
                    return;
                };
                self.bounds[s] = bound - len;
                self.edge = Some(Edge {
                    source: last.source,
                    len,
                    off,
                    other,
                });
            }
        }
        self.n -= 1;
        self.steps[self.n] = NO_STEP;
        self.fold = c;
        self.bookkeeping();
    }

    /// Where value `index` of `source` lies, walked and other, read as
    /// the digits of that source's steps: `None` if they do not spell it
    /// (a value past them, or digits whose weights leave a remainder).
    fn position(&self, source: u8, index: usize) -> Option<(usize, usize)> {
        let mut ours = [0usize; MAX_STEPS];
        let mut n = 0;
        for (k, st) in self.steps[..self.n].iter().enumerate() {
            if st.source == source {
                ours[n] = k;
                n += 1;
            }
        }
        ours[..n].sort_unstable_by_key(|&k| core::cmp::Reverse(self.steps[k].weight));
        let (mut rest, mut off, mut other) = (index, 0, 0);
        for &k in &ours[..n] {
            let st = self.steps[k];
            let x = rest / st.weight;
            if x >= st.axis.count {
                return None;
            }
            rest -= x * st.weight;
            off += x * st.axis.walk;
            other += x * st.axis.other;
        }
        (rest == 0).then_some((off, other))
    }

    /// Runs the elements a fold left to its [`Edge`] (none without one),
    /// for a visitor of single elements (not units): the steps of the
    /// other sources, with the edge's elements innermost. Padding comes
    /// out as well, for visitors that skip it.
    pub(crate) fn run_edge<V: Visitor>(&self, v: &mut V) {
        let Some(e) = self.edge else {
            return;
        };
        let mut w = self.clone();
        w.edge = None;
        w.fold = 1;
        w.n = 0;
        for st in self.steps[..self.n]
            .iter()
            .filter(|st| st.source != e.source)
        {
            w.steps[w.n] = *st;
            w.n += 1;
        }
        w.steps[w.n] = Step {
            axis: Axis {
                count: e.len,
                walk: 1,
                other: 1,
            },
            source: ALWAYS,
            weight: 1,
        };
        w.n += 1;
        for st in &mut w.steps[w.n..] {
            *st = NO_STEP;
        }
        w.bookkeeping();
        let mut partial = [0usize; MAX_SOURCES];
        w.descend(v, 0, e.off, e.other, &mut partial, &[]);
    }

    /// Walks `walked`, addressing an array whose offsets are `Σ index[d] * strides[d]`.
    pub(crate) fn affine(walked: &Digits, strides: &[usize; MAX_RANK]) -> Option<Self> {
        let mut w = Walk::new(walked);
        for g in &walked.stored[..walked.n] {
            let per = walked.source_stride(g.source, strides)?;
            w.push(Step {
                axis: Axis {
                    count: g.count,
                    walk: g.stride,
                    other: g.weight.checked_mul(per)?,
                },
                source: g.source,
                weight: g.weight,
            })?;
        }
        w.finish();
        Some(w)
    }

    /// Walks `walked`, addressing the storage of `other`: each digit of
    /// `walked` is cut where `other` has a digit boundary inside it, so that
    /// every piece lies in one digit of `other`. `None` if a cut is not exact
    /// or a dim is merged by `*` on either side.
    pub(crate) fn refined(walked: &Digits, other: &Digits) -> Option<Self> {
        let simple = |d: &Digits| d.sources[1..d.n_sources].iter().all(|s| s.lo == s.hi);
        if !simple(walked) || !simple(other) {
            return None;
        }
        let mut w = Walk::new(walked);
        for g in &walked.stored[..walked.n] {
            if g.source == PHANTOM {
                w.push(Step {
                    axis: Axis {
                        count: g.count,
                        walk: g.stride,
                        other: 0,
                    },
                    source: g.source,
                    weight: g.weight,
                })?;
                continue;
            }
            let dim = walked.sources[usize::from(g.source)].lo;
            let theirs = |h: &&super::digits::Digit| {
                h.source != PHANTOM && other.sources[usize::from(h.source)].lo == dim
            };
            // Cut points: their weights strictly inside this digit's range.
            let end = if g.top {
                usize::MAX
            } else {
                g.weight.checked_mul(g.count)?
            };
            let mut cuts = [0usize; MAX_STEPS];
            let mut n_cuts = 0;
            for h in other.stored[..other.n].iter().filter(theirs) {
                if h.weight > g.weight && h.weight < end {
                    cuts[n_cuts] = h.weight;
                    n_cuts += 1;
                }
            }
            cuts[..n_cuts].sort_unstable();
            // Pieces from the most significant down: [cut_k, ..), ..., [w, cut_1).
            let mut hi_count = g.count;
            let mut upper = g.weight; // weight of the current most significant piece
            let mut pieces = [(0usize, 0usize); MAX_STEPS];
            let mut n_pieces = 0;
            for &c in &cuts[..n_cuts] {
                if c % upper != 0 {
                    return None;
                }
                let ratio = c / upper;
                if hi_count % ratio != 0 {
                    return None;
                }
                pieces[n_pieces] = (upper, ratio);
                n_pieces += 1;
                hi_count /= ratio;
                upper = c;
            }
            pieces[n_pieces] = (upper, hi_count);
            n_pieces += 1;
            for &(weight, count) in pieces[..n_pieces].iter().rev() {
                if count == 1 {
                    continue;
                }
                // The digit of `other` that holds this piece.
                let h = other.stored[..other.n]
                    .iter()
                    .filter(theirs)
                    .find(|h| weight >= h.weight && (h.top || weight < h.weight * h.count));
                let their_stride = match h {
                    Some(h) if weight % h.weight == 0 => {
                        (weight / h.weight).checked_mul(h.stride)?
                    }
                    Some(_) => return None,
                    // The dim has size 1 there: only index 0 is an element.
                    None => 0,
                };
                w.push(Step {
                    axis: Axis {
                        count,
                        walk: g.stride.checked_mul(weight / g.weight)?,
                        other: their_stride,
                    },
                    source: g.source,
                    weight,
                })?;
            }
        }
        w.finish();
        Some(w)
    }

    fn push(&mut self, s: Step) -> Option<()> {
        *self.steps.get_mut(self.n)? = s;
        self.n += 1;
        Some(())
    }

    /// Marks sources that can never be out of bounds, merges steps that form
    /// one strided run on both sides, and fills the bookkeeping.
    fn finish(&mut self) {
        let mut max = [0usize; MAX_SOURCES];
        for s in &self.steps[..self.n] {
            let m = &mut max[usize::from(s.source)];
            *m = m.saturating_add((s.axis.count - 1).saturating_mul(s.weight));
        }
        for s in &mut self.steps[..self.n] {
            if max[usize::from(s.source)] < self.bounds[usize::from(s.source)] {
                s.source = ALWAYS;
            }
        }
        let mut n = 0;
        for j in 0..self.n {
            let s = self.steps[j];
            if n > 0 {
                let p = self.steps[n - 1];
                let joins = p.axis.walk == s.axis.count * s.axis.walk
                    && p.axis.other == s.axis.count * s.axis.other
                    && p.source == s.source
                    && (s.source == ALWAYS || p.weight == s.weight * s.axis.count);
                if joins {
                    self.steps[n - 1] = Step {
                        axis: Axis {
                            count: p.axis.count * s.axis.count,
                            ..s.axis
                        },
                        ..s
                    };
                    continue;
                }
            }
            self.steps[n] = s;
            n += 1;
        }
        self.n = n;
        self.bookkeeping();
    }

    /// `prev` and `tail` for the current order of the steps.
    fn bookkeeping(&mut self) {
        let n = self.n;
        let mut last = [usize::MAX; MAX_SOURCES + 1];
        for j in 0..n {
            let slot = usize::from(self.steps[j].source).min(MAX_SOURCES);
            self.prev[j] = last[slot];
            last[slot] = j;
        }
        let mut acc = [0usize; MAX_SOURCES + 1];
        for j in (0..n).rev() {
            let s = self.steps[j];
            let slot = usize::from(s.source).min(MAX_SOURCES);
            acc[slot] = acc[slot].saturating_add((s.axis.count - 1).saturating_mul(s.weight));
            self.tail[j] = acc[slot];
        }
    }

    /// Whether the steps visit the walked storage in memory order: each
    /// spans exactly `count` values of the next, the innermost `fold`
    /// slots, so that a run of slots is a run of the steps' values read as
    /// one mixed-radix number ([`run_range`](Self::run_range) relies on it).
    pub(crate) fn in_order(&self) -> bool {
        let mut span = self.fold;
        for st in self.steps[..self.n].iter().rev() {
            if st.axis.walk != span {
                return false;
            }
            match span.checked_mul(st.axis.count) {
                Some(s) => span = s,
                None => return false,
            }
        }
        span == self.body
    }

    /// The step whose values send elements to disjoint runs of the other
    /// array, `stride` apart: `(step, stride)`, when the other steps together
    /// reach less than one stride.
    pub(crate) fn partitioning_step(&self) -> Option<(usize, usize)> {
        let (q, st) = self.steps[..self.n]
            .iter()
            .enumerate()
            .max_by_key(|(_, st)| st.axis.other)?;
        let mut reach = 0usize;
        for (k, other) in self.steps[..self.n].iter().enumerate() {
            if k != q {
                reach = reach.checked_add((other.axis.count - 1).checked_mul(other.axis.other)?)?;
            }
        }
        (st.axis.count > 1 && reach < st.axis.other).then_some((q, st.axis.other))
    }

    /// The same walk with step `q` outermost. Padding then no longer comes
    /// out in storage order, so only visitors that ignore padding may run it.
    pub(crate) fn with_first(&self, q: usize) -> Walk {
        let mut w = self.clone();
        w.steps[..=q].rotate_right(1);
        w.bookkeeping();
        w
    }

    /// Runs values `lo..hi` of the first step with all of the steps below
    /// (elements only: padding past a bound comes out at slots out of
    /// storage order when the steps are not in memory order).
    pub(crate) fn run_values<V: Visitor>(&self, v: &mut V, lo: usize, hi: usize) {
        if self.body > 0 && lo < hi {
            let mut partial = [0usize; MAX_SOURCES];
            self.values(v, 0, (lo, hi), 0, 0, &mut partial);
        }
    }

    /// Runs walked slots `range` of a walk [`in_order`](Self::in_order),
    /// whose ends below the body are multiples of `fold`: whole values of
    /// a step as one shorter walk, and only the values the ends cut into
    /// one step further down, so that a range costs at most two partial
    /// values a step more than the whole walk.
    pub(crate) fn run_range<V: Visitor>(&self, v: &mut V, range: core::ops::Range<usize>) {
        let (lo, hi) = (range.start, range.end);
        let in_body = hi.min(self.body);
        if lo < in_body {
            let mut partial = [0usize; MAX_SOURCES];
            self.range_from(v, 0, (lo, in_body), 0, 0, &mut partial);
        }
        let tail = lo.max(self.body);
        if hi > tail {
            v.padding(tail, hi - tail);
        }
    }

    /// Slots `lo..hi` counted from `off`, the first slot of the value the
    /// steps before `j` stand at (`other` and `partial` theirs).
    fn range_from<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (lo, hi): (usize, usize),
        off: usize,
        other: usize,
        partial: &mut [usize; MAX_SOURCES],
    ) {
        let w = match self.steps[..self.n].get(j) {
            Some(st) if lo > 0 || hi < st.axis.count * st.axis.walk => st.axis.walk,
            // All of the values the steps before stand at (or the innermost
            // `fold` slots, which the ends never cut).
            _ => return self.descend(v, j, off, other, partial, &[]),
        };
        let (first, end) = (lo.div_ceil(w), hi / w);
        if first > end {
            // Both ends inside one value.
            let x = lo / w;
            self.fixed(v, j, x, (lo - x * w, hi - x * w), off, other, partial);
            return;
        }
        if lo % w != 0 {
            let x = lo / w;
            self.fixed(v, j, x, (lo - x * w, w), off, other, partial);
        }
        if end > first {
            self.values(v, j, (first, end), off, other, partial);
        }
        if hi % w != 0 {
            self.fixed(v, j, end, (0, hi - end * w), off, other, partial);
        }
    }

    /// Slots `lo..hi` of value `value` of step `j`.
    #[allow(clippy::too_many_arguments)]
    fn fixed<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        value: usize,
        (lo, hi): (usize, usize),
        off: usize,
        other: usize,
        partial: &mut [usize; MAX_SOURCES],
    ) {
        let st = self.steps[j];
        let off = off + value * st.axis.walk;
        let other = other + value * st.axis.other;
        if st.source == ALWAYS {
            self.range_from(v, j + 1, (lo, hi), off, other, partial);
            return;
        }
        let source = usize::from(st.source);
        let base = partial[source];
        let index = base + value * st.weight;
        if index >= self.bounds[source] {
            // Lower steps only add to the index: all padding.
            v.padding(off + lo, hi - lo);
            return;
        }
        partial[source] = index;
        self.range_from(v, j + 1, (lo, hi), off, other, partial);
        partial[source] = base;
    }

    /// Values `lo..hi` of step `j`, each with all of the steps below: the
    /// steps from `j` on as a walk of their own, step `j` shortened to
    /// those values, so that the steps below keep the blocks and order
    /// [`blocks`](Self::blocks) picks for the whole walk.
    fn values<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (lo, hi): (usize, usize),
        off: usize,
        other: usize,
        partial: &mut [usize; MAX_SOURCES],
    ) {
        let st = self.steps[j];
        let off = off + lo * st.axis.walk;
        let other = other + lo * st.axis.other;
        let mut rest = self.clone();
        rest.steps.copy_within(j..self.n, 0);
        rest.n = self.n - j;
        rest.steps[0].axis.count = hi - lo;
        rest.bookkeeping();
        if st.source == ALWAYS {
            rest.descend(v, 0, off, other, partial, &[]);
            return;
        }
        let source = usize::from(st.source);
        let base = partial[source];
        let index = base + lo * st.weight;
        if index >= self.bounds[source] {
            v.padding(off, (hi - lo) * st.axis.walk);
            return;
        }
        partial[source] = index;
        rest.descend(v, 0, off, other, partial, &[]);
        partial[source] = base;
    }

    /// Runs the walk: every walked slot is reported once, as an element or padding.
    pub(crate) fn run<V: Visitor>(&self, v: &mut V) {
        if self.body > 0 {
            let mut partial = [0usize; MAX_SOURCES];
            self.descend(v, 0, 0, 0, &mut partial, &[]);
        }
        if self.storage_len > self.body {
            v.padding(self.body, self.storage_len - self.body);
        }
    }

    /// Whether no choice of steps `j..` can leave a source's bound.
    #[inline]
    fn clear_from(&self, j: usize, partial: &[usize; MAX_SOURCES]) -> bool {
        (j..self.n).all(|k| {
            let s = self.steps[k].source;
            let first = self.prev[k] == usize::MAX || self.prev[k] < j;
            s == ALWAYS
                || !first
                || partial[usize::from(s)] + self.tail[k] < self.bounds[usize::from(s)]
        })
    }

    /// Visits steps `j..` from slot `off` (`other` on the other side),
    /// for every value of the `carried` axes: values of steps further out
    /// that no bound depends on, or of bounded steps that keep their dims
    /// inside the bounds below, handed down as one axis each rather than a
    /// value at a time, so that the blocks below can be ordered across
    /// them ([`blocks`](Self::blocks)).
    /// A ragged dim further in (a tile's columns past the array's last)
    /// then no longer pins the outer steps to storage order: a
    /// `f32[4079,4113]{0,1:T(2,128)}` pack reads each source line once
    /// instead of once per tile row.
    fn descend<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        off: usize,
        other: usize,
        partial: &mut [usize; MAX_SOURCES],
        carried: &[Axis],
    ) {
        if self.clear_from(j, partial) {
            let all = if j < self.n {
                self.steps[j].axis.count
            } else {
                1
            };
            self.blocks(v, j, off, other, all, carried);
            return;
        }
        let st = self.steps[j];
        let s = usize::from(st.source);
        if s == usize::from(ALWAYS) {
            if j + 2 == self.n && self.steps[j + 1].source != ALWAYS {
                return self.bounded_last_tile(v, j, (off, other), partial, carried);
            }
            let one_block = v.ignores_padding() && self.one_block_below(j);
            if st.axis.count > 1 && (self.far_blocks() || one_block) {
                // No bound depends on this step: all of its values go down
                // as one axis, as a bounded step's inside values do below.
                return self.descend_carrying(v, j, (off, other), partial, carried, st.axis);
            }
            for x in 0..st.axis.count {
                let (off, other) = (off + x * st.axis.walk, other + x * st.axis.other);
                self.descend(v, j + 1, off, other, partial, carried);
            }
            return;
        }
        let base = partial[s];
        if j + 1 == self.n {
            return self.bounded_last_rows(v, j, (off, other), base, carried);
        }
        if j + 2 == self.n && carried.is_empty() && !self.clear_from(j + 1, partial) {
            let s1 = self.steps[j + 1].source;
            if s1 != ALWAYS && usize::from(s1) != s && base < self.bounds[s] {
                return self.bounded_corner(v, j, (off, other), base, partial);
            }
        }
        // Values below `full` keep every later step of this source inside
        // the bound: when the other sources are clear too, they form one
        // padding-free block (a dim padded inside its tile, such as 64 of
        // 128, then copies 64 rows at once instead of one row at a time);
        // otherwise, where the blocks below are ordered for the other side,
        // they go down together, carried. Blocks in storage order stay so:
        // carried, a ragged `f32[4093,4093]{1,0:T(8,128)}`'s last tile of
        // each row went after all the rows' other tiles, and its pack and
        // unpack took 1.27 and 1.13 of the time (`relayout_ab.py`).
        let later = self.tail[j] - (st.axis.count - 1) * st.weight;
        let room = self.bounds[s] - base;
        let full = if room > later {
            (room - later).div_ceil(st.weight).min(st.axis.count)
        } else {
            0
        };
        let first = if full > 0 && self.clear_from(j + 1, partial) {
            let rest = st.axis.count - full;
            let padded = rest > 0 && base + full * st.weight >= self.bounds[s];
            if j + 2 == self.n && padded && carried.is_empty() {
                // One block, then padding: the tile rows of a ragged last
                // tile column, elements and padding in one run. (Blocks
                // of carried values go together below, ordered for the
                // other side: a block a value, the transposed `s4`
                // `(8,1)` tiles took 100 ms against 35.)
                let rows = Axis {
                    count: full,
                    ..st.axis
                };
                let cols = self.steps[j + 1].axis;
                return v.block_then_padding(off, other, rows, cols, st.axis.count);
            }
            self.blocks(v, j, off, other, full, carried);
            full
        } else if full > 1 && self.far_blocks() {
            // The largest of the carried values stands for all of them:
            // every later step of this source stays inside the bound for
            // each, and the other sources do not depend on them.
            partial[s] = base + (full - 1) * st.weight;
            let inside = Axis {
                count: full,
                ..st.axis
            };
            self.descend_carrying(v, j, (off, other), partial, carried, inside);
            full
        } else {
            0
        };
        for x in first..st.axis.count {
            let p = base + x * st.weight;
            let (off, other) = (off + x * st.axis.walk, other + x * st.axis.other);
            if p >= self.bounds[s] {
                // Larger values only go further out: the rest of this step is padding.
                let len = (st.axis.count - x) * st.axis.walk;
                each(carried, off, other, &mut |off, _| v.padding(off, len));
                break;
            }
            partial[s] = p;
            self.descend(v, j + 1, off, other, partial, carried);
        }
        partial[s] = base;
    }

    /// [`descend`](Self::descend) at step `j`, bounded, whose source's
    /// other steps add up to `base`, with only the last step after it,
    /// bounded by another source and cut short: the values of each inside
    /// their bound are a prefix whatever the other's value, so they make
    /// one block, each of its rows followed by its padding, and the rest
    /// of step `j` is padding. A row a block, the last rows of the
    /// `(8,1)` groups of `s4[165,983,413]` (7 of 8 past its 983) went a
    /// column at a time, value by value: pack and unpack took 15 and 16
    /// ms against 11 and 12 with 984 rows.
    fn bounded_corner<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (off, other): (usize, usize),
        base: usize,
        partial: &[usize; MAX_SOURCES],
    ) {
        let (st, last) = (self.steps[j], self.steps[j + 1]);
        let (outer, inner) = (usize::from(st.source), usize::from(last.source));
        let inside = |bound: usize, at: usize, step: Step| {
            bound
                .saturating_sub(at)
                .div_ceil(step.weight)
                .min(step.axis.count)
        };
        let a = Axis {
            count: inside(self.bounds[outer], base, st),
            ..st.axis
        };
        let b = Axis {
            count: inside(self.bounds[inner], partial[inner], last),
            ..last.axis
        };
        if b.count > 0 {
            v.block_padded(off, other, a, b, last.axis.count);
        } else {
            v.padding(off, a.count * st.axis.walk);
        }
        if a.count < st.axis.count {
            let len = (st.axis.count - a.count) * st.axis.walk;
            v.padding(off + a.count * st.axis.walk, len);
        }
    }

    /// [`descend`](Self::descend) from step `j + 1`, with `axis`, values of
    /// step `j`, carried after `carried`.
    fn descend_carrying<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (off, other): (usize, usize),
        partial: &mut [usize; MAX_SOURCES],
        carried: &[Axis],
        axis: Axis,
    ) {
        with_axes(carried.len() + 1, |more| {
            more[..carried.len()].copy_from_slice(carried);
            more[carried.len()] = axis;
            self.descend(v, j + 1, off, other, partial, more);
        });
    }

    /// [`descend`](Self::descend) at step `j`, always inside its bound,
    /// with only the last step, bounded, after it: for each carried value
    /// one block whose rows are cut short, and padding after them.
    fn bounded_last_tile<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (off, other): (usize, usize),
        partial: &[usize; MAX_SOURCES],
        carried: &[Axis],
    ) {
        // The last step's valid values do not depend on step `j`.
        let (st, last) = (self.steps[j], self.steps[j + 1]);
        let s1 = usize::from(last.source);
        let valid = (self.bounds[s1] - partial[s1])
            .div_ceil(last.weight)
            .min(last.axis.count);
        let b = Axis {
            count: valid,
            ..last.axis
        };
        if v.ignores_padding() && !carried.is_empty() {
            // The ragged last tile of each carried value in one call, not
            // a block a value (each unit of the `s8[1,74,207,4349]`
            // unpack's went alone). Visitors that write padding keep
            // `block_padded`, whose line tiles write a tile's elements and
            // padding together: through the blocks, the padding after,
            // the `bf16` 4-D permutation into half-padded tiles took 15 ms
            // against 7.7.
            if far(st.axis, b) {
                return nest_far(v, carried, (off, other), st.axis, b, b.count);
            }
            return nest(v, carried, off, other, st.axis, b, b.count);
        }
        each(carried, off, other, &mut |off, other| {
            v.block_padded(off, other, st.axis, b, last.axis.count);
        });
    }

    /// [`descend`](Self::descend) at the last step, `j`, bounded, whose
    /// source's other steps add up to `base`: its valid values are a
    /// prefix, one row for each carried value, and padding after it.
    fn bounded_last_rows<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        (off, other): (usize, usize),
        base: usize,
        carried: &[Axis],
    ) {
        let st = self.steps[j];
        let valid = (self.bounds[usize::from(st.source)] - base)
            .div_ceil(st.weight)
            .min(st.axis.count);
        let b = Axis {
            count: valid,
            ..st.axis
        };
        let len = (st.axis.count - valid) * st.axis.walk;
        if let Some((&a, outer)) = carried.split_last() {
            if far(a, b) {
                // The carried values' rows as blocks of the last of them,
                // ordered for the other side, each row followed by its
                // padding: a row a value, each unit went alone (the
                // `s8[1,74,207,4349]` pack took 33 ms against 16).
                let b_len = if v.ignores_padding() {
                    valid
                } else {
                    st.axis.count
                };
                return nest_far(v, outer, (off, other), a, b, b_len);
            }
        }
        each(carried, off, other, &mut |off, other| {
            v.block(off, other, UNIT, b);
            if len > 0 {
                v.padding(off + valid * st.axis.walk, len);
            }
        });
    }

    /// Whether steps `j + 1..` hand each value of the steps outside them
    /// one block: of those steps only the innermost two may depend on a
    /// bound, one of them at most. Carried down (for visitors that leave
    /// padding alone), such values then go as one call, in storage order:
    /// the rows of a minor dim narrower than its tile, `bf16[1048576,32]`
    /// in `(8,128)(2,1)` tiles, went to the visitor a pair at a time
    /// (unpack 48 ms), and go as bands of tiles (27 ms; `s8[1048576,64]`
    /// in `(32,128)(4,1)` 21 to 6.8 ms). Where a bounded step further out
    /// loops below them, its loop would run outside the carried values,
    /// out of storage order (`s4[165,983,413]` unpacked in 20 ms against
    /// 13).
    fn one_block_below(&self, j: usize) -> bool {
        let bounded = |k: usize| self.steps[k].source != ALWAYS;
        self.n >= 2
            && (j + 1..self.n - 2).all(|k| !bounded(k))
            && !(bounded(self.n - 2) && bounded(self.n - 1))
    }

    /// Whether the innermost two steps make blocks that reach many far
    /// places of the other side ([`far`]), which [`blocks`](Self::blocks)
    /// orders for the other side.
    fn far_blocks(&self) -> bool {
        self.n >= 2 && far(self.steps[self.n - 2].axis, self.steps[self.n - 1].axis)
    }

    /// Steps `j..` hold only elements: hand them out as 2-D blocks.
    ///
    /// The steps outside the innermost two may run in any order. In storage
    /// order the walked side moves in small steps from block to block; but
    /// when one block reaches many far-apart places of the other side (a
    /// column-major source read into `T(8,128)` tiles touches 128 columns),
    /// the outer steps run with the other side's stride shrinking inwards
    /// instead, so consecutive blocks reuse those places (and their pages)
    /// rather than sweeping all columns once per row of tiles.
    ///
    /// The `carried` axes ([`descend`](Self::descend)) run outside them.
    fn blocks<V: Visitor>(
        &self,
        v: &mut V,
        j: usize,
        off: usize,
        other: usize,
        first: usize,
        carried: &[Axis],
    ) {
        // Step `j` takes values `0..first` only.
        let step = |k: usize| {
            let a = self.steps[k].axis;
            if k == j {
                Axis { count: first, ..a }
            } else {
                a
            }
        };
        match self.n - j {
            0 => each(carried, off, other, &mut |off, other| {
                v.block(off, other, UNIT, UNIT);
            }),
            1 => each(carried, off, other, &mut |off, other| {
                v.block(off, other, UNIT, step(j));
            }),
            2 if carried.is_empty() => v.block(off, other, step(j), step(j + 1)),
            inner => {
                let outer = carried.len() + inner - 2;
                with_axes(outer, |order| {
                    order[..carried.len()].copy_from_slice(carried);
                    for (k, slot) in (j..self.n - 2).zip(&mut order[carried.len()..]) {
                        *slot = step(k);
                    }
                    let (a, b) = (step(self.n - 2), step(self.n - 1));
                    if far(a, b) {
                        nest_far(v, order, (off, other), a, b, b.count);
                    } else {
                        nest(v, order, off, other, a, b, b.count);
                    }
                });
            }
        }
    }
}

/// `f` with `n` axes of scratch (at most [`MAX_STEPS`] + 1), on the stack,
/// from the smallest of a few arrays that holds them: the walk calls it
/// a tile row, and an array of [`MAX_STEPS`] zeroed at every call took a
/// tenth of the samples of the `bf16[48629,690]{1,0:T(4,128)(2,1)}`
/// unpack, whose stores wait behind the streamed rows'.
fn with_axes<R>(n: usize, f: impl FnOnce(&mut [Axis]) -> R) -> R {
    match n {
        0..=4 => f(&mut [UNIT; 4][..n]),
        5..=16 => f(&mut [UNIT; 16][..n]),
        _ => f(&mut [UNIT; MAX_STEPS + 1][..n]),
    }
}

/// Past this many separate runs of the other side per block, blocks are
/// ordered for the other side (measured: 128-column transposes gain, 2- to
/// 8-row interleaves lose).
const FAR_PLACES: usize = 32;

/// Whether a block `a` x `b` reaches more than [`FAR_PLACES`] separate runs
/// of the other side, so that blocks are ordered for it.
fn far(a: Axis, b: Axis) -> bool {
    let places = match (a.other, b.other) {
        (1, _) => b.count,
        (_, 1) => a.count,
        _ => a.count.saturating_mul(b.count),
    };
    places > FAR_PLACES
}

/// Calls `f` at every value of the `axes`, outermost first: each slot and
/// other position they reach from `off` and `other`.
fn each(axes: &[Axis], off: usize, other: usize, f: &mut impl FnMut(usize, usize)) {
    match axes.split_first() {
        None => f(off, other),
        Some((x, rest)) => {
            for k in 0..x.count {
                each(rest, off + k * x.walk, other + k * x.other, f);
            }
        }
    }
}

/// [`nest`] for blocks ordered for the other side: the `outer` steps
/// sorted with the other side's stride shrinking inwards. A block whose
/// rows are many (a column of tiles merged into one step) is cut into
/// groups of at most the visitor's [`spread`](Visitor::spread) rows, each
/// group another outer step, so that the rows' lines stay in cache from one
/// block to the next; a shorter group is left over after them. Rows of
/// `second` padded to `b_len` are never cut across.
fn nest_far<V: Visitor>(
    visitor: &mut V,
    outer: &[Axis],
    (off, other): (usize, usize),
    first: Axis,
    second: Axis,
    b_len: usize,
) {
    let by_stride =
        |order: &mut [Axis]| order.sort_unstable_by_key(|x| core::cmp::Reverse(x.other));
    with_axes(outer.len() + 1, |order| {
        order[..outer.len()].copy_from_slice(outer);
        let padded = b_len > second.count;
        let cut = match (visitor.spread(), first.other, second.other) {
            (Some(cap), far, 1) if far != 1 && first.count > cap => Some((cap, true)),
            (Some(cap), 1, far) if far != 1 && second.count > cap && !padded => Some((cap, false)),
            _ => None,
        };
        let Some((cap, along_first)) = cut else {
            by_stride(&mut order[..outer.len()]);
            let order = &order[..outer.len()];
            return nest(visitor, order, off, other, first, second, b_len);
        };
        let rows = if along_first { first } else { second };
        let groups = Axis {
            count: rows.count / cap,
            walk: rows.walk * cap,
            other: rows.other * cap,
        };
        // The block with `count` of its rows.
        let part = |count: usize| {
            let rows = Axis { count, ..rows };
            if along_first {
                (rows, second)
            } else {
                (first, rows)
            }
        };
        order[outer.len()] = groups;
        by_stride(&mut order[..=outer.len()]);
        // Only rows of `first` are cut where `second`'s rows are padded.
        let len = |b: Axis| if padded { b_len } else { b.count };
        let (a, b) = part(cap);
        nest(visitor, &order[..=outer.len()], off, other, a, b, len(b));
        let rest = rows.count % cap;
        if rest > 0 {
            order[..outer.len()].copy_from_slice(outer);
            by_stride(&mut order[..outer.len()]);
            let (a, b) = part(rest);
            let at = (
                off + groups.count * groups.walk,
                other + groups.count * groups.other,
            );
            nest(visitor, &order[..outer.len()], at.0, at.1, a, b, len(b));
        }
    });
}

/// Nested loops over `outer`, outermost first, each visiting block `a` x
/// `b`, each row along `b` followed by padding up to `b_len` values of it
/// (none where `b_len` is `b.count`).
fn nest<V: Visitor>(
    v: &mut V,
    outer: &[Axis],
    off: usize,
    other: usize,
    a: Axis,
    b: Axis,
    b_len: usize,
) {
    let padded = b_len > b.count;
    match outer.split_first() {
        None if padded => v.block_padded(off, other, a, b, b_len),
        None => v.block(off, other, a, b),
        Some((x, [])) if padded => v.block3_padded(off, other, *x, a, b, b_len),
        Some((x, [])) => v.block3(off, other, *x, a, b),
        Some((band, [x])) if !padded => v.block4(off, other, *band, *x, a, b),
        Some((x, rest)) => {
            for k in 0..x.count {
                nest(v, rest, off + k * x.walk, other + k * x.other, a, b, b_len);
            }
        }
    }
}
