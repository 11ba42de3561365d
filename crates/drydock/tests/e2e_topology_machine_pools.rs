//! Topology MachinePools end to end: the quick-start class with a machinePool class (a
//! KubeadmConfigTemplate and a DevMachinePoolTemplate) and a Cluster with one pool. The
//! topology makes the MachinePool, its KubeadmConfig and its DevMachinePool (labels,
//! cloned-from annotations and owners as upstream's), only once the control plane is
//! initialized; patches selecting the pool class reach its objects; the pool's Nodes come
//! up; the topology's replicas scale it; a version bump moves the control plane first and
//! the pool after it; dropping the pool from the topology deletes it and its objects.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::watch::{Seen, first_where, record};
use common::{Env, json, kubectl_ok, ready_nodes, wait, workload_kubeconfig};
use drydock_api::capi::core::v1beta2::MachinePool;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::api::Api;
use serde_json::Value;

const CLASS_V1BETA2: &str = include_str!("data/clusterclass-dev-v1beta2.yaml");
const WAIT: Duration = Duration::from_secs(180);
const CLUSTER: &str = "tp";

/// The pool class, inserted at the end of the class's `workers`.
const POOL_CLASS: &str = r#"    machinePools:
      - class: default-pool
        metadata:
          labels: {class-label: pool}
        bootstrap:
          templateRef:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
            kind: KubeadmConfigTemplate
            name: quick-start-default-worker-bootstraptemplate
        infrastructure:
          templateRef:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DevMachinePoolTemplate
            name: quick-start-default-pool
        minReadySeconds: 0
"#;

/// Two patches for the pool class only: a slower VM start on the DevMachinePool and a
/// Node label (from `builtin.machinePool`) in the KubeadmConfig.
const POOL_PATCHES: &str = r#"    - name: poolStartup
      definitions:
        - selector:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DevMachinePoolTemplate
            matchResources:
              machinePoolClass:
                names: ["default-pool"]
          jsonPatches:
            - op: replace
              path: /spec/template/spec/backend/inMemory/vm/provisioning/startupDuration
              value: 2s
    - name: poolNodeLabels
      definitions:
        - selector:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
            kind: KubeadmConfigTemplate
            matchResources:
              machinePoolClass:
                names: ["default-*"]
          jsonPatches:
            - op: add
              path: /spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs
              valueFrom:
                template: |
                  - name: node-labels
                    value: "pool={{ .builtin.machinePool.topologyName }},class={{ .builtin.machinePool.class }}"
"#;

const POOL_TEMPLATE: &str = r#"---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DevMachinePoolTemplate
metadata:
  name: quick-start-default-pool
  namespace: default
spec:
  template:
    spec:
      backend:
        inMemory:
          vm: {provisioning: {startupDuration: 1s}}
          node: {provisioning: {startupDuration: 0s}}
"#;

/// The quick-start class and a Cluster on it with one control-plane Machine, an empty
/// MachineDeployment and the pool `mp-0` of `replicas` machines.
fn manifest(version: &str, replicas: u32) -> String {
    let base = CLASS_V1BETA2
        .replace("${NAMESPACE}", "default")
        .replace("${CLUSTER_NAME}", CLUSTER)
        .replace("${KUBERNETES_VERSION}", version)
        .replace("${CONTROL_PLANE_MACHINE_COUNT}", "1")
        .replace("${WORKER_MACHINE_COUNT}", "0");
    let class_variables = "  variables:\n    - name: etcdImageTag";
    let first_patch = "  patches:\n";
    let topology_workers = "          name: md-0\n          replicas: 0\n";
    for anchor in [class_variables, first_patch, topology_workers] {
        assert_eq!(base.matches(anchor).count(), 1, "the fixture changed: {anchor:?}");
    }
    let pool = format!(
        "      machinePools:\n        - class: default-pool\n          name: mp-0\n          replicas: {replicas}\n"
    );
    base.replace(class_variables, &format!("{POOL_CLASS}{class_variables}"))
        .replace(first_patch, &format!("{first_patch}{POOL_PATCHES}"))
        .replace(topology_workers, &format!("{topology_workers}{pool}"))
        + POOL_TEMPLATE
}

/// The one object of `resource` the topology made for the pool, if there is one.
fn pool_object(kc: &Path, resource: &str) -> Option<Value> {
    let selector = format!(
        "cluster.x-k8s.io/cluster-name={CLUSTER},topology.cluster.x-k8s.io/owned,topology.cluster.x-k8s.io/pool-name=mp-0"
    );
    let list = json(kc, &["get", resource, "-l", &selector]);
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert!(items.len() <= 1, "at most one {resource} of the pool: {list:#}");
    items.into_iter().next()
}

fn topology_reconciled(kc: &Path) -> Value {
    let c = json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", CLUSTER]);
    c["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "TopologyReconciled"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The pool's Nodes in the workload cluster: those named after its DevMachinePool.
fn pool_nodes(wkc: &Path, infra_name: &str) -> Vec<(String, String)> {
    let nodes = json(wkc, &["get", "nodes"]);
    nodes["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["metadata"]["name"].as_str().is_some_and(|s| s.starts_with(&format!("{infra_name}-"))))
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or_default().to_string();
            (name, n["status"]["nodeInfo"]["kubeletVersion"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

/// Labels, annotations and owners of the pool's three objects, and the patches' marks.
fn check_objects(kc: &Path) -> (Value, Value, Value) {
    let mp = pool_object(kc, "machinepools.v1beta2.cluster.x-k8s.io").expect("the MachinePool");
    let config = pool_object(kc, "kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io").expect("the KubeadmConfig");
    let infra = pool_object(kc, "devmachinepools").expect("the DevMachinePool");
    let name = |o: &Value| o["metadata"]["name"].as_str().unwrap_or_default().to_string();
    assert!(name(&mp).starts_with("tp-mp-0-"), "{mp:#}");
    assert!(name(&config).starts_with("tp-mp-0-") && name(&infra).starts_with("tp-mp-0-"), "{config:#} {infra:#}");
    assert_eq!(mp["metadata"]["labels"]["class-label"], "pool", "the class's metadata: {mp:#}");
    let spec = &mp["spec"]["template"]["spec"];
    assert_eq!(spec["bootstrap"]["configRef"]["kind"], "KubeadmConfig");
    assert_eq!(spec["bootstrap"]["configRef"]["name"], config["metadata"]["name"]);
    assert_eq!(spec["infrastructureRef"]["kind"], "DevMachinePool");
    assert_eq!(spec["infrastructureRef"]["name"], infra["metadata"]["name"]);
    let owners = |o: &Value| -> Vec<(String, bool)> {
        o["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| (r["kind"].as_str().unwrap_or_default().to_string(), r["controller"] == true))
            .collect()
    };
    assert!(owners(&mp).iter().any(|(k, _)| k == "Cluster"), "{mp:#}");
    for (o, template) in [
        (&config, "KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io"),
        (&infra, "DevMachinePoolTemplate.infrastructure.cluster.x-k8s.io"),
    ] {
        let labels = &o["metadata"]["labels"];
        assert_eq!(labels["topology.cluster.x-k8s.io/owned"], "", "{o:#}");
        assert_eq!(labels["cluster.x-k8s.io/cluster-name"], CLUSTER, "{o:#}");
        assert_eq!(o["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-groupkind"], template, "{o:#}");
        let owned = owners(o);
        assert!(owned.contains(&("MachinePool".to_string(), true)), "the pool controls it: {o:#}");
        assert!(owned.contains(&("Cluster".to_string(), false)), "the Cluster owns it: {o:#}");
    }
    assert_eq!(
        config["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"],
        "quick-start-default-worker-bootstraptemplate"
    );
    assert_eq!(infra["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"], "quick-start-default-pool");
    // The patches for the pool class reached its objects, with builtin.machinePool.
    assert_eq!(infra["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupDuration"], "2s", "{infra:#}");
    let args = &config["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"];
    assert_eq!(
        args,
        &serde_json::json!([{"name": "node-labels", "value": "pool=mp-0,class=default-pool"}]),
        "{config:#}"
    );
    (mp, config, infra)
}

async fn ready(kc: &Path, wkc: &Path, infra: &str, replicas: usize, version: &str) {
    wait(&format!("{replicas} pool Nodes at {version}, counted and ready"), WAIT, || {
        let Some(mp) = pool_object(kc, "machinepools.v1beta2.cluster.x-k8s.io") else { return false };
        let nodes = pool_nodes(wkc, infra);
        mp["status"]["readyReplicas"] == replicas
            && mp["status"]["versions"] == serde_json::json!([{"version": version, "replicas": replicas}])
            && nodes.len() == replicas
            && nodes.iter().all(|(_, v)| v == version)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topology_machine_pool_is_created_scaled_upgraded_after_the_control_plane_and_removed() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let client = env.client();
    let cp = record(Api::<KubeadmControlPlane>::default_namespaced(client.clone()), |k| {
        let status = k.status.as_ref();
        let initialized = status.and_then(|s| s.initialization.as_ref()).and_then(|i| i.control_plane_initialized);
        let running = status.and_then(|s| s.version.clone()).unwrap_or_default();
        format!("{}/{running}/{}", k.spec.version, initialized == Some(true))
    });
    let pools = record(Api::<MachinePool>::default_namespaced(client), |mp| {
        mp.spec.template.spec.version.clone().unwrap_or_default()
    });
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest("v1.33.0", 1)));
    let adopted = |resource: &str| {
        pool_object(&kc, resource).is_some_and(|o| {
            o["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|r| r["kind"] == "MachinePool")
        })
    };
    wait("the pool's objects adopted by it, and TopologyReconciled", WAIT, || {
        adopted("devmachinepools")
            && adopted("kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io")
            && topology_reconciled(&kc)["status"] == "True"
    })
    .await;
    let (_, _, infra) = check_objects(&kc);
    // The pool waited for an initialized control plane ("pending create").
    let initialized = first_where(&cp, |v| v.ends_with("/true")).expect("the control plane initialized");
    let created = first_where(&pools, |_| true).expect("the MachinePool created");
    assert!(initialized < created, "cp {:?} pool {:?}", cp.lock().expect("lock"), pools.lock().expect("lock"));

    let infra = infra["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let wkc = workload_kubeconfig(&env, &kc, CLUSTER);
    ready(&kc, &wkc, &infra, 1, "v1.33.0").await;
    assert_eq!(ready_nodes(&wkc), 2, "the control plane Node and the pool's");

    // The topology's replicas scale the pool.
    let scale = r#"[{"op":"replace","path":"/spec/topology/workers/machinePools/0/replicas","value":2}]"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io", CLUSTER, "--type", "json", "-p", scale], None);
    ready(&kc, &wkc, &infra, 2, "v1.33.0").await;

    plan_and_describe(&env, &kc);
    upgrade(&kc, &wkc, &infra, &cp, &pools).await;
    removed(&kc, &wkc, &infra).await;
}

fn drydock(kc: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock"))
        .env("KUBECONFIG", kc)
        .args(args)
        .output()
        .expect("run drydock");
    assert!(out.status.success(), "drydock {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `drydock topology plan` lists the pool's objects and puts the pool in the upgrade order;
/// `drydock describe cluster` shows the pool among the workers.
fn plan_and_describe(env: &Env, kc: &Path) {
    let mp = pool_object(kc, "machinepools.v1beta2.cluster.x-k8s.io").expect("the MachinePool");
    let mp_name = mp["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let file = env.dir.path().join("bumped.yaml");
    std::fs::write(&file, manifest("v1.34.0", 2)).expect("write manifest");
    let out = drydock(kc, &["topology", "plan", "-f", &file.to_string_lossy()]);
    let row = |kind: &str| out.lines().find(|l| l.split_whitespace().nth(1) == Some(kind)).unwrap_or_default();
    assert!(row("MachinePool").starts_with("unchanged") && row("MachinePool").contains(&mp_name), "{out}");
    assert!(row("DevMachinePool").starts_with("unchanged"), "{out}");
    assert!(out.contains("3. MachinePool mp-0: v1.33.0 -> v1.34.0"), "the pool after the control plane: {out}");
    let described = drydock(kc, &["describe", "cluster", CLUSTER]);
    assert!(described.contains(&mp_name), "{described}");
}

/// A new topology version: the control plane settles at it before the pool is asked for it.
async fn upgrade(kc: &Path, wkc: &Path, infra: &str, cp: &Seen, pools: &Seen) {
    let bump = r#"{"spec":{"topology":{"version":"v1.34.0"}}}"#;
    kubectl_ok(kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io", CLUSTER, "--type", "merge", "-p", bump], None);
    ready(kc, wkc, infra, 2, "v1.34.0").await;
    wait("TopologyReconciled after the upgrade", WAIT, || topology_reconciled(kc)["status"] == "True").await;
    let settled = first_where(cp, |v| v.starts_with("v1.34.0/v1.34.0/")).expect("the control plane settled at v1.34.0");
    let moved = first_where(pools, |v| v == "v1.34.0").expect("the pool asked for v1.34.0");
    assert!(settled < moved, "cp {:?} pool {:?}", cp.lock().expect("lock"), pools.lock().expect("lock"));
    let plan = json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", CLUSTER]);
    assert!(plan["status"]["workers"]["upgradePlan"].is_null(), "no upgrade left: {plan:#}");
}

/// Dropped from the topology, the pool goes with its config, machine pool and Nodes.
async fn removed(kc: &Path, wkc: &Path, infra: &str) {
    let drop = r#"[{"op":"remove","path":"/spec/topology/workers/machinePools"}]"#;
    kubectl_ok(kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io", CLUSTER, "--type", "json", "-p", drop], None);
    wait("the MachinePool, its KubeadmConfig, its DevMachinePool and its Nodes gone", WAIT, || {
        pool_object(kc, "machinepools.v1beta2.cluster.x-k8s.io").is_none()
            && pool_object(kc, "kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io").is_none()
            && pool_object(kc, "devmachinepools").is_none()
            && pool_nodes(wkc, infra).is_empty()
    })
    .await;
    assert_eq!(topology_reconciled(kc)["status"], "True");
}
