//! Dev provider admission: exactly one backend, in-memory start-up settings that parse,
//! endpoint ports that are ports, immutable templates (as the in-memory kinds'). Written
//! for v1beta1, the version drydock stores; v1beta2 writes are converted to it first.
//!
//! Warnings say what drydock does differently from upstream: a docker backend is simulated
//! in memory, and nothing reconciles DevMachinePools yet.

use super::backend::{Backend, DOCKER_SIMULATED_MESSAGE, DevMachineBackendSpec};
use super::v1beta1::{
    APIEndpoint, DevCluster, DevClusterBackendSpec, DevClusterSpec, DevClusterTemplate, DevMachine, DevMachineSpec,
    DevMachineTemplate,
};
use super::v1beta2::{DevMachinePool, DevMachinePoolTemplate, MACHINE_POOLS_NOT_RECONCILED_MESSAGE};
use crate::admission::{FieldError, FieldPath};
use crate::capi::inmemory::validate_components;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable;

/// One backend, not none and not both.
fn validate_backend(selected: Option<Backend>, in_memory: bool, path: &FieldPath) -> Option<FieldError> {
    if selected.is_some() {
        return None;
    }
    let path = path.child("backend");
    Some(if in_memory {
        FieldError::forbidden(path, "only one of docker and inMemory may be set")
    } else {
        FieldError::required(path, "one of docker and inMemory must be set")
    })
}

fn validate_endpoint(e: Option<&APIEndpoint>, path: &FieldPath) -> Option<FieldError> {
    let port = e?.port?;
    (!(0..=65535).contains(&port)).then(|| {
        FieldError::invalid(path.child("controlPlaneEndpoint").child("port"), port, "must be between 0 and 65535")
    })
}

fn validate_cluster_spec(spec: &DevClusterSpec, path: &FieldPath) -> Vec<FieldError> {
    let DevClusterBackendSpec { in_memory, .. } = &spec.backend;
    validate_backend(spec.backend.selected(), in_memory.is_some(), path)
        .into_iter()
        .chain(validate_endpoint(spec.control_plane_endpoint.as_ref(), path))
        .collect()
}

fn validate_machine_spec(spec: &DevMachineSpec, path: &FieldPath) -> Vec<FieldError> {
    let DevMachineBackendSpec { in_memory, .. } = &spec.backend;
    let mut errs: Vec<FieldError> =
        validate_backend(spec.backend.selected(), in_memory.is_some(), path).into_iter().collect();
    errs.extend(validate_components(in_memory.as_ref(), &path.child("backend").child("inMemory")));
    errs
}

fn docker_warning(backend: Option<Backend>, kind: &str) -> Vec<String> {
    if backend == Some(Backend::Docker) {
        vec![format!("spec.backend.docker: {DOCKER_SIMULATED_MESSAGE}; this {kind} behaves as an in-memory one")]
    } else {
        Vec::new()
    }
}

fn template_spec_path() -> FieldPath {
    FieldPath::new("spec").child("template").child("spec")
}

pub(crate) struct DevClusterAdmission;

impl KindAdmission for DevClusterAdmission {
    type Object = DevCluster;

    fn validate(&self, c: &DevCluster, _old: Option<&DevCluster>) -> Vec<FieldError> {
        validate_cluster_spec(&c.spec, &FieldPath::new("spec"))
    }

    fn warnings(&self, c: &DevCluster, _old: Option<&DevCluster>) -> Vec<String> {
        docker_warning(c.spec.backend.selected(), "DevCluster")
    }
}

pub(crate) struct DevClusterTemplateAdmission;

impl KindAdmission for DevClusterTemplateAdmission {
    type Object = DevClusterTemplate;

    fn validate(&self, t: &DevClusterTemplate, old: Option<&DevClusterTemplate>) -> Vec<FieldError> {
        let path = template_spec_path();
        let mut errs = validate_cluster_spec(&t.spec.template.spec, &path);
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }

    fn warnings(&self, t: &DevClusterTemplate, _old: Option<&DevClusterTemplate>) -> Vec<String> {
        docker_warning(t.spec.template.spec.backend.selected(), "DevClusterTemplate")
    }
}

pub(crate) struct DevMachineAdmission;

impl KindAdmission for DevMachineAdmission {
    type Object = DevMachine;

    fn validate(&self, m: &DevMachine, _old: Option<&DevMachine>) -> Vec<FieldError> {
        validate_machine_spec(&m.spec, &FieldPath::new("spec"))
    }

    fn warnings(&self, m: &DevMachine, _old: Option<&DevMachine>) -> Vec<String> {
        docker_warning(m.spec.backend.selected(), "DevMachine")
    }
}

pub(crate) struct DevMachineTemplateAdmission;

impl KindAdmission for DevMachineTemplateAdmission {
    type Object = DevMachineTemplate;

    fn validate(&self, t: &DevMachineTemplate, old: Option<&DevMachineTemplate>) -> Vec<FieldError> {
        let path = template_spec_path();
        let mut errs = validate_machine_spec(&t.spec.template.spec, &path);
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }

    fn warnings(&self, t: &DevMachineTemplate, _old: Option<&DevMachineTemplate>) -> Vec<String> {
        docker_warning(t.spec.template.spec.backend.selected(), "DevMachineTemplate")
    }
}

pub(crate) struct DevMachinePoolAdmission;

impl KindAdmission for DevMachinePoolAdmission {
    type Object = DevMachinePool;

    fn warnings(&self, _p: &DevMachinePool, _old: Option<&DevMachinePool>) -> Vec<String> {
        vec![MACHINE_POOLS_NOT_RECONCILED_MESSAGE.to_string()]
    }
}

pub(crate) struct DevMachinePoolTemplateAdmission;

impl KindAdmission for DevMachinePoolTemplateAdmission {
    type Object = DevMachinePoolTemplate;

    fn warnings(&self, _t: &DevMachinePoolTemplate, _old: Option<&DevMachinePoolTemplate>) -> Vec<String> {
        vec![MACHINE_POOLS_NOT_RECONCILED_MESSAGE.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::admission::Admission;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn machine(backend: Value) -> Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevMachine",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"backend": backend},
        })
    }

    #[test]
    fn machines_need_exactly_one_backend_with_valid_timings() {
        let a = Typed(DevMachineAdmission);
        assert!(admit(&a, machine(json!({"inMemory": {}})), None).is_ok());
        assert!(admit(&a, machine(json!({"docker": {}})), None).is_ok());
        assert_eq!(error_fields(&admit(&a, machine(json!({})), None)), ["spec.backend"]);
        assert_eq!(error_fields(&admit(&a, machine(json!({"inMemory": {}, "docker": {}})), None)), ["spec.backend"]);
        let slow = json!({"inMemory": {"vm": {"provisioning": {"startupDuration": "soon"}}}});
        assert_eq!(
            error_fields(&admit(&a, machine(slow), None)),
            ["spec.backend.inMemory.vm.provisioning.startupDuration"]
        );
    }

    #[test]
    fn the_docker_backend_is_admitted_with_a_warning() {
        let a = Typed(DevMachineAdmission);
        let docker = machine(json!({"docker": {"customImage": "kindest/node:v1.33.0"}}));
        let warnings = a.warnings(&docker, None);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("drydock runs no containers"), "{warnings:?}");
        assert!(a.warnings(&machine(json!({"inMemory": {}})), None).is_empty());
        let c = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevCluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"backend": {"docker": {}}, "controlPlaneEndpoint": {"port": 70000}},
        });
        assert_eq!(
            error_fields(&admit(&Typed(DevClusterAdmission), c.clone(), None)),
            ["spec.controlPlaneEndpoint.port"]
        );
        assert_eq!(Typed(DevClusterAdmission).warnings(&c, None).len(), 1);
    }

    #[test]
    fn templates_are_immutable() {
        let t = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevMachineTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"backend": {"inMemory": {}}}}},
        });
        let a = Typed(DevMachineTemplateAdmission);
        let old = admit(&a, t.clone(), None).expect("admitted");
        let relabeled = merged(&old, &json!({"metadata": {"labels": {"a": "b"}}}));
        assert!(admit(&a, relabeled, Some(old.clone())).is_ok());
        let docker =
            merged(&old, &json!({"spec": {"template": {"spec": {"backend": {"inMemory": null, "docker": {}}}}}}));
        assert_eq!(error_fields(&admit(&a, docker, Some(old))), ["spec.template.spec"]);
        let ct = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevClusterTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"backend": {}}}},
        });
        assert_eq!(error_fields(&admit(&Typed(DevClusterTemplateAdmission), ct, None)), ["spec.template.spec.backend"]);
    }

    #[test]
    fn machine_pools_warn_that_nothing_reconciles_them() {
        let p = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachinePool",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": {},
        });
        assert!(admit(&Typed(DevMachinePoolAdmission), p.clone(), None).is_ok());
        assert_eq!(Typed(DevMachinePoolAdmission).warnings(&p, None), [MACHINE_POOLS_NOT_RECONCILED_MESSAGE]);
    }
}
