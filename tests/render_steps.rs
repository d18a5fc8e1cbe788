//! The worked examples check themselves: every piece of arithmetic printed
//! by `IndexSteps` and `OffsetSteps` is evaluated here and must hold, must end
//! at the layout's offset or index, and an offset walk must end in padding
//! exactly when `index_of` says so. Over every index and every slot of
//! hundreds of random layouts.

mod common;

use common::reference::{random_layout, Rng};
use xla_layout::render::{IndexSteps, OffsetSteps};
use xla_layout::{parse, Layout};

/// Evaluates `+`, `*`, `/`, `%` and parentheses over numbers, with the usual
/// precedence (`*`, `/`, `%` bind tighter than `+`, left to right).
fn eval(text: &str) -> usize {
    fn number(s: &[u8], i: &mut usize) -> usize {
        while s[*i] == b' ' {
            *i += 1;
        }
        if s[*i] == b'(' {
            *i += 1;
            let v = sum(s, i);
            assert_eq!(s[*i], b')');
            *i += 1;
            return v;
        }
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        std::str::from_utf8(&s[start..*i]).unwrap().parse().unwrap()
    }
    fn skip(s: &[u8], i: &mut usize) {
        while *i < s.len() && s[*i] == b' ' {
            *i += 1;
        }
    }
    fn product(s: &[u8], i: &mut usize) -> usize {
        let mut v = number(s, i);
        loop {
            skip(s, i);
            match s.get(*i) {
                Some(b'*') => {
                    *i += 1;
                    v *= number(s, i);
                }
                Some(b'/') => {
                    *i += 1;
                    v /= number(s, i);
                }
                Some(b'%') => {
                    *i += 1;
                    v %= number(s, i);
                }
                _ => return v,
            }
        }
    }
    fn sum(s: &[u8], i: &mut usize) -> usize {
        let mut v = product(s, i);
        loop {
            skip(s, i);
            if s.get(*i) == Some(&b'+') {
                *i += 1;
                v += product(s, i);
            } else {
                return v;
            }
        }
    }
    let s = text.as_bytes();
    let mut i = 0;
    let v = sum(s, &mut i);
    assert_eq!(i, s.len(), "trailing text in `{text}`");
    v
}

/// `(a,b,c)` as numbers.
fn tuple(text: &str) -> Vec<usize> {
    let inner = text.trim().trim_start_matches('(').trim_end_matches(')');
    if inner.is_empty() {
        return Vec::new();
    }
    inner
        .split(',')
        .map(|n| n.trim().parse().unwrap())
        .collect()
}

/// Splits `(x/y,z/w)` at its top-level commas into `["x/y", "z/w"]`.
fn items(text: &str) -> Vec<&str> {
    let inner = &text.trim()[1..text.trim().len() - 1];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// `(exprs) = (values)`: each expression evaluates to its value.
fn check_list(line: &str, context: &str) {
    let (exprs, rest) = line.split_once(" = ").unwrap();
    let values = tuple(rest.split(" in ").next().unwrap());
    let exprs = items(exprs.trim());
    assert_eq!(exprs.len(), values.len(), "{context}\n{line}");
    for (e, v) in exprs.iter().zip(&values) {
        assert_eq!(eval(e), *v, "{context}\n{line}");
    }
}

fn check_index(l: &Layout, index: &[usize]) {
    let text = IndexSteps::new(l, index).unwrap().to_string();
    let context = format!("{l} at {index:?}\n{text}");
    let offset = l.offset(index);
    assert!(text.starts_with("index ("), "{context}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(&format!("is at offset {offset}")),
        "{context}"
    );
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if let Some(rest) = line
            .strip_prefix("tile index")
            .or_else(|| line.strip_prefix("index in tile"))
        {
            check_list(rest, &context);
        } else if let Some(rest) = line.strip_prefix("combine") {
            let (_, sum) = rest.split_once("->").unwrap();
            let (expr, value) = sum.split_once(" = ").unwrap();
            assert_eq!(
                eval(expr),
                tuple(&format!("({})", value.split(" in ").next().unwrap()))[0],
                "{context}"
            );
        } else if line.starts_with("offset = ") {
            // The arithmetic lines that follow, each `= ...`, end at the offset.
            let rest: Vec<&str> = lines
                .by_ref()
                .map(|l| l.trim().trim_start_matches("= "))
                .collect();
            let last = rest.last().unwrap();
            assert_eq!(last.parse::<usize>().unwrap(), offset, "{context}");
            for expr in &rest {
                assert_eq!(eval(expr), offset, "{context}");
            }
        }
    }
}

fn check_offset(l: &Layout, slot: usize) {
    let text = OffsetSteps::new(l, slot).to_string();
    let context = format!("{l} at slot {slot}\n{text}");
    let first = text.lines().next().unwrap();
    let last = text.lines().last().unwrap().trim();
    if let Some(index) = l.index_of(slot) {
        assert_eq!(
            first,
            format!("offset {slot} holds index {}", fmt(&index)),
            "{context}"
        );
        assert!(
            last.ends_with(&format!("logical index {}", fmt(&index))),
            "{context}"
        );
    } else {
        assert_eq!(first, format!("offset {slot} is padding"), "{context}");
        assert!(
            last.ends_with("so this slot is padding") || last.ends_with("tail padding"),
            "{context}"
        );
    }
    for line in text.lines().map(str::trim) {
        if line.starts_with('(') && line.contains(" = ") {
            check_list(line, &context);
        } else if let Some(rest) = line.strip_prefix("split ") {
            let (value, rest) = rest.split_once(" over ").unwrap();
            let (dims, index) = rest.split_once(": ").unwrap();
            let linear = tuple(index)
                .iter()
                .zip(tuple(dims))
                .fold(0, |a, (&e, d)| a * d + e);
            assert_eq!(linear, value.parse::<usize>().unwrap(), "{context}");
        }
    }
}

fn fmt(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(ToString::to_string).collect();
    format!("({})", parts.join(","))
}

/// Every index of `dims` in row-major order.
fn indices(dims: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let count: usize = dims.iter().product();
    (0..count).map(move |mut flat| {
        let mut index = vec![0; dims.len()];
        for (slot, &d) in index.iter_mut().zip(dims).rev() {
            *slot = flat % d;
            flat /= d;
        }
        index
    })
}

#[test]
fn the_documents_worked_example() {
    let l = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let text = IndexSteps::new(&l, &[2, 3]).unwrap().to_string();
    // As the documents write it: tile index (1,1), index in tile (0,1),
    // bounds (2,3) and (2,2), then the sum.
    assert!(text.contains("tile index     (2/2,3/2) = (1,1) in (2,3)"));
    assert!(text.contains("index in tile  (2%2,3%2) = (0,1) in (2,2)"));
    assert!(text.contains("together       (1,1,0,1) in (2,3,2,2)"));
    assert!(text.contains("offset = linear_index((1,1),(2,3))*2*2 + linear_index((0,1),(2,2))"));
    assert!(text.contains("= (1*3 + 1)*2*2 + (0*2 + 1)\n         = 17\n"));
}

#[test]
fn golden_values_walk_to_their_offsets() {
    for (spec, index, offset) in [
        ("f32[3,5]{1,0:T(2,2)}", &[2, 3][..], 17),
        ("f32[8,8]{1,0:T(2,4)(2,1,1,1)}", &[6, 5], 51),
        ("f32[8]{0:T(2,2)}", &[5], 9),
        ("f32[3]{0:T(8,128)}", &[2], 2),
        ("bf16[2048]{0:T(1024)(128)(2,1)}", &[128], 1),
        ("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}", &[0, 2, 0], 256),
        ("u32[]{:T(128)}", &[], 0),
        ("f32[10,20]{0,1}", &[3, 5], 53),
    ] {
        let l = parse(spec).unwrap();
        let text = IndexSteps::new(&l, index).unwrap().to_string();
        assert!(text.ends_with(&format!("= {offset}\n")), "{spec}\n{text}");
        check_index(&l, index);
        let back = OffsetSteps::new(&l, offset).to_string();
        assert!(
            back.ends_with(&format!("logical index {}\n", fmt(index))),
            "{spec}\n{back}"
        );
    }
}

#[test]
fn random_layouts_walk_every_index_and_slot() {
    let mut rng = Rng::new(0x57E9_0001);
    for _ in 0..250 {
        let spec = random_layout(&mut rng).spec();
        let l = parse(&spec).unwrap();
        for index in indices(l.dims()) {
            check_index(&l, &index);
        }
        for slot in 0..l.storage_len() {
            check_offset(&l, slot);
        }
        let past = OffsetSteps::new(&l, l.storage_len()).to_string();
        assert_eq!(
            past,
            format!(
                "offset {0} is past the storage ({0} slots)\n",
                l.storage_len()
            )
        );
    }
}

#[test]
fn indices_outside_the_dims_have_no_steps() {
    let l = parse("f32[3,5]").unwrap();
    assert!(IndexSteps::new(&l, &[3, 0]).is_none());
    assert!(IndexSteps::new(&l, &[0]).is_none());
}
