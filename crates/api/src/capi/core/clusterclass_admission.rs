//! ClusterClass admission (basic): ref namespace defaults; complete same-namespace refs,
//! unique class/variable/patch names, health-check, strategy and patch-shape checks.
//! Checks that need other objects (Clusters using a class being changed) are not done here.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::ObjectReference;

use super::clusterclass::{ClusterClass, ClusterClassPatch, ClusterClassVariable};
use super::healthcheck_checks::validate_generated_health_check;
use super::machinedeployment_admission::validate_strategy;
use crate::admission::{FieldError, FieldPath};
use crate::capi::refs;
use crate::capi::typed::KindAdmission;

/// Variable names with this prefix are reserved for built-in variables.
const BUILTIN_PREFIX: &str = "builtin";
const JSON_PATCH_OPS: &[&str] = &["add", "replace", "remove"];

pub(crate) struct ClusterClassAdmission;

impl KindAdmission for ClusterClassAdmission {
    type Object = ClusterClass;

    fn default(&self, cc: &mut ClusterClass, _old: Option<&ClusterClass>) -> Result<(), Vec<FieldError>> {
        let ns = cc.metadata.namespace.clone();
        for r in refs_mut(cc) {
            refs::default_namespace(Some(r), ns.as_deref());
        }
        Ok(())
    }

    fn validate(&self, cc: &ClusterClass, _old: Option<&ClusterClass>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let ns = cc.metadata.namespace.as_deref();
        let mut errs = Vec::new();
        for (r, path) in refs_with_paths(cc, &spec) {
            errs.extend(refs::validate_complete(r, &path));
            errs.extend(refs::validate_namespace(Some(r), ns, &path));
        }
        if let Some(cp) = &cc.spec.control_plane {
            errs.extend(validate_generated_health_check(
                cp.machine_health_check.as_ref(),
                ns,
                &spec.child("controlPlane").child("machineHealthCheck"),
            ));
        }
        let workers = spec.child("workers");
        let mut classes = BTreeSet::new();
        for (i, md) in cc.spec.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()).enumerate() {
            let p = workers.child("machineDeployments").index(i);
            errs.extend(unique_name(&md.class, &mut classes, &p.child("class")));
            errs.extend(validate_generated_health_check(
                md.machine_health_check.as_ref(),
                ns,
                &p.child("machineHealthCheck"),
            ));
            if let Some(s) = &md.strategy {
                errs.extend(validate_strategy(s, &p.child("strategy")));
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

fn refs_mut(cc: &mut ClusterClass) -> Vec<&mut ObjectReference> {
    let mut out = Vec::new();
    let s = &mut cc.spec;
    if let Some(i) = s.infrastructure.as_mut() {
        out.push(&mut i.ref_);
    }
    if let Some(cp) = s.control_plane.as_mut() {
        out.push(&mut cp.ref_);
        if let Some(mi) = cp.machine_infrastructure.as_mut() {
            out.push(&mut mi.ref_);
        }
        if let Some(r) = cp.machine_health_check.as_mut().and_then(|m| m.remediation_template.as_mut()) {
            out.push(r);
        }
    }
    if let Some(w) = s.workers.as_mut() {
        for md in w.machine_deployments.iter_mut().flatten() {
            out.push(&mut md.template.bootstrap.ref_);
            out.push(&mut md.template.infrastructure.ref_);
            if let Some(r) = md.machine_health_check.as_mut().and_then(|m| m.remediation_template.as_mut()) {
                out.push(r);
            }
        }
        for mp in w.machine_pools.iter_mut().flatten() {
            out.push(&mut mp.template.bootstrap.ref_);
            out.push(&mut mp.template.infrastructure.ref_);
        }
    }
    out
}

/// The template references of a class, with their field paths.
fn refs_with_paths<'a>(cc: &'a ClusterClass, spec: &FieldPath) -> Vec<(&'a ObjectReference, FieldPath)> {
    let mut out = Vec::new();
    if let Some(i) = &cc.spec.infrastructure {
        out.push((&i.ref_, spec.child("infrastructure").child("ref")));
    }
    if let Some(cp) = &cc.spec.control_plane {
        let p = spec.child("controlPlane");
        out.push((&cp.ref_, p.child("ref")));
        if let Some(mi) = &cp.machine_infrastructure {
            out.push((&mi.ref_, p.child("machineInfrastructure").child("ref")));
        }
    }
    let workers = spec.child("workers");
    if let Some(w) = &cc.spec.workers {
        for (kind, templates) in [
            ("machineDeployments", w.machine_deployments.iter().flatten().map(|m| &m.template).collect::<Vec<_>>()),
            ("machinePools", w.machine_pools.iter().flatten().map(|m| &m.template).collect()),
        ] {
            for (i, t) in templates.into_iter().enumerate() {
                let p = workers.child(kind).index(i).child("template");
                out.push((&t.bootstrap.ref_, p.child("bootstrap").child("ref")));
                out.push((&t.infrastructure.ref_, p.child("infrastructure").child("ref")));
            }
        }
    }
    out
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
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn class() -> Value {
        let r =
            |kind: &str| json!({ "ref": { "apiVersion": "x.example/v1", "kind": kind, "name": kind.to_lowercase() } });
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": { "name": "quick-start", "namespace": "ns" },
            "spec": {
                "infrastructure": r("InMemoryClusterTemplate"),
                "controlPlane": { "ref": r("KubeadmControlPlaneTemplate")["ref"], "machineInfrastructure": r("InMemoryMachineTemplate") },
                "workers": { "machineDeployments": [ { "class": "default-worker", "template": {
                    "bootstrap": r("KubeadmConfigTemplate"), "infrastructure": r("InMemoryMachineTemplate")
                } } ] },
                "variables": [ { "name": "imageRepository", "required": false, "schema": { "openAPIV3Schema": { "type": "string" } } } ],
                "patches": [ { "name": "repo", "definitions": [ {
                    "selector": { "apiVersion": "x.example/v1", "kind": "KubeadmControlPlaneTemplate", "matchResources": { "controlPlane": true } },
                    "jsonPatches": [ { "op": "add", "path": "/spec/template/spec/x", "valueFrom": { "variable": "imageRepository" } } ]
                } ] } ]
            }
        })
    }

    #[test]
    fn defaults_and_checks() {
        let a = Typed(ClusterClassAdmission);
        let out = admit(&a, class(), None).unwrap();
        assert_eq!(out["spec"]["infrastructure"]["ref"]["namespace"], "ns");
        assert_eq!(out["spec"]["workers"]["machineDeployments"][0]["template"]["bootstrap"]["ref"]["namespace"], "ns");
        let cases = [
            (json!({ "spec": { "infrastructure": { "ref": { "name": "" } } } }), vec!["spec.infrastructure.ref.name"]),
            (
                json!({ "spec": { "controlPlane": { "ref": { "namespace": "other" } } } }),
                vec!["spec.controlPlane.ref.namespace"],
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
                json!({ "spec": { "controlPlane": { "machineHealthCheck": { "maxUnhealthy": "lots" } } } }),
                vec!["spec.controlPlane.machineHealthCheck.maxUnhealthy"],
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&class(), &patch), None)), want, "{patch}");
        }
        let mut dup = class();
        let md = dup["spec"]["workers"]["machineDeployments"][0].clone();
        dup["spec"]["workers"]["machineDeployments"] = json!([md.clone(), md]);
        assert_eq!(error_fields(&admit(&a, dup, None)), ["spec.workers.machineDeployments[1].class"]);
    }
}
