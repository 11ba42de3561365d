//! Machine, and the Machine spec and template every replica kind embeds: references keep
//! group, kind and name; deletion timeouts become seconds under `deletion`; readiness flags
//! become `status.initialization`; the two generations of conditions swap places.

use k8s_openapi::api::core::v1::ObjectReference;

use super::topology::timeout_durations;
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conversion::{Ctx, HubSpoke, duration_to_seconds, non_empty, ref_down, ref_up, seconds_to_duration};
use crate::capi::core::{
    Bootstrap, Machine, MachineAddress, MachineDeletionStatus, MachineReadinessGate, MachineSpec, MachineStatus,
    MachineTemplateSpec, v1beta2,
};

pub struct MachineConversion;

impl HubSpoke for MachineConversion {
    type Hub = v1beta2::Machine;
    type Spoke = Machine;

    fn spoke_durations() -> Vec<String> {
        timeout_durations("spec")
    }

    fn up(s: Machine, _ctx: &Ctx<'_>) -> v1beta2::Machine {
        v1beta2::Machine { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.map(status_up) }
    }

    fn down(h: v1beta2::Machine, ctx: &Ctx<'_>) -> Machine {
        Machine { metadata: h.metadata, spec: spec_down(h.spec, ctx), status: h.status.map(status_down) }
    }
}

/// `Some(v)` unless `v` is its type's default (an empty struct is unset in v1beta2).
pub(super) fn non_default<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

/// `Some(list)` unless empty (v1beta2 refuses empty lists that mean the same as unset).
pub(super) fn non_empty_list<T>(v: Option<Vec<T>>) -> Option<Vec<T>> {
    v.filter(|l| !l.is_empty())
}

/// A v1beta1 Machine spec in v1beta2; `minReadySeconds` and `taints` are v1beta2's own.
fn spec_up(s: MachineSpec) -> v1beta2::MachineSpec {
    let MachineSpec {
        cluster_name,
        bootstrap,
        infrastructure_ref,
        version,
        provider_id,
        failure_domain,
        readiness_gates,
        node_drain_timeout,
        node_volume_detach_timeout,
        node_deletion_timeout,
    } = s;
    let deletion = v1beta2::MachineDeletionSpec {
        node_drain_timeout_seconds: duration_to_seconds(node_drain_timeout.as_deref()),
        node_volume_detach_timeout_seconds: duration_to_seconds(node_volume_detach_timeout.as_deref()),
        node_deletion_timeout_seconds: duration_to_seconds(node_deletion_timeout.as_deref()),
    };
    v1beta2::MachineSpec {
        cluster_name,
        bootstrap: v1beta2::Bootstrap {
            config_ref: bootstrap.config_ref.as_ref().map(ref_up),
            data_secret_name: bootstrap.data_secret_name,
        },
        infrastructure_ref: ref_up(&infrastructure_ref),
        version: non_empty(version),
        provider_id: non_empty(provider_id),
        failure_domain: non_empty(failure_domain),
        min_ready_seconds: None,
        readiness_gates: non_empty_list(readiness_gates).map(|gates| {
            gates
                .into_iter()
                .map(|g| v1beta2::MachineReadinessGate { condition_type: g.condition_type, polarity: None })
                .collect()
        }),
        deletion: non_default(deletion),
        taints: None,
    }
}

/// A v1beta2 Machine spec in v1beta1: references get the version their kind's CRD names
/// and the object's namespace; gate polarities, taints and `minReadySeconds` have no place.
pub(super) fn spec_down(h: v1beta2::MachineSpec, ctx: &Ctx<'_>) -> MachineSpec {
    let v1beta2::MachineSpec {
        cluster_name,
        bootstrap,
        infrastructure_ref,
        version,
        provider_id,
        failure_domain,
        min_ready_seconds: _,
        readiness_gates,
        deletion,
        taints: _,
    } = h;
    let deletion = deletion.unwrap_or_default();
    MachineSpec {
        cluster_name,
        bootstrap: Bootstrap {
            config_ref: bootstrap.config_ref.as_ref().map(|r| ref_down(r, ctx)),
            data_secret_name: bootstrap.data_secret_name,
        },
        infrastructure_ref: ref_down(&infrastructure_ref, ctx),
        version,
        provider_id,
        failure_domain,
        readiness_gates: readiness_gates.map(|gates| {
            gates.into_iter().map(|g| MachineReadinessGate { condition_type: g.condition_type }).collect()
        }),
        node_drain_timeout: seconds_to_duration(deletion.node_drain_timeout_seconds),
        node_volume_detach_timeout: seconds_to_duration(deletion.node_volume_detach_timeout_seconds),
        node_deletion_timeout: seconds_to_duration(deletion.node_deletion_timeout_seconds),
    }
}

/// A v1beta1 Machine template, with the owner's `minReadySeconds`, which v1beta2 keeps on
/// the template's spec.
pub(super) fn template_up(t: MachineTemplateSpec, min_ready_seconds: Option<i32>) -> v1beta2::MachineTemplateSpec {
    let mut spec = spec_up(t.spec);
    spec.min_ready_seconds = min_ready_seconds;
    v1beta2::MachineTemplateSpec { metadata: t.metadata, spec }
}

/// A v1beta2 Machine template in v1beta1, and the `minReadySeconds` its owner carries there.
pub(super) fn template_down(t: v1beta2::MachineTemplateSpec, ctx: &Ctx<'_>) -> (MachineTemplateSpec, Option<i32>) {
    let min_ready_seconds = t.spec.min_ready_seconds;
    (MachineTemplateSpec { metadata: t.metadata, spec: spec_down(t.spec, ctx) }, min_ready_seconds)
}

fn status_up(s: MachineStatus) -> v1beta2::MachineStatus {
    let MachineStatus {
        node_ref,
        node_info,
        last_updated,
        failure_reason,
        failure_message,
        addresses,
        phase,
        certificates_expiry_date,
        bootstrap_ready,
        infrastructure_ready,
        observed_generation,
        conditions,
        deletion,
        v1beta2,
    } = s;
    let deprecated = v1beta2::MachineV1Beta1DeprecatedStatus { conditions, failure_reason, failure_message };
    v1beta2::MachineStatus {
        conditions: v1beta2.and_then(|v| v.conditions),
        initialization: non_default(v1beta2::MachineInitializationStatus {
            infrastructure_provisioned: infrastructure_ready,
            bootstrap_data_secret_created: bootstrap_ready,
        }),
        node_ref: node_ref.and_then(|r| non_empty(r.name)).map(|name| v1beta2::MachineNodeReference { name }),
        node_info,
        last_updated,
        failure_domain: None,
        certificates_expiry_date,
        addresses: addresses.map(|list| {
            list.into_iter().map(|a| v1beta2::MachineAddress { type_: a.type_, address: a.address }).collect()
        }),
        phase: non_empty(phase),
        observed_generation,
        deletion: deletion.map(|d| v1beta2::MachineDeletionStatus {
            node_drain_start_time: d.node_drain_start_time,
            wait_for_node_volume_detach_start_time: d.wait_for_node_volume_detach_start_time,
            ..Default::default()
        }),
        deprecated: non_default(deprecated).map(|d| v1beta2::MachineDeprecatedStatus { v1beta1: Some(d) }),
    }
}

fn status_down(h: v1beta2::MachineStatus) -> MachineStatus {
    let v1beta2::MachineStatus {
        conditions,
        initialization,
        node_ref,
        node_info,
        last_updated,
        failure_domain: _,
        certificates_expiry_date,
        addresses,
        phase,
        observed_generation,
        deletion,
        deprecated,
    } = h;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    let init = initialization.unwrap_or_default();
    MachineStatus {
        node_ref: node_ref.map(|r| ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(r.name),
            ..Default::default()
        }),
        node_info,
        last_updated,
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
        addresses: addresses
            .map(|list| list.into_iter().map(|a| MachineAddress { type_: a.type_, address: a.address }).collect()),
        // v1beta1 has no in-place updates: an updating Machine is running there.
        phase: phase.map(|p| if p == "Updating" { "Running".into() } else { p }),
        certificates_expiry_date,
        bootstrap_ready: init.bootstrap_data_secret_created,
        infrastructure_ready: init.infrastructure_provisioned,
        observed_generation,
        conditions: old.conditions,
        deletion: deletion.map(|d| MachineDeletionStatus {
            node_drain_start_time: d.node_drain_start_time,
            wait_for_node_volume_detach_start_time: d.wait_for_node_volume_detach_start_time,
        }),
        v1beta2: conditions.map(|c| V1Beta2Conditions { conditions: Some(c) }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};
    use crate::capi::core::conversion::fixtures::*;

    const V1: &str = "cluster.x-k8s.io/v1beta1";
    const V2: &str = "cluster.x-k8s.io/v1beta2";

    fn meta() -> Value {
        json!({"name": "sample-workers-9qz4d", "namespace": "default", "labels": {"cluster.x-k8s.io/cluster-name": "sample"}})
    }

    fn node_info() -> Value {
        json!({
            "architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "containerd://1.7.0",
            "kernelVersion": "6.1.0", "kubeProxyVersion": "v1.30.2", "kubeletVersion": "v1.30.2",
            "machineID": "m", "operatingSystem": "linux", "osImage": "Ubuntu 24.04", "systemUUID": "u",
        })
    }

    /// A running worker Machine as the v1beta1 controllers report it.
    fn v1beta1_machine() -> Value {
        json!({
            "apiVersion": V1,
            "kind": "Machine",
            "metadata": meta(),
            "spec": v1beta1_machine_spec(),
            "status": {
                "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": "sample-workers-9qz4d"},
                "nodeInfo": node_info(),
                "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}, {"type": "Hostname", "address": "w1"}],
                "phase": "Running",
                "lastUpdated": "2025-03-01T09:59:00Z",
                "bootstrapReady": true,
                "infrastructureReady": true,
                "observedGeneration": 3,
                "failureReason": "UpdateError",
                "failureMessage": "the provider reported a problem",
                "conditions": v1beta1_conditions(),
                "deletion": {"nodeDrainStartTime": "2025-03-01T10:00:00Z"},
                "v1beta2": {"conditions": v1beta2_conditions()},
            },
        })
    }

    #[test]
    fn v1beta1_machine_goes_up_field_by_field() {
        let v1 = v1beta1_machine();
        let v2 = convert::<MachineConversion>(&v1, V2);
        assert!(!has_conversion_data(&v2), "nothing is lost: {v2}");
        assert_eq!(v2["apiVersion"], V2);
        assert_eq!(v2["metadata"], meta());
        assert_eq!(v2["spec"], v1beta2_machine_spec());
        assert_eq!(
            v2["status"],
            json!({
                "conditions": v1beta2_conditions(),
                "initialization": {"infrastructureProvisioned": true, "bootstrapDataSecretCreated": true},
                "nodeRef": {"name": "sample-workers-9qz4d"},
                "nodeInfo": node_info(),
                "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}, {"type": "Hostname", "address": "w1"}],
                "phase": "Running",
                "lastUpdated": "2025-03-01T09:59:00Z",
                "observedGeneration": 3,
                "deletion": {"nodeDrainStartTime": "2025-03-01T10:00:00Z"},
                "deprecated": {"v1beta1": {
                    "conditions": v1beta1_conditions(),
                    "failureReason": "UpdateError",
                    "failureMessage": "the provider reported a problem",
                }},
            })
        );
        assert_eq!(convert::<MachineConversion>(&v2, V1), v1);
        assert_round_trips::<MachineConversion>(&v1);
    }

    #[test]
    fn v1beta2_machine_goes_down_with_versions_and_namespace() {
        let mut spec = with_min_ready_seconds(v1beta2_machine_spec(), 30);
        spec["readinessGates"] = json!([{"conditionType": "example.com/Drained", "polarity": "Negative"}]);
        spec["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule", "propagation": "Always"}]);
        let v2 = json!({
            "apiVersion": V2,
            "kind": "Machine",
            "metadata": meta(),
            "spec": spec,
            "status": {
                "conditions": v1beta2_conditions(),
                "initialization": {"infrastructureProvisioned": true},
                "nodeRef": {"name": "sample-workers-9qz4d"},
                "failureDomain": "fd-1",
                "phase": "Updating",
                "deletion": {"nodeDrainStartTime": "2025-03-01T10:00:00Z",
                             "waitForPreDrainHookStartTime": "2025-03-01T09:59:30Z"},
                "deprecated": {"v1beta1": {"conditions": v1beta1_conditions()}},
            },
        });
        let v1 = convert::<MachineConversion>(&v2, V1);
        assert!(has_conversion_data(&v1), "taints, polarity, minReadySeconds and the phase are kept aside");
        let v1 = strip_conversion_data(v1);
        assert_eq!(v1["metadata"], meta());
        let mut expected_spec = v1beta1_machine_spec();
        expected_spec["readinessGates"] = json!([{"conditionType": "example.com/Drained"}]);
        assert_eq!(v1["spec"], expected_spec);
        assert_eq!(
            v1["status"],
            json!({
                "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": "sample-workers-9qz4d"},
                "phase": "Running",
                "infrastructureReady": true,
                "conditions": v1beta1_conditions(),
                "deletion": {"nodeDrainStartTime": "2025-03-01T10:00:00Z"},
                "v1beta2": {"conditions": v1beta2_conditions()},
            })
        );
        assert_eq!(convert::<MachineConversion>(&convert::<MachineConversion>(&v2, V1), V2), v2);
        assert_round_trips::<MachineConversion>(&v2);
    }

    #[test]
    fn references_without_a_known_contract_fall_back() {
        // Without CRDs to ask, bootstrap references name v1beta2 and infrastructure ones
        // v1beta1; the annotation still brings the original back.
        let v1 = v1beta1_machine();
        let back =
            strip_conversion_data(down::<MachineConversion>(&strip_conversion_data(up::<MachineConversion>(&v1))));
        assert_eq!(back["spec"]["bootstrap"]["configRef"]["apiVersion"], "bootstrap.cluster.x-k8s.io/v1beta2");
        assert_eq!(back["spec"]["infrastructureRef"]["apiVersion"], "infrastructure.cluster.x-k8s.io/v1beta1");
        assert_eq!(back["spec"]["infrastructureRef"]["namespace"], "default");
        assert_round_trips::<MachineConversion>(&v1);
    }

    #[test]
    fn empty_strings_and_lists_are_unset_in_v1beta2() {
        let mut v1 = v1beta1_machine();
        v1["spec"]["version"] = json!("");
        v1["spec"]["providerID"] = json!("");
        v1["spec"]["failureDomain"] = json!("");
        v1["spec"]["readinessGates"] = json!([]);
        v1["status"]["phase"] = json!("");
        let v2 = strip_conversion_data(convert::<MachineConversion>(&v1, V2));
        for field in ["version", "providerID", "failureDomain", "readinessGates"] {
            assert!(v2["spec"].get(field).is_none(), "{field}: {}", v2["spec"]);
        }
        assert!(v2["status"].get("phase").is_none());
        assert_round_trips::<MachineConversion>(&v1);
    }

    #[test]
    fn a_new_machine_has_no_initialization_nor_deprecated_status() {
        let mut v1 = v1beta1_machine();
        v1["status"] = json!({"phase": "Pending", "observedGeneration": 1});
        let v2 = convert::<MachineConversion>(&v1, V2);
        assert!(!has_conversion_data(&v2));
        assert_eq!(v2["status"], json!({"phase": "Pending", "observedGeneration": 1}));
        let mut v1 = v1beta1_machine();
        v1["status"] = json!({"bootstrapReady": false});
        let v2 = convert::<MachineConversion>(&v1, V2);
        assert_eq!(v2["status"], json!({"initialization": {"bootstrapDataSecretCreated": false}}));
        assert_round_trips::<MachineConversion>(&v1);
    }
}
