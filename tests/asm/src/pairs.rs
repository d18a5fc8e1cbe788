// The pairs compared by `tests/asm_check.rs`: a spec, the name of the
// function that calls `offset` of its `layout!`, the name of the function
// with the best formula a person would write by hand, and that formula.
// Included by `src/lib.rs` (as `#[no_mangle]` functions, for the assembly)
// and by `tests/asm_check.rs` (to prove each formula equals the layout).
//
// The hand-written formulas use what their author knows and the compiler
// cannot see: which values are in range, which fields of the offset occupy
// disjoint bits, that `c % t = c - (c / t) * t` (so the remainder costs
// nothing once the quotient is known), and Horner's rule.

pairs! {
    // (i/8, j/128, (i%8)/2, j%128, i%2) with strides 8192, 1024, 256, 2, 1:
    // the fields of one input summed together.
    "bf16[1024,1024]{1,0:T(8,128)(2,1)}" => generated_bf16_tpu, hand_bf16_tpu
        |i, j| ((i >> 3) << 13) + ((i & 6) << 7) + (i & 1) + ((j >> 7) << 10) + ((j & 127) << 1);

    // Dim 1 is major: (j/8, i/128, j%8, i%128) with strides 8192 (8 row
    // tiles of 1024), 1024, 128, 1.
    "f32[1000,1000]{0,1:T(8,128)}" => generated_f32_column_major, hand_f32_column_major
        |i, j| ((j >> 3) << 13) | ((i >> 7) << 10) | ((j & 7) << 7) | (i & 127);

    // SPEC.md's combining example: f32[112,110]{1,0:T(2,3)} at
    // (r, c) = (a*56 + b*8 + d, e*10 + f), so (r/2, c/3, r%2, c%3) with strides
    // 222 (37 tiles of 6), 6, 3, 1; (r/2)*222 + (r%2)*3 = r*111 - (r%2)*108,
    // r%2 = d%2, and (c/3)*6 + c%3 = c + (c/3)*3.
    "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}" => generated_combined, hand_combined
        |a, b, d, e, f| {
            let c = e * 10 + f;
            ((a * 7 + b) * 8 + d) * 111 - (d & 1) * 108 + c + (c / 3) * 3
        };

    // Tiles of no power of two: (i/3, j/5, i%3, j%5) with strides 300 (20
    // tiles of 15), 15, 5, 1, which is 5*(i + (i/3)*57 + (j/5)*2) + j.
    "f32[100,100]{1,0:T(3,5)}" => generated_odd_tile, hand_odd_tile
        |i, j| (i + (i / 3) * 57 + (j / 5) * 2) * 5 + j;

    // Level 1 gives (9, 4, 2, 3, 7); level 2 pads the tile's 3 rows to 5:
    // (9, 4, 2, 1, 7, 5, 1), index (i, j/3, k/7, 0, k%7, j%3, 0), strides
    // (280, 70, 35, 35, 5, 1, 1). (k/7)*35 + (k%7)*5 = k*5 and
    // (j/3)*70 + j%3 = j + (j/3)*67.
    "s32[9,10,11]{2,1,0:T(3,7)(5,1)}" => generated_odd_tile_3d, hand_odd_tile_3d
        |i, j, k| i * 280 + j + (j / 3) * 67 + k * 5;

    // SPEC.md's Figure 1: (i/2, j/2, i%2, j%2) with strides 12, 4, 2, 1,
    // which is 8*(i/2) + 2i + 2j - j%2.
    "f32[3,5]{1,0:T(2,2)}" => generated_figure1, hand_figure1
        |i, j| (i >> 1) * 8 + i * 2 + j * 2 - (j & 1);

    // (e/1024, (e%1024)/256, e%128, (e/128)%2) with strides 1024, 256, 2, 1:
    // the first two fields are e's bits from 8 up, in place.
    "bf16[2048]{0:T(1024)(128)(2,1)}" => generated_bf16_rank1, hand_bf16_rank1
        |e| (e & !255) | ((e & 127) << 1) | ((e >> 7) & 1);

    // (i/8, j/128, (i%8)/4, j%128, i%4) with strides 2048, 1024, 512, 4, 1.
    "s8[64,256]{1,0:T(8,128)(4,1)}" => generated_s8_tpu, hand_s8_tpu
        |i, j| ((i >> 3) << 11) + ((i & 4) << 7) + (i & 3) + ((j >> 7) << 10) + ((j & 127) << 2);

    // The second tile reaches into the tile counts: (i/4, j/4, i%2, j%4,
    // (i/2)%2) with strides 32, 16, 8, 2, 1; i's fields other than bit 1 move
    // up by 3, and (j/4)*16 + (j%4)*2 = 2*(j + (j & !3)).
    "f32[8,8]{1,0:T(2,4)(2,1,1,1)}" => generated_cross_tile, hand_cross_tile
        |i, j| ((i & !2) << 3) + ((i >> 1) & 1) + ((j + (j & !3)) << 1);

    // Untiled and column-major: dim 0 varies fastest.
    "f32[1000,1000]{0,1}" => generated_f32_untiled_column_major, hand_f32_untiled_column_major
        |i, j| j * 1000 + i;

    // Untiled, by Horner's rule.
    "f32[4,5,6]" => generated_row_major_3d, hand_row_major_3d
        |i, j, k| (i * 5 + j) * 6 + k;
}
