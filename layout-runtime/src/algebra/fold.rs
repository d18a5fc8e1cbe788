//! Folding tiles into index programs (SPEC.md §4).
//!
//! The shape is stepped level by level by [`Tiled::step`], each dim of
//! the shape carrying a symbolic value built from the inputs; algebraic rules
//! that hold for every in-range input remove what a person would not write
//! (`x / 128` of a value below 128, `(x / t) * t*s + (x % t) * s`, ...).
//!
//! Both programs of a layout with [`digits`](super::digits()) are built
//! from the digits, by the same rules, so that the programs `layout!` and
//! the C export print are read off the one description of the tiled
//! shape; such a layout is never stepped with symbolic values. The
//! symbolic values serve the layouts without digits.

use core::convert::Infallible;

use crate::algebra::simplify::{Builder, TOO_LARGE};
use crate::algebra::tiling::{product, Carry, Dim, Extents, Level, Refusal, Tiled};
use crate::algebra::{digits, Digit, Digits};
use crate::eval::program::{
    Check, InverseProgram, OffsetProgram, Op, Program, StepId, Term, Value,
};
use crate::fixed::Fixed;
use crate::spec::error::ErrorKind;
use crate::{Tile, MAX_CHECKS, MAX_PROGRAM_STEPS, MAX_RANK, MAX_TILED_RANK};

/// Extents of a shape, most major first: what
/// [`Layout::tiled_shape`](crate::Layout::tiled_shape) returns.
///
/// # Examples
///
/// ```
/// // `f32[3,5]` in 2x2 tiles: 2 x 3 tiles of 2 x 2 slots.
/// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let tiled = l.tiled_shape(1).unwrap();
/// assert_eq!(tiled.dims(), &[2, 3, 2, 2]);
/// assert_eq!(tiled.product(), Some(l.storage_len()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: Fixed<usize, MAX_TILED_RANK>,
}

impl Shape {
    pub(crate) const EMPTY: Shape = Shape {
        dims: Fixed::new(0),
    };

    /// The extents, most major first.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.tiled_shape(1).unwrap().dims(), &[2, 3, 2, 2]);
    /// ```
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The number of slots: the product of the extents (1 for no dims, 0 if
    /// any is 0), `None` if it exceeds `usize`.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    /// assert_eq!(l.tiled_shape(1).unwrap().product(), Some(24));
    /// ```
    pub fn product(&self) -> Option<usize> {
        product(self.dims())
    }

    /// Appends a dim; callers check [`MAX_TILED_RANK`] first.
    pub(crate) fn push(&mut self, d: usize) {
        let pushed = self.dims.push(d);
        debug_assert!(pushed.is_some(), "shape rank checked by the caller");
    }
}

/// The folded programs' values: a dim carries its symbolic value.
impl Carry for Builder {
    type Value = Value;
    type Error = ErrorKind;
    fn prepended(&mut self) -> Value {
        None
    }
    fn combine(&mut self, major: Dim<Value>, minor: Dim<Value>) -> Result<Value, ErrorKind> {
        let scaled = self.mul(major.value, minor.extent)?;
        self.add(scaled, minor.value)
    }
    fn split(&mut self, dim: Dim<Value>, t: usize) -> Result<(Value, Value), ErrorKind> {
        Ok((self.div(dim.value, t)?, self.rem(dim.value, t)?))
    }
}

/// The error of a refused step at tiling level `level` (1-based).
fn refused(level: usize) -> impl Fn(Refusal<ErrorKind>) -> ErrorKind {
    move |r| match r {
        Refusal::Rank => ErrorKind::TiledRankTooLarge {
            level,
            limit: MAX_TILED_RANK,
        },
        Refusal::Overflow => ErrorKind::StorageOverflow { unit: "slots" },
        Refusal::Carried(e) => e,
    }
}

/// The extents of `tiled`.
fn extents<V: Copy>(tiled: &Tiled<V>) -> Shape {
    let mut shape = Shape::EMPTY;
    for d in tiled.dims() {
        shape.push(d.extent);
    }
    shape
}

/// The shape after the first `levels` tiles.
pub(crate) fn shape_after(
    dims: &[usize],
    m2m: &[usize],
    tiles: &[Tile],
) -> Result<Shape, ErrorKind> {
    let Ok(mut shape) = Tiled::physical(dims, m2m, (), |_| Ok::<(), Infallible>(()));
    for (i, t) in tiles.iter().enumerate() {
        shape.step(t, &mut Extents).map_err(|r| match r {
            Refusal::Rank => refused(i + 1)(Refusal::Rank),
            Refusal::Overflow => refused(i + 1)(Refusal::Overflow),
            Refusal::Carried(never) => match never {},
        })?;
    }
    Ok(extents(&shape))
}

/// Concrete values: a dim carries its index, wrapping where an index
/// outside the dims would overflow.
struct Concrete;

impl Carry for Concrete {
    type Value = usize;
    type Error = Infallible;
    #[inline]
    fn prepended(&mut self) -> usize {
        0
    }
    #[inline]
    fn combine(&mut self, major: Dim<usize>, minor: Dim<usize>) -> Result<usize, Infallible> {
        Ok(major
            .value
            .wrapping_mul(minor.extent)
            .wrapping_add(minor.value))
    }
    #[inline]
    fn split(&mut self, dim: Dim<usize>, t: usize) -> Result<(usize, usize), Infallible> {
        // Validation rules out a tile extent of 0.
        Ok((dim.value / t, dim.value % t))
    }
}

/// The storage offset of `index`, the shape stepped level by level by
/// [`Tiled::step`] with each dim carrying its index, for layouts whose
/// programs are too long to keep.
///
/// Equal to the folded offset program for every index inside the dims of
/// a validated description, some value but never a panic for any other
/// index. It writes only its own arrays: once inlined, its only calls are
/// the compiler's copies of them (`memset`, `memcpy`, and `memmove` where a
/// tile prepends dims) and bounds panics that a validated description
/// never reaches, so a caller's loop around `Layout::offset` keeps
/// loop-invariant reads out of the loop.
#[inline]
pub(crate) fn offset_of(dims: &[usize], m2m: &[usize], tiles: &[Tile], index: &[usize]) -> usize {
    let mut shape = Tiled::new(0);
    let Ok(()) = shape.set_physical(dims, m2m, |d| {
        Ok::<usize, Infallible>(index.get(d).copied().unwrap_or(0))
    });
    for tile in tiles {
        // A validated description is never refused; any value will do.
        if shape.step(tile, &mut Concrete).is_err() {
            return 0;
        }
    }
    let (mut offset, mut stride) = (0usize, 1usize);
    for d in shape.dims().iter().rev() {
        offset = offset.wrapping_add(d.value.wrapping_mul(stride));
        stride = stride.wrapping_mul(d.extent);
    }
    offset
}

/// Everything folding derives from a validated description.
pub(crate) struct Folded {
    pub(crate) offset: OffsetProgram,
    pub(crate) inverse: InverseProgram,
    pub(crate) storage_len: usize,
    /// The digits, where the layout has them: the description both
    /// programs were compiled from, handed on so that no caller derives
    /// them again. As wide as the tiled shape, so that every layout with
    /// digits gets its programs from them; the evaluators a layout keeps
    /// hold fewer ([`MAX_DIGITS`](super::MAX_DIGITS)) and take them
    /// [`narrowed`](Digits::narrowed).
    pub(crate) digits: Option<Digits<MAX_TILED_RANK>>,
}

/// Folds a layout. Inputs are valid (checked by `validate`), except that
/// sizes may overflow and limits may be exceeded: those are the errors here.
///
/// A layout with digits gets both programs from them, and its shape is
/// never stepped with symbolic values: that its digits exist says the
/// shape steps within every limit and its slots fit `usize`. A layout
/// without, or whose digits' programs exceed the limits, is folded
/// symbolically, and refused with the errors of that fold.
pub(crate) fn fold(
    dims: &[usize],
    m2m: &[usize],
    tiles: &[Tile],
    tail_alignment: usize,
) -> Result<Folded, ErrorKind> {
    let digits = digits::<MAX_TILED_RANK>(dims, m2m, tiles).ok();
    let mut offset = None;
    if let Some(d) = &digits {
        let storage_len = aligned(d.slots, tail_alignment)?;
        offset = digits_offset(d, dims, m2m).ok();
        if let (Some(offset), Ok(inverse)) = (offset, digits_inverse(d, dims, storage_len)) {
            return Ok(Folded {
                offset,
                inverse,
                storage_len,
                digits,
            });
        }
    }
    let symbolic = fold_symbolic(dims, m2m, tiles, tail_alignment, offset.as_ref())?;
    Ok(Folded { digits, ..symbolic })
}

/// `slots` rounded up to a multiple of `L(n)`'s `tail_alignment`.
fn aligned(slots: usize, tail_alignment: usize) -> Result<usize, ErrorKind> {
    slots
        .div_ceil(tail_alignment)
        .checked_mul(tail_alignment)
        .ok_or(ErrorKind::StorageOverflow { unit: "slots" })
}

/// [`fold`] by symbolic values stepped through every tile: the offset
/// program of their terms unless `offset` is given (the digits' own),
/// the inverse by undoing the levels one by one.
fn fold_symbolic(
    dims: &[usize],
    m2m: &[usize],
    tiles: &[Tile],
    tail_alignment: usize,
    offset: Option<&OffsetProgram>,
) -> Result<Folded, ErrorKind> {
    let overflow = ErrorKind::StorageOverflow { unit: "slots" };
    let mut fwd = Builder::new();
    let mut stepped = Tiled::physical(dims, m2m, None, |d| fwd.input(d, dims[d]))?;
    let mut levels = [None; crate::MAX_TILING_LEVELS];
    for (i, tile) in tiles.iter().enumerate() {
        levels[i] = Some(stepped.step(tile, &mut fwd).map_err(refused(i + 1))?);
    }
    let shape = extents(&stepped);
    let mut values: [Value; MAX_TILED_RANK] = [None; MAX_TILED_RANK];
    for (v, d) in values.iter_mut().zip(stepped.dims()) {
        *v = d.value;
    }

    let n = shape.dims().len();
    let slots = shape.product().ok_or(overflow)?;
    // Strides of an empty array may exceed `usize`; no index ever uses them.
    let mut strides = [0usize; MAX_TILED_RANK];
    let mut acc = 1usize;
    for j in (0..n).rev() {
        strides[j] = acc;
        acc = acc.saturating_mul(shape.dims()[j]);
    }
    let storage_len = aligned(slots, tail_alignment)?;
    let offset = match offset {
        Some(p) => *p,
        None => offset_program(fwd, &values[..n], &strides[..n]),
    };
    let inverse = inverse_program(
        m2m,
        &shape,
        &strides[..n],
        &levels[..tiles.len()],
        storage_len,
    )?;
    Ok(Folded {
        offset,
        inverse,
        storage_len,
        digits: None,
    })
}

/// The offset program of a layout's digits: `Σ ((x / place) % radix) *
/// stride`, each `x` the row-major index of the digit's dims, built by the
/// same rules as the folded values, so a quotient that is always 0 or a
/// remainder that is always its argument goes. An error (terms past
/// [`MAX_TILED_RANK`], steps past [`MAX_PROGRAM_STEPS`]) leaves the layout
/// to the folded values' program.
pub(crate) fn digits_offset<const N: usize>(
    d: &Digits<N>,
    dims: &[usize],
    m2m: &[usize],
) -> Result<OffsetProgram, ErrorKind> {
    let mut b = Builder::new();
    // The inputs first, most major first, as the folded program reads
    // them: generated code orders its sums by the steps.
    for &k in m2m.iter().rev() {
        b.input(k, dims[k])?;
    }
    let mut values: Fixed<Value, N> = Fixed::new(None);
    let mut strides: Fixed<usize, N> = Fixed::new(0);
    let list = merged(d);
    let whole = |g: &Digit| {
        g.place == 1 && (g.radix == 0 || g.size(dims).is_some_and(|size| g.radix >= size))
    };
    // Each digit's value, a coordinate's all at once, most significant
    // first: a tile takes a quotient and its remainder together, and
    // generated code orders its work by the steps.
    let mut value: Fixed<Option<Value>, N> = Fixed::filled(list.len(), None);
    for (i, g) in list.iter().enumerate() {
        if whole(g) {
            // A whole coordinate: its dims' terms, each at its own stride.
            let mut stride = g.stride;
            for k in (g.dim..=g.last).rev() {
                let v = b.input(k, dims[k])?;
                values.push(v).ok_or(TOO_LARGE)?;
                strides.push(stride).ok_or(TOO_LARGE)?;
                stride = stride.checked_mul(dims[k]).ok_or(TOO_LARGE)?;
            }
            continue;
        }
        if value[i].is_none() {
            for (j, h) in list.iter().enumerate().skip(i) {
                if (h.dim, h.last) == (g.dim, g.last) && !whole(h) {
                    value[j] = Some(digit_value(&mut b, h, &list, dims)?);
                }
            }
        }
        values.push(value[i].flatten()).ok_or(TOO_LARGE)?;
        strides.push(g.stride).ok_or(TOO_LARGE)?;
    }
    Ok(offset_program(b, &values, &strides))
}

/// The digits that take more than one value, two digits of one coordinate
/// that are adjacent in it and in storage, with no padding between, made
/// one: `((x / 2) % 3) * 2 + x % 2` is `(x % 6) * 1`, which the rules
/// then see whole.
fn merged<const N: usize>(d: &Digits<N>) -> Fixed<Digit, N> {
    let mut list: Fixed<Digit, N> = Fixed::new(d.list.slots()[0]);
    for g in d.list.iter().filter(|g| g.radix != 1) {
        list.append(*g);
    }
    while let Some((i, j, one)) = adjacent(&list) {
        list[i] = one;
        let n = list.len();
        list.copy_within(j + 1..n, j);
        list.truncate(n - 1);
    }
    list
}

/// The inverse program of a layout's digits, for offsets below
/// `storage_len`: each digit's value `(o / stride) % extent` (the most
/// major's without the remainder, which the rules drop), the values of a
/// coordinate summed at their places, most significant first (`(v2 * r1 +
/// v1) * r0 + v0`, so that the rules see a quotient beside its remainder),
/// and a coordinate of a run of dims that `*` merged split back into them
/// row-major. Built by the same rules as the inverse of the folded values,
/// with its padding checks: an offset past the tiled shape but inside the
/// `L(n)` rounding, a digit at or past its radix (a tile past its dim, a
/// dim that a tile prepended), a coordinate at or past its dims' size. An
/// error (steps past [`MAX_PROGRAM_STEPS`], places that do not divide)
/// leaves the layout to the folded values' inverse.
fn digits_inverse<const N: usize>(
    d: &Digits<N>,
    dims: &[usize],
    storage_len: usize,
) -> Result<InverseProgram, ErrorKind> {
    let mut b = Builder::new();
    let mut checks = Checks(Fixed::new(Check { step: 0, bound: 0 }));
    // Offsets past the tiled shape but inside `L(n)` rounding are padding;
    // below the tiled shape, the most major digit is below its extent.
    let off = if storage_len > d.slots {
        let step = b.push(Op::Input(0), d.slots)?;
        if let Some(step) = step {
            checks.push(step, d.slots)?;
        }
        step
    } else {
        b.input(0, d.slots)?
    };
    // Adjacent digits of one coordinate read as one, as in the offset:
    // `(o / 6) % 4 * 3 + (o / 2) % 3` is `(o / 2) % 12`.
    let list = merged(d);
    let value = |b: &mut Builder, g: &Digit| {
        let q = b.div(off, g.stride)?;
        b.rem(q, g.extent)
    };
    // A digit that is always 0 is padding wherever it is not; such digits
    // adjacent in storage are one, checked once.
    let mut zeros = d.list.iter().filter(|g| g.radix == 1).peekable();
    while let Some(&g) = zeros.next() {
        let mut zero = g;
        while let Some(h) = zeros.next_if(|h| h.stride.checked_mul(h.extent) == Some(zero.stride)) {
            zero = Digit {
                extent: zero.extent.checked_mul(h.extent).ok_or(TOO_LARGE)?,
                ..*h
            };
        }
        let v = value(&mut b, &zero)?;
        checks.require(&b, v, 1)?;
    }
    let mut values: Fixed<Value, N> = Fixed::new(None);
    for g in list.iter() {
        let v = value(&mut b, g)?;
        if g.reaches_padding() {
            checks.require(&b, v, g.radix)?;
        }
        values.append(v);
    }
    let mut outputs: Fixed<Value, MAX_RANK> = Fixed::filled(dims.len(), None);
    let mut ragged: Fixed<(Value, usize, u128), MAX_RANK> = Fixed::new((None, 0, 0));
    let mut done = 0u32;
    for (i, g) in list.iter().enumerate() {
        if done & (1 << g.dim) != 0 {
            continue;
        }
        done |= 1 << g.dim;
        // The coordinate's digits, most significant first.
        let mut order: Fixed<usize, N> = Fixed::new(0);
        for (j, h) in list.iter().enumerate().skip(i) {
            if (h.dim, h.last) == (g.dim, g.last) {
                order.append(j);
            }
        }
        order.sort_unstable_by(|&a, &c| list[c].place.cmp(&list[a].place));
        // A sum of the digits at their places, not Horner's rule: the same
        // operations, but the terms are independent, where Horner's chain
        // made generated `index_of` 14% slower (`benches/offset.rs`,
        // `bf16[1024,1024]{1,0:T(8,128)(2,1)}`).
        let mut x = None;
        for &j in order.iter() {
            let term = b.mul(values[j], list[j].place)?;
            x = b.add(x, term)?;
        }
        if d.ragged & (1 << g.dim) != 0 {
            let size = g.size(dims).ok_or(TOO_LARGE)?;
            // The values the coordinate's digits spell, padding included.
            let reach = order.iter().fold(1u128, |r, &j| {
                let h = &list[j];
                r.saturating_add((h.extent.max(1) as u128 - 1) * h.place as u128)
            });
            ragged.append((x, size, reach));
        }
        for k in (g.dim + 1..=g.last).rev() {
            outputs[k] = b.rem(x, dims[k])?;
            x = b.div(x, dims[k])?;
        }
        outputs[g.dim] = x;
    }
    // The coordinate with the most padding is checked first: a slot of
    // padding then leaves after one test, the most often. In storage
    // order, `f16[3,500,700]{2,0,1:T(8,128)(2,1)}` tested the dim of 700
    // in 768 before the one of 3 in 8, and its generated `index_of` took
    // 1.8x as long (`benches/family.rs`).
    ragged.sort_unstable_by(|a, c| (a.1 as u128 * c.2).cmp(&(c.1 as u128 * a.2)));
    for &(x, size, _) in ragged.iter() {
        checks.require(&b, x, size)?;
    }
    Ok(inverse_of(b, checks.0, outputs, storage_len))
}

/// `(x / place) % radix` of digit `g`, `x` the row-major index of its
/// dims; `list` holds the coordinate's other digits.
fn digit_value(
    b: &mut Builder,
    g: &Digit,
    list: &[Digit],
    dims: &[usize],
) -> Result<Value, ErrorKind> {
    let mut x = b.input(g.dim, dims[g.dim])?;
    for (k, &e) in dims[..=g.last].iter().enumerate().skip(g.dim + 1) {
        let scaled = b.mul(x, e)?;
        let next = b.input(k, e)?;
        x = b.add(scaled, next)?;
    }
    // `x / place` through the quotients of the coordinate's lower digits,
    // as the tiles take them: `(x / 2) / 8` shares `x / 2` with the digit
    // below, and the rules simplify each small step where one large
    // division would stay whole.
    let mut below: Fixed<usize, MAX_TILED_RANK> = Fixed::new(1);
    let mut place = g.place;
    while let Some(p) = list
        .iter()
        .filter(|h| (h.dim, h.last) == (g.dim, g.last) && h.place < place && place % h.place == 0)
        .map(|h| h.place)
        .max()
    {
        below.push(p).ok_or(TOO_LARGE)?;
        place = p;
    }
    let mut reached = 1;
    for &p in below.iter().rev().chain([g.place].iter()) {
        x = b.div(x, p / reached)?;
        reached = p;
    }
    match g.radix {
        0 => Ok(x),
        r => b.rem(x, r),
    }
}

/// Digits `i` (major) and `j` of `list` that step as one, and that one.
fn adjacent(list: &[Digit]) -> Option<(usize, usize, Digit)> {
    for (i, g) in list.iter().enumerate() {
        for (j, h) in list.iter().enumerate() {
            if (g.dim, g.last) == (h.dim, h.last)
                && h.radix == h.extent
                && h.place.checked_mul(h.radix) == Some(g.place)
                && h.stride.checked_mul(h.extent) == Some(g.stride)
            {
                let radix = match g.radix {
                    0 => 0,
                    r => r.checked_mul(h.radix)?,
                };
                let extent = g.extent.checked_mul(h.extent)?;
                return Some((
                    i.min(j),
                    i.max(j),
                    Digit {
                        radix,
                        extent,
                        ..*h
                    },
                ));
            }
        }
    }
    None
}

fn offset_program(mut b: Builder, values: &[Value], strides: &[usize]) -> OffsetProgram {
    // One term per value at most, and values are at most MAX_TILED_RANK.
    let mut terms: Fixed<Term, MAX_TILED_RANK> = Fixed::new(Term { step: 0, scale: 0 });
    for (v, &s) in values.iter().zip(strides) {
        if let Some(step) = *v {
            terms.append(Term { step, scale: s });
        }
    }
    // Merge `(x / t) * (t*s) + (x % t) * s` into `x * s`, and like terms, until nothing changes.
    while let Some((i, j, merged)) = find_merge(&b.program, &terms) {
        terms[i] = merged;
        let n = terms.len();
        terms.copy_within(j + 1..n, j);
        terms.truncate(n - 1);
    }
    let mut live = [false; MAX_PROGRAM_STEPS];
    for t in terms.iter() {
        live[usize::from(t.step)] = true;
    }
    let remap = b.program.prune(&mut live);
    for t in terms.iter_mut() {
        t.step = remap[usize::from(t.step)];
    }
    OffsetProgram {
        program: b.program,
        terms,
    }
}

/// Two terms `i < j` that add up to one, and that one.
fn find_merge(program: &Program, terms: &[Term]) -> Option<(usize, usize, Term)> {
    for (i, a) in terms.iter().enumerate() {
        for (j, c) in terms.iter().enumerate().skip(i + 1) {
            if a.step == c.step {
                if let Some(scale) = a.scale.checked_add(c.scale) {
                    return Some((
                        i,
                        j,
                        Term {
                            step: a.step,
                            scale,
                        },
                    ));
                }
            }
            for (hi, lo) in [(a, c), (c, a)] {
                if let (Op::Div(x, t), Op::Mod(x2, t2)) =
                    (program.get(hi.step), program.get(lo.step))
                {
                    if x == x2 && t == t2 && lo.scale.checked_mul(t) == Some(hi.scale) {
                        return Some((
                            i,
                            j,
                            Term {
                                step: x,
                                scale: lo.scale,
                            },
                        ));
                    }
                }
            }
        }
    }
    None
}

fn inverse_program(
    m2m: &[usize],
    shape: &Shape,
    strides: &[usize],
    levels: &[Option<Level>],
    storage_len: usize,
) -> Result<InverseProgram, ErrorKind> {
    let mut b = Builder::new();
    let mut checks = Checks(Fixed::new(Check { step: 0, bound: 0 }));

    // Offsets past the tiled shape but inside `L(n)` rounding are padding.
    let slots = product(shape.dims()).unwrap_or(usize::MAX);
    let off = if storage_len > slots {
        let step = b.push(Op::Input(0), slots)?;
        if let Some(step) = step {
            checks.push(step, slots)?;
        }
        step
    } else {
        b.input(0, slots)?
    };
    let mut values: [Value; MAX_TILED_RANK] = [None; MAX_TILED_RANK];
    for (j, (&extent, &stride)) in shape.dims().iter().zip(strides).enumerate() {
        let q = b.div(off, stride)?;
        values[j] = if j == 0 { q } else { b.rem(q, extent)? };
    }
    let mut len = shape.dims().len();
    for info in levels.iter().rev().flatten() {
        let groups = info.groups().count();
        let mut prev = [None; MAX_TILED_RANK];
        prev[..info.base].copy_from_slice(&values[..info.base]);
        for (g, (first, last, t)) in info.groups().enumerate() {
            let outer = b.mul(values[info.base + g], t)?;
            let mut x = b.add(outer, values[info.base + groups + g])?;
            checks.require(&b, x, info.group_extent(first, last))?;
            for j in (first + 1..=last).rev() {
                let e = info.extents[j];
                prev[info.base + j] = b.rem(x, e)?;
                x = b.div(x, e)?;
            }
            prev[info.base + first] = x;
        }
        let restored = info.base + info.k();
        values = [None; MAX_TILED_RANK];
        values[..restored - info.prepended].copy_from_slice(&prev[info.prepended..restored]);
        len = restored - info.prepended;
    }
    debug_assert_eq!(len, m2m.len());
    let mut outputs: Fixed<Value, MAX_RANK> = Fixed::filled(m2m.len(), None);
    for (p, &d) in m2m.iter().rev().enumerate() {
        outputs[d] = values[p];
    }
    Ok(inverse_of(b, checks.0, outputs, storage_len))
}

/// The inverse program of `outputs` and `checks`, the steps nothing reads
/// removed.
fn inverse_of(
    mut b: Builder,
    mut checks: Fixed<Check, MAX_CHECKS>,
    mut outputs: Fixed<Value, MAX_RANK>,
    storage_len: usize,
) -> InverseProgram {
    let mut live = [false; MAX_PROGRAM_STEPS];
    for c in checks.iter() {
        live[usize::from(c.step)] = true;
    }
    for s in outputs.iter().flatten() {
        live[usize::from(*s)] = true;
    }
    let remap = b.program.prune(&mut live);
    for c in checks.iter_mut() {
        c.step = remap[usize::from(c.step)];
    }
    for s in outputs.iter_mut().flatten() {
        *s = remap[usize::from(*s)];
    }
    InverseProgram {
        program: b.program,
        checks,
        outputs,
        storage_len,
    }
}

/// Conditions that tell padding from data, gathered while inverting.
struct Checks(Fixed<Check, MAX_CHECKS>);

impl Checks {
    fn push(&mut self, step: StepId, bound: usize) -> Result<(), ErrorKind> {
        self.0.push(Check { step, bound }).ok_or(TOO_LARGE)
    }

    /// Requires `v < bound`, unless `v`'s range already guarantees it.
    fn require(&mut self, b: &Builder, v: Value, bound: usize) -> Result<(), ErrorKind> {
        match v {
            Some(step) if b.range(v) > bound => self.push(step, bound),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;

    use super::*;
    use crate::algebra::digits::tests::samples;

    /// The offset program the symbolic values fold into: what `fold`
    /// gives a layout without digits.
    fn symbolic(dims: &[usize], m2m: &[usize], tiles: &[Tile]) -> OffsetProgram {
        let mut fwd = Builder::new();
        let mut stepped = Tiled::physical(dims, m2m, None, |d| fwd.input(d, dims[d])).unwrap();
        for tile in tiles {
            stepped.step(tile, &mut fwd).unwrap();
        }
        let shape = extents(&stepped);
        let n = shape.dims().len();
        let mut values = [None; MAX_TILED_RANK];
        for (v, d) in values.iter_mut().zip(stepped.dims()) {
            *v = d.value;
        }
        let mut strides = [0usize; MAX_TILED_RANK];
        let mut acc = 1usize;
        for j in (0..n).rev() {
            strides[j] = acc;
            acc = acc.saturating_mul(shape.dims()[j]);
        }
        offset_program(fwd, &values[..n], &strides[..n])
    }

    /// The inverse program the folded values give: what `fold` gives a
    /// layout without digits.
    fn symbolic_inverse(l: &crate::Layout) -> InverseProgram {
        let (dims, m2m, tiles) = (l.dims(), l.minor_to_major(), l.tiles());
        fold_symbolic(dims, m2m, tiles, l.tail_alignment(), None)
            .unwrap()
            .inverse
    }

    /// The index at `slot` with the levels undone one by one by
    /// [`Level::undo`], from the tiled shape back to the physical one, or
    /// `None` for padding.
    fn undone(l: &crate::Layout, slot: usize) -> Option<vec::Vec<usize>> {
        let (dims, m2m, tiles) = (l.dims(), l.minor_to_major(), l.tiles());
        let last = shape_after(dims, m2m, tiles).unwrap();
        if slot >= last.product().unwrap() {
            return None;
        }
        let mut at = vec![0; last.dims().len()];
        let mut rest = slot;
        for (a, &e) in at.iter_mut().zip(last.dims()).rev() {
            *a = rest % e;
            rest /= e;
        }
        for level in (0..tiles.len()).rev() {
            let before = shape_after(dims, m2m, &tiles[..level]).unwrap();
            let mut undone = vec![0; before.dims().len()];
            if !Level::of(before.dims(), &tiles[level]).undo(&at, &mut undone) {
                return None;
            }
            at = undone;
        }
        let mut index = vec![0; dims.len()];
        for (p, &d) in m2m.iter().rev().enumerate() {
            index[d] = at[p];
        }
        index.iter().zip(dims).all(|(i, d)| i < d).then_some(index)
    }

    /// Instructions of an inverse: its steps and its checks.
    fn inverse_size(p: &InverseProgram) -> usize {
        p.program().steps().len() + p.checks().len()
    }

    /// The sampled layouts that parse and have digits, with them.
    fn with_digits(
    ) -> impl Iterator<Item = (std::string::String, crate::Layout, Digits<MAX_TILED_RANK>)> {
        samples().filter_map(|spec| {
            let l = crate::parse(&spec).ok()?;
            let d = digits(l.dims(), l.minor_to_major(), l.tiles()).ok()?;
            Some((spec, l, d))
        })
    }

    /// The digits' inverse is the one `fold` gives, reads every slot
    /// (padding and the `L(n)` rounding included) as the levels undone one
    /// by one do, and is at most 2 instructions longer than the folded
    /// values' inverse on a layout, never longer on all of them together.
    #[test]
    fn digits_inverses_equal_the_undone_levels() {
        let (mut with, mut shorter, mut checked) = (0, 0, 0);
        let (mut total, mut total_symbolic) = (0, 0);
        let mut scratch = [0; MAX_PROGRAM_STEPS];
        for (spec, l, d) in with_digits() {
            let (dims, m2m, tiles) = (l.dims(), l.minor_to_major(), l.tiles());
            with += 1;
            let p = digits_inverse(&d, dims, l.storage_len()).unwrap();
            let folded = fold(dims, m2m, tiles, l.tail_alignment()).unwrap();
            assert_eq!(folded.inverse, p, "{spec}");
            assert_eq!(folded.digits, Some(d), "{spec}");
            let old = symbolic_inverse(&l);
            let (size, size_symbolic) = (inverse_size(&p), inverse_size(&old));
            assert!(
                size <= size_symbolic + 2,
                "{spec}: {p:?}\n  symbolic {old:?}"
            );
            total += size;
            total_symbolic += size_symbolic;
            shorter += usize::from(size < size_symbolic);
            if l.storage_len() > 4096 {
                continue;
            }
            checked += 1;
            let mut index = vec![0; dims.len()];
            for slot in 0..l.storage_len() + 2 {
                let got = p
                    .eval(slot, &mut scratch, &mut index)
                    .then(|| index.clone());
                let want = undone(&l, slot).filter(|_| slot < l.storage_len());
                assert_eq!(got, want, "{spec} slot {slot}: {p:?}");
                if let Some(i) = want {
                    assert_eq!(offset_of(dims, m2m, tiles, &i), slot, "{spec} {i:?}");
                }
            }
        }
        std::eprintln!("{with} with digits ({checked} every slot), {shorter} shorter; instructions {total} (symbolic {total_symbolic})");
        assert!(total <= total_symbolic, "{total} against {total_symbolic}");
        assert!(
            with >= 2500 && checked >= 1500 && shorter >= 100,
            "{with} with digits, {checked} every slot, {shorter} shorter"
        );
    }

    /// The digits' program is the one `fold` gives, equals the stepped
    /// offsets on every element, and is no longer than the program of the
    /// symbolic values: random layouts, and ones of `*` over whole dims.
    #[test]
    fn digits_programs_equal_the_stepped_offsets() {
        let (mut with, mut differ) = (0, 0);
        let mut scratch = [0; MAX_PROGRAM_STEPS];
        for (spec, l, d) in with_digits() {
            let (dims, m2m, tiles) = (l.dims(), l.minor_to_major(), l.tiles());
            with += 1;
            let p = digits_offset(&d, dims, m2m).unwrap();
            let folded = fold(dims, m2m, tiles, l.tail_alignment()).unwrap();
            assert_eq!(folded.offset, p, "{spec}");
            let old = symbolic(dims, m2m, tiles);
            let size = |p: &OffsetProgram| p.program().steps().len() + p.terms().len();
            assert!(size(&p) <= size(&old), "{spec}: {p:?}\n  symbolic {old:?}");
            differ += usize::from(p != old);
            if l.len() > 4096 {
                continue;
            }
            let mut index = vec![0; dims.len()];
            for _ in 0..l.len() {
                let want = offset_of(dims, m2m, tiles, &index);
                assert_eq!(p.eval(&index, &mut scratch), want, "{spec} {index:?}");
                for k in (0..dims.len()).rev() {
                    index[k] += 1;
                    if index[k] < dims[k] {
                        break;
                    }
                    index[k] = 0;
                }
            }
        }
        assert!(
            with >= 2500 && differ >= 200,
            "{with} with digits, {differ} differ"
        );
    }
}
