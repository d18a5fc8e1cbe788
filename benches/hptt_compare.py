#!/usr/bin/env python3
"""The pure transposes through HPTT and through this crate, alternated.

HPTT (https://github.com/springer13/hptt) is the reference tensor
transpose library. This script builds `benches/hptt/driver.cpp` against an
HPTT build of your own (`make avx` in its checkout, which leaves
`lib/libhptt.a`), then runs, `--runs` times over: the driver on one
thread, the relayout bench's transposes (`RELAYOUT_TIMINGS=1
RELAYOUT_CASES=f32_transpose,f32_4d_permute_untiled cargo bench --bench
relayout`, one thread and two), the driver on two threads. Each side quotes
its times as fractions of the best copy timed in its own rounds, so the
two compare through that ceiling, not through times taken minutes apart
on a shared host.

    python3 benches/hptt_compare.py --hptt ~/src/hptt [--runs 3] [--estimate]

`--estimate` plans HPTT by its performance model instead of by measuring
candidates (HPTT's `MEASURE`, the default here, about ten seconds a plan).
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benches" / "hptt" / "driver.cpp"
CASES = "f32_transpose,f32_4d_permute_untiled"
# As many rounds as the bench's `measure` takes.
ROUNDS = "11"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hptt", required=True, type=pathlib.Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--estimate", action="store_true")
    args = parser.parse_args()
    library = args.hptt / "lib" / "libhptt.a"
    if not library.is_file():
        sys.exit(f"error: no `{library}`: run `make avx` in the HPTT checkout first")
    with tempfile.TemporaryDirectory(prefix="hptt_compare.") as work:
        driver = pathlib.Path(work) / "driver"
        cxx = os.environ.get("CXX", "g++")
        subprocess.run(
            [cxx, "-O3", "-std=c++17", "-march=native", "-fopenmp",
             f"-I{args.hptt / 'include'}", str(DRIVER), str(library), "-o", str(driver)],
            check=True,
        )
        plan = "estimate" if args.estimate else "measure"
        bench = ["cargo", "bench", "--quiet", "--bench", "relayout"]
        env = dict(os.environ, RELAYOUT_TIMINGS="1", RELAYOUT_CASES=CASES)
        subprocess.run(bench + ["--no-run"], cwd=ROOT, check=True)
        for run in range(args.runs):
            print(f"# run {run + 1} of {args.runs}")
            sys.stdout.flush()
            subprocess.run([str(driver), "1", ROUNDS, plan], check=True)
            ours = subprocess.run(bench, cwd=ROOT, env=env, check=True,
                                  stdout=subprocess.PIPE, text=True).stdout
            print("".join(l + "\n" for l in ours.splitlines() if "best_copy_ratio" in l), end="")
            sys.stdout.flush()
            subprocess.run([str(driver), "2", ROUNDS, plan], check=True)


if __name__ == "__main__":
    main()
