//! `drydock bench apiserver`: raw capacity of the embedded API server over HTTP (or HTTPS
//! with client certificates, `--tls`): create, update, get, list and watch throughput with
//! latency percentiles, on a fresh durable store.

use std::future::Future;
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

use drydock_apiserver::auth::pki_files::ServerPki;

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
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// Serve HTTPS and connect with the administrator's client certificate, as `drydock up`
    /// does, instead of plain HTTP.
    #[arg(long)]
    pub tls: bool,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// One phase's figures.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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

/// Where the clients connect: the address, and the TLS client when serving HTTPS.
#[derive(Clone)]
struct Target {
    addr: SocketAddr,
    tls: Option<tokio_rustls::TlsConnector>,
}

async fn connect(target: &Target) -> anyhow::Result<Sender> {
    let stream = tokio::net::TcpStream::connect(target.addr).await.context("connecting")?;
    stream.set_nodelay(true)?;
    match &target.tls {
        None => http1(stream).await,
        Some(tls) => {
            let name = rustls::pki_types::ServerName::from(target.addr.ip());
            http1(tls.connect(name, stream).await.context("TLS handshake")?).await
        }
    }
}

async fn http1<Io>(io: Io) -> anyhow::Result<Sender>
where
    Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

/// A TLS client trusting `pki`'s CA and presenting its administrator's certificate.
fn tls_client(pki: &ServerPki) -> anyhow::Result<tokio_rustls::TlsConnector> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pki.ca.cert_pem().as_bytes()) {
        roots.add(cert?)?;
    }
    let chain = CertificateDer::pem_slice_iter(pki.admin.cert_pem.as_bytes()).collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_slice(pki.admin.key_pem.as_bytes())?;
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)?;
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
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

/// A client on its own connection, timing its requests.
struct Client {
    s: Sender,
    lat: Latencies,
}

impl Client {
    async fn connect(target: &Target) -> anyhow::Result<Self> {
        Ok(Self { s: connect(target).await?, lat: Latencies::default() })
    }

    async fn call(&mut self, method: &str, path: &str, ct: &str, body: Bytes) -> anyhow::Result<(u16, Bytes)> {
        let t = Instant::now();
        let out = call(&mut self.s, method, path, ct, body).await?;
        self.lat.push(t.elapsed());
        Ok(out)
    }
}

/// Runs `n` clients at once, each connecting on its own, client `i` doing `work(i, client)`;
/// returns what each returned.
async fn clients<T, F, Fut>(target: &Target, n: usize, work: F) -> anyhow::Result<Vec<T>>
where
    F: Fn(usize, Client) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    let mut tasks = Vec::new();
    for i in 0..n {
        let (work, target) = (work.clone(), target.clone());
        tasks.push(tokio::spawn(async move { work(i, Client::connect(&target).await?).await }));
    }
    let mut out = Vec::with_capacity(n);
    for t in tasks {
        out.push(t.await??);
    }
    Ok(out)
}

fn merged(parts: impl IntoIterator<Item = Latencies>) -> Latencies {
    let mut lat = Latencies::default();
    for l in parts {
        lat.extend(l);
    }
    lat
}

/// A fresh server on a durable store in a temporary directory, served on a local port.
struct Served {
    target: Target,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
    _server: drydock_apiserver::ApiServer,
    _dir: tempfile::TempDir,
}

async fn serve(args: &ApiBenchArgs) -> anyhow::Result<Served> {
    let dir = tempfile::tempdir()?;
    let config = drydock_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        sync: if args.sync == "normal" {
            drydock_apiserver::store::SyncMode::Normal
        } else {
            drydock_apiserver::store::SyncMode::Full
        },
        etcd: args.store.fresh_etcd()?,
        ..Default::default()
    };
    let server = drydock_apiserver::ApiServer::start(config, Vec::new(), Vec::new()).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = server.router();
    let (serving, tls) = if args.tls {
        let pki = ServerPki::load_or_create(Some(dir.path()), &["127.0.0.1".to_string()])?;
        let listener = server.tls_listener(listener, &pki)?;
        let service = router.into_make_service_with_connect_info::<drydock_apiserver::auth::Peer>();
        (tokio::spawn(async move { axum::serve(listener, service).await }), Some(tls_client(&pki)?))
    } else {
        (tokio::spawn(async move { axum::serve(listener, router).await }), None)
    };
    Ok(Served { target: Target { addr, tls }, serving, _server: server, _dir: dir })
}

/// Shape of the write phases: `writers` clients writing `per_writer` objects each.
#[derive(Clone)]
struct Shape {
    target: Target,
    writers: usize,
    per_writer: usize,
}

/// Runs the benchmark against a fresh server and returns the phases.
pub async fn run(args: &ApiBenchArgs) -> anyhow::Result<Vec<Phase>> {
    let served = serve(args).await?;
    let target = served.target.clone();
    let mut s = connect(&target).await?;
    call(
        &mut s,
        "POST",
        "/api/v1/namespaces",
        "application/json",
        json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}).to_string().into(),
    )
    .await?;

    let payload: Arc<str> = "x".repeat(args.payload).into();
    let writers = args.writers.max(1);
    let shape = Shape { target: target.clone(), writers, per_writer: args.objects.div_ceil(writers) };
    let total = writers * shape.per_writer;
    let mut phases = Vec::new();

    let started = Instant::now();
    let (lat, rvs) = create_phase(shape.clone(), &payload).await?;
    phases.push(Phase::new("create", total, started.elapsed(), lat));
    let started = Instant::now();
    let lat = update_phase(shape.clone(), rvs, &payload).await?;
    phases.push(Phase::new("update", total, started.elapsed(), lat));
    let started = Instant::now();
    let lat = get_phase(shape.clone()).await?;
    phases.push(Phase::new("get", total, started.elapsed(), lat));
    let started = Instant::now();
    let lists = 40;
    let lat = list_phase(&target, lists).await?;
    phases.push(Phase::new(&format!("list ({total} objects)"), lists, started.elapsed(), lat));
    phases.extend(watch_phase(args, shape, &mut s).await?);
    if args.store.store == "sqlite" {
        print_store_figures(&mut s).await?;
    }
    served.serving.abort();
    Ok(phases)
}

/// Creates every object; returns the latencies and each writer's acknowledged versions.
async fn create_phase(shape: Shape, payload: &Arc<str>) -> anyhow::Result<(Latencies, Vec<Vec<String>>)> {
    let per_writer = shape.per_writer;
    let payload = payload.clone();
    let results = clients(&shape.target, shape.writers, move |w, mut c| {
        let payload = payload.clone();
        async move {
            let mut rvs = Vec::with_capacity(per_writer);
            for i in 0..per_writer {
                let body = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":format!("cm-{w}-{i}"),"labels":{"writer":w.to_string()}},"data":{"payload":&*payload}});
                let (code, resp) = c.call("POST", NS_PATH, "application/json", body.to_string().into()).await?;
                if code != 201 {
                    bail!("create answered {code}: {}", String::from_utf8_lossy(&resp));
                }
                rvs.push(rv_of(&resp)?);
            }
            Ok((c.lat, rvs))
        }
    })
    .await?;
    let (lats, rvs): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    Ok((merged(lats), rvs))
}

/// Updates every object (PUT with the acknowledged resourceVersion).
async fn update_phase(shape: Shape, rvs: Vec<Vec<String>>, payload: &Arc<str>) -> anyhow::Result<Latencies> {
    let (rvs, payload) = (Arc::new(rvs), payload.clone());
    let lats = clients(&shape.target, rvs.len(), move |w, mut c| {
        let (payload, rvs) = (payload.clone(), rvs.clone());
        async move {
            for (i, rv) in rvs[w].iter().enumerate() {
                let body = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":format!("cm-{w}-{i}"),"resourceVersion":rv,"labels":{"writer":w.to_string()}},"data":{"payload":&*payload,"v":"2"}});
                let path = format!("{NS_PATH}/cm-{w}-{i}");
                let (code, resp) = c.call("PUT", &path, "application/json", body.to_string().into()).await?;
                if code != 200 {
                    bail!("update answered {code}: {}", String::from_utf8_lossy(&resp));
                }
            }
            Ok(c.lat)
        }
    })
    .await?;
    Ok(merged(lats))
}

/// Reads every object once, each client reading other writers' objects.
async fn get_phase(shape: Shape) -> anyhow::Result<Latencies> {
    let Shape { writers, per_writer, .. } = shape;
    let lats = clients(&shape.target, writers, move |w, mut c| async move {
        for i in 0..per_writer {
            let (code, _) = c.call("GET", &format!("{NS_PATH}/cm-{}-{i}", (w + i) % writers), "", Bytes::new()).await?;
            if code != 200 {
                bail!("get answered {code}");
            }
        }
        Ok(c.lat)
    })
    .await?;
    Ok(merged(lats))
}

/// Whole-namespace lists and label-selected lists, 8 clients.
async fn list_phase(target: &Target, lists: usize) -> anyhow::Result<Latencies> {
    let lats = clients(target, 8, move |c_i, mut c| async move {
        for i in 0..lists / 8 {
            let path = if i % 2 == 0 { NS_PATH.to_string() } else { format!("{NS_PATH}?labelSelector=writer%3D{c_i}") };
            let (code, body) = c.call("GET", &path, "", Bytes::new()).await?;
            if code != 200 || body.len() < 100 {
                bail!("list answered {code}");
            }
        }
        Ok(c.lat)
    })
    .await?;
    Ok(merged(lats))
}

/// Fan-out of every write to every watcher: patches while `args.watchers` watch, until every
/// watcher has seen every event (or two minutes pass).
async fn watch_phase(args: &ApiBenchArgs, shape: Shape, s: &mut Sender) -> anyhow::Result<[Phase; 2]> {
    let (code, body) = call(s, "GET", NS_PATH, "", Bytes::new()).await?;
    if code != 200 {
        bail!("list before watch answered {code}");
    }
    let start_rv = rv_of(&body)?;
    let received = Arc::new(AtomicU64::new(0));
    let mut watchers = Vec::new();
    for _ in 0..args.watchers {
        watchers.push(start_watcher(&shape.target, &start_rv, received.clone()).await?);
    }
    let expected = (args.watchers * args.watch_writes) as u64;
    let started = Instant::now();
    let wpw = args.watch_writes.div_ceil(shape.writers);
    let lat = patch_phase(shape.clone(), wpw).await?;
    let writes = shape.writers * wpw;
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
    let patched = Phase::new("patch (while watched)", writes, elapsed, lat);
    let mut delivered = Phase::new(
        &format!("watch events delivered ({} watchers)", args.watchers),
        got as usize,
        elapsed,
        Latencies::default(),
    );
    delivered.p50_ms = 0.0;
    delivered.p99_ms = 0.0;
    if got < expected {
        bail!("watchers received {got} of {expected} events");
    }
    Ok([patched, delivered])
}

/// A watch from `start_rv` counting the events it receives into `received`.
async fn start_watcher(
    target: &Target,
    start_rv: &str,
    received: Arc<AtomicU64>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let path = format!("{NS_PATH}?watch=true&resourceVersion={start_rv}&timeoutSeconds=600");
    let mut ws = connect(target).await?;
    let req = Request::builder().uri(path).header("host", "localhost").body(Full::new(Bytes::new()))?;
    ws.ready().await?;
    let resp = ws.send_request(req).await?;
    let mut body = resp.into_body();
    Ok(tokio::spawn(async move {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { break };
            if let Some(data) = frame.data_ref() {
                let n = data.iter().filter(|b| **b == b'\n').count() as u64;
                received.fetch_add(n, Ordering::Relaxed);
            }
        }
    }))
}

/// `wpw` merge patches per writer, cycling through its objects.
async fn patch_phase(shape: Shape, wpw: usize) -> anyhow::Result<Latencies> {
    let per_writer = shape.per_writer;
    let lats = clients(&shape.target, shape.writers, move |w, mut c| async move {
        for i in 0..wpw {
            let patch = json!({"data": {"tick": i.to_string()}});
            let path = format!("{NS_PATH}/cm-{w}-{}", i % per_writer);
            let (code, _) = c.call("PATCH", &path, "application/merge-patch+json", patch.to_string().into()).await?;
            if code != 200 {
                bail!("patch answered {code}");
            }
        }
        Ok(c.lat)
    })
    .await?;
    Ok(merged(lats))
}

/// Group commit figures from the server's metrics.
async fn print_store_figures(s: &mut Sender) -> anyhow::Result<()> {
    let (_, metrics) = call(s, "GET", "/metrics", "", Bytes::new()).await?;
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
    Ok(())
}

pub async fn main(args: ApiBenchArgs) -> anyhow::Result<()> {
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    println!(
        "drydock bench apiserver: {}, {} objects of {} B, {} writers, {} watchers, store {}{}",
        if args.tls { "HTTPS with client certificates" } else { "plain HTTP" },
        args.objects,
        args.payload,
        args.writers,
        args.watchers,
        args.store.store,
        if args.store.store == "sqlite" { format!(" sync={}", args.sync) } else { String::new() },
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
        let doc = json!({"args": {"objects": args.objects, "writers": args.writers, "watchers": args.watchers, "payload": args.payload, "sync": args.sync, "store": args.store.store, "tls": args.tls},
            "phases": phases, "cpu_seconds": cpu, "peak_rss_mib": peak});
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
