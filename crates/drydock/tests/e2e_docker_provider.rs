//! Upstream's Docker provider kinds end to end: a cluster written as upstream's docker
//! quick-start templates write it (`data/cluster-template-docker.yaml`: a
//! KubeadmControlPlane and a MachineDeployment on a DockerCluster and DockerMachineTemplates)
//! applies with kubectl, with a warning that drydock runs no containers, and provisions on
//! the in-memory provider: Machines Running, Ready Nodes in the workload cluster, the
//! DockerCluster's failure domains used by the control plane, and every Docker object read
//! in both served versions with the `BackendSimulated` condition. (ClusterClasses on the
//! Docker kinds, MachinePools included: `e2e_topology::an_e2e_style_class_...`.)

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{Env, json, kubectl, ready_nodes, running, wait, workload_kubeconfig};
use serde_json::Value;

const TEMPLATE: &str = include_str!("data/cluster-template-docker.yaml");
const WAIT: Duration = Duration::from_secs(120);

/// The template with clusterctl's variables substituted, the Docker objects in `version`.
fn manifest(cluster: &str, version: &str) -> String {
    let failure_domains = if version == "v1beta2" {
        "[{name: fd-a, controlPlane: true}, {name: fd-b, controlPlane: true}]"
    } else {
        "{fd-a: {controlPlane: true}, fd-b: {controlPlane: true}}"
    };
    let vars = [
        ("${CLUSTER_NAME}", cluster),
        ("${NAMESPACE}", "default"),
        ("${KUBERNETES_VERSION}", "v1.33.0"),
        ("${CONTROL_PLANE_MACHINE_COUNT}", "1"),
        ("${WORKER_MACHINE_COUNT}", "2"),
        ("${DOCKER_API_VERSION}", version),
        ("${DOCKER_FAILURE_DOMAINS}", failure_domains),
    ];
    let body = TEMPLATE.split_once("\napiVersion:").map_or(TEMPLATE.to_string(), |(_, b)| format!("apiVersion:{b}"));
    vars.iter().fold(body, |text, (var, value)| text.replace(var, value))
}

fn condition<'a>(conditions: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions.as_array()?.iter().find(|c| c["type"] == type_)
}

fn items(v: &Value) -> Vec<Value> {
    v["items"].as_array().cloned().unwrap_or_default()
}

/// Applies the cluster with its Docker objects in `version` and checks it provisions.
async fn provisions(cluster: &str, version: &str) {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let (ok, out, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&manifest(cluster, version)));
    assert!(ok, "kubectl apply failed:\n{out}\n{err}");
    assert!(err.contains("drydock runs no containers"), "admission warns: {err}");
    assert!(err.contains("this DockerMachineTemplate behaves as an in-memory one"), "{err}");

    wait("every Machine Running", WAIT, || running(&kc, cluster) == 3).await;
    let wkc = workload_kubeconfig(&env, &kc, cluster);
    wait("a Ready Node per Machine in the workload cluster", WAIT, || ready_nodes(&wkc) == 3).await;
    check_cluster(&kc, cluster);
    check_machines(&kc, cluster);
}

/// The DockerCluster is provisioned in both versions, its endpoint set, its failure domains
/// offered to the Cluster and used by the control plane.
fn check_cluster(kc: &Path, cluster: &str) {
    let c2 = json(kc, &["get", "dockerclusters.v1beta2.infrastructure.cluster.x-k8s.io", cluster]);
    assert_eq!(c2["status"]["initialization"]["provisioned"], true, "{c2:#}");
    assert!(c2["spec"]["controlPlaneEndpoint"]["port"].as_i64().is_some_and(|p| p > 0), "{c2:#}");
    let fds: Vec<&str> =
        c2["status"]["failureDomains"].as_array().into_iter().flatten().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(fds, ["fd-a", "fd-b"], "{c2:#}");
    let simulated = condition(&c2["status"]["deprecated"]["v1beta1"]["conditions"], "BackendSimulated");
    assert_eq!(simulated.map(|c| c["reason"].clone()), Some(Value::from("NoContainerRuntime")), "{c2:#}");
    let c1 = json(kc, &["get", "dockerclusters.v1beta1.infrastructure.cluster.x-k8s.io", cluster]);
    assert_eq!(c1["status"]["ready"], true, "{c1:#}");
    assert!(c1["status"]["failureDomains"]["fd-a"].is_object(), "a map by name in v1beta1: {c1:#}");

    let c = json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", cluster]);
    let offered: Vec<&str> =
        c["status"]["failureDomains"].as_array().into_iter().flatten().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(offered, ["fd-a", "fd-b"], "{c:#}");
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster},cluster.x-k8s.io/control-plane");
    for m in items(&json(kc, &["get", "machines.v1beta2.cluster.x-k8s.io", "-l", &selector])) {
        let fd = m["spec"]["failureDomain"].as_str().unwrap_or_default();
        assert!(fd == "fd-a" || fd == "fd-b", "control plane Machine outside the failure domains: {m:#}");
        assert_eq!(m["status"]["failureDomain"].as_str(), Some(fd), "where it runs, as upstream reports it: {m:#}");
    }
}

/// Each DockerMachine is provisioned with its provider ID, reads the same in both versions
/// and says it is simulated; its Machine points at it.
fn check_machines(kc: &Path, cluster: &str) {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let m2 = items(&json(kc, &["get", "dockermachines.v1beta2.infrastructure.cluster.x-k8s.io", "-l", &selector]));
    let m1 = items(&json(kc, &["get", "dockermachines.v1beta1.infrastructure.cluster.x-k8s.io", "-l", &selector]));
    assert_eq!((m2.len(), m1.len()), (3, 3));
    for (m2, m1) in m2.iter().zip(&m1) {
        let name = m2["metadata"]["name"].as_str().unwrap_or_default();
        assert_eq!(m2["status"]["initialization"]["provisioned"], true, "{m2:#}");
        assert_eq!(m2["spec"]["providerID"], format!("in-memory://{name}"));
        assert_eq!(m2["spec"]["extraMounts"][0]["hostPath"], "/var/run/docker.sock", "kept as written: {m2:#}");
        assert_eq!((m1["metadata"]["name"].as_str(), &m1["status"]["ready"]), (Some(name), &Value::from(true)));
        assert_eq!(m1["spec"], m2["spec"], "the same spec fields in both versions");
        let simulated = condition(&m1["status"]["conditions"], "BackendSimulated").cloned().unwrap_or_default();
        assert_eq!(simulated["status"], "True", "{m1:#}");
    }
    for m in items(&json(kc, &["get", "machines.v1beta2.cluster.x-k8s.io", "-l", &selector])) {
        assert_eq!(m["spec"]["infrastructureRef"]["kind"], "DockerMachine", "{m:#}");
        assert_eq!(m["status"]["phase"], "Running", "{m:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_on_v1beta2_docker_kinds_provisions() {
    provisions("docker-v2", "v1beta2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_on_v1beta1_docker_kinds_provisions() {
    provisions("docker-v1", "v1beta1").await;
}
