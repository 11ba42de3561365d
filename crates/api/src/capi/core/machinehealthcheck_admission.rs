//! MachineHealthCheck admission: cluster-name label, maxUnhealthy (100%), node start-up
//! timeout (10m) and remediation template namespace defaults; selector, bounds and
//! immutability checks.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::checks::{set_cluster_name_label, validate_cluster_name};
use super::healthcheck_checks::{HealthCheckFields, validate_health_check};
use super::machinehealthcheck::MachineHealthCheck;
use crate::admission::{FieldError, FieldPath};
use crate::capi::keys::CLUSTER_NAME_LABEL;
use crate::capi::refs;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::to_value;
use crate::selector::Selector;

/// Defaults of an unset MachineHealthCheck spec.
pub const DEFAULT_MAX_UNHEALTHY: &str = "100%";
pub const DEFAULT_NODE_STARTUP_TIMEOUT: &str = "10m";

pub(crate) struct MachineHealthCheckAdmission;

impl KindAdmission for MachineHealthCheckAdmission {
    type Object = MachineHealthCheck;

    fn default(&self, mhc: &mut MachineHealthCheck, _old: Option<&MachineHealthCheck>) -> Result<(), Vec<FieldError>> {
        set_cluster_name_label(&mut mhc.metadata, &mhc.spec.cluster_name);
        mhc.spec.max_unhealthy.get_or_insert_with(|| IntOrString::String(DEFAULT_MAX_UNHEALTHY.to_string()));
        mhc.spec.node_startup_timeout.get_or_insert_with(|| DEFAULT_NODE_STARTUP_TIMEOUT.to_string());
        refs::default_namespace(mhc.spec.remediation_template.as_mut(), mhc.metadata.namespace.as_deref());
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
        let fields = HealthCheckFields {
            unhealthy_conditions: mhc.spec.unhealthy_conditions.as_deref(),
            max_unhealthy: mhc.spec.max_unhealthy.as_ref(),
            unhealthy_range: mhc.spec.unhealthy_range.as_deref(),
            node_startup_timeout: mhc.spec.node_startup_timeout.as_deref(),
            remediation_template: mhc.spec.remediation_template.as_ref(),
        };
        errs.extend(validate_health_check(&fields, mhc.metadata.namespace.as_deref(), &spec));
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
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineHealthCheck",
            "metadata": { "name": "h", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "selector": { "matchLabels": { "cluster.x-k8s.io/deployment-name": "md1" } },
                "unhealthyConditions": [ { "type": "Ready", "status": "Unknown", "timeout": "300s" } ]
            }
        })
    }

    #[test]
    fn defaults() {
        let out = admit(&Typed(MachineHealthCheckAdmission), mhc(), None).unwrap();
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(out["spec"]["maxUnhealthy"], "100%");
        assert_eq!(out["spec"]["nodeStartupTimeout"], "10m");
        let with_template = merged(
            &mhc(),
            &json!({ "spec": { "remediationTemplate": { "kind": "T", "name": "t", "apiVersion": "x/v1" } } }),
        );
        let out = admit(&Typed(MachineHealthCheckAdmission), with_template, None).unwrap();
        assert_eq!(out["spec"]["remediationTemplate"]["namespace"], "ns");
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let cases = [
            (json!({ "spec": { "selector": { "matchLabels": null } } }), vec!["spec.selector"]),
            (
                json!({ "spec": { "selector": { "matchLabels": { "cluster.x-k8s.io/cluster-name": "c2" } } } }),
                vec!["spec.selector"],
            ),
            (json!({ "spec": { "maxUnhealthy": "40" } }), vec!["spec.maxUnhealthy"]),
            (json!({ "spec": { "unhealthyRange": "3-5" } }), vec!["spec.unhealthyRange"]),
            (json!({ "spec": { "unhealthyRange": "[5-3]" } }), vec!["spec.unhealthyRange"]),
            (json!({ "spec": { "nodeStartupTimeout": "10s" } }), vec!["spec.nodeStartupTimeout"]),
            (json!({ "spec": { "nodeStartupTimeout": "-1m" } }), vec!["spec.nodeStartupTimeout"]),
            (json!({ "spec": { "nodeStartupTimeout": "soon" } }), vec!["spec.nodeStartupTimeout"]),
            (
                json!({ "spec": { "unhealthyConditions": [ { "type": "", "status": "False", "timeout": "5 minutes" } ] } }),
                vec!["spec.unhealthyConditions[0].type", "spec.unhealthyConditions[0].timeout"],
            ),
            (
                json!({ "spec": { "remediationTemplate": { "kind": "T", "name": "t", "namespace": "other" } } }),
                vec!["spec.remediationTemplate.namespace"],
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
            json!({ "spec": { "nodeStartupTimeout": "0" } }),
            json!({ "spec": { "nodeStartupTimeout": "30s" } }),
            json!({ "spec": { "maxUnhealthy": 2, "unhealthyRange": "[1-3]" } }),
        ] {
            assert!(admit(&Typed(MachineHealthCheckAdmission), merged(&mhc(), &patch), None).is_ok(), "{patch}");
        }
    }

    #[test]
    fn updates() {
        let a = Typed(MachineHealthCheckAdmission);
        let old = admit(&a, mhc(), None).unwrap();
        let tuned =
            merged(&old, &json!({ "spec": { "maxUnhealthy": "40%", "selector": { "matchLabels": { "role": "x" } } } }));
        assert!(admit(&a, tuned, Some(old.clone())).is_ok());
        let moved = merged(&old, &json!({ "spec": { "clusterName": "c2" } }));
        assert_eq!(error_fields(&admit(&a, moved, Some(old))), ["spec.clusterName"]);
    }
}
