//! What the conversion tests of the Machine kinds share: a resolver that knows the versions
//! referenced kinds are served in, conditions of both generations, and one Machine spec as
//! each version writes it.

use serde_json::{Value, json};

use crate::capi::conversion::{CONVERSION_DATA, HubSpoke, native};
use crate::conversion::RefVersions;

/// The versions of a cluster running the in-memory provider and kubeadm bootstrap on the
/// v1beta1 contract.
pub(super) struct Contract;

impl RefVersions for Contract {
    fn api_version(&self, group: &str, _kind: &str) -> Option<String> {
        match group {
            "infrastructure.cluster.x-k8s.io" => Some(format!("{group}/v1alpha1")),
            "bootstrap.cluster.x-k8s.io" => Some(format!("{group}/v1beta1")),
            _ => None,
        }
    }
}

/// `obj` converted to `api_version` through the lossless layer, references resolved by
/// [`Contract`].
pub(super) fn convert<C: HubSpoke>(obj: &Value, api_version: &str) -> Value {
    native::<C>().convert(obj.clone(), api_version, &Contract).expect("converts")
}

/// The object carries what its version could not hold.
pub(super) fn has_conversion_data(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations").and_then(|a| a.get(CONVERSION_DATA)).is_some()
}

/// v1beta1 conditions, with severity.
pub(super) fn v1beta1_conditions() -> Value {
    json!([
        {"type": "Ready", "status": "False", "severity": "Warning", "reason": "Draining",
         "message": "draining node", "lastTransitionTime": "2025-03-01T10:00:00Z"},
        {"type": "InfrastructureReady", "status": "True", "lastTransitionTime": "2025-03-01T09:58:00Z"},
    ])
}

/// v1beta2 (metav1) conditions.
pub(super) fn v1beta2_conditions() -> Value {
    json!([
        {"type": "Ready", "status": "True", "reason": "Ready", "message": "",
         "lastTransitionTime": "2025-03-01T10:00:00Z", "observedGeneration": 3},
        {"type": "Paused", "status": "False", "reason": "NotPaused", "message": "",
         "lastTransitionTime": "2025-03-01T09:50:00Z", "observedGeneration": 3},
    ])
}

/// A worker Machine's spec in v1beta1 (references as [`Contract`] names them, durations
/// as Go formats them, so that nothing is lost going up).
pub(super) fn v1beta1_machine_spec() -> Value {
    json!({
        "clusterName": "sample",
        "version": "v1.30.2",
        "bootstrap": {
            "configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig",
                          "name": "sample-workers-x7k2p", "namespace": "default"},
            "dataSecretName": "sample-workers-x7k2p",
        },
        "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine",
                              "name": "sample-workers-9qz4d", "namespace": "default"},
        "providerID": "in-memory://sample-workers-9qz4d",
        "failureDomain": "fd-1",
        "readinessGates": [{"conditionType": "example.com/NetworkReady"}],
        "nodeDrainTimeout": "5m0s",
        "nodeVolumeDetachTimeout": "1m30s",
        "nodeDeletionTimeout": "10s",
    })
}

/// The same spec as v1beta2 writes it.
pub(super) fn v1beta2_machine_spec() -> Value {
    json!({
        "clusterName": "sample",
        "version": "v1.30.2",
        "bootstrap": {
            "configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig",
                          "name": "sample-workers-x7k2p"},
            "dataSecretName": "sample-workers-x7k2p",
        },
        "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryMachine",
                              "name": "sample-workers-9qz4d"},
        "providerID": "in-memory://sample-workers-9qz4d",
        "failureDomain": "fd-1",
        "readinessGates": [{"conditionType": "example.com/NetworkReady"}],
        "deletion": {
            "nodeDrainTimeoutSeconds": 300,
            "nodeVolumeDetachTimeoutSeconds": 90,
            "nodeDeletionTimeoutSeconds": 10,
        },
    })
}

/// `spec` with `minReadySeconds` set, as a v1beta2 template carries it.
pub(super) fn with_min_ready_seconds(mut spec: Value, seconds: i32) -> Value {
    spec["minReadySeconds"] = json!(seconds);
    spec
}
