//! One fixed-capacity list, used for every bounded sequence in the crate.
//!
//! The crate allocates nothing, so each list is an array of its capacity
//! plus a length. Entries past the length are stale (left over from building
//! or never written) and must never be observed: equality, hashing and
//! `Debug` read the live entries only.

use core::fmt;
use core::hash::{Hash, Hasher};

/// Up to `N` values of `T`, stored inline.
#[derive(Clone, Copy)]
pub(crate) struct Fixed<T: Copy, const N: usize> {
    items: [T; N],
    len: u16,
}

impl<T: Copy, const N: usize> Fixed<T, N> {
    /// An empty list; `fill` only initialises the unused slots.
    pub(crate) const fn new(fill: T) -> Self {
        // `len` is a `u16`; every capacity in the crate is far below that.
        const { assert!(N <= u16::MAX as usize) };
        Fixed {
            items: [fill; N],
            len: 0,
        }
    }

    /// A list holding `values`, or `None` if they do not fit.
    pub(crate) const fn from_slice(values: &[T], fill: T) -> Option<Self> {
        if values.len() > N {
            return None;
        }
        let mut f = Self::new(fill);
        let mut i = 0;
        while i < values.len() {
            f.items[i] = values[i];
            i += 1;
        }
        f.len = values.len() as u16;
        Some(f)
    }

    /// The first `N` of `values`: all of them whenever they fit, which the
    /// callers have checked.
    pub(crate) fn from_prefix(values: &[T], fill: T) -> Self {
        let mut f = Self::new(fill);
        for &v in values.iter().take(N) {
            f.append(v);
        }
        f
    }

    /// `len` (at most `N`) copies of `value`.
    pub(crate) const fn filled(len: usize, value: T) -> Self {
        let mut f = Self::new(value);
        f.len = if len < N { len } else { N } as u16;
        f
    }

    /// Appends `value`, in constants too; no change when full.
    pub(crate) const fn append(&mut self, value: T) {
        if (self.len as usize) < N {
            self.items[self.len as usize] = value;
            self.len += 1;
        }
    }

    /// The live entries.
    pub(crate) const fn as_slice(&self) -> &[T] {
        self.items.split_at(self.len as usize).0
    }

    /// Every slot, the ones past the live entries holding the fill.
    pub(crate) const fn slots(&self) -> &[T; N] {
        &self.items
    }

    /// The live entries, mutably.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items[..usize::from(self.len)]
    }

    /// Appends `value`; `None` (and no change) when full.
    pub(crate) fn push(&mut self, value: T) -> Option<()> {
        *self.items.get_mut(usize::from(self.len))? = value;
        self.len += 1;
        Some(())
    }

    /// Keeps the first `len` entries (no change if there are fewer).
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < usize::from(self.len) {
            self.len = len as u16;
        }
    }
}

impl<T: Copy, const N: usize> core::ops::Deref for Fixed<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy, const N: usize> core::ops::DerefMut for Fixed<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Copy + PartialEq, const N: usize> PartialEq for Fixed<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Eq, const N: usize> Eq for Fixed<T, N> {}

impl<T: Copy + Hash, const N: usize> Hash for Fixed<T, N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for Fixed<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Fixed;
    use core::hash::{Hash, Hasher};

    /// FNV-1a, enough to see whether two values hash alike.
    struct Fnv(u64);
    impl Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }

    fn hash<T: Hash>(v: &T) -> u64 {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        v.hash(&mut h);
        h.finish()
    }

    #[test]
    fn stale_entries_are_invisible() {
        let mut a: Fixed<u32, 4> = Fixed::new(0);
        a.push(1).unwrap();
        a.push(9).unwrap();
        a.truncate(1);
        let b: Fixed<u32, 4> = Fixed::from_slice(&[1], 7).unwrap();
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(&*a, &[1]);
    }

    #[test]
    fn full_lists_refuse_more() {
        let mut a: Fixed<u8, 2> = Fixed::from_slice(&[1, 2], 0).unwrap();
        assert_eq!(a.push(3), None);
        assert_eq!(&*a, &[1, 2]);
        assert!(Fixed::<u8, 2>::from_slice(&[1, 2, 3], 0).is_none());
    }
}
