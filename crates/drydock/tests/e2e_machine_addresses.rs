//! In-memory machines with `addressesFromPools`, through kubectl: each machine claims an
//! address from the pool, starts once it has one and reports it on its Machine; a machine
//! the pool cannot serve waits and says why, and starts when the pool grows; scaling down
//! gives the addresses back to the pool.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use common::{Env, generated_cluster, json, kubectl_ok, running, wait};

const MINUTE: Duration = Duration::from_secs(60);
const POOL: &str = r#"
apiVersion: ipam.cluster.x-k8s.io/v1alpha2
kind: InClusterIPPool
metadata: {name: machines, namespace: default}
spec:
  addresses: ["10.10.0.10-10.10.0.14"]
  prefix: 24
  gateway: 10.10.0.1
"#;

/// The InternalIP addresses of the cluster's Machines.
fn machine_addresses(kc: &Path) -> Vec<String> {
    let v = json(kc, &["get", "machines", "-l", "cluster.x-k8s.io/cluster-name=addr"]);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["status"]["addresses"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["type"] == "InternalIP")
        .filter_map(|a| a["address"].as_str().map(str::to_string))
        .collect()
}

/// `(reason, message)` of VMProvisioned on the InMemoryMachines that have not started.
fn waiting_machines(kc: &Path) -> Vec<(String, String)> {
    let v = json(kc, &["get", "inmemorymachines", "-l", "cluster.x-k8s.io/cluster-name=addr"]);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["status"]["conditions"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "VMProvisioned" && c["status"] == "False")
        .map(|c| (c["reason"].as_str().unwrap_or_default().into(), c["message"].as_str().unwrap_or_default().into()))
        .collect()
}

fn used(kc: &Path) -> i64 {
    json(kc, &["get", "inclusterippool", "machines"])["status"]["ipAddresses"]["used"].as_i64().unwrap_or(-1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_machines_take_their_addresses_from_a_pool() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(POOL));
    let pools = "    spec:\n      addressesFromPools:\n      - {apiGroup: ipam.cluster.x-k8s.io, kind: InClusterIPPool, name: machines}\n      behaviour:";
    let manifest =
        generated_cluster("addr", &["--worker-machine-count", "2"]).replace("    spec:\n      behaviour:", pools);
    assert_eq!(manifest.matches("addressesFromPools").count(), 2, "both templates claim from the pool");
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));

    wait("3 Machines Running", 2 * MINUTE, || running(&kc, "addr") == 3).await;
    wait("3 addresses on the Machines", MINUTE, || machine_addresses(&kc).len() == 3).await;
    let pool: BTreeSet<String> = (10..=14).map(|i| format!("10.10.0.{i}")).collect();
    let got: BTreeSet<String> = machine_addresses(&kc).into_iter().collect();
    assert_eq!(got.len(), 3, "distinct addresses: {got:?}");
    assert!(got.is_subset(&pool), "{got:?} from the pool's range");
    // Each machine owns its claim, so the claim goes with it.
    let claims = json(&kc, &["get", "ipaddressclaims", "-l", "cluster.x-k8s.io/cluster-name=addr"]);
    let owners: Vec<_> = claims["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["metadata"]["ownerReferences"][0]["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(owners, ["InMemoryMachine"; 3]);

    // Six machines on five addresses: one waits, and says for what.
    kubectl_ok(&kc, &["scale", "machinedeployment", "addr-md-0", "--replicas=5"], None);
    wait("5 Machines Running", 2 * MINUTE, || running(&kc, "addr") == 5).await;
    wait("the sixth waiting for an address", MINUTE, || {
        waiting_machines(&kc).iter().any(|(r, m)| r == "WaitingForIPAddresses" && m.contains("IPAddressClaim"))
    })
    .await;
    assert_eq!(running(&kc, "addr"), 5, "no machine starts without its address");

    // The pool grows: the waiting machine gets the new address and starts.
    let grow = r#"{"spec":{"addresses":["10.10.0.10-10.10.0.15"]}}"#;
    kubectl_ok(&kc, &["patch", "inclusterippool", "machines", "--type", "merge", "-p", grow], None);
    wait("6 Machines Running", 2 * MINUTE, || running(&kc, "addr") == 6).await;
    wait("10.10.0.15 on a Machine", MINUTE, || machine_addresses(&kc).contains(&"10.10.0.15".to_string())).await;

    // Scaling down gives the addresses back.
    kubectl_ok(&kc, &["scale", "machinedeployment", "addr-md-0", "--replicas=1"], None);
    wait("2 Machines left", 2 * MINUTE, || machine_addresses(&kc).len() == 2 && running(&kc, "addr") == 2).await;
    wait("2 addresses in use", MINUTE, || used(&kc) == 2).await;
}
