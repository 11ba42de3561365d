//! `drydock bench stores`: the API server bench and the fleet bench on each store given,
//! one after the other in one session, and their figures side by side: what moving from
//! the embedded store to etcd (one member, or a cluster) costs on this machine.

use anyhow::{Context as _, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use super::apiserver::Phase;
use super::fleet::PhaseReport;

#[derive(Args, Debug, Clone)]
pub struct StoresArgs {
    /// A store to measure (`sqlite`, `etcd://HOST:PORT[,...]`); repeat for each.
    #[arg(long = "store", value_name = "STORE", required = true)]
    pub stores: Vec<String>,
    /// Objects written by the API server bench on each store.
    #[arg(long, default_value_t = 10_000)]
    pub objects: usize,
    /// Write every store's figures as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Arguments of `drydock bench` (the fleet) for every store, after `--` (`-- --clusters 100`).
    #[arg(last = true)]
    pub fleet_args: Vec<String>,
}

/// One store's figures.
#[derive(Debug, Clone, Serialize)]
struct StoreFigures {
    store: String,
    create: Phase,
    update: Phase,
    fleet: PhaseReport,
}

#[derive(Deserialize)]
struct ApiResults {
    phases: Vec<Phase>,
}

#[derive(Deserialize)]
struct FleetResults {
    phases: Vec<PhaseReport>,
}

pub async fn main(a: StoresArgs) -> anyhow::Result<()> {
    if a.fleet_args.iter().any(|s| s == "--store" || s.starts_with("--store=") || s == "--json") {
        bail!("--store and --json belong before `--`: each store's runs are made by this command");
    }
    let exe = std::env::current_exe().context("finding this drydock binary")?;
    let dir = tempfile::tempdir()?;
    let mut all = Vec::new();
    for (i, store) in a.stores.iter().enumerate() {
        let api_json = dir.path().join(format!("{i}-apiserver.json"));
        let objects = a.objects.to_string();
        let api_args = ["apiserver", "--objects", &objects, "--watchers", "0", "--watch-writes", "0", "--store", store];
        let api: ApiResults = super::run_child(&exe, &api_args, &api_json).await?;
        let phase = |name: &str| api.phases.iter().find(|p| p.name == name).cloned();
        let (Some(create), Some(update)) = (phase("create"), phase("update")) else {
            bail!("the API server bench on {store} reported no create or update phase");
        };
        let fleet_json = dir.path().join(format!("{i}-fleet.json"));
        let mut fleet_args: Vec<&str> = a.fleet_args.iter().map(String::as_str).collect();
        fleet_args.extend(["--store", store]);
        let fleet: FleetResults = super::run_child(&exe, &fleet_args, &fleet_json).await?;
        let Some(fleet) = fleet.phases.into_iter().next() else {
            bail!("the fleet bench on {store} reported no phase");
        };
        println!(
            "{store}: create {:.0}/s (p99 {:.1} ms), update {:.0}/s (p99 {:.1} ms), fleet {:.1} clusters/s",
            create.per_second, create.p99_ms, update.per_second, update.p99_ms, fleet.clusters_per_second
        );
        all.push(StoreFigures { store: store.clone(), create, update, fleet });
    }
    println!("{}", table(&all));
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_vec_pretty(&serde_json::json!({"stores": all}))?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn table(all: &[StoreFigures]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header([
        "STORE",
        "CREATE/S",
        "CREATE P99 MS",
        "UPDATE/S",
        "UPDATE P99 MS",
        "FLEET CLUSTERS/S",
        "FLEET SECONDS",
        "CLUSTER READY P99 S",
    ]);
    for f in all {
        t.add_row([
            f.store.clone(),
            format!("{:.0}", f.create.per_second),
            format!("{:.1}", f.create.p99_ms),
            format!("{:.0}", f.update.per_second),
            format!("{:.1}", f.update.p99_ms),
            format!("{:.1}", f.fleet.clusters_per_second),
            format!("{:.1}", f.fleet.seconds),
            format!("{:.1}", f.fleet.p99_seconds),
        ]);
    }
    t
}
