//! MachineDeployment admission (v1beta2, the stored version): cluster-name label, replicas
//! (autoscaler-aware), selector, rollout strategy and minReadySeconds defaults; selector,
//! template, strategy, name and immutability checks.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::checks::{
    default_empty_selector, default_machine_spec, set_cluster_name_label, validate_cluster_name,
    validate_machine_template, validate_name_is_label_value, validate_replicas, validate_selector_matches_template,
    validate_skip_preflight_checks,
};
use super::machinedeployment::MachineDeploymentStrategyType;
use super::replicas::{OldReplicas, default_replicas};
use super::v1beta2::{MachineDeployment, MachineDeploymentRolloutStrategy, MachineDeploymentSpec};
use crate::admission::{FieldError, FieldPath};
use crate::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL};
use crate::capi::typed::KindAdmission;
use crate::capi::{intstr, naming};

/// Defaults written into an unset rolling update.
pub const DEFAULT_MAX_SURGE: i32 = 1;
pub const DEFAULT_MAX_UNAVAILABLE: i32 = 0;

pub(crate) struct MachineDeploymentAdmission;

impl KindAdmission for MachineDeploymentAdmission {
    type Object = MachineDeployment;

    fn default(&self, md: &mut MachineDeployment, old: Option<&MachineDeployment>) -> Result<(), Vec<FieldError>> {
        let cluster = md.spec.cluster_name.clone();
        set_cluster_name_label(&mut md.metadata, &cluster);
        if md.spec.replicas.is_none() {
            let old = old.map_or(OldReplicas::Create, |o| OldReplicas::Update(o.spec.replicas));
            md.spec.replicas = Some(default_replicas(md.metadata.annotations.as_ref(), old).map_err(|e| vec![e])?);
        }
        let name = md.metadata.name.clone().unwrap_or_default();
        default_empty_selector(&mut md.spec.selector, &mut md.spec.template.metadata, DEPLOYMENT_NAME_LABEL, &name);
        // The cluster-name label is always part of the selector and the template.
        if !cluster.is_empty() {
            md.spec
                .selector
                .match_labels
                .get_or_insert_with(Default::default)
                .insert(CLUSTER_NAME_LABEL.into(), cluster.clone());
            md.spec
                .template
                .metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(CLUSTER_NAME_LABEL.into(), cluster);
        }
        default_machine_spec(&mut md.spec.template.spec);
        md.spec.template.spec.min_ready_seconds.get_or_insert(0);
        default_strategy(&mut md.spec);
        Ok(())
    }

    fn validate(&self, md: &MachineDeployment, old: Option<&MachineDeployment>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_name_is_label_value(&md.metadata);
        errs.extend(validate_cluster_name(
            &md.spec.cluster_name,
            old.map(|o| o.spec.cluster_name.as_str()),
            &spec.child("clusterName"),
        ));
        errs.extend(validate_replicas(md.spec.replicas, &spec.child("replicas")));
        errs.extend(validate_selector_matches_template(&md.spec.selector, &md.spec.template.metadata, &spec));
        errs.extend(validate_machine_template(&md.spec.template, &spec.child("template")));
        errs.extend(validate_strategy(&md.spec, &spec));
        if let Some(v) = md.spec.template.spec.min_ready_seconds.filter(|v| *v < 0) {
            let path = spec.child("template").child("spec").child("minReadySeconds");
            errs.push(FieldError::invalid(path, v, "must be greater than or equal to 0"));
        }
        errs.extend(validate_skip_preflight_checks(md.metadata.annotations.as_ref()));
        if let Some(t) = md.spec.machine_naming.as_ref().and_then(|s| s.template.as_deref()) {
            // MachineSet names are `<deployment name>-<5 random characters>`.
            let ms_name = format!("{}-x7k2p", md.metadata.name.as_deref().unwrap_or("md"));
            errs.extend(naming::validate_template(
                t,
                &[("cluster.name", md.spec.cluster_name.as_str()), ("machineSet.name", ms_name.as_str())],
                &spec.child("machineNaming").child("template"),
            ));
        }
        errs
    }
}

/// `rollout.strategy` `{type: RollingUpdate}`; for rolling updates, maxSurge 1 and
/// maxUnavailable 0 when unset. The deletion order is left to the MachineSet (which
/// defaults it to Random).
fn default_strategy(spec: &mut MachineDeploymentSpec) {
    let strategy =
        spec.rollout.get_or_insert_with(Default::default).strategy.get_or_insert(MachineDeploymentRolloutStrategy {
            type_: MachineDeploymentStrategyType::RollingUpdate,
            rolling_update: None,
        });
    if strategy.type_ == MachineDeploymentStrategyType::RollingUpdate {
        let ru = strategy.rolling_update.get_or_insert_with(Default::default);
        ru.max_surge.get_or_insert(IntOrString::Int(DEFAULT_MAX_SURGE));
        ru.max_unavailable.get_or_insert(IntOrString::Int(DEFAULT_MAX_UNAVAILABLE));
    }
}

/// Int-or-percent fields of the rollout and remediation. maxSurge and maxUnavailable may both
/// be 0: the rollout then treats maxUnavailable as 1, as upstream does, so such manifests
/// keep working.
fn validate_strategy(spec: &MachineDeploymentSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rolling = spec.rollout.as_ref().and_then(|r| r.strategy.as_ref()).and_then(|s| s.rolling_update.as_ref());
    if let Some(ru) = rolling {
        let p = path.child("rollout").child("strategy").child("rollingUpdate");
        errs.extend(intstr::validate_field(ru.max_surge.as_ref(), &p.child("maxSurge")));
        errs.extend(intstr::validate_field(ru.max_unavailable.as_ref(), &p.child("maxUnavailable")));
    }
    if let Some(r) = &spec.remediation {
        errs.extend(intstr::validate_field(r.max_in_flight.as_ref(), &path.child("remediation").child("maxInFlight")));
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn deployment() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": { "name": "md1", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "selector": {},
                "template": {
                    "metadata": { "labels": { "role": "worker" } },
                    "spec": {
                        "clusterName": "c1",
                        "version": "1.30.2",
                        "bootstrap": { "configRef": { "apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "t" } },
                        "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachineTemplate", "name": "t" }
                    }
                }
            }
        })
    }

    #[test]
    fn defaults() {
        let out = admit(&Typed(MachineDeploymentAdmission), deployment(), None).unwrap();
        let spec = &out["spec"];
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(spec["replicas"], 1);
        assert_eq!(
            spec["selector"]["matchLabels"],
            json!({ "cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/deployment-name": "md1" })
        );
        assert_eq!(
            spec["template"]["metadata"]["labels"],
            json!({ "cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/deployment-name": "md1", "role": "worker" })
        );
        assert_eq!(
            spec["rollout"]["strategy"],
            json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1, "maxUnavailable": 0 } })
        );
        assert_eq!(spec["template"]["spec"]["minReadySeconds"], 0);
        assert_eq!(spec["template"]["spec"]["version"], "v1.30.2");
    }

    #[test]
    fn explicit_values_are_kept() {
        let md = merged(
            &deployment(),
            &json!({ "spec": {
                "replicas": 0,
                "selector": { "matchLabels": { "role": "worker" } },
                "rollout": { "strategy": { "type": "OnDelete" } },
                "template": { "spec": { "minReadySeconds": 30 } }
            } }),
        );
        let out = admit(&Typed(MachineDeploymentAdmission), md, None).unwrap();
        assert_eq!(out["spec"]["replicas"], 0);
        assert_eq!(out["spec"]["rollout"]["strategy"], json!({ "type": "OnDelete" }));
        assert_eq!(out["spec"]["template"]["spec"]["minReadySeconds"], 30);
        assert_eq!(
            out["spec"]["selector"]["matchLabels"],
            json!({ "cluster.x-k8s.io/cluster-name": "c1", "role": "worker" })
        );
        let partial = merged(
            &deployment(),
            &json!({ "spec": { "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": "25%" } } } } }),
        );
        let out = admit(&Typed(MachineDeploymentAdmission), partial, None).unwrap();
        assert_eq!(
            out["spec"]["rollout"]["strategy"]["rollingUpdate"],
            json!({ "maxSurge": "25%", "maxUnavailable": 0 })
        );
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let cases = [
            (
                json!({ "metadata": { "name": "a-very-long-name-that-cannot-be-a-label-value-because-it-is-too-long" } }),
                // The defaulted selector carries the name too.
                vec![
                    "metadata.name",
                    "spec.selector.matchLabels[cluster.x-k8s.io/deployment-name]",
                    "spec.template.metadata.labels[cluster.x-k8s.io/deployment-name]",
                ],
            ),
            (
                json!({ "spec": { "selector": { "matchLabels": { "role": "control-plane" } } } }),
                vec!["spec.template.metadata.labels"],
            ),
            (
                json!({ "spec": { "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": "one", "maxUnavailable": "10" } } } } }),
                vec![
                    "spec.rollout.strategy.rollingUpdate.maxSurge",
                    "spec.rollout.strategy.rollingUpdate.maxUnavailable",
                ],
            ),
            (json!({ "spec": { "remediation": { "maxInFlight": "x%" } } }), vec!["spec.remediation.maxInFlight"]),
            (
                json!({ "spec": { "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": -1 } } } } }),
                vec!["spec.rollout.strategy.rollingUpdate.maxSurge"],
            ),
            (
                json!({ "spec": { "rollout": { "strategy": { "type": "Recreate" } } } }),
                vec!["spec.rollout.strategy.type"],
            ),
            (
                json!({ "spec": { "template": { "spec": { "version": "latest" } } } }),
                vec!["spec.template.spec.version"],
            ),
            (
                json!({ "spec": { "template": { "spec": { "minReadySeconds": -5 } } } }),
                vec!["spec.template.spec.minReadySeconds"],
            ),
            (
                json!({ "spec": { "template": { "spec": { "bootstrap": { "configRef": null } } } } }),
                vec!["spec.template.spec.bootstrap.data"],
            ),
        ];
        for (patch, want) in cases {
            let r = admit(&Typed(MachineDeploymentAdmission), merged(&deployment(), &patch), None);
            assert_eq!(error_fields(&r), want, "{patch}");
        }
    }

    #[test]
    fn surge_and_unavailable_may_both_be_zero() {
        let md = merged(
            &deployment(),
            &json!({ "spec": { "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 0, "maxUnavailable": "0%" } } } } }),
        );
        assert!(admit(&Typed(MachineDeploymentAdmission), md, None).is_ok());
    }

    #[test]
    fn updates() {
        let a = Typed(MachineDeploymentAdmission);
        let old = admit(&a, deployment(), None).unwrap();
        let rollout =
            merged(&old, &json!({ "spec": { "replicas": 5, "template": { "spec": { "version": "v1.31.0" } } } }));
        assert!(admit(&a, rollout, Some(old.clone())).is_ok());
        let moved = merged(&old, &json!({ "spec": { "clusterName": "c2" } }));
        assert!(error_fields(&admit(&a, moved, Some(old.clone()))).contains(&"spec.clusterName".to_string()));
        // A selector that no longer matches the template is refused on update too.
        let narrowed = merged(&old, &json!({ "spec": { "selector": { "matchLabels": { "role": "other" } } } }));
        assert_eq!(error_fields(&admit(&a, narrowed, Some(old))), ["spec.template.metadata.labels"]);
    }
}
