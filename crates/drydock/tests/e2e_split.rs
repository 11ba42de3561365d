//! The API server and the controllers as separate processes: `drydock up --no-controllers`
//! serves the API alone, and `drydock controllers --kubeconfig` provisions a cluster
//! through it over HTTP, serving its own metrics, and stops on SIGTERM; with
//! `--leader-elect`, one of two runs the controllers and the other takes over when it dies.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

use common::{
    Process, free_port, generated_cluster, json, kubeconfig_of, kubectl_ok, leads, machines, machines_not_running,
    one_leader, ready_nodes, running, scrape, spawn_drydock_with, total, wait, wait_or_report,
};

const MINUTE: Duration = Duration::from_secs(60);

/// `drydock controllers` against `kc`, serving metrics on `metrics_port`, with `flags`; their
/// log filter is `warn` unless `SPLIT_LOG` names another (e.g. `info` to follow a takeover).
fn spawn_controllers(kc: &Path, metrics_port: u16, flags: &[&str]) -> Process {
    Process(
        Command::new(env!("CARGO_BIN_EXE_drydock"))
            .arg("controllers")
            .arg("--kubeconfig")
            .arg(kc)
            .args(["--metrics-bind-address", &format!("127.0.0.1:{metrics_port}")])
            .args(flags)
            .env("DRYDOCK_LOG", std::env::var("SPLIT_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn drydock controllers"),
    )
}

/// `drydock up --no-controllers` on a new data dir: the dir, the process and its kubeconfig.
async fn api_server_alone() -> (tempfile::TempDir, Process, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let server = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &["--no-controllers"]);
    let kc = kubeconfig_of(dir.path()).await;
    (dir, server, kc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_in_their_own_process_provision_through_an_api_server_alone() {
    let (dir, _server, kc) = api_server_alone().await;

    let metrics_port = free_port();
    let mut controllers = spawn_controllers(&kc, metrics_port, &[]);

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
    let own = tokio::task::block_in_place(|| scrape(&metrics_port));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_when_the_leader_is_killed_mid_provisioning() {
    let (_dir, _server, kc) = api_server_alone().await;
    let lease = ["--leader-elect", "--leader-elect-lease-duration", "3s"];
    let ports = [free_port(), free_port()];
    let mut candidates = [spawn_controllers(&kc, ports[0], &lease), spawn_controllers(&kc, ports[1], &lease)];

    let leader = one_leader([&ports[0], &ports[1]]).await;
    let standby = 1 - leader;
    let holder = kubectl_ok(
        &kc,
        &[
            "get",
            "lease",
            "-n",
            "kube-system",
            "controller-leader-election-capi",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
        None,
    );
    assert!(!holder.trim().is_empty(), "the Lease names its holder");

    // Provisioning takes a few seconds per Machine: kill the leader once it has begun.
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["generate", "cluster", "ha", "--worker-machine-count", "3", "--startup-duration", "2s"])
        .output()
        .expect("drydock generate");
    assert!(out.status.success(), "{out:?}");
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&String::from_utf8_lossy(&out.stdout)));
    wait("the leader to create the first Machine", MINUTE, || !machines(&kc, "ha").is_empty()).await;
    assert!(running(&kc, "ha") < 4, "killed before provisioning completed");
    candidates[leader].kill().expect("SIGKILL the leader");
    let killed = Instant::now();
    wait("the standby to take the Lease over", MINUTE, || leads(&ports[standby]) == Some(true)).await;
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(3 + 4), "the standby took {took:?} to lead (lease duration 3 s)");

    wait_or_report(
        "every Machine Running under the new leader",
        2 * MINUTE,
        || running(&kc, "ha") == 4,
        || machines_not_running(&kc),
    )
    .await;
    let all = machines(&kc, "ha");
    assert_eq!(all.len(), 4, "no Machine duplicated or lost: {all:?}");
    assert!(total(&scrape(&ports[standby]), "controller_runtime_reconcile_total") > 0.0, "the new leader reconciled");
}
