//! MachineHealthCheck admission (v1beta2, as upstream v1.14's webhook): the cluster-name
//! label; selector, bounds and immutability checks. Unset checks and triggers are not
//! defaulted: the controller reads them as upstream documents (10 minutes for the node
//! start-up timeout, no limit on unhealthy Machines).

use super::checks::{set_cluster_name_label, validate_cluster_name};
use super::healthcheck_checks::{HealthCheckV1Beta2, validate_health_check_v1beta2};
use super::v1beta2::MachineHealthCheck;
use crate::admission::{FieldError, FieldPath};
use crate::capi::keys::CLUSTER_NAME_LABEL;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::to_value;
use crate::selector::Selector;

/// What an unset MachineHealthCheck setting means.
pub const DEFAULT_MAX_UNHEALTHY: &str = "100%";
pub const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS: i32 = 600;

pub(crate) struct MachineHealthCheckAdmission;

impl KindAdmission for MachineHealthCheckAdmission {
    type Object = MachineHealthCheck;

    fn default(&self, mhc: &mut MachineHealthCheck, _old: Option<&MachineHealthCheck>) -> Result<(), Vec<FieldError>> {
        set_cluster_name_label(&mut mhc.metadata, &mhc.spec.cluster_name);
        Ok(())
    }

    fn validate(&self, mhc: &MachineHealthCheck, old: Option<&MachineHealthCheck>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_cluster_name(
            &mhc.spec.cluster_name,
            old.map(|o| o.spec.cluster_name.as_str()),
            &spec.child("clusterName"),
        );
        let sel_path = spec.child("selector");
        match Selector::parse(&mhc.spec.selector, &sel_path) {
            Err(e) => errs.extend(e),
            Ok(s) if s.is_empty() => errs.push(FieldError::invalid(
                sel_path.as_str(),
                to_value(&mhc.spec.selector),
                "selector must not be empty",
            )),
            Ok(_) => {}
        }
        if let Some(c) = mhc.spec.selector.match_labels.as_ref().and_then(|m| m.get(CLUSTER_NAME_LABEL))
            && *c != mhc.spec.cluster_name
        {
            errs.push(FieldError::invalid(
                sel_path.as_str(),
                to_value(&mhc.spec.selector),
                "cannot specify a cluster selector other than the one specified by ClusterName",
            ));
        }
        let trigger = mhc.spec.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
        let settings = HealthCheckV1Beta2 {
            node_startup_timeout_seconds: mhc.spec.checks.as_ref().and_then(|c| c.node_startup_timeout_seconds),
            unhealthy_less_than_or_equal_to: trigger.and_then(|t| t.unhealthy_less_than_or_equal_to.as_ref()),
            unhealthy_in_range: trigger.and_then(|t| t.unhealthy_in_range.as_deref()),
        };
        errs.extend(validate_health_check_v1beta2(&settings, &spec));
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn mhc() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineHealthCheck",
            "metadata": { "name": "h", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "selector": { "matchLabels": { "cluster.x-k8s.io/deployment-name": "md1" } },
                "checks": {
                    "unhealthyNodeConditions": [ { "type": "Ready", "status": "Unknown", "timeoutSeconds": 300 } ]
                }
            }
        })
    }

    #[test]
    fn defaults_only_the_cluster_label() {
        let out = admit(&Typed(MachineHealthCheckAdmission), mhc(), None).unwrap();
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(out["spec"], mhc()["spec"], "unset checks and triggers stay unset");
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let trigger = |t: Value| json!({ "spec": { "remediation": { "triggerIf": t } } });
        let cases = [
            (json!({ "spec": { "selector": { "matchLabels": null } } }), vec!["spec.selector"]),
            (
                json!({ "spec": { "selector": { "matchLabels": { "cluster.x-k8s.io/cluster-name": "c2" } } } }),
                vec!["spec.selector"],
            ),
            (
                trigger(json!({ "unhealthyLessThanOrEqualTo": "40" })),
                vec!["spec.remediation.triggerIf.unhealthyLessThanOrEqualTo"],
            ),
            (trigger(json!({ "unhealthyInRange": "3-5" })), vec!["spec.remediation.triggerIf.unhealthyInRange"]),
            (trigger(json!({ "unhealthyInRange": "[5-3]" })), vec!["spec.remediation.triggerIf.unhealthyInRange"]),
            (
                json!({ "spec": { "checks": { "nodeStartupTimeoutSeconds": 10 } } }),
                vec!["spec.checks.nodeStartupTimeoutSeconds"],
            ),
        ];
        for (patch, want) in cases {
            let r = admit(&Typed(MachineHealthCheckAdmission), merged(&mhc(), &patch), None);
            assert_eq!(error_fields(&r), want, "{patch}");
        }
    }

    #[test]
    fn valid_bounds() {
        for patch in [
            json!({ "spec": { "checks": { "nodeStartupTimeoutSeconds": 0 } } }),
            json!({ "spec": { "checks": { "nodeStartupTimeoutSeconds": 30 } } }),
            json!({ "spec": { "remediation": { "triggerIf": { "unhealthyLessThanOrEqualTo": 2, "unhealthyInRange": "[1-3]" } } } }),
        ] {
            assert!(admit(&Typed(MachineHealthCheckAdmission), merged(&mhc(), &patch), None).is_ok(), "{patch}");
        }
    }

    #[test]
    fn updates() {
        let a = Typed(MachineHealthCheckAdmission);
        let old = admit(&a, mhc(), None).unwrap();
        let tuned = merged(
            &old,
            &json!({ "spec": { "remediation": { "triggerIf": { "unhealthyLessThanOrEqualTo": "40%" } },
                               "selector": { "matchLabels": { "role": "x" } } } }),
        );
        assert!(admit(&a, tuned, Some(old.clone())).is_ok());
        let moved = merged(&old, &json!({ "spec": { "clusterName": "c2" } }));
        assert_eq!(error_fields(&admit(&a, moved, Some(old))), ["spec.clusterName"]);
    }
}
