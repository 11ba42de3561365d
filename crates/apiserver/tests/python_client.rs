//! The official Python `kubernetes` client (installed from PyPI by the CI script) runs a
//! CRUD + watch + conflict scenario against the server, and a scenario over built-in kinds
//! beyond the core ones and a CRD installed at runtime; server-side apply from the same client
//! and from lightkube (also from PyPI) on a built-in kind, a custom resource and a Cluster API kind.

use crate::common;

use std::process::Command;

/// Runs `tests/python/<script>` against a fresh server; it prints `<passed>` when done.
async fn run_scenario(script: &str, passed: &str) {
    run_scenario_on(common::start().await, script, passed).await;
}

async fn run_scenario_on(s: common::TestServer, script: &str, passed: &str) {
    let script = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let kubeconfig = s.kubeconfig(None);
    let out = tokio::task::spawn_blocking(move || Command::new("python3").arg(script).arg(kubeconfig).output())
        .await
        .expect("join")
        .expect("python3 must be installed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python scenario failed (needs `pip install kubernetes lightkube`):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(passed), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_kubernetes_client_scenario() {
    run_scenario("client_scenario.py", "python scenario passed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_on_built_in_kinds_and_crds() {
    run_scenario("general_scenario.py", "python general scenario passed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_clients_apply_server_side() {
    let s = common::start_with_capi().await;
    run_scenario_on(s, "apply_scenario.py", "python apply scenario passed").await;
}
