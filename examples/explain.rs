//! The `xla-layout` command, runnable from a checkout without the `cli`
//! feature: `cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}'`. The
//! installed command (`cargo install --path . --features cli`) is the same code.

#[path = "../src/bin/xla-layout.rs"]
mod explain;

fn main() -> std::process::ExitCode {
    explain::main()
}
