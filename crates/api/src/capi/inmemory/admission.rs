//! In-memory provider admission (light): behaviour settings must parse, endpoints must be
//! real ports, and templates are immutable (a changed template would not roll anything out;
//! create a new one and point the owner at it).

use super::cluster::{InMemoryCluster, InMemoryClusterTemplate};
use super::machine::{CommonProvisioningSettings, InMemoryMachine, InMemoryMachineBehaviour, InMemoryMachineTemplate};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::APIEndpoint;
use crate::capi::duration;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable;

fn validate_provisioning(p: &CommonProvisioningSettings, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let d_path = path.child("startupDuration");
    match duration::parse(&p.startup_duration) {
        Err(e) => errs.push(FieldError::invalid(d_path, p.startup_duration.as_str(), e.to_string())),
        Ok(d) if d.is_negative() => {
            errs.push(FieldError::invalid(d_path, p.startup_duration.as_str(), "must not be negative"))
        }
        Ok(_) => {}
    }
    if let Some(j) = &p.startup_jitter {
        let ok = j.parse::<f64>().is_ok_and(|f| f.is_finite() && f >= 0.0);
        if !ok {
            errs.push(FieldError::invalid(
                path.child("startupJitter"),
                j.as_str(),
                "must be a non-negative number, e.g. \"0.2\"",
            ));
        }
    }
    errs
}

fn validate_behaviour(b: Option<&InMemoryMachineBehaviour>, path: &FieldPath) -> Vec<FieldError> {
    validate_components(b, &path.child("behaviour"))
}

/// The start-up settings of each simulated component at `path` (an InMemoryMachine's
/// `behaviour`, a DevMachine's `backend.inMemory`).
pub(crate) fn validate_components(b: Option<&InMemoryMachineBehaviour>, path: &FieldPath) -> Vec<FieldError> {
    let Some(b) = b else { return Vec::new() };
    [("vm", &b.vm), ("node", &b.node), ("apiServer", &b.api_server), ("etcd", &b.etcd)]
        .into_iter()
        .filter_map(|(name, c)| Some((name, c.as_ref()?.provisioning.as_ref()?)))
        .flat_map(|(name, p)| validate_provisioning(p, &path.child(name).child("provisioning")))
        .collect()
}

fn validate_endpoint(e: Option<&APIEndpoint>, path: &FieldPath) -> Option<FieldError> {
    let port = e?.port;
    (!(0..=65535).contains(&port)).then(|| {
        FieldError::invalid(path.child("controlPlaneEndpoint").child("port"), port, "must be between 0 and 65535")
    })
}

pub(crate) struct InMemoryMachineAdmission;

impl KindAdmission for InMemoryMachineAdmission {
    type Object = InMemoryMachine;

    fn validate(&self, m: &InMemoryMachine, _old: Option<&InMemoryMachine>) -> Vec<FieldError> {
        validate_behaviour(m.spec.behaviour.as_ref(), &FieldPath::new("spec"))
    }
}

pub(crate) struct InMemoryMachineTemplateAdmission;

impl KindAdmission for InMemoryMachineTemplateAdmission {
    type Object = InMemoryMachineTemplate;

    fn validate(&self, t: &InMemoryMachineTemplate, old: Option<&InMemoryMachineTemplate>) -> Vec<FieldError> {
        let path = FieldPath::new("spec").child("template").child("spec");
        let mut errs = validate_behaviour(t.spec.template.spec.behaviour.as_ref(), &path);
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }
}

pub(crate) struct InMemoryClusterAdmission;

impl KindAdmission for InMemoryClusterAdmission {
    type Object = InMemoryCluster;

    fn validate(&self, c: &InMemoryCluster, _old: Option<&InMemoryCluster>) -> Vec<FieldError> {
        validate_endpoint(c.spec.control_plane_endpoint.as_ref(), &FieldPath::new("spec")).into_iter().collect()
    }
}

pub(crate) struct InMemoryClusterTemplateAdmission;

impl KindAdmission for InMemoryClusterTemplateAdmission {
    type Object = InMemoryClusterTemplate;

    fn validate(&self, t: &InMemoryClusterTemplate, old: Option<&InMemoryClusterTemplate>) -> Vec<FieldError> {
        let path = FieldPath::new("spec").child("template").child("spec");
        let mut errs: Vec<FieldError> =
            validate_endpoint(t.spec.template.spec.control_plane_endpoint.as_ref(), &path).into_iter().collect();
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn template() -> Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachineTemplate",
            "metadata": { "name": "t", "namespace": "ns" },
            "spec": { "template": { "spec": { "behaviour": {
                "vm": { "provisioning": { "startupDuration": "1s", "startupJitter": "0.2" } },
                "node": { "provisioning": { "startupDuration": "500ms" } }
            } } } }
        })
    }

    #[test]
    fn machine_templates() {
        let a = Typed(InMemoryMachineTemplateAdmission);
        let old = admit(&a, template(), None).unwrap();
        let cases = [
            (
                json!({ "spec": { "template": { "spec": { "behaviour": { "vm": { "provisioning": { "startupDuration": "soon" } } } } } } }),
                vec!["spec.template.spec.behaviour.vm.provisioning.startupDuration"],
            ),
            (
                json!({ "spec": { "template": { "spec": { "behaviour": { "node": { "provisioning": { "startupJitter": "-1" } } } } } } }),
                vec!["spec.template.spec.behaviour.node.provisioning.startupJitter"],
            ),
            (
                json!({ "spec": { "template": { "spec": { "behaviour": { "etcd": { "provisioning": { "startupDuration": "-1s" } } } } } } }),
                vec!["spec.template.spec.behaviour.etcd.provisioning.startupDuration"],
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&template(), &patch), None)), want, "{patch}");
        }
        let relabeled = merged(&old, &json!({ "metadata": { "labels": { "a": "b" } } }));
        assert!(admit(&a, relabeled, Some(old.clone())).is_ok());
        let slower = merged(
            &old,
            &json!({ "spec": { "template": { "spec": { "behaviour": { "vm": { "provisioning": { "startupDuration": "2s" } } } } } } }),
        );
        assert_eq!(error_fields(&admit(&a, slower, Some(old))), ["spec.template.spec"]);
    }

    #[test]
    fn machines_and_clusters() {
        let m = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine",
            "metadata": { "name": "m", "namespace": "ns" },
            "spec": { "behaviour": { "apiServer": { "provisioning": { "startupDuration": "x" } } } }
        });
        assert_eq!(
            error_fields(&admit(&Typed(InMemoryMachineAdmission), m, None)),
            ["spec.behaviour.apiServer.provisioning.startupDuration"]
        );
        let c = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryCluster",
            "metadata": { "name": "c", "namespace": "ns" },
            "spec": { "controlPlaneEndpoint": { "host": "10.0.0.1", "port": 70000 } }
        });
        assert_eq!(error_fields(&admit(&Typed(InMemoryClusterAdmission), c, None)), ["spec.controlPlaneEndpoint.port"]);
        let t = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryClusterTemplate",
            "metadata": { "name": "t", "namespace": "ns" },
            "spec": { "template": { "spec": {} } }
        });
        let a = Typed(InMemoryClusterTemplateAdmission);
        let old = admit(&a, t.clone(), None).unwrap();
        let changed = merged(
            &t,
            &json!({ "spec": { "template": { "spec": { "controlPlaneEndpoint": { "host": "h", "port": 1 } } } } }),
        );
        assert_eq!(error_fields(&admit(&a, changed, Some(old))), ["spec.template.spec"]);
    }
}
