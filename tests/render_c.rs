//! The C emitter, compiled with the system C compiler: for the documents'
//! layouts and hundreds of random ones, a C driver prints every index's
//! offset and every slot's index, and the text must equal what the Rust
//! `Layout` gives. Skipped, with a message, when no C compiler is found; under
//! `CI=true` a missing compiler fails instead.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::reference::{random_layout, Rng};
use xla_layout::render::CCode;
use xla_layout::{parse, Layout};

/// The compiler to use: `$CC`, else `cc`, if it runs.
fn compiler(var: &str, default: &str) -> Option<String> {
    let cc = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let runs = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    runs.then_some(cc)
}

fn layouts() -> Vec<Layout> {
    let mut specs: Vec<String> = [
        "f32[3,5]{1,0:T(2,2)}",
        "bf16[4,8]{1,0:T(2,4)(2,1)}",
        "f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
        "f32[8]{0:T(2,2)}",
        "f32[3]{0:T(8,128)}",
        "bf16[2048]{0:T(1024)(128)(2,1)}",
        "bf16[2,8,128]{2,1,0:T(8,128)(2,1)}",
        "u32[]{:T(128)}",
        "f32[]",
        "f32[10,20]{0,1}",
        "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "s4[1,1023]{1,0:T(2,1024)E(4)}",
        "f32[5]{0:L(4)}",
        "f32[0,5]{1,0:T(2,2)}",
        "pred[40,130]{1,0:T(32,128)(32,1)E(1)}",
    ]
    .map(String::from)
    .to_vec();
    let mut rng = Rng::new(0xC0DE_0001);
    specs.extend((0..200).map(|_| random_layout(&mut rng).spec()));
    specs
        .iter()
        .map(|s| parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect()
}

/// Every index of `dims` in row-major order (none if a dim is 0).
fn indices(dims: &[usize]) -> Vec<Vec<usize>> {
    let count: usize = dims.iter().product();
    (0..count)
        .map(|mut flat| {
            let mut index = vec![0; dims.len()];
            for (slot, &d) in index.iter_mut().zip(dims).rev() {
                *slot = flat % d;
                flat /= d;
            }
            index
        })
        .collect()
}

/// What the C driver must print: per layout, each index's offset, then
/// `index_of` for each slot and two past the end.
fn expected(layouts: &[Layout]) -> String {
    let mut out = String::new();
    for (i, l) in layouts.iter().enumerate() {
        writeln!(out, "L{i}").unwrap();
        for index in indices(l.dims()) {
            writeln!(out, "{}", l.offset(&index)).unwrap();
        }
        for slot in 0..l.storage_len() + 2 {
            match l.index_of(slot) {
                Some(index) => {
                    let text: Vec<String> = index.iter().map(ToString::to_string).collect();
                    writeln!(out, "={}", text.join(",")).unwrap();
                }
                None => out.push_str("-\n"),
            }
        }
    }
    out
}

/// The layouts' functions (prefixes `l0`, `l1`, ...) in one unit.
fn unit(layouts: &[Layout]) -> String {
    layouts
        .iter()
        .enumerate()
        .map(|(i, l)| CCode::with_prefix(l, &format!("l{i}")).unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

const DRIVER: &str = r#"
#include <stdio.h>

typedef size_t (*offset_fn)(const size_t *);
typedef int (*index_of_fn)(size_t, size_t *);
struct entry { offset_fn offset; index_of_fn index_of; size_t rank; size_t dims[16]; size_t storage; };

static void run(size_t n, const struct entry *e)
{
    size_t index[16] = {0};
    size_t count = 1, i, s, d;
    printf("L%lu\n", (unsigned long)n);
    for (d = 0; d < e->rank; d++) count *= e->dims[d];
    for (i = 0; i < count; i++) {
        printf("%lu\n", (unsigned long)e->offset(index));
        for (d = e->rank; d-- > 0;) {
            if (++index[d] < e->dims[d]) break;
            index[d] = 0;
        }
    }
    for (s = 0; s < e->storage + 2; s++) {
        size_t out[16];
        if (e->index_of(s, out)) {
            putchar('=');
            for (d = 0; d < e->rank; d++) printf(d ? ",%lu" : "%lu", (unsigned long)out[d]);
            putchar('\n');
        } else {
            puts("-");
        }
    }
}
"#;

fn driver(layouts: &[Layout]) -> String {
    let mut c = String::from(DRIVER);
    c.push_str("\nstatic const struct entry layouts[] = {\n");
    for (i, l) in layouts.iter().enumerate() {
        let dims: Vec<String> = l.dims().iter().map(|d| format!("{d}u")).collect();
        let dims = if dims.is_empty() {
            "0".to_string()
        } else {
            dims.join(", ")
        };
        writeln!(
            c,
            "    {{ l{i}_offset, l{i}_index_of, {}, {{ {dims} }}, {}u }},",
            l.rank(),
            l.storage_len()
        )
        .unwrap();
    }
    c.push_str("};\n\nint main(void)\n{\n    size_t n;\n");
    c.push_str("    for (n = 0; n < sizeof layouts / sizeof layouts[0]; n++) run(n, &layouts[n]);\n    return 0;\n}\n");
    c
}

fn dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Warnings as errors: what the emitted code promises to compile under.
const STRICT: &[&str] = &["-pedantic", "-Wall", "-Wextra", "-Werror"];

/// Runs `cc` strictly under language `standard`, and requires success.
fn compile(cc: &str, standard: &str, args: &[&str]) {
    let out = Command::new(cc)
        .arg(standard)
        .args(STRICT)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cc} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn c_agrees_with_rust_on_every_index_and_slot() {
    let Some(cc) = compiler("CC", "cc") else {
        common::skip("no C compiler (set CC or install cc)");
        return;
    };
    let layouts = layouts();
    assert!(layouts.len() >= 100);
    let dir = dir();
    let source = dir.join("layouts.c");
    let exe = dir.join("layouts");
    std::fs::write(&source, unit(&layouts) + &driver(&layouts)).unwrap();
    let (src, bin) = (source.to_str().unwrap(), exe.to_str().unwrap());
    compile(&cc, "-std=c99", &["-O1", src, "-o", bin]);
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let got = String::from_utf8(out.stdout).unwrap();
    let want = expected(&layouts);
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let layout = want
            .lines()
            .take(line + 1)
            .filter(|l| l.starts_with('L'))
            .count()
            .saturating_sub(1);
        panic!(
            "C and Rust differ at output line {line}, layout {}",
            layouts[layout]
        );
    }
}

#[test]
fn each_unit_stands_alone_and_compiles_as_cuda_style_cpp() {
    let Some(cc) = compiler("CC", "cc") else {
        common::skip("no C compiler (set CC or install cc)");
        return;
    };
    let dir = dir();
    let l = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    let path = dir.join("alone.c");
    std::fs::write(&path, CCode::new(&l).to_string()).unwrap();
    let obj = dir.join("alone.o");
    compile(
        &cc,
        "-std=c99",
        &["-c", path.to_str().unwrap(), "-o", obj.to_str().unwrap()],
    );
    // CUDA compiles kernels as C++: the unit must be valid C++ too.
    let Some(cxx) = compiler("CXX", "c++") else {
        common::skip("the C++ check: no C++ compiler (set CXX or install c++)");
        return;
    };
    let layouts = layouts();
    let path = dir.join("layouts.cpp");
    std::fs::write(&path, unit(&layouts)).unwrap();
    compile(
        &cxx,
        "-std=c++11",
        &["-fsyntax-only", path.to_str().unwrap()],
    );
}

#[test]
fn wide_constants_demand_a_64_bit_size_t() {
    let small = CCode::new(&parse("f32[3,5]{1,0:T(2,2)}").unwrap()).to_string();
    assert!(!small.contains("needs_64_bit"));
    let wide = CCode::new(&parse("u8[100000,100000]").unwrap()).to_string();
    assert!(
        wide.contains("typedef char xla_layout_needs_64_bit_size_t[sizeof(size_t) >= 8 ? 1 : -1];")
    );
}
