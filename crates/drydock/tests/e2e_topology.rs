//! ClusterClass and managed topologies end to end: classes written as upstream's in-memory
//! quick-start classes are (v1beta2 on Dev templates, v1beta1 on the InMemory kinds) apply
//! with kubectl and their topology Clusters provision; variables and inline patches reach
//! the generated objects; the topology's fields are kept (a user's edit is reverted, other
//! fields stay); a changed template is rotated and rolls the Machines; an upgrade moves the
//! control plane first, through the class's versions one minor at a time, then the workers;
//! MachineDeployments follow the topology's list.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::watch::{Seen, first_where, record};
use common::{Env, condition, eventually, json, kubectl, kubectl_ok, running, wait};
use drydock_api::capi::core::v1beta2::MachineDeployment;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::api::Api;
use serde_json::Value;

const CLASS_V1BETA2: &str = include_str!("data/clusterclass-dev-v1beta2.yaml");
const CLASS_V1BETA1: &str = include_str!("data/clusterclass-in-memory-v1beta1.yaml");
const CLASS_E2E: &str = include_str!("data/clusterclass-quick-start-e2e.yaml");
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
    // A variable of the workers' template rolls the workers and only them.
    let control_plane = || {
        let kcp = json(&kc, &["get", &kcp_resource]);
        let settled = kcp["status"]["upToDateReplicas"] == 3 && kcp["status"]["replicas"] == 3;
        let machines = common::machines(&kc, "qs");
        let mut names: Vec<String> = machines.keys().filter(|n| !n.contains("-md-0-")).cloned().collect();
        names.sort();
        (settled && running(&kc, "qs") == 5).then_some(names)
    };
    let before = eventually("the control plane settled", WAIT, || {
        std::future::ready(tokio::task::block_in_place(control_plane))
    })
    .await;
    set(3, "2s");
    rolls_onto_a_rotated_template(&kc, &md).await;
    assert_eq!(control_plane(), Some(before), "the control plane's Machines were not replaced");
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

fn first(seen: &Seen, value: &str) -> Option<u64> {
    first_where(seen, |v| v == value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_30_to_v1_32_upgrade_moves_the_control_plane_through_v1_31_then_the_workers() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let versioned = manifest(CLASS_V1BETA2, "up", "v1.30.3", 1, 1).replace(
        "  variables:\n    - name: etcdImageTag",
        "  kubernetesVersions: [v1.30.3, v1.31.0, v1.31.2, v1.32.1]\n  variables:\n    - name: etcdImageTag",
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
        first(&workers, "v1.30.3").is_some() && first(&cp, "v1.30.3/v1.30.3").is_some()
    })
    .await;
    let patch = r#"{"spec":{"topology":{"version":"v1.32.1"}}}"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/up", "--type", "merge", "-p", patch], None);
    // While the control plane is at the intermediate step, the Cluster shows what is left.
    let plan = |c: &Value, part: &str| c["status"][part]["upgradePlan"].clone();
    let midway = eventually("the upgrade plan from v1.31.2", WAIT, || {
        let c = tokio::task::block_in_place(|| json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "up"]));
        std::future::ready((plan(&c, "controlPlane") == serde_json::json!([{"version": "v1.32.1"}])).then_some(c))
    })
    .await;
    assert_eq!(condition(&midway, "TopologyReconciled")["reason"], "ClusterUpgrading");
    assert_eq!(plan(&midway, "workers"), serde_json::json!([{"version": "v1.32.1"}]));
    let (ok, described, err) = drydock(&kc, &["describe", "cluster", "up"]);
    assert!(ok, "{err}");
    assert!(described.contains("Topology: ClusterClass quick-start, version v1.32.1 (ClusterUpgrading"), "{described}");
    assert!(described.contains("Upgrade sequence:") && described.contains("-> v1.32.1"), "{described}");
    wait("the workers at v1.32.1", WAIT, || {
        let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "up");
        md["spec"]["template"]["spec"]["version"] == "v1.32.1" && running(&kc, "up") == 2
    })
    .await;
    provisioned(&kc, "up", 2).await;
    let done = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "up"]);
    assert_eq!((plan(&done, "controlPlane"), plan(&done, "workers")), (Value::Null, Value::Null), "no upgrade left");

    // The control plane went through the newest listed v1.31, settled there, then v1.32.1.
    let step = first(&cp, "v1.31.2/v1.31.2").expect("the control plane settled at v1.31.2");
    let next = first(&cp, "v1.32.1/v1.31.2").expect("then asked for v1.32.1");
    assert!(step < next, "{:?}", cp.lock().expect("lock"));
    assert!(first(&cp, "v1.31.0/v1.30.3").is_none(), "v1.31.0 is not the newest v1.31: {:?}", cp.lock().expect("lock"));
    // The workers moved once, straight to the target, after the control plane settled there.
    let settled = first(&cp, "v1.32.1/v1.32.1").expect("the control plane settled at v1.32.1");
    let moved = first(&workers, "v1.32.1").expect("the workers moved");
    assert!(settled < moved, "cp {:?} workers {:?}", cp.lock().expect("lock"), workers.lock().expect("lock"));
    assert!(first(&workers, "v1.31.2").is_none(), "{:?}", workers.lock().expect("lock"));
}

/// Four MachineDeployments: `md-2` deferred, `md-3` holding the sequence from itself on.
fn workers_with_annotations(template: &str) -> String {
    let one = |name: &str, annotation: Option<&str>| {
        let metadata =
            annotation.map_or(String::new(), |a| format!("\n          metadata: {{annotations: {{{a}: \"\"}}}}"));
        format!("        - class: default-worker\n          name: {name}\n          replicas: 1{metadata}\n")
    };
    let workers = [
        one("md-0", None),
        one("md-1", None),
        one("md-2", Some("topology.cluster.x-k8s.io/defer-upgrade")),
        one("md-3", Some("topology.cluster.x-k8s.io/hold-upgrade-sequence")),
    ]
    .concat();
    template.replace("        - class: default-worker\n          name: md-0\n          replicas: 1\n", &workers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machine_deployments_upgrade_one_at_a_time_and_deferred_or_held_ones_wait() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(
        &kc,
        &["apply", "-f", "-"],
        Some(&workers_with_annotations(&manifest(CLASS_V1BETA2, "seq", "v1.33.0", 1, 1))),
    );
    provisioned(&kc, "seq", 5).await;
    let names: std::collections::HashMap<String, String> =
        json(&kc, &["get", "machinedeployments", "-l", "cluster.x-k8s.io/cluster-name=seq"])["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|md| {
                let topology =
                    md["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"].as_str().unwrap_or_default();
                (md["metadata"]["name"].as_str().unwrap_or_default().to_string(), topology.to_string())
            })
            .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let md_names = names.clone();
    let workers = record(Api::<MachineDeployment>::default_namespaced(env.client()), move |md| {
        let s = md.status.as_ref();
        let count = |f: fn(&drydock_api::capi::core::v1beta2::MachineDeploymentStatus) -> Option<i32>| {
            s.and_then(f).unwrap_or_default()
        };
        // Settled: the controller saw this spec, and one Machine, up to date and available.
        let observed = s.and_then(|s| s.observed_generation) == md.metadata.generation;
        let settled = observed
            && count(|s| s.replicas) == 1
            && count(|s| s.up_to_date_replicas) == 1
            && count(|s| s.available_replicas) == 1;
        format!(
            "{} {}{}",
            md_names.get(md.metadata.name.as_deref().unwrap_or_default()).cloned().unwrap_or_default(),
            md.spec.template.spec.version.clone().unwrap_or_default(),
            if settled { " settled" } else { "" },
        )
    });
    wait("the watch to start", WAIT, || first(&workers, "md-0 v1.33.0 settled").is_some()).await;
    let patch = r#"{"spec":{"topology":{"version":"v1.34.0"}}}"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/seq", "--type", "merge", "-p", patch], None);
    let deferred = eventually("md-0 and md-1 upgraded, md-2 and md-3 left behind", WAIT, || {
        let c = tokio::task::block_in_place(|| json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "seq"]));
        let cond = condition(&c, "TopologyReconciled");
        std::future::ready((cond["reason"] == "MachineDeploymentsUpgradeDeferred").then_some(cond))
    })
    .await;
    assert!(deferred["message"].as_str().is_some_and(|m| m.contains("md-2") && m.contains("md-3")), "{deferred}");
    wait("md-1 upgraded", WAIT, || first(&workers, "md-1 v1.34.0 settled").is_some()).await;
    // One at a time (the default concurrency): md-1 was asked to move only once md-0 was done.
    let md0_done = first(&workers, "md-0 v1.34.0 settled").expect("md-0 upgraded");
    let md1_asked =
        workers.lock().expect("lock").iter().find(|(_, v)| v.starts_with("md-1 v1.34.0")).map(|(rv, _)| *rv);
    assert!(md1_asked.is_some_and(|rv| rv > md0_done), "{:?}", workers.lock().expect("lock"));
    for held in ["md-2", "md-3"] {
        let moved = workers.lock().expect("lock").iter().any(|(_, v)| v.starts_with(&format!("{held} v1.34.0")));
        assert!(!moved, "{held} moved: {:?}", workers.lock().expect("lock"));
    }

    // Lifting both lets them go, and the topology settles.
    let lift = r#"[{"op":"remove","path":"/spec/topology/workers/machineDeployments/2/metadata"},{"op":"remove","path":"/spec/topology/workers/machineDeployments/3/metadata"}]"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/seq", "--type", "json", "-p", lift], None);
    wait("md-2 and md-3 upgraded", WAIT, || {
        first(&workers, "md-2 v1.34.0 settled").is_some() && first(&workers, "md-3 v1.34.0 settled").is_some()
    })
    .await;
    provisioned(&kc, "seq", 5).await;
}

fn arg<'a>(args: &'a Value, name: &str) -> &'a Value {
    args.as_array().and_then(|a| a.iter().find(|x| x["name"] == name)).map_or(&Value::Null, |x| &x["value"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_e2e_style_class_with_ten_variables_and_fifteen_patches_provisions() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let (ok, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&manifest(CLASS_E2E, "e2e", "v1.33.0", 1, 1)));
    assert!(ok, "{err}");
    assert!(err.contains("drydock runs no containers"), "the docker backend is simulated, with a warning: {err}");
    provisioned(&kc, "e2e", 2).await;
    let class = json(&kc, &["get", "clusterclasses.v1beta2.cluster.x-k8s.io", "quick-start-e2e"]);
    assert_eq!(class["status"]["variables"].as_array().map(Vec::len), Some(10));
    assert_eq!(class["spec"]["patches"].as_array().map(Vec::len), Some(15));

    let infra = owned(&kc, "dockerclusters.v1beta2.infrastructure.cluster.x-k8s.io", "e2e");
    assert_eq!(infra["spec"]["loadBalancer"]["imageRepository"], "kindest", "a default");
    assert_eq!(infra["status"]["initialization"]["provisioned"], true, "simulated: {infra:#}");
    let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", "e2e");
    let spec = &kcp["spec"]["kubeadmConfigSpec"];
    let config = &spec["clusterConfiguration"];
    assert_eq!(config["etcd"]["local"]["imageTag"], "3.5.16-0");
    assert!(config.get("dns").is_none_or(|d| d.get("imageTag").is_none()), "enabledIf on an empty default: {config}");
    assert_eq!(arg(&config["apiServer"]["extraArgs"], "v"), "2");
    assert_eq!(arg(&config["controllerManager"]["extraArgs"], "cluster-name"), "e2e", "builtin.cluster.name");
    assert_eq!(arg(&config["controllerManager"]["extraArgs"], "cloud-provider"), &Value::Null, "enabledIf false");
    assert_eq!(spec["initConfiguration"]["nodeRegistration"]["taints"], serde_json::json!([]), "enabledIf not");
    assert_eq!(arg(&spec["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"], "v"), "4");
    let pss = spec["files"].as_array().and_then(|f| f.first()).cloned().unwrap_or_default();
    assert_eq!(pss["path"], "/etc/kubernetes/kube-apiserver-admission-pss.yaml");
    let content = pss["content"].as_str().unwrap_or_default();
    for line in [
        "apiVersion: pod-security.admission.config.k8s.io/v1\n",
        "enforce: \"restricted\"",
        "audit: \"restricted\"",
        "namespaces: [kube-system, local-path-storage]",
    ] {
        assert!(content.contains(line), "nested defaults and range in {content}");
    }
    let cp_template = kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default();
    let cp_machine = json(&kc, &["get", "dockermachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io", cp_template]);
    let docker = &cp_machine["spec"]["template"]["spec"];
    assert_eq!(docker["customImage"], "kindest/node:v1.33.0", "builtin.controlPlane.version through a pipeline");
    assert_eq!(docker["preLoadImages"], serde_json::json!(["registry.k8s.io/pause:3.10"]));
    let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "e2e");
    let bootstrap = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"].as_str().unwrap_or_default();
    let kct = json(&kc, &["get", "kubeadmconfigtemplates.v1beta2.bootstrap.cluster.x-k8s.io", bootstrap]);
    let args = &kct["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"];
    assert_eq!(arg(args, "v"), "4");
    assert_eq!(arg(args, "node-labels"), "deployment=md-0,class=default-worker", "printf with builtins");
    let worker = md["spec"]["template"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default();
    let worker = json(&kc, &["get", "dockermachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io", worker]);
    assert_eq!(worker["spec"]["template"]["spec"]["customImage"], "kindest/node:v1.33.0");

    // The MachinePool: its infrastructure pool and bootstrap config are made from the
    // patched templates, with `builtin.machinePool`; its replica comes up.
    let mp = owned(&kc, "machinepools.v1beta2.cluster.x-k8s.io", "e2e");
    let mp_name = mp["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let spec = &mp["spec"]["template"]["spec"];
    let pool = spec["infrastructureRef"]["name"].as_str().unwrap_or_default();
    let pool = json(&kc, &["get", "dockermachinepools.v1beta2.infrastructure.cluster.x-k8s.io", pool]);
    assert_eq!(pool["spec"]["template"]["customImage"], "kindest/node:v1.33.0", "builtin.machinePool.version");
    assert_eq!(pool["spec"]["template"]["preLoadImages"], serde_json::json!(["registry.k8s.io/pause:3.10"]));
    let config = spec["bootstrap"]["configRef"]["name"].as_str().unwrap_or_default();
    let config = json(&kc, &["get", "kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io", config]);
    let args = &config["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"];
    assert_eq!(arg(args, "v"), "4");
    assert_eq!(arg(args, "node-labels"), "pool=mp-0,class=default-worker", "printf with builtin.machinePool");
    wait("the MachinePool's replica ready", WAIT, || {
        let mp = json(&kc, &["get", "machinepools.v1beta2.cluster.x-k8s.io", &mp_name]);
        mp["status"]["readyReplicas"].as_u64() == Some(1)
    })
    .await;
}

/// The v1beta2 quick-start class under another name, changed as `edit` says.
fn class_variant(name: &str, edit: impl Fn(String) -> String) -> String {
    let text = manifest(CLASS_V1BETA2, "unused", "v1.33.0", 1, 1);
    let class = text.split("\n---\n").next().unwrap_or_default().to_string();
    edit(class.replacen("  name: quick-start\n", &format!("  name: {name}\n"), 1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_moves_to_a_compatible_class_and_not_to_an_incompatible_one() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(CLASS_V1BETA2, "rb", "v1.33.0", 1, 1)));
    provisioned(&kc, "rb", 2).await;
    // A compatible class: the same kinds, another worker machine template (its Nodes start
    // slower), and a naming
    // template for its MachineDeployments.
    let compatible = class_variant("quick-start-2", |c| {
        c.replace("name: quick-start-default-worker-machinetemplate\n", "name: quick-start-2-worker\n").replace(
            "      - class: default-worker\n",
            "      - class: default-worker\n        naming:\n          template: \"{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-w-{{ .random }}\"\n",
        )
    });
    // An incompatible one: its infrastructure cluster is of another kind.
    let incompatible = class_variant("quick-start-im", |c| {
        c.replacen("      kind: DevClusterTemplate\n", "      kind: InMemoryClusterTemplate\n", 1).replacen(
            "infrastructure.cluster.x-k8s.io/v1beta2\n      kind: InMemoryClusterTemplate",
            "infrastructure.cluster.x-k8s.io/v1alpha1\n      kind: InMemoryClusterTemplate",
            1,
        )
    });
    let worker = "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: DevMachineTemplate\n\
        metadata: {name: quick-start-2-worker, namespace: default}\n\
        spec:\n  template:\n    spec:\n      backend:\n        inMemory:\n          \
        vm: {provisioning: {startupDuration: \"1s\"}}\n          node: {provisioning: {startupDuration: \"1s\"}}\n";
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&format!("{compatible}\n---\n{incompatible}\n---\n{worker}")));
    let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "rb");
    let old_template =
        md["spec"]["template"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default().to_string();

    let move_to = |class: &str| {
        let patch = format!(r#"{{"spec":{{"topology":{{"classRef":{{"name":"{class}"}}}}}}}}"#);
        kubectl(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/rb", "--type", "merge", "-p", &patch], None)
    };
    let (ok, _, err) = move_to("quick-start-im");
    assert!(!ok && err.contains("spec.topology.classRef") && err.contains("not compatible"), "{err}");
    assert!(err.contains("InMemoryClusterTemplate") && err.contains("DevClusterTemplate"), "{err}");
    let (ok, _, err) = move_to("quick-start-2");
    assert!(ok, "{err}");
    let rotated = eventually("the workers' template rotated to the new class's", WAIT, || {
        let md = tokio::task::block_in_place(|| {
            json(&kc, &["get", "machinedeployments", "-l", "cluster.x-k8s.io/cluster-name=rb"])
        });
        let name = md["items"][0]["spec"]["template"]["spec"]["infrastructureRef"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        std::future::ready((name != old_template && !name.is_empty()).then_some(name))
    })
    .await;
    let template = json(&kc, &["get", "devmachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io", &rotated]);
    let backend = &template["spec"]["template"]["spec"]["backend"]["inMemory"];
    assert_eq!(backend["node"]["provisioning"]["startupDuration"], "1s", "{template:#}");
    assert_eq!(template["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"], "quick-start-2-worker");

    // A MachineDeployment added now is named by the new class's template.
    let add = r#"[{"op":"add","path":"/spec/topology/workers/machineDeployments/-","value":{"class":"default-worker","name":"md-1","replicas":1}}]"#;
    kubectl_ok(&kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/rb", "--type", "json", "-p", add], None);
    provisioned(&kc, "rb", 3).await;
    let selector = "cluster.x-k8s.io/cluster-name=rb,topology.cluster.x-k8s.io/deployment-name=md-1";
    let listed = json(&kc, &["get", "machinedeployments", "-l", selector]);
    let name = listed["items"][0]["metadata"]["name"].as_str().unwrap_or_default();
    assert!(name.starts_with("rb-md-1-w-") && name.len() == "rb-md-1-w-".len() + 5, "{name}");

    // The class in use keeps what its Cluster uses: its worker class, its version, its kinds.
    let refused = |edit: &dyn Fn(String) -> String, expected: &str| {
        let class = class_variant("quick-start-2", |c| {
            edit(c.replace("name: quick-start-default-worker-machinetemplate\n", "name: quick-start-2-worker\n"))
        });
        let (ok, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&class));
        assert!(!ok && err.contains(expected), "{expected}: {err}");
    };
    refused(
        &|c| c.replace("      - class: default-worker\n", "      - class: other-worker\n"),
        "worker class \"default-worker\" is used by Cluster default/rb",
    );
    refused(
        &|c| {
            c.replace(
                "  variables:\n    - name: etcdImageTag",
                "  kubernetesVersions: [v1.34.0]\n  variables:\n    - name: etcdImageTag",
            )
        },
        "Cluster default/rb runs v1.33.0",
    );
    refused(
        &|c| c.replacen("      kind: DevClusterTemplate\n", "      kind: OtherClusterTemplate\n", 1),
        "cannot change from a DevClusterTemplate.infrastructure.cluster.x-k8s.io to a OtherClusterTemplate",
    );
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
    let changed = manifest(CLASS_V1BETA2, "pl", "v1.34.0", 1, 2).replace(
        "      - name: coreDNSImageTag\n        value: \"v1.11.3\"\n",
        "      - name: coreDNSImageTag\n        value: \"v1.11.3\"\n      - name: workerStartup\n        value: \"3s\"\n",
    );
    std::fs::write(&file, &changed).expect("write manifest");
    let md_before = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "pl");
    let template_before =
        md_before["spec"]["template"]["spec"]["infrastructureRef"]["name"].as_str().unwrap_or_default().to_string();
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
    assert!(md.contains(&format!("spec.template.spec.infrastructureRef.name: {template_before} -> ")), "{out}");
    let rotated = out.lines().find(|l| l.starts_with("create") && l.contains("DevMachineTemplate")).unwrap_or_default();
    assert!(rotated.contains("copy of quick-start-default-worker-machinetemplate"), "{out}");
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

    // Nothing was written by the plan.
    let cluster = json(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "pl"]);
    assert_eq!(cluster["spec"]["topology"]["version"], "v1.33.0");
    let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", "pl");
    assert_eq!(kcp["spec"]["version"], "v1.33.0");

    // Applied, it does what the plan said, in that order.
    let (ok, _, err) = kubectl(&kc, &["apply", "-f", &file], None);
    assert!(ok, "{err}");
    wait("the control plane at v1.34.0 and the workers on a new template", WAIT, || {
        let kcp = owned(&kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", "pl");
        let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "pl");
        kcp["spec"]["version"] == "v1.34.0"
            && md["spec"]["replicas"] == 2
            && md["spec"]["template"]["spec"]["infrastructureRef"]["name"] != template_before.as_str()
    })
    .await;
    wait("then the workers at v1.34.0", WAIT, || {
        let md = owned(&kc, "machinedeployments.v1beta2.cluster.x-k8s.io", "pl");
        md["spec"]["template"]["spec"]["version"] == "v1.34.0"
    })
    .await;
    provisioned(&kc, "pl", 3).await;

    // What admission refuses, the plan refuses with the same path.
    let invalid = std::fs::read_to_string(&file).expect("read").replace("value: \"3.5.16-0\"", "value: 5");
    std::fs::write(&file, invalid).expect("write");
    let (ok, _, err) = drydock(&kc, &["topology", "plan", "-f", &file]);
    assert!(!ok && err.contains("spec.topology.variables[0].value"), "{err}");
}
