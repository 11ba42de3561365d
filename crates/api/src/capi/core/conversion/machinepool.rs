//! MachinePool: `minReadySeconds` <-> `template.spec.minReadySeconds`; readiness flags <->
//! `status.initialization`; v1beta1's counters and failure fields move under
//! `deprecated.v1beta1`, its `status.v1beta2` block to the top.

use super::machine::{non_default, template_down, template_up};
use crate::capi::common::V1Beta2ReplicaStatus;
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::core::{MachinePool, MachinePoolSpec, MachinePoolStatus, v1beta2};

pub struct MachinePoolConversion;

impl HubSpoke for MachinePoolConversion {
    type Hub = v1beta2::MachinePool;
    type Spoke = MachinePool;

    fn up(s: MachinePool, _ctx: &Ctx<'_>) -> v1beta2::MachinePool {
        let MachinePoolSpec { cluster_name, replicas, template, min_ready_seconds, provider_id_list, failure_domains } =
            s.spec;
        v1beta2::MachinePool {
            metadata: s.metadata,
            spec: v1beta2::MachinePoolSpec {
                cluster_name,
                replicas,
                template: template_up(template, min_ready_seconds),
                provider_id_list,
                failure_domains,
            },
            status: s.status.map(status_up),
        }
    }

    fn down(h: v1beta2::MachinePool, ctx: &Ctx<'_>) -> MachinePool {
        let v1beta2::MachinePoolSpec { cluster_name, replicas, template, provider_id_list, failure_domains } = h.spec;
        let (template, min_ready_seconds) = template_down(template, ctx);
        MachinePool {
            metadata: h.metadata,
            spec: MachinePoolSpec {
                cluster_name,
                replicas,
                template,
                min_ready_seconds,
                provider_id_list,
                failure_domains,
            },
            status: h.status.map(status_down),
        }
    }
}

fn status_up(s: MachinePoolStatus) -> v1beta2::MachinePoolStatus {
    let MachinePoolStatus {
        node_refs,
        replicas,
        ready_replicas,
        available_replicas,
        unavailable_replicas,
        failure_reason,
        failure_message,
        phase,
        bootstrap_ready,
        infrastructure_ready,
        observed_generation,
        conditions,
        v1beta2,
    } = s;
    let new = v1beta2.unwrap_or_default();
    let old = v1beta2::MachinePoolV1Beta1DeprecatedStatus {
        conditions,
        failure_reason,
        failure_message,
        ready_replicas,
        available_replicas,
        unavailable_replicas,
    };
    v1beta2::MachinePoolStatus {
        conditions: new.conditions,
        initialization: non_default(v1beta2::MachinePoolInitializationStatus {
            infrastructure_provisioned: infrastructure_ready,
            bootstrap_data_secret_created: bootstrap_ready,
        }),
        node_refs,
        replicas,
        ready_replicas: new.ready_replicas,
        available_replicas: new.available_replicas,
        up_to_date_replicas: new.up_to_date_replicas,
        versions: None,
        phase: non_empty(phase),
        observed_generation,
        deprecated: non_default(old).map(|d| v1beta2::MachinePoolDeprecatedStatus { v1beta1: Some(d) }),
    }
}

fn status_down(h: v1beta2::MachinePoolStatus) -> MachinePoolStatus {
    let v1beta2::MachinePoolStatus {
        conditions,
        initialization,
        node_refs,
        replicas,
        ready_replicas,
        available_replicas,
        up_to_date_replicas,
        versions: _,
        phase,
        observed_generation,
        deprecated,
    } = h;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    let init = initialization.unwrap_or_default();
    MachinePoolStatus {
        node_refs,
        replicas,
        ready_replicas: old.ready_replicas,
        available_replicas: old.available_replicas,
        unavailable_replicas: old.unavailable_replicas,
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
        phase,
        bootstrap_ready: init.bootstrap_data_secret_created,
        infrastructure_ready: init.infrastructure_provisioned,
        observed_generation,
        conditions: old.conditions,
        v1beta2: non_default(V1Beta2ReplicaStatus {
            conditions,
            ready_replicas,
            available_replicas,
            up_to_date_replicas,
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, strip_conversion_data};
    use crate::capi::core::conversion::fixtures::*;

    const V1: &str = "cluster.x-k8s.io/v1beta1";
    const V2: &str = "cluster.x-k8s.io/v1beta2";

    fn meta() -> Value {
        json!({"name": "sample-pool", "namespace": "default"})
    }

    fn node_refs() -> Value {
        json!([
            {"apiVersion": "v1", "kind": "Node", "name": "sample-pool-a", "uid": "4f7c"},
            {"apiVersion": "v1", "kind": "Node", "name": "sample-pool-b", "uid": "9e21"},
        ])
    }

    /// A provisioned two-instance MachinePool as the v1beta1 controllers report it.
    fn v1beta1_pool() -> Value {
        json!({
            "apiVersion": V1,
            "kind": "MachinePool",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 2,
                "minReadySeconds": 15,
                "providerIDList": ["in-memory://sample-pool-a", "in-memory://sample-pool-b"],
                "failureDomains": ["fd-1", "fd-2"],
                "template": {"spec": v1beta1_machine_spec()},
            },
            "status": {
                "nodeRefs": node_refs(),
                "replicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 1,
                "unavailableReplicas": 1,
                "phase": "Running",
                "bootstrapReady": true,
                "infrastructureReady": true,
                "observedGeneration": 5,
                "failureReason": "UpdateError",
                "failureMessage": "an instance failed to update",
                "conditions": v1beta1_conditions(),
                "v1beta2": {"conditions": v1beta2_conditions(), "readyReplicas": 2, "availableReplicas": 2,
                            "upToDateReplicas": 1},
            },
        })
    }

    fn v1beta2_pool() -> Value {
        json!({
            "apiVersion": V2,
            "kind": "MachinePool",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 2,
                "providerIDList": ["in-memory://sample-pool-a", "in-memory://sample-pool-b"],
                "failureDomains": ["fd-1", "fd-2"],
                "template": {"spec": with_min_ready_seconds(v1beta2_machine_spec(), 15)},
            },
            "status": {
                "conditions": v1beta2_conditions(),
                "initialization": {"infrastructureProvisioned": true, "bootstrapDataSecretCreated": true},
                "nodeRefs": node_refs(),
                "replicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "upToDateReplicas": 1,
                "phase": "Running",
                "observedGeneration": 5,
                "deprecated": {"v1beta1": {
                    "conditions": v1beta1_conditions(),
                    "failureReason": "UpdateError",
                    "failureMessage": "an instance failed to update",
                    "readyReplicas": 2,
                    "availableReplicas": 1,
                    "unavailableReplicas": 1,
                }},
            },
        })
    }

    #[test]
    fn v1beta1_machinepool_goes_up_field_by_field() {
        let v1 = v1beta1_pool();
        let v2 = convert::<MachinePoolConversion>(&v1, V2);
        assert!(!has_conversion_data(&v2), "nothing is lost: {v2}");
        assert_eq!(v2, v1beta2_pool());
        assert_round_trips::<MachinePoolConversion>(&v1);
    }

    #[test]
    fn v1beta2_machinepool_goes_down_field_by_field() {
        let mut v2 = v1beta2_pool();
        v2["status"]["versions"] = json!([{"version": "v1.30.2", "replicas": 2}]);
        v2["spec"]["template"]["spec"]["taints"] =
            json!([{"key": "pool", "effect": "NoExecute", "propagation": "OnInitialization"}]);
        let v1 = convert::<MachinePoolConversion>(&v2, V1);
        assert!(has_conversion_data(&v1), "versions and taints are kept aside");
        assert_eq!(strip_conversion_data(v1.clone()), v1beta1_pool());
        assert_eq!(convert::<MachinePoolConversion>(&v1, V2), v2);
        assert_round_trips::<MachinePoolConversion>(&v2);
    }
}
