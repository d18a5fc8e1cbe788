//! Firmware for a sensor board: a 6-channel ADC fills frames, an accelerator
//! reads them in its tiled layout, and its features go out over a radio.
//! The DMA plans between those layouts are computed by the compiler
//! (`dma.rs`) and sit in read-only memory as descriptor tables.
//!
//! `#![no_std]` with its own panic handler: if any dependency pulled in
//! `std`, the build would fail with a second `panic_impl` (E0152). Build it
//! with `cargo build --release --manifest-path examples/firmware/Cargo.toml`
//! (on a desktop, as CI does), or for a microcontroller with `--target`.

#![no_std]
#![no_main]

#[cfg(feature = "link-std")]
extern crate std;

mod dma;

use core::panic::PanicInfo;

use dma::{
    Descriptor, FRAME_LEN, FRAME_TO_INPUT_PLAN, INPUT_SLOTS, OUTPUT_SLOTS, OUTPUT_TO_PACKET_PLAN,
    PACKET_LEN,
};

/// The reset handler: one frame through both plans, then idle. On the board
/// the DMA engine walks the tables; `dma::execute` stands in for it.
#[no_mangle]
pub extern "C" fn _start() -> ! {
    let mut frame = [0.0f32; FRAME_LEN];
    let mut value = 0.0;
    for sample in &mut frame {
        // Stand-in samples; the ADC writes these.
        *sample = value;
        value += 1.0;
    }
    let mut input = [0.0f32; INPUT_SLOTS];
    dma::execute(&FRAME_TO_INPUT_PLAN, &frame, &mut input);

    // Stand-in features; the accelerator writes these from `input`.
    let mut output = [0.0f32; OUTPUT_SLOTS];
    output.copy_from_slice(&input[..OUTPUT_SLOTS]);
    let mut packet = [0.0f32; PACKET_LEN];
    dma::execute(&OUTPUT_TO_PACKET_PLAN, &output, &mut packet);
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
