#!/usr/bin/env python3
"""Two builds of the relayout code compared in one process.

Builds a program that links `layout-runtime` twice: as `a`, the tree of a
git revision (`--base`, HEAD by default), and as `b`, this working tree.
It runs the relayout bench's cases on the same buffers, round after
round, each round timing `memcpy` of the same logical bytes, then `a` and
`b` in alternating order, and prints per operation the medians of both
and `b / a` (below 1, the working tree is faster). It checks that `b`
gives `a`'s results.

Between processes the relayout bench's ratios to `memcpy` move by a third
on a shared host, so two builds run one after the other compare badly;
in one process, on the same pages, they compare to a few percent. Run it
with `--base` at the working tree's own revision and no changes for the
bias of the method itself (an A/A run).

    python3 benches/relayout_ab.py [--base REV] [--cases a,b] [--rounds 15]
        [--runs 3] [--target-dir DIR]

`--cases` takes parts of case names as `RELAYOUT_CASES` does (all by
default); `--runs` runs the program that many times (each a process of
its own) and prints every run's lines. Everything is built under a
temporary directory, removed at the end, unless `--target-dir` keeps the
build between calls.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
HARNESS = ROOT / "benches" / "relayout_ab" / "harness.rs"
CASES = ROOT / "benches" / "common" / "relayout_cases.rs"


def workspace_package():
    """The `[workspace.package]` fields the runtime's manifest inherits."""
    text = (ROOT / "Cargo.toml").read_text()
    section = text.split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', section, re.M))


def base_runtime(rev, into):
    """`layout-runtime` at `rev`, renamed `layout-runtime-base` with its
    inherited fields filled in, unpacked into `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "layout-runtime"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    crate = into / "layout-runtime"
    manifest = crate / "Cargo.toml"
    fields = workspace_package()
    lines = []
    skip = False
    for line in manifest.read_text().splitlines():
        if line.startswith("["):
            # Lints and dev-dependencies belong to the workspace.
            skip = line.strip() in ("[lints]", "[dev-dependencies]")
        if skip:
            continue
        m = re.match(r"^([\w-]+)\.workspace\s*=\s*true$", line)
        if m:
            key = m.group(1)
            if key in ("version", "edition"):
                lines.append(f'{key} = "{fields[key]}"')
            continue
        if line.startswith("name = "):
            line = 'name = "layout-runtime-base"'
        lines.append(line)
    manifest.write_text("\n".join(lines) + "\n")
    return crate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="HEAD")
    parser.add_argument("--cases", default="all")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target-dir")
    args = parser.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="relayout_ab."))
    try:
        base = base_runtime(args.base, work)
        program = work / "ab"
        (program / "src").mkdir(parents=True)
        shutil.copy(HARNESS, program / "src" / "main.rs")
        # The list of cases, where the harness's `#[path]` finds it.
        (program / "common").mkdir()
        shutil.copy(CASES, program / "common" / "relayout_cases.rs")
        (program / "Cargo.toml").write_text(
            f"""[package]
name = "relayout-ab"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
a = {{ package = "layout-runtime-base", path = "{base}" }}
b = {{ package = "layout-runtime", path = "{ROOT / 'layout-runtime'}" }}

[workspace]
"""
        )
        target = args.target_dir or str(work / "target")
        subprocess.run(
            ["cargo", "build", "--release", "--quiet"],
            cwd=program,
            check=True,
            env={**__import__("os").environ, "CARGO_TARGET_DIR": target},
        )
        binary = pathlib.Path(target) / "release" / "relayout-ab"
        for run in range(args.runs):
            print(f"# run {run + 1} of {args.runs}: a = {args.base}, b = working tree")
            sys.stdout.flush()
            subprocess.run([str(binary), args.cases, str(args.rounds)], check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
