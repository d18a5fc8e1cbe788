//! C = A x B on TPU-tiled storage, tile by tile with tensors.
//!
//! ```sh
//! cargo run --release --example matmul
//! cargo run --release --example matmul --features half   # and a bf16 B
//! ```
//!
//! All three matrices are `f32` in `T(8,128)` layouts: every tile is 8 rows
//! of 128 contiguous values. For each tile of C, the kernel takes the A tile
//! of its rows and, 8 rows of B at a time, the B tile of its columns, and
//! adds `a[r][k] * b[k][..]` into C's rows: every inner loop runs over 128
//! contiguous values, with no index arithmetic per element. With the `half`
//! feature, B is also stored as `bf16` in the TPU's `(8,128)(2,1)` layout,
//! where each tile is itself tiled by `(2,1)`: rows come in interleaved pairs.
//!
//! `benches/matmul.rs` times this kernel against the same algorithm with
//! hand-written addressing, and against the naive row-major triple loop.

use xla_layout::{layout, tensor::Tensor, StaticLayout};

/// Rows of A and C.
pub const M: usize = 256;
/// Columns of A, rows of B.
pub const K: usize = 256;
/// Columns of B and C.
pub const N: usize = 256;

layout!(pub struct ALayout = "f32[256,256]{1,0:T(8,128)}");
layout!(pub struct BLayout = "f32[256,256]{1,0:T(8,128)}");
layout!(pub struct CLayout = "f32[256,256]{1,0:T(8,128)}");

// The kernels walk whole tiles: the dims are multiples of the tile.
const _: () = {
    assert!(ALayout::DIMS[0] == M && ALayout::DIMS[1] == K);
    assert!(BLayout::DIMS[0] == K && BLayout::DIMS[1] == N);
    assert!(CLayout::DIMS[0] == M && CLayout::DIMS[1] == N);
    assert!(M % 8 == 0 && K % 128 == 0 && N % 128 == 0);
};

/// C = A x B, tile by tile. Each tile is `f32[8,128]` in row-major order
/// (the layouts have one tiling level; `tile_layout` says so, see `main`).
///
/// # Panics
///
/// Never: the dims are multiples of the tiles (checked when this compiles),
/// so every tile the kernel asks for exists.
pub fn matmul(
    a: &Tensor<ALayout, &[f32]>,
    b: &Tensor<BLayout, &[f32]>,
    c: &mut Tensor<CLayout, &mut [f32]>,
) {
    let (a_tiles, b_tiles) = (a.tile_grid(), b.tile_grid());
    for (at, c_tile) in c.tiles_mut() {
        c_tile.fill(0.0);
        let [i0, j0] = at.origin;
        for k0 in (0..K).step_by(128) {
            let (_, a_tile) = a_tiles.tile_of(&[i0, k0]).expect("inside A");
            for kb in (0..128).step_by(8) {
                let (_, b_tile) = b_tiles.tile_of(&[k0 + kb, j0]).expect("inside B");
                accumulate(c_tile, a_tile, b_tile, kb);
            }
        }
    }
}

/// The work on one `8x128` tile of C: rows `kb..kb + 8` of B's tile times
/// columns `kb..kb + 8` of A's. Shared by both ways of finding the tiles,
/// so their benchmark compares the addressing alone.
#[inline]
fn accumulate(c_tile: &mut [f32], a_tile: &[f32], b_tile: &[f32], kb: usize) {
    for (r, c_row) in c_tile.chunks_exact_mut(128).enumerate() {
        let a_row = &a_tile[r * 128 + kb..][..8];
        for (&x, b_row) in a_row.iter().zip(b_tile.chunks_exact(128)) {
            for (c, &y) in c_row.iter_mut().zip(b_row) {
                *c += x * y;
            }
        }
    }
}

/// [`matmul`] with each tile found by hand: tile `(ti, tj)` of an
/// `[rows, cols]` `T(8,128)` layout starts at `(ti * cols / 128 + tj) * 1024`.
pub fn matmul_by_hand(a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile = |cols: usize, i: usize, j: usize| {
        let start = ((i / 8) * (cols / 128) + j / 128) * 1024;
        start..start + 1024
    };
    for (n, c_tile) in c.chunks_exact_mut(1024).enumerate() {
        c_tile.fill(0.0);
        let (i0, j0) = ((n / (N / 128)) * 8, (n % (N / 128)) * 128);
        for k0 in (0..K).step_by(128) {
            let a_tile = &a[tile(K, i0, k0)];
            for kb in (0..128).step_by(8) {
                let b_tile = &b[tile(N, k0 + kb, j0)];
                accumulate(c_tile, a_tile, b_tile, kb);
            }
        }
    }
}

/// The naive triple loop over row-major arrays.
pub fn matmul_naive(a: &[f32], b: &[f32], c: &mut [f32]) {
    for i in 0..M {
        for j in 0..N {
            let mut sum = 0.0;
            for k in 0..K {
                sum += a[i * K + k] * b[k * N + j];
            }
            c[i * N + j] = sum;
        }
    }
}

/// B as `bf16` in the TPU's `(8,128)(2,1)` layout (feature `half`).
#[cfg(feature = "half")]
pub mod bf16 {
    use super::{ALayout, CLayout, K};
    use xla_layout::relayout::half::bf16;
    use xla_layout::{layout, tensor::Tensor};

    layout!(pub struct B16Layout = "bf16[256,256]{1,0:T(8,128)(2,1)}");

    /// C = A x B with a `bf16` B. A tile of B is `bf16[8,128]{1,0:T(2,1)}`:
    /// its 256-value chunks are pairs of rows, interleaved.
    ///
    /// # Panics
    ///
    /// Never, as [`super::matmul`].
    pub fn matmul(
        a: &Tensor<ALayout, &[f32]>,
        b: &Tensor<B16Layout, &[bf16]>,
        c: &mut Tensor<CLayout, &mut [f32]>,
    ) {
        let (a_tiles, b_tiles) = (a.tile_grid(), b.tile_grid());
        for (at, c_tile) in c.tiles_mut() {
            c_tile.fill(0.0);
            let [i0, j0] = at.origin;
            for k0 in (0..K).step_by(128) {
                let (_, a_tile) = a_tiles.tile_of(&[i0, k0]).expect("inside A");
                for kb in (0..128).step_by(8) {
                    let (_, b_tile) = b_tiles.tile_of(&[k0 + kb, j0]).expect("inside B");
                    for (r, c_row) in c_tile.chunks_exact_mut(128).enumerate() {
                        let a_row = &a_tile[r * 128 + kb..][..8];
                        for (x, pair) in a_row.chunks_exact(2).zip(b_tile.chunks_exact(256)) {
                            for (c, y) in c_row.iter_mut().zip(pair.chunks_exact(2)) {
                                *c += x[0] * y[0].to_f32() + x[1] * y[1].to_f32();
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Small integers, so every product and sum is exact in `f32` and `bf16`.
pub fn inputs() -> (Vec<f32>, Vec<f32>) {
    let small = |x: usize, m: u8| f32::from(u8::try_from(x % usize::from(m)).unwrap_or(0));
    let a = (0..M * K).map(|x| small(x, 5) - 2.0).collect();
    let b = (0..K * N).map(|x| small(x, 7) - 3.0).collect();
    (a, b)
}

#[allow(
    dead_code,
    reason = "the benchmark includes this file without its `main`"
)]
fn main() {
    let (a_rm, b_rm) = inputs();
    let (mut a_storage, mut b_storage) = (
        vec![0.0; ALayout::STORAGE_LEN],
        vec![0.0; BLayout::STORAGE_LEN],
    );
    ALayout
        .pack(&a_rm, &mut a_storage, xla_layout::Options::default())
        .unwrap();
    BLayout
        .pack(&b_rm, &mut b_storage, xla_layout::Options::default())
        .unwrap();
    let a = Tensor::new(ALayout, &a_storage[..]).unwrap();
    let b = Tensor::new(BLayout, &b_storage[..]).unwrap();
    assert_eq!(a.tile_layout().to_string(), "f32[8,128]{1,0}");
    let mut c_storage = vec![f32::NAN; CLayout::STORAGE_LEN];
    let mut c = Tensor::new(CLayout, &mut c_storage[..]).unwrap();
    matmul(&a, &b, &mut c);

    let mut want = vec![0.0; M * N];
    matmul_naive(&a_rm, &b_rm, &mut want);
    let mut got = vec![0.0; M * N];
    c.to_row_major(&mut got).unwrap();
    assert_eq!(got, want, "tiled kernel against the naive loop");
    let mut by_hand = vec![f32::NAN; CLayout::STORAGE_LEN];
    matmul_by_hand(&a_storage, &b_storage, &mut by_hand);
    assert_eq!(
        by_hand, c_storage,
        "tensor kernel against hand-written addressing"
    );
    println!(
        "C = A x B, {M}x{K} by {K}x{N}, f32 in {}: C[[5, 200]] = {}",
        ALayout::SPEC,
        want[5 * N + 200]
    );

    #[cfg(feature = "half")]
    {
        use xla_layout::relayout::half::bf16 as h;
        let b16_rm: Vec<h> = b_rm.iter().map(|&x| h::from_f32(x)).collect();
        let mut b16_storage = vec![h::ZERO; bf16::B16Layout::STORAGE_LEN];
        bf16::B16Layout
            .pack(&b16_rm, &mut b16_storage, xla_layout::Options::default())
            .unwrap();
        let b16 = Tensor::new(bf16::B16Layout, &b16_storage[..]).unwrap();
        assert_eq!(b16.tile_layout().to_string(), "bf16[8,128]{1,0:T(2,1)}");
        let mut c16_storage = vec![f32::NAN; CLayout::STORAGE_LEN];
        let mut c16 = Tensor::new(CLayout, &mut c16_storage[..]).unwrap();
        bf16::matmul(&a, &b16, &mut c16);
        let mut got = vec![0.0; M * N];
        c16.to_row_major(&mut got).unwrap();
        assert_eq!(got, want, "bf16 B against the naive loop");
        println!("and with B in {}: the same", bf16::B16Layout::SPEC);
    }
}
