//! `drydock bench`: provisions a fleet of in-memory clusters on a fresh drydock (durable
//! store, as in production) and reports time to ready, throughput, latency percentiles,
//! API requests and writes per machine, CPU and memory; optionally upgrades and deletes the
//! fleet. The same run measures the API server's raw write capacity for comparison.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use futures::StreamExt;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::stats::{Latencies, cpu_seconds, peak_rss_mib, rss_mib};
use crate::commands::generate::{GenerateClusterArgs, render};
use crate::instance::{Instance, Options};

#[derive(Args, Debug, Clone)]
pub struct FleetArgs {
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    #[arg(long, default_value_t = 1)]
    pub control_plane_machines: u32,
    #[arg(long, default_value_t = 3)]
    pub workers: u32,
    /// MachineDeployments per cluster (workers are per MachineDeployment).
    #[arg(long, default_value_t = 1)]
    pub machine_deployments: u32,
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
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Draw ready clusters and machines over time as SVG.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
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

#[derive(Debug, Clone, serde::Serialize)]
pub struct PhaseReport {
    pub name: String,
    pub seconds: f64,
    pub clusters_per_second: f64,
    pub machines_per_second: f64,
    pub p50_seconds: f64,
    pub p99_seconds: f64,
    pub api_requests: f64,
    pub api_writes: f64,
    pub writes_per_machine: f64,
    pub requests_per_machine: f64,
    pub cpu_seconds: f64,
}

fn manifest_docs(a: &FleetArgs, i: usize, version: &str) -> anyhow::Result<Vec<Value>> {
    let g = GenerateClusterArgs {
        name: format!("c{i:05}"),
        kubernetes_version: version.into(),
        control_plane_machine_count: a.control_plane_machines,
        worker_machine_count: a.workers,
        target_namespace: "default".into(),
        startup_duration: a.startup_duration.clone(),
    };
    let docs: Vec<Value> = serde_saphyr::from_multiple(&render(&g)).context("generated manifest")?;
    let mut out = Vec::new();
    for d in docs {
        let kind = d["kind"].as_str().unwrap_or_default();
        if kind == "MachineHealthCheck" {
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

/// Sums of `apiserver_request_total` (all, and writes) from the server's metrics.
fn request_totals(text: &str) -> (f64, f64) {
    let mut all = 0.0;
    let mut writes = 0.0;
    for line in text.lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        let Some(v) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else { continue };
        all += v;
        if ["verb=\"POST\"", "verb=\"PUT\"", "verb=\"PATCH\"", "verb=\"DELETE\""].iter().any(|w| line.contains(w)) {
            writes += v;
        }
    }
    (all, writes)
}

/// API writes so far by resource (`resource` or `resource/subresource` as labelled).
fn writes_by_resource(text: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        if !["verb=\"POST\"", "verb=\"PUT\"", "verb=\"PATCH\"", "verb=\"DELETE\""].iter().any(|w| line.contains(w)) {
            continue;
        }
        let Some(v) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else { continue };
        let resource = line.split("resource=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or_default();
        *out.entry(resource.to_string()).or_insert(0.0) += v;
    }
    out
}

fn metrics_text() -> String {
    let mut s = String::new();
    let _ = drydock_apiserver::metrics::encode(&mut s);
    s
}

fn store_rows() -> f64 {
    let text = metrics_text();
    text.lines()
        .find_map(|l| l.strip_prefix("drydock_store_commit_batch_size_sum").and_then(|r| r.trim().parse().ok()))
        .unwrap_or(0.0)
}

pub async fn main(a: FleetArgs) -> anyhow::Result<()> {
    crate::logging::init("warn");
    let machines_per_cluster = (a.control_plane_machines + a.workers * a.machine_deployments) as usize;
    let total_machines = a.clusters * machines_per_cluster;
    println!(
        "drydock bench: {} clusters × ({} control plane + {}×{} workers) = {} machines, startup {}, concurrency {}",
        a.clusters,
        a.control_plane_machines,
        a.machine_deployments,
        a.workers,
        total_machines,
        a.startup_duration,
        a.concurrency
    );

    // Raw capacity of the API server on this machine, measured first on its own server.
    let raw = super::apiserver::run(&super::apiserver::ApiBenchArgs {
        objects: 10_000,
        writers: 64,
        watchers: 0,
        watch_writes: 0,
        payload: 2048,
        sync: "full".into(),
        json: None,
    })
    .await?;
    let raw_writes = raw.iter().find(|p| p.name == "create").map_or(0.0, |p| p.per_second);
    println!("raw API server capacity: {raw_writes:.0} durable writes/s (2 KiB objects, 64 writers)");

    let dir = tempfile::tempdir()?;
    let mut settings = drydock_controllers::Settings::default();
    if a.controller_workers > 0 {
        settings = settings.with_concurrency(a.controller_workers);
    }
    let opts = Options {
        server: drydock_apiserver::Config { data_dir: Some(dir.path().to_path_buf()), ..Default::default() },
        settings,
        ..Options::default()
    };
    let mut instance = Instance::start(opts).await?;
    instance.spawn_serve()?;
    let client = instance.server.client(None);
    // The controllers are stopped whatever happens, before the runtime goes.
    let outcome: anyhow::Result<()> = async {
    let progress = Arc::new(Mutex::new(Progress::default()));

    // Watch machines to follow the fleet.
    let machines: Api<drydock_api::capi::core::Machine> = Api::namespaced(client.clone(), "default");
    let p2 = progress.clone();
    tokio::spawn(async move {
        watcher(machines, watcher::Config::default())
            .for_each(|ev| {
                let mut p = p2.lock();
                match ev {
                    Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) => {
                        let name = m.metadata.name.clone().unwrap_or_default();
                        let phase = m.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
                        let version = m.spec.version.clone().unwrap_or_default();
                        p.machines.insert(name, (m.spec.cluster_name.clone(), phase, version));
                    }
                    Ok(watcher::Event::Delete(m)) => {
                        p.machines.remove(&m.metadata.name.clone().unwrap_or_default());
                    }
                    _ => {}
                }
                futures::future::ready(())
            })
            .await;
    });

    let bar = indicatif::ProgressBar::new(total_machines as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} machines {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut reports = Vec::new();
    let version = "v1.30.2";

    // Provision.
    bar.set_message("provisioning");
    let (req0, wr0) = request_totals(&metrics_text());
    let by_resource0 = writes_by_resource(&metrics_text());
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let sem = Arc::new(tokio::sync::Semaphore::new(a.concurrency.max(1)));
    let mut creators = Vec::new();
    for i in 0..a.clusters {
        let docs = manifest_docs(&a, i, version)?;
        let client = client.clone();
        let progress = progress.clone();
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
    let provision = wait_phase(&a, &progress, &bar, started, machines_per_cluster, Some(version), false).await?;
    reports.push(report("provision", &a, started.elapsed(), provision, req0, wr0, cpu0, total_machines));
    let mut by_resource: Vec<(String, f64)> = writes_by_resource(&metrics_text())
        .into_iter()
        .map(|(r, v)| {
            let before = by_resource0.get(&r).copied().unwrap_or(0.0);
            (r, (v - before) / total_machines.max(1) as f64)
        })
        .filter(|(_, v)| *v >= 0.05)
        .collect();
    by_resource.sort_by(|a, b| b.1.total_cmp(&a.1));
    let listed: Vec<String> = by_resource.iter().map(|(r, v)| format!("{r} {v:.1}")).collect();
    bar.suspend(|| println!("provisioning writes per machine by resource: {}", listed.join(", ")));

    if a.upgrade {
        let target = "v1.31.0";
        bar.set_message("upgrading");
        bar.set_position(0);
        let (req0, wr0) = request_totals(&metrics_text());
        let cpu0 = cpu_seconds();
        let started = Instant::now();
        progress.lock().created_at.clear();
        progress.lock().ready_at.clear();
        let kcps: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            "default",
            &drydock_controllers::external::api_resource(
                "controlplane.cluster.x-k8s.io/v1beta1",
                "KubeadmControlPlane",
            ),
        );
        let mds: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            "default",
            &drydock_controllers::external::api_resource("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
        );
        for i in 0..a.clusters {
            let name = format!("c{i:05}");
            progress.lock().created_at.insert(name.clone(), Instant::now());
            kcps.patch(
                &format!("{name}-control-plane"),
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"version": target}})),
            )
            .await?;
            for md in 0..a.machine_deployments {
                mds.patch(
                    &format!("{name}-md-{md}"),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"template": {"spec": {"version": target}}}})),
                )
                .await?;
            }
        }
        let lat = wait_phase(&a, &progress, &bar, started, machines_per_cluster, Some(target), false).await?;
        reports.push(report("upgrade", &a, started.elapsed(), lat, req0, wr0, cpu0, total_machines));
    }

    if a.delete {
        bar.set_message("deleting");
        let (req0, wr0) = request_totals(&metrics_text());
        let cpu0 = cpu_seconds();
        let started = Instant::now();
        let clusters: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            "default",
            &drydock_controllers::external::api_resource("cluster.x-k8s.io/v1beta1", "Cluster"),
        );
        progress.lock().created_at.clear();
        progress.lock().ready_at.clear();
        for i in 0..a.clusters {
            let name = format!("c{i:05}");
            progress.lock().created_at.insert(name.clone(), Instant::now());
            clusters.delete(&name, &DeleteParams::default()).await?;
        }
        let lat = wait_phase(&a, &progress, &bar, started, machines_per_cluster, None, true).await?;
        reports.push(report("delete", &a, started.elapsed(), lat, req0, wr0, cpu0, total_machines));
    }
    bar.finish_and_clear();

    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header([
        "PHASE",
        "SECONDS",
        "CLUSTERS/S",
        "MACHINES/S",
        "P50 S",
        "P99 S",
        "REQUESTS/MACHINE",
        "WRITES/MACHINE",
        "CPU S",
    ]);
    for r in &reports {
        table.add_row([
            r.name.clone(),
            format!("{:.1}", r.seconds),
            format!("{:.1}", r.clusters_per_second),
            format!("{:.1}", r.machines_per_second),
            format!("{:.2}", r.p50_seconds),
            format!("{:.2}", r.p99_seconds),
            format!("{:.1}", r.requests_per_machine),
            format!("{:.1}", r.writes_per_machine),
            format!("{:.1}", r.cpu_seconds),
        ]);
    }
    println!("{table}");
    let peak = peak_rss_mib();
    let achieved = reports.first().map_or(0.0, |r| r.api_writes / r.seconds.max(1e-9));
    let rows = store_rows();
    println!(
        "peak RSS {peak:.0} MiB (now {:.0} MiB); store rows written {rows:.0}; provisioning wrote {achieved:.0} API writes/s = {:.0}% of the raw capacity ({raw_writes:.0}/s)",
        rss_mib(),
        100.0 * achieved / raw_writes.max(1.0)
    );
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    let mut per_controller: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for line in text.lines().filter(|l| l.starts_with("controller_runtime_reconcile_total{")) {
        let Some(v) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else { continue };
        let ctl = line.split("controller=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or_default().to_string();
        let e = per_controller.entry(ctl).or_default();
        e.0 += v;
        if line.contains("result=\"error\"") {
            e.1 += v;
        }
    }
    let summary: Vec<String> = per_controller
        .iter()
        .map(|(c, (n, err))| {
            format!(
                "{c} {:.1}{}",
                n / total_machines.max(1) as f64,
                if *err > 0.0 { format!(" ({err:.0} errors)") } else { String::new() }
            )
        })
        .collect();
    println!("reconciles per machine: {}", summary.join(", "));
    let watches: f64 = metrics_text()
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{") && l.contains("verb=\"WATCH\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    println!("watch requests: {watches:.0}");
    if let Some(path) = &a.plot {
        plot(path, &progress.lock().samples, total_machines, a.clusters)?;
        println!("plot written to {}", path.display());
    }
    if let Some(path) = &a.json {
        let doc = json!({"clusters": a.clusters, "machines": total_machines, "phases": reports, "peak_rss_mib": peak,
            "raw_writes_per_second": raw_writes, "achieved_writes_per_second": achieved});
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)?;
    }
        Ok(())
    }
    .await;
    instance.stop_controllers().await;
    outcome
}

#[allow(clippy::too_many_arguments)]
fn report(
    name: &str,
    a: &FleetArgs,
    elapsed: Duration,
    mut lat: Latencies,
    req0: f64,
    wr0: f64,
    cpu0: f64,
    machines: usize,
) -> PhaseReport {
    let (req, wr) = request_totals(&metrics_text());
    let secs = elapsed.as_secs_f64().max(1e-9);
    PhaseReport {
        name: name.into(),
        seconds: secs,
        clusters_per_second: a.clusters as f64 / secs,
        machines_per_second: machines as f64 / secs,
        p50_seconds: lat.quantile(0.5).as_secs_f64(),
        p99_seconds: lat.quantile(0.99).as_secs_f64(),
        api_requests: req - req0,
        api_writes: wr - wr0,
        writes_per_machine: (wr - wr0) / machines.max(1) as f64,
        requests_per_machine: (req - req0) / machines.max(1) as f64,
        cpu_seconds: cpu_seconds() - cpu0,
    }
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
            bail!("timed out after {}s: {clusters_ok} clusters / {machines_ok} machines ready", a.timeout);
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

fn plot(
    path: &std::path::Path,
    samples: &[(f64, usize, usize)],
    machines: usize,
    clusters: usize,
) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let t_max = samples.last().map_or(1.0, |s| s.0).max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption("drydock bench: ready over time", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..t_max, 0f64..(machines.max(clusters) as f64))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart.configure_mesh().x_desc("seconds").y_desc("count").draw().map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .draw_series(LineSeries::new(samples.iter().map(|s| (s.0, s.2 as f64)), &BLUE))
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .label("machines running")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(LineSeries::new(samples.iter().map(|s| (s.0, s.1 as f64)), &RED))
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .label("clusters ready")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart.configure_series_labels().border_style(BLACK).draw().map_err(|e| anyhow::anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}
