//! `layout!` in firmware: `examples/firmware` is `#![no_std]`, `#![no_main]`
//! with its own panic handler, so it builds only while nothing links `std`.
//! Its DMA plans, computed by the compiler, are checked here on the host.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

// The firmware's buffer sizes, which only `_start` uses, go unused here.
#[path = "../examples/firmware/src/dma.rs"]
#[allow(dead_code)]
mod dma;

/// `cargo build --release` of the firmware, with extra arguments.
fn build_firmware(extra: &[&str]) -> Output {
    // One build at a time: each seeds the lock file the other would read.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("examples/firmware/Cargo.toml");
    // The workspace's lock: the versions it already resolved and built.
    std::fs::copy(
        root.join("Cargo.lock"),
        root.join("examples/firmware/Cargo.lock"),
    )
    .expect("examples/firmware/Cargo.lock is writable");
    // A target dir of its own: the one running this test is locked by cargo.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("firmware");
    Command::new(env!("CARGO"))
        .args(["build", "--release", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        .args(extra)
        .output()
        .expect("cargo runs")
}

#[test]
fn the_firmware_builds_without_std() {
    let out = build_firmware(&[]);
    assert!(
        out.status.success(),
        "the firmware did not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The guard itself: with the library's `std` feature on (what the firmware
/// would get without `default-features = false`), the build must fail on
/// the second panic handler, or the test above would prove nothing.
#[test]
fn the_firmware_build_fails_when_std_is_linked() {
    let out = build_firmware(&["--features", "link-std"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the firmware built with std linked");
    assert!(
        stderr.contains("E0152") && stderr.contains("panic_impl"),
        "the build failed, but not on the panic handler:\n{stderr}"
    );
}

/// Runs `plan` on a source whose element at offset `k` is `k + 1`, and
/// checks every destination slot: an element where both layouts put it, or
/// zero for padding. The plan must also cover the destination in order,
/// each slot once.
fn check_plan(plan: &[dma::Descriptor], src: &xla_layout::Layout, dst: &xla_layout::Layout) {
    let mut next = 0;
    for d in plan {
        let (dst_start, len) = match *d {
            dma::Descriptor::Copy { dst, len, .. } | dma::Descriptor::Zero { dst, len } => {
                (dst, len)
            }
        };
        assert_eq!(
            dst_start, next,
            "{d:?} does not start where the previous one ended"
        );
        assert!(len > 0, "{d:?} is empty");
        next += len;
    }
    assert_eq!(
        next,
        dst.storage_len(),
        "the plan does not cover the destination"
    );

    // Exact in f32: the buffers here hold far fewer than 2^16 elements.
    let value = |offset: usize| f32::from(u16::try_from(offset + 1).expect("a small buffer"));
    let source: Vec<f32> = (0..src.storage_len()).map(value).collect();
    let mut out = vec![f32::NAN; dst.storage_len()];
    dma::execute(plan, &source, &mut out);
    for (slot, &got) in out.iter().enumerate() {
        let expected = match dst.index_of(slot) {
            Some(index) => value(src.offset(&index)),
            None => 0.0,
        };
        assert_eq!(got.to_bits(), expected.to_bits(), "slot {slot}");
    }
}

#[test]
fn the_adc_frame_reaches_the_accelerator_input() {
    check_plan(
        &dma::FRAME_TO_INPUT_PLAN,
        &dma::AdcFrame.runtime(),
        &dma::AcceleratorInput.runtime(),
    );
    // Per 128-sample tile: one strided run per channel, then the two padding
    // rows; in the last tile each channel's 44 samples are followed by 84
    // padding slots (the last of them merged with the padding rows).
    assert_eq!(dma::FRAME_TO_INPUT_PLAN.len(), 7 + 7 + 12);
    assert!(matches!(
        dma::FRAME_TO_INPUT_PLAN[0],
        dma::Descriptor::Copy {
            src: 0,
            stride: 6,
            dst: 0,
            len: 128
        }
    ));
}

#[test]
fn the_features_reach_the_radio_packet() {
    check_plan(
        &dma::OUTPUT_TO_PACKET_PLAN,
        &dma::AcceleratorOutput.runtime(),
        &dma::RadioPacket.runtime(),
    );
    // One contiguous run per channel.
    assert_eq!(dma::OUTPUT_TO_PACKET_PLAN.len(), 6);
    assert!(matches!(
        dma::OUTPUT_TO_PACKET_PLAN[1],
        dma::Descriptor::Copy {
            src: 128,
            stride: 1,
            dst: 16,
            len: 16
        }
    ));
}
