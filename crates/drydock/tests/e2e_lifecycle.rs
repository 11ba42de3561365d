//! `drydock up` as a process people can operate: one server per data dir (a second one
//! exits at once naming the holder, without touching the first's kubeconfig), and a
//! shutdown on SIGTERM that ends within its deadline whatever clients do — open watches,
//! a write storm, a client that never reads — keeps every acknowledged write, and is cut
//! short by a second signal.
#![cfg(unix)]

use crate::common;
use common::Process;

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the tests allow a shutdown, from SIGTERM to the process gone.
const SHUTDOWN_BUDGET: Duration = Duration::from_secs(5);

/// The address in the kubeconfig the server writes once it owns the dir and listens.
async fn server_address(dir: &Path) -> String {
    let path = dir.join("kubeconfig");
    common::eventually("drydock to write its kubeconfig", Duration::from_secs(60), || async {
        let text = std::fs::read_to_string(&path).ok()?;
        text.lines().find_map(|l| l.trim().strip_prefix("server: http://").map(str::to_string))
    })
    .await
}

/// Starts `drydock up` on `dir` and returns the process, its address and a client. Plain
/// HTTP: these tests hold raw HTTP/1.1 streams open (watches, a client that never reads).
async fn start(dir: &Path) -> (common::Process, String, kube::Client) {
    let child = common::spawn_drydock_with(dir, "127.0.0.1:0", &["--plain-http"]);
    let addr = server_address(dir).await;
    let client = common::process_client(dir).await;
    (child, addr, client)
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").arg(format!("-{name}")).arg(child.id().to_string()).status().expect("kill");
    assert!(status.success(), "kill -{name} failed");
}

/// Waits for `child` to exit; panics if it is still running after `timeout`.
async fn exited(child: &mut Child, timeout: Duration) -> ExitStatus {
    common::eventually("drydock to exit", timeout, || {
        let status = child.try_wait().expect("try_wait");
        async move { status }
    })
    .await
}

/// Opens a watch of the default namespace's ConfigMaps over plain HTTP/1.1 and, once the
/// response started, returns the task reading it: it yields the raw response (head and
/// chunked body) when the server closes the connection.
async fn raw_watch(addr: &str) -> tokio::task::JoinHandle<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            format!("GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
        )
        .await
        .expect("send the watch request");
    let mut response = Vec::new();
    while !response.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut buf = [0u8; 1024];
        let n = stream.read(&mut buf).await.expect("read the response head");
        assert!(n > 0, "the server closed the watch before answering");
        response.extend_from_slice(&buf[..n]);
    }
    assert!(response.starts_with(b"HTTP/1.1 200"), "watch refused: {}", String::from_utf8_lossy(&response));
    tokio::spawn(async move {
        stream.read_to_end(&mut response).await.expect("read the watch");
        response
    })
}

fn config_map(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).expect("config map")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_up_on_a_held_data_dir_exits_at_once_naming_the_holder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, addr, client) = start(dir.path()).await;
    let kubeconfig = dir.path().join("kubeconfig");
    let before = std::fs::read(&kubeconfig).expect("kubeconfig");

    let started = Instant::now();
    let mut second = Process(
        Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn a second drydock"),
    );
    let status = exited(&mut second, Duration::from_secs(30)).await;
    let took = started.elapsed();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().expect("stderr"), &mut stderr).expect("read stderr");
    assert!(!status.success(), "the second drydock succeeded: {stderr}");
    assert!(took < Duration::from_secs(5), "the second drydock took {took:?} to give up");
    assert!(stderr.contains(&format!("pid {}", first.id())), "stderr does not name the holder's pid: {stderr}");
    assert!(stderr.contains(&addr), "stderr does not name the holder's address {addr}: {stderr}");

    // The first still serves, from the same kubeconfig.
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &config_map("after", json!({}))).await.expect("the first still serves");
    assert_eq!(std::fs::read(&kubeconfig).expect("kubeconfig"), before, "the kubeconfig was touched");
    drop(first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_open_watches_and_a_write_storm_exits_in_time_keeping_every_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, addr, client) = start(dir.path()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");

    // 50 open watches over raw HTTP, each read to its end.
    let mut watches = Vec::new();
    for _ in 0..50 {
        watches.push(raw_watch(&addr).await);
    }

    let acked = Arc::new(parking_lot::Mutex::new(Vec::<(String, String)>::new()));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (api, acked) = (api.clone(), acked.clone());
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let name = format!("w{w}-{i}");
                match api.create(&PostParams::default(), &config_map(&name, json!({"i": i.to_string()}))).await {
                    Ok(c) => acked.lock().push((name, c.resource_version().expect("rv"))),
                    Err(_) => break,
                }
            }
        }));
    }
    let storm = acked.clone();
    common::eventually("500 acknowledged writes", Duration::from_secs(60), || {
        let n = storm.lock().len();
        async move { (n >= 500).then_some(()) }
    })
    .await;

    let sent = Instant::now();
    signal(&child, "TERM");
    let status = exited(&mut child, Duration::from_secs(30)).await;
    let took = sent.elapsed();
    assert!(took < SHUTDOWN_BUDGET, "shutdown took {took:?}");
    assert!(status.success(), "shutdown did not finish by itself: {status}");
    for w in writers {
        w.await.expect("writer");
    }
    for (i, w) in watches.into_iter().enumerate() {
        let body = tokio::time::timeout(Duration::from_secs(10), w).await.expect("watch ended").expect("watch task");
        let events = body.windows(8).filter(|w| w == b"{\"type\":").count();
        assert!(events > 0, "watch {i} saw no event");
        // A stream the server ended has its last chunk; one cut off by the exit has not.
        assert!(body.ends_with(b"\r\n0\r\n\r\n"), "watch {i} was cut off instead of ended");
    }
    let acked = acked.lock().clone();

    let (child, _, client) = start(dir.path()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let stored: std::collections::HashMap<String, String> = api
        .list(&ListParams::default())
        .await
        .expect("list after restart")
        .items
        .iter()
        .map(|c| (c.name_any(), c.resource_version().unwrap_or_default()))
        .collect();
    for (name, rv) in &acked {
        assert_eq!(stored.get(name), Some(rv), "acknowledged write {name}@{rv} lost or changed");
    }
    drop(child);
}

/// A drydock with a client stuck on a watch: it asked for every ConfigMap (many MiB) and
/// reads nothing, so its response cannot end until the shutdown gives up on it.
async fn start_with_a_stuck_client() -> (tempfile::TempDir, Process, String, tokio::net::TcpStream) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, addr, client) = start(dir.path()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let blob = "x".repeat(700 * 1024);
    for i in 0..24 {
        api.create(&PostParams::default(), &config_map(&format!("big-{i}"), json!({"blob": blob})))
            .await
            .expect("create a big ConfigMap");
    }
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("small receive buffer");
    let mut stream = socket.connect(addr.parse().expect("address")).await.expect("connect");
    stream
        .write_all(
            format!("GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
        )
        .await
        .expect("send the watch request");
    // Peek (never read) until the first event arrived: the watch is streaming.
    let mut buf = vec![0u8; 4096];
    let peeking = async {
        loop {
            let n = stream.peek(&mut buf).await.expect("peek");
            assert!(n > 0, "the server closed the watch");
            if String::from_utf8_lossy(&buf[..n]).contains("\"type\":\"ADDED\"") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), peeking).await.expect("the watch's first event");
    (dir, child, addr, stream)
}

/// Waits until the server stopped accepting connections: its shutdown has begun.
async fn refusing(addr: &str) {
    common::eventually("drydock to stop accepting connections", SHUTDOWN_BUDGET, || async {
        tokio::net::TcpStream::connect(addr).await.is_err().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_cannot_hold_up_the_shutdown() {
    let (_dir, mut child, addr, _stuck) = start_with_a_stuck_client().await;
    let sent = Instant::now();
    signal(&child, "TERM");
    refusing(&addr).await;
    let status = exited(&mut child, Duration::from_secs(30)).await;
    let took = sent.elapsed();
    assert!(took < SHUTDOWN_BUDGET, "shutdown took {took:?}");
    assert!(status.success(), "shutdown did not finish by itself: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_during_the_shutdown_exits_at_once() {
    let (_dir, mut child, addr, _stuck) = start_with_a_stuck_client().await;
    signal(&child, "TERM");
    refusing(&addr).await;
    // The shutdown now waits for the stuck client (up to its drain deadline).
    let sent = Instant::now();
    signal(&child, "TERM");
    let status = exited(&mut child, Duration::from_secs(30)).await;
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(143), "not ended by the second signal: {status}");
    assert!(took < Duration::from_secs(1), "the second signal took {took:?} to end drydock");
}
