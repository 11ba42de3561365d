//! `drydock bench apiserver`: raw capacity of the embedded API server over HTTP: create,
//! update, get, list and watch throughput with latency percentiles, on a fresh durable store.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::stats::{Latencies, cpu_seconds, ms, peak_rss_mib};

#[derive(Args, Debug, Clone)]
pub struct ApiBenchArgs {
    /// Objects created (then updated) by the writers.
    #[arg(long, default_value_t = 20_000)]
    pub objects: usize,
    /// Concurrent writers (one HTTP connection each).
    #[arg(long, default_value_t = 64)]
    pub writers: usize,
    /// Concurrent watchers for the watch phase.
    #[arg(long, default_value_t = 100)]
    pub watchers: usize,
    /// Writes made while the watchers listen.
    #[arg(long, default_value_t = 5_000)]
    pub watch_writes: usize,
    /// Bytes of payload per object.
    #[arg(long, default_value_t = 1024)]
    pub payload: usize,
    /// Store durability: full (fsync per group commit) or normal.
    #[arg(long, default_value = "full", value_parser = ["full", "normal"])]
    pub sync: String,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// One phase's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Phase {
    pub name: String,
    pub ops: usize,
    pub seconds: f64,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Phase {
    fn new(name: &str, ops: usize, elapsed: Duration, mut lat: Latencies) -> Self {
        Self {
            name: name.into(),
            ops,
            seconds: elapsed.as_secs_f64(),
            per_second: ops as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_ms: lat.quantile(0.5).as_secs_f64() * 1000.0,
            p99_ms: lat.quantile(0.99).as_secs_f64() * 1000.0,
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> anyhow::Result<Sender> {
    let stream = tokio::net::TcpStream::connect(addr).await.context("connecting")?;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

async fn call(s: &mut Sender, method: &str, path: &str, ct: &str, body: Bytes) -> anyhow::Result<(u16, Bytes)> {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", ct)
        .header("accept", "application/json")
        .body(Full::new(body))?;
    s.ready().await?;
    let resp = s.send_request(req).await?;
    let code = resp.status().as_u16();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((code, body))
}

fn rv_of(body: &[u8]) -> anyhow::Result<String> {
    let v: Value = serde_json::from_slice(body)?;
    v["metadata"]["resourceVersion"].as_str().map(str::to_string).context("no resourceVersion")
}

const NS_PATH: &str = "/api/v1/namespaces/bench/configmaps";

/// Runs the benchmark against a fresh server and returns the phases.
pub async fn run(args: &ApiBenchArgs) -> anyhow::Result<Vec<Phase>> {
    let dir = tempfile::tempdir()?;
    let config = drydock_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        sync: if args.sync == "normal" {
            drydock_apiserver::store::SyncMode::Normal
        } else {
            drydock_apiserver::store::SyncMode::Full
        },
        ..Default::default()
    };
    let server = drydock_apiserver::ApiServer::start(config, Vec::new(), Vec::new()).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = server.router();
    let serving = tokio::spawn(async move { axum::serve(listener, router).await });
    let mut s = connect(addr).await?;
    call(
        &mut s,
        "POST",
        "/api/v1/namespaces",
        "application/json",
        json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}).to_string().into(),
    )
    .await?;

    let payload = "x".repeat(args.payload);
    let writers = args.writers.max(1);
    let per_writer = args.objects.div_ceil(writers);
    let mut phases = Vec::new();

    // create
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let payload = payload.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = connect(addr).await?;
            let mut lat = Latencies::default();
            let mut rvs = Vec::with_capacity(per_writer);
            for i in 0..per_writer {
                let body = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":format!("cm-{w}-{i}"),"labels":{"writer":w.to_string()}},"data":{"payload":payload}});
                let t = Instant::now();
                let (code, resp) = call(&mut s, "POST", NS_PATH, "application/json", body.to_string().into()).await?;
                lat.push(t.elapsed());
                if code != 201 {
                    bail!("create answered {code}: {}", String::from_utf8_lossy(&resp));
                }
                rvs.push(rv_of(&resp)?);
            }
            Ok::<_, anyhow::Error>((lat, rvs))
        }));
    }
    let mut lat = Latencies::default();
    let mut rvs = Vec::new();
    for t in tasks {
        let (l, r) = t.await??;
        lat.extend(l);
        rvs.push(r);
    }
    let total = writers * per_writer;
    phases.push(Phase::new("create", total, started.elapsed(), lat));

    // update (PUT with the acknowledged resourceVersion)
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (w, rvs) in rvs.into_iter().enumerate() {
        let payload = payload.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = connect(addr).await?;
            let mut lat = Latencies::default();
            for (i, rv) in rvs.iter().enumerate() {
                let body = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":format!("cm-{w}-{i}"),"resourceVersion":rv,"labels":{"writer":w.to_string()}},"data":{"payload":payload,"v":"2"}});
                let t = Instant::now();
                let (code, resp) = call(&mut s, "PUT", &format!("{NS_PATH}/cm-{w}-{i}"), "application/json", body.to_string().into()).await?;
                lat.push(t.elapsed());
                if code != 200 {
                    bail!("update answered {code}: {}", String::from_utf8_lossy(&resp));
                }
            }
            Ok::<_, anyhow::Error>(lat)
        }));
    }
    let mut lat = Latencies::default();
    for t in tasks {
        lat.extend(t.await??);
    }
    phases.push(Phase::new("update", total, started.elapsed(), lat));

    // get
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        tasks.push(tokio::spawn(async move {
            let mut s = connect(addr).await?;
            let mut lat = Latencies::default();
            for i in 0..per_writer {
                let t = Instant::now();
                let (code, _) =
                    call(&mut s, "GET", &format!("{NS_PATH}/cm-{}-{i}", (w + i) % writers), "", Bytes::new()).await?;
                lat.push(t.elapsed());
                if code != 200 {
                    bail!("get answered {code}");
                }
            }
            Ok::<_, anyhow::Error>(lat)
        }));
    }
    let mut lat = Latencies::default();
    for t in tasks {
        lat.extend(t.await??);
    }
    phases.push(Phase::new("get", total, started.elapsed(), lat));

    // list: whole-namespace lists and label-selected lists, 8 clients
    let started = Instant::now();
    let lists = 40;
    let mut tasks = Vec::new();
    for c in 0..8usize {
        tasks.push(tokio::spawn(async move {
            let mut s = connect(addr).await?;
            let mut lat = Latencies::default();
            for i in 0..lists / 8 {
                let path =
                    if i % 2 == 0 { NS_PATH.to_string() } else { format!("{NS_PATH}?labelSelector=writer%3D{c}") };
                let t = Instant::now();
                let (code, body) = call(&mut s, "GET", &path, "", Bytes::new()).await?;
                lat.push(t.elapsed());
                if code != 200 || body.len() < 100 {
                    bail!("list answered {code}");
                }
            }
            Ok::<_, anyhow::Error>(lat)
        }));
    }
    let mut lat = Latencies::default();
    for t in tasks {
        lat.extend(t.await??);
    }
    phases.push(Phase::new(&format!("list ({total} objects)"), lists, started.elapsed(), lat));

    // watch: fan-out of every write to every watcher
    let (code, body) = call(&mut s, "GET", NS_PATH, "", Bytes::new()).await?;
    if code != 200 {
        bail!("list before watch answered {code}");
    }
    let start_rv = rv_of(&body)?;
    let received = Arc::new(AtomicU64::new(0));
    let mut watchers = Vec::new();
    for _ in 0..args.watchers {
        let received = received.clone();
        let path = format!("{NS_PATH}?watch=true&resourceVersion={start_rv}&timeoutSeconds=600");
        let mut ws = connect(addr).await?;
        let req = Request::builder().uri(path).header("host", "localhost").body(Full::new(Bytes::new()))?;
        ws.ready().await?;
        let resp = ws.send_request(req).await?;
        let mut body = resp.into_body();
        watchers.push(tokio::spawn(async move {
            while let Some(frame) = body.frame().await {
                let Ok(frame) = frame else { break };
                if let Some(data) = frame.data_ref() {
                    let n = data.iter().filter(|b| **b == b'\n').count() as u64;
                    received.fetch_add(n, Ordering::Relaxed);
                }
            }
        }));
    }
    let expected = (args.watchers * args.watch_writes) as u64;
    let started = Instant::now();
    let wpw = args.watch_writes.div_ceil(writers);
    let mut tasks = Vec::new();
    for w in 0..writers {
        tasks.push(tokio::spawn(async move {
            let mut s = connect(addr).await?;
            let mut lat = Latencies::default();
            for i in 0..wpw {
                let patch = json!({"data": {"tick": i.to_string()}});
                let t = Instant::now();
                let (code, _) = call(
                    &mut s,
                    "PATCH",
                    &format!("{NS_PATH}/cm-{w}-{}", i % per_writer),
                    "application/merge-patch+json",
                    patch.to_string().into(),
                )
                .await?;
                lat.push(t.elapsed());
                if code != 200 {
                    bail!("patch answered {code}");
                }
            }
            Ok::<_, anyhow::Error>(lat)
        }));
    }
    let mut lat = Latencies::default();
    for t in tasks {
        lat.extend(t.await??);
    }
    let writes = writers * wpw;
    let expected = expected.max((args.watchers * writes) as u64);
    let deadline = Instant::now() + Duration::from_secs(120);
    while received.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = started.elapsed();
    let got = received.load(Ordering::Relaxed);
    for w in watchers {
        w.abort();
    }
    phases.push(Phase::new("patch (while watched)", writes, elapsed, lat));
    let mut p = Phase::new(
        &format!("watch events delivered ({} watchers)", args.watchers),
        got as usize,
        elapsed,
        Latencies::default(),
    );
    p.p50_ms = 0.0;
    p.p99_ms = 0.0;
    phases.push(p);
    if got < expected {
        bail!("watchers received {got} of {expected} events");
    }
    let (_, metrics) = call(&mut s, "GET", "/metrics", "", Bytes::new()).await?;
    let text = String::from_utf8_lossy(&metrics);
    let metric = |name: &str| -> f64 {
        text.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.trim().parse::<f64>().ok())).unwrap_or(0.0)
    };
    let commits = metric("drydock_store_commit_duration_seconds_count");
    println!(
        "store: {commits:.0} commits, {:.1} writes per commit on average, {:.2} ms per commit on average",
        metric("drydock_store_commit_batch_size_sum") / commits.max(1.0),
        metric("drydock_store_commit_duration_seconds_sum") * 1000.0 / commits.max(1.0),
    );
    serving.abort();
    Ok(phases)
}

pub async fn main(args: ApiBenchArgs) -> anyhow::Result<()> {
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    println!(
        "drydock bench apiserver: {} objects of {} B, {} writers, {} watchers, sync={}",
        args.objects, args.payload, args.writers, args.watchers, args.sync
    );
    let phases = run(&args).await?;
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header(["PHASE", "OPS", "SECONDS", "OPS/S", "P50 MS", "P99 MS"]);
    for p in &phases {
        table.add_row([
            p.name.clone(),
            p.ops.to_string(),
            format!("{:.2}", p.seconds),
            format!("{:.0}", p.per_second),
            if p.p50_ms > 0.0 { format!("{:.2}", p.p50_ms) } else { "-".into() },
            if p.p99_ms > 0.0 { format!("{:.2}", p.p99_ms) } else { "-".into() },
        ]);
    }
    println!("{table}");
    let cpu = cpu_seconds() - cpu0;
    let peak = peak_rss_mib();
    println!(
        "total {:.1} s, CPU {cpu:.1} s (client and server share this process), peak RSS {peak:.0} MiB",
        started.elapsed().as_secs_f64()
    );
    let _ = ms;
    if let Some(path) = &args.json {
        let doc = json!({"args": {"objects": args.objects, "writers": args.writers, "watchers": args.watchers, "payload": args.payload, "sync": args.sync},
            "phases": phases, "cpu_seconds": cpu, "peak_rss_mib": peak});
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
