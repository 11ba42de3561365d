//! MachineSet: `deletePolicy` <-> `deletion.order`, `machineNamingStrategy` <->
//! `machineNaming`, `minReadySeconds` <-> `template.spec.minReadySeconds`; v1beta1's
//! counters move under `deprecated.v1beta1`, its `status.v1beta2` block to the top.

use super::machine::{non_default, template_down, template_up};
use super::topology::timeout_durations;
use crate::capi::common::{MachineNamingStrategy, V1Beta2ReplicaStatus};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::core::{MachineSet, MachineSetSpec, MachineSetStatus, v1beta2};

pub struct MachineSetConversion;

impl HubSpoke for MachineSetConversion {
    type Hub = v1beta2::MachineSet;
    type Spoke = MachineSet;

    fn spoke_durations() -> Vec<String> {
        timeout_durations("spec.template.spec")
    }

    fn up(s: MachineSet, _ctx: &Ctx<'_>) -> v1beta2::MachineSet {
        let MachineSetSpec {
            cluster_name,
            replicas,
            min_ready_seconds,
            delete_policy,
            selector,
            template,
            machine_naming_strategy,
        } = s.spec;
        v1beta2::MachineSet {
            metadata: s.metadata,
            spec: v1beta2::MachineSetSpec {
                cluster_name,
                replicas,
                selector,
                template: template_up(template, min_ready_seconds),
                machine_naming: naming_up(machine_naming_strategy),
                deletion: delete_policy.map(|order| v1beta2::MachineSetDeletionSpec { order: Some(order) }),
            },
            status: s.status.map(status_up),
        }
    }

    fn down(h: v1beta2::MachineSet, ctx: &Ctx<'_>) -> MachineSet {
        let v1beta2::MachineSetSpec { cluster_name, replicas, selector, template, machine_naming, deletion } = h.spec;
        let (template, min_ready_seconds) = template_down(template, ctx);
        MachineSet {
            metadata: h.metadata,
            spec: MachineSetSpec {
                cluster_name,
                replicas,
                min_ready_seconds,
                delete_policy: deletion.and_then(|d| d.order),
                selector,
                template,
                machine_naming_strategy: machine_naming,
            },
            status: h.status.map(status_down),
        }
    }
}

/// A naming strategy without a template is unset in v1beta2.
pub(super) fn naming_up(n: Option<MachineNamingStrategy>) -> Option<MachineNamingStrategy> {
    n.filter(|n| n.template.as_deref().is_some_and(|t| !t.is_empty()))
}

fn status_up(s: MachineSetStatus) -> v1beta2::MachineSetStatus {
    let MachineSetStatus {
        selector,
        replicas,
        fully_labeled_replicas,
        ready_replicas,
        available_replicas,
        observed_generation,
        failure_reason,
        failure_message,
        conditions,
        v1beta2,
    } = s;
    let new = v1beta2.unwrap_or_default();
    let old = v1beta2::MachineSetV1Beta1DeprecatedStatus {
        conditions,
        failure_reason,
        failure_message,
        fully_labeled_replicas,
        ready_replicas,
        available_replicas,
    };
    v1beta2::MachineSetStatus {
        conditions: new.conditions,
        selector: non_empty(selector),
        replicas,
        ready_replicas: new.ready_replicas,
        available_replicas: new.available_replicas,
        up_to_date_replicas: new.up_to_date_replicas,
        versions: None,
        observed_generation,
        deprecated: non_default(old).map(|d| v1beta2::MachineSetDeprecatedStatus { v1beta1: Some(d) }),
    }
}

fn status_down(h: v1beta2::MachineSetStatus) -> MachineSetStatus {
    let v1beta2::MachineSetStatus {
        conditions,
        selector,
        replicas,
        ready_replicas,
        available_replicas,
        up_to_date_replicas,
        versions: _,
        observed_generation,
        deprecated,
    } = h;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    MachineSetStatus {
        selector,
        replicas,
        fully_labeled_replicas: old.fully_labeled_replicas,
        ready_replicas: old.ready_replicas,
        available_replicas: old.available_replicas,
        observed_generation,
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
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
        json!({"name": "sample-workers-5d8f9", "namespace": "default"})
    }

    fn selector() -> Value {
        json!({"matchLabels": {"cluster.x-k8s.io/cluster-name": "sample", "cluster.x-k8s.io/set-name": "sample-workers-5d8f9"}})
    }

    fn template_metadata() -> Value {
        json!({"labels": {"cluster.x-k8s.io/cluster-name": "sample", "cluster.x-k8s.io/set-name": "sample-workers-5d8f9"}})
    }

    /// A MachineSet of a MachineDeployment, scaled to 3, as the v1beta1 controllers report it.
    fn v1beta1_machineset() -> Value {
        json!({
            "apiVersion": V1,
            "kind": "MachineSet",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 3,
                "minReadySeconds": 20,
                "deletePolicy": "Oldest",
                "selector": selector(),
                "machineNamingStrategy": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "template": {"metadata": template_metadata(), "spec": v1beta1_machine_spec()},
            },
            "status": {
                "selector": "cluster.x-k8s.io/cluster-name=sample,cluster.x-k8s.io/set-name=sample-workers-5d8f9",
                "replicas": 3,
                "fullyLabeledReplicas": 3,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "observedGeneration": 4,
                "conditions": v1beta1_conditions(),
                "v1beta2": {"conditions": v1beta2_conditions(), "readyReplicas": 3, "availableReplicas": 2,
                            "upToDateReplicas": 3},
            },
        })
    }

    fn v1beta2_machineset() -> Value {
        json!({
            "apiVersion": V2,
            "kind": "MachineSet",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 3,
                "selector": selector(),
                "machineNaming": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "deletion": {"order": "Oldest"},
                "template": {"metadata": template_metadata(), "spec": with_min_ready_seconds(v1beta2_machine_spec(), 20)},
            },
            "status": {
                "conditions": v1beta2_conditions(),
                "selector": "cluster.x-k8s.io/cluster-name=sample,cluster.x-k8s.io/set-name=sample-workers-5d8f9",
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 2,
                "upToDateReplicas": 3,
                "observedGeneration": 4,
                "deprecated": {"v1beta1": {
                    "conditions": v1beta1_conditions(),
                    "fullyLabeledReplicas": 3,
                    "readyReplicas": 2,
                    "availableReplicas": 2,
                }},
            },
        })
    }

    #[test]
    fn v1beta1_machineset_goes_up_field_by_field() {
        let v1 = v1beta1_machineset();
        let v2 = convert::<MachineSetConversion>(&v1, V2);
        assert!(!has_conversion_data(&v2), "nothing is lost: {v2}");
        assert_eq!(v2, v1beta2_machineset());
        assert_round_trips::<MachineSetConversion>(&v1);
    }

    #[test]
    fn v1beta2_machineset_goes_down_field_by_field() {
        let mut v2 = v1beta2_machineset();
        v2["status"]["versions"] = json!([{"version": "v1.30.2", "replicas": 3}]);
        let v1 = convert::<MachineSetConversion>(&v2, V1);
        assert!(has_conversion_data(&v1), "status.versions is kept aside");
        assert_eq!(strip_conversion_data(v1.clone()), v1beta1_machineset());
        assert_eq!(convert::<MachineSetConversion>(&v1, V2), v2);
        assert_round_trips::<MachineSetConversion>(&v2);
    }

    #[test]
    fn an_empty_naming_strategy_is_unset_in_v1beta2() {
        let mut v1 = v1beta1_machineset();
        v1["spec"]["machineNamingStrategy"] = json!({});
        v1["status"] = json!({"replicas": 0});
        let v2 = strip_conversion_data(convert::<MachineSetConversion>(&v1, V2));
        assert!(v2["spec"].get("machineNaming").is_none());
        assert_eq!(v2["status"], json!({"replicas": 0}));
        assert_round_trips::<MachineSetConversion>(&v1);
    }
}
