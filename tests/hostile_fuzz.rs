//! Hostile input, generated: at least 100,000 specs per run through
//! `xla_layout::parse`, half valid by construction and half damaged.
//!
//! Whatever arrives, `parse` must answer with errors whose byte ranges lie
//! inside the input, or with a layout that survives parse -> Display -> parse
//! unchanged and whose offsets and inverse agree. Valid specs are also checked
//! field by field against what the generator wrote, their sizes against exact
//! arithmetic, and a sample of the small ones slot by slot against the plain
//! reference of `tests/common/reference.rs`.
//!
//! `XLA_LAYOUT_FUZZ_INPUTS` raises the count (never below 100,000) and
//! `XLA_LAYOUT_FUZZ_SEED` picks another sequence, for longer local runs.

mod common;

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use common::reference::RefLayout;
use common::specgen::{generate, mutate, GenSpec, Rng};
use xla_layout::{parse, ErrorKind, Layout, ParseError, MAX_ERRORS};

/// The fewest inputs one run feeds to `parse`.
const MIN_INPUTS: usize = 100_000;

/// Specs beside SPEC.md's golden ones, mutated alongside the generated ones:
/// what XLA writes beyond SPEC.md's examples (narrow `E(n)`, `T()`, `<=N`).
const EXTRA: &[&str] = &[
    "s8[21]{0:E(4)}",
    "s8[3,7]{1,0:E(4)}",
    "f32[]{:T()}",
    "f32[3,4]{1,0:T()(2,2)}",
    "f32[3,<=15]{1,0:T(2,2)}",
    "s32[2,<=2,2]{2,0,1}",
    "f6e3m2fn[16]{0:T(4)}",
    "f32[2,3]<0,1:L(4)>",
];

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The message of a caught panic.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_string())
}

/// Runs `f`, turning a panic into an error that names `what`.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| format!("{what} panicked: {}", panic_text(&*p)))
}

/// The invariants of an error answer.
fn check_errors(spec: &str, err: &ParseError) -> Result<(), String> {
    if !(1..=MAX_ERRORS).contains(&err.len()) || err.iter().count() != err.len() {
        return Err(format!("{} errors reported", err.len()));
    }
    for e in err {
        let span = e.span();
        if span.start > span.end || span.end > spec.len() {
            return Err(format!(
                "span {span:?} outside the input ({} bytes) for `{e}`",
                spec.len()
            ));
        }
        if !spec.is_char_boundary(span.start) || !spec.is_char_boundary(span.end) {
            return Err(format!("span {span:?} splits a character for `{e}`"));
        }
        if no_panic("error Display", || e.to_string())?.is_empty() {
            return Err(format!("empty message for {:?}", e.kind()));
        }
    }
    no_panic("report", || err.report(spec).to_string())?;
    no_panic("ParseError Display", || err.to_string())?;
    Ok(())
}

/// Offset and inverse agree at `index`, which lies inside the dims.
fn check_index(l: &Layout, index: &[usize]) -> Result<(), String> {
    let off = l.offset(index);
    if off >= l.storage_len() {
        return Err(format!(
            "offset({index:?}) = {off} is not below storage_len {}",
            l.storage_len()
        ));
    }
    if l.try_offset(index) != Some(off) {
        return Err(format!("try_offset({index:?}) is not Some({off})"));
    }
    match l.index_of(off) {
        Some(back) if *back == *index => Ok(()),
        other => Err(format!("index_of({off}) = {other:?}, expected {index:?}")),
    }
}

/// The invariants of a layout answer: round trip, sizes, and a few indices.
fn check_layout(l: &Layout, rng: &mut Rng) -> Result<(), String> {
    let text = l.to_string();
    match parse(&text) {
        Ok(again) if again == *l && again.to_string() == text => {}
        Ok(again) => {
            return Err(format!(
                "Display gave `{text}`, which parses to `{again}`, a different layout"
            ))
        }
        Err(e) => return Err(format!("Display gave `{text}`, which does not parse: {e}")),
    }
    let bytes = (l.storage_len() as u128 * u128::from(l.element_bits())).div_ceil(8);
    if bytes != l.storage_bytes() as u128 {
        return Err(format!(
            "storage_bytes {} but {} slots of {} bits",
            l.storage_bytes(),
            l.storage_len(),
            l.element_bits()
        ));
    }
    if l.len() > l.storage_len() {
        return Err(format!(
            "len {} exceeds storage_len {}",
            l.len(),
            l.storage_len()
        ));
    }
    let rank = l.rank();
    if !l.is_empty() {
        let zeros = vec![0; rank];
        let last: Vec<usize> = l.dims().iter().map(|d| d - 1).collect();
        let any: Vec<usize> = l.dims().iter().map(|&d| rng.pick(d)).collect();
        for index in [&zeros, &last, &any] {
            check_index(l, index)?;
        }
    }
    // Misuse has defined answers, and none panics.
    if rank > 0 && l.try_offset(l.dims()).is_some() {
        return Err("try_offset(dims) is Some".into());
    }
    if l.try_offset(&vec![0; rank + 1]).is_some() {
        return Err("try_offset of a too-long index is Some".into());
    }
    // `offset` checks the index in debug builds; the arithmetic under it
    // must not overflow-panic on any index, which the program shows directly.
    let mut scratch = [0; xla_layout::MAX_PROGRAM_STEPS];
    let _ = l
        .offset_program()
        .eval(&vec![usize::MAX; rank], &mut scratch);
    let _ = l.offset_program().eval(&[], &mut scratch);
    if !cfg!(debug_assertions) {
        let _ = l.offset(&vec![usize::MAX; rank]);
        let _ = l.offset(&[]);
    }
    for off in [l.storage_len(), usize::MAX] {
        if l.index_of(off).is_some() {
            return Err(format!("index_of({off}) past storage is Some"));
        }
    }
    Ok(())
}

/// Parses any text and checks whichever answer it gets.
fn check_any(spec: &str, rng: &mut Rng) -> Result<Result<Layout, ParseError>, String> {
    let parsed = no_panic("parse", || parse(spec))?;
    match &parsed {
        Err(err) => check_errors(spec, err)?,
        Ok(l) => no_panic("a Layout method", || check_layout(l, rng))??,
    }
    Ok(parsed)
}

/// A valid generated spec: the layout says what the text says.
fn check_fields(g: &GenSpec, l: &Layout) -> Result<(), String> {
    let tiles = common::check::ref_tiles(l);
    let mut wrong = String::new();
    let mut differ = |what: &str, got: String, want: String| {
        if got != want {
            let _ = write!(wrong, " {what}: got {got}, want {want};");
        }
    };
    differ("type", l.element_type().name().into(), g.type_name.into());
    differ("dims", format!("{:?}", l.dims()), format!("{:?}", g.dims));
    let dynamic: Vec<bool> = (0..l.rank()).map(|d| l.is_dynamic_dim(d)).collect();
    differ(
        "dynamic",
        format!("{dynamic:?}"),
        format!("{:?}", g.dynamic),
    );
    differ(
        "minor_to_major",
        format!("{:?}", l.minor_to_major()),
        format!("{:?}", g.minor_to_major),
    );
    differ("tiles", format!("{tiles:?}"), format!("{:?}", g.tiles));
    differ(
        "L",
        l.tail_alignment().to_string(),
        g.tail_alignment.to_string(),
    );
    differ(
        "E",
        format!("{:?}", l.explicit_element_bits()),
        format!("{:?}", g.element_bits),
    );
    differ(
        "S",
        l.memory_space().to_string(),
        g.memory_space.to_string(),
    );
    differ("Display", l.to_string(), g.canonical());
    differ("len", l.len().to_string(), g.exact_len().to_string());
    differ(
        "storage_len",
        l.storage_len().to_string(),
        g.exact_storage_len().to_string(),
    );
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong layout:{wrong}"))
    }
}

/// A small valid spec, slot by slot against the plain reference.
fn check_reference(g: &GenSpec, l: &Layout) -> Result<(), String> {
    let reference = RefLayout::from(g);
    let slots = reference.slots();
    if slots.len() != l.storage_len() {
        return Err(format!(
            "storage_len {}, reference {}",
            l.storage_len(),
            slots.len()
        ));
    }
    for (slot, entry) in slots.iter().enumerate() {
        let got = l.index_of(slot);
        match entry {
            Some(index) => {
                if l.offset(index) != slot {
                    return Err(format!(
                        "offset({index:?}) = {}, reference {slot}",
                        l.offset(index)
                    ));
                }
                if got.as_deref() != Some(&index[..]) {
                    return Err(format!("index_of({slot}) = {got:?}, reference {index:?}"));
                }
            }
            None if got.is_some() => {
                return Err(format!("index_of({slot}) = {got:?}, reference: padding"))
            }
            None => {}
        }
    }
    Ok(())
}

/// Checks one generated spec; returns whether it was small enough for the reference.
fn check_generated(g: &GenSpec, rng: &mut Rng, stats: &mut Stats) -> Result<(), String> {
    match check_any(&g.text, rng)? {
        Ok(l) => {
            stats.valid += 1;
            check_fields(g, &l)?;
            if g.is_small() && rng.one_in(8) {
                stats.reference += 1;
                no_panic("the reference comparison", || check_reference(g, &l))??;
            }
        }
        Err(err) if g.fits() => {
            // The program limit is the one limit a spec within every size
            // bound may still reach; anything else is a wrong rejection.
            if err
                .iter()
                .all(|e| matches!(e.kind(), ErrorKind::ProgramTooLarge { .. }))
            {
                stats.program_limit += 1;
            } else {
                return Err(format!("a valid spec was rejected: {err}"));
            }
        }
        Err(_) => stats.too_large += 1,
    }
    Ok(())
}

#[derive(Debug, Default)]
struct Stats {
    generated: usize,
    valid: usize,
    reference: usize,
    program_limit: usize,
    too_large: usize,
    mutated: usize,
    mutated_valid: usize,
}

#[test]
fn hundred_thousand_generated_and_mutated_specs() {
    let total =
        env_number("XLA_LAYOUT_FUZZ_INPUTS").map_or(MIN_INPUTS, |n| (n as usize).max(MIN_INPUTS));
    let seed = env_number("XLA_LAYOUT_FUZZ_SEED").unwrap_or(0x0005_eed0_f0bb_1e55);
    let golden: Vec<&str> = common::golden::specs()
        .chain(EXTRA.iter().copied())
        .collect();
    let mut rng = Rng::new(seed);
    let mut stats = Stats::default();
    let mut failures = Vec::new();
    let started = Instant::now();
    let mut parent = generate(&mut rng);
    for i in 0..total {
        // One generated spec in three; the others damage the latest one (or a
        // golden spec), splicing in text from a fresh one.
        let result = if i % 3 == 0 {
            parent = generate(&mut rng);
            stats.generated += 1;
            check_generated(&parent, &mut rng, &mut stats)
                .map(|()| parent.text.clone())
                .map_err(|e| format!("{:?}: {e}", parent.text))
        } else {
            let base = if rng.one_in(10) {
                (*rng.choose(&golden)).to_string()
            } else {
                parent.text.clone()
            };
            let donor = generate(&mut rng).text;
            let input = mutate(&mut rng, &base, &donor);
            stats.mutated += 1;
            match check_any(&input, &mut rng) {
                Ok(Ok(_)) => {
                    stats.mutated_valid += 1;
                    Ok(input)
                }
                Ok(Err(_)) => Ok(input),
                Err(e) => Err(format!("{input:?}: {e}")),
            }
        };
        if let Err(e) = result {
            failures.push(e);
            if failures.len() == 20 {
                break;
            }
        }
    }
    let elapsed = started.elapsed();
    println!(
        "seed {seed:#x}: {} inputs in {elapsed:.2?} ({:.2?} each); {stats:?}",
        stats.generated + stats.mutated,
        elapsed / u32::try_from(stats.generated + stats.mutated).unwrap_or(u32::MAX)
    );
    assert!(
        failures.is_empty(),
        "{} failures (seed {seed:#x}):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(stats.generated + stats.mutated >= MIN_INPUTS);
    // The generator must mostly produce specs that parse, or it tests little.
    assert!(stats.valid * 2 > stats.generated, "{stats:?}");
}
