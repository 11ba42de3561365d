//! The sample manifest (written the way Cluster API users write manifests) deserializes
//! into the typed kinds unchanged, passes admission, and comes back with the defaults
//! upstream's webhooks fill in.

use crate::common;

use drydock_api::capi::core::{Cluster, MachineDeployment, MachineHealthCheck};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachineTemplate};
use drydock_api::capi::kubeadm::{KubeadmConfigTemplate, KubeadmControlPlane};
use drydock_api::{Operation, ResourceDef};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn roundtrip<T: DeserializeOwned + Serialize>(doc: &Value) -> Value {
    let typed: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{}: {e}", doc["kind"]));
    serde_json::to_value(&typed).unwrap()
}

fn roundtrip_by_kind(doc: &Value) -> Value {
    match doc["kind"].as_str().unwrap() {
        "Cluster" => roundtrip::<Cluster>(doc),
        "InMemoryCluster" => roundtrip::<InMemoryCluster>(doc),
        "InMemoryMachineTemplate" => roundtrip::<InMemoryMachineTemplate>(doc),
        "KubeadmControlPlane" => roundtrip::<KubeadmControlPlane>(doc),
        "KubeadmConfigTemplate" => roundtrip::<KubeadmConfigTemplate>(doc),
        "MachineDeployment" => roundtrip::<MachineDeployment>(doc),
        "MachineHealthCheck" => roundtrip::<MachineHealthCheck>(doc),
        other => panic!("sample has an unexpected kind {other}"),
    }
}

fn resource_for(defs: &[ResourceDef], doc: &Value) -> ResourceDef {
    defs.iter()
        .find(|d| d.api_version() == doc["apiVersion"] && d.kind == doc["kind"])
        .unwrap_or_else(|| panic!("no resource for {}", doc["kind"]))
        .clone()
}

/// Defaults and validates like the API server does on create.
fn admit(def: &ResourceDef, doc: &Value) -> Value {
    let admission = def.admission.as_ref().expect("every kind has admission");
    let mut obj = doc.clone();
    admission.default_with_old(&mut obj, None, Operation::Create).unwrap();
    let errs = admission.validate(&obj, None);
    assert!(errs.is_empty(), "{} rejected: {errs:?}", doc["kind"]);
    obj
}

fn defaulted() -> Vec<Value> {
    let defs = drydock_api::capi::resources();
    common::sample_docs().iter().map(|d| admit(&resource_for(&defs, d), d)).collect()
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == kind && d["metadata"]["name"] == name).unwrap()
}

#[test]
fn sample_deserializes_into_typed_kinds_unchanged() {
    let docs = common::sample_docs();
    assert_eq!(docs.len(), 8);
    for doc in &docs {
        assert_eq!(&roundtrip_by_kind(doc), doc, "{} does not round-trip", doc["kind"]);
    }
}

#[test]
fn sample_passes_admission_and_defaulting_is_stable() {
    let defs = drydock_api::capi::resources();
    for obj in defaulted() {
        let def = resource_for(&defs, &obj);
        // Defaulting again changes nothing, and a no-op update is accepted.
        assert_eq!(admit(&def, &obj), obj, "{} defaulting is not idempotent", obj["kind"]);
        let errs = def.admission.as_ref().unwrap().validate(&obj, Some(&obj));
        assert!(errs.is_empty(), "{}: {errs:?}", obj["kind"]);
        // Defaulted objects still round-trip through the types.
        assert_eq!(roundtrip_by_kind(&obj), obj);
    }
}

#[test]
fn cluster_defaults() {
    let docs = defaulted();
    let c = find(&docs, "Cluster", "sample");
    // Admitted in v1beta2, whose references have no namespace: the v1beta1 references
    // come back as written.
    let doc = find(&common::sample_docs(), "Cluster", "sample").clone();
    assert_eq!(c["spec"]["infrastructureRef"], doc["spec"]["infrastructureRef"]);
    assert_eq!(c["spec"]["controlPlaneRef"], doc["spec"]["controlPlaneRef"]);
    assert_eq!(c["metadata"]["labels"], json!({ "env": "test" }));
}

#[test]
fn control_plane_defaults() {
    let docs = defaulted();
    let spec = &find(&docs, "KubeadmControlPlane", "sample-control-plane")["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["version"], "v1.30.2");
    assert_eq!(spec["rolloutStrategy"], json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } }));
    assert_eq!(spec["machineTemplate"]["infrastructureRef"]["namespace"], "default");
    let kubeadm = &spec["kubeadmConfigSpec"];
    assert_eq!(kubeadm["format"], "cloud-config");
    assert_eq!(kubeadm["initConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        kubeadm["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]["eviction-hard"],
        "nodefs.available<0%"
    );
    // Admission runs on the stored v1beta2 object, where an empty join configuration is
    // unset: there is no registration to default, and v1beta1 gets back what it wrote.
    assert_eq!(kubeadm["joinConfiguration"], json!({ "nodeRegistration": {} }));
    assert_eq!(kubeadm["clusterConfiguration"]["apiServer"]["certSANs"], json!(["localhost", "127.0.0.1"]));

    let tpl = &find(&docs, "KubeadmConfigTemplate", "sample-workers")["spec"]["template"]["spec"];
    assert_eq!(tpl["format"], "cloud-config");
    assert_eq!(tpl["joinConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");
}

#[test]
fn machine_deployment_defaults() {
    let docs = defaulted();
    let md = find(&docs, "MachineDeployment", "sample-workers");
    assert_eq!(md["metadata"]["labels"], json!({ "cluster.x-k8s.io/cluster-name": "sample" }));
    let spec = &md["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(
        spec["selector"],
        json!({ "matchLabels": { "cluster.x-k8s.io/cluster-name": "sample", "cluster.x-k8s.io/deployment-name": "sample-workers" } })
    );
    assert_eq!(
        spec["template"]["metadata"]["labels"],
        json!({
            "cluster.x-k8s.io/cluster-name": "sample",
            "cluster.x-k8s.io/deployment-name": "sample-workers",
            "node-role.kubernetes.io/worker": ""
        })
    );
    assert_eq!(
        spec["strategy"],
        json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1, "maxUnavailable": 0 } })
    );
    assert_eq!(spec["minReadySeconds"], 0);
    // Stored in v1beta2, which has neither: as upstream v1.14, nothing defaults them.
    assert!(spec.get("revisionHistoryLimit").is_none() && spec.get("progressDeadlineSeconds").is_none());
    assert_eq!(spec["template"]["spec"]["version"], "v1.30.2");
    assert_eq!(spec["template"]["spec"]["bootstrap"]["configRef"]["namespace"], "default");
    assert_eq!(spec["template"]["spec"]["infrastructureRef"]["namespace"], "default");
}

#[test]
fn health_check_defaults() {
    let docs = defaulted();
    let mhc = find(&docs, "MachineHealthCheck", "sample-workers");
    assert_eq!(mhc["metadata"]["labels"], json!({ "cluster.x-k8s.io/cluster-name": "sample" }));
    // Values the user set stay; nothing else is added.
    assert_eq!(mhc["spec"]["maxUnhealthy"], "40%");
    assert_eq!(mhc["spec"]["nodeStartupTimeout"], "10m");
    assert_eq!(mhc["spec"]["unhealthyConditions"].as_array().unwrap().len(), 2);
}

#[test]
fn infrastructure_objects_are_unchanged_by_admission() {
    let originals = common::sample_docs();
    let docs = defaulted();
    for kind in ["InMemoryCluster", "InMemoryMachineTemplate"] {
        for (orig, out) in originals.iter().zip(&docs).filter(|(o, _)| o["kind"] == kind) {
            assert_eq!(orig, out, "{kind} {}", orig["metadata"]["name"]);
        }
    }
}
