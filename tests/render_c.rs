//! The C header, compiled with the system C compiler: for the documents'
//! layouts and hundreds of random ones, a C driver prints every index's
//! offset and every slot's index, and the text must equal what the Rust
//! `Layout` gives. The header is included from two files of one program, as
//! C and as C++, compiled for a GPU by `nvcc` where one is installed, and
//! run on the GPU, every index and slot again, where one answers.
//! Skipped, with a message, when no C compiler is found; under `CI=true` a
//! missing compiler fails instead (a missing `nvcc` is only skipped).

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

/// `l`'s dims as the entries of a C array initializer; `0u` for a scalar,
/// whose array must still have one entry.
fn c_dims(l: &Layout) -> String {
    let dims: Vec<String> = l.dims().iter().map(|d| format!("{d}u")).collect();
    if dims.is_empty() {
        "0u".to_string()
    } else {
        dims.join(", ")
    }
}

fn driver(layouts: &[Layout]) -> String {
    let mut c = String::from(DRIVER);
    c.push_str("\nstatic const struct entry layouts[] = {\n");
    for (i, l) in layouts.iter().enumerate() {
        let dims = c_dims(l);
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
fn each_header_stands_alone_and_compiles_as_cuda_style_cpp() {
    let Some(cc) = compiler("CC", "cc") else {
        common::skip("no C compiler (set CC or install cc)");
        return;
    };
    let dir = dir();
    let l = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    let path = dir.join("alone.h");
    std::fs::write(&path, CCode::new(&l).to_string()).unwrap();
    let obj = dir.join("alone.o");
    compile(
        &cc,
        "-std=c99",
        &[
            "-x",
            "c",
            "-c",
            path.to_str().unwrap(),
            "-o",
            obj.to_str().unwrap(),
        ],
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

/// Two files of one program that both include the same two headers (one
/// of them twice), each calling the functions: the program must compile
/// without a warning, link without a duplicate symbol, and compute what
/// Rust does. `main.c` prints the results of both files.
fn two_files(dir: &Path, extension: &str) -> (String, Vec<PathBuf>) {
    let fig1 = parse("f32[3,5]{1,0:T(2,2)}").unwrap();
    let fig2 = parse("bf16[4,8]{1,0:T(2,4)(2,1)}").unwrap();
    std::fs::write(dir.join("fig1.h"), CCode::new(&fig1).to_string()).unwrap();
    std::fs::write(
        dir.join("fig2.h"),
        CCode::with_prefix(&fig2, "fig2").unwrap().to_string(),
    )
    .unwrap();
    let includes = "#include \"fig1.h\"\n#include \"fig2.h\"\n#include \"fig1.h\"\n";
    let other = format!(
        "{includes}\
         size_t other(void);\n\
         size_t other(void)\n{{\n\
         \x20   const size_t index[2] = {{3, 7}};\n\
         \x20   size_t back[2] = {{0, 0}};\n\
         \x20   return fig2_offset(index) * 1000u + (size_t)fig2_index_of(27u, back) * 100u + back[0] * 10u + back[1];\n\
         }}\n"
    );
    let main = format!(
        "#include <stdio.h>\n{includes}\
         size_t other(void);\n\
         int main(void)\n{{\n\
         \x20   const size_t index[2] = {{2, 3}};\n\
         \x20   size_t back[2] = {{0, 0}};\n\
         \x20   int found = xla_layout_index_of(17u, back);\n\
         \x20   printf(\"%lu %d %lu,%lu %lu\\n\", (unsigned long)xla_layout_offset(index), found,\n\
         \x20          (unsigned long)back[0], (unsigned long)back[1], (unsigned long)other());\n\
         \x20   return 0;\n}}\n"
    );
    let sources = [("other", other), ("main", main)].map(|(name, text)| {
        let path = dir.join(format!("{name}.{extension}"));
        std::fs::write(&path, text).unwrap();
        path
    });
    let offset = fig2.offset(&[3, 7]);
    let back = fig2
        .index_of(27)
        .expect("slot 27 of Figure 2 holds an element");
    let want = format!(
        "{} 1 2,3 {}\n",
        fig1.offset(&[2, 3]),
        offset * 1000 + 100 + back[0] * 10 + back[1]
    );
    (want, sources.to_vec())
}

/// Compiles `sources` into one program with `compiler` and the flags, runs
/// it and requires it to print `want`.
fn build_and_run(compiler: &str, flags: &[&str], sources: &[PathBuf], exe: &Path, want: &str) {
    let out = Command::new(compiler)
        .args(flags)
        .args(sources)
        .arg("-o")
        .arg(exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{compiler} {flags:?} {sources:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(exe).output().unwrap();
    assert!(out.status.success(), "{} failed", exe.display());
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}

#[test]
fn the_header_is_included_from_two_c_files() {
    let Some(cc) = compiler("CC", "cc") else {
        common::skip("no C compiler (set CC or install cc)");
        return;
    };
    let dir = dir().join("two-c");
    std::fs::create_dir_all(&dir).unwrap();
    let (want, sources) = two_files(&dir, "c");
    let flags = [
        "-std=c99",
        "-pedantic",
        "-Wall",
        "-Wextra",
        "-Wmissing-prototypes",
        "-Werror",
    ];
    build_and_run(&cc, &flags, &sources, &dir.join("program"), &want);
}

#[test]
fn the_header_is_included_from_two_cpp_files() {
    let Some(cxx) = compiler("CXX", "c++") else {
        common::skip("no C++ compiler (set CXX or install c++)");
        return;
    };
    let dir = dir().join("two-cpp");
    std::fs::create_dir_all(&dir).unwrap();
    let (want, sources) = two_files(&dir, "cpp");
    // `-Wmissing-prototypes` is C's; C++'s counterpart is `-Wmissing-declarations`.
    let flags = [
        "-std=c++11",
        "-pedantic",
        "-Wall",
        "-Wextra",
        "-Wmissing-declarations",
        "-Werror",
    ];
    build_and_run(&cxx, &flags, &sources, &dir.join("program"), &want);
}

/// `nvcc` on `PATH`, else the one the `nvidia-cuda-nvcc` Python package
/// installs (`nvidia/<cuda version>/bin/nvcc` in site-packages).
fn nvcc() -> Option<PathBuf> {
    let runs = |nvcc: &Path| {
        Command::new(nvcc)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if runs(Path::new("nvcc")) {
        return Some(PathBuf::from("nvcc"));
    }
    let found = Command::new("python3")
        .args([
            "-c",
            "import glob, os, nvidia\n\
             for d in nvidia.__path__:\n\
             \x20   for p in sorted(glob.glob(os.path.join(d, '*', 'bin', 'nvcc'))):\n\
             \x20       print(p)",
        ])
        .output()
        .ok()?;
    String::from_utf8_lossy(&found.stdout)
        .lines()
        .map(PathBuf::from)
        .find(|p| runs(p))
}

/// Compiles `source` to `out` with `nvcc` and `args`, every warning an
/// error, and requires success.
fn run_nvcc(nvcc: &Path, args: &[&str], source: &Path, out: &Path) {
    let run = Command::new(nvcc)
        .args(args)
        .args(["-Werror", "all-warnings"])
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{} {args:?} failed:\n{}",
        nvcc.display(),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn the_header_compiles_for_a_gpu_under_nvcc() {
    let Some(nvcc) = nvcc() else {
        // Not a failure under CI=true: a GPU toolkit is not something every
        // machine that runs the tests can be asked to have.
        eprintln!("skipped: no nvcc (on PATH, or from `pip install nvidia-cuda-nvcc`)");
        return;
    };
    let dir = dir().join("nvcc");
    std::fs::create_dir_all(&dir).unwrap();
    let layouts = layouts();
    std::fs::write(dir.join("layouts.h"), unit(&layouts)).unwrap();
    // One kernel calls every layout's functions on the device.
    let mut kernel = String::from(
        "#include \"layouts.h\"\n#include \"layouts.h\"\n\n\
         extern \"C\" __global__ void every_layout(const size_t *index, size_t *out)\n{\n\
         \x20   size_t back[16];\n",
    );
    for i in 0..layouts.len() {
        writeln!(
            kernel,
            "    out[{i}] = l{i}_offset(index) + (size_t)l{i}_index_of(index[0], back);"
        )
        .unwrap();
    }
    kernel.push_str("}\n");
    let source = dir.join("kernel.cu");
    std::fs::write(&source, kernel).unwrap();
    let ptx = dir.join("kernel.ptx");
    run_nvcc(&nvcc, &["-ptx"], &source, &ptx);
    let ptx = std::fs::read_to_string(ptx).unwrap();
    assert!(
        ptx.contains(".entry every_layout"),
        "no kernel in the PTX:\n{ptx}"
    );
}

/// Whether a GPU answers: `nvidia-smi -L` lists one.
fn gpu() -> bool {
    Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("GPU"))
}

/// A CUDA program that evaluates every layout's functions on the GPU, one
/// thread per index and per slot, and prints what [`expected`] prints.
fn gpu_program(layouts: &[Layout]) -> String {
    let mut cu = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"layouts.h\"\n\n\
         #define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \\\n\
         \x20   fprintf(stderr, \"%s: %s\\n\", #x, cudaGetErrorString(e_)); exit(1); } } while (0)\n\n\
         typedef void (*kernel_fn)(size_t, size_t, size_t *, size_t *, int *);\n\
         struct entry { kernel_fn kernel; size_t rank; size_t count; size_t slots; };\n\n",
    );
    for (i, l) in layouts.iter().enumerate() {
        let dims = c_dims(l);
        writeln!(
            cu,
            "__global__ void k{i}(size_t count, size_t slots, size_t *offsets, size_t *indices, int *named)\n{{\n\
             \x20   const size_t dims[] = {{ {dims} }};\n\
             \x20   size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x, index[16], rest = t, d;\n\
             \x20   if (t < count) {{\n\
             \x20       for (d = {rank}; d-- > 0;) {{ index[d] = rest % dims[d]; rest /= dims[d]; }}\n\
             \x20       offsets[t] = l{i}_offset(index);\n\
             \x20   }}\n\
             \x20   if (t < slots) named[t] = l{i}_index_of(t, indices + 16 * t);\n}}\n",
            rank = l.rank(),
        )
        .unwrap();
    }
    cu.push_str(
        "static void run(size_t n, const struct entry *e)\n{\n\
         \x20   size_t threads = e->count > e->slots ? e->count : e->slots, i, d;\n\
         \x20   size_t *offsets, *indices, *host_offsets, *host_indices;\n\
         \x20   int *named, *host_named;\n\
         \x20   CHECK(cudaMalloc(&offsets, (e->count + 1) * sizeof(size_t)));\n\
         \x20   CHECK(cudaMalloc(&indices, 16 * e->slots * sizeof(size_t)));\n\
         \x20   CHECK(cudaMalloc(&named, e->slots * sizeof(int)));\n\
         \x20   e->kernel<<<(unsigned)((threads + 255) / 256), 256>>>(e->count, e->slots, offsets, indices, named);\n\
         \x20   CHECK(cudaGetLastError());\n\
         \x20   CHECK(cudaDeviceSynchronize());\n\
         \x20   host_offsets = (size_t *)malloc((e->count + 1) * sizeof(size_t));\n\
         \x20   host_indices = (size_t *)malloc(16 * e->slots * sizeof(size_t));\n\
         \x20   host_named = (int *)malloc(e->slots * sizeof(int));\n\
         \x20   CHECK(cudaMemcpy(host_offsets, offsets, (e->count + 1) * sizeof(size_t), cudaMemcpyDeviceToHost));\n\
         \x20   CHECK(cudaMemcpy(host_indices, indices, 16 * e->slots * sizeof(size_t), cudaMemcpyDeviceToHost));\n\
         \x20   CHECK(cudaMemcpy(host_named, named, e->slots * sizeof(int), cudaMemcpyDeviceToHost));\n\
         \x20   printf(\"L%lu\\n\", (unsigned long)n);\n\
         \x20   for (i = 0; i < e->count; i++) printf(\"%lu\\n\", (unsigned long)host_offsets[i]);\n\
         \x20   for (i = 0; i < e->slots; i++) {\n\
         \x20       if (!host_named[i]) { puts(\"-\"); continue; }\n\
         \x20       putchar('=');\n\
         \x20       for (d = 0; d < e->rank; d++) printf(d ? \",%lu\" : \"%lu\", (unsigned long)host_indices[16 * i + d]);\n\
         \x20       putchar('\\n');\n\
         \x20   }\n\
         \x20   cudaFree(offsets); cudaFree(indices); cudaFree(named);\n\
         \x20   free(host_offsets); free(host_indices); free(host_named);\n}\n\n\
         static const struct entry layouts[] = {\n",
    );
    for (i, l) in layouts.iter().enumerate() {
        writeln!(
            cu,
            "    {{ k{i}, {}, {}u, {}u }},",
            l.rank(),
            l.len(),
            l.storage_len() + 2
        )
        .unwrap();
    }
    cu.push_str(
        "};\n\nint main(void)\n{\n    size_t n;\n\
         \x20   for (n = 0; n < sizeof layouts / sizeof layouts[0]; n++) run(n, &layouts[n]);\n\
         \x20   return 0;\n}\n",
    );
    cu
}

/// On a machine with a GPU, the header's functions run there, one thread
/// per index and per slot, and agree with Rust on every one.
#[test]
fn the_header_runs_on_a_gpu_and_agrees_with_rust() {
    let Some(nvcc) = nvcc() else {
        eprintln!("skipped: no nvcc (on PATH, or from `pip install nvidia-cuda-nvcc`)");
        return;
    };
    if !gpu() {
        // Compiling for a GPU is checked above; running needs one.
        eprintln!("skipped: no GPU (`nvidia-smi -L` lists none)");
        return;
    }
    let dir = dir().join("gpu");
    std::fs::create_dir_all(&dir).unwrap();
    let layouts = layouts();
    std::fs::write(dir.join("layouts.h"), unit(&layouts)).unwrap();
    let source = dir.join("gpu.cu");
    std::fs::write(&source, gpu_program(&layouts)).unwrap();
    let exe = dir.join("gpu");
    run_nvcc(&nvcc, &["-arch=native", "-O2"], &source, &exe);
    let run = Command::new(&exe).output().unwrap();
    assert!(
        run.status.success(),
        "the GPU program failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got = String::from_utf8(run.stdout).unwrap();
    let want = expected(&layouts);
    let first = got
        .lines()
        .zip(want.lines())
        .position(|(g, w)| g != w)
        .unwrap_or(got.lines().count().min(want.lines().count()));
    assert!(
        got == want,
        "the GPU disagrees with Rust from line {}: got {:?}, want {:?}",
        first + 1,
        got.lines().nth(first),
        want.lines().nth(first)
    );
    eprintln!(
        "{} layouts, {} lines agree on the GPU",
        layouts.len(),
        want.lines().count()
    );
}
