//! A layout's element map as terms of the row-major position `L`.
//!
//! Tiling splits and merges the digits of each logical index, so an
//! element's slot is a sum of terms `floor(e_d / div) mod b * stride`, one
//! per digit of a dim `d` that survives into the tiled shape ([`Atom`]s,
//! carried through the tile step, [`Tiled::step`]). With
//! `e_d = floor(L / P_d) mod D_d` (`P_d` the product of the dims after `d`),
//! each digit of a dim whose top digit divides it is a digit of `L` itself,
//! `floor(L / A) mod B * S`. A dim whose tile does not divide it (ragged)
//! keeps its digits together in a [`Block`](Kind::Block): its top digit
//! reaches only the values below the dim, so it is no digit of `L`.
//!
//! [`Form::new`] writes both kinds in order of `L`'s digits and normalises
//! them: size-1 digits dropped; a block's lowest digit split at
//! `g = gcd(its modulus, the dim)` while `g > 1` (`e mod g` with `g` dividing
//! the dim is a digit of `L`, and what is left is a block of `D / g`); a
//! block left with its top digit alone is a plain digit; and adjacent
//! digits merged when `S_outer == B_inner * S_inner` (they are then one
//! digit, `floor(L/A) mod (B_inner * B_outer) * S_inner`).
//!
//! Two normalised lists of plain digits are the same function on `0..N`
//! exactly when they are equal: if they first differ at digit boundary `A`
//! (below it both are the same terms, and every `L < A` has no other digit),
//! either their strides differ, and so do the maps at `L = A`, or one digit
//! ends first, at `A * B`, where the other still counts with the same
//! stride, `B * S`, while the first's next digit has another stride, as it
//! was not merged. [`Form::first_difference`] finds that position from the
//! terms, within a block's digits too (below the block's end they are
//! plain digits). Equal terms are the same map whatever they hold, so the
//! verdict never rests on the normal form being unique; where a ragged dim
//! meets a different split, the walk goes on position by position from
//! where the maps are known to agree, and the brute-force tests
//! (`normal_forms_decide_equality` below, `tests/bitcast.rs`) check that
//! the first difference lies right there.

use super::gcd;
use crate::algebra::tiling::{Carry, Dim, Tiled};
use crate::{MAX_RANK, MAX_TILE_RANK, MAX_TILING_LEVELS};

/// Digits a layout can have: one per dim, and at most one more per split.
pub(crate) const MAX_ATOMS: usize = MAX_RANK + MAX_TILING_LEVELS * MAX_TILE_RANK;

/// `floor(e_dim / div) mod modulus` (no modulus for a dim's top digit),
/// `weight` in the value of the dim of the shape being tiled that holds
/// it, and in the end the digit's storage stride.
#[derive(Clone, Copy, Debug)]
struct Atom {
    dim: usize,
    div: usize,
    /// 0 for the top digit of its dim, which counts up to the dim's size.
    modulus: usize,
    /// The values the digit takes: `modulus`, or `ceil(D / div)` at the top.
    reach: usize,
    weight: usize,
}

const NO_ATOM: Atom = Atom {
    dim: 0,
    div: 1,
    modulus: 1,
    reach: 1,
    weight: 0,
};

/// The atoms a dim of the shape being tiled holds: bit `i` for atom `i`.
#[derive(Clone, Copy, Debug, Default)]
struct Members([u64; MAX_ATOMS.div_ceil(64)]);

impl Members {
    fn one(i: usize) -> Self {
        let mut m = Members::default();
        m.add(i);
        m
    }

    fn add(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn iter(self) -> impl Iterator<Item = usize> {
        (0..MAX_ATOMS).filter(move |&i| self.0[i / 64] >> (i % 64) & 1 == 1)
    }

    fn union(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        self
    }
}

/// The atoms of a layout through the tile step: each dim of the shape
/// holds a sum of weighted digits, which `*` scales and sums and a split
/// cuts where a digit of its dim ends.
struct Sums<'a> {
    dims: &'a [usize],
    atoms: [Atom; MAX_ATOMS],
    n: usize,
}

impl Sums<'_> {
    /// A new atom, in a dim of its own.
    fn push(&mut self, atom: Atom) -> Option<Members> {
        *self.atoms.get_mut(self.n)? = atom;
        self.n += 1;
        Some(Members::one(self.n - 1))
    }
}

/// The digits of a layout with their storage strides, or `None` for a
/// layout whose tiles cut a digit where no digit of its dim ends (a tile
/// that splits `e mod 4` by 3, or a `*` that mixes two dims' digits before
/// a split that is not on their boundary): such a map is no sum of digits.
fn atoms(
    dims: &[usize],
    m2m: &[usize],
    tiles: &[crate::Tile],
) -> Option<([Atom; MAX_ATOMS], usize)> {
    let mut carry = Sums {
        dims,
        atoms: [NO_ATOM; MAX_ATOMS],
        n: 0,
    };
    let mut shape = Tiled::physical(dims, m2m, Members::default(), |d| {
        let size = *dims.get(d).ok_or(())?;
        // A size-1 dim's digit is always 0: it adds no term.
        if size == 1 {
            return Ok(Members::default());
        }
        carry
            .push(Atom {
                dim: d,
                div: 1,
                modulus: 0,
                reach: size,
                weight: 1,
            })
            .ok_or(())
    })
    .ok()?;
    for tile in tiles {
        shape.step(tile, &mut carry).ok()?;
    }
    // Row-major strides of the final shape turn weights into strides.
    let mut stride = 1usize;
    for d in shape.dims().iter().rev() {
        for i in d.value.iter() {
            let a = &mut carry.atoms[i];
            a.weight = a.weight.checked_mul(stride)?;
        }
        stride = stride.saturating_mul(d.extent);
    }
    Some((carry.atoms, carry.n))
}

impl Carry for Sums<'_> {
    type Value = Members;
    type Error = ();

    fn prepended(&mut self) -> Members {
        Members::default()
    }

    /// `*`: the two dims read as one row-major value.
    fn combine(&mut self, major: Dim<Members>, minor: Dim<Members>) -> Result<Members, ()> {
        for i in major.value.iter() {
            let a = &mut self.atoms[i];
            a.weight = a.weight.checked_mul(minor.extent).ok_or(())?;
        }
        Ok(major.value.union(minor.value))
    }

    /// Splits the value made of the dim's atoms by `t`: the quotient's
    /// digits go to the outer dim, the remainder's to the inner. A digit
    /// that straddles `t` is cut in two when that cut is a digit boundary
    /// of its dim; otherwise the map is no sum of digits.
    fn split(&mut self, dim: Dim<Members>, t: usize) -> Result<(Members, Members), ()> {
        let mut members = [0usize; MAX_ATOMS];
        let mut m = 0;
        for i in dim.value.iter() {
            members[m] = i;
            m += 1;
        }
        let members = &mut members[..m];
        members.sort_unstable_by_key(|&i| self.atoms[i].weight);
        let (mut outer, mut inner) = (Members::default(), Members::default());
        // The largest value the digits below the cut reach.
        let mut low_max = 0usize;
        let mut cut = members.len();
        for (k, &i) in members.iter().enumerate() {
            let a = self.atoms[i];
            if a.weight >= t {
                cut = k;
                break;
            }
            let top = (a.reach - 1)
                .checked_mul(a.weight)
                .and_then(|x| low_max.checked_add(x))
                .ok_or(())?;
            if top < t {
                low_max = top;
                continue;
            }
            // `a` straddles `t`: `a = hi * s + lo` with `lo * weight` below `t`.
            if t % a.weight != 0 || low_max >= a.weight {
                return Err(());
            }
            let s = t / a.weight;
            if a.modulus != 0 && a.modulus % s != 0 {
                return Err(());
            }
            let div = a.div.checked_mul(s).ok_or(())?;
            let (modulus, reach) = if a.modulus == 0 {
                (0, self.dims[a.dim].div_ceil(div))
            } else {
                (a.modulus / s, a.modulus / s)
            };
            if reach > 1 {
                let high = Atom {
                    dim: a.dim,
                    div,
                    modulus,
                    reach,
                    weight: 1,
                };
                outer = self.push(high).ok_or(())?;
            }
            self.atoms[i] = Atom {
                modulus: s,
                reach: s,
                ..a
            };
            cut = k + 1;
            break;
        }
        for &i in &members[..cut] {
            inner.add(i);
        }
        for &i in &members[cut..] {
            let a = &mut self.atoms[i];
            if a.weight % t != 0 {
                return Err(());
            }
            a.weight /= t;
            outer.add(i);
        }
        Ok((outer, inner))
    }
}

/// One digit of a block: `floor(e / div) mod modulus * stride` (no modulus
/// at the top) of the block's `e`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    div: usize,
    modulus: usize,
    stride: usize,
}

const NO_PART: Part = Part {
    div: 1,
    modulus: 1,
    stride: 0,
};

impl Part {
    fn eval(&self, e: usize) -> usize {
        let q = e / self.div;
        let q = if self.modulus == 0 {
            q
        } else {
            q % self.modulus
        };
        q.wrapping_mul(self.stride)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `floor(L / start) mod extent * stride`.
    Digit { stride: usize },
    /// A ragged dim's digits: `e = floor(L / start) mod extent`, and its
    /// terms are `parts[first..first + count]`.
    Block { first: usize, count: usize },
}

/// One term of the map, over `L`'s digits `start .. start * extent`.
#[derive(Clone, Copy, Debug)]
struct Item {
    start: usize,
    extent: usize,
    kind: Kind,
}

/// A layout's element map as normalised terms of the row-major position.
pub(crate) struct Form {
    items: [Item; MAX_ATOMS],
    n: usize,
    parts: [Part; MAX_ATOMS],
    n_parts: usize,
    len: usize,
}

/// Where two maps first differ, or that they do not.
pub(crate) enum Compared {
    Same,
    /// The first row-major position whose slots differ.
    Differ(usize),
    /// The terms differ, but not where they first part: the periods decide
    /// (`period.rs`).
    Unknown,
}

impl Form {
    /// The map of `dims` laid out by `m2m` and `tiles`, or `None` when it
    /// is no sum of digits (see [`atoms`]). `dims` holds no 0.
    pub(crate) fn new(dims: &[usize], m2m: &[usize], tiles: &[crate::Tile]) -> Option<Form> {
        let (atoms, n) = atoms(dims, m2m, tiles)?;
        let mut f = Form {
            items: [Item {
                start: 1,
                extent: 1,
                kind: Kind::Digit { stride: 0 },
            }; MAX_ATOMS],
            n: 0,
            parts: [NO_PART; MAX_ATOMS],
            n_parts: 0,
            len: 1,
        };
        let mut after = 1usize;
        for d in (0..dims.len()).rev() {
            f.add_dim(dims[d], after, &atoms[..n], d)?;
            after = after.checked_mul(dims[d])?;
        }
        f.len = after;
        f.items[..f.n].sort_unstable_by_key(|i| i.start);
        f.merge_digits();
        Some(f)
    }

    fn push(&mut self, item: Item) -> Option<()> {
        *self.items.get_mut(self.n)? = item;
        self.n += 1;
        Some(())
    }

    /// The terms of dim `d` (size `size`, `after` positions per step).
    fn add_dim(&mut self, size: usize, after: usize, atoms: &[Atom], d: usize) -> Option<()> {
        let first = self.n_parts;
        let mut ragged = false;
        for a in atoms.iter().filter(|a| a.dim == d && a.reach > 1) {
            ragged |= a.modulus == 0 && size % a.div != 0;
            *self.parts.get_mut(self.n_parts)? = Part {
                div: a.div,
                modulus: a.modulus,
                stride: a.weight,
            };
            self.n_parts += 1;
        }
        let parts = &mut self.parts[first..self.n_parts];
        parts.sort_unstable_by_key(|p| p.div);
        if !ragged {
            let count = self.n_parts - first;
            self.n_parts = first;
            for i in 0..count {
                let p = self.parts[first + i];
                let extent = if p.modulus == 0 {
                    size / p.div
                } else {
                    p.modulus
                };
                self.push(Item {
                    start: after.checked_mul(p.div)?,
                    extent,
                    kind: Kind::Digit { stride: p.stride },
                })?;
            }
            return Some(());
        }
        let count = merge_parts(parts);
        self.n_parts = first + count;
        self.add_block(after, size, first, count)
    }

    /// A ragged dim's block, its lowest digits split off as plain digits
    /// while they divide what is left of the dim: `e mod g` with `g` dividing
    /// both the digit's modulus and the dim is a digit of `L`.
    fn add_block(
        &mut self,
        mut start: usize,
        mut size: usize,
        mut first: usize,
        mut count: usize,
    ) -> Option<()> {
        loop {
            let low = self.parts[first];
            if low.modulus == 0 {
                // Only the top digit is left: the block is linear.
                debug_assert!(count == 1 && low.div == 1);
                return self.push(Item {
                    start,
                    extent: size,
                    kind: Kind::Digit { stride: low.stride },
                });
            }
            let g = gcd(low.modulus, size);
            if g == 1 {
                return self.push(Item {
                    start,
                    extent: size,
                    kind: Kind::Block { first, count },
                });
            }
            self.push(Item {
                start,
                extent: g,
                kind: Kind::Digit { stride: low.stride },
            })?;
            start = start.checked_mul(g)?;
            size /= g;
            for p in &mut self.parts[first + 1..first + count] {
                p.div /= g;
            }
            if low.modulus == g {
                first += 1;
                count -= 1;
            } else {
                self.parts[first] = Part {
                    div: 1,
                    modulus: low.modulus / g,
                    stride: low.stride.checked_mul(g)?,
                };
            }
        }
    }

    /// Merges adjacent plain digits that are one digit.
    fn merge_digits(&mut self) {
        let mut out = 0;
        for i in 0..self.n {
            let item = self.items[i];
            if out > 0 {
                let prev = &mut self.items[out - 1];
                if let (Kind::Digit { stride: s0 }, Kind::Digit { stride: s1 }) =
                    (prev.kind, item.kind)
                {
                    if prev.start.checked_mul(prev.extent) == Some(item.start)
                        && s0.checked_mul(prev.extent) == Some(s1)
                    {
                        prev.extent *= item.extent;
                        continue;
                    }
                }
            }
            self.items[out] = item;
            out += 1;
        }
        self.n = out;
    }

    fn block(&self, first: usize, count: usize) -> &[Part] {
        &self.parts[first..first + count]
    }

    fn same_item(&self, mine: &Item, other: &Form, theirs: &Item) -> bool {
        mine.start == theirs.start
            && mine.extent == theirs.extent
            && match (mine.kind, theirs.kind) {
                (Kind::Digit { stride: x }, Kind::Digit { stride: y }) => x == y,
                (
                    Kind::Block { first, count },
                    Kind::Block {
                        first: at,
                        count: len,
                    },
                ) => self.block(first, count) == other.block(at, len),
                _ => false,
            }
    }

    /// The slot of the element at row-major position `l`.
    pub(crate) fn slot(&self, l: usize) -> usize {
        self.items[..self.n].iter().fold(0usize, |acc, item| {
            let e = (l / item.start) % item.extent;
            acc.wrapping_add(match item.kind {
                Kind::Digit { stride } => e.wrapping_mul(stride),
                Kind::Block { first, count } => self
                    .block(first, count)
                    .iter()
                    .fold(0usize, |s, p| s.wrapping_add(p.eval(e))),
            })
        })
    }

    /// The item's digits as block parts, lowest first.
    fn chain(&self, item: &Item) -> Chain<'_> {
        match item.kind {
            Kind::Digit { stride } => Chain::One(Part {
                div: 1,
                modulus: 0,
                stride,
            }),
            Kind::Block { first, count } => Chain::Parts(self.block(first, count)),
        }
    }

    /// Where `self` and `other`, maps of the same number of elements, first
    /// differ.
    pub(crate) fn first_difference(&self, other: &Form) -> Compared {
        let shared = self.n.min(other.n);
        let same = (0..shared)
            .take_while(|&i| self.same_item(&self.items[i], other, &other.items[i]))
            .count();
        let (mine, theirs) = (
            self.items[..self.n].get(same),
            other.items[..other.n].get(same),
        );
        // Below `start` both maps are the same terms; above it each is a
        // function of `h = floor(L / start)` alone, so the first difference
        // is at `start * h` for the least `h` where those functions differ.
        let (start, from) = match (mine, theirs) {
            (None, None) => return Compared::Same,
            (Some(x), Some(y)) => {
                let below = x.extent.min(y.extent);
                match first_chain_difference(self.chain(x).parts(), other.chain(y).parts()) {
                    Some(step) if step < below => (x.start, step),
                    _ => (x.start, below),
                }
            }
            // Both cover every digit of `L`, so this is never reached; the
            // check below still answers exactly, or leaves it to the periods.
            (Some(x), None) | (None, Some(x)) => (x.start, 1),
        };
        // The terms agree below `start * from`: there, unless the slots
        // happen to agree (a ragged dim's block meeting another split can
        // spell the same values differently), is the first difference.
        let steps = self.len.div_ceil(start);
        if from >= steps {
            return Compared::Same;
        }
        let position = start * from;
        if self.slot(position) == other.slot(position) {
            Compared::Unknown
        } else {
            Compared::Differ(position)
        }
    }
}

/// A plain digit seen as a one-part chain, or a block's parts.
enum Chain<'a> {
    One(Part),
    Parts(&'a [Part]),
}

impl Chain<'_> {
    fn parts(&self) -> &[Part] {
        match self {
            Chain::One(p) => core::slice::from_ref(p),
            Chain::Parts(p) => p,
        }
    }
}

/// Within two merged chains of digits of one value `e` (unbounded at their
/// tops), the least `e` where they differ: at the first digit boundary where
/// they part, that boundary if the strides differ, else where the shorter
/// digit ends (its next digit's stride is not the merged one).
fn first_chain_difference(a: &[Part], b: &[Part]) -> Option<usize> {
    for (x, y) in a.iter().zip(b) {
        if x == y {
            continue;
        }
        if x.stride != y.stride {
            return Some(x.div);
        }
        let end = |p: &Part| (p.modulus != 0).then(|| p.div.saturating_mul(p.modulus));
        return match (end(x), end(y)) {
            (Some(e), Some(f)) => Some(e.min(f)),
            (Some(e), None) | (None, Some(e)) => Some(e),
            (None, None) => None,
        };
    }
    None
}

/// Merges adjacent parts of one chain that are one digit; returns how many
/// are left. Parts of a dim's chain are contiguous: each starts where the
/// one below ends.
fn merge_parts(parts: &mut [Part]) -> usize {
    let mut out = 0;
    for i in 0..parts.len() {
        let p = parts[i];
        if out > 0 {
            let prev = &mut parts[out - 1];
            if prev.modulus != 0
                && prev.div.checked_mul(prev.modulus) == Some(p.div)
                && prev.stride.checked_mul(prev.modulus) == Some(p.stride)
            {
                prev.modulus = if p.modulus == 0 {
                    0
                } else {
                    prev.modulus * p.modulus
                };
                continue;
            }
        }
        parts[out] = p;
        out += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::period::Side;
    use super::{Compared, Form};
    use crate::eval::layout::advance;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    /// Small layouts of every kind of tiling: dividing, ragged, nested,
    /// `*`, tiles past the rank.
    fn layouts() -> Vec<crate::Layout> {
        let tiles = [
            "",
            "T(2)",
            "T(4)",
            "T(3)",
            "T(2,2)",
            "T(2,4)(2,1)",
            "T(4,2)(2,1)",
            "T(3,2)",
            "T(*,4)",
            "T(*,3)",
            "T(2,1,1)",
            "T(4)(2)",
            "T(3)(2)",
            "T(8)(4)(2)",
            "T(2,3)(3)",
            "T(1,4)",
        ];
        let dims: &[&[usize]] = &[
            &[6][..],
            &[5],
            &[4, 3],
            &[3, 4],
            &[2, 6],
            &[5, 2],
            &[2, 3, 4],
            &[3, 1, 5],
            &[4, 2, 2],
        ];
        super::super::testing::small_layouts(dims, &tiles)
    }

    fn form(l: &crate::Layout) -> Option<Form> {
        Form::new(l.dims(), l.minor_to_major(), l.tiles())
    }

    #[test]
    fn terms_give_every_offset() {
        let (mut with, mut without) = (0, Vec::<String>::new());
        for l in layouts() {
            let Some(f) = form(&l) else {
                without.push(format!("{l}"));
                continue;
            };
            with += 1;
            let mut index = [0usize; crate::MAX_RANK];
            let index = &mut index[..l.rank()];
            for position in 0..l.len() {
                assert_eq!(f.slot(position), l.offset(index), "{l} at {index:?}");
                advance(index, l.dims());
            }
        }
        // Only tiles that cut a digit off its dim's boundaries leave the form.
        assert!(
            without.len() * 8 < with,
            "{with} with terms; without: {without:?}"
        );
    }

    /// Two normal forms are the same function exactly when they are equal
    /// (checked on every pair of layouts of the same dims), and the first
    /// difference found is the first by brute force.
    #[test]
    fn normal_forms_decide_equality() {
        let all = layouts();
        let (mut same, mut pairs) = (0, 0);
        for a in &all {
            for b in all.iter().filter(|b| b.dims() == a.dims()) {
                let (Some(fa), Some(fb)) = (form(a), form(b)) else {
                    continue;
                };
                pairs += 1;
                let first = (0..a.len()).find(|&l| fa.slot(l) != fb.slot(l));
                let equal_forms = fa.n == fb.n
                    && (0..fa.n).all(|i| fa.same_item(&fa.items[i], &fb, &fb.items[i]));
                assert_eq!(equal_forms, first.is_none(), "{a} and {b}");
                match fa.first_difference(&fb) {
                    Compared::Same => assert_eq!(first, None, "{a} and {b}"),
                    Compared::Differ(l) => assert_eq!(first, Some(l), "{a} and {b}"),
                    Compared::Unknown => {
                        let side = |l: &crate::Layout| {
                            (
                                l.dims().to_vec(),
                                l.minor_to_major().to_vec(),
                                l.tiles().to_vec(),
                            )
                        };
                        let ((da, ma, ta), (db, mb, tb)) = (side(a), side(b));
                        let got = super::super::period::first_difference(
                            &Side::new(&da, &ma, &ta),
                            &Side::new(&db, &mb, &tb),
                            a.len(),
                        );
                        assert_eq!(got, first, "{a} and {b}: by periods");
                    }
                }
                same += usize::from(first.is_none());
            }
        }
        assert!(same > 100 && pairs > 2000, "{same} of {pairs}");
    }
}
