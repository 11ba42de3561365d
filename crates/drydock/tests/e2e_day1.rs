//! Day 1 end to end, through the real API server: the sample manifest provisions a cluster
//! whose nodes kubectl lists through the cluster's kubeconfig; scaling workers and the
//! control plane converges; deleting the Cluster removes everything it owned; startup
//! durations are honoured; a SIGKILL mid-provisioning converges to the same machines; 50
//! clusters provision in one run.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    Env, SAMPLE, generated_fleet, json, kubeconfig_of, kubectl, kubectl_ok, machines, ready_nodes, running,
    spawn_drydock, v1beta1, wait, workload_kubeconfig,
};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_provisions_scales_and_deletes() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(SAMPLE));

    wait("3 control plane machines and 3 workers Running", 2 * MINUTE, || running(&kc, "sample") == 6).await;
    wait("Cluster Provisioned and KubeadmControlPlane ready with 3 replicas", MINUTE, || {
        let c = json(&kc, &["get", &v1beta1("cluster"), "sample"]);
        let kcp = json(&kc, &["get", &v1beta1("kcp"), "sample-control-plane"]);
        c["status"]["phase"] == "Provisioned" && kcp["status"]["readyReplicas"] == 3 && kcp["status"]["ready"] == true
    })
    .await;
    let wkc = workload_kubeconfig(&env, &kc, "sample");
    wait("6 Ready nodes through the workload kubeconfig", MINUTE, || ready_nodes(&wkc) == 6).await;

    // Workers 3 → 10 → 1.
    kubectl_ok(&kc, &["scale", "machinedeployment", "sample-workers", "--replicas=10"], None);
    wait("10 workers Running", 2 * MINUTE, || running(&kc, "sample") == 13).await;
    wait("13 Ready nodes", MINUTE, || ready_nodes(&wkc) == 13).await;
    kubectl_ok(&kc, &["scale", "machinedeployment", "sample-workers", "--replicas=1"], None);
    wait("1 worker left", 2 * MINUTE, || machines(&kc, "sample").len() == 4 && running(&kc, "sample") == 4).await;
    wait("4 nodes left", MINUTE, || ready_nodes(&wkc) == 4).await;

    // Control plane 3 → 5 → 3.
    kubectl_ok(
        &kc,
        &["patch", "kcp", "sample-control-plane", "--type", "merge", "-p", r#"{"spec":{"replicas":5}}"#],
        None,
    );
    wait("5 control plane machines Running", 2 * MINUTE, || {
        let kcp = json(&kc, &["get", &v1beta1("kcp"), "sample-control-plane"]);
        kcp["status"]["readyReplicas"] == 5 && running(&kc, "sample") == 6
    })
    .await;
    kubectl_ok(
        &kc,
        &["patch", "kcp", "sample-control-plane", "--type", "merge", "-p", r#"{"spec":{"replicas":3}}"#],
        None,
    );
    wait("back to 3 control plane machines", 2 * MINUTE, || {
        let kcp = json(&kc, &["get", &v1beta1("kcp"), "sample-control-plane"]);
        kcp["status"]["replicas"] == 3 && kcp["status"]["readyReplicas"] == 3 && machines(&kc, "sample").len() == 4
    })
    .await;
    let etcd = json(&wkc, &["get", "pods", "-n", "kube-system", "-l", "component=etcd"]);
    let members: Vec<&Value> = etcd["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["metadata"]["annotations"]["etcd.inmemory.infrastructure.cluster.x-k8s.io/member-removed"].is_null()
        })
        .collect();
    assert_eq!(members.len(), 3, "etcd membership follows the control plane machines");

    // Deleting the Cluster removes everything it owned, and the workload cluster.
    kubectl_ok(&kc, &["delete", "cluster", "sample", "--wait=false"], None);
    wait("the cluster's objects to be gone", 2 * MINUTE, || {
        let (_, out, _) = kubectl(&kc, &["get", "clusters,machines,machinesets,machinedeployments,kcp,inmemorymachines,inmemoryclusters,kubeadmconfigs,secrets", "-o", "name"], None);
        out.trim().is_empty()
    })
    .await;
    let (_, lcs, _) = kubectl(&kc, &["get", "logicalclusters", "-o", "name"], None);
    assert!(!lcs.contains("default.sample"), "the workload logical cluster is gone: {lcs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_durations_are_honoured_and_zero_is_fast() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let generate = |name: &str, dur: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["generate", "cluster", name, "--worker-machine-count", "1", "--startup-duration", dur])
            .output()
            .expect("generate");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let started = Instant::now();
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generate("slow", "3s")));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generate("fast", "0s")));
    wait("fast cluster running", MINUTE, || running(&kc, "fast") == 2).await;
    let fast = started.elapsed();
    wait("slow cluster running", 2 * MINUTE, || running(&kc, "slow") == 2).await;
    let slow = started.elapsed();
    // A control plane machine needs vm (3s) + node (0.6s) + max(etcd, apiserver) (0.6s) at least,
    // and workers wait for it: the slow cluster cannot be ready before 4.2 s.
    assert!(slow >= Duration::from_millis(4200), "slow cluster ready after {slow:?}, before its startup durations");
    assert!(fast < slow, "zero durations ({fast:?}) must beat 3 s ones ({slow:?})");
    // Every slow machine's infrastructure took at least its VM duration.
    let ims = json(&kc, &["get", "inmemorymachines", "-l", "cluster.x-k8s.io/cluster-name=slow"]);
    for im in ims["items"].as_array().into_iter().flatten() {
        let created: jiff::Timestamp =
            im["metadata"]["creationTimestamp"].as_str().unwrap_or_default().parse().expect("ts");
        let node = im["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "NodeProvisioned"))
            .expect("NodeProvisioned");
        let at: jiff::Timestamp = node["lastTransitionTime"].as_str().unwrap_or_default().parse().expect("ts");
        assert!(
            at.as_second() - created.as_second() >= 3,
            "node provisioned {}s after creation",
            at.as_second() - created.as_second()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_provisioning_converges_to_the_same_machines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = spawn_drydock(dir.path(), "127.0.0.1:0");
    let kc = kubeconfig_of(dir.path()).await;
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(SAMPLE));
    // Kill once some machines exist but the cluster is not done.
    wait("some machines to exist", MINUTE, || !machines(&kc, "sample").is_empty()).await;
    let before: BTreeSet<String> = machines(&kc, "sample").into_keys().collect();
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");

    let mut child = spawn_drydock(dir.path(), "127.0.0.1:0");
    let kc = kubeconfig_of(dir.path()).await;
    wait("6 machines Running after restart", 3 * MINUTE, || running(&kc, "sample") == 6).await;
    let after: BTreeSet<String> = machines(&kc, "sample").into_keys().collect();
    assert_eq!(after.len(), 6, "no machine duplicated: {after:?}");
    assert!(
        before.is_subset(&after),
        "machines from before the kill were replaced: before {before:?}, after {after:?}"
    );
    let ims = json(&kc, &["get", "inmemorymachines"]);
    assert_eq!(ims["items"].as_array().map(Vec::len), Some(6), "one infrastructure machine per machine");
    child.kill().expect("kill");
    child.wait().expect("reap");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clusters_provision() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let manifest = generated_fleet(50, 3, |i| format!("f{i:02}"));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    wait("200 machines Running", 5 * MINUTE, || {
        let v = json(&kc, &["get", "machines"]);
        v["items"].as_array().into_iter().flatten().filter(|m| m["status"]["phase"] == "Running").count() == 200
    })
    .await;
    let clusters = json(&kc, &["get", "clusters"]);
    let provisioned =
        clusters["items"].as_array().into_iter().flatten().filter(|c| c["status"]["phase"] == "Provisioned").count();
    assert_eq!(provisioned, 50);
}
