//! Iterators over storage order and over logical order, without allocation.

use super::digits::{Digits, ALWAYS, MAX_SOURCES, MAX_STEPS};
use super::route::{Route, Side};
use super::walk::Walk;
use crate::{InverseProgram, Layout, MAX_RANK, MAX_TILED_RANK};

/// Every storage slot in memory order: `Some(p)` for the element at row-major
/// logical position `p`, `None` for padding. Made by [`Layout::slots`].
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let slots: Vec<Option<usize>> = l.slots().collect();
/// assert_eq!(slots.len(), 24);
/// assert_eq!(&slots[..4], &[Some(0), Some(1), Some(5), Some(6)]);
/// assert_eq!(slots[9], None); // padding
/// ```
#[derive(Clone, Debug)]
pub struct Slots {
    inner: SlotsInner,
    next: usize,
    storage_len: usize,
}

// No allocator: the walk lives inline in the iterator.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum SlotsInner {
    Walk {
        walk: Walk,
        values: [usize; MAX_STEPS],
        position: usize,
        partial: [usize; MAX_SOURCES],
        /// Sources currently at or past their bound.
        outside: usize,
    },
    Programs {
        layout: Layout,
        /// Folded once when the layout has no compact code.
        inverse: Option<InverseProgram>,
    },
}

impl Slots {
    pub(crate) fn new(layout: &Layout) -> Slots {
        let side = Side::Layout(layout);
        let inner = match Route::over(&side, &Side::RowMajor(layout.dims())) {
            Route::Walk(walk) => SlotsInner::Walk {
                walk,
                values: [0; MAX_STEPS],
                position: 0,
                partial: [0; MAX_SOURCES],
                outside: 0,
            },
            Route::Slots => SlotsInner::Programs {
                layout: layout.clone(),
                inverse: layout.folded_inverse(),
            },
        };
        Slots {
            inner,
            next: 0,
            storage_len: layout.storage_len(),
        }
    }
}

impl Iterator for Slots {
    type Item = Option<usize>;

    fn next(&mut self) -> Option<Option<usize>> {
        if self.next >= self.storage_len {
            return None;
        }
        let k = self.next;
        self.next += 1;
        match &mut self.inner {
            SlotsInner::Walk {
                walk,
                values,
                position,
                partial,
                outside,
            } => {
                if k >= walk.body {
                    return Some(None);
                }
                let item = (*outside == 0).then_some(*position);
                for j in (0..walk.n).rev() {
                    let st = walk.steps[j];
                    values[j] += 1;
                    *position += st.axis.other;
                    move_source(walk, partial, outside, st.source, st.weight, 0);
                    if values[j] < st.axis.count {
                        break;
                    }
                    *position -= st.axis.count * st.axis.other;
                    move_source(
                        walk,
                        partial,
                        outside,
                        st.source,
                        0,
                        st.axis.count * st.weight,
                    );
                    values[j] = 0;
                }
                Some(item)
            }
            SlotsInner::Programs { layout, inverse } => {
                let mut index = [0; MAX_RANK];
                let found = layout.index_into_folded(inverse.as_ref(), k, &mut index);
                let flat = index[..layout.rank()]
                    .iter()
                    .zip(layout.dims())
                    .fold(0, |acc, (&i, &d)| acc * d + i);
                Some(found.then_some(flat))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.storage_len - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Slots {}

/// Adds `add` to and takes `sub` from a source's index, keeping count of
/// the sources out of bounds.
fn move_source(
    walk: &Walk,
    partial: &mut [usize; MAX_SOURCES],
    outside: &mut usize,
    s: u8,
    add: usize,
    sub: usize,
) {
    if s == ALWAYS {
        return;
    }
    let (p, bound) = (&mut partial[usize::from(s)], walk.bounds[usize::from(s)]);
    let was = *p >= bound;
    *p = *p + add - sub;
    *outside = *outside + usize::from(*p >= bound) - usize::from(was);
}
impl core::iter::FusedIterator for Slots {}

/// The storage offset of every element, in row-major logical order. Made by
/// [`Layout::offsets`].
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let offsets: Vec<usize> = l.offsets().collect();
/// assert_eq!(offsets, [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20]);
/// ```
#[derive(Clone, Debug)]
pub struct Offsets {
    inner: OffsetsInner,
    remaining: usize,
}

#[derive(Clone, Copy, Debug)]
struct Link {
    count: usize,
    stride: usize,
}

#[derive(Clone, Copy, Debug)]
struct Chain {
    first: usize,
    len: usize,
    bound: usize,
}

// No allocator: the digits live inline in the iterator.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum OffsetsInner {
    /// Each logical index (or run of merged dims) as its digits, least
    /// significant first; counted like an odometer.
    Digits {
        links: [Link; MAX_TILED_RANK],
        values: [usize; MAX_TILED_RANK],
        chains: [Chain; MAX_SOURCES],
        n_chains: usize,
        index: [usize; MAX_SOURCES],
        offset: usize,
    },
    Programs {
        layout: Layout,
        index: [usize; MAX_RANK],
    },
}

impl Offsets {
    pub(crate) fn new(layout: &Layout) -> Offsets {
        let inner = if let Some(d) = Digits::of(layout) {
            Self::digits(&d)
        } else {
            OffsetsInner::Programs {
                layout: layout.clone(),
                index: [0; MAX_RANK],
            }
        };
        Offsets {
            inner,
            remaining: layout.len(),
        }
    }

    fn digits(d: &Digits) -> OffsetsInner {
        let mut order = [0usize; MAX_SOURCES];
        let mut n = 0;
        for s in 1..d.n_sources {
            if d.stored[..d.n].iter().any(|g| usize::from(g.source) == s) {
                order[n] = s;
                n += 1;
            }
        }
        order[..n].sort_unstable_by_key(|&s| d.sources[s].lo);
        let mut links = [Link {
            count: 1,
            stride: 0,
        }; MAX_TILED_RANK];
        let mut chains = [Chain {
            first: 0,
            len: 0,
            bound: 1,
        }; MAX_SOURCES];
        let mut used = 0;
        for (c, &s) in order[..n].iter().enumerate() {
            let first = used;
            // Digits of one source have distinct weights; sort ascending.
            let mut mine = [(
                0usize,
                Link {
                    count: 1,
                    stride: 0,
                },
            ); MAX_TILED_RANK];
            let mut m = 0;
            for g in d.stored[..d.n]
                .iter()
                .filter(|g| usize::from(g.source) == s)
            {
                mine[m] = (
                    g.weight,
                    Link {
                        count: g.count,
                        stride: g.stride,
                    },
                );
                m += 1;
            }
            mine[..m].sort_unstable_by_key(|&(w, _)| w);
            for (k, &(_, link)) in mine[..m].iter().enumerate() {
                links[first + k] = link;
            }
            used += m;
            chains[c] = Chain {
                first,
                len: m,
                bound: d.sources[s].bound,
            };
        }
        OffsetsInner::Digits {
            links,
            values: [0; MAX_TILED_RANK],
            chains,
            n_chains: n,
            index: [0; MAX_SOURCES],
            offset: 0,
        }
    }
}

impl Iterator for Offsets {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match &mut self.inner {
            OffsetsInner::Digits {
                links,
                values,
                chains,
                n_chains,
                index,
                offset,
            } => {
                let item = *offset;
                'carry: for c in (0..*n_chains).rev() {
                    let ch = chains[c];
                    index[c] += 1;
                    if index[c] < ch.bound {
                        for l in ch.first..ch.first + ch.len {
                            values[l] += 1;
                            *offset += links[l].stride;
                            if values[l] < links[l].count {
                                break 'carry;
                            }
                            *offset -= links[l].count * links[l].stride;
                            values[l] = 0;
                        }
                        break;
                    }
                    for l in ch.first..ch.first + ch.len {
                        *offset -= values[l] * links[l].stride;
                        values[l] = 0;
                    }
                    index[c] = 0;
                }
                Some(item)
            }
            OffsetsInner::Programs { layout, index } => {
                let rank = layout.rank();
                let item = layout.offset(&index[..rank]);
                for d in (0..rank).rev() {
                    index[d] += 1;
                    if index[d] < layout.dims()[d] {
                        break;
                    }
                    index[d] = 0;
                }
                Some(item)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Offsets {}
impl core::iter::FusedIterator for Offsets {}

impl Offsets {
    /// The next run of elements that lie side by side in storage, in logical
    /// order: `(offset, len)` for elements at `offset..offset + len`. One
    /// odometer step per run, not per element.
    pub(crate) fn next_run(&mut self) -> Option<(usize, usize)> {
        if self.remaining == 0 {
            return None;
        }
        let len = match &mut self.inner {
            OffsetsInner::Digits {
                links,
                values,
                chains,
                n_chains,
                index,
                offset,
            } if *n_chains > 0 => {
                let c = *n_chains - 1;
                let ch = chains[c];
                let l = ch.first;
                if ch.len == 0 || links[l].stride != 1 {
                    1
                } else {
                    // Inside the innermost digit, and inside the dim's bound.
                    let len = (links[l].count - values[l])
                        .min(ch.bound - index[c])
                        .min(self.remaining);
                    // All but the last step never carry.
                    values[l] += len - 1;
                    index[c] += len - 1;
                    *offset += len - 1;
                    self.remaining -= len - 1;
                    len
                }
            }
            _ => 1,
        };
        let last = self.next()?;
        Some((last + 1 - len, len))
    }
}
