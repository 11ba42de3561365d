//! Dev provider admission: an empty backend defaults to docker (as upstream), in-memory
//! start-up settings must parse, endpoint ports must be ports, templates are immutable (as
//! the in-memory kinds'). Written for v1beta2, the version drydock stores; v1beta1 writes
//! are converted to it first.
//!
//! Warnings say what drydock does differently from upstream: a docker backend is simulated
//! in memory.

use super::backend::{Backend, DOCKER_SIMULATED_MESSAGE, DevMachineBackendSpec, DockerMachineBackendSpec};
use super::v1beta2::{
    APIEndpoint, DevCluster, DevClusterBackendSpec, DevClusterSpec, DevClusterTemplate, DevMachine, DevMachinePool,
    DevMachinePoolSpec, DevMachinePoolTemplate, DevMachineSpec, DevMachineTemplate, DockerClusterBackendSpec,
};
use crate::admission::{FieldError, FieldPath};
use crate::capi::inmemory::validate_components;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable;

fn default_cluster_backend(b: &mut DevClusterBackendSpec) {
    if b.in_memory.is_none() && b.docker.is_none() {
        b.docker = Some(DockerClusterBackendSpec::default());
    }
}

fn default_machine_backend(b: &mut DevMachineBackendSpec) {
    if b.in_memory.is_none() && b.docker.is_none() {
        b.docker = Some(DockerMachineBackendSpec::default());
    }
}

pub(crate) fn validate_endpoint(e: Option<&APIEndpoint>, path: &FieldPath) -> Option<FieldError> {
    let port = e?.port?;
    (!(0..=65535).contains(&port)).then(|| {
        FieldError::invalid(path.child("controlPlaneEndpoint").child("port"), port, "must be between 0 and 65535")
    })
}

fn validate_machine_spec(spec: &DevMachineSpec, path: &FieldPath) -> Vec<FieldError> {
    validate_components(spec.backend.in_memory.as_ref(), &path.child("backend").child("inMemory"))
}

/// What the backend settings do not do on drydock.
fn backend_warnings(backend: Backend, docker_set: bool, kind: &str) -> Vec<String> {
    match (backend, docker_set) {
        (Backend::Docker, _) => {
            vec![format!("spec.backend.docker: {DOCKER_SIMULATED_MESSAGE}; this {kind} behaves as an in-memory one")]
        }
        (Backend::InMemory, true) => vec!["spec.backend.docker is ignored: spec.backend.inMemory is set".to_string()],
        (Backend::InMemory, false) => Vec::new(),
    }
}

fn cluster_warnings(spec: &DevClusterSpec, kind: &str) -> Vec<String> {
    backend_warnings(spec.backend.selected(), spec.backend.docker.is_some(), kind)
}

fn machine_warnings(spec: &DevMachineSpec, kind: &str) -> Vec<String> {
    backend_warnings(spec.backend.selected(), spec.backend.docker.is_some(), kind)
}

pub(crate) fn template_spec_path() -> FieldPath {
    FieldPath::new("spec").child("template").child("spec")
}

pub(crate) struct DevClusterAdmission;

impl KindAdmission for DevClusterAdmission {
    type Object = DevCluster;

    fn default(&self, c: &mut DevCluster, _old: Option<&DevCluster>) -> Result<(), Vec<FieldError>> {
        default_cluster_backend(&mut c.spec.backend);
        Ok(())
    }

    fn validate(&self, c: &DevCluster, _old: Option<&DevCluster>) -> Vec<FieldError> {
        validate_endpoint(c.spec.control_plane_endpoint.as_ref(), &FieldPath::new("spec")).into_iter().collect()
    }

    fn warnings(&self, c: &DevCluster, _old: Option<&DevCluster>) -> Vec<String> {
        cluster_warnings(&c.spec, "DevCluster")
    }
}

pub(crate) struct DevClusterTemplateAdmission;

impl KindAdmission for DevClusterTemplateAdmission {
    type Object = DevClusterTemplate;

    fn default(&self, t: &mut DevClusterTemplate, _old: Option<&DevClusterTemplate>) -> Result<(), Vec<FieldError>> {
        default_cluster_backend(&mut t.spec.template.spec.backend);
        Ok(())
    }

    fn validate(&self, t: &DevClusterTemplate, old: Option<&DevClusterTemplate>) -> Vec<FieldError> {
        let path = template_spec_path();
        let mut errs: Vec<FieldError> =
            validate_endpoint(t.spec.template.spec.control_plane_endpoint.as_ref(), &path).into_iter().collect();
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }

    fn warnings(&self, t: &DevClusterTemplate, _old: Option<&DevClusterTemplate>) -> Vec<String> {
        cluster_warnings(&t.spec.template.spec, "DevClusterTemplate")
    }
}

pub(crate) struct DevMachineAdmission;

impl KindAdmission for DevMachineAdmission {
    type Object = DevMachine;

    fn default(&self, m: &mut DevMachine, _old: Option<&DevMachine>) -> Result<(), Vec<FieldError>> {
        default_machine_backend(&mut m.spec.backend);
        Ok(())
    }

    fn validate(&self, m: &DevMachine, _old: Option<&DevMachine>) -> Vec<FieldError> {
        validate_machine_spec(&m.spec, &FieldPath::new("spec"))
    }

    fn warnings(&self, m: &DevMachine, _old: Option<&DevMachine>) -> Vec<String> {
        machine_warnings(&m.spec, "DevMachine")
    }
}

pub(crate) struct DevMachineTemplateAdmission;

impl KindAdmission for DevMachineTemplateAdmission {
    type Object = DevMachineTemplate;

    fn default(&self, t: &mut DevMachineTemplate, _old: Option<&DevMachineTemplate>) -> Result<(), Vec<FieldError>> {
        default_machine_backend(&mut t.spec.template.spec.backend);
        Ok(())
    }

    fn validate(&self, t: &DevMachineTemplate, old: Option<&DevMachineTemplate>) -> Vec<FieldError> {
        let path = template_spec_path();
        let mut errs = validate_machine_spec(&t.spec.template.spec, &path);
        if let Some(old) = old {
            errs.extend(immutable(&path, &t.spec.template.spec, &old.spec.template.spec));
        }
        errs
    }

    fn warnings(&self, t: &DevMachineTemplate, _old: Option<&DevMachineTemplate>) -> Vec<String> {
        machine_warnings(&t.spec.template.spec, "DevMachineTemplate")
    }
}

pub(crate) struct DevMachinePoolAdmission;

impl KindAdmission for DevMachinePoolAdmission {
    type Object = DevMachinePool;

    fn validate(&self, p: &DevMachinePool, _old: Option<&DevMachinePool>) -> Vec<FieldError> {
        validate_pool_spec(&p.spec, &FieldPath::new("spec"))
    }

    fn warnings(&self, p: &DevMachinePool, _old: Option<&DevMachinePool>) -> Vec<String> {
        pool_warnings(&p.spec, "DevMachinePool")
    }
}

fn validate_pool_spec(spec: &DevMachinePoolSpec, path: &FieldPath) -> Vec<FieldError> {
    validate_components(
        spec.backend.as_ref().and_then(|b| b.in_memory.as_ref()),
        &path.child("backend").child("inMemory"),
    )
}

fn pool_warnings(spec: &DevMachinePoolSpec, kind: &str) -> Vec<String> {
    let backend = spec.backend.clone().unwrap_or_default();
    backend_warnings(backend.selected(), backend.docker.is_some(), kind)
}

pub(crate) struct DevMachinePoolTemplateAdmission;

impl KindAdmission for DevMachinePoolTemplateAdmission {
    type Object = DevMachinePoolTemplate;

    fn validate(&self, t: &DevMachinePoolTemplate, _old: Option<&DevMachinePoolTemplate>) -> Vec<FieldError> {
        validate_pool_spec(&t.spec.template.spec, &template_spec_path())
    }

    fn warnings(&self, t: &DevMachinePoolTemplate, _old: Option<&DevMachinePoolTemplate>) -> Vec<String> {
        pool_warnings(&t.spec.template.spec, "DevMachinePoolTemplate")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged, warnings_of};
    use crate::capi::typed::Typed;

    fn machine(backend: Value) -> Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"backend": backend},
        })
    }

    #[test]
    fn an_empty_backend_defaults_to_docker_and_timings_must_parse() {
        let a = Typed(DevMachineAdmission);
        let empty = admit(&a, machine(json!({})), None).expect("admitted");
        assert_eq!(empty["spec"]["backend"], json!({"docker": {}}));
        let in_memory = admit(&a, machine(json!({"inMemory": {}})), None).expect("admitted");
        assert_eq!(in_memory["spec"]["backend"], json!({"inMemory": {}}), "no docker added");
        assert!(admit(&a, machine(json!({"inMemory": {}, "docker": {}})), None).is_ok());
        let slow = json!({"inMemory": {"vm": {"provisioning": {"startupDuration": "soon"}}}});
        assert_eq!(
            error_fields(&admit(&a, machine(slow), None)),
            ["spec.backend.inMemory.vm.provisioning.startupDuration"]
        );
        let c = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevCluster",
            "metadata": {"name": "c", "namespace": "ns"}, "spec": {"backend": {}},
        });
        let c = admit(&Typed(DevClusterAdmission), c, None).expect("admitted");
        assert_eq!(c["spec"]["backend"], json!({"docker": {}}));
    }

    #[test]
    fn the_docker_backend_is_admitted_with_a_warning() {
        let a = Typed(DevMachineAdmission);
        let docker = machine(json!({"docker": {"customImage": "kindest/node:v1.33.0"}}));
        let warnings = warnings_of(&a, &docker, None);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("drydock runs no containers"), "{warnings:?}");
        assert!(warnings_of(&a, &machine(json!({"inMemory": {}})), None).is_empty());
        let both = warnings_of(&a, &machine(json!({"inMemory": {}, "docker": {}})), None);
        assert!(both[0].contains("ignored"), "{both:?}");
        let c = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevCluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"backend": {"docker": {}}, "controlPlaneEndpoint": {"port": 70000}},
        });
        assert_eq!(
            error_fields(&admit(&Typed(DevClusterAdmission), c.clone(), None)),
            ["spec.controlPlaneEndpoint.port"]
        );
        assert_eq!(warnings_of(&Typed(DevClusterAdmission), &c, None).len(), 1);
    }

    #[test]
    fn templates_are_immutable() {
        let t = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachineTemplate",
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
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevClusterTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"backend": {}}}},
        });
        let ct = admit(&Typed(DevClusterTemplateAdmission), ct, None).expect("admitted");
        assert_eq!(ct["spec"]["template"]["spec"]["backend"], json!({"docker": {}}));
    }

    #[test]
    fn machine_pools_warn_when_docker_is_simulated_and_check_in_memory_timings() {
        let p = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachinePool",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": {},
        });
        assert!(admit(&Typed(DevMachinePoolAdmission), p.clone(), None).is_ok());
        let warnings = warnings_of(&Typed(DevMachinePoolAdmission), &p, None);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("DevMachinePool behaves as an in-memory one"), "{warnings:?}");
        let mut in_memory = p.clone();
        in_memory["spec"]["backend"] = json!({"inMemory": {"vm": {"provisioning": {"startupDuration": "2s"}}}});
        assert!(warnings_of(&Typed(DevMachinePoolAdmission), &in_memory, None).is_empty());
        in_memory["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupDuration"] = json!("soon");
        assert!(admit(&Typed(DevMachinePoolAdmission), in_memory, None).is_err(), "a bad duration is refused");
    }
}
