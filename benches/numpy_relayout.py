#!/usr/bin/env python3
"""Bulk relayout against numpy's pad-reshape-transpose copy.

Runs the Rust measurements (`RELAYOUT_TIMINGS=1 cargo bench --bench relayout`,
see benches/relayout.rs), times numpy doing the same relayout the way
SPEC.md section 4 describes it (pad each tiled dim, reshape into (count,
tile), transpose the tile dims inwards, copy), and prints numpy time / our
time for every case. Both sides see the same arrays: 64 MiB of logical data.

Usage, from anywhere:  python3 benches/numpy_relayout.py
Exits 0 with a message, doing nothing, when numpy is not installed.
"""

import os
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipping the numpy comparison (pip install numpy to run it)")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = 5


def median_seconds(f):
    f()
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tile_8x128(a, inner_rows=1, out=None, padded=None):
    """Row-major 2-D `a` to `T(8,128)`, then `(inner_rows,1)` when inner_rows > 1.

    With `out` (and `padded`, for ragged shapes) the copy goes into those
    preallocated buffers instead of fresh ones.
    """
    rows, cols = a.shape
    pr, pc = -rows % 8, -cols % 128
    if pr or pc:
        if padded is None:
            a = np.pad(a, ((0, pr), (0, pc)))
        else:
            padded[:rows, :cols] = a
            padded[rows:, :] = 0
            padded[:rows, cols:] = 0
            a = padded
    r8, c128 = a.shape[0] // 8, a.shape[1] // 128
    k = inner_rows
    t = a.reshape(r8, 8 // k, k, c128, 128).transpose(0, 3, 1, 4, 2)
    if out is None:
        return np.ascontiguousarray(t).reshape(-1)
    np.copyto(out.reshape(r8, c128, 8 // k, 128, k), t)
    return out


def untile_8x128(flat, rows, cols, inner_rows=1, order="C", out=None):
    """The inverse of tile_8x128, into a `rows` x `cols` array in `order`."""
    r8, c128 = -(-rows // 8), -(-cols // 128)
    k = inner_rows
    t = flat.reshape(r8, c128, 8 // k, 128, k).transpose(0, 2, 4, 1, 3)
    a = t.reshape(r8 * 8, c128 * 128)[:rows, :cols]
    if out is not None:
        np.copyto(out, a)
        return out
    return np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)


def pack_s4(a):
    """`s4[..]{1,0:T(8,128)(8,1)E(4)}`: tile, then two values per byte, first in the low nibble."""
    flat = tile_8x128(a, 8).view(np.uint8)
    return (flat[0::2] & 0xF) | (flat[1::2] << 4)


def unpack_s4(b, rows, cols):
    nibbles = np.empty(b.size * 2, dtype=np.uint8)
    nibbles[0::2] = b & 0xF
    nibbles[1::2] = b >> 4
    signed = ((nibbles.astype(np.int8) << 4) >> 4).astype(np.int8)
    return untile_8x128(signed, rows, cols, 8)


def numpy_cases():
    """(case, operation) -> (seconds into fresh arrays, seconds into preallocated ones)."""
    out = {}

    def both(key, fresh, reuse):
        out[key] = (median_seconds(fresh), median_seconds(reuse) if reuse else None)

    for case, n in (("f32_8x128", 4096), ("f32_ragged_4093", 4093)):
        a = np.arange(n * n, dtype=np.float32).reshape(n, n)
        t = tile_8x128(a)
        buf, pad, back = np.empty_like(t), np.empty((-(-n // 8) * 8, -(-n // 128) * 128), np.float32), np.empty_like(a)
        both((case, "pack"), lambda: tile_8x128(a), lambda: tile_8x128(a, out=buf, padded=pad))
        both((case, "unpack"), lambda: untile_8x128(t, n, n), lambda: untile_8x128(t, n, n, out=back))
    for case, dtype, shape, k in (
        ("bf16_8x128_2x1", np.uint16, (4096, 8192), 2),
        ("s8_8x128_4x1", np.int8, (8192, 8192), 4),
    ):
        a = np.arange(shape[0] * shape[1], dtype=np.int64).astype(dtype).reshape(shape)
        t = tile_8x128(a, k)
        buf, back = np.empty_like(t), np.empty_like(a)
        both((case, "pack"), lambda: tile_8x128(a, k), lambda: tile_8x128(a, k, out=buf))
        both((case, "unpack"), lambda: untile_8x128(t, *shape, k), lambda: untile_8x128(t, *shape, k, out=back))
    a = np.asfortranarray(np.arange(4096 * 4096, dtype=np.float32).reshape(4096, 4096))
    t = tile_8x128(a)
    buf, back = np.empty_like(t), np.empty_like(a)
    both(("f32_column_major", "convert"), lambda: tile_8x128(a), lambda: tile_8x128(a, out=buf))
    both(
        ("f32_column_major", "convert_back"),
        lambda: untile_8x128(t, 4096, 4096, order="F"),
        lambda: untile_8x128(t, 4096, 4096, out=back),
    )
    a = (np.arange(8192 * 8192, dtype=np.int64) % 16 - 8).astype(np.int8).reshape(8192, 8192)
    b = pack_s4(a)
    assert np.array_equal(unpack_s4(b, 8192, 8192), a)
    both(("s4_8x128_8x1", "pack"), lambda: pack_s4(a), None)
    both(("s4_8x128_8x1", "unpack"), lambda: unpack_s4(b, 8192, 8192), None)
    return out


def rust_cases():
    env = dict(os.environ, RELAYOUT_TIMINGS="1")
    run = subprocess.run(
        ["cargo", "bench", "--bench", "relayout"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    out = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        # `case operation seconds best_copy_ratio r memcpy_ratio m best_copy name`
        if len(parts) == 9 and parts[3] == "best_copy_ratio":
            out[parts[0], parts[1]] = (float(parts[2]), float(parts[4]))
    return out


def main():
    ours = rust_cases()
    theirs = numpy_cases()
    print(f"numpy {np.__version__}; medians; ratios are numpy time / our time")
    print("numpy (fresh): the idiom, a new array per call; numpy (reuse): np.copyto into preallocated buffers")
    header = ("case", "operation", "ours (s)", "ours/copy", "numpy fresh", "ratio", "numpy reuse", "ratio")
    print(f"{header[0]:18} {header[1]:13} {header[2]:>9} {header[3]:>11} {header[4]:>11} {header[5]:>6} {header[6]:>11} {header[7]:>6}")
    for key in sorted(theirs):
        if key not in ours:
            print(f"{key[0]:18} {key[1]:13} (no Rust timing)")
            continue
        seconds, copy_ratio = ours[key]
        fresh, reuse = theirs[key]
        reuse_text = f"{reuse:11.4f} {reuse / seconds:5.1f}x" if reuse else f"{'-':>11} {'-':>6}"
        print(
            f"{key[0]:18} {key[1]:13} {seconds:9.4f} {copy_ratio:11.2f} "
            f"{fresh:11.4f} {fresh / seconds:5.1f}x {reuse_text}"
        )


if __name__ == "__main__":
    main()
