//! The `explain` tool, runnable from a checkout without the `cli` feature:
//! `cargo run --example explain -- 'f32[3,5]{1,0:T(2,2)}'`. The installed
//! binary (`cargo install xla-layout --features cli`) is the same code.

#[path = "../src/bin/explain.rs"]
mod explain;

fn main() -> std::process::ExitCode {
    explain::main()
}
