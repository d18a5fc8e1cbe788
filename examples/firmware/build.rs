//! Building on a desktop (as CI does) targets a hosted OS, whose C runtime
//! would bring its own `_start` and expect a `main`; the firmware brings its
//! own `_start`, so the start files are left out. The C library still
//! provides `memset` and `memcpy`, which on a microcontroller come with
//! `core`. Bare-metal targets (`thumbv7em-none-eabihf`, ...) need none of this.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os != "none") {
        println!("cargo:rustc-link-arg-bins=-nostartfiles");
        println!("cargo:rustc-link-lib=c");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
