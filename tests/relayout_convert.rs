//! `convert` between layouts of the same dims, against the reference: every
//! destination slot holds the element the reference puts there, or the fill.

mod common;

use common::reference::{random_conversion_pair, ravel, RefLayout, Rng};
use xla_layout::parse;
use xla_layout::Options;

/// The storage of `r` holding `logical`, padding set to `fill`, from the reference alone.
fn storage(r: &RefLayout, logical: &[u32], fill: u32) -> Vec<u32> {
    r.slots()
        .into_iter()
        .map(|s| s.map_or(fill, |i| logical[ravel(&i, &r.dims)]))
        .collect()
}

fn check(a: &RefLayout, b: &RefLayout) {
    let (la, lb) = (parse(&a.spec()).unwrap(), parse(&b.spec()).unwrap());
    let logical: Vec<u32> = (0..la.len() as u32).map(|x| x * 3 + 1).collect();
    // Padding in the source holds garbage that must not reach the destination.
    let source = storage(a, &logical, 0xdead);
    let expected = storage(b, &logical, u32::MAX);
    let mut got = vec![0xbeef; lb.storage_len()];
    la.convert(&source, &lb, &mut got, Options::fill(u32::MAX))
        .unwrap();
    assert_eq!(got, expected, "{} -> {}", a.spec(), b.spec());
    let mut zero = vec![0xbeef; lb.storage_len()];
    la.convert(&source, &lb, &mut zero, Options::default())
        .unwrap();
    let expected_zero = storage(b, &logical, 0);
    assert_eq!(
        zero,
        expected_zero,
        "{} -> {}, default fill",
        a.spec(),
        b.spec()
    );
}

#[test]
fn random_pairs() {
    let mut rng = Rng::new(0xc0de_0001);
    let mut done = 0;
    while done < 2000 {
        let (a, b) = random_conversion_pair(&mut rng);
        // Tiles drawn for another shape can blow storage up; keep it small.
        if parse(&b.spec()).unwrap().storage_len() > 20_000 {
            continue;
        }
        check(&a, &b);
        check(&b, &a);
        done += 1;
    }
}

fn reference(dims: &[usize], m2m: &[usize], tiles: &[&[Option<usize>]]) -> RefLayout {
    RefLayout {
        type_name: "u32",
        dims: dims.to_vec(),
        minor_to_major: m2m.to_vec(),
        tiles: tiles.iter().map(|t| t.to_vec()).collect(),
        tail_alignment: 1,
    }
}

#[test]
fn tpu_pairs() {
    let s = Some;
    for dims in [[16, 256], [19, 260], [130, 129]] {
        let layouts = [
            reference(&dims, &[1, 0], &[]),
            reference(&dims, &[0, 1], &[]),
            reference(&dims, &[1, 0], &[&[s(8), s(128)]]),
            reference(&dims, &[1, 0], &[&[s(8), s(128)], &[s(2), s(1)]]),
            reference(&dims, &[1, 0], &[&[s(8), s(128)], &[s(4), s(1)]]),
            reference(&dims, &[0, 1], &[&[s(8), s(128)]]),
            reference(&dims, &[1, 0], &[&[s(2), s(2)], &[None, s(3)]]),
            reference(&dims, &[1, 0], &[&[None, s(3)]]),
        ];
        for a in &layouts {
            for b in &layouts {
                check(a, b);
            }
        }
    }
}
