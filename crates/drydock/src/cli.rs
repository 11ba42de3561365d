//! Command-line interface.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::{bench, up};

#[derive(Parser, Debug)]
#[command(
    name = "drydock",
    version,
    about = "Cluster API in Rust: an embedded API server, controllers and an in-memory provider"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the API server (and controllers) on a durable data dir.
    Up(up::UpArgs),
    /// Print the CustomResourceDefinitions of every kind drydock serves (YAML, installable on any cluster).
    Crds,
    /// Measure drydock's performance.
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    #[command(subcommand)]
    what: BenchCommand,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Raw API server capacity over HTTP: create, update, get, list, watch.
    Apiserver(bench::apiserver::ApiBenchArgs),
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Up(args) => up::run(args).await.map(|_| ExitCode::SUCCESS),
            Command::Crds => {
                crate::output::emit(&crate::crds::render()?)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Bench(b) => match b.what {
                BenchCommand::Apiserver(args) => bench::apiserver::main(args)
                    .await
                    .map(|_| ExitCode::SUCCESS),
            },
        }
    }
}
