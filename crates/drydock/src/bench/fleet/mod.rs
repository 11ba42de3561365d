//! `drydock bench`: provisions a fleet of in-memory clusters on a fresh drydock (durable
//! store, as in production) and reports time to ready, throughput, latency percentiles,
//! API requests and writes per machine, CPU and memory; optionally upgrades and deletes the
//! fleet. The same run measures the API server's raw write capacity for comparison.

mod chaos;
mod clusterclass;
mod report;
mod watch;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::stats::Latencies;
use crate::commands::generate::{GenerateClusterArgs, render};
use crate::instance::{Instance, Options};
use chaos::setup::{HealthCheck, control_plane_health_check, health_check, start_chaos};
pub use report::PhaseReport;
use report::{PhaseStart, per_machine_since, print_summary, print_table, requests_by_resource};

#[derive(Args, Debug, Clone)]
pub struct FleetArgs {
    /// Clusters in the fleet.
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// Control plane machines per cluster.
    #[arg(long, default_value_t = 1)]
    pub control_plane_machines: u32,
    /// Worker machines per MachineDeployment.
    #[arg(long, default_value_t = 3)]
    pub workers: u32,
    /// MachineDeployments per cluster (workers are per MachineDeployment).
    #[arg(long, default_value_t = 1)]
    pub machine_deployments: u32,
    /// Make the clusters as topologies of one ClusterClass (the same objects, made by the
    /// topology controller) instead of writing each cluster's objects.
    #[arg(long)]
    pub clusterclass: bool,
    /// VM startup duration of every machine (node, etcd, API server take a fifth each).
    #[arg(long, default_value = "0s")]
    pub startup_duration: String,
    /// Clusters being created at once.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Upgrade every cluster's control plane and workers after provisioning.
    #[arg(long)]
    pub upgrade: bool,
    /// Delete the fleet at the end and measure it.
    #[arg(long)]
    pub delete: bool,
    /// Workers of every controller (0: each controller's default).
    #[arg(long, default_value_t = 0)]
    pub controller_workers: u16,
    /// Give up after this many seconds per phase.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Draw ready clusters and machines over time as SVG.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
    /// Inject faults while the fleet provisions, from a chaos profile (`default`, or a
    /// profile file), with MachineHealthChecks to remediate them; invariants are checked
    /// on every Machine event.
    #[arg(long, value_name = "PROFILE")]
    pub chaos: Option<String>,
    /// Seed of the chaos schedule: the same seed gives the same faults.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Fleet progress, fed by watches.
#[derive(Default)]
struct Progress {
    /// machine name → (cluster, phase, version)
    machines: HashMap<String, (String, String, String)>,
    created_at: HashMap<String, Instant>,
    ready_at: HashMap<String, Instant>,
    samples: Vec<(f64, usize, usize)>,
}

impl Progress {
    fn per_cluster_running(&self, version: Option<&str>) -> HashMap<&str, usize> {
        let mut m: HashMap<&str, usize> = HashMap::new();
        for (c, phase, v) in self.machines.values() {
            if phase == "Running" && version.is_none_or(|want| v == want) {
                *m.entry(c.as_str()).or_default() += 1;
            }
        }
        m
    }
}

/// What `generate cluster` is asked for one cluster of the fleet.
fn generate_args(a: &FleetArgs, name: &str, version: &str) -> GenerateClusterArgs {
    GenerateClusterArgs {
        name: name.into(),
        kubernetes_version: version.into(),
        control_plane_machine_count: a.control_plane_machines,
        worker_machine_count: a.workers,
        target_namespace: "default".into(),
        startup_duration: a.startup_duration.clone(),
    }
}

fn manifest_docs(a: &FleetArgs, i: usize, version: &str, health: Option<&HealthCheck>) -> anyhow::Result<Vec<Value>> {
    if a.clusterclass {
        return Ok(vec![clusterclass::cluster_doc(a, &format!("c{i:05}"), version)]);
    }
    let g = generate_args(a, &format!("c{i:05}"), version);
    let docs: Vec<Value> = serde_saphyr::from_multiple(&render(&g)).context("generated manifest")?;
    let mut out = Vec::new();
    for d in docs {
        let kind = d["kind"].as_str().unwrap_or_default();
        if kind == "MachineHealthCheck" {
            // Only a chaos run has something to remediate: one check per MachineDeployment,
            // and one for a control plane that can lose a machine.
            if let Some(h) = health {
                for md in 0..a.machine_deployments {
                    out.push(health_check(&d, &format!("{}-md-{md}", g.name), h));
                }
                if a.control_plane_machines >= 3 {
                    out.push(control_plane_health_check(&d, &g.name, h));
                }
            }
            continue;
        }
        if kind == "MachineDeployment" {
            for md in 0..a.machine_deployments {
                let mut d = d.clone();
                let name = format!("{}-md-{md}", g.name);
                d["metadata"]["name"] = json!(name);
                out.push(d);
            }
            continue;
        }
        out.push(d);
    }
    Ok(out)
}

async fn create(client: &kube::Client, doc: &Value) -> anyhow::Result<()> {
    let av = doc["apiVersion"].as_str().unwrap_or_default();
    let kind = doc["kind"].as_str().unwrap_or_default();
    let ar = drydock_controllers::external::api_resource(av, kind);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let obj: DynamicObject = serde_json::from_value(doc.clone())?;
    match api.create(&PostParams::default(), &obj).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("creating {kind}")),
    }
}

pub async fn main(a: FleetArgs) -> anyhow::Result<()> {
    crate::logging::init(&crate::logging::LogArgs::default(), crate::logging::LogLevel::Warn)?;
    let machines_per_cluster = (a.control_plane_machines + a.workers * a.machine_deployments) as usize;
    println!(
        "drydock bench: {} clusters × ({} control plane + {}×{} workers) = {} machines, startup {}, concurrency {}, store {}{}",
        a.clusters,
        a.control_plane_machines,
        a.machine_deployments,
        a.workers,
        a.clusters * machines_per_cluster,
        a.startup_duration,
        a.concurrency,
        a.store.store,
        if a.clusterclass { ", as topologies of one ClusterClass" } else { "" }
    );
    let raw_writes = raw_capacity(&a.store).await?;
    let profile = a.chaos.as_deref().map(chaos::schedule::Profile::load).transpose()?;
    let api_faults = match &profile {
        Some(p) => p.api_faults(a.seed)?,
        None => None,
    };
    let dir = tempfile::tempdir()?;
    let mut settings = drydock_controllers::Settings::default();
    if a.controller_workers > 0 {
        settings = settings.with_concurrency(a.controller_workers);
    }
    let opts = Options {
        server: drydock_apiserver::Config {
            data_dir: Some(dir.path().to_path_buf()),
            etcd: a.store.fresh_etcd()?,
            ..Default::default()
        },
        settings,
        api_faults: api_faults.clone(),
        ..Options::default()
    };
    let mut instance = Instance::start(opts).await?;
    instance.spawn_serve()?;
    let server = instance.server.clone();
    let workload: chaos::Workload = Arc::new(move |cluster: &str| {
        server.client(Some(&drydock_api::tenancy::LogicalClusterName::for_cluster("default", cluster)))
    });
    let fleet = Fleet::new(a, instance.server.client(None), profile, api_faults, workload)?;
    let restarts = fleet.chaos.as_ref().map(|c| c.restarts.clone()).unwrap_or_default();
    let restarting = async {
        let started = tokio::time::Instant::now();
        for at in restarts {
            tokio::time::sleep_until(started + at).await;
            instance.restart_controllers().await?;
            if let Some(c) = &fleet.chaos {
                c.restarted();
            }
        }
        std::future::pending::<anyhow::Result<()>>().await
    };
    // The controllers are stopped whatever happens, before the runtime goes.
    let outcome = tokio::select! {
        r = fleet.run(raw_writes) => r,
        Err(e) = restarting => Err(e),
    };
    instance.stop_controllers().await;
    outcome
}

/// Raw capacity of the API server on this machine, measured first on its own server:
/// durable creates per second.
async fn raw_capacity(store: &crate::store_args::StoreArgs) -> anyhow::Result<f64> {
    let raw = super::apiserver::run(&super::apiserver::ApiBenchArgs {
        objects: 10_000,
        writers: 64,
        watchers: 0,
        watch_writes: 0,
        payload: 2048,
        sync: "full".into(),
        store: store.clone(),
        tls: false,
        json: None,
    })
    .await?;
    let raw_writes = raw.iter().find(|p| p.name == "create").map_or(0.0, |p| p.per_second);
    println!("raw API server capacity: {raw_writes:.0} durable writes/s (2 KiB objects, 64 writers)");
    Ok(raw_writes)
}

/// The fleet under test and what is known of its progress.
struct Fleet {
    a: FleetArgs,
    client: kube::Client,
    progress: Arc<Mutex<Progress>>,
    bar: indicatif::ProgressBar,
    per_cluster: usize,
    machines: usize,
    chaos: Option<Arc<chaos::Chaos>>,
    health: Option<HealthCheck>,
}

const VERSION: &str = "v1.30.2";
const UPGRADE_VERSION: &str = "v1.31.0";

impl Fleet {
    /// Starts following the fleet's Machines (and draws the chaos schedule, if asked).
    fn new(
        a: FleetArgs,
        client: kube::Client,
        profile: Option<chaos::schedule::Profile>,
        api_faults: Option<Arc<crate::api_faults::ApiFaults>>,
        workload: chaos::Workload,
    ) -> anyhow::Result<Self> {
        let per_cluster = (a.control_plane_machines + a.workers * a.machine_deployments) as usize;
        let machines = a.clusters * per_cluster;
        let progress = Arc::new(Mutex::new(Progress::default()));
        let (chaos, health) = match profile {
            Some(profile) => {
                let (c, h) = start_chaos(&a, profile, api_faults, &client, workload)?;
                (Some(c), Some(h))
            }
            None => (None, None),
        };
        tokio::spawn(watch::watch_machines(
            Api::namespaced(client.clone(), "default"),
            progress.clone(),
            chaos.clone(),
        ));
        let bar = indicatif::ProgressBar::new(machines as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} machines {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Ok(Self { a, client, progress, bar, per_cluster, machines, chaos, health })
    }

    /// Every phase asked for, then the report.
    async fn run(&self, raw_writes: f64) -> anyhow::Result<()> {
        let mut reports = vec![self.provision().await?];
        if self.a.upgrade {
            reports.push(self.upgrade().await?);
        }
        if self.a.delete {
            reports.push(self.delete().await?);
        }
        self.bar.finish_and_clear();
        print_table(&reports);
        let samples = self.progress.lock().samples.clone();
        let chaos = self.chaos.as_ref().map(|c| c.report());
        if let Some(r) = &chaos {
            report::print_chaos(r);
        }
        print_summary(&self.a, &reports, raw_writes, &samples, self.machines, chaos.as_ref())?;
        let broken: Vec<&str> =
            chaos.iter().flat_map(|r| &r.invariants).filter(|i| i.violations > 0).map(|i| i.name).collect();
        if !broken.is_empty() {
            bail!("chaos: invariants violated: {}", broken.join(", "));
        }
        Ok(())
    }

    /// Creates every cluster, at most `concurrency` at once, and waits for all to be ready.
    async fn provision(&self) -> anyhow::Result<PhaseReport> {
        self.bar.set_message("provisioning");
        let by_resource0 = requests_by_resource();
        let start = PhaseStart::now();
        if self.a.clusterclass {
            for d in clusterclass::class_docs(&self.a, VERSION)? {
                create(&self.client, &d).await?;
            }
        }
        let sem = Arc::new(tokio::sync::Semaphore::new(self.a.concurrency.max(1)));
        let mut creators = Vec::new();
        for i in 0..self.a.clusters {
            let docs = manifest_docs(&self.a, i, VERSION, self.health.as_ref())?;
            let client = self.client.clone();
            let progress = self.progress.clone();
            let permit = sem.clone().acquire_owned().await?;
            creators.push(tokio::spawn(async move {
                let _permit = permit;
                progress.lock().created_at.insert(format!("c{i:05}"), Instant::now());
                for d in &docs {
                    create(&client, d).await?;
                }
                Ok::<_, anyhow::Error>(())
            }));
        }
        for c in creators {
            c.await??;
        }
        let lat = self.wait(start.started, Some(VERSION), false).await?;
        self.settle(start.started, Some(VERSION)).await?;
        let report = start.report("provision", &self.a, lat, self.machines);
        let writes = per_machine_since(&by_resource0, self.machines, false);
        let reads = per_machine_since(&by_resource0, self.machines, true);
        self.bar.suspend(|| {
            println!("provisioning writes per machine by resource: {}", writes.join(", "));
            println!("provisioning reads per machine by verb and resource: {}", reads.join(", "));
        });
        Ok(report)
    }

    /// Moves every control plane and MachineDeployment to the next version and waits until
    /// every Machine runs it.
    async fn upgrade(&self) -> anyhow::Result<PhaseReport> {
        self.bar.set_message("upgrading");
        self.bar.set_position(0);
        self.set_phase(chaos::Phase::Upgrade);
        let start = PhaseStart::now();
        self.restart_clocks();
        if self.a.clusterclass {
            let clusters = self.api("cluster.x-k8s.io/v1beta2", "Cluster");
            for i in 0..self.a.clusters {
                let name = format!("c{i:05}");
                self.progress.lock().created_at.insert(name.clone(), Instant::now());
                let patch = Patch::Merge(json!({"spec": {"topology": {"version": UPGRADE_VERSION}}}));
                clusters.patch(&name, &PatchParams::default(), &patch).await?;
            }
            let lat = self.wait(start.started, Some(UPGRADE_VERSION), false).await?;
            self.settle(start.started, Some(UPGRADE_VERSION)).await?;
            return Ok(start.report("upgrade", &self.a, lat, self.machines));
        }
        let kcps = self.api("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane");
        let mds = self.api("cluster.x-k8s.io/v1beta2", "MachineDeployment");
        let to = |spec: Value| Patch::Merge(json!({ "spec": spec }));
        for i in 0..self.a.clusters {
            let name = format!("c{i:05}");
            self.progress.lock().created_at.insert(name.clone(), Instant::now());
            let version = json!({"version": UPGRADE_VERSION});
            kcps.patch(&format!("{name}-control-plane"), &PatchParams::default(), &to(version.clone())).await?;
            for md in 0..self.a.machine_deployments {
                let spec = json!({"template": {"spec": version}});
                mds.patch(&format!("{name}-md-{md}"), &PatchParams::default(), &to(spec)).await?;
            }
        }
        let lat = self.wait(start.started, Some(UPGRADE_VERSION), false).await?;
        self.settle(start.started, Some(UPGRADE_VERSION)).await?;
        Ok(start.report("upgrade", &self.a, lat, self.machines))
    }

    /// Deletes every Cluster and waits until no Machine is left.
    async fn delete(&self) -> anyhow::Result<PhaseReport> {
        self.bar.set_message("deleting");
        self.set_phase(chaos::Phase::Delete);
        let start = PhaseStart::now();
        let clusters = self.api("cluster.x-k8s.io/v1beta2", "Cluster");
        self.restart_clocks();
        for i in 0..self.a.clusters {
            let name = format!("c{i:05}");
            self.progress.lock().created_at.insert(name.clone(), Instant::now());
            clusters.delete(&name, &DeleteParams::default()).await?;
        }
        let lat = self.wait(start.started, None, true).await?;
        Ok(start.report("delete", &self.a, lat, self.machines))
    }

    fn set_phase(&self, phase: chaos::Phase) {
        if let Some(c) = &self.chaos {
            c.set_phase(
                phase,
                self.a.control_plane_machines as usize,
                (self.a.workers * self.a.machine_deployments) as usize,
            );
        }
    }

    /// Under chaos: waits until every scheduled fault struck and was remediated and the
    /// fleet is whole again, then runs the end-of-phase checks.
    async fn settle(&self, started: Instant, version: Option<&str>) -> anyhow::Result<()> {
        let Some(chaos) = &self.chaos else { return Ok(()) };
        let deadline = started + Duration::from_secs(self.a.timeout);
        while !chaos.settled() {
            let (injected, scheduled) = chaos.progress();
            self.bar.set_message(format!("remediating ({injected}/{scheduled} faults struck)"));
            if Instant::now() > deadline {
                bail!(
                    "timed out after {}s: {injected} of {scheduled} faults struck, not all remediated: {}",
                    self.a.timeout,
                    chaos.pending()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.wait(started, version, false).await?;
        // A rollout's last old Machines may still be on their way out: give the fleet a
        // moment to be exactly what is wanted before checking that it is.
        let settle_by = Instant::now() + Duration::from_secs(30);
        while !self.exact() && Instant::now() < settle_by {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        chaos.check_end(&self.client, self.per_cluster).await
    }

    /// Every cluster has exactly its wanted Machines, none of them being deleted.
    fn exact(&self) -> bool {
        let p = self.progress.lock();
        let mut per: HashMap<&str, usize> = HashMap::new();
        for (cluster, phase, _) in p.machines.values() {
            *per.entry(cluster.as_str()).or_default() += 1;
            if phase == "Deleting" {
                return false;
            }
        }
        per.len() == self.a.clusters && per.values().all(|n| *n == self.per_cluster)
    }

    fn api(&self, api_version: &str, kind: &str) -> Api<DynamicObject> {
        let ar = drydock_controllers::external::api_resource(api_version, kind);
        Api::namespaced_with(self.client.clone(), "default", &ar)
    }

    /// Forgets the previous phase's per-cluster start and ready times.
    fn restart_clocks(&self) {
        let mut p = self.progress.lock();
        p.created_at.clear();
        p.ready_at.clear();
    }

    async fn wait(&self, started: Instant, version: Option<&str>, deleting: bool) -> anyhow::Result<Latencies> {
        wait_phase(&self.a, &self.progress, &self.bar, started, self.per_cluster, version, deleting).await
    }
}

/// Up to ten Machines not Running (at `version`), with their phase and version.
fn not_ready(p: &Progress, version: Option<&str>) -> String {
    let mut v: Vec<String> = p
        .machines
        .iter()
        .filter(|(_, (_, phase, ver))| phase != "Running" || version.is_some_and(|want| ver != want))
        .map(|(name, (_, phase, ver))| format!("{name} {phase} {ver}"))
        .collect();
    v.sort();
    v.truncate(10);
    v.join(", ")
}

/// Waits until every cluster has all its machines Running at `version` (or, when
/// `deleting`, until no machine is left); returns per-cluster times to ready.
async fn wait_phase(
    a: &FleetArgs,
    progress: &Arc<Mutex<Progress>>,
    bar: &indicatif::ProgressBar,
    started: Instant,
    per_cluster: usize,
    version: Option<&str>,
    deleting: bool,
) -> anyhow::Result<Latencies> {
    let deadline = started + Duration::from_secs(a.timeout);
    loop {
        let (done, machines_ok, clusters_ok) = {
            let mut p = progress.lock();
            if deleting {
                // A cluster is gone once its last Machine is.
                let left = p.machines.len();
                let remaining: HashSet<String> = p.machines.values().map(|(c, _, _)| c.clone()).collect();
                let now = Instant::now();
                let gone: Vec<String> = p.created_at.keys().filter(|c| !remaining.contains(*c)).cloned().collect();
                for c in gone {
                    p.ready_at.entry(c).or_insert(now);
                }
                bar.set_position((a.clusters * per_cluster).saturating_sub(left) as u64);
                (left == 0, 0, 0)
            } else {
                let running = p.per_cluster_running(version);
                let ready: Vec<String> =
                    running.iter().filter(|(_, n)| **n >= per_cluster).map(|(c, _)| c.to_string()).collect();
                let machines_ok: usize = running.values().sum();
                let now = Instant::now();
                for c in &ready {
                    p.ready_at.entry(c.clone()).or_insert(now);
                }
                let t = started.elapsed().as_secs_f64();
                p.samples.push((t, ready.len(), machines_ok));
                bar.set_position(machines_ok as u64);
                (ready.len() >= a.clusters, machines_ok, ready.len())
            }
        };
        if done {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "timed out after {}s: {clusters_ok} clusters / {machines_ok} machines ready; Machines not ready: {}",
                a.timeout,
                not_ready(&progress.lock(), version)
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let p = progress.lock();
    let mut lat = Latencies::default();
    for (c, ready) in &p.ready_at {
        if let Some(created) = p.created_at.get(c) {
            lat.push(ready.saturating_duration_since(*created));
        }
    }
    Ok(lat)
}
