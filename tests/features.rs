//! Features as a user's crate meets them: `tests/std-default` names no
//! feature of `xla-layout`, so its default, `std`, applies, and with it
//! `Vec` and `Box<[T]>` storage and `Tensor::iter_mut`. (`no_std` crates
//! turn the defaults off: `tests/no_std.rs`, `tests/firmware_build.rs`.)

mod nested;

#[test]
fn default_features_give_vec_storage() {
    if let Err(report) = nested::cargo("run", "std-default") {
        panic!("{report}");
    }
}
