//! The optional element types (`half`) and arrays (`ndarray`).

#![allow(
    clippy::cast_precision_loss,
    reason = "test values are small integers, exact as floats"
)]

#[cfg(feature = "half")]
mod half_types {
    use xla_layout::parse;
    use xla_layout::relayout::half::{bf16, f16};

    #[test]
    fn bf16_and_f16_round_trip() {
        let l = parse("bf16[19,260]{1,0:T(8,128)(2,1)}").unwrap();
        let logical: Vec<bf16> = (0..l.len())
            .map(|i| bf16::from_f32(i as f32 * 0.25))
            .collect();
        let mut storage = vec![bf16::NAN; l.storage_len()];
        l.pack(&logical, &mut storage, xla_layout::Options::default())
            .unwrap();
        // Two rows interleaved: slots 0 and 1 are rows 0 and 1 of column 0.
        assert_eq!(storage[..2], [logical[0], logical[260]]);
        assert_eq!(
            storage.iter().filter(|x| x.is_nan()).count(),
            0,
            "padding is zero, not stale"
        );
        let mut back = vec![bf16::ZERO; l.len()];
        l.unpack(&storage, &mut back, xla_layout::Threads::One)
            .unwrap();
        assert_eq!(back, logical);

        let h = parse("f16[3,5]{0,1:T(2,2)}").unwrap();
        let logical: Vec<f16> = (0..15).map(|i| f16::from_f32(i as f32)).collect();
        let mut storage = vec![f16::ZERO; h.storage_len()];
        h.pack(
            &logical,
            &mut storage,
            xla_layout::Options::fill(f16::INFINITY),
        )
        .unwrap();
        let mut back = vec![f16::ZERO; 15];
        h.unpack(&storage, &mut back, xla_layout::Threads::One)
            .unwrap();
        assert_eq!(back, logical);
        assert!(storage.iter().any(|x| x.is_infinite()));
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    use xla_layout::relayout::ndarray::{Array, Array2, Array3, ArrayD, Axis, ShapeBuilder, Slice};
    use xla_layout::{parse, RelayoutError};

    fn expected(spec: &str, row_major: &[u32]) -> Vec<u32> {
        let l = parse(spec).unwrap();
        let mut storage = vec![0u32; l.storage_len()];
        l.pack(row_major, &mut storage, xla_layout::Options::fill(99))
            .unwrap();
        storage
    }

    #[test]
    fn any_memory_order() {
        let spec = "u32[6,10]{1,0:T(4,8)}";
        let l = parse(spec).unwrap();
        let c = Array::from_shape_fn((6, 10), |(r, c)| (r * 10 + c) as u32);
        let want = expected(spec, c.as_slice().unwrap());
        let f = Array2::from_shape_fn((6, 10).f(), |(r, c)| (r * 10 + c) as u32);
        let flipped = Array::from_shape_fn((6, 10), |(r, c)| ((5 - r) * 10 + (9 - c)) as u32);
        let mut reversed = flipped.view();
        reversed.invert_axis(Axis(0));
        reversed.invert_axis(Axis(1));
        let wide = Array::from_shape_fn((6, 20), |(r, c)| (r * 10 + c / 2) as u32);
        for (name, view) in [
            ("C order", c.view()),
            ("Fortran order", f.view()),
            ("negative strides", reversed),
            (
                "every other column",
                wide.slice_axis(Axis(1), Slice::new(0, None, 2)),
            ),
        ] {
            let mut storage = vec![0u32; l.storage_len()];
            l.pack_array(&view, &mut storage, xla_layout::Options::fill(99))
                .unwrap();
            assert_eq!(storage, want, "{name}");
        }
        let permuted = Array3::from_shape_fn((4, 3, 5), |(a, b, c)| (a * 15 + b * 5 + c) as u32);
        let t = permuted.view().permuted_axes([2, 0, 1]);
        let spec = "u32[5,4,3]{0,2,1:T(2,2)}";
        let row_major: Vec<u32> = t.iter().copied().collect();
        let l = parse(spec).unwrap();
        let mut storage = vec![0u32; l.storage_len()];
        l.pack_array(&t, &mut storage, xla_layout::Options::fill(99))
            .unwrap();
        assert_eq!(storage, expected(spec, &row_major));
    }

    #[test]
    fn unpack_into_an_array() {
        let l = parse("f32[6,10]{0,1:T(4,8)}").unwrap();
        let a = Array::from_shape_fn((6, 10), |(r, c)| (r * 10 + c) as f32);
        let mut storage = vec![0.0f32; l.storage_len()];
        l.pack_array(&a, &mut storage, xla_layout::Options::default())
            .unwrap();
        let back: ArrayD<f32> = l.unpack_array(&storage, xla_layout::Threads::One).unwrap();
        assert_eq!(back, a.into_dyn());
        let empty = parse("f32[0,3]").unwrap();
        assert_eq!(
            empty
                .unpack_array::<f32>(&[], xla_layout::Threads::One)
                .unwrap()
                .shape(),
            &[0, 3]
        );
    }

    #[test]
    fn shape_errors() {
        let l = parse("f32[6,10]").unwrap();
        let mut storage = vec![0.0f32; 60];
        assert_eq!(
            l.pack_array(
                &Array2::<f32>::zeros((10, 6)),
                &mut storage,
                xla_layout::Options::default()
            ),
            Err(RelayoutError::DimMismatch {
                dim: 0,
                from: 10,
                to: 6
            })
        );
        assert_eq!(
            l.pack_array(
                &Array::<f32, _>::zeros(60),
                &mut storage,
                xla_layout::Options::default()
            ),
            Err(RelayoutError::RankMismatch { from: 1, to: 2 })
        );
        assert_eq!(
            l.pack_array(
                &Array2::<f32>::zeros((6, 10)),
                &mut storage[..59],
                xla_layout::Options::default()
            ),
            Err(RelayoutError::StorageLength {
                expected: 60,
                actual: 59
            })
        );
        assert_eq!(
            l.unpack_array::<u16>(&[0; 60], xla_layout::Threads::One),
            Err(RelayoutError::ElementSize {
                layout_bits: 32,
                type_bits: 16
            })
        );
    }
}
