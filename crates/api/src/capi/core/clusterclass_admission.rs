//! ClusterClass admission (v1beta2, the stored version): complete template references,
//! unique class, variable and patch names, health-check, rollout and patch-shape checks.
//! Checks that need other objects (Clusters using a class being changed) are not done here.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::healthcheck_checks::{HealthCheckV1Beta2, validate_health_check_v1beta2};
use super::v1beta2::{
    ClusterClass, ClusterClassPatch, ClusterClassVariable, TopologyHealthCheckChecks, TopologyRemediationTriggerIf,
    TopologyRolloutStrategy,
};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::VersionedTemplateReference;
use crate::capi::intstr;
use crate::capi::typed::KindAdmission;

/// Variable names with this prefix are reserved for built-in variables.
const BUILTIN_PREFIX: &str = "builtin";
const JSON_PATCH_OPS: &[&str] = &["add", "replace", "remove"];

pub(crate) struct ClusterClassAdmission;

impl KindAdmission for ClusterClassAdmission {
    type Object = ClusterClass;

    fn admit_against(
        &self,
        cc: &mut ClusterClass,
        old: Option<&ClusterClass>,
        refs: &dyn crate::conversion::RefVersions,
    ) -> Vec<FieldError> {
        match old {
            Some(_) => super::cluster_topology_admission::class_in_use(cc, refs),
            None => Vec::new(),
        }
    }

    fn validate(&self, cc: &ClusterClass, old: Option<&ClusterClass>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = Vec::new();
        // The objects its Clusters hold keep their kinds.
        for (what, was, now) in
            old.map(|o| super::cluster_topology_admission::incompatibilities(o, cc)).unwrap_or_default()
        {
            let detail = format!(
                "{what} cannot change from a {was} to a {now}: Clusters of the class hold objects of that kind"
            );
            errs.push(FieldError::forbidden(spec.as_str(), detail));
        }
        for (r, path) in cc.template_refs() {
            errs.extend(validate_template_ref(r, &path));
        }
        if let Some(h) = &cc.spec.control_plane.health_check {
            let trigger = h.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
            let path = spec.child("controlPlane").child("healthCheck");
            errs.extend(validate_health_check_v1beta2(&settings(h.checks.as_ref(), trigger), &path));
        }
        let workers = spec.child("workers");
        let mut classes = BTreeSet::new();
        for (i, md) in cc.spec.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()).enumerate() {
            let p = workers.child("machineDeployments").index(i);
            errs.extend(unique_name(&md.class, &mut classes, &p.child("class")));
            if let Some(h) = &md.health_check {
                let trigger = h.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
                let path = p.child("healthCheck");
                errs.extend(validate_health_check_v1beta2(&settings(h.checks.as_ref(), trigger), &path));
                let in_flight = h.remediation.as_ref().and_then(|r| r.max_in_flight.as_ref());
                errs.extend(intstr::validate_field(in_flight, &path.child("remediation").child("maxInFlight")));
            }
            if let Some(s) = md.rollout.as_ref().and_then(|r| r.strategy.as_ref()) {
                errs.extend(validate_rollout_strategy(s, &p.child("rollout").child("strategy")));
            }
        }
        let mut classes = BTreeSet::new();
        for (i, mp) in cc.spec.workers.iter().flat_map(|w| w.machine_pools.iter().flatten()).enumerate() {
            errs.extend(unique_name(&mp.class, &mut classes, &workers.child("machinePools").index(i).child("class")));
        }
        errs.extend(validate_variables(cc.spec.variables.as_deref().unwrap_or_default(), &spec.child("variables")));
        errs.extend(validate_patches(cc.spec.patches.as_deref().unwrap_or_default(), &spec.child("patches")));
        errs
    }
}

pub(super) fn settings<'a>(
    checks: Option<&TopologyHealthCheckChecks>,
    trigger: Option<&'a TopologyRemediationTriggerIf>,
) -> HealthCheckV1Beta2<'a> {
    HealthCheckV1Beta2 {
        node_startup_timeout_seconds: checks.and_then(|c| c.node_startup_timeout_seconds),
        unhealthy_less_than_or_equal_to: trigger.and_then(|t| t.unhealthy_less_than_or_equal_to.as_ref()),
        unhealthy_in_range: trigger.and_then(|t| t.unhealthy_in_range.as_deref()),
    }
}

/// Int-or-percent fields of a rolling update.
pub(super) fn validate_rollout_strategy(s: &TopologyRolloutStrategy, path: &FieldPath) -> Vec<FieldError> {
    let Some(ru) = &s.rolling_update else { return Vec::new() };
    let p = path.child("rollingUpdate");
    let fields: [(&str, Option<&IntOrString>); 2] =
        [("maxSurge", ru.max_surge.as_ref()), ("maxUnavailable", ru.max_unavailable.as_ref())];
    fields.into_iter().filter_map(|(name, v)| intstr::validate_field(v, &p.child(name))).collect()
}

fn validate_template_ref(r: &VersionedTemplateReference, path: &FieldPath) -> Vec<FieldError> {
    crate::capi::refs::validate_fields_set(
        [("apiVersion", &*r.api_version), ("kind", &r.kind), ("name", &r.name)],
        path,
    )
}

fn unique_name<'a>(name: &'a str, seen: &mut BTreeSet<&'a str>, path: &FieldPath) -> Option<FieldError> {
    if name.is_empty() {
        Some(FieldError::required(path.as_str(), "must be set"))
    } else if !seen.insert(name) {
        Some(FieldError::duplicate(path.as_str(), name))
    } else {
        None
    }
}

fn validate_variables(vars: &[ClusterClassVariable], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, v) in vars.iter().enumerate() {
        let p = path.index(i).child("name");
        errs.extend(unique_name(&v.name, &mut seen, &p));
        if v.name.starts_with(BUILTIN_PREFIX) {
            errs.push(FieldError::invalid(p, v.name.as_str(), format!("must not start with {BUILTIN_PREFIX:?}")));
        }
    }
    errs
}

fn validate_patches(patches: &[ClusterClassPatch], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, patch) in patches.iter().enumerate() {
        let p = path.index(i);
        errs.extend(unique_name(&patch.name, &mut seen, &p.child("name")));
        match (&patch.definitions, &patch.external) {
            (Some(_), Some(_)) => errs.push(FieldError::invalid(
                p.as_str(),
                patch.name.as_str(),
                "only one of definitions or external may be set",
            )),
            (None, None) => errs.push(FieldError::required(p.as_str(), "one of definitions or external must be set")),
            _ => {}
        }
        for (j, def) in patch.definitions.iter().flatten().enumerate() {
            for (k, jp) in def.json_patches.iter().enumerate() {
                let jp_path = p.child("definitions").index(j).child("jsonPatches").index(k);
                if !JSON_PATCH_OPS.contains(&jp.op.as_str()) {
                    errs.push(FieldError::not_supported(jp_path.child("op"), jp.op.as_str(), JSON_PATCH_OPS));
                }
                if !jp.path.starts_with("/spec/") {
                    errs.push(FieldError::invalid(
                        jp_path.child("path"),
                        jp.path.as_str(),
                        "must start with \"/spec/\"",
                    ));
                }
                let has_value = jp.value.is_some() || jp.value_from.is_some();
                if jp.value.is_some() && jp.value_from.is_some() {
                    errs.push(FieldError::invalid(
                        jp_path.as_str(),
                        jp.path.as_str(),
                        "only one of value or valueFrom may be set",
                    ));
                } else if jp.op == "remove" && has_value {
                    errs.push(FieldError::forbidden(jp_path.child("value"), "must not be set for op \"remove\""));
                } else if jp.op != "remove" && !has_value {
                    errs.push(FieldError::required(jp_path.child("value"), "one of value or valueFrom must be set"));
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged, warnings_of};
    use crate::capi::typed::Typed;

    fn class() -> Value {
        let r = |kind: &str| json!({ "templateRef": { "apiVersion": "x.example/v1", "kind": kind, "name": kind.to_lowercase() } });
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": { "name": "quick-start", "namespace": "ns" },
            "spec": {
                "infrastructure": r("InMemoryClusterTemplate"),
                "controlPlane": {
                    "templateRef": r("KubeadmControlPlaneTemplate")["templateRef"],
                    "machineInfrastructure": r("InMemoryMachineTemplate")
                },
                "workers": { "machineDeployments": [ {
                    "class": "default-worker",
                    "bootstrap": r("KubeadmConfigTemplate"), "infrastructure": r("InMemoryMachineTemplate")
                } ] },
                "variables": [ { "name": "imageRepository", "required": false, "schema": { "openAPIV3Schema": { "type": "string" } } } ],
                "patches": [ { "name": "repo", "definitions": [ {
                    "selector": { "apiVersion": "x.example/v1", "kind": "KubeadmControlPlaneTemplate", "matchResources": { "controlPlane": true } },
                    "jsonPatches": [ { "op": "add", "path": "/spec/template/spec/x", "valueFrom": { "variable": "imageRepository" } } ]
                } ] } ]
            }
        })
    }

    #[test]
    fn accepts_a_complete_class_unchanged() {
        let out = admit(&Typed(ClusterClassAdmission), class(), None).unwrap();
        assert_eq!(out["spec"], class()["spec"]);
        let warnings = warnings_of(&Typed(ClusterClassAdmission), &class(), None);
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut external = class();
        external["spec"]["patches"] =
            serde_json::json!([{"name": "ext", "external": {"generatePatchesExtension": "gen.ext"}}]);
        // External patches run (through their extensions): nothing to warn about.
        let warnings = warnings_of(&Typed(ClusterClassAdmission), &external, None);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn invalid_classes_are_rejected_at_the_right_field() {
        let a = Typed(ClusterClassAdmission);
        let cases = [
            (
                json!({ "spec": { "infrastructure": { "templateRef": { "name": "" } } } }),
                vec!["spec.infrastructure.templateRef.name"],
            ),
            (
                json!({ "spec": { "variables": [ { "name": "builtinX", "required": true, "schema": { "openAPIV3Schema": {} } } ] } }),
                vec!["spec.variables[0].name"],
            ),
            (
                json!({ "spec": { "patches": [ { "name": "p", "definitions": [ { "selector": { "apiVersion": "v", "kind": "k", "matchResources": {} },
                    "jsonPatches": [ { "op": "move", "path": "/metadata/x" }, { "op": "remove", "path": "/spec/x", "value": 1 } ] } ] } ] } }),
                vec![
                    "spec.patches[0].definitions[0].jsonPatches[0].op",
                    "spec.patches[0].definitions[0].jsonPatches[0].path",
                    "spec.patches[0].definitions[0].jsonPatches[0].value",
                    "spec.patches[0].definitions[0].jsonPatches[1].value",
                ],
            ),
            (json!({ "spec": { "patches": [ { "name": "p" } ] } }), vec!["spec.patches[0]"]),
            (
                json!({ "spec": { "controlPlane": { "healthCheck": { "remediation": { "triggerIf": { "unhealthyLessThanOrEqualTo": "lots" } } } } } }),
                vec!["spec.controlPlane.healthCheck.remediation.triggerIf.unhealthyLessThanOrEqualTo"],
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&class(), &patch), None)), want, "{patch}");
        }
    }

    #[test]
    fn worker_classes_are_unique_and_their_settings_checked() {
        let a = Typed(ClusterClassAdmission);
        let mut dup = class();
        let md = dup["spec"]["workers"]["machineDeployments"][0].clone();
        dup["spec"]["workers"]["machineDeployments"] = json!([md.clone(), md.clone()]);
        assert_eq!(error_fields(&admit(&a, dup, None)), ["spec.workers.machineDeployments[1].class"]);
        let mut tuned = class();
        tuned["spec"]["workers"]["machineDeployments"][0] = merged(
            &md,
            &json!({
                "healthCheck": { "checks": { "nodeStartupTimeoutSeconds": 5 }, "remediation": { "maxInFlight": "x%" } },
                "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": "1.5" } } }
            }),
        );
        let md = "spec.workers.machineDeployments[0]";
        assert_eq!(
            error_fields(&admit(&a, tuned, None)),
            [
                format!("{md}.healthCheck.checks.nodeStartupTimeoutSeconds"),
                format!("{md}.healthCheck.remediation.maxInFlight"),
                format!("{md}.rollout.strategy.rollingUpdate.maxSurge"),
            ]
        );
    }
}
