//! The `drydock` command: runs the embedded API server with drydock's controllers and
//! provider, and offers clusterctl-style commands against any drydock API.

mod cli;
mod crds;
mod demo;
mod output;
mod run_controllers;
mod signals;
mod up;

pub use drydock::{bench, commands, kubeconfig};

use clap::Parser;

// Reconciles, JSON encoding and watch fan-out allocate heavily; mimalloc measured faster
// than the system allocator for this workload (see the README's performance notes).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli.run()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
