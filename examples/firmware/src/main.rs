//! Firmware for a sensor board: a 6-channel ADC fills frames, an accelerator
//! reads them in its tiled layout, and its features go out over a radio.
//! The DMA plans between those layouts are computed by the compiler
//! (`dma.rs`) and sit in read-only memory as descriptor tables.
//!
//! `#![no_std]` with its own panic handler: if any dependency pulled in
//! `std`, the build would fail with a second `panic_impl` (E0152). `std` is
//! a default feature of `xla-layout`, so `Cargo.toml` turns the defaults
//! off. Build it with `cargo build --release --manifest-path
//! examples/firmware/Cargo.toml` (on a desktop, as CI does), or for a
//! microcontroller with `--target`.

#![no_std]
#![no_main]

mod dma;

use core::panic::PanicInfo;

use dma::{
    AcceleratorInput, AcceleratorOutput, AdcFrame, Descriptor, RadioPacket, FRAME_LEN,
    FRAME_TO_INPUT_PLAN, INPUT_SLOTS, OUTPUT_SLOTS, OUTPUT_TO_PACKET_PLAN, PACKET_LEN,
};
use xla_layout::tensor::Tensor;

/// Per-channel gains applied before transmission, in flash: a tensor over a
/// static buffer, its size checked against the layout when this compiles.
static GAINS: Tensor<RadioPacket, [f32; PACKET_LEN]> =
    Tensor::from_buffer(RadioPacket, [0.5; PACKET_LEN]);

/// The reset handler: one frame through both plans, then idle. On the board
/// the DMA engine walks the tables; `dma::execute` stands in for it. Every
/// buffer is a tensor over an array sized by its layout's `STORAGE_LEN`.
#[no_mangle]
pub extern "C" fn _start() -> ! {
    let mut frame = Tensor::from_buffer(AdcFrame, [0.0f32; FRAME_LEN]);
    // Stand-in samples; the ADC writes these.
    frame.indexed_for_each_mut(|[channel, t], sample| {
        *sample = (channel * 1000 + t) as f32;
    });
    let mut input = Tensor::from_buffer(AcceleratorInput, [0.0f32; INPUT_SLOTS]);
    dma::execute(&FRAME_TO_INPUT_PLAN, frame.storage(), input.storage_mut());

    // Stand-in features, by index in both tiled layouts; the accelerator
    // writes these from `input`.
    let mut output = Tensor::from_buffer(AcceleratorOutput, [0.0f32; OUTPUT_SLOTS]);
    for channel in 0..6 {
        for feature in 0..16 {
            output[[channel, feature]] = input[[channel, feature * 16]];
        }
    }
    let mut packet = Tensor::from_buffer(RadioPacket, [0.0f32; PACKET_LEN]);
    dma::execute(&OUTPUT_TO_PACKET_PLAN, output.storage(), packet.storage_mut());
    for (x, gain) in packet.storage_mut().iter_mut().zip(GAINS.iter()) {
        *x *= gain;
    }
    core::hint::black_box((&packet, descriptors()));
    loop {
        core::hint::spin_loop();
    }
}

/// How many descriptors the DMA engine is handed per frame.
fn descriptors() -> usize {
    let tables: [&[Descriptor]; 2] = [&FRAME_TO_INPUT_PLAN, &OUTPUT_TO_PACKET_PLAN];
    tables.iter().map(|t| t.len()).sum()
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// On a hosted target the prebuilt `core` was compiled for unwinding and
/// names this symbol; with `panic = "abort"` nothing ever calls it.
/// Bare-metal targets' `core` does not name it.
#[cfg(not(target_os = "none"))]
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}
