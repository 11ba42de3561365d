//! What `drydock bench` measures and prints: per-phase reports from the server's request
//! counters, the final table and summary lines, the JSON document and the plot.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::FleetArgs;
use crate::bench::stats::{Latencies, cpu_seconds, peak_rss_mib, rss_mib};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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

/// The counters at the start of a phase.
pub(super) struct PhaseStart {
    requests: f64,
    writes: f64,
    cpu: f64,
    pub started: Instant,
}

impl PhaseStart {
    pub fn now() -> Self {
        let (requests, writes) = request_totals(&metrics_text());
        let cpu = cpu_seconds();
        Self { requests, writes, cpu, started: Instant::now() }
    }

    /// The report of the phase begun at `self`, ending now.
    pub fn report(&self, name: &str, a: &FleetArgs, mut lat: Latencies, machines: usize) -> PhaseReport {
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let (req, wr) = request_totals(&metrics_text());
        PhaseReport {
            name: name.into(),
            seconds: secs,
            clusters_per_second: a.clusters as f64 / secs,
            machines_per_second: machines as f64 / secs,
            p50_seconds: lat.quantile(0.5).as_secs_f64(),
            p99_seconds: lat.quantile(0.99).as_secs_f64(),
            api_requests: req - self.requests,
            api_writes: wr - self.writes,
            writes_per_machine: (wr - self.writes) / machines.max(1) as f64,
            requests_per_machine: (req - self.requests) / machines.max(1) as f64,
            cpu_seconds: cpu_seconds() - self.cpu,
        }
    }
}

const WRITE_VERBS: [&str; 4] = ["verb=\"POST\"", "verb=\"PUT\"", "verb=\"PATCH\"", "verb=\"DELETE\""];

/// The value of one metrics line.
fn sample_value(line: &str) -> Option<f64> {
    line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok())
}

/// The value of label `name` on a metrics line.
fn label<'a>(line: &'a str, name: &str) -> &'a str {
    line.split(&format!("{name}=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap_or_default()
}

/// Sums of `apiserver_request_total` (all, and writes) from the server's metrics.
fn request_totals(text: &str) -> (f64, f64) {
    let mut all = 0.0;
    let mut writes = 0.0;
    for line in text.lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        let Some(v) = sample_value(line) else { continue };
        all += v;
        if WRITE_VERBS.iter().any(|w| line.contains(w)) {
            writes += v;
        }
    }
    (all, writes)
}

/// API requests so far, writes by resource (`resource` or `resource/subresource` as
/// labelled), reads (every other verb) by verb and resource (`GET secrets`).
pub(super) fn requests_by_resource() -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in metrics_text().lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        let Some(v) = sample_value(line) else { continue };
        let key = if WRITE_VERBS.iter().any(|w| line.contains(w)) {
            label(line, "resource").to_string()
        } else {
            format!("{} {}", label(line, "verb"), label(line, "resource"))
        };
        *out.entry(key).or_insert(0.0) += v;
    }
    out
}

/// `<resource> <requests per machine>` of the writes (`reads`: false) or reads made at
/// least 0.05 times per machine since `before`, most made first.
pub(super) fn per_machine_since(before: &BTreeMap<String, f64>, machines: usize, reads: bool) -> Vec<String> {
    let mut by_resource: Vec<(String, f64)> = requests_by_resource()
        .into_iter()
        .filter(|(r, _)| r.contains(' ') == reads)
        .map(|(r, v)| {
            let b = before.get(&r).copied().unwrap_or(0.0);
            (r, (v - b) / machines.max(1) as f64)
        })
        .filter(|(_, v)| *v >= 0.05)
        .collect();
    by_resource.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_resource.iter().map(|(r, v)| format!("{r} {v:.1}")).collect()
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

/// The per-phase table.
pub(super) fn print_table(reports: &[PhaseReport]) {
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
    for r in reports {
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
}

/// Reconciles per machine by controller, with error counts.
fn reconciles_per_machine(machines: usize) -> Vec<String> {
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    let mut per_controller: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("controller_runtime_reconcile_total{")) {
        let Some(v) = sample_value(line) else { continue };
        let e = per_controller.entry(label(line, "controller").to_string()).or_default();
        e.0 += v;
        if line.contains("result=\"error\"") {
            e.1 += v;
        }
    }
    per_controller
        .iter()
        .map(|(c, (n, err))| {
            format!(
                "{c} {:.1}{}",
                n / machines.max(1) as f64,
                if *err > 0.0 { format!(" ({err:.0} errors)") } else { String::new() }
            )
        })
        .collect()
}

/// Seconds spent in reconciles by controller, most first: their own work, the API
/// requests they wait for (served in process) and their waits for a worker thread.
fn reconcile_seconds() -> Vec<String> {
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    let mut per_controller: Vec<(String, f64)> = text
        .lines()
        .filter(|l| l.starts_with("controller_runtime_reconcile_time_seconds_sum{"))
        .filter_map(|l| Some((label(l, "controller").to_string(), sample_value(l)?)))
        .filter(|(_, v)| *v >= 0.05)
        .collect();
    per_controller.sort_by(|a, b| b.1.total_cmp(&a.1));
    per_controller.iter().map(|(c, v)| format!("{c} {v:.1}")).collect()
}

/// The summary after the table: memory, store rows and achieved write rate, reconciles,
/// watches; then the plot and the JSON document when asked for.
pub(super) fn print_summary(
    a: &FleetArgs,
    reports: &[PhaseReport],
    raw_writes: f64,
    samples: &[(f64, usize, usize)],
    machines: usize,
    chaos: Option<&super::chaos::Report>,
) -> anyhow::Result<()> {
    let peak = peak_rss_mib();
    let achieved = reports.first().map_or(0.0, |r| r.api_writes / r.seconds.max(1e-9));
    let rows = store_rows();
    println!(
        "peak RSS {peak:.0} MiB (now {:.0} MiB); store rows written {rows:.0}; provisioning wrote {achieved:.0} API writes/s = {:.0}% of the raw capacity ({raw_writes:.0}/s)",
        rss_mib(),
        100.0 * achieved / raw_writes.max(1.0)
    );
    println!("reconciles per machine: {}", reconciles_per_machine(machines).join(", "));
    println!("reconcile seconds (all phases): {}", reconcile_seconds().join(", "));
    let text = metrics_text();
    let watches: f64 = text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{") && l.contains("verb=\"WATCH\""))
        .filter_map(sample_value)
        .sum();
    let sent =
        text.lines().find(|l| l.starts_with("apiserver_watch_events_total")).and_then(sample_value).unwrap_or(0.0);
    println!("watch requests: {watches:.0}; watch events sent {sent:.0}");
    if let Some(path) = &a.plot {
        plot(path, samples, machines, a.clusters)?;
        println!("plot written to {}", path.display());
    }
    if let Some(path) = &a.json {
        let doc = json!({"clusters": a.clusters, "machines": machines, "phases": reports, "peak_rss_mib": peak,
            "raw_writes_per_second": raw_writes, "achieved_writes_per_second": achieved, "chaos": chaos});
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)?;
    }
    Ok(())
}

/// The chaos run: faults scheduled and struck, remediations, and each invariant.
pub(super) fn print_chaos(r: &super::chaos::Report) {
    let list = |m: &std::collections::BTreeMap<String, usize>| {
        let v: Vec<String> = m.iter().map(|(k, n)| format!("{k} {n}")).collect();
        if v.is_empty() { "none".to_string() } else { v.join(", ") }
    };
    println!(
        "chaos: profile {}, seed {}, schedule {}: scheduled {}; struck {}; moot (Machine gone first) {}; {} faulted Machines remediated; controllers restarted {} of {} times; {} API calls failed, {} delayed; {} of {} clusters out of reach for a spell ({} calls refused)",
        r.profile,
        r.seed,
        r.schedule_digest,
        list(&r.scheduled),
        list(&r.injected),
        list(&r.moot),
        r.remediated,
        r.controller_restarts.1,
        r.controller_restarts.0,
        r.api_calls_failed,
        r.api_calls_delayed,
        r.unreachable_spells.1,
        r.unreachable_spells.0,
        r.unreachable_calls
    );
    for i in &r.invariants {
        let verdict = match (i.checks, i.violations) {
            (0, _) => "not exercised".to_string(),
            (n, 0) => format!("holds ({n} checks)"),
            (n, v) => format!("VIOLATED {v} of {n} checks: {}", i.examples.join("; ")),
        };
        println!("  {:<40} {verdict}", i.name);
    }
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
