//! [`RankedInverse`]: `index_of` with the inverse program unfolded into
//! sums of digits or quotients of the offset, each constant decoded once,
//! when the value is made, into what evaluation reads.
//!
//! A [`Layout`] keeps its inverse compact (pool slots, see
//! [`ClosedInverse`](crate::eval::closed::ClosedInverse) and
//! [`Places`](crate::eval::places::Places)), so each call reads divisors from
//! the pool that a caller's loop cannot move out. A `RankedInverse` is
//! made once and used in a loop, so it holds the decoded terms instead:
//! evaluation reads constants that never change and does straight
//! arithmetic on the offset. It is a value
//! of its own, not part of [`Ranked`](crate::Ranked): a view that carried
//! the kilobyte of terms measured 7 times slower in a loop of `offset`
//! (its loads no longer left the loop). One of three forms, fixed per
//! layout so that a caller's loop tests it once, tried in this order:
//!
//! - [`Form::Shifts`]: every output and padding check a sum of at most
//!   three digits `((x >> a) & m) << s`, in three fixed slots each: no
//!   multiplication and no count to test.
//! - [`Form::Places`]: for at most one tiling level, the offset's places
//!   in the tiled shape's mixed radix, `(x / stride) % radix`; each group
//!   of dims that a tile dim covers (with the `*` before it) is `outer *
//!   tile + inner` of two places, checked against its extent for padding
//!   and split into its dims by their extents. The work per dim is fixed
//!   by the rank: no list of terms to walk, no count to test. Its bound on
//!   the values divided is the tiled shape's slots, `L(n)` rounding aside.
//!   The numbers come from [`Tiled`], as a `Layout`'s own places' do.
//! - [`Form::Quotients`]: each output and check a sum of `(v / d) * c` over
//!   the offset or over one of up to two sums of such terms (the dims a `*`
//!   combines, split apart again), a remainder written as quotients,
//!   `v % b = v - (v / b) * b`; an output or check that adds up all of a
//!   sum's terms reads the sum instead. Every value the program divides
//!   stays below 2^31 (the bound is found per layout), so a division is
//!   one multiplication and one shift, exact for every dividend in range
//!   (see [`Quotient::new`]); [`Form::Places`] divides the same way.
//!
//! Layouts of none of the three keep the layout's own `index_of`. Every
//! form gives the inverse program's answer on every offset below storage;
//! past storage the answer is `None` before any evaluation.

use super::Ranked;
use crate::algebra::divide::multiplier;
use crate::eval::closed::digits;
use crate::eval::layout::InverseForm;
use crate::eval::places::{self, Tiled, Value};
use crate::eval::program::{InverseProgram, Op, Program, StepId};
use crate::fixed::Fixed;
use crate::{Layout, MAX_PROGRAM_STEPS};

/// The digits of one output or check in [`Form::Shifts`].
const SLOTS: usize = 3;
/// The most digits of [`Form::Shifts`]: three slots for each of eight
/// outputs and four checks.
const DIGITS: usize = 36;
/// The most sums quotients divide besides the offset.
const SUMS: usize = 2;
/// The most padding checks.
const CHECKS: usize = 4;
/// The registers of [`Form::Quotients`]: the offset, the sums, then one
/// per distinct quotient. A power of two, so that a register number from
/// the table is masked into range rather than checked.
const REGISTERS: usize = 16;
/// The most distinct quotients.
const QUOTIENTS: usize = REGISTERS - 1 - SUMS;
/// The most `register * coefficient` terms of all sums, outputs and checks.
const LINEAR: usize = 40;
/// The most atoms of one value while unfolding.
const ATOMS: usize = 16;
/// Dividends at or past 2^31 do not take the one-multiplication division.
const DIVIDEND_BITS: u32 = 31;

/// `((x >> shift) & mask) << scale`; all zeros is 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Digit {
    mask: u64,
    shift: u8,
    scale: u8,
}

impl Digit {
    const ZERO: Digit = Digit {
        mask: 0,
        shift: 0,
        scale: 0,
    };

    // Always inlined, as the evaluators are: see `RankedInverse::index_of`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn eval(self, x: u64) -> u64 {
        (x.wrapping_shr(u32::from(self.shift)) & self.mask).wrapping_shl(u32::from(self.scale))
    }
}

/// `register / d` as `(register * mul) >> shift`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Quotient {
    mul: u64,
    shift: u8,
    register: u8,
}

impl Quotient {
    const ZERO: Quotient = Quotient {
        mul: 0,
        shift: 0,
        register: 0,
    };

    /// `v / d` for every `v` up to `max`, or `None` if `max` is 2^31 or
    /// more: `(v m) >> s` with the [`multiplier`] for values of `max`'s
    /// bit length.
    fn new(register: u8, d: u64, max: u64) -> Option<Quotient> {
        let n = u64::BITS - max.leading_zeros();
        if n > DIVIDEND_BITS {
            return None;
        }
        let (mul, shift) = multiplier(d, n)?;
        Some(Quotient {
            mul,
            shift: u8::try_from(shift).ok()?,
            register,
        })
    }

    /// `v / d`, for `v` up to the `max` it was made for.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn of(&self, v: u64) -> u64 {
        v.wrapping_mul(self.mul).wrapping_shr(u32::from(self.shift))
    }
}

/// `register * coefficient`, wrapping.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Linear {
    coefficient: u64,
    register: u8,
}

/// What a `RankedInverse` evaluates; see the module docs.
// It is made once and copied whole: boxing the larger form (no
// allocation in the core anyway) would add a pointer to every read.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Form<const N: usize> {
    /// Output `d` sums digits `3d..3d + 3`, check `c` digits from `3(N + c)`.
    Shifts([Digit; DIGITS]),
    Quotients(Quotients<N>),
    Places(Places<N>),
    /// The layout's digits' inverse, as [`Ranked::index_of`] reads it:
    /// faster than the forms above wherever the layout has one.
    Digits,
    /// None of them: the layout's own `index_of`.
    Layout,
}

/// A place of the offset in the tiled shape's mixed radix, `(x / stride) %
/// radix`: `q - radix * (q / radix)` with `q = x / stride`; the most major
/// place has radix 0, so it is `q`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Place {
    by_stride: Quotient,
    by_radix: Quotient,
    radix: u64,
}

impl Place {
    const ZERO: Place = Place {
        by_stride: Quotient::ZERO,
        by_radix: Quotient::ZERO,
        radix: 0,
    };

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn of(&self, x: u64) -> u64 {
        let q = self.by_stride.of(x);
        q.wrapping_sub(self.by_radix.of(q).wrapping_mul(self.radix))
    }
}

/// One dim of [`Form::Places`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Physical {
    value: Value,
    /// The place of the group's tile in the tiled shape, or the untiled
    /// dim's place.
    outer: Place,
    /// The place within the group's tile.
    inner: Place,
    /// The group's tile.
    tile: u64,
    /// The group's extent, the product of its dims' (`u64::MAX` where the
    /// tile divides it: no padding).
    bound: u64,
    /// This dim's entry is the value modulo `extent`; the quotient is left
    /// for the next, more major, dim of the group. The group's most major
    /// dim takes the rest (`extent` 0, not divided).
    by_extent: Quotient,
    extent: u64,
}

impl Physical {
    /// An untiled dim with its place still to fill in; the fields a
    /// [`Value::Place`] does not read are left at 0.
    const UNTILED: Physical = Physical {
        value: Value::Place,
        outer: Place::ZERO,
        inner: Place::ZERO,
        tile: 0,
        bound: 0,
        by_extent: Quotient::ZERO,
        extent: 0,
    };
}

/// A layout of at most one tiling level as the places of its tiled shape:
/// each group of dims that a tile dim covers is `outer * tile + inner`,
/// two places of the offset, split into its dims by their extents, and
/// padding where its value reaches its extent. Every constant sits where
/// the rank fixes it, so evaluation walks no lists.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Places<const N: usize> {
    /// The slots of the tiled shape; the rest to storage is `L(n)`
    /// rounding, padding.
    limit: u64,
    /// The dims in `minor_to_major` order: each group's most minor dim
    /// before the rest of it.
    dims: [Physical; N],
    /// Where each dim is in `dims`.
    position: [u8; N],
}

impl<const N: usize> Places<N> {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn index_of(&self, x: u64) -> Option<[usize; N]> {
        if x >= self.limit {
            return None;
        }
        // Entries in `dims`'s order first, each in an array slot the rank
        // fixes, then moved to their dims: written straight to their dims
        // (slots known only at run time), the 8-byte entries came back as
        // 16-byte pieces of the caller's copy, each a failed store-to-load
        // forward.
        let mut entries = [0u64; N];
        let mut v = 0u64;
        for (d, entry) in self.dims.iter().zip(entries.iter_mut()) {
            if d.value != Value::Carried {
                v = d.outer.of(x);
                if d.value == Value::Group {
                    v = v.wrapping_mul(d.tile).wrapping_add(d.inner.of(x));
                    if v >= d.bound {
                        return None;
                    }
                }
            }
            if d.extent == 0 {
                *entry = v;
            } else {
                let q = d.by_extent.of(v);
                *entry = v.wrapping_sub(q.wrapping_mul(d.extent));
                v = q;
            }
        }
        // An entry is below its dim, so it fits `usize`.
        #[allow(clippy::cast_possible_truncation)]
        Some(core::array::from_fn(|d| {
            let entry = entries.get(usize::from(self.position[d]));
            entry.copied().unwrap_or(0) as usize
        }))
    }
}

/// Registers: 0 the offset, `1 + j` sum `j`, `1 + SUMS + q` quotient `q`.
/// Quotients of the offset come first, then the sums, then quotients of
/// the sums, then the outputs and checks, each a run of [`Linear`] terms.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Quotients<const N: usize> {
    divisions: [Quotient; QUOTIENTS],
    /// How many quotients divide the offset, and how many in all.
    of_offset: u8,
    live: u8,
    linear: [Linear; LINEAR],
    /// `(first, count)` of each sum's, output's and check's terms.
    sums: [(u8, u8); SUMS],
    outputs: [(u8, u8); N],
    checks: [(u8, u8); CHECKS],
}

/// A rank-`N` layout's `index_of` with its constants decoded once, made
/// by [`Ranked::inverse`](crate::Ranked::inverse): for loops that invert
/// many offsets.
///
/// It answers as [`Layout::index_of`] does, for every offset, and returns
/// the index as `[usize; N]`. Pick it only for a layout whose `*`
/// combines dims larger than 1: elsewhere the layout reads its index from
/// its digits, which [`Ranked::index_of`](crate::Ranked::index_of) does
/// fastest (this type then calls it, behind the decoded forms' code, 2.8
/// times the generated inverse's time on `bf16[1024,1024]{1,0:T(8,128)
/// (2,1)}` against 1.25). Where the inverse splits dims that `*`
/// combined, each output is shifts and masks of the offset for powers of
/// two, and each division one multiplication and a shift by constants
/// chosen for the values it divides: with at most one tiling
/// level, a fixed amount of work per dim, for fewer than 2^31 slots of the
/// tiled shape (`L(n)` rounding past them aside); with two, for storage of
/// fewer than 2^31 slots and at most four padding checks. Layouts beyond
/// these (more slots, a `*` under a second tiling level) use the layout's
/// own `index_of`. Making one folds the layout's
/// programs: make it outside the loop and hand it to closures by value
/// (`move`); it is `Copy` and about a kilobyte (two at rank 16).
///
/// # Examples
///
/// ```
/// let l = xla_layout::parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}").unwrap();
/// let inverse = l.ranked::<5>().unwrap().inverse();
/// let offset = l.offset(&[1, 2, 3, 4, 5]);
/// assert_eq!(inverse.index_of(offset), Some([1, 2, 3, 4, 5]));
/// let padding = (0..l.storage_len()).filter(|&o| inverse.index_of(o).is_none());
/// assert_eq!(padding.count(), l.padding_len());
/// assert!(core::ptr::eq(inverse.layout(), &l));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RankedInverse<'a, const N: usize> {
    layout: &'a Layout,
    inverse: Inverse<N>,
}

impl<'a, const N: usize> RankedInverse<'a, N> {
    /// The decoded inverse of `layout`, of rank `N`.
    pub(crate) fn new(layout: &'a Layout) -> RankedInverse<'a, N> {
        RankedInverse {
            layout,
            inverse: Inverse::new(layout),
        }
    }

    /// The layout inverted.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[3,5]").unwrap();
    /// let inverse = l.ranked::<2>().unwrap().inverse();
    /// assert_eq!(inverse.layout().dims(), &[3, 5]);
    /// ```
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    /// The logical index stored at `offset`, or `None` for a padding slot
    /// or an offset at or past [`storage_len`](Layout::storage_len).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    /// let inverse = l.ranked::<2>().unwrap().inverse();
    /// assert_eq!(inverse.index_of(16), Some([2, 0]));
    /// assert_eq!(inverse.index_of(32), None); // past storage
    /// ```
    // Always inlined: the index then lives in the caller's registers, and
    // the decoded constants are read once, out of the caller's loop.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[must_use]
    pub fn index_of(&self, offset: usize) -> Option<[usize; N]> {
        self.inverse.index_of(offset, self.layout)
    }
}

/// The decoded terms of a rank-`N` layout's inverse; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Inverse<const N: usize> {
    form: Form<N>,
    storage_len: usize,
    /// A check holds, and the slot has data, while its value is below this.
    bounds: [u64; CHECKS],
    live_checks: u8,
}

impl<const N: usize> Inverse<N> {
    /// The decoded inverse of `layout`, of rank `N`; of form
    /// [`Form::Layout`] when it has no closed form.
    fn new(layout: &Layout) -> Inverse<N> {
        Self::decoded(
            layout,
            matches!(layout.forms.inverse, InverseForm::Digits(_)),
        )
    }

    /// [`new`](Self::new), of form [`Form::Digits`] where `digits` says
    /// so (tests decode the other forms of every layout).
    fn decoded(layout: &Layout, digits: bool) -> Inverse<N> {
        if digits {
            return Inverse {
                form: Form::Digits,
                storage_len: layout.storage_len(),
                bounds: [0; CHECKS],
                live_checks: 0,
            };
        }
        let inverse = &layout.inverse_program();
        // The shifts and the quotients evaluate the program's checks, at
        // most four; the places check each group themselves.
        let fits = inverse.outputs().len() == N && inverse.checks().len() <= CHECKS;
        let form = fits
            .then(|| shifts::<N>(inverse))
            .flatten()
            .or_else(|| places::<N>(layout))
            .or_else(|| fits.then(|| quotients::<N>(inverse)).flatten());
        let mut bounds = [0; CHECKS];
        for (b, check) in bounds.iter_mut().zip(inverse.checks()) {
            *b = u64::try_from(check.bound).unwrap_or(u64::MAX);
        }
        Inverse {
            form: form.unwrap_or(Form::Layout),
            storage_len: inverse.storage_len(),
            bounds,
            live_checks: inverse.checks().len().min(CHECKS) as u8,
        }
    }

    /// The index at `offset`, `None` for padding and past storage;
    /// `layout` for layouts of neither form.
    ///
    /// Outputs and checks are unrolled, so a caller's loop reads each
    /// constant once and tests the form once.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn index_of(&self, offset: usize, layout: &Layout) -> Option<[usize; N]> {
        if offset >= self.storage_len {
            return None;
        }
        let x = offset as u64;
        match &self.form {
            Form::Shifts(digits) => self.evaluate(|g| {
                let d = |s: usize| digits[(SLOTS * g + s) % DIGITS].eval(x);
                d(0).wrapping_add(d(1)).wrapping_add(d(2))
            }),
            Form::Quotients(q) => {
                let mut registers = [0u64; REGISTERS];
                registers[0] = x;
                let live = usize::from(q.live).min(QUOTIENTS);
                let of_offset = usize::from(q.of_offset).min(live);
                let sum = |registers: &[u64; REGISTERS], (first, count): (u8, u8)| {
                    let (first, count) = (usize::from(first), usize::from(count));
                    let terms = q.linear.get(first..first + count).unwrap_or(&[]);
                    terms.iter().fold(0u64, |acc, t| {
                        let v = registers[usize::from(t.register) % REGISTERS];
                        acc.wrapping_add(v.wrapping_mul(t.coefficient))
                    })
                };
                // Quotients of the offset read it directly; those of the
                // sums, the sums' registers, once the sums are made.
                for (i, t) in q.divisions[..of_offset].iter().enumerate() {
                    registers[(1 + SUMS + i) % REGISTERS] = t.of(x);
                }
                for j in 0..SUMS {
                    registers[1 + j] = sum(&registers, q.sums[j]);
                }
                for (i, t) in q.divisions.iter().enumerate().take(live).skip(of_offset) {
                    let v = registers[usize::from(t.register) % REGISTERS];
                    registers[(1 + SUMS + i) % REGISTERS] = t.of(v);
                }
                self.evaluate(|g| match g.checked_sub(N) {
                    None => sum(&registers, q.outputs.get(g).copied().unwrap_or((0, 0))),
                    Some(c) => sum(&registers, q.checks[c % CHECKS]),
                })
            }
            Form::Places(p) => p.index_of(x),
            Form::Digits => Ranked::<N>::of(layout).index_of(offset),
            Form::Layout => through(layout, offset),
        }
    }

    /// The index from `group`, the value of output `g` or, from `N` on, of
    /// check `g - N`; `None` if a check fails.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn evaluate(&self, group: impl Fn(usize) -> u64) -> Option<[usize; N]> {
        const _: () = assert!(CHECKS == 4);
        let live = self.live_checks;
        macro_rules! checks {
            ($($c:literal)*) => {$(
                if live > $c && group(N + $c) >= self.bounds[$c] {
                    return None;
                }
            )*};
        }
        checks!(0 1 2 3);
        // An output's true value is below its dim, so it fits `usize`.
        #[allow(clippy::cast_possible_truncation)]
        Some(core::array::from_fn(|d| group(d) as usize))
    }

    /// Which form evaluates, "layout" for the layout's own `index_of`.
    #[cfg(test)]
    fn kind(&self) -> &'static str {
        match self.form {
            Form::Shifts(_) => "shifts",
            Form::Places(_) => "places",
            Form::Quotients(_) => "quotients",
            Form::Digits => "digits",
            Form::Layout => "layout",
        }
    }
}

/// The index at `offset` by `layout`'s own `index_of`, as a [`Ranked`]
/// view gives it (no form was decoded). Out of line, so that the terms a
/// caller's loop reads stay out of it.
#[inline(never)]
fn through<const N: usize>(layout: &Layout, offset: usize) -> Option<[usize; N]> {
    Ranked::<N>::of(layout).index_of(offset)
}

/// [`Form::Shifts`], if every output and check is at most three digits of
/// powers of two.
fn shifts<const N: usize>(inverse: &InverseProgram) -> Option<Form<N>> {
    let mut table = [Digit::ZERO; DIGITS];
    let groups = inverse.outputs().iter().copied();
    let groups = groups.chain(inverse.checks().iter().map(|c| Some(c.step)));
    for (g, step) in groups.enumerate() {
        let Some(step) = step else { continue };
        let mut slot = 0;
        digits(inverse.program(), step, |d| {
            let power = |v: usize| v.is_power_of_two().then(|| v.trailing_zeros() as u8);
            let mask = match d.b {
                Some(b) => u64::try_from(b - 1).ok().filter(|_| b.is_power_of_two())?,
                None => u64::MAX,
            };
            *table.get_mut(SLOTS * g + slot).filter(|_| slot < SLOTS)? = Digit {
                mask,
                shift: power(d.a)?,
                scale: power(d.scale)?,
            };
            slot += 1;
            Some(())
        })?;
    }
    Some(Form::Shifts(table))
}

/// [`Form::Places`], if `layout` has at most one tiling level, no more
/// tile dims than dims, and fewer than 2^31 slots in its tiled shape.
fn places<const N: usize>(layout: &Layout) -> Option<Form<N>> {
    let m2m = layout.minor_to_major();
    if m2m.len() != N {
        return None;
    }
    // A layout read from foreign bytes may not be one.
    if !layout.well_formed() {
        return None;
    }
    let tiled = Tiled::new(layout.dims(), m2m, layout.tiles())?;
    let mut dims = [Physical::UNTILED; N];
    let mut position = [0u8; N];
    // `dims[i]` is dim `m2m[i]`, physical dim `N - 1 - i`.
    for (i, slot) in dims.iter_mut().enumerate() {
        *position.get_mut(*m2m.get(i)?)? = u8::try_from(i).ok()?;
        *slot = Physical::decode(tiled.dim(N - 1 - i)?, tiled.top)?;
    }
    Some(Form::Places(Places {
        limit: tiled.top + 1,
        dims,
        position,
    }))
}

impl Place {
    /// The place `p` of a tiled shape whose last slot is `top`.
    fn decode(p: places::Place, top: u64) -> Option<Place> {
        let by_stride = Quotient::new(0, p.stride, top)?;
        if p.radix == 0 {
            return Some(Place {
                by_stride,
                ..Place::ZERO
            });
        }
        Some(Place {
            by_stride,
            by_radix: Quotient::new(0, p.radix, top / p.stride)?,
            radix: p.radix,
        })
    }
}

impl Physical {
    /// Dim `d` of a tiled shape whose last slot is `top`.
    fn decode(d: places::Dim, top: u64) -> Option<Physical> {
        if d.value == Value::Place {
            return Some(Physical {
                outer: Place::decode(d.outer, top)?,
                ..Physical::UNTILED
            });
        }
        let by_extent = match d.extent {
            0 => Quotient::ZERO,
            e => Quotient::new(0, e, d.total.checked_sub(1)?)?,
        };
        Some(Physical {
            value: d.value,
            outer: Place::decode(d.outer, top)?,
            inner: Place::decode(d.inner, top)?,
            tile: d.tile,
            bound: d.bound,
            by_extent,
            extent: d.extent,
        })
    }
}

/// [`Form::Quotients`], if the inverse unfolds into quotients of the
/// offset and of at most two sums of them, every dividend below 2^31.
fn quotients<const N: usize>(inverse: &InverseProgram) -> Option<Form<N>> {
    let mut u = Unfolder::new(inverse)?;
    let mut groups: Fixed<Expr, { crate::MAX_RANK + CHECKS }> = Fixed::new(Expr::new(EMPTY));
    for out in inverse.outputs() {
        groups.push(match *out {
            Some(step) => u.expr(step)?,
            None => Expr::new(EMPTY),
        })?;
    }
    for c in inverse.checks() {
        groups.push(u.expr(c.step)?)?;
    }
    // Distinct quotients, those of the offset first: their registers are
    // written before the sums they make up.
    let mut atoms: Fixed<Atom, QUOTIENTS> = Fixed::new(EMPTY.0);
    let every = u.sums.iter().map(|(e, _)| e).chain(groups.iter());
    for pass in [true, false] {
        for e in every.clone() {
            for (atom, _) in e.iter() {
                if atom.divisor != 1 && (atom.source == 0) == pass && !atoms.contains(atom) {
                    atoms.push(*atom)?;
                }
            }
        }
    }
    let mut q = Quotients {
        divisions: [Quotient::ZERO; QUOTIENTS],
        of_offset: atoms.iter().filter(|a| a.source == 0).count() as u8,
        live: atoms.len() as u8,
        linear: [Linear {
            coefficient: 0,
            register: 0,
        }; LINEAR],
        sums: [(0, 0); SUMS],
        outputs: [(0, 0); N],
        checks: [(0, 0); CHECKS],
    };
    for (slot, atom) in q.divisions.iter_mut().zip(atoms.iter()) {
        *slot = Quotient::new(atom.source, atom.divisor, u.max_of(atom.source))?;
    }
    let mut used = 0;
    let mut place = |e: &Expr, linear: &mut [Linear; LINEAR]| -> Option<(u8, u8)> {
        let first = used;
        for &(atom, coefficient) in e.iter() {
            let register = match atoms.iter().position(|a| *a == atom) {
                Some(i) => 1 + SUMS + i,
                None => usize::from(atom.source),
            };
            *linear.get_mut(used)? = Linear {
                coefficient,
                register: register as u8,
            };
            used += 1;
        }
        Some((u8::try_from(first).ok()?, u8::try_from(used - first).ok()?))
    };
    for (j, (sum, _)) in u.sums.iter().enumerate() {
        q.sums[j] = place(sum, &mut q.linear)?;
    }
    // An output or check that adds up all of a sum's terms reads the sum
    // instead: one term for several.
    let reuse = |e: &Expr| -> Option<Expr> {
        let mut e = *e;
        for (j, (sum, _)) in u.sums.iter().enumerate() {
            if sum.len() > 1 && sum.iter().all(|t| e.contains(t)) {
                let mut rest = Expr::new(EMPTY);
                for t in e.iter().filter(|t| !sum.contains(t)) {
                    rest.push(*t)?;
                }
                let whole = Atom {
                    source: u8::try_from(1 + j).ok()?,
                    divisor: 1,
                };
                rest.push((whole, 1))?;
                e = rest;
            }
        }
        Some(e)
    };
    for (d, e) in groups.iter().take(N).enumerate() {
        q.outputs[d] = place(&reuse(e)?, &mut q.linear)?;
    }
    for (c, e) in groups[N..].iter().enumerate() {
        q.checks[c] = place(&reuse(e)?, &mut q.linear)?;
    }
    Some(Form::Quotients(q))
}

/// A quotient `source / divisor`: `source` 0 is the offset, `1 + j` sum `j`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Atom {
    source: u8,
    divisor: u64,
}

/// A value as `Σ atom * coefficient`, wrapping.
type Expr = Fixed<(Atom, u64), ATOMS>;

const EMPTY: (Atom, u64) = (
    Atom {
        source: 0,
        divisor: 1,
    },
    0,
);

/// Unfolds an inverse program's values into [`Expr`]s, registering the sums
/// that divisions need.
struct Unfolder<'a> {
    program: &'a Program,
    /// The largest value of each step, for offsets below storage.
    max: [u64; MAX_PROGRAM_STEPS],
    /// The offset's largest value.
    top: u64,
    /// The sums divided, each with its largest value.
    sums: Fixed<(Expr, u64), SUMS>,
}

impl<'a> Unfolder<'a> {
    fn new(inverse: &'a InverseProgram) -> Option<Unfolder<'a>> {
        let program = inverse.program();
        let mut max = [0u64; MAX_PROGRAM_STEPS];
        let top = u64::try_from(inverse.storage_len().checked_sub(1)?).ok()?;
        for (i, op) in program.steps().iter().enumerate() {
            let of = |s: StepId| max.get(usize::from(s)).copied().unwrap_or(u64::MAX);
            let k = |k: usize| u64::try_from(k).unwrap_or(u64::MAX);
            *max.get_mut(i)? = match *op {
                Op::Input(_) => top,
                Op::Div(a, d) => of(a) / k(d).max(1),
                Op::Mod(a, d) => of(a).min(k(d).saturating_sub(1)),
                Op::Mul(a, m) => of(a).saturating_mul(k(m)),
                Op::Add(a, b) => of(a).saturating_add(of(b)),
            };
        }
        Some(Unfolder {
            program,
            max,
            top,
            sums: Fixed::new((Expr::new(EMPTY), 0)),
        })
    }

    /// The largest value of `source`.
    fn max_of(&self, source: u8) -> u64 {
        match usize::from(source).checked_sub(1) {
            None => self.top,
            Some(j) => self.sums.get(j).map_or(u64::MAX, |s| s.1),
        }
    }

    /// `value(step)` as an [`Expr`].
    fn expr(&mut self, step: StepId) -> Option<Expr> {
        match *self.program.steps().get(usize::from(step))? {
            Op::Input(_) => single(0, 1),
            Op::Mul(x, k) => Some(scaled(&self.expr(x)?, u64::try_from(k).ok()?)),
            Op::Add(x, y) => added(&self.expr(x)?, &self.expr(y)?),
            Op::Div(x, k) => {
                let e = self.expr(x)?;
                self.quotient(&e, x, k)
            }
            Op::Mod(x, k) => {
                let e = self.expr(x)?;
                let q = self.quotient(&e, x, k)?;
                added(&e, &scaled(&q, u64::try_from(k).ok()?.wrapping_neg()))
            }
        }
    }

    /// `value(x) / k`, where `e` is `value(x)`.
    fn quotient(&mut self, e: &Expr, x: StepId, k: usize) -> Option<Expr> {
        let k = u64::try_from(k).ok().filter(|&k| k > 0)?;
        let (source, divisor) = match e.as_slice() {
            [] => return Some(Expr::new(EMPTY)),
            [(atom, 1)] => (atom.source, atom.divisor.checked_mul(k)),
            _ if e.iter().all(|(atom, _)| atom.source == 0) => {
                let max = *self.max.get(usize::from(x))?;
                let j = if let Some(j) = self.sums.iter().position(|(s, _)| s == e) {
                    j
                } else {
                    self.sums.push((*e, max))?;
                    self.sums.len() - 1
                };
                (u8::try_from(1 + j).ok()?, Some(k))
            }
            _ => return None,
        };
        // A divisor past every value of its source leaves 0.
        match divisor {
            Some(d) if d <= self.max_of(source) => single(source, d),
            _ => Some(Expr::new(EMPTY)),
        }
    }
}

/// `source / divisor`, once.
fn single(source: u8, divisor: u64) -> Option<Expr> {
    let mut e = Expr::new(EMPTY);
    e.push((Atom { source, divisor }, 1))?;
    Some(e)
}

/// `e * k`, wrapping.
fn scaled(e: &Expr, k: u64) -> Expr {
    let mut out = *e;
    for (_, c) in out.iter_mut() {
        *c = c.wrapping_mul(k);
    }
    nonzero(&out)
}

/// `a + b`, equal atoms merged and atoms of coefficient 0 dropped.
fn added(a: &Expr, b: &Expr) -> Option<Expr> {
    let mut out = *a;
    for &(atom, c) in b.iter() {
        match out.iter_mut().find(|(x, _)| *x == atom) {
            Some((_, sum)) => *sum = sum.wrapping_add(c),
            None => out.push((atom, c))?,
        }
    }
    Some(nonzero(&out))
}

/// The atoms of `e` whose coefficient is not 0, in order.
fn nonzero(e: &Expr) -> Expr {
    let mut out = Expr::new(EMPTY);
    for &(atom, c) in e.iter().filter(|(_, c)| *c != 0) {
        // No more than `e` holds, so it fits.
        let _ = out.push((atom, c));
    }
    out
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::String;
    use std::vec::Vec;

    use super::{quotients, Form};
    use crate::eval::closed::tests::{spec, Rng};
    use crate::MAX_PROGRAM_STEPS;

    /// The decoded `index_of` against the folded inverse program on the
    /// first and the last offsets (padding included) and past storage;
    /// returns which form evaluated (see `Inverse::kind`).
    fn check<const N: usize>(spec: &str, l: &crate::Layout) -> &'static str {
        // The forms decoded from the programs, as the layouts without the
        // digits' inverse take them; and as every layout takes its own.
        let public = l.ranked::<N>().unwrap().inverse();
        let r = super::RankedInverse {
            layout: l,
            inverse: super::Inverse::<N>::decoded(l, false),
        };
        let inverse = l.inverse_program();
        let mut scratch = [0; MAX_PROGRAM_STEPS];
        let mut want = [0; N];
        let storage = l.storage_len();
        // The first slots, the last thousand, and past storage.
        let first = 0..storage.min(3000);
        let last = storage.saturating_sub(1000).max(first.end)..storage;
        let past = [storage, storage + 1, usize::MAX];
        for offset in first.chain(last).chain(past) {
            let found = inverse.eval(offset, &mut scratch, &mut want);
            for r in [r, public] {
                assert_eq!(
                    r.index_of(offset),
                    found.then_some(want),
                    "{spec} at {offset}"
                );
            }
        }
        r.inverse.kind()
    }

    /// The decoded inverse of `spec` against its program, by rank.
    fn check_spec(spec: &str) -> Option<&'static str> {
        let l = crate::parse(spec).ok()?;
        Some(match l.rank() {
            0 => check::<0>(spec, &l),
            1 => check::<1>(spec, &l),
            2 => check::<2>(spec, &l),
            3 => check::<3>(spec, &l),
            4 => check::<4>(spec, &l),
            5 => check::<5>(spec, &l),
            6 => check::<6>(spec, &l),
            7 => check::<7>(spec, &l),
            8 => check::<8>(spec, &l),
            _ => return None,
        })
    }

    /// Random layouts of ranks 1 to 8 and the combining examples: every
    /// form runs, on layouts with padding and `*`, and agrees with the
    /// program everywhere.
    #[test]
    fn decoded_inverses_equal_the_programs() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let fixed = [
            "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
            "f32[5,3,4]{2,1,0:T(*,3,2)}",
            "bf16[3,7,20]{2,1,0:T(*,8,128)(2,1)}",
            "f32[3,5]{1,0:T(2,2)}",
            "bf16[1024,1024]{1,0:T(8,128)(2,1)}",
            "f32[1000,1000]{0,1:T(8,128)}",
        ];
        let random: Vec<String> = (0..800).map(|_| spec(&mut rng)).collect();
        // Layouts by form.
        let forms = ["shifts", "places", "quotients", "layout"];
        let mut counts = [0usize; 4];
        for spec in fixed.into_iter().chain(random.iter().map(String::as_str)) {
            let kind = check_spec(spec);
            if let Some(i) = forms.iter().position(|&f| Some(f) == kind) {
                counts[i] += 1;
            }
        }
        assert!(counts.iter().all(|&k| k > 20), "{forms:?}: {counts:?}");
        assert_eq!(
            check_spec(fixed[0]),
            Some("places"),
            "the combining example"
        );
        assert_eq!(check_spec(fixed[4]), Some("shifts"), "the TPU tiling");
        // The combining example as quotients: the split of the combined
        // dims, `s = 10 e + f`, is one sum of four quotients; the padding
        // check (`s < 110`) and `f = s - 10 (s / 10)` read it whole: 15
        // terms rather than 21.
        let combining = crate::parse(fixed[0]).unwrap();
        let Some(Form::Quotients(q)) = quotients::<5>(&combining.inverse_program()) else {
            panic!("quotients")
        };
        let terms = q.linear.iter().filter(|t| t.coefficient != 0).count();
        assert_eq!(terms, 15, "{q:?}");
    }

    /// [`Form::Places`] on what makes its constants: dims in any order,
    /// untiled major dims, `*` groups with and without padding, a tile
    /// dim of 1, `L(n)` rounding past the tiled shape, packed elements, a
    /// dynamic dim, more padded groups than the other forms check; and the
    /// layouts it leaves to other forms (powers of two, a scalar, two
    /// tiling levels, more tile dims than dims, values of 2^31 or more),
    /// which still agree.
    #[test]
    fn places_equal_the_programs() {
        for (spec, form) in [
            ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", "places"),
            ("f32[2,7,8,11,10]{0,2,4,1,3:T(*,*,2,*,3)}", "places"),
            ("f32[5,3,4]{2,1,0:T(*,3,2)}", "places"),
            ("f32[6,9,5]{0,1,2:T(3,*,5)}", "places"),
            ("f32[7,9,11]{1,2,0:T(2,5)}", "places"),
            ("f32[7,9,11]{1,2,0:T(1,4)}", "places"),
            ("f32[3,5]{1,0:T(2,3)L(16)}", "places"),
            ("f32[3,5]{1,0:L(7)}", "places"),
            ("s4[5,7]{1,0:T(2,3)E(4)}", "places"),
            ("f32[<=5,7]{0,1:T(2,3)}", "places"),
            ("f32[1000,1000]{0,1:T(8,128)}", "shifts"),
            ("f32[999,1001]{0,1:T(8,100)}", "places"),
            // Five padded groups: more checks than the other forms take.
            ("f32[4,4,4,4,4]{4,3,2,1,0:T(3,3,3,3,3)}", "places"),
            ("f32[1000,1000]{1,0}", "places"),
            ("f32[]", "shifts"),
            ("f32[5,6]{1,0:T(3,3)(2,1)}", "quotients"),
            ("f32[13]{0:T(2,3)}", "quotients"),
            ("f32[50000,50000]{1,0:T(8,128)}", "layout"),
            // Just under 2^31 slots, the most a division takes, and past.
            ("u8[32768,65500]{1,0:T(8,100)}", "places"),
            ("u8[32768,65600]{1,0:T(8,100)}", "layout"),
        ] {
            assert_eq!(check_spec(spec), Some(form), "{spec}");
        }
        // Rank 16, the most there is, with a group of four dims.
        let spec = "f32[2,3,2,3,2,3,2,3,2,3,2,3,2,3,2,3]\
                    {15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0:T(*,*,*,5,2)}";
        let l = crate::parse(spec).unwrap();
        assert_eq!(check::<16>(spec, &l), "places", "{spec}");
    }
}
