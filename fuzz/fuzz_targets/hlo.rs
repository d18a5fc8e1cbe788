//! `xla_layout::hlo::shapes` on arbitrary UTF-8, with the invariants of
//! `tests/hlo_shapes.rs`: no panic (overflow checks are on in fuzz builds),
//! shapes in text order with spans inside the input on character
//! boundaries, each shape the text at its span, and its layout what `parse`
//! makes of that text.
//!
//! Run (nightly and `cargo install cargo-fuzz`), from the repository root,
//! seeded with XLA's modules:
//! `cargo +nightly fuzz run hlo tests/xla_corpus -- -dict=fuzz/parse.dict -max_total_time=600`

#![no_main]

use libfuzzer_sys::fuzz_target;
use xla_layout::{hlo, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut last_end = 0;
    for s in hlo::shapes(text) {
        let span = s.span();
        assert!(
            last_end <= span.start && span.start < span.end && span.end <= text.len(),
            "{span:?} after {last_end} in {} bytes",
            text.len()
        );
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        assert_eq!(&text[span.range()], s.text());
        assert_eq!(s.layout().ok(), parse(s.text()).ok(), "{}", s.text());
        let _ = (s.is_result(), s.has_layout());
        last_end = span.end;
    }
});
