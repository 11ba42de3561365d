//! Cluster conversion tests: a topology Cluster with status, converted both ways.

use serde_json::{Value, json};

use super::ClusterConversion;
use crate::capi::conversion::CONVERSION_DATA;
use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};
use crate::conversion::RefVersions;

/// A topology Cluster as a v1beta1 client writes it, and its status as the controllers
/// report it. References, durations and namespaces are in the form the conversion writes
/// back, so nothing is lossy.
fn v1beta1_cluster() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "sample", "namespace": "default", "labels": {"env": "test"}},
        "spec": {
            "paused": false,
            "clusterNetwork": {
                "apiServerPort": 6443,
                "pods": {"cidrBlocks": ["192.168.0.0/16"]},
                "services": {"cidrBlocks": ["10.128.0.0/12"]},
                "serviceDomain": "cluster.local",
            },
            "controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443},
            "infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "InMemoryCluster",
                "name": "sample",
                "namespace": "default",
            },
            "controlPlaneRef": {
                "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmControlPlane",
                "name": "sample-control-plane",
                "namespace": "default",
            },
            "availabilityGates": [{"conditionType": "example.com/NetworkReady"}],
            "topology": v1beta1_topology(),
        },
        "status": v1beta1_status(),
    })
}

fn v1beta1_topology() -> Value {
    json!({
        "class": "quick-start",
        "classNamespace": "classes",
        "version": "v1.30.2",
        "controlPlane": {
            "metadata": {"labels": {"tier": "cp"}},
            "replicas": 3,
            "machineHealthCheck": {
                "enable": true,
                "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}],
                "maxUnhealthy": "33%",
                "nodeStartupTimeout": "10m0s",
            },
            "nodeDrainTimeout": "1m30s",
            "nodeDeletionTimeout": "10s",
            "variables": {"overrides": [{"name": "etcdImage", "value": "etcd:3.5"}]},
        },
        "workers": {
            "machineDeployments": [{
                "class": "default-worker",
                "name": "md-0",
                "replicas": 3,
                "failureDomain": "fd-1",
                "minReadySeconds": 10,
                "nodeVolumeDetachTimeout": "5m0s",
                "machineHealthCheck": {
                    "unhealthyRange": "[0-2]",
                    "remediationTemplate": {
                        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                        "kind": "RemediationTemplate",
                        "name": "remediate",
                        "namespace": "default",
                    },
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"},
                    "remediation": {"maxInFlight": 1},
                },
            }],
            "machinePools": [{
                "class": "pool",
                "name": "mp-0",
                "replicas": 2,
                "failureDomains": ["fd-1", "fd-2"],
                "nodeDrainTimeout": "30s",
            }],
        },
        "variables": [{"name": "region", "value": {"zone": "a"}}],
    })
}

fn v1beta1_status() -> Value {
    json!({
        "phase": "Provisioned",
        "infrastructureReady": true,
        "controlPlaneReady": true,
        "observedGeneration": 2,
        "failureReason": "CreateError",
        "failureDomains": {
            "fd-2": {"controlPlane": false},
            "fd-1": {"controlPlane": true, "attributes": {"rack": "r1"}},
        },
        "conditions": [{
            "type": "Ready",
            "status": "False",
            "severity": "Warning",
            "reason": "ScalingUp",
            "lastTransitionTime": "2024-05-01T10:00:00Z",
        }],
        "v1beta2": {
            "conditions": [{
                "type": "Available",
                "status": "True",
                "reason": "Available",
                "message": "",
                "lastTransitionTime": "2024-05-01T10:05:00Z",
            }],
            "controlPlane": {
                "desiredReplicas": 3,
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "upToDateReplicas": 3,
            },
            "workers": {"desiredReplicas": 5, "replicas": 4, "readyReplicas": 4},
        },
    })
}

#[test]
fn up_moves_every_field_where_v1beta2_keeps_it() {
    let v1 = v1beta1_cluster();
    let v2 = up::<ClusterConversion>(&v1);
    assert_eq!(v2["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(v2["metadata"], v1["metadata"], "nothing is lossy: no annotation");
    assert_eq!(v2, strip_conversion_data(v2.clone()));
    let spec = &v2["spec"];
    assert_eq!(spec["paused"], false);
    assert_eq!(spec["clusterNetwork"], v1["spec"]["clusterNetwork"]);
    assert_eq!(spec["controlPlaneEndpoint"], json!({"host": "10.0.0.1", "port": 6443}));
    assert_eq!(
        spec["infrastructureRef"],
        json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryCluster", "name": "sample"})
    );
    assert_eq!(spec["controlPlaneRef"]["apiGroup"], "controlplane.cluster.x-k8s.io");
    assert_eq!(spec["availabilityGates"], json!([{"conditionType": "example.com/NetworkReady"}]));

    let topology = &spec["topology"];
    assert_eq!(topology["classRef"], json!({"name": "quick-start", "namespace": "classes"}));
    assert!(topology.get("class").is_none() && topology.get("classNamespace").is_none());
    let cp = &topology["controlPlane"];
    assert_eq!(cp["metadata"], json!({"labels": {"tier": "cp"}}));
    assert_eq!(
        cp["healthCheck"],
        json!({
            "enabled": true,
            "checks": {
                "nodeStartupTimeoutSeconds": 600,
                "unhealthyNodeConditions": [{"type": "Ready", "status": "Unknown", "timeoutSeconds": 300}],
            },
            "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": "33%"}},
        })
    );
    assert_eq!(cp["deletion"], json!({"nodeDrainTimeoutSeconds": 90, "nodeDeletionTimeoutSeconds": 10}));
    assert_eq!(cp["variables"], json!({"overrides": [{"name": "etcdImage", "value": "etcd:3.5"}]}));

    let md = &topology["workers"]["machineDeployments"][0];
    assert_eq!(
        md["rollout"],
        json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}})
    );
    assert_eq!(md["deletion"], json!({"order": "Oldest", "nodeVolumeDetachTimeoutSeconds": 300}));
    assert_eq!(
        md["healthCheck"],
        json!({"remediation": {
            "maxInFlight": 1,
            "triggerIf": {"unhealthyInRange": "[0-2]"},
            "templateRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "RemediationTemplate",
                "name": "remediate",
            },
        }})
    );
    assert_eq!((md["minReadySeconds"].clone(), md["failureDomain"].clone()), (json!(10), json!("fd-1")));
    assert!(md.get("strategy").is_none() && md.get("machineHealthCheck").is_none());
    let mp = &topology["workers"]["machinePools"][0];
    assert_eq!(mp["deletion"], json!({"nodeDrainTimeoutSeconds": 30}));
    assert_eq!(mp["failureDomains"], json!(["fd-1", "fd-2"]));
    assert_eq!(topology["variables"], json!([{"name": "region", "value": {"zone": "a"}}]));

    let status = &v2["status"];
    assert_eq!(status["initialization"], json!({"infrastructureProvisioned": true, "controlPlaneInitialized": true}));
    assert_eq!(
        status["failureDomains"],
        json!([
            {"name": "fd-1", "controlPlane": true, "attributes": {"rack": "r1"}},
            {"name": "fd-2", "controlPlane": false},
        ])
    );
    assert_eq!(status["conditions"], v1["status"]["v1beta2"]["conditions"]);
    assert_eq!(status["controlPlane"], v1["status"]["v1beta2"]["controlPlane"]);
    assert_eq!(status["workers"], v1["status"]["v1beta2"]["workers"]);
    assert_eq!(
        status["deprecated"],
        json!({"v1beta1": {"conditions": v1["status"]["conditions"], "failureReason": "CreateError"}})
    );
    assert_eq!((status["phase"].clone(), status["observedGeneration"].clone()), (json!("Provisioned"), json!(2)));
    for gone in ["infrastructureReady", "controlPlaneReady", "failureReason", "v1beta2"] {
        assert!(status.get(gone).is_none(), "{gone} stays in v1beta1");
    }

    assert_round_trips::<ClusterConversion>(&v1);
    assert_eq!(down::<ClusterConversion>(&v2), v1);
}

/// A Cluster as a v1beta2 client writes it, with fields v1beta1 cannot hold.
fn v1beta2_cluster() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "InMemoryCluster",
                "name": "c",
            },
            "controlPlaneRef": {
                "apiGroup": "controlplane.cluster.x-k8s.io",
                "kind": "KubeadmControlPlane",
                "name": "c-cp",
            },
            "clusterNetwork": {"pods": {"cidrBlocks": ["10.0.0.0/16"]}},
            "availabilityGates": [{"conditionType": "Ext", "polarity": "Negative"}],
            "topology": {
                "classRef": {"name": "cc"},
                "version": "v1.31.0",
                "controlPlane": {
                    "replicas": 1,
                    "rollout": {"after": "2025-01-01T00:00:00Z"},
                    "healthCheck": {
                        "checks": {
                            "unhealthyNodeConditions": [{"type": "Ready", "status": "False", "timeoutSeconds": 90}],
                            "unhealthyMachineConditions": [{"type": "Custom", "status": "False", "timeoutSeconds": 60}],
                        },
                        "remediation": {"triggerIf": {"unhealthyInRange": "[1-3]"}},
                    },
                    "deletion": {"nodeDrainTimeoutSeconds": 3600},
                    "readinessGates": [{"conditionType": "Ext"}],
                    "taints": [{"key": "dedicated", "effect": "NoSchedule", "propagation": "Always"}],
                },
                "workers": {"machineDeployments": [{
                    "class": "w",
                    "name": "md",
                    "deletion": {"order": "Newest"},
                    "rollout": {"after": "2025-01-01T00:00:00Z", "strategy": {"type": "OnDelete"}},
                    "healthCheck": {"enabled": false, "remediation": {"maxInFlight": "20%"}},
                }]},
            },
        },
        "status": {
            "initialization": {"infrastructureProvisioned": true},
            "failureDomains": [{"name": "a", "controlPlane": true}],
            "controlPlane": {"desiredReplicas": 1, "versions": [{"version": "v1.31.0", "replicas": 1}]},
            "deprecated": {"v1beta1": {"failureMessage": "boom"}},
        },
    })
}

#[test]
fn down_moves_every_field_back_and_keeps_the_rest() {
    let v2 = v1beta2_cluster();
    let v1 = down::<ClusterConversion>(&v2);
    assert_eq!(v1["apiVersion"], "cluster.x-k8s.io/v1beta1");
    let spec = &v1["spec"];
    assert_eq!(
        spec["infrastructureRef"],
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "InMemoryCluster",
            "name": "c",
            "namespace": "ns",
        })
    );
    assert_eq!(spec["controlPlaneRef"]["apiVersion"], "controlplane.cluster.x-k8s.io/v1beta2");
    assert_eq!(spec["availabilityGates"], json!([{"conditionType": "Ext"}]));
    let topology = &spec["topology"];
    assert_eq!((topology["class"].clone(), topology.get("classNamespace")), (json!("cc"), None));
    let cp = &topology["controlPlane"];
    assert_eq!(
        cp["machineHealthCheck"],
        json!({
            "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "1m30s"}],
            "unhealthyRange": "[1-3]",
        })
    );
    assert_eq!(cp["nodeDrainTimeout"], "1h0m0s");
    for gone in ["rollout", "readinessGates", "taints", "healthCheck", "deletion"] {
        assert!(cp.get(gone).is_none(), "{gone} is not v1beta1");
    }
    let md = &topology["workers"]["machineDeployments"][0];
    assert_eq!(
        md["strategy"],
        json!({"type": "OnDelete", "rollingUpdate": {"deletePolicy": "Newest"}, "remediation": {"maxInFlight": "20%"}})
    );
    assert_eq!(md["machineHealthCheck"], json!({"enable": false}));
    let status = &v1["status"];
    assert_eq!(status["infrastructureReady"], true);
    assert!(status.get("controlPlaneReady").is_none());
    assert_eq!(status["failureDomains"], json!({"a": {"controlPlane": true}}));
    assert_eq!(status["failureMessage"], "boom");
    assert_eq!(status["v1beta2"], json!({"controlPlane": {"desiredReplicas": 1}}));

    // What v1beta1 cannot hold travels in the annotation and comes back.
    assert!(v1["metadata"]["annotations"][CONVERSION_DATA].is_string());
    assert_round_trips::<ClusterConversion>(&v2);
}

#[test]
fn the_sample_manifest_cluster_round_trips() {
    let text = include_str!("../../../../tests/data/cluster-in-memory.yaml");
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).expect("sample parses");
    let cluster = docs.iter().find(|d| d["kind"] == "Cluster").expect("sample has a Cluster");
    let v2 = up::<ClusterConversion>(cluster);
    assert_eq!(v2["spec"]["infrastructureRef"]["apiGroup"], "infrastructure.cluster.x-k8s.io");
    assert_eq!(v2["spec"]["clusterNetwork"], cluster["spec"]["clusterNetwork"]);
    // v1alpha1 is not what the infrastructure group's fallback version says: kept aside.
    assert!(v2["metadata"]["annotations"][CONVERSION_DATA].is_string());
    assert_round_trips::<ClusterConversion>(cluster);
}

#[test]
fn v1beta1_only_and_empty_fields_are_kept_aside() {
    let mut v1 = v1beta1_cluster();
    v1["spec"]["topology"]["rolloutAfter"] = json!("2024-01-01T00:00:00Z");
    v1["spec"]["topology"]["variables"][0]["definitionFrom"] = json!("inline");
    v1["spec"]["topology"]["controlPlane"]["machineHealthCheck"]["unhealthyConditions"][0]["timeout"] = json!("300s");
    v1["status"]["failureMessage"] = json!("");
    let v2 = strip_conversion_data(up::<ClusterConversion>(&v1));
    let topology = &v2["spec"]["topology"];
    assert!(topology.get("rolloutAfter").is_none());
    assert!(topology["variables"][0].get("definitionFrom").is_none());
    assert_eq!(topology["controlPlane"]["healthCheck"]["checks"]["unhealthyNodeConditions"][0]["timeoutSeconds"], 300);
    assert!(v2["status"]["deprecated"]["v1beta1"].get("failureMessage").is_none());
    assert_round_trips::<ClusterConversion>(&v1);
}

#[test]
fn references_take_the_version_the_served_crds_name() {
    struct Served;
    impl RefVersions for Served {
        fn api_version(&self, group: &str, kind: &str) -> Option<String> {
            (kind == "InMemoryCluster").then(|| format!("{group}/v1alpha1"))
        }
    }
    let conversion = crate::capi::conversion::native::<ClusterConversion>();
    let v1 = conversion.convert(v1beta2_cluster(), "cluster.x-k8s.io/v1beta1", &Served).expect("converts");
    assert_eq!(v1["spec"]["infrastructureRef"]["apiVersion"], "infrastructure.cluster.x-k8s.io/v1alpha1");
}
