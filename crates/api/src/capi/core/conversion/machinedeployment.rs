//! MachineDeployment: `rolloutAfter` and `strategy.{type, rollingUpdate}` <-> `rollout`,
//! `strategy.rollingUpdate.deletePolicy` <-> `deletion.order`, `strategy.remediation` <->
//! `remediation`, `minReadySeconds` <-> `template.spec.minReadySeconds`; v1beta1's
//! counters move under `deprecated.v1beta1`, its `status.v1beta2` block to the top.
//! `revisionHistoryLimit` and `progressDeadlineSeconds` have no v1beta2 counterpart.

use super::machine::{non_default, template_down, template_up};
use super::machineset::naming_up;
use super::topology::timeout_durations;
use crate::capi::common::V1Beta2ReplicaStatus;
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::core::{
    MachineDeployment, MachineDeploymentSpec, MachineDeploymentStatus, MachineDeploymentStrategy,
    MachineDeploymentStrategyType, MachineRollingUpdateDeployment, RemediationStrategy, v1beta2,
};

pub struct MachineDeploymentConversion;

impl HubSpoke for MachineDeploymentConversion {
    type Hub = v1beta2::MachineDeployment;
    type Spoke = MachineDeployment;

    fn spoke_durations() -> Vec<String> {
        timeout_durations("spec.template.spec")
    }

    fn up(s: MachineDeployment, _ctx: &Ctx<'_>) -> v1beta2::MachineDeployment {
        let MachineDeploymentSpec {
            cluster_name,
            replicas,
            rollout_after,
            selector,
            template,
            strategy,
            machine_naming_strategy,
            min_ready_seconds,
            revision_history_limit: _,
            paused,
            progress_deadline_seconds: _,
        } = s.spec;
        let MachineDeploymentStrategy { type_, rolling_update, remediation } = strategy.unwrap_or_default();
        let MachineRollingUpdateDeployment { max_unavailable, max_surge, delete_policy } =
            rolling_update.unwrap_or_default();
        let rolling_update =
            non_default(v1beta2::MachineDeploymentRolloutStrategyRollingUpdate { max_unavailable, max_surge });
        // v1beta2 requires the type of a strategy; v1beta1 defaults it to RollingUpdate.
        let strategy =
            (type_.is_some() || rolling_update.is_some()).then(|| v1beta2::MachineDeploymentRolloutStrategy {
                type_: type_.unwrap_or(MachineDeploymentStrategyType::RollingUpdate),
                rolling_update,
            });
        v1beta2::MachineDeployment {
            metadata: s.metadata,
            spec: v1beta2::MachineDeploymentSpec {
                cluster_name,
                replicas,
                selector,
                template: template_up(template, min_ready_seconds),
                rollout: non_default(v1beta2::MachineDeploymentRolloutSpec { after: rollout_after, strategy }),
                remediation: remediation
                    .and_then(|r| r.max_in_flight)
                    .map(|m| v1beta2::MachineDeploymentRemediationSpec { max_in_flight: Some(m) }),
                machine_naming: naming_up(machine_naming_strategy),
                deletion: delete_policy.map(|order| v1beta2::MachineSetDeletionSpec { order: Some(order) }),
                paused,
            },
            status: s.status.map(status_up),
        }
    }

    fn down(h: v1beta2::MachineDeployment, ctx: &Ctx<'_>) -> MachineDeployment {
        let v1beta2::MachineDeploymentSpec {
            cluster_name,
            replicas,
            selector,
            template,
            rollout,
            remediation,
            machine_naming,
            deletion,
            paused,
        } = h.spec;
        let (template, min_ready_seconds) = template_down(template, ctx);
        let rollout = rollout.unwrap_or_default();
        let (type_, rolling_update) = match rollout.strategy {
            Some(s) => (Some(s.type_), s.rolling_update.unwrap_or_default()),
            None => (None, Default::default()),
        };
        let rolling_update = non_default(MachineRollingUpdateDeployment {
            max_unavailable: rolling_update.max_unavailable,
            max_surge: rolling_update.max_surge,
            delete_policy: deletion.and_then(|d| d.order),
        });
        let remediation =
            remediation.and_then(|r| r.max_in_flight).map(|m| RemediationStrategy { max_in_flight: Some(m) });
        MachineDeployment {
            metadata: h.metadata,
            spec: MachineDeploymentSpec {
                cluster_name,
                replicas,
                rollout_after: rollout.after,
                selector,
                template,
                strategy: non_default(MachineDeploymentStrategy { type_, rolling_update, remediation }),
                machine_naming_strategy: machine_naming,
                min_ready_seconds,
                revision_history_limit: None,
                paused,
                progress_deadline_seconds: None,
            },
            status: h.status.map(status_down),
        }
    }
}

/// How many old MachineSets a MachineDeployment keeps for rollback when none is set.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 1;

/// The v1beta1 `spec.revisionHistoryLimit` of a MachineDeployment stored in v1beta2, where it
/// travels in the conversion-data annotation; [`DEFAULT_REVISION_HISTORY_LIMIT`] when it was
/// never set. v1beta2 dropped the field (upstream then deletes every empty old set); drydock
/// keeps honouring it so `rollout undo` can reach the revisions it keeps.
pub fn revision_history_limit(md: &v1beta2::MachineDeployment) -> i32 {
    let kept = md.metadata.annotations.as_ref().and_then(|a| a.get(crate::capi::conversion::CONVERSION_DATA));
    kept.and_then(|raw| serde_json::from_str::<serde_json::Value>(raw).ok())
        .filter(|v| v["apiVersion"] == "cluster.x-k8s.io/v1beta1")
        .and_then(|v| v["spec"]["revisionHistoryLimit"].as_i64())
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT)
}

fn status_up(s: MachineDeploymentStatus) -> v1beta2::MachineDeploymentStatus {
    let MachineDeploymentStatus {
        observed_generation,
        selector,
        replicas,
        updated_replicas,
        ready_replicas,
        available_replicas,
        unavailable_replicas,
        phase,
        conditions,
        v1beta2,
    } = s;
    let new = v1beta2.unwrap_or_default();
    let old = v1beta2::MachineDeploymentV1Beta1DeprecatedStatus {
        conditions,
        updated_replicas,
        ready_replicas,
        available_replicas,
        unavailable_replicas,
    };
    v1beta2::MachineDeploymentStatus {
        conditions: new.conditions,
        observed_generation,
        selector: non_empty(selector),
        replicas,
        ready_replicas: new.ready_replicas,
        available_replicas: new.available_replicas,
        up_to_date_replicas: new.up_to_date_replicas,
        versions: None,
        phase: non_empty(phase),
        deprecated: non_default(old).map(|d| v1beta2::MachineDeploymentDeprecatedStatus { v1beta1: Some(d) }),
    }
}

fn status_down(h: v1beta2::MachineDeploymentStatus) -> MachineDeploymentStatus {
    let v1beta2::MachineDeploymentStatus {
        conditions,
        observed_generation,
        selector,
        replicas,
        ready_replicas,
        available_replicas,
        up_to_date_replicas,
        versions: _,
        phase,
        deprecated,
    } = h;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    MachineDeploymentStatus {
        observed_generation,
        selector,
        replicas,
        updated_replicas: old.updated_replicas,
        ready_replicas: old.ready_replicas,
        available_replicas: old.available_replicas,
        unavailable_replicas: old.unavailable_replicas,
        phase,
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
        json!({"name": "sample-workers", "namespace": "default"})
    }

    fn template_metadata() -> Value {
        json!({"labels": {"node-role.kubernetes.io/worker": ""}})
    }

    /// The sample's MachineDeployment, with every strategy field and a v1beta1 status.
    fn v1beta1_md() -> Value {
        json!({
            "apiVersion": V1,
            "kind": "MachineDeployment",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 3,
                "rolloutAfter": "2025-04-01T00:00:00Z",
                "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "sample-workers"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Newest"},
                    "remediation": {"maxInFlight": "50%"},
                },
                "machineNamingStrategy": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "minReadySeconds": 10,
                "paused": false,
                "template": {"metadata": template_metadata(), "spec": v1beta1_machine_spec()},
            },
            "status": {
                "observedGeneration": 2,
                "selector": "cluster.x-k8s.io/deployment-name=sample-workers",
                "replicas": 3,
                "updatedReplicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "unavailableReplicas": 0,
                "phase": "Running",
                "conditions": v1beta1_conditions(),
                "v1beta2": {"conditions": v1beta2_conditions(), "readyReplicas": 3, "availableReplicas": 3,
                            "upToDateReplicas": 2},
            },
        })
    }

    fn v1beta2_md() -> Value {
        json!({
            "apiVersion": V2,
            "kind": "MachineDeployment",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "replicas": 3,
                "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "sample-workers"}},
                "rollout": {
                    "after": "2025-04-01T00:00:00Z",
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                },
                "remediation": {"maxInFlight": "50%"},
                "deletion": {"order": "Newest"},
                "machineNaming": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "paused": false,
                "template": {"metadata": template_metadata(), "spec": with_min_ready_seconds(v1beta2_machine_spec(), 10)},
            },
            "status": {
                "conditions": v1beta2_conditions(),
                "observedGeneration": 2,
                "selector": "cluster.x-k8s.io/deployment-name=sample-workers",
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "upToDateReplicas": 2,
                "phase": "Running",
                "deprecated": {"v1beta1": {
                    "conditions": v1beta1_conditions(),
                    "updatedReplicas": 3,
                    "readyReplicas": 3,
                    "availableReplicas": 3,
                    "unavailableReplicas": 0,
                }},
            },
        })
    }

    #[test]
    fn v1beta1_machinedeployment_goes_up_field_by_field() {
        let v1 = v1beta1_md();
        let v2 = convert::<MachineDeploymentConversion>(&v1, V2);
        assert!(!has_conversion_data(&v2), "nothing is lost: {v2}");
        assert_eq!(v2, v1beta2_md());
        assert_round_trips::<MachineDeploymentConversion>(&v1);
    }

    #[test]
    fn v1beta2_machinedeployment_goes_down_field_by_field() {
        let v2 = v1beta2_md();
        let v1 = convert::<MachineDeploymentConversion>(&v2, V1);
        assert!(!has_conversion_data(&v1), "nothing is lost: {v1}");
        assert_eq!(v1, v1beta1_md());
        assert_round_trips::<MachineDeploymentConversion>(&v2);
    }

    #[test]
    fn removed_fields_are_dropped_going_up_and_restored_coming_back() {
        let mut v1 = v1beta1_md();
        v1["spec"]["revisionHistoryLimit"] = json!(1);
        v1["spec"]["progressDeadlineSeconds"] = json!(600);
        let v2 = convert::<MachineDeploymentConversion>(&v1, V2);
        assert!(has_conversion_data(&v2));
        assert_eq!(strip_conversion_data(v2.clone()), v1beta2_md());
        assert_eq!(convert::<MachineDeploymentConversion>(&v2, V1), v1);
        assert_round_trips::<MachineDeploymentConversion>(&v1);
    }

    #[test]
    fn a_deletion_order_alone_needs_no_strategy_type() {
        let mut v2 = v1beta2_md();
        v2["spec"].as_object_mut().unwrap().remove("rollout");
        v2["spec"].as_object_mut().unwrap().remove("remediation");
        let v1 = convert::<MachineDeploymentConversion>(&v2, V1);
        assert!(!has_conversion_data(&v1), "nothing is lost: {v1}");
        assert_eq!(v1["spec"]["strategy"], json!({"rollingUpdate": {"deletePolicy": "Newest"}}));
        assert_round_trips::<MachineDeploymentConversion>(&v2);
    }

    #[test]
    fn a_strategy_without_type_is_a_rolling_update() {
        let mut v1 = v1beta1_md();
        v1["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": "25%"}});
        let v2 = strip_conversion_data(convert::<MachineDeploymentConversion>(&v1, V2));
        assert_eq!(
            v2["spec"]["rollout"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}})
        );
        assert!(v2["spec"].get("deletion").is_none());
        assert_round_trips::<MachineDeploymentConversion>(&v1);
    }
    #[test]
    fn a_machinedeployment_is_stored_and_defaulted_in_v1beta2() {
        use crate::admission::Operation;
        let kind = crate::capi::kinds()
            .into_iter()
            .find(|k| k.crd.spec.names.kind == "MachineDeployment")
            .expect("registered");
        let versions: Vec<_> = kind.crd.spec.versions.iter().map(|v| (v.name.as_str(), v.storage)).collect();
        assert_eq!(versions, [("v1beta1", false), ("v1beta2", true)]);
        let mut md = json!({
            "apiVersion": V2,
            "kind": "MachineDeployment",
            "metadata": meta(),
            "spec": {"clusterName": "sample", "template": {"spec": v1beta2_machine_spec()}},
        });
        let admission = kind.admission.expect("admission");
        admission.admit(&mut md, None, Operation::Create).expect("admitted");
        assert_eq!(md["apiVersion"], V2);
        assert_eq!(md["spec"]["replicas"], 1);
        assert_eq!(
            md["spec"]["rollout"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
        );
        assert_eq!(md["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"], "sample-workers");
        assert_eq!(md["spec"]["template"]["spec"]["infrastructureRef"], v1beta2_machine_spec()["infrastructureRef"]);
    }

    #[test]
    fn the_revision_history_limit_travels_in_the_conversion_data() {
        let mut v1 = v1beta1_md();
        let stored: v1beta2::MachineDeployment =
            serde_json::from_value(convert::<MachineDeploymentConversion>(&v1, V2)).expect("v1beta2");
        assert_eq!(revision_history_limit(&stored), DEFAULT_REVISION_HISTORY_LIMIT);
        v1["spec"]["revisionHistoryLimit"] = json!(10);
        let stored: v1beta2::MachineDeployment =
            serde_json::from_value(convert::<MachineDeploymentConversion>(&v1, V2)).expect("v1beta2");
        assert_eq!(revision_history_limit(&stored), 10);
        let back = convert::<MachineDeploymentConversion>(&serde_json::to_value(&stored).expect("json"), V1);
        assert_eq!(back["spec"]["revisionHistoryLimit"], 10);
    }
}
