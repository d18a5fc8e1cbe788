//! `xla_layout::hlo` on real modules and on damaged text: every shape it
//! yields is the text at its span and parses as `parse` parses it, every
//! piece of an instruction `hlo::line` finds is in the line; whatever the
//! input, it never panics and never leaves the text.

mod common;

use std::path::Path;

use common::specgen::{generate, mutate, Rng};
use xla_layout::{hlo, parse};

fn check(text: &str) -> usize {
    let mut n = 0;
    let mut last_end = 0;
    for s in hlo::shapes(text) {
        let span = s.span();
        assert!(
            span.start >= last_end && span.end <= text.len(),
            "{span:?} in {text:?}"
        );
        assert_eq!(&text[span.range()], s.text());
        assert_eq!(s.layout().ok(), parse(s.text()).ok(), "{}", s.text());
        last_end = span.end;
        n += 1;
    }
    n
}

/// Every line through `hlo::line`: whatever it finds lies inside the line,
/// and each tuple element is an array shape the line holds.
fn read_lines(text: &str) -> usize {
    let mut instructions = 0;
    for line in text.lines() {
        let hlo::Line::Instruction(i) = hlo::line(line) else {
            continue;
        };
        instructions += 1;
        for piece in [
            i.name(),
            i.shape(),
            i.opcode(),
            i.operands(),
            i.attributes(),
        ] {
            assert!(line.contains(piece), "{piece:?} in {line:?}");
        }
        for e in i.elements().flatten() {
            assert!(i.shape().contains(e.shape()), "{:?} in {line:?}", e.shape());
        }
        for call in i.calls() {
            assert!(line.contains(call.computation()), "{line:?}");
        }
        for (name, shape) in i.operand_list() {
            assert!(i.operands().contains(name), "{line:?}");
            assert!(shape.is_none_or(|s| i.operands().contains(s)), "{line:?}");
        }
    }
    instructions
}

#[test]
fn real_modules_line_by_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_corpus");
    let text = std::fs::read_to_string(dir.join("conv_with_clamp.hlo")).unwrap();
    assert_eq!(read_lines(&text), 10);
    let text = std::fs::read_to_string(dir.join("dynamic_slices.hlo")).unwrap();
    assert_eq!(read_lines(&text), 15);
    let text = std::fs::read_to_string(dir.join("audit_calls.hlo")).unwrap();
    assert_eq!(read_lines(&text), 43);
}

#[test]
fn real_modules() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_corpus");
    let text = std::fs::read_to_string(dir.join("conv_with_clamp.hlo")).unwrap();
    // 10 instructions produce an array; two operand lists repeat none.
    assert_eq!(
        hlo::shapes(&text)
            .filter(hlo::ArrayShape::is_result)
            .count(),
        10
    );
    assert_eq!(check(&text), 10);
    let text = std::fs::read_to_string(dir.join("dynamic_slices.hlo")).unwrap();
    let all = check(&text);
    let results = hlo::shapes(&text)
        .filter(hlo::ArrayShape::is_result)
        .count();
    let with_layout = hlo::shapes(&text)
        .filter(hlo::ArrayShape::has_layout)
        .count();
    assert_eq!((all, results), (44, 19));
    // Signatures print shapes without layouts; instructions always with one.
    assert_eq!(all - with_layout, 14);
}

#[test]
fn damaged_modules_and_generated_shapes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_corpus");
    let modules: Vec<String> = [
        "conv_with_clamp.hlo",
        "dynamic_slices.hlo",
        "loop_fusion_dynamic_update_slice.hlo",
    ]
    .iter()
    .map(|m| std::fs::read_to_string(dir.join(m)).unwrap())
    .collect();
    let mut rng = Rng::new(12);
    for i in 0..1500 {
        let base = &modules[i % modules.len()];
        let donor = generate(&mut rng).text;
        // Damage a window of the module, so the edits land among shapes.
        let at = rng.pick(base.len().saturating_sub(200));
        let at = (at..base.len())
            .find(|&a| base.is_char_boundary(a))
            .unwrap_or(base.len());
        let end = (at + 200..base.len())
            .find(|&a| base.is_char_boundary(a))
            .unwrap_or(base.len());
        let text = format!(
            "{}{}{}",
            &base[..at],
            mutate(&mut rng, &base[at..end], &donor),
            &base[end..]
        );
        check(&text);
        read_lines(&text);
        let spec = generate(&mut rng);
        let line = format!("x = ({}, {}) tuple(a)\n", spec.text.trim(), donor.trim());
        check(&line);
        read_lines(&line);
    }
}
