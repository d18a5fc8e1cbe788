//! The panic of `offset` for an index outside the dims, in debug builds.
//!
//! `layout!`'s `offset` is a `const fn`, where `format!` is not available,
//! so the message is written into a fixed buffer by hand; the same function
//! serves [`Layout::offset`](crate::Layout::offset), so both read alike.

/// Room for two lists of [`MAX_RANK`](crate::MAX_RANK) numbers of 20 digits
/// and the words around them; longer (wrong) indices are cut with `...`.
const CAP: usize = 800;

/// The message under construction: a byte buffer that only ever receives
/// whole ASCII pieces, so it is always UTF-8.
struct Message {
    bytes: [u8; CAP],
    len: usize,
}

impl Message {
    const fn push(&mut self, text: &str) {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() && self.len < CAP {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
    }

    const fn number(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < CAP {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
    }

    /// `` `[a, b, c]` ``, cut after [`MAX_RANK`](crate::MAX_RANK) entries.
    const fn list(&mut self, values: &[usize]) {
        self.push("`[");
        let mut i = 0;
        while i < values.len() {
            if i > 0 {
                self.push(", ");
            }
            if i == crate::MAX_RANK {
                self.push("...");
                break;
            }
            self.number(values[i]);
            i += 1;
        }
        self.push("]`");
    }
}

/// Panics with "index `[0, 6]` is outside the dims `[3, 5]`" (or, for an
/// index of the wrong length, says so). A `const fn`, so in `const`
/// evaluation the panic is a compile error with this message.
#[doc(hidden)]
#[track_caller]
pub const fn outside_dims(index: &[usize], dims: &[usize]) -> ! {
    let mut m = Message {
        bytes: [0; CAP],
        len: 0,
    };
    m.push("index ");
    m.list(index);
    if index.len() == dims.len() {
        m.push(" is outside the dims ");
        m.list(dims);
    } else {
        m.push(" has ");
        m.number(index.len());
        m.push(if index.len() == 1 {
            " entry"
        } else {
            " entries"
        });
        m.push(" for the dims ");
        m.list(dims);
    }
    match core::str::from_utf8(m.bytes.split_at(m.len).0) {
        Ok(text) => panic!("{}", text),
        Err(_) => panic!("index outside the dims"),
    }
}

/// Whether every entry of `index` is below its dim (and there are as many):
/// `layout!`'s `try_offset` and the debug check of its `offset`. One call
/// rather than one comparison per dim in every expansion, whose tokens
/// each cost compile time; branch-free, so a call on constant lengths
/// unrolls to the `&` chain those comparisons were.
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
#[inline]
pub const fn inside(index: &[usize], dims: &[usize]) -> bool {
    let mut ok = index.len() == dims.len();
    let mut i = 0;
    while i < index.len() && i < dims.len() {
        ok &= index[i] < dims[i];
        i += 1;
    }
    ok
}

/// One of `dims`, negative `dim` counting from the end: `layout!`'s `dim`.
///
/// Used by `layout!`; not public API.
#[doc(hidden)]
#[inline]
pub const fn dim_of(dims: &[usize], dim: isize) -> Option<usize> {
    match crate::resolve_dim(dims.len(), dim) {
        Some(d) => Some(dims[d]),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::{dim_of, inside, outside_dims};
    use std::string::String;

    fn message(index: &[usize], dims: &[usize]) -> String {
        let (index, dims) = (index.to_vec(), dims.to_vec());
        let err = std::panic::catch_unwind(move || outside_dims(&index, &dims))
            .expect_err("outside_dims always panics");
        err.downcast_ref::<String>()
            .cloned()
            .or_else(|| err.downcast_ref::<&str>().map(|s| String::from(*s)))
            .expect("a text message")
    }

    #[test]
    fn inside_and_dims() {
        assert!(inside(&[2, 4], &[3, 5]));
        assert!(inside(&[], &[]));
        assert!(!inside(&[3, 4], &[3, 5]));
        assert!(!inside(&[2, 5], &[3, 5]));
        assert!(!inside(&[2], &[3, 5]), "too few entries");
        assert!(!inside(&[0, 0, 0], &[3, 5]), "too many entries");
        assert_eq!(dim_of(&[3, 5], 0), Some(3));
        assert_eq!(dim_of(&[3, 5], -1), Some(5));
        assert_eq!(dim_of(&[3, 5], 2), None);
        assert_eq!(dim_of(&[3, 5], -3), None);
        assert_eq!(dim_of(&[], 0), None);
    }

    #[test]
    fn messages() {
        assert_eq!(
            message(&[0, 6], &[3, 5]),
            "index `[0, 6]` is outside the dims `[3, 5]`"
        );
        assert_eq!(
            message(&[2], &[3, 5]),
            "index `[2]` has 1 entry for the dims `[3, 5]`"
        );
        assert_eq!(
            message(&[], &[3]),
            "index `[]` has 0 entries for the dims `[3]`"
        );
        assert_eq!(
            message(&[usize::MAX], &[0]),
            "index `[18446744073709551615]` is outside the dims `[0]`"
        );
        let long = [7; 40];
        let text = message(&long, &[1; 16]);
        assert!(text.starts_with("index `[7, 7, "), "{text}");
        assert!(
            text.contains(", 7, ...]` has 40 entries for the dims `[1, 1, "),
            "{text}"
        );
    }
}
