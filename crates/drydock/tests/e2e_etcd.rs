//! Several `drydock up` replicas on one 3-member etcd cluster: every replica serves every
//! write in etcd's order, the controllers run in one replica at a time, and the fleet
//! survives the loss of the leading replica and of an etcd member.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};

use common::etcd::EtcdCluster;
use common::{
    Process, free_port, json, kubeconfig_of_process, kubectl_ok, leads, machines_not_running, one_leader,
    process_client, scrape, spawn_drydock_with, wait, wait_or_report,
};

const MINUTE: Duration = Duration::from_secs(60);
const LEASE: &str = "3s";
/// The load balancer the replicas stand behind, as far as workload cluster endpoints go.
const EXTERNAL: &str = "drydock.example:7443";

/// A `drydock up` replica on `etcd`: its data dir (kubeconfig and certificates), process
/// and kubeconfig.
struct Replica {
    _dir: tempfile::TempDir,
    process: Process,
    kc: PathBuf,
}

async fn replica(etcd: &EtcdCluster) -> Replica {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let flags = ["--store", &etcd.store_url(), "--leader-elect-lease-duration", LEASE, "--external-hostname", EXTERNAL];
    let mut process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &flags);
    let kc = kubeconfig_of_process(&mut process, dir.path()).await;
    Replica { _dir: dir, process, kc }
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "data": {"value": value},
    }))
    .expect("ConfigMap")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_one_replica_is_read_and_watched_through_another_in_order() {
    let etcd = EtcdCluster::start(3).await;
    // Started together: both write drydock's CRDs and default namespaces at once.
    let (a, b) = tokio::join!(replica(&etcd), replica(&etcd));
    let on_a: Api<ConfigMap> = Api::namespaced(process_client(a._dir.path()).await, "default");
    let on_b: Api<ConfigMap> = Api::namespaced(process_client(b._dir.path()).await, "default");
    // The replicas share one CA: a's kubeconfig works through b, and both wrote the same CA.
    let b_server = kube::config::Kubeconfig::read_from(&b.kc).expect("kubeconfig").clusters[0]
        .cluster
        .as_ref()
        .and_then(|c| c.server.clone())
        .expect("b's server");
    kubectl_ok(&a.kc, &["--server", &b_server, "get", "ns", "default"], None);
    let ca = |r: &Replica| std::fs::read_to_string(r._dir.path().join("pki/ca.crt")).expect("ca.crt");
    assert_eq!(ca(&a), ca(&b), "one CA for both replicas");

    let from = on_b.list(&ListParams::default().limit(1)).await.expect("list").metadata.resource_version;
    let watch = on_b.watch(&WatchParams::default(), &from.expect("list revision")).await.expect("watch through b");
    let mut written: Vec<(&str, String, Option<String>)> = Vec::new();
    for i in 0..10 {
        let name = format!("cm-{i}");
        let made = on_a.create(&PostParams::default(), &config_map(&name, "1")).await.expect("create through a");
        let rv = made.metadata.resource_version.clone();
        // A read through the other replica right after the write sees it, at the same revision.
        let read = on_b.get(&name).await.expect("read through b");
        assert_eq!(read.metadata.resource_version, rv, "{name} read through b");
        written.push(("ADDED", name, rv));
    }
    for i in (0..10).rev() {
        let name = format!("cm-{i}");
        let patch = Patch::Merge(serde_json::json!({"data": {"value": "2"}}));
        let changed = on_a.patch(&name, &PatchParams::default(), &patch).await.expect("patch through a");
        let read = on_b.get(&name).await.expect("read through b");
        assert_eq!(read.data, changed.data, "{name} read through b after the patch");
        written.push(("MODIFIED", name, changed.metadata.resource_version));
    }
    for i in [3, 7] {
        let name = format!("cm-{i}");
        on_a.delete(&name, &DeleteParams::default()).await.expect("delete through a");
        assert!(on_b.get_opt(&name).await.expect("read through b").is_none(), "{name} is gone through b");
        written.push(("DELETED", name, None));
    }

    let mut seen: Vec<(&str, String, Option<String>)> = Vec::new();
    let mut events = watch.boxed();
    let deadline = Instant::now() + MINUTE;
    while seen.len() < written.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let ev = tokio::time::timeout(left, events.try_next())
            .await
            .unwrap_or_else(|_| panic!("the watch through b delivered only {seen:?}"))
            .expect("watch event")
            .expect("the watch through b ended early");
        match ev {
            WatchEvent::Added(o) => {
                seen.push(("ADDED", o.metadata.name.unwrap_or_default(), o.metadata.resource_version))
            }
            WatchEvent::Modified(o) => {
                seen.push(("MODIFIED", o.metadata.name.unwrap_or_default(), o.metadata.resource_version))
            }
            WatchEvent::Deleted(o) => seen.push(("DELETED", o.metadata.name.unwrap_or_default(), None)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error: {e:?}"),
        }
    }
    assert_eq!(seen, written, "the watch through b shows a's writes in order");

    // Each replica reports its etcd calls as kube-apiserver does.
    let metrics = tokio::task::block_in_place(|| scrape(&a.kc));
    let txns = metrics
        .lines()
        .filter(|l| l.starts_with("etcd_request_duration_seconds_count{") && l.contains("operation=\"txn\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>();
    assert!(txns >= 22.0, "a's writes were etcd transactions: {txns}");
}

/// Each Machine of the fleet `fleet-*`: name → (cluster, phase).
fn fleet_machines(kc: &std::path::Path) -> BTreeMap<String, (String, String)> {
    let v = json(kc, &["get", "machines"]);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
            (s(&m["metadata"]["name"]), (s(&m["spec"]["clusterName"]), s(&m["status"]["phase"])))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_completes_when_the_leading_replica_and_an_etcd_member_are_killed() {
    const CLUSTERS: usize = 10;
    let mut etcd = EtcdCluster::start(3).await;
    let mut replicas = vec![replica(&etcd).await, replica(&etcd).await];

    let leader = one_leader([&replicas[0].kc, &replicas[1].kc]).await;
    let standby = 1 - leader;

    // One control plane Machine and one worker per cluster, each taking 2 s to start.
    let mut manifest = String::new();
    for i in 0..CLUSTERS {
        let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["generate", "cluster", &format!("fleet-{i}"), "--worker-machine-count", "1"])
            .args(["--startup-duration", "2s"])
            .output()
            .expect("drydock generate");
        assert!(out.status.success(), "{out:?}");
        manifest.push_str(&String::from_utf8_lossy(&out.stdout));
        manifest.push_str("---\n");
    }
    let kc = replicas[standby].kc.clone();
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    wait("the leader to create the first Machines", MINUTE, || !fleet_machines(&kc).is_empty()).await;
    let running = |kc: &std::path::Path| fleet_machines(kc).values().filter(|(_, p)| p == "Running").count();
    assert!(running(&kc) < 2 * CLUSTERS, "killed before provisioning completed");

    replicas[leader].process.kill().expect("SIGKILL the leading replica");
    let killed = Instant::now();
    etcd.kill(0);
    wait("the standby replica to take the Lease over", MINUTE, || leads(&replicas[standby].kc) == Some(true)).await;
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(3 + 4), "the standby took {took:?} to lead (lease duration 3 s)");

    wait_or_report(
        "every Machine of the fleet Running",
        3 * MINUTE,
        || running(&kc) == 2 * CLUSTERS,
        || machines_not_running(&kc),
    )
    .await;
    let all = fleet_machines(&kc);
    assert_eq!(all.len(), 2 * CLUSTERS, "no Machine duplicated or lost: {all:?}");
    for i in 0..CLUSTERS {
        let cluster = format!("fleet-{i}");
        assert_eq!(all.values().filter(|(c, _)| *c == cluster).count(), 2, "{cluster}: {all:?}");
    }

    // Every cluster's endpoint is the replicas' external one, on the infrastructure
    // cluster and on the Cluster that copied it, whichever replica provisioned it.
    for i in 0..CLUSTERS {
        let name = format!("fleet-{i}");
        let endpoint = |kind: &str| {
            let o = json(&kc, &["get", kind, &name]);
            let e = &o["spec"]["controlPlaneEndpoint"];
            format!("{}:{}", e["host"].as_str().unwrap_or_default(), e["port"])
        };
        assert_eq!(endpoint("inmemorycluster"), EXTERNAL, "{name}");
        assert_eq!(endpoint("cluster"), EXTERNAL, "{name}");
    }

    // A replica that joins now serves the same state, resourceVersions included.
    replicas.push(replica(&etcd).await);
    let versions = |kc: &std::path::Path| {
        kubectl_ok(
            kc,
            &[
                "get",
                "machines,clusters",
                "-A",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}",
            ],
            None,
        )
    };
    let joined = replicas[2].kc.clone();
    wait("the new replica to list what the others do", MINUTE, || versions(&joined) == versions(&kc)).await;
    assert_eq!(fleet_machines(&joined), fleet_machines(&kc));
}
