//! The cases the relayout timings run, in the order they print them:
//! one list for `benches/relayout.rs` (`RELAYOUT_TIMINGS=1`) and for the
//! program `benches/relayout_ab.py` builds, so that the two time the same
//! layouts.

/// Calls `$pack!(case, spec, goal, (element, stored), (pack, unpack,
/// storage), make)` for each layout packed from and unpacked to a
/// row-major array of `element`s (`make(i)` the `i`-th) into `stored`s,
/// through the `Layout` methods `pack` and `unpack`, `storage` of them
/// long (`pack_bits` for the sub-byte layout), and `$convert!(case, from,
/// to, element, make)` for each conversion there and back. `goal` is one
/// of the idents `WHOLE`, `NARROW` and `PERMUTED`, which the caller may
/// define or ignore.
macro_rules! relayout_cases {
    ($pack:ident, $convert:ident) => {
        $pack!(
            "f32_8x128",
            "f32[4096,4096]{1,0:T(8,128)}",
            WHOLE,
            (f32, f32),
            (pack, unpack, storage_len),
            |i| i as f32
        );
        $pack!(
            "f32_ragged_4093",
            "f32[4093,4093]{1,0:T(8,128)}",
            WHOLE,
            (f32, f32),
            (pack, unpack, storage_len),
            |i| i as f32
        );
        // Rows of 2 KiB, four tiles a row.
        $pack!(
            "f32_512_cols",
            "f32[32768,512]{1,0:T(8,128)}",
            WHOLE,
            (f32, f32),
            (pack, unpack, storage_len),
            |i| i as f32
        );
        // Rows of 4000 bytes: on 16 bytes, on a line only every fourth.
        $pack!(
            "f32_1000_cols",
            "f32[16384,1000]{1,0:T(8,128)}",
            WHOLE,
            (f32, f32),
            (pack, unpack, storage_len),
            |i| i as f32
        );
        $pack!(
            "bf16_8x128_2x1",
            "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
            WHOLE,
            (u16, u16),
            (pack, unpack, storage_len),
            |i| i as u16
        );
        $pack!(
            "s8_8x128_4x1",
            "s8[8192,8192]{1,0:T(8,128)(4,1)}",
            NARROW,
            (i8, i8),
            (pack, unpack, storage_len),
            |i| i as i8
        );
        // `s4` packed two to a byte, in XLA's TPU tiling for 4-bit types.
        $pack!(
            "s4_8x128_8x1",
            "s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}",
            NARROW,
            (i8, u8),
            (pack_bits, unpack_bits, storage_bytes),
            |i| (i % 16) as i8 - 8
        );
        $convert!(
            "f32_column_major",
            "f32[4096,4096]{0,1}",
            "f32[4096,4096]{1,0:T(8,128)}",
            f32,
            |i| i as f32
        );
        $convert!(
            "f32_transpose",
            "f32[4096,4096]{0,1}",
            "f32[4096,4096]{1,0}",
            f32,
            |i| i as f32
        );
        // The 4-D permutation untiled, in `f32` as transpose libraries
        // (HPTT) take it: the destination's minor dimension, 64 elements,
        // strided by 2 MiB in the source.
        $convert!(
            "f32_4d_permute_untiled",
            "f32[32,64,64,128]{3,2,1,0}",
            "f32[32,64,64,128]{1,3,2,0}",
            f32,
            |i| i as f32
        );
        // The major dims swapped, the minor one kept: runs of a line, a
        // page apart on one side ([seq, heads, dim] to heads first).
        $pack!(
            "f32_runs_permute",
            "f32[4096,256,16]{2,0,1}",
            PERMUTED,
            (f32, f32),
            (pack, unpack, storage_len),
            |i| i as f32
        );
        // Runs of 32 bytes, a kilobyte apart on one side.
        $pack!(
            "bf16_runs_permute_4d",
            "bf16[16,4096,32,16]{3,1,2,0}",
            PERMUTED,
            (u16, u16),
            (pack, unpack, storage_len),
            |i| i as u16
        );
        $convert!(
            "bf16_4d_permute",
            "bf16[64,64,64,128]{3,2,1,0}",
            "bf16[64,64,64,128]{1,3,2,0:T(8,128)(2,1)}",
            u16,
            |i| i as u16
        );
    };
}
