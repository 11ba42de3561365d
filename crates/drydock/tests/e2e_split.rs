//! The API server and the controllers as two processes: `drydock up --no-controllers`
//! serves the API alone, and `drydock controllers --kubeconfig` provisions a cluster
//! through it over HTTP, serving its own metrics, and stops on SIGTERM.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;

use common::{
    Process, free_port, generated_cluster, json, kubeconfig_of, kubectl_ok, ready_nodes, running, spawn_drydock_with,
    wait,
};

const MINUTE: Duration = Duration::from_secs(60);

/// The value of every sample of `metric` in a Prometheus text exposition, summed.
fn total(exposition: &str, metric: &str) -> f64 {
    exposition
        .lines()
        .filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `GET /metrics` of the process listening on localhost `port` (HTTP/1.0: the answer
/// ends when the connection closes).
fn scrape(port: u16) -> String {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect to metrics");
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").expect("send request");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("read metrics");
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_in_their_own_process_provision_through_an_api_server_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _server = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &["--no-controllers"]);
    let kc = kubeconfig_of(dir.path()).await;

    let metrics_port = free_port();
    let mut controllers = Process(
        Command::new(env!("CARGO_BIN_EXE_drydock"))
            .arg("controllers")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["--metrics-bind-address", &format!("127.0.0.1:{metrics_port}")])
            .env("DRYDOCK_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn drydock controllers"),
    );

    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generated_cluster("split", &["--worker-machine-count", "2"])));
    wait("1 control plane machine and 2 workers Running", 2 * MINUTE, || running(&kc, "split") == 3).await;
    wait("the Cluster Available", MINUTE, || {
        let c = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "split"]);
        c["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Available" && c["status"] == "True"))
    })
    .await;
    let wkc = dir.path().join("split.kubeconfig");
    let text = kubectl_ok(&kc, &["get", "secret", "split-kubeconfig", "-o", "jsonpath={.data.value}"], None);
    let decoded = base64::engine::general_purpose::STANDARD.decode(text.trim()).expect("base64 kubeconfig");
    std::fs::write(&wkc, decoded).expect("write workload kubeconfig");
    wait("3 Ready nodes through the workload kubeconfig", MINUTE, || ready_nodes(&wkc) == 3).await;

    // The reconciles happened in the controllers' process, none in the API server's.
    let own = tokio::task::block_in_place(|| scrape(metrics_port));
    assert!(total(&own, "controller_runtime_reconcile_total") > 0.0, "the controllers' process reconciled:\n{own}");
    let server = kubectl_ok(&kc, &["get", "--raw", "/metrics"], None);
    assert_eq!(total(&server, "controller_runtime_reconcile_total"), 0.0, "the API server ran no controllers");

    // SIGTERM stops the controllers cleanly.
    let pid = controllers.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let status = tokio::task::block_in_place(|| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = controllers.try_wait().expect("wait") {
                return s;
            }
            assert!(std::time::Instant::now() < deadline, "drydock controllers still running 10 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    assert!(status.success(), "drydock controllers exited with {status}");
}
