//! The TPU tiling chooser against SPEC.md §6, row by row, and its padding
//! cost where the documents give one.

use xla_layout::tpu::{tpu_layout, tpu_layout_like, tpu_rule};
use xla_layout::{parse, ElementType as E};

fn chosen(element: E, dims: &[usize]) -> String {
    tpu_layout(element, dims).unwrap().to_string()
}

#[test]
fn the_table_of_spec_section_6() {
    // 32-bit: (8,128).
    assert_eq!(chosen(E::F32, &[16, 256]), "f32[16,256]{1,0:T(8,128)}");
    assert_eq!(chosen(E::S32, &[3, 9, 130]), "s32[3,9,130]{2,1,0:T(8,128)}");
    // Second-minor dim of size 1 or 2, and 3 or 4.
    for (second, rows) in [(1, 2), (2, 2), (3, 4), (4, 4), (5, 8)] {
        assert_eq!(
            chosen(E::U32, &[second, 256]),
            format!("u32[{second},256]{{1,0:T({rows},128)}}")
        );
    }
    // 16-bit: pairs of rows packed.
    assert_eq!(
        chosen(E::Bf16, &[8, 1, 1280, 16384]),
        "bf16[8,1,1280,16384]{3,2,1,0:T(8,128)(2,1)}"
    );
    assert_eq!(chosen(E::F16, &[64, 64]), "f16[64,64]{1,0:T(8,128)(2,1)}");
    // 8-bit: four rows packed.
    assert_eq!(chosen(E::S8, &[64, 64]), "s8[64,64]{1,0:T(8,128)(4,1)}");
    assert_eq!(
        chosen(E::F8e4m3fn, &[64, 64]),
        "f8e4m3fn[64,64]{1,0:T(8,128)(4,1)}"
    );
    // pred, the proposed 1-bit format.
    assert_eq!(
        chosen(E::Pred, &[64, 256]),
        "pred[64,256]{1,0:T(32,128)(32,1)E(1)}"
    );
    // Sub-byte s4 as XLA dumps print it.
    assert_eq!(
        chosen(E::S4, &[64, 256]),
        "s4[64,256]{1,0:T(8,128)(8,1)E(4)}"
    );
    // Rank 1, 16-bit.
    assert_eq!(chosen(E::Bf16, &[2048]), "bf16[2048]{0:T(1024)(128)(2,1)}");
}

#[test]
fn choices_where_the_documents_are_brief() {
    // Small second-minor dims never drop below the packing.
    assert_eq!(chosen(E::Bf16, &[2, 256]), "bf16[2,256]{1,0:T(2,128)(2,1)}");
    assert_eq!(chosen(E::Bf16, &[3, 256]), "bf16[3,256]{1,0:T(4,128)(2,1)}");
    assert_eq!(chosen(E::S8, &[1, 256]), "s8[1,256]{1,0:T(4,128)(4,1)}");
    assert_eq!(chosen(E::S4, &[2, 256]), "s4[2,256]{1,0:T(8,128)(8,1)E(4)}");
    // Wider types take the 32-bit tiling; rank 1 fills one register.
    assert_eq!(chosen(E::F64, &[16, 256]), "f64[16,256]{1,0:T(8,128)}");
    assert_eq!(chosen(E::F32, &[5000]), "f32[5000]{0:T(1024)}");
    assert_eq!(chosen(E::S8, &[5000]), "s8[5000]{0:T(1024)(128)(4,1)}");
    assert_eq!(
        chosen(E::Pred, &[5000]),
        "pred[5000]{0:T(4096)(128)(32,1)E(1)}"
    );
    assert_eq!(
        chosen(E::S2, &[64, 256]),
        "s2[64,256]{1,0:T(16,128)(16,1)E(2)}"
    );
    // Scalars stay untiled.
    assert_eq!(chosen(E::F32, &[]), "f32[]");
    assert_eq!(chosen(E::Pred, &[]), "pred[]");
}

#[test]
fn padding_costs() {
    // Whole tiles: no padding.
    let l = tpu_layout(E::Bf16, &[16, 256]).unwrap();
    assert_eq!(l.storage_len(), l.len());
    assert_eq!(l.storage_bytes(), 16 * 256 * 2);
    // A 3-element f32 vector takes one 4 KiB register, as SPEC.md's golden
    // value for (8,128) does for f32[3].
    assert_eq!(tpu_layout(E::F32, &[3]).unwrap().storage_bytes(), 4096);
    assert_eq!(parse("f32[3]{0:T(8,128)}").unwrap().storage_bytes(), 4096);
    // The small tile saves memory: [2,128] of f32 is one 2x128 tile, not 8x128.
    assert_eq!(tpu_layout(E::F32, &[2, 128]).unwrap().storage_bytes(), 1024);
    // Packed pred is 8 times smaller than a byte per element.
    let pred = tpu_layout(E::Pred, &[32, 128]).unwrap();
    assert_eq!(pred.storage_bytes(), 32 * 128 / 8);
}

#[test]
fn every_chosen_layout_agrees_with_its_own_spec() {
    for element in [
        E::F32,
        E::Bf16,
        E::S8,
        E::S4,
        E::Pred,
        E::S2,
        E::F64,
        E::C64,
    ] {
        for dims in [
            &[][..],
            &[1],
            &[7],
            &[1, 1],
            &[2, 3],
            &[5, 129],
            &[3, 4, 300],
            &[2, 1, 9, 17],
        ] {
            let l = tpu_layout(element, dims).unwrap();
            // The canonical text parses to the very same layout.
            assert_eq!(parse(&l.to_string()).unwrap(), l, "{l}");
            assert!(l.storage_len() >= l.len());
        }
    }
}

#[test]
fn like_keeps_the_order_of_dims() {
    let l = parse("f32[256,2]{0,1:L(1024)S(1)}").unwrap();
    let t = tpu_layout_like(&l).unwrap();
    // Physically [2,256]: the second-minor dim has size 2.
    assert_eq!(t.to_string(), "f32[256,2]{0,1:T(2,128)S(1)}");
    assert_eq!(
        tpu_rule(&l).to_string(),
        "32-bit and wider elements, second-minor dim of size 2: 2 rows of 128"
    );
}

#[test]
fn too_many_dims_is_an_error_not_a_panic() {
    let err = tpu_layout(E::F32, &[1; 17]).unwrap_err();
    assert!(err.first().to_string().contains("rank limit"), "{err}");
}
