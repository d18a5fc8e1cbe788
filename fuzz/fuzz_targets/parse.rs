//! `xla_layout::parse` on arbitrary UTF-8, with the invariants of
//! `tests/hostile_fuzz.rs`: no panic (overflow checks are on in fuzz builds),
//! every error span inside the input on character boundaries, and every
//! accepted spec printing a canonical form that parses back to the same
//! layout, whose offsets and inverse agree.
//!
//! Run (nightly and `cargo install cargo-fuzz`), from the repository root:
//! `cargo +nightly fuzz run parse -- -dict=fuzz/parse.dict -max_total_time=600`

#![no_main]

use libfuzzer_sys::fuzz_target;
use xla_layout::{parse, Layout, MAX_ERRORS};

/// Offset and inverse agree at `index`, which lies inside the dims.
fn round_trips(l: &Layout, index: &[usize]) {
    let off = l.offset(index);
    assert!(off < l.storage_len(), "{l}: offset({index:?}) = {off}");
    assert_eq!(l.try_offset(index), Some(off), "{l}");
    assert_eq!(
        l.index_of(off).as_deref(),
        Some(index),
        "{l}: index_of({off})"
    );
}

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    match parse(spec) {
        Err(err) => {
            assert!((1..=MAX_ERRORS).contains(&err.len()));
            for e in &err {
                let s = e.span();
                assert!(s.start <= s.end && s.end <= spec.len(), "{s:?}: {e}");
                assert!(
                    spec.is_char_boundary(s.start) && spec.is_char_boundary(s.end),
                    "{s:?}: {e}"
                );
                assert!(!e.to_string().is_empty());
            }
            let _ = err.report(spec).to_string();
        }
        Ok(l) => {
            let text = l.to_string();
            let again = parse(&text).unwrap_or_else(|e| panic!("`{spec}` printed `{text}`: {e}"));
            assert_eq!(again, l, "`{spec}` printed `{text}`");
            assert_eq!(again.to_string(), text);
            let bytes = (l.storage_len() as u128 * u128::from(l.element_bits())).div_ceil(8);
            assert_eq!(bytes, l.storage_bytes() as u128, "{l}");
            if !l.is_empty() {
                round_trips(&l, &vec![0; l.rank()]);
                let last: Vec<usize> = l.dims().iter().map(|d| d - 1).collect();
                round_trips(&l, &last);
            }
            // Misuse: unspecified or `None`, never a panic.
            let _ = l.offset(&vec![usize::MAX; l.rank()]);
            assert_eq!(l.index_of(l.storage_len()), None);
            assert_eq!(l.index_of(usize::MAX), None);
        }
    }
});
