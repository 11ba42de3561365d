//! Command-line interface. Connection flags (`--kubeconfig`, `-n`) and `-o` are offered
//! only by the commands they act on.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::{self, Connection, GetFormat, Global, ObjectOutput, OutputFormat};
use crate::{bench, output, up};

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
    /// Start the API server, controllers and in-memory provider on a durable data dir.
    Up(up::UpArgs),
    /// Run the controllers and the in-memory provider alone, against the API server of a kubeconfig.
    Controllers(crate::run_controllers::ControllersArgs),
    /// Print the CustomResourceDefinitions of every kind drydock serves (YAML, installable on any cluster).
    Crds(crate::crds::CrdsArgs),
    /// Generate manifests.
    Generate {
        #[command(subcommand)]
        what: GenerateCommand,
    },
    /// Show objects (`get KIND [NAME]`) or a workload cluster's kubeconfig (`get kubeconfig NAME`).
    Get(GetArgs),
    /// Create or update objects from a manifest (client-side apply, as kubectl).
    Apply(ApplyArgs),
    /// Show a cluster's objects as a tree with their conditions.
    Describe {
        #[command(flatten)]
        args: commands::describe::DescribeArgs,
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Manage rollouts of MachineDeployments and KubeadmControlPlanes.
    Rollout {
        #[command(subcommand)]
        what: commands::rollout::RolloutCommand,
        #[command(flatten)]
        conn: Connection,
    },
    /// Rewrite stored objects in their CRD's storage version (before switching a version off).
    Migrate {
        #[command(subcommand)]
        what: commands::migrate::MigrateCommand,
    },
    /// ClusterClass topologies: `topology plan -f FILE` shows what a change would do, without doing it.
    Topology {
        #[command(subcommand)]
        what: commands::topology::TopologyCommand,
    },
    /// Measure drydock: provision (and optionally upgrade and delete) a fleet, or `bench apiserver`.
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
struct GetArgs {
    /// Kind (plural, singular, short name; `kind/name` accepted) or `kubeconfig`.
    kind: String,
    /// Name of one object (all objects of the kind when absent); for `kubeconfig`, the cluster.
    name: Option<String>,
    /// List across all namespaces.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    #[command(flatten)]
    conn: Connection,
    /// Output format: wide (more columns), yaml, json (several objects: a `List`), name.
    #[arg(short = 'o', long, value_enum)]
    output: Option<GetFormat>,
}

#[derive(clap::Args, Debug)]
struct ApplyArgs {
    /// File to read, or `-` for stdin.
    #[arg(short = 'f', long)]
    filename: String,
    #[command(flatten)]
    conn: Connection,
    #[command(flatten)]
    output: ObjectOutput,
}

#[derive(Subcommand, Debug)]
enum GenerateCommand {
    /// A cluster on the in-memory provider.
    Cluster {
        #[command(flatten)]
        args: commands::generate::GenerateClusterArgs,
        #[command(flatten)]
        output: ObjectOutput,
    },
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
    /// The fleet bench of this binary and another, run alternately, with the medians' ratio.
    Compare(bench::compare::CompareArgs),
    /// Both benches on each store given (SQLite, etcd...), side by side.
    Stores(bench::stores::StoresArgs),
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Up(args) => up::run(args).await?,
            Command::Controllers(args) => crate::run_controllers::run(args).await?,
            Command::Crds(args) => output::emit(&crate::crds::render(&args)?)?,
            Command::Generate { what: GenerateCommand::Cluster { args, output } } => {
                output::emit(&commands::generate::print(&args, output.format())?)?
            }
            Command::Get(a) => output::emit(&get(a).await?)?,
            Command::Apply(a) => {
                let g = Global::new(&a.conn, a.output.format());
                output::emit(&commands::apply::apply(&g, &a.filename).await?)?
            }
            Command::Describe { args, conn, output } => {
                let g = Global::new(&conn, output.format());
                output::emit(&commands::describe::describe(&g, &args).await?)?
            }
            Command::Rollout { what, conn } => {
                let (text, ok) = commands::rollout::run(&conn, &what).await?;
                output::emit(&text)?;
                if !ok {
                    return Ok(ExitCode::FAILURE);
                }
            }
            Command::Migrate { what } => output::emit(&commands::migrate::run(&what).await?)?,
            Command::Topology { what } => output::emit(&commands::topology::run(&what).await?)?,
            Command::Bench(b) => match b.what {
                Some(BenchCommand::Apiserver(args)) => bench::apiserver::main(args).await?,
                Some(BenchCommand::Compare(args)) => bench::compare::main(args).await?,
                Some(BenchCommand::Stores(args)) => bench::stores::main(args).await?,
                None => bench::fleet::main(b.fleet).await?,
            },
        }
        Ok(ExitCode::SUCCESS)
    }
}

async fn get(a: GetArgs) -> anyhow::Result<String> {
    let g = Global::new(&a.conn, OutputFormat::from(a.output));
    if a.kind == "kubeconfig" {
        let name = a.name.ok_or_else(|| anyhow::anyhow!("usage: drydock get kubeconfig CLUSTER [-n NAMESPACE]"))?;
        return commands::get::kubeconfig(&g, &name).await;
    }
    commands::get::get(&g, &a.kind, a.name.as_deref(), a.all_namespaces).await
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every command below `cmd`, with its path (`drydock rollout status`).
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        let path = format!("{path} {}", cmd.get_name()).trim().to_string();
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            walk(sub, &path, out);
        }
    }

    fn commands() -> Vec<(String, clap::Command)> {
        let mut root = Cli::command();
        root.build();
        let mut out = Vec::new();
        walk(&root, "", &mut out);
        out
    }

    #[test]
    fn every_command_flag_and_positional_is_described() {
        let mut missing = Vec::new();
        for (path, cmd) in commands() {
            if path != "drydock" && cmd.get_about().is_none() {
                missing.push(path.clone());
            }
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none_or(|h| h.to_string().trim().is_empty()) {
                    missing.push(format!("{path} {id}"));
                }
            }
        }
        assert!(missing.is_empty(), "without a description: {missing:#?}");
    }

    #[test]
    fn the_demo_needs_the_controllers() {
        use clap::Parser;
        assert!(Cli::try_parse_from(["drydock", "up", "--no-controllers"]).is_ok());
        let both = Cli::try_parse_from(["drydock", "up", "--no-controllers", "--demo"]).unwrap_err();
        assert_eq!(both.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn connection_and_output_flags_only_where_they_act() {
        let offers = |cmd: &clap::Command, long: &str| cmd.get_arguments().any(|a| a.get_long() == Some(long));
        let all = commands();
        let find = |p: &str| all.iter().find(|(path, _)| path == p).map(|(_, c)| c).expect(p);
        // Commands that talk to no server: no connection flags, and no -o where nothing is printed as objects.
        for (path, cmd) in &all {
            let server_free = ["drydock up", "drydock crds", "drydock generate", "drydock bench"]
                .iter()
                .any(|p| path == p || path.starts_with(&format!("{p} ")));
            if server_free || path == "drydock" {
                assert!(!offers(cmd, "kubeconfig"), "{path} offers --kubeconfig");
            }
            if server_free && path != "drydock generate cluster" {
                assert!(!offers(cmd, "namespace") && !offers(cmd, "output"), "{path} offers -n or -o");
            }
        }
        assert!(!offers(find("drydock"), "namespace") && !offers(find("drydock"), "output"));
        assert!(!offers(find("drydock rollout status"), "output"), "status prints no objects");
        for p in
            ["drydock get", "drydock apply", "drydock describe", "drydock rollout status", "drydock rollout history"]
        {
            assert!(offers(find(p), "kubeconfig") && offers(find(p), "namespace"), "{p} lacks connection flags");
        }
        for p in [
            "drydock get",
            "drydock apply",
            "drydock describe",
            "drydock rollout history",
            "drydock rollout restart",
            "drydock generate cluster",
        ] {
            assert!(offers(find(p), "output"), "{p} lacks -o");
        }
        assert!(offers(find("drydock controllers"), "kubeconfig"));
        // generate's -n is the namespace written into the manifest.
        assert!(offers(find("drydock generate cluster"), "target-namespace"));
    }
}
