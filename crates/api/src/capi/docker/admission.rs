//! Docker provider admission, for v1beta2 (v1beta1 writes are converted first): endpoint
//! ports must be ports and the machine and cluster templates are immutable, as upstream's
//! webhooks have them. Every Docker object is admitted with a warning: drydock runs no
//! containers and simulates it in memory.

use std::marker::PhantomData;

use super::v1beta2::{
    DockerCluster, DockerClusterTemplate, DockerMachine, DockerMachinePool, DockerMachinePoolTemplate,
    DockerMachineTemplate,
};
use crate::admission::{FieldError, FieldPath};
use crate::capi::dev::backend::DOCKER_SIMULATED_MESSAGE;
use crate::capi::dev::{template_spec_path, validate_endpoint};
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable;

/// What differs between the Docker kinds' admissions.
pub(crate) trait DockerKind:
    kube::Resource<DynamicType = ()> + serde::Serialize + serde::de::DeserializeOwned
{
    /// Every problem of `self`; `old` is the stored object on update.
    fn problems(&self, _old: Option<&Self>) -> Vec<FieldError> {
        Vec::new()
    }
}

/// The admission of Docker kind `K`.
pub(crate) struct DockerAdmission<K>(PhantomData<fn() -> K>);

impl<K> DockerAdmission<K> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<K: DockerKind + Send + Sync + 'static> KindAdmission for DockerAdmission<K> {
    type Object = K;

    fn validate(&self, obj: &K, old: Option<&K>) -> Vec<FieldError> {
        obj.problems(old)
    }

    fn warnings(&self, _obj: &K, _old: Option<&K>) -> Vec<String> {
        vec![format!("{DOCKER_SIMULATED_MESSAGE}; this {} behaves as an in-memory one", K::kind(&()))]
    }
}

impl DockerKind for DockerCluster {
    fn problems(&self, _old: Option<&Self>) -> Vec<FieldError> {
        validate_endpoint(self.spec.control_plane_endpoint.as_ref(), &FieldPath::new("spec")).into_iter().collect()
    }
}

impl DockerKind for DockerClusterTemplate {
    fn problems(&self, old: Option<&Self>) -> Vec<FieldError> {
        let path = template_spec_path();
        let spec = &self.spec.template.spec;
        let mut errs: Vec<FieldError> =
            validate_endpoint(spec.control_plane_endpoint.as_ref(), &path).into_iter().collect();
        errs.extend(old.and_then(|old| immutable(&path, spec, &old.spec.template.spec)));
        errs
    }
}

impl DockerKind for DockerMachine {}

impl DockerKind for DockerMachineTemplate {
    fn problems(&self, old: Option<&Self>) -> Vec<FieldError> {
        old.and_then(|old| immutable(&template_spec_path(), &self.spec.template.spec, &old.spec.template.spec))
            .into_iter()
            .collect()
    }
}

impl DockerKind for DockerMachinePool {}

impl DockerKind for DockerMachinePoolTemplate {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged, warnings_of};
    use crate::capi::typed::Typed;

    #[test]
    fn docker_objects_are_admitted_with_a_warning_and_templates_are_immutable() {
        let t = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"customImage": "kindest/node:v1.33.0", "preLoadImages": ["a"]}}},
        });
        let a = Typed(DockerAdmission::<DockerMachineTemplate>::new());
        let warnings = warnings_of(&a, &t, None);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("drydock runs no containers"), "{warnings:?}");
        assert!(warnings[0].contains("this DockerMachineTemplate behaves as an in-memory one"), "{warnings:?}");
        let old = admit(&a, t.clone(), None).expect("admitted");
        assert_eq!(old["spec"]["template"]["spec"]["customImage"], "kindest/node:v1.33.0", "kept as written");
        let relabeled = merged(&old, &json!({"metadata": {"labels": {"a": "b"}}}));
        assert!(admit(&a, relabeled, Some(old.clone())).is_ok());
        let changed = merged(&old, &json!({"spec": {"template": {"spec": {"customImage": "kindest/node:v1.34.0"}}}}));
        assert_eq!(error_fields(&admit(&a, changed, Some(old))), ["spec.template.spec"]);

        let c = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerCluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"controlPlaneEndpoint": {"host": "h", "port": 70000}},
        });
        let a = Typed(DockerAdmission::<DockerCluster>::new());
        assert_eq!(error_fields(&admit(&a, c, None)), ["spec.controlPlaneEndpoint.port"]);
    }
}
