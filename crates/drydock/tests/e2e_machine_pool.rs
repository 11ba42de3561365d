//! MachinePools through kubectl, on a DevMachinePool whose instances are simulated in
//! memory: the pool's KubeadmConfig gets join data, the instances' Nodes appear in the
//! workload cluster and the MachinePool counts them; `kubectl scale` scales it down (unless
//! `replicas-managed-by` leaves the size to the provider); a new
//! version rolls out (every Node replaced, never fewer ready than wanted); the pool's Nodes
//! carry its cluster and its name as owner, as a Machine's carry theirs; deleting the
//! MachinePool removes its infrastructure, bootstrap config and Nodes.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{
    Env, generated_cluster, json, kubectl_ok, ready_nodes, running, wait, wait_or_report, workload_kubeconfig,
};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

fn pool(replicas: u32, version: &str) -> String {
    format!(
        r#"apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
metadata: {{name: workers, namespace: default}}
spec: {{}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DevMachinePool
metadata: {{name: workers, namespace: default}}
spec:
  backend:
    inMemory:
      vm: {{provisioning: {{startupDuration: 1s}}}}
      node: {{provisioning: {{startupDuration: 0s}}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {{name: workers, namespace: default}}
spec:
  clusterName: mp
  replicas: {replicas}
  template:
    spec:
      clusterName: mp
      version: {version}
      bootstrap:
        configRef: {{apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: workers}}
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: DevMachinePool, name: workers}}
"#
    )
}

fn machine_pool(kc: &Path) -> Value {
    json(kc, &["get", "machinepool", "workers"])
}

/// The pool's Nodes in the workload cluster (provider IDs of its instances): name and
/// kubelet version of each. None when the workload API did not answer, so that a failed
/// request is never taken for "no Nodes".
fn pool_nodes(wkc: &Path) -> Option<Vec<(String, String)>> {
    let (ok, out, _) = common::kubectl(wkc, &["get", "nodes", "-o", "json"], None);
    let v: Value = serde_json::from_str(&out).ok().filter(|_| ok)?;
    let nodes = v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["metadata"]["name"].as_str().is_some_and(|s| s.starts_with("workers-")))
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or_default().to_string();
            (name, n["status"]["nodeInfo"]["kubeletVersion"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    Some(nodes)
}

fn pool_node_count(wkc: &Path) -> Option<usize> {
    pool_nodes(wkc).map(|n| n.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_pool_scales_rolls_out_and_goes() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generated_cluster("mp", &["--worker-machine-count", "0"])));
    wait("the control plane Machine Running", 2 * MINUTE, || running(&kc, "mp") == 1).await;
    let wkc = workload_kubeconfig(&env, &kc, "mp");

    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&pool(3, "v1.31.2")));
    wait("3 pool Nodes ready and counted", 2 * MINUTE, || {
        let mp = machine_pool(&kc);
        mp["status"]["readyReplicas"] == 3 && mp["status"]["phase"] == "Running" && pool_node_count(&wkc) == Some(3)
    })
    .await;
    let mp = machine_pool(&kc);
    assert_eq!(mp["spec"]["providerIDList"].as_array().map(Vec::len), Some(3), "{mp}");
    assert_eq!(mp["status"]["nodeRefs"].as_array().map(Vec::len), Some(3), "{mp}");
    assert!(mp["spec"]["template"]["spec"]["bootstrap"]["dataSecretName"].is_string(), "the config's data: {mp}");
    let config = json(&kc, &["get", "kubeadmconfig", "workers"]);
    assert_eq!(config["metadata"]["ownerReferences"][0]["kind"], "MachinePool", "{config}");
    assert_eq!(ready_nodes(&wkc), 4, "the control plane Node and 3 pool Nodes");
    // Each pool Node is annotated with its cluster and the pool as its owner.
    wait("the pool Nodes annotated", MINUTE, || {
        let nodes = common::json(&wkc, &["get", "nodes"]);
        let pool: Vec<&Value> = nodes["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["metadata"]["name"].as_str().is_some_and(|s| s.starts_with("workers-")))
            .collect();
        pool.len() == 3
            && pool.iter().all(|n| {
                let a = &n["metadata"]["annotations"];
                a["cluster.x-k8s.io/owner-kind"] == "MachinePool"
                    && a["cluster.x-k8s.io/owner-name"] == "workers"
                    && a["cluster.x-k8s.io/cluster-name"] == "mp"
                    && a["cluster.x-k8s.io/cluster-namespace"] == "default"
            })
    })
    .await;

    kubectl_ok(&kc, &["scale", "machinepool", "workers", "--replicas", "1"], None);
    wait("the pool down to 1 Node", MINUTE, || {
        machine_pool(&kc)["status"]["replicas"] == 1 && pool_node_count(&wkc) == Some(1)
    })
    .await;
    let kept = pool_nodes(&wkc).expect("the workload API answers");

    // Replicas managed elsewhere: the pool keeps its size and the MachinePool follows it.
    let managed = "cluster.x-k8s.io/replicas-managed-by";
    kubectl_ok(&kc, &["annotate", "machinepool", "workers", &format!("{managed}=external-autoscaler")], None);
    kubectl_ok(&kc, &["scale", "machinepool", "workers", "--replicas", "3"], None);
    wait("the MachinePool back at the pool's 1 replica", MINUTE, || machine_pool(&kc)["spec"]["replicas"] == 1).await;
    assert_eq!(pool_nodes(&wkc), Some(kept.clone()), "the pool kept its instance");
    kubectl_ok(&kc, &["annotate", "machinepool", "workers", &format!("{managed}-")], None);

    // A new version: the instance is replaced, a new one ready before the old one goes.
    let patch = r#"{"spec":{"template":{"spec":{"version":"v1.31.1"}}}}"#;
    kubectl_ok(&kc, &["patch", "machinepool", "workers", "--type", "merge", "-p", patch], None);
    let mut lowest = usize::MAX;
    wait("the pool rolled out to v1.31.1", 2 * MINUTE, || {
        let Some(nodes) = pool_nodes(&wkc) else { return false };
        lowest = lowest.min(nodes.len());
        let mp = machine_pool(&kc);
        nodes.len() == 1 && nodes[0].1 == "v1.31.1" && mp["status"]["upToDateReplicas"] == 1
    })
    .await;
    assert_eq!(lowest, 1, "never fewer Nodes than wanted during the rollout");
    assert_ne!(pool_nodes(&wkc).expect("the workload API answers")[0].0, kept[0].0, "the instance was replaced");
    let versions = &machine_pool(&kc)["status"]["versions"];
    assert_eq!(versions, &serde_json::json!([{"version": "v1.31.1", "replicas": 1}]));

    kubectl_ok(&kc, &["delete", "machinepool", "workers", "--wait=true", "--timeout=60s"], None);
    wait("the pool's Nodes and objects gone", MINUTE, || {
        let (ok_pool, _, _) = common::kubectl(&kc, &["get", "devmachinepool", "workers"], None);
        let (ok_config, _, _) = common::kubectl(&kc, &["get", "kubeadmconfig", "workers"], None);
        pool_node_count(&wkc) == Some(0) && !ok_pool && !ok_config
    })
    .await;
    // Only the control plane Node stays, Ready (asked again if the workload API is slow).
    wait_or_report(
        "the control plane Node alone and Ready",
        MINUTE,
        || {
            let (ok, out, _) = common::kubectl(&wkc, &["get", "nodes", "-o", "json"], None);
            let all = serde_json::from_str::<Value>(&out).ok().filter(|_| ok);
            all.is_some_and(|v| v["items"].as_array().map(Vec::len) == Some(1)) && ready_nodes(&wkc) == 1
        },
        || common::kubectl(&wkc, &["get", "nodes", "-o", "wide"], None).1,
    )
    .await;
}
