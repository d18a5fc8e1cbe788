//! Any pair of maps compared from their periods: the atom, a tile-sized box
//! of positions evaluated whole, and one step past it along each coordinate.
//!
//! Where the tiles cut a dim's digits off its boundaries (`T(3,4)(2,3)`
//! splits `e mod 4` by 3) or a `*` mixes two dims' digits before a split,
//! the map is no sum of digits (`terms.rs`), but it still repeats. Stepping
//! dim `d` by its period `M_d` moves the value of one place of the tiled
//! shape at every level, and by a multiple of the tile that splits it (see
//! [`period`]), so every remainder keeps its value and every quotient
//! moves by the same amount, whatever the index: the slot moves by a
//! constant `S_d`. Hence, with `q_d = floor(e_d / M_d)` and
//! `r_d = e_d mod M_d`, every layout is
//!
//! ```text
//! slot(e) = sum_d q_d * S_d + atom(r)
//! ```
//!
//! regular terms above the periods, and an atom over the box
//! `r < (M_0, M_1, ...)`, whose side is the product of the tile dims that
//! split the dim (`T(3,4)(2,3)`: 3 by 4), never one of the array's dims.
//!
//! Two maps of the same row-major positions `L` (a reshape's two sides have
//! different dims) are read on a chain of coordinates
//! `u_i = floor(L / c_i) mod (c_{i+1} / c_i)` whose bounds `c_i` sit on both
//! sides' dim boundaries, splitting a dim only where the pieces are its
//! digits ([`Side::fits`]). Stepping `u_i` by `m_i` (the least common
//! multiple of both sides' steps for it, [`Side::steps`]) moves one dim of
//! each side by a multiple of its period, and nothing else, as long as that
//! dim does not wrap: within a *cell*, the values of `u_i` between two
//! wraps (the whole coordinate when each side steps the top dim it
//! reaches). So the difference of the maps is
//!
//! ```text
//! diff(u) = sum_i floor((u_i - z_i) / m_i) * g_i + diff(rep(u))
//! ```
//!
//! where `z_i` starts the cell of `u_i`, `rep(u)` takes each `u_i` to
//! `z_i + (u_i - z_i) mod m_i`, and `g_i` is the constant a step adds. The
//! box is the set of such representatives: in each cell, its first `m_i`
//! values. The first `L` where the maps differ is therefore exactly the
//! smaller of the first point of the box (in row-major order, which is the
//! order of `L`) where they differ, and the least `(z_i + m_i) * c_i` (the
//! first cell longer than `m_i`) where they differ: below both, every
//! point's representative lies at or before it, so `diff` is the sum of
//! the `g_i` terms, and one of those is nonzero only at or past such a
//! point. The comparison reads values, not the terms' spelling, so two maps
//! that are the same function always compare equal, whatever their tiles;
//! nothing needs a normal form.
//!
//! The work is the box, `prod_i` of the values it takes along `u_i`, and
//! one more point per coordinate; each coordinate takes the dims to step
//! that give the fewest. Where both sides' dims refine one another (the
//! same dims, splits and merges, size-1 dims, transposes), one cell spans
//! each coordinate and `m_i` divides a period of each side: the box is at
//! most the product over both sides' dims of `M_d`, squared where a
//! coordinate straddles `P_d * M_d`, which is tile-sized. Where a reshape's
//! dims cross (`[4, 6]` read as `[6, 4]`: one side's boundary inside the
//! other's dim at a place that divides neither), the coordinate spanning
//! the crossing steps each side by a dim it reaches, within the cells
//! between that dim's wraps. Dims that wrap as one ([`Side::merges`]: the
//! untiled major dims of most layouts, in row-major order) make one cell,
//! so `[3001, 4001, 7, 10]` read as `[4001, 3001, 7, 10]` over a
//! `T(3,4)(2,3)` costs what the tile does. Only crossing dims that are
//! themselves tiled off their boundaries, or laid out apart, leave many
//! cells: `[3001, 4001]` read as `[4001, 3001]`, both `T(3,4)(2,3)`, is
//! about 7000 cells of 4 points, a number that grows with the crossing
//! dims' rows (never with their elements, nor with the other dims).

use super::gcd;
use crate::algebra::fold::offset_of;
use crate::algebra::tiling::{Carry, Dim, Tiled};
use crate::{Tile, MAX_RANK};

/// A laid-out shape, read on its dims, with each dim's period.
pub(crate) struct Side<'a> {
    dims: &'a [usize],
    m2m: &'a [usize],
    tiles: &'a [Tile],
    /// `P_d`: the row-major positions per step of dim `d`.
    after: [usize; MAX_RANK],
    /// `M_d`, or `None` when no step inside the dim keeps every split whole
    /// (or the numbers overflow): then the box spans the dim.
    period: [Option<usize>; MAX_RANK],
    /// `S_d`: the slot of the element `M_d` along dim `d`, and what each
    /// step of `M_d` adds.
    delta: [usize; MAX_RANK],
}

impl<'a> Side<'a> {
    /// `dims` holds no 0 and its product fits a `usize`.
    pub(crate) fn new(dims: &'a [usize], m2m: &'a [usize], tiles: &'a [Tile]) -> Self {
        let mut side = Side {
            dims,
            m2m,
            tiles,
            after: [1; MAX_RANK],
            period: [None; MAX_RANK],
            delta: [0; MAX_RANK],
        };
        let mut after = 1usize;
        for d in (0..dims.len()).rev() {
            side.after[d] = after;
            side.period[d] = period(dims, m2m, tiles, d);
            if let Some(m) = side.period[d] {
                let mut index = [0usize; MAX_RANK];
                index[d] = m;
                side.delta[d] = offset_of(dims, m2m, tiles, &index[..dims.len()]);
            }
            after = after.saturating_mul(dims[d]);
        }
        side
    }

    /// The slot of row-major position `l`.
    fn slot(&self, l: usize) -> usize {
        let mut index = [0usize; MAX_RANK];
        let mut rest = l;
        for d in (0..self.dims.len()).rev() {
            index[d] = rest % self.dims[d];
            rest /= self.dims[d];
        }
        offset_of(self.dims, self.m2m, self.tiles, &index[..self.dims.len()])
    }

    /// The dims that take more than one value: `(P_d, D_d, M_d)`.
    fn spans(&self) -> impl Iterator<Item = (usize, usize, Option<usize>)> + '_ {
        (0..self.dims.len())
            .filter(|&d| self.dims[d] > 1)
            .map(|d| (self.after[d], self.dims[d], self.period[d]))
    }

    /// Whether a coordinate may start at `c` (below `n`): at a boundary of
    /// this side's dims, or inside a dim at a multiple of its step that
    /// divides the dim's whole span, so that the coordinates on either side
    /// are digits of that dim.
    fn fits(&self, c: usize, n: usize) -> bool {
        if c >= n {
            return c == n;
        }
        self.spans()
            .find(|&(p, size, _)| p <= c && c < p * size)
            .is_some_and(|(p, size, _)| c % p == 0 && (p * size) % c == 0)
    }

    /// The steps of the coordinate over `c .. hi` that move this side by a
    /// constant, one per dim `j` it reaches and run of dims from `j` up
    /// that wrap as one ([`Side::merges`]), each with the width of the
    /// cells it holds in (the coordinate's values between two wraps of the
    /// run's top dim; the whole coordinate past its end). Stepping by a
    /// multiple of `M_j * P_j / c` leaves the dims below `j` as they are and
    /// moves `j` by a multiple of `M_j`. The step is `None` when `j` has no
    /// period.
    fn steps(&self, c: usize, hi: usize) -> Steps<'_> {
        // The dims that take more than one value, from the minor end.
        let mut up = [0usize; MAX_RANK];
        let mut n = 0;
        for d in (0..self.dims.len()).rev().filter(|&d| self.dims[d] > 1) {
            up[n] = d;
            n += 1;
        }
        Steps {
            side: self,
            c,
            hi,
            up,
            n,
            j: 0,
            k: None,
        }
    }

    /// Whether stepping dim `d` by its period across a wrap into the next
    /// dim `e` moves the slot as a step inside `d` does: `M_d` divides
    /// `D_d`, a step of `e` is one value (`M_e = 1`), and moves the slot by
    /// `D_d / M_d` of `d`'s steps. A run of such dims is one digit of
    /// `d`'s steps.
    fn merges(&self, d: usize, e: usize) -> bool {
        match (self.period[d], self.period[e]) {
            (Some(m), Some(1)) if self.dims[d] % m == 0 => {
                (self.dims[d] / m).checked_mul(self.delta[d]) == Some(self.delta[e])
            }
            _ => false,
        }
    }
}

/// The steps of [`Side::steps`]: for each dim `j` the coordinate reaches,
/// the runs from `j` up.
struct Steps<'a> {
    side: &'a Side<'a>,
    c: usize,
    hi: usize,
    up: [usize; MAX_RANK],
    n: usize,
    j: usize,
    /// The top of the run last given, and `j`'s step.
    k: Option<(usize, Option<usize>)>,
}

impl Iterator for Steps<'_> {
    type Item = (Option<usize>, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let (side, dims_up) = (self.side, &self.up);
        // Grow the last run by one dim if it wraps as one with the next.
        if let Some((k, step)) = self.k {
            let end = side.after[dims_up[k]] * side.dims[dims_up[k]];
            if end < self.hi && k + 1 < self.n && side.merges(dims_up[k], dims_up[k + 1]) {
                let top = side.after[dims_up[k + 1]] * side.dims[dims_up[k + 1]];
                self.k = Some((k + 1, step));
                return Some((step, top.min(self.hi) / self.c));
            }
            self.j += 1;
        }
        while self.j < self.n {
            let (p, extent) = (side.after[dims_up[self.j]], side.dims[dims_up[self.j]]);
            if p < self.hi && self.c < p * extent {
                let step = side.period[dims_up[self.j]]
                    .and_then(|m| m.checked_mul(p))
                    .map(|whole| whole / gcd(whole, self.c));
                self.k = Some((self.j, step));
                return Some((step, (p * extent).min(self.hi) / self.c));
            }
            self.j += 1;
        }
        None
    }
}

/// The least step of dim `d` that moves every place of the tiled shape by a
/// multiple of the tile that splits it, or `None` if it is the dim or more.
///
/// A step of `M` moves only the place holding `d`, by `delta`. In a tile's
/// group that place weighs `w` (the places after it that `*` joins to it),
/// so the group's value moves by `delta * w`; for its remainder to stay and
/// its quotient to move by a whole number, the tile `t` must divide that,
/// so the step grows by `t / gcd(t, delta * w)` and the quotient's place
/// moves by `delta * w / t`. Places outside the tile keep their moves.
fn period(dims: &[usize], m2m: &[usize], tiles: &[Tile], d: usize) -> Option<usize> {
    m2m.iter().position(|&x| x == d)?;
    let mut carry = Period {
        size: dims[d],
        m: 1,
    };
    let holds = |x| Ok::<_, ()>((x == d).then_some(1));
    let mut shape = Tiled::physical(dims, m2m, None, holds).ok()?;
    for tile in tiles {
        shape.step(tile, &mut carry).ok()?;
    }
    Some(carry.m)
}

/// The step of one dim through the tile step: `m` so far, and in each dim
/// of the shape how far a step of `m` moves its value (`None`: not at all).
struct Period {
    size: usize,
    m: usize,
}

impl Carry for Period {
    type Value = Option<usize>;
    type Error = ();

    fn prepended(&mut self) -> Option<usize> {
        None
    }

    /// The major dim's move weighs the minor's extent in the joined value.
    fn combine(
        &mut self,
        major: Dim<Option<usize>>,
        minor: Dim<Option<usize>>,
    ) -> Result<Option<usize>, ()> {
        match major.value {
            Some(delta) => Ok(Some(delta.checked_mul(minor.extent).ok_or(())?)),
            None => Ok(minor.value),
        }
    }

    fn split(
        &mut self,
        dim: Dim<Option<usize>>,
        t: usize,
    ) -> Result<(Option<usize>, Option<usize>), ()> {
        let Some(shift) = dim.value else {
            return Ok((None, None));
        };
        let grow = t / gcd(t, shift);
        self.m = self.m.checked_mul(grow).ok_or(())?;
        if self.m >= self.size {
            return Err(());
        }
        let delta = shift.checked_mul(grow).ok_or(())? / t;
        Ok((Some(delta), None))
    }
}

/// Candidates for the coordinates' bounds: both sides' dim boundaries and
/// period boundaries, and their common divisors across the sides.
const MAX_BOUNDS: usize = 6 * MAX_RANK + MAX_RANK * MAX_RANK + 1;

/// The first row-major position below `n` (both sides' element count, at
/// least 1) where the slots of `a` and `b` differ, or `None`.
// Names follow the module docs' formulas.
#[allow(clippy::many_single_char_names)]
pub(crate) fn first_difference(a: &Side<'_>, b: &Side<'_>, n: usize) -> Option<usize> {
    let mut cands = [0usize; MAX_BOUNDS];
    let mut k = 0;
    for side in [a, b] {
        for (p, size, period) in side.spans() {
            let whole = period.and_then(|m| m.checked_mul(p)).unwrap_or(n);
            for c in [p, p * size, whole] {
                cands[k] = c;
                k += 1;
            }
        }
    }
    for (p, _, _) in a.spans() {
        for (q, _, _) in b.spans() {
            cands[k] = gcd(p, q);
            k += 1;
        }
    }
    cands[k] = n;
    k += 1;
    let cands = &mut cands[..k];
    cands.sort_unstable();
    // The chain: each bound a multiple of the one before, fitting both.
    let mut chain = [1usize; MAX_BOUNDS + 1];
    let mut len = 1;
    for &c in cands.iter() {
        let last = chain[len - 1];
        if c > last && c <= n && c % last == 0 && a.fits(c, n) && b.fits(c, n) {
            chain[len] = c;
            len += 1;
        }
    }
    debug_assert_eq!(chain[len - 1], n);
    // Each coordinate's step `m_i` and the widths of both sides' cells,
    // chosen for the fewest points: `None` when the box spans it.
    let coords = len - 1;
    let mut axes = [Axis::WHOLE; MAX_BOUNDS];
    for (i, axis) in axes.iter_mut().enumerate().take(coords) {
        let (c, hi) = (chain[i], chain[i + 1]);
        let size = hi / c;
        *axis = Axis {
            size,
            ..Axis::WHOLE
        };
        let mut best = size;
        for (x, wa) in a.steps(c, hi) {
            for (y, wb) in b.steps(c, hi) {
                let (Some(x), Some(y)) = (x, y) else {
                    continue;
                };
                let Some(m) = (x / gcd(x, y)).checked_mul(y) else {
                    continue;
                };
                let cells = 1 + (size - 1) / wa + (size - 1) / wb;
                let points = cells.saturating_mul(m.saturating_add(1));
                if m < size && points < best {
                    best = points;
                    *axis = Axis {
                        size,
                        step: Some(m),
                        widths: (wa, wb),
                    };
                }
            }
        }
    }
    // The box in row-major order, which is the order of `L`: the lowest
    // coordinate steps fastest.
    let mut first = None;
    let mut u = [0usize; MAX_BOUNDS];
    let mut l = 0usize;
    'scan: loop {
        if a.slot(l) != b.slot(l) {
            first = Some(l);
            break;
        }
        let mut i = 0;
        loop {
            if i == coords {
                break 'scan;
            }
            l -= u[i] * chain[i];
            if let Some(v) = axes[i].next(u[i]) {
                u[i] = v;
                l += v * chain[i];
                break;
            }
            u[i] = 0;
            i += 1;
        }
    }
    // One step past the box along each coordinate, in the first cell that
    // holds one.
    for (i, axis) in axes.iter().enumerate().take(coords) {
        if let Some(v) = axis.past() {
            let l = v * chain[i];
            if first.is_none_or(|f| l < f) && a.slot(l) != b.slot(l) {
                first = Some(l);
            }
        }
    }
    first
}

/// How the box runs along one coordinate: all of its `size` values, or in
/// each cell (between two wraps of either side's stepped dim, at multiples
/// of its width) the first `step` values.
#[derive(Clone, Copy)]
struct Axis {
    size: usize,
    step: Option<usize>,
    widths: (usize, usize),
}

impl Axis {
    const WHOLE: Axis = Axis {
        size: 1,
        step: None,
        widths: (1, 1),
    };

    /// The cell holding `v`: its start and end.
    fn cell(&self, v: usize) -> (usize, usize) {
        let (wa, wb) = self.widths;
        let start = (v / wa * wa).max(v / wb * wb);
        let end = ((v / wa + 1).saturating_mul(wa))
            .min((v / wb + 1).saturating_mul(wb))
            .min(self.size);
        (start, end)
    }

    /// The box's next value after `v` along this coordinate.
    fn next(&self, v: usize) -> Option<usize> {
        let Some(step) = self.step else {
            return (v + 1 < self.size).then_some(v + 1);
        };
        let (start, end) = self.cell(v);
        if v + 1 < end.min(start + step) {
            Some(v + 1)
        } else {
            (end < self.size).then_some(end)
        }
    }

    /// The least value a step past a box value: `start + step` in the first
    /// cell longer than the step.
    fn past(&self) -> Option<usize> {
        let step = self.step?;
        let mut start = 0;
        while start < self.size {
            let (_, end) = self.cell(start);
            if end - start > step {
                return Some(start + step);
            }
            start = end;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::{first_difference, Side};
    use crate::eval::layout::advance;
    use std::format;
    use std::vec::Vec;

    /// Layouts of 12 and 24 elements under every kind of tiling, the
    /// irregular ones above all: splits that cut a remainder off its
    /// boundaries, `*` before a split, ragged dims, tiles past the rank.
    fn layouts() -> Vec<crate::Layout> {
        let tiles = [
            "",
            "T(2)",
            "T(5)",
            "T(3,4)(2,3)",
            "T(2,3)(3,2)",
            "T(4)(3)",
            "T(6)(4)",
            "T(3)(2)",
            "T(*,5)",
            "T(*,4)(3)",
            "T(*,3)(2,1)",
            "T(2,*,3)",
            "T(4,3)(3,2)",
            "T(5,2)(2,3)",
            "T(2,2)(3)",
            "T(3,3,2)(2,2)",
        ];
        let dims: &[&[usize]] = &[
            &[12][..],
            &[3, 4],
            &[4, 3],
            &[2, 6],
            &[6, 2],
            &[2, 2, 3],
            &[3, 2, 2],
            &[1, 12, 1],
            &[24],
            &[4, 6],
            &[6, 4],
            &[2, 3, 4],
            &[4, 3, 2],
            &[8, 3],
        ];
        super::super::testing::small_layouts(dims, &tiles)
    }

    fn side(l: &crate::Layout) -> Side<'_> {
        Side::new(l.dims(), l.minor_to_major(), l.tiles())
    }

    fn offsets(l: &crate::Layout) -> Vec<usize> {
        let mut index = [0usize; crate::MAX_RANK];
        let index = &mut index[..l.rank()];
        (0..l.len())
            .map(|_| {
                let o = l.offset(index);
                advance(index, l.dims());
                o
            })
            .collect()
    }

    /// Every pair of the same element count, reshapes whose dims cross
    /// included: the first difference by periods is the first by brute
    /// force.
    #[test]
    fn periods_find_the_first_difference() {
        let all = layouts();
        let slots: Vec<Vec<usize>> = all.iter().map(offsets).collect();
        let (mut pairs, mut same) = (0, 0);
        for (a, sa) in all.iter().zip(&slots) {
            for (b, sb) in all.iter().zip(&slots).filter(|(b, _)| b.len() == a.len()) {
                let want = (0..a.len()).find(|&l| sa[l] != sb[l]);
                let got = first_difference(&side(a), &side(b), a.len());
                assert_eq!(got, want, "{a} and {b}");
                pairs += 1;
                same += usize::from(want.is_none());
            }
        }
        assert!(pairs > 50_000 && same > 1000, "{same} of {pairs}");
    }

    /// Reshapes whose dims cross, on dims large enough that the cells
    /// matter (a side's lower dim stepped within its rows): the first
    /// difference by periods is the first by brute force.
    #[test]
    fn crossing_reshapes() {
        let tiles = ["", "T(3,4)(2,3)", "T(4)(3)", "T(*,4)(3)", "T(2,3)(3,2)"];
        let dims: [&[usize]; 6] = [
            &[2, 600],
            &[600, 2],
            &[30, 40],
            &[40, 30],
            &[8, 150],
            &[3, 400],
        ];
        let mut all = Vec::new();
        for d in dims {
            for m2m in ["1,0", "0,1"] {
                for t in tiles {
                    let sep = if t.is_empty() { "" } else { ":" };
                    let spec = format!("f32[{},{}]{{{m2m}{sep}{t}}}", d[0], d[1]);
                    all.push(crate::parse(&spec).unwrap());
                }
            }
        }
        let slots: Vec<Vec<usize>> = all.iter().map(offsets).collect();
        let mut same = 0;
        for (a, sa) in all.iter().zip(&slots) {
            for (b, sb) in all.iter().zip(&slots) {
                let want = (0..a.len()).find(|&l| sa[l] != sb[l]);
                assert_eq!(
                    first_difference(&side(a), &side(b), a.len()),
                    want,
                    "{a} and {b}"
                );
                same += usize::from(want.is_none());
            }
        }
        assert!(same > all.len(), "{same}");
    }

    /// The periods of a few tilings, each the product of the tile dims on
    /// its dim's chain, and none past the dim.
    #[test]
    fn periods_of_tilings() {
        let cases: [(&str, &[Option<usize>]); 6] = [
            ("f32[3000,4000]{1,0:T(3,4)(2,3)}", &[Some(3), Some(4)]),
            ("f32[3000,4000]{1,0}", &[Some(1), Some(1)]),
            ("bf16[64,256]{1,0:T(8,128)(2,1)}", &[Some(8), Some(128)]),
            // The quotient of 2 split again by 4: a step of 8.
            ("f32[64]{0:T(2)(4,1)}", &[Some(8)]),
            // `*`: the row weighs 6 in the group, so 2 rows make whole tiles
            // of 4; a column steps by a tile.
            ("f32[10,6]{1,0:T(*,4)}", &[Some(2), Some(4)]),
            // A tile as large as the dim: no step inside it.
            ("f32[3,6]{1,0:T(3,8)}", &[None, None]),
        ];
        for (spec, want) in cases {
            let l = crate::parse(spec).unwrap();
            assert_eq!(&side(&l).period[..l.rank()], want, "{spec}");
        }
    }
}
