//! A bitcast check as a person reads it: the verdict, and the first element
//! that moves worked out on both sides.

use core::fmt;

use super::IndexSteps;
use crate::bitcast::{self, Mismatch};
use crate::Layout;

/// The answer of [`bitcast::reshape`] or [`bitcast::transpose`] with its
/// reasons: for a change that moves data, the first element that moves,
/// its offset stepped through each side's tiles ([`IndexSteps`]): where
/// the two walks part is why it moves.
///
/// # Examples
///
/// ```
/// use xla_layout::{parse, render::Bitcast};
/// let from = parse("f32[8,256]{1,0:T(8,128)}").unwrap();
/// let to = parse("f32[2,4,256]{2,1,0:T(4,128)}").unwrap();
/// let text = Bitcast::reshape(&from, &to).to_string();
/// assert!(text.starts_with("reshape f32[8,256]{1,0:T(8,128)} -> f32[2,4,256]{2,1,0:T(4,128)}: not a bitcast\n"));
/// assert!(text.contains("index (0,128) is at offset 1024"));
/// assert!(text.contains("index (0,0,128) is at offset 512"));
/// let same = parse("f32[3,8,256]{2,1,0:T(8,128)}").unwrap();
/// assert!(Bitcast::reshape(&parse("f32[24,256]{1,0:T(8,128)}").unwrap(), &same)
///     .to_string()
///     .ends_with(": a bitcast, no data moves\n"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Bitcast<'a> {
    from: &'a Layout,
    to: &'a Layout,
    /// `Some` for a transpose.
    perm: Option<&'a [usize]>,
    result: Result<(), Mismatch>,
}

impl<'a> Bitcast<'a> {
    /// Whether reshaping `from` into `to` is a bitcast, with its reasons.
    pub fn reshape(from: &'a Layout, to: &'a Layout) -> Self {
        Bitcast {
            from,
            to,
            perm: None,
            result: bitcast::reshape(from, to),
        }
    }

    /// Whether XLA's transpose of `from` into `to` by `perm` is a bitcast,
    /// with its reasons.
    ///
    /// # Examples
    ///
    /// ```
    /// use xla_layout::{parse, render::Bitcast};
    /// let from = parse("f32[2,3]").unwrap();
    /// let to = parse("f32[3,2]{0,1}").unwrap();
    /// assert!(Bitcast::transpose(&from, &to, &[1, 0]).result().is_ok());
    /// ```
    pub fn transpose(from: &'a Layout, to: &'a Layout, perm: &'a [usize]) -> Self {
        Bitcast {
            from,
            to,
            perm: Some(perm),
            result: bitcast::transpose(from, to, perm),
        }
    }

    /// The verdict: what [`bitcast::reshape`] or [`bitcast::transpose`] says.
    ///
    /// # Errors
    ///
    /// The [`Mismatch`] when the change is no bitcast.
    pub fn result(&self) -> Result<(), Mismatch> {
        self.result
    }
}

impl fmt::Display for Bitcast<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.perm {
            None => write!(f, "reshape {} -> {}", self.from, self.to)?,
            Some(perm) => write!(f, "transpose {} -> {} by perm {perm:?}", self.from, self.to)?,
        }
        let m = match self.result {
            Ok(()) => return writeln!(f, ": a bitcast, no data moves"),
            Err(Mismatch::Moved(m)) => m,
            Err(other) => return writeln!(f, ": not a bitcast\n  {other}"),
        };
        writeln!(f, ": not a bitcast\n  {}\n", self.result.unwrap_err())?;
        for (side, layout, index) in [
            ("from", self.from, &m.from_index),
            ("to", self.to, &m.to_index),
        ] {
            writeln!(f, "in `{side}`, {layout}:")?;
            if let Some(steps) = IndexSteps::new(layout, index) {
                writeln!(f, "{steps}")?;
            }
        }
        Ok(())
    }
}
