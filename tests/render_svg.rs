//! The SVG pictures parse as XML, hold every offset of the slice drawn and
//! every slot of memory, and the copies in `docs/` are what the renderer
//! draws today (`BLESS=1 cargo test --test render_svg` rewrites them).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::reference::{random_layout, Rng};
use xla_layout::render::{Slice, Svg};
use xla_layout::{parse, Layout};

/// The texts of one class, in document order.
fn texts(doc: &roxmltree::Document<'_>, class: &str) -> Vec<usize> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("class") == Some(class))
        .map(|n| n.text().expect("a label").parse().expect("a number"))
        .collect()
}

/// Checks a picture of `l`: the offset of every element of the slice (each
/// once, in row-major order of the slice), every slot 0.. of memory, and
/// one white cell per padding slot shown.
fn check(l: &Layout, slice: Slice) {
    let svg = Svg::new(l).slice(slice).to_string();
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{l}: {e}\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let mut expected = Vec::new();
    if !l.is_empty() {
        let extent = |d: Option<usize>| d.map_or(1, |d| l.dims()[d]);
        for r in 0..extent(slice.rows()) {
            for c in 0..extent(slice.cols()) {
                let mut index = slice.at().to_vec();
                if let Some(d) = slice.rows() {
                    index[d] = r;
                }
                if let Some(d) = slice.cols() {
                    index[d] = c;
                }
                expected.push(l.offset(&index));
            }
        }
    }
    assert_eq!(texts(&doc, "offset"), expected, "{l}");
    let slots = texts(&doc, "slot");
    assert_eq!(slots, (0..slots.len()).collect::<Vec<_>>(), "{l}");
    if !svg.contains("more slots") {
        assert_eq!(slots.len(), l.storage_len(), "{l}");
    }
    // Memory cells of padding are white; elements are coloured by tile.
    let fills: BTreeMap<usize, String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("g"))
        .filter_map(|g| {
            let text = g
                .children()
                .find(|n| n.attribute("class") == Some("slot"))?;
            let rect = g.children().find(|n| n.has_tag_name("rect"))?;
            Some((
                text.text()?.parse().ok()?,
                rect.attribute("fill")?.to_string(),
            ))
        })
        .collect();
    for (slot, fill) in fills {
        let white = fill == "#ffffff";
        assert_eq!(
            white,
            l.index_of(slot).is_none() || l.tiles().is_empty(),
            "{l}: slot {slot} fill {fill}"
        );
    }
}

#[test]
fn figures_hold_every_offset() {
    for spec in [
        "f32[3,5]{1,0:T(2,2)}",
        "bf16[4,8]{1,0:T(2,4)(2,1)}",
        "f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
        "u32[]{:T(128)}",
    ] {
        let l = parse(spec).unwrap();
        check(&l, Slice::default_for(&l));
    }
}

#[test]
fn figure_2_outlines_the_second_level_in_red() {
    let l = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    let svg = Svg::new(&l).to_string();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let red: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("path") && n.attribute("stroke") == Some("#d62728"))
        .collect();
    // One path in the grid and one in memory.
    assert_eq!(red.len(), 2);
    // 16 boxes of 2x1 in the grid: each has a top and a bottom side.
    let sides = red[0].attribute("d").unwrap().matches('H').count();
    assert_eq!(sides, 32);
    // And the four 2x4 tiles are four colours.
    let mut fills: Vec<&str> = doc
        .descendants()
        .filter(|g| g.children().any(|n| n.attribute("class") == Some("offset")))
        .filter_map(|g| {
            g.children()
                .find(|n| n.has_tag_name("rect"))?
                .attribute("fill")
        })
        .collect();
    fills.sort_unstable();
    fills.dedup();
    assert_eq!(fills.len(), 4);
}

/// The hue of `#rrggbb` in degrees, and its chroma (0 for greys, 1 at most).
fn hue(colour: &str) -> (f64, f64) {
    let hex = colour.strip_prefix('#').expect("a #rrggbb colour");
    let channel = |i: usize| i32::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap());
    let (r, g, b) = (channel(0), channel(2), channel(4));
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let chroma = max - min;
    if chroma == 0 {
        return (0.0, 0.0);
    }
    let sector = |a: i32, b: i32, base: f64| base + f64::from(a - b) / f64::from(chroma);
    let h = if max == r {
        sector(g, b, 0.0).rem_euclid(6.0)
    } else if max == g {
        sector(b, r, 2.0)
    } else {
        sector(r, g, 4.0)
    };
    (h * 60.0, f64::from(chroma) / 255.0)
}

#[test]
fn later_level_outlines_differ_in_hue_from_every_fill() {
    // Nine tiles a row: the colour step between rows is 9, so all eight
    // tile colours are used.
    let l = parse("bf16[4,36]{1,0:T(2,4)(2,1)}").unwrap();
    let svg = Svg::new(&l).to_string();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let mut fills: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.attribute("fill"))
        .filter(|&c| c != "none" && c != "#ffffff")
        .collect();
    fills.sort_unstable();
    fills.dedup();
    assert_eq!(fills.len(), 8, "{fills:?}");
    // Tile borders are near-black; anything else stroked is a later level.
    let mut outlines: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("path"))
        .filter_map(|n| n.attribute("stroke"))
        .filter(|&c| c != "#222222" && c != "#b0b0b0")
        .collect();
    outlines.dedup();
    assert_eq!(outlines.len(), 1, "{outlines:?}");
    let (outline_hue, outline_chroma) = hue(outlines[0]);
    assert!(outline_chroma > 0.5, "outline {} is not vivid", outlines[0]);
    for fill in fills {
        assert_ne!(fill, outlines[0]);
        let (h, _) = hue(fill);
        let apart = (h - outline_hue).abs().min(360.0 - (h - outline_hue).abs());
        assert!(
            apart >= 25.0,
            "fill {fill} is {apart:.0} degrees of hue from the outline {}",
            outlines[0]
        );
    }
}

#[test]
fn random_layouts_hold_every_offset() {
    let mut rng = Rng::new(0x5E6_0001);
    for _ in 0..200 {
        let r = random_layout(&mut rng);
        let l = parse(&r.spec()).unwrap();
        check(&l, Slice::default_for(&l));
    }
}

#[test]
fn large_pictures_are_cut_and_still_parse() {
    let l = parse("f32[300,300]{1,0:T(8,128)}").unwrap();
    let svg = Svg::new(&l).to_string();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(texts(&doc, "offset").len(), 48 * 48);
    assert!(svg.contains("more slots"));
}

/// The pictures in `docs/`, as the explain tool writes them with `--svg`.
#[test]
fn docs_figures_are_current() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    for (file, spec) in [
        ("figure1.svg", "f32[3,5]{1,0:T(2,2)}"),
        ("figure2.svg", "bf16[4,8]{1,0:T(2,4)(2,1)}"),
    ] {
        let l = parse(spec).unwrap();
        let svg = Svg::new(&l).to_string();
        let path = docs.join(file);
        if common::bless() {
            std::fs::write(&path, &svg).unwrap();
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            stored == svg,
            "{} is out of date; rerun with BLESS=1",
            path.display()
        );
    }
}
