//! ClusterClass and managed topologies end to end: classes written as upstream's in-memory
//! quick-start classes are (v1beta2 on Dev templates, v1beta1 on the InMemory kinds) apply
//! with kubectl and their topology Clusters provision; variables and inline patches reach
//! the generated objects; the topology's fields are kept (a user's edit is reverted, other
//! fields stay); a changed template is rotated and rolls the Machines; an upgrade moves the
//! control plane first, through the class's versions one minor at a time, then the workers;
//! MachineDeployments follow the topology's list.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Env, eventually, json, kubectl, kubectl_ok, running, wait};
use drydock_api::capi::core::v1beta2::MachineDeployment;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use futures::StreamExt;
use kube::api::Api;
use kube::runtime::watcher;
use serde_json::Value;

const CLASS_V1BETA2: &str = include_str!("data/clusterclass-dev-v1beta2.yaml");
const CLASS_V1BETA1: &str = include_str!("data/clusterclass-in-memory-v1beta1.yaml");
const WAIT: Duration = Duration::from_secs(120);

/// The manifest with clusterctl's variables substituted.
fn manifest(template: &str, cluster: &str, version: &str, control_plane: u32, workers: u32) -> String {
    template
        .replace("${NAMESPACE}", "default")
        .replace("${CLUSTER_NAME}", cluster)
        .replace("${KUBERNETES_VERSION}", version)
        .replace("${CONTROL_PLANE_MACHINE_COUNT}", &control_plane.to_string())
        .replace("${WORKER_MACHINE_COUNT}", &workers.to_string())
}

fn condition(obj: &Value, type_: &str) -> Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The one object of a kind that the topology made for `cluster`.
fn owned(kc: &Path, resource: &str, cluster: &str) -> Value {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster},topology.cluster.x-k8s.io/owned");
    let list = json(kc, &["get", resource, "-l", &selector, "--show-managed-fields"]);
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "one {resource} of {cluster}: {list:#}");
    items.into_iter().next().unwrap_or(Value::Null)
}

async fn provisioned(kc: &Path, cluster: &str, machines: usize) {
    wait(&format!("{machines} Running Machines and TopologyReconciled of {cluster}"), WAIT, || {
        let c = json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", cluster]);
        running(kc, cluster) == machines && condition(&c, "TopologyReconciled")["status"] == "True"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1beta2_class_provisions_its_clusters_and_keeps_their_topology() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let (ok, _, stderr) = kubectl(&kc, &["apply", "-f", "-"], Some(&manifest(CLASS_V1BETA2, "qs", "v1.33.0", 3, 2)));
    assert!(ok, "{stderr}");
    provisioned(&kc, "qs", 5).await;

    let (kcp, md) = generated_objects(&kc);
    refuses_what_the_class_does_not_accept(&kc);
    let kcp_resource = format!(
        "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io/{}",
        kcp["metadata"]["name"].as_str().unwrap_or_default()
    );
    reverts_edits(&kc, &kcp_resource).await;
    // (Admission defaulted every variable, in the class's order: replace their values.)
    let set = |index: usize, value: &str| {
        let patch =
            format!(r#"[{{"op":"replace","path":"/spec/topology/variables/{index}/value","value":"{value}"}}]"#);
        kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/qs", "--type", "json", "-p", &patch], None);
    };
    // A variable enabling a patch: the control plane gets the field.
    set(2, "0");
    wait("maxSurge from the enabled patch", WAIT, || surge(&json(&kc, &["get", &kcp_resource])) == 0).await;
    set(3, "2s");
    rolls_onto_a_rotated_template(&kc, &md).await;
}

fn surge(kcp: &Value) -> Value {
    kcp["spec"]["rollout"]["strategy"]["rollingUpdate"]["maxSurge"].clone()
}

/// The class lists its variables; the patches reached the objects made from it. Returns
/// the control plane and the MachineDeployment.
fn generated_objects(kc: &Path) -> (Value, Value) {
    let kc = kc.to_path_buf();
    let class = json(&kc, &["get", "clusterclasses.v1beta2.cluster.x-k8s.io", "quick-start"]);
    let names: Vec<&str> =
        class["status"]["variables"].as_array().into_iter().flatten().filter_map(|v| v["name"].as_str()).collect();
    assert_eq!(names, ["etcdImageTag", "coreDNSImageTag", "kubeadmControlPlaneMaxSurge", "workerStartup"]);
    let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", "qs");
    let config = &kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"];
    assert_eq!(config["etcd"]["local"]["imageTag"], "3.5.16-0", "valueFrom.template");
    assert_eq!(config["dns"]["imageTag"], "v1.11.3");
    assert_eq!(surge(&kcp), 1, "the template's default: the patch's enabledIf was false");
    assert_eq!(kcp["spec"]["version"], "v1.33.0");
    assert_eq!(kcp["spec"]["machineTemplate"]["metadata"]["labels"]["class-label"], "control-plane");
    let managers: Vec<&str> = kcp["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"capi-topology"), "{managers:?}");
    let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "qs");
    assert_eq!(md["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"], "md-0");
    assert_eq!(md["spec"]["replicas"], 2);
    let bootstrap = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"].as_str().unwrap_or_default();
    let config = json(&kc, &["get", "kubeadmconfigtemplates.v1beta2.bootstrap.cluster.x-k8s.io", bootstrap]);
    let args = &config["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"];
    assert_eq!(args[0]["value"], "topology=md-0,cluster=qs", "builtin variables: {args}");
    let cluster = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "qs"]);
    assert_eq!(cluster["spec"]["controlPlaneRef"]["name"], kcp["metadata"]["name"]);
    assert_eq!(cluster["status"]["workers"]["readyReplicas"], 2, "{:#}", cluster["status"]);
    let checks = json(&kc, &["get", "machinehealthchecks", "-l", "cluster.x-k8s.io/cluster-name=qs"]);
    let mut checked: Vec<&str> =
        checks["items"].as_array().into_iter().flatten().filter_map(|m| m["metadata"]["name"].as_str()).collect();
    checked.sort_unstable();
    let mut expected =
        vec![kcp["metadata"]["name"].as_str().unwrap_or_default(), md["metadata"]["name"].as_str().unwrap_or_default()];
    expected.sort_unstable();
    assert_eq!(checked, expected, "health checks from the class, named like what they check");

    (kcp, md)
}

/// Values the class does not accept are refused at admission, with their path; missing ones are defaulted.
fn refuses_what_the_class_does_not_accept(kc: &Path) {
    let kc = kc.to_path_buf();
    let cluster_resource = "clusters.v1beta2.cluster.x-k8s.io/qs";
    for (patch, path) in [
        (
            r#"[{"op":"replace","path":"/spec/topology/variables/0/value","value":5}]"#,
            "spec.topology.variables[0].value",
        ),
        (
            r#"[{"op":"add","path":"/spec/topology/variables/-","value":{"name":"region","value":"x"}}]"#,
            "spec.topology.variables[4].name",
        ),
        (
            r#"[{"op":"replace","path":"/spec/topology/workers/machineDeployments/0/class","value":"gpu"}]"#,
            "spec.topology.workers.machineDeployments[0].class",
        ),
    ] {
        let (ok, _, stderr) = kubectl(&kc, &["patch", cluster_resource, "--type", "json", "-p", patch], None);
        assert!(!ok && stderr.contains("is invalid") && stderr.contains(path), "{patch}: {stderr}");
    }
    let defaulted = json(&kc, &["get", cluster_resource]);
    let names: Vec<&str> = defaulted["spec"]["topology"]["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["etcdImageTag", "coreDNSImageTag", "kubeadmControlPlaneMaxSurge", "workerStartup"],
        "defaulted at admission"
    );
}

/// A user's edit of a field the topology owns is reverted; their own field stays.
async fn reverts_edits(kc: &Path, kcp_resource: &str) {
    let kc = kc.to_path_buf();
    let edit = r#"{"metadata":{"annotations":{"team":"platform"}},"spec":{"kubeadmConfigSpec":{"clusterConfiguration":{"etcd":{"local":{"imageTag":"edited"}}}}}}"#;
    kubectl_ok(&kc, &["patch", kcp_resource, "--type", "merge", "-p", edit], None);
    wait("the topology to revert the edit", WAIT, || {
        let kcp = json(&kc, &["get", kcp_resource]);
        kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["etcd"]["local"]["imageTag"] == "3.5.16-0"
    })
    .await;
    assert_eq!(json(&kc, &["get", kcp_resource])["metadata"]["annotations"]["team"], "platform");
}

/// A variable changing the workers' machine template: a new template, a rollout onto it.
async fn rolls_onto_a_rotated_template(kc: &Path, md: &Value) {
    let kc = kc.to_path_buf();
    let old_template =
        md["spec"]["template"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default().to_string();
    let md_resource =
        format!("machinedeployments.v1beta2.cluster.x-k8s.io/{}", md["metadata"]["name"].as_str().unwrap_or_default());
    let new_template = eventually("a rotated worker template", WAIT, || {
        let md = tokio::task::block_in_place(|| json(&kc, &["get", &md_resource]));
        let name = md["spec"]["template"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default().to_string();
        std::future::ready((name != old_template).then_some(name))
    })
    .await;
    let template = json(&kc, &["get", "devmachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io", &new_template]);
    assert_eq!(
        template["spec"]["template"]["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupDuration"],
        "2s"
    );
    assert_eq!(
        template["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"],
        "quick-start-default-worker-machinetemplate"
    );
    wait("the workers rolled onto the new template", WAIT, || {
        let machines = json(
            &kc,
            &["get", "devmachines.v1beta2.infrastructure.cluster.x-k8s.io", "-l", "cluster.x-k8s.io/cluster-name=qs"],
        );
        let from_new = machines["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == new_template.as_str())
            .count();
        from_new == 2 && running(&kc, "qs") == 5
    })
    .await;
}

/// Every `(resourceVersion, value)` a watch saw, in order. drydock's resourceVersions are
/// store revisions, so they order events across kinds.
type Seen = Arc<Mutex<Vec<(u64, String)>>>;

fn record<K, F>(api: Api<K>, read: F) -> Seen
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    F: Fn(&K) -> String + Send + 'static,
{
    let seen: Seen = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()));
        while let Some(Ok(e)) = events.next().await {
            if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) = e {
                let rv = o.meta().resource_version.as_deref().and_then(|r| r.parse().ok()).unwrap_or_default();
                out.lock().expect("lock").push((rv, read(&o)));
            }
        }
    });
    seen
}

fn first(seen: &Seen, value: &str) -> Option<u64> {
    seen.lock().expect("lock").iter().find(|(_, v)| v == value).map(|(rv, _)| *rv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_moves_the_control_plane_first_one_minor_at_a_time_then_the_workers() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let versioned = manifest(CLASS_V1BETA2, "up", "v1.32.2", 1, 1).replace(
        "  variables:\n    - name: etcdImageTag",
        "  kubernetesVersions: [v1.32.2, v1.33.0, v1.33.4, v1.34.1]\n  variables:\n    - name: etcdImageTag",
    );
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&versioned));
    provisioned(&kc, "up", 2).await;

    let client = env.client();
    let cp = record(Api::<KubeadmControlPlane>::default_namespaced(client.clone()), |k| {
        format!("{}/{}", k.spec.version, k.status.as_ref().and_then(|s| s.version.clone()).unwrap_or_default())
    });
    let workers = record(Api::<MachineDeployment>::default_namespaced(client), |md| {
        md.spec.template.spec.version.clone().unwrap_or_default()
    });
    wait("the watches to start", WAIT, || {
        first(&workers, "v1.32.2").is_some() && first(&cp, "v1.32.2/v1.32.2").is_some()
    })
    .await;
    let patch = r#"{"spec":{"topology":{"version":"v1.34.1"}}}"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/up", "--type", "merge", "-p", patch], None);
    wait("TopologyReconciled to report the upgrade", WAIT, || {
        let c = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "up"]);
        condition(&c, "TopologyReconciled")["reason"] == "ClusterUpgrading"
    })
    .await;
    wait("the workers at v1.34.1", WAIT, || {
        let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "up");
        md["spec"]["template"]["spec"]["version"] == "v1.34.1" && running(&kc, "up") == 2
    })
    .await;
    provisioned(&kc, "up", 2).await;

    // The control plane went through the newest listed v1.33, settled there, then v1.34.1.
    let step = first(&cp, "v1.33.4/v1.33.4").expect("the control plane settled at v1.33.4");
    let next = first(&cp, "v1.34.1/v1.33.4").expect("then asked for v1.34.1");
    assert!(step < next, "{:?}", cp.lock().expect("lock"));
    assert!(first(&cp, "v1.33.0/v1.32.2").is_none(), "v1.33.0 is not the newest v1.33: {:?}", cp.lock().expect("lock"));
    // The workers moved once, straight to the target, after the control plane settled there.
    let settled = first(&cp, "v1.34.1/v1.34.1").expect("the control plane settled at v1.34.1");
    let moved = first(&workers, "v1.34.1").expect("the workers moved");
    assert!(settled < moved, "cp {:?} workers {:?}", cp.lock().expect("lock"), workers.lock().expect("lock"));
    assert!(first(&workers, "v1.33.4").is_none(), "{:?}", workers.lock().expect("lock"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1beta1_class_as_upstream_v1_9_wrote_it_provisions_and_follows_the_worker_list() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(CLASS_V1BETA1, "old", "v1.31.0", 1, 1)));
    provisioned(&kc, "old", 2).await;
    let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta1.controlplane.cluster.x-k8s.io", "old");
    assert_eq!(kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["etcd"]["local"]["imageTag"], "3.5.3-0");
    assert_eq!(kcp["spec"]["machineTemplate"]["infrastructureRef"]["kind"], "InMemoryMachineTemplate");
    let cluster = json(&kc, &["get", "clusters.v1beta1.cluster.x-k8s.io", "old"]);
    assert_eq!(cluster["spec"]["infrastructureRef"]["kind"], "InMemoryCluster");

    // A second MachineDeployment in the topology is created, and deleted once removed.
    let add = r#"[{"op":"add","path":"/spec/topology/workers/machineDeployments/-","value":{"class":"default-worker","name":"md-1","replicas":1}}]"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta1.cluster.x-k8s.io/old", "--type", "json", "-p", add], None);
    provisioned(&kc, "old", 3).await;
    let selector = "cluster.x-k8s.io/cluster-name=old,topology.cluster.x-k8s.io/deployment-name=md-1";
    let listed = json(&kc, &["get", "machinedeployments", "-l", selector]);
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(1), "{listed:#}");
    let remove = r#"[{"op":"remove","path":"/spec/topology/workers/machineDeployments/1"}]"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta1.cluster.x-k8s.io/old", "--type", "json", "-p", remove], None);
    wait("md-1 and its Machine deleted", WAIT, || {
        let listed = json(&kc, &["get", "machinedeployments", "-l", selector]);
        listed["items"].as_array().is_some_and(Vec::is_empty) && common::machines(&kc, "old").len() == 2
    })
    .await;
}

fn drydock(kc: &Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock"))
        .env("KUBECONFIG", kc)
        .args(args)
        .output()
        .expect("run drydock");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topology_plan_shows_a_change_in_upgrade_order_without_applying_it() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(CLASS_V1BETA2, "pl", "v1.33.0", 1, 1)));
    provisioned(&kc, "pl", 2).await;
    let file = env.dir.path().join("changed.yaml");
    std::fs::write(&file, manifest(CLASS_V1BETA2, "pl", "v1.34.0", 1, 2)).expect("write manifest");
    let file = file.to_string_lossy().into_owned();

    let (ok, out, err) = drydock(&kc, &["topology", "plan", "-f", &file]);
    assert!(ok, "{err}");
    let row =
        |kind: &str| out.lines().find(|l| l.split_whitespace().nth(1) == Some(kind)).unwrap_or_default().to_string();
    let cp = row("KubeadmControlPlane");
    assert!(cp.starts_with("update") && cp.contains("spec.version: v1.33.0 -> v1.34.0"), "{out}");
    let md = row("MachineDeployment");
    assert!(md.starts_with("update") && md.contains("spec.replicas: 1 -> 2"), "{out}");
    assert!(!md.contains("spec.template.spec.version"), "the workers wait for the control plane: {out}");
    assert!(row("DevCluster").starts_with("unchanged"), "{out}");
    assert!(
        out.contains(
            "Upgrade order:\n  1. control plane: v1.33.0 -> v1.34.0\n  2. MachineDeployment md-0: v1.33.0 -> v1.34.0"
        ),
        "{out}"
    );
    let (ok, out, err) = drydock(&kc, &["topology", "plan", "-f", &file, "-o", "json"]);
    assert!(ok, "{err}");
    let plan: Value = serde_json::from_str(&out).expect("json");
    assert!(plan["steps"].as_array().is_some_and(|s| s.iter().any(|s| s["action"] == "update")), "{plan:#}");

    // Nothing was written.
    let cluster = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "pl"]);
    assert_eq!(cluster["spec"]["topology"]["version"], "v1.33.0");
    let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", "pl");
    assert_eq!(kcp["spec"]["version"], "v1.33.0");

    // What admission refuses, the plan refuses with the same path.
    let invalid = std::fs::read_to_string(&file).expect("read").replace("value: \"3.5.16-0\"", "value: 5");
    std::fs::write(&file, invalid).expect("write");
    let (ok, _, err) = drydock(&kc, &["topology", "plan", "-f", &file]);
    assert!(!ok && err.contains("spec.topology.variables[0].value"), "{err}");
}
