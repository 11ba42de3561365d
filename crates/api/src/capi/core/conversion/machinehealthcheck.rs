//! MachineHealthCheck: `unhealthyConditions` and `nodeStartupTimeout` <-> `checks` (Go
//! durations <-> seconds), `maxUnhealthy` and `unhealthyRange` <-> `remediation.triggerIf`,
//! `remediationTemplate` <-> `remediation.templateRef` (in the object's namespace); the
//! two generations of conditions swap places.

use k8s_openapi::api::core::v1::ObjectReference;

use super::machine::{non_default, non_empty_list};
use super::topology::health_check_durations;
use crate::capi::common::{UnhealthyNodeCondition, V1Beta2Conditions, VersionedTemplateReference};
use crate::capi::conversion::{Ctx, HubSpoke, duration_to_seconds, non_empty, seconds_to_duration};
use crate::capi::core::{
    MachineHealthCheck, MachineHealthCheckSpec, MachineHealthCheckStatus, UnhealthyCondition, v1beta2,
};

pub struct MachineHealthCheckConversion;

impl HubSpoke for MachineHealthCheckConversion {
    type Hub = v1beta2::MachineHealthCheck;
    type Spoke = MachineHealthCheck;

    fn spoke_durations() -> Vec<String> {
        health_check_durations("spec")
    }

    fn up(s: MachineHealthCheck, _ctx: &Ctx<'_>) -> v1beta2::MachineHealthCheck {
        let MachineHealthCheckSpec {
            cluster_name,
            selector,
            unhealthy_conditions,
            max_unhealthy,
            unhealthy_range,
            node_startup_timeout,
            remediation_template,
        } = s.spec;
        let checks = v1beta2::MachineHealthCheckChecks {
            node_startup_timeout_seconds: duration_to_seconds(node_startup_timeout.as_deref()),
            unhealthy_node_conditions: non_empty_list(unhealthy_conditions).map(|list| {
                list.into_iter()
                    .map(|c| UnhealthyNodeCondition {
                        type_: c.type_,
                        status: c.status,
                        // An unparsable timeout (admission refuses those) counts as none.
                        timeout_seconds: duration_to_seconds(Some(&c.timeout)).unwrap_or(0),
                    })
                    .collect()
            }),
            unhealthy_machine_conditions: None,
        };
        let trigger_if = v1beta2::MachineHealthCheckRemediationTriggerIf {
            unhealthy_less_than_or_equal_to: max_unhealthy,
            unhealthy_in_range: non_empty(unhealthy_range),
        };
        let remediation = v1beta2::MachineHealthCheckRemediation {
            trigger_if: non_default(trigger_if),
            template_ref: remediation_template.map(|r| VersionedTemplateReference {
                api_version: r.api_version.unwrap_or_default(),
                kind: r.kind.unwrap_or_default(),
                name: r.name.unwrap_or_default(),
            }),
        };
        v1beta2::MachineHealthCheck {
            metadata: s.metadata,
            spec: v1beta2::MachineHealthCheckSpec {
                cluster_name,
                selector,
                checks: non_default(checks),
                remediation: non_default(remediation),
            },
            status: s.status.map(status_up),
        }
    }

    fn down(h: v1beta2::MachineHealthCheck, ctx: &Ctx<'_>) -> MachineHealthCheck {
        let v1beta2::MachineHealthCheckSpec { cluster_name, selector, checks, remediation } = h.spec;
        let checks = checks.unwrap_or_default();
        let remediation = remediation.unwrap_or_default();
        let trigger_if = remediation.trigger_if.unwrap_or_default();
        MachineHealthCheck {
            metadata: h.metadata,
            spec: MachineHealthCheckSpec {
                cluster_name,
                selector,
                unhealthy_conditions: checks.unhealthy_node_conditions.map(|list| {
                    list.into_iter()
                        .map(|c| UnhealthyCondition {
                            type_: c.type_,
                            status: c.status,
                            timeout: seconds_to_duration(Some(c.timeout_seconds)).unwrap_or_default(),
                        })
                        .collect()
                }),
                max_unhealthy: trigger_if.unhealthy_less_than_or_equal_to,
                unhealthy_range: trigger_if.unhealthy_in_range,
                node_startup_timeout: seconds_to_duration(checks.node_startup_timeout_seconds),
                remediation_template: remediation.template_ref.map(|r| ObjectReference {
                    api_version: Some(r.api_version),
                    kind: Some(r.kind),
                    name: Some(r.name),
                    namespace: ctx.namespace.map(str::to_string),
                    ..Default::default()
                }),
            },
            status: h.status.map(status_down),
        }
    }
}

fn status_up(s: MachineHealthCheckStatus) -> v1beta2::MachineHealthCheckStatus {
    let MachineHealthCheckStatus {
        expected_machines,
        current_healthy,
        remediations_allowed,
        observed_generation,
        targets,
        conditions,
        v1beta2,
    } = s;
    let old = v1beta2::MachineHealthCheckV1Beta1DeprecatedStatus { conditions };
    v1beta2::MachineHealthCheckStatus {
        conditions: v1beta2.and_then(|v| v.conditions),
        expected_machines,
        current_healthy,
        remediations_allowed,
        observed_generation,
        targets,
        deprecated: non_default(old).map(|d| v1beta2::MachineHealthCheckDeprecatedStatus { v1beta1: Some(d) }),
    }
}

fn status_down(h: v1beta2::MachineHealthCheckStatus) -> MachineHealthCheckStatus {
    let v1beta2::MachineHealthCheckStatus {
        conditions,
        expected_machines,
        current_healthy,
        remediations_allowed,
        observed_generation,
        targets,
        deprecated,
    } = h;
    MachineHealthCheckStatus {
        expected_machines,
        current_healthy,
        remediations_allowed,
        observed_generation,
        targets,
        conditions: deprecated.and_then(|d| d.v1beta1).and_then(|d| d.conditions),
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
        json!({"name": "sample-workers", "namespace": "default"})
    }

    fn selector() -> Value {
        json!({"matchLabels": {"cluster.x-k8s.io/deployment-name": "sample-workers"}})
    }

    /// The sample's MachineHealthCheck, with external remediation and a v1beta1 status.
    fn v1beta1_mhc() -> Value {
        json!({
            "apiVersion": V1,
            "kind": "MachineHealthCheck",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "selector": selector(),
                "maxUnhealthy": "40%",
                "unhealthyRange": "[1-3]",
                "nodeStartupTimeout": "10m0s",
                "unhealthyConditions": [
                    {"type": "Ready", "status": "Unknown", "timeout": "5m0s"},
                    {"type": "Ready", "status": "False", "timeout": "5m0s"},
                ],
                "remediationTemplate": {"apiVersion": "remediation.example.com/v1alpha1", "kind": "RebootTemplate",
                                        "name": "reboot", "namespace": "default"},
            },
            "status": {
                "expectedMachines": 3,
                "currentHealthy": 2,
                "remediationsAllowed": 1,
                "observedGeneration": 1,
                "targets": ["sample-workers-9qz4d", "sample-workers-k2l8m", "sample-workers-x1c4v"],
                "conditions": v1beta1_conditions(),
                "v1beta2": {"conditions": v1beta2_conditions()},
            },
        })
    }

    fn v1beta2_mhc() -> Value {
        json!({
            "apiVersion": V2,
            "kind": "MachineHealthCheck",
            "metadata": meta(),
            "spec": {
                "clusterName": "sample",
                "selector": selector(),
                "checks": {
                    "nodeStartupTimeoutSeconds": 600,
                    "unhealthyNodeConditions": [
                        {"type": "Ready", "status": "Unknown", "timeoutSeconds": 300},
                        {"type": "Ready", "status": "False", "timeoutSeconds": 300},
                    ],
                },
                "remediation": {
                    "triggerIf": {"unhealthyLessThanOrEqualTo": "40%", "unhealthyInRange": "[1-3]"},
                    "templateRef": {"apiVersion": "remediation.example.com/v1alpha1", "kind": "RebootTemplate",
                                    "name": "reboot"},
                },
            },
            "status": {
                "conditions": v1beta2_conditions(),
                "expectedMachines": 3,
                "currentHealthy": 2,
                "remediationsAllowed": 1,
                "observedGeneration": 1,
                "targets": ["sample-workers-9qz4d", "sample-workers-k2l8m", "sample-workers-x1c4v"],
                "deprecated": {"v1beta1": {"conditions": v1beta1_conditions()}},
            },
        })
    }

    #[test]
    fn v1beta1_machinehealthcheck_goes_up_field_by_field() {
        let v1 = v1beta1_mhc();
        let v2 = up::<MachineHealthCheckConversion>(&v1);
        assert!(!has_conversion_data(&v2), "nothing is lost: {v2}");
        assert_eq!(v2, v1beta2_mhc());
        assert_round_trips::<MachineHealthCheckConversion>(&v1);
    }

    #[test]
    fn v1beta2_machinehealthcheck_goes_down_field_by_field() {
        let mut v2 = v1beta2_mhc();
        v2["spec"]["checks"]["unhealthyMachineConditions"] =
            json!([{"type": "Ready", "status": "False", "timeoutSeconds": 900}]);
        let v1 = down::<MachineHealthCheckConversion>(&v2);
        assert!(has_conversion_data(&v1), "Machine conditions are kept aside");
        assert_eq!(strip_conversion_data(v1.clone()), v1beta1_mhc());
        assert_eq!(up::<MachineHealthCheckConversion>(&v1), v2);
        assert_round_trips::<MachineHealthCheckConversion>(&v2);
    }

    #[test]
    fn the_sample_health_check_keeps_its_durations_as_written() {
        // As in the sample manifest: durations Go would print differently.
        let mut v1 = v1beta1_mhc();
        v1["spec"]["nodeStartupTimeout"] = json!("10m");
        v1["spec"]["unhealthyConditions"][0]["timeout"] = json!("300s");
        v1["spec"].as_object_mut().unwrap().remove("remediationTemplate");
        v1.as_object_mut().unwrap().remove("status");
        let v2 = convert::<MachineHealthCheckConversion>(&v1, V2);
        assert!(has_conversion_data(&v2));
        let typed = strip_conversion_data(v2.clone());
        assert_eq!(typed["spec"]["checks"]["nodeStartupTimeoutSeconds"], 600);
        assert_eq!(typed["spec"]["checks"]["unhealthyNodeConditions"][0]["timeoutSeconds"], 300);
        assert!(typed["spec"]["remediation"].get("templateRef").is_none());
        assert_eq!(convert::<MachineHealthCheckConversion>(&v2, V1), v1);
        assert_round_trips::<MachineHealthCheckConversion>(&v1);
    }
}
