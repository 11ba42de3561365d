//! Command-line interface.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::{self, Global, OutputFormat};
use crate::{bench, output, up};

#[derive(Parser, Debug)]
#[command(
    name = "drydock",
    version,
    about = "Cluster API in Rust: an embedded API server, controllers and an in-memory provider"
)]
pub struct Cli {
    /// kubeconfig to use (else KUBECONFIG, ~/.kube/config, ./.drydock/kubeconfig).
    #[arg(long, global = true)]
    kubeconfig: Option<PathBuf>,
    /// Namespace of the objects addressed.
    #[arg(short = 'n', long, global = true)]
    namespace: Option<String>,
    /// Output format where a command shows objects.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the API server, controllers and in-memory provider on a durable data dir.
    Up(up::UpArgs),
    /// Print the CustomResourceDefinitions of every kind drydock serves (YAML, installable on any cluster).
    Crds,
    /// Generate manifests.
    Generate {
        #[command(subcommand)]
        what: GenerateCommand,
    },
    /// Show objects (`get KIND [NAME]`) or a workload cluster's kubeconfig (`get kubeconfig NAME`).
    Get {
        /// Kind (plural, singular, short name; `kind/name` accepted) or `kubeconfig`.
        kind: String,
        name: Option<String>,
        /// List across all namespaces.
        #[arg(short = 'A', long)]
        all_namespaces: bool,
    },
    /// Create or update objects from a manifest (client-side apply, as kubectl).
    Apply {
        /// File to read, or `-` for stdin.
        #[arg(short = 'f', long)]
        filename: String,
    },
    /// Show a cluster's objects as a tree with their conditions.
    Describe(commands::describe::DescribeArgs),
    /// Manage rollouts of MachineDeployments and KubeadmControlPlanes.
    Rollout {
        #[command(subcommand)]
        what: commands::rollout::RolloutCommand,
    },
    /// Measure drydock: provision (and optionally upgrade and delete) a fleet, or `bench apiserver`.
    Bench(BenchArgs),
}

#[derive(Subcommand, Debug)]
enum GenerateCommand {
    /// A cluster on the in-memory provider.
    Cluster(commands::generate::GenerateClusterArgs),
}

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct BenchArgs {
    #[command(subcommand)]
    what: Option<BenchCommand>,
    #[command(flatten)]
    fleet: bench::fleet::FleetArgs,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Raw API server capacity over HTTP: create, update, get, list, watch.
    Apiserver(bench::apiserver::ApiBenchArgs),
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        let g = Global { kubeconfig: self.kubeconfig, namespace: self.namespace, output: self.output };
        match self.command {
            Command::Up(args) => up::run(args).await?,
            Command::Crds => output::emit(&crate::crds::render()?)?,
            Command::Generate { what: GenerateCommand::Cluster(args) } => {
                output::emit(&commands::generate::render(&args))?
            }
            Command::Get { kind, name, all_namespaces } => {
                let text = if kind == "kubeconfig" {
                    let name =
                        name.ok_or_else(|| anyhow::anyhow!("usage: drydock get kubeconfig CLUSTER [-n NAMESPACE]"))?;
                    commands::get::kubeconfig(&g, &name).await?
                } else {
                    commands::get::get(&g, &kind, name.as_deref(), all_namespaces).await?
                };
                output::emit(&text)?;
            }
            Command::Apply { filename } => output::emit(&commands::apply::apply(&g, &filename).await?)?,
            Command::Describe(args) => output::emit(&commands::describe::describe(&g, &args).await?)?,
            Command::Rollout { what } => {
                let (text, ok) = commands::rollout::run(&g, &what).await?;
                output::emit(&text)?;
                if !ok {
                    return Ok(ExitCode::FAILURE);
                }
            }
            Command::Bench(b) => match b.what {
                Some(BenchCommand::Apiserver(args)) => bench::apiserver::main(args).await?,
                None => bench::fleet::main(b.fleet).await?,
            },
        }
        Ok(ExitCode::SUCCESS)
    }
}
