//! MachinePool admission (v1beta2, the stored version): cluster-name label, replicas
//! (autoscaler-aware) and template defaults; template and immutability checks.

use super::checks::{
    default_machine_spec, set_cluster_name_label, validate_cluster_name, validate_machine_template, validate_replicas,
};
use super::replicas::{OldReplicas, default_replicas};
use super::v1beta2::MachinePool;
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;

pub(crate) struct MachinePoolAdmission;

impl KindAdmission for MachinePoolAdmission {
    type Object = MachinePool;

    fn default(&self, mp: &mut MachinePool, old: Option<&MachinePool>) -> Result<(), Vec<FieldError>> {
        set_cluster_name_label(&mut mp.metadata, &mp.spec.cluster_name);
        if mp.spec.replicas.is_none() {
            let old = old.map_or(OldReplicas::Create, |o| OldReplicas::Update(o.spec.replicas));
            mp.spec.replicas = Some(default_replicas(mp.metadata.annotations.as_ref(), old).map_err(|e| vec![e])?);
        }
        default_machine_spec(&mut mp.spec.template.spec);
        Ok(())
    }

    fn validate(&self, mp: &MachinePool, old: Option<&MachinePool>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_cluster_name(
            &mp.spec.cluster_name,
            old.map(|o| o.spec.cluster_name.as_str()),
            &spec.child("clusterName"),
        );
        errs.extend(validate_replicas(mp.spec.replicas, &spec.child("replicas")));
        errs.extend(validate_machine_template(&mp.spec.template, &spec.child("template")));
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn pool() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": { "name": "mp", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "template": { "spec": {
                    "clusterName": "c1",
                    "version": "1.30.2",
                    "bootstrap": { "configRef": { "apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "mp" } },
                    "infrastructureRef": { "apiGroup": "infrastructure.example", "kind": "ExamplePool", "name": "mp" }
                } }
            }
        })
    }

    #[test]
    fn defaults_and_checks() {
        let a = Typed(MachinePoolAdmission);
        let out = admit(&a, pool(), None).unwrap();
        assert_eq!(out["spec"]["replicas"], 1);
        assert_eq!(out["spec"]["template"]["spec"]["version"], "v1.30.2");
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        let cases = [
            (
                json!({ "spec": { "template": { "spec": { "bootstrap": { "configRef": null } } } } }),
                "spec.template.spec.bootstrap.data",
            ),
            (json!({ "spec": { "replicas": -2 } }), "spec.replicas"),
            (json!({ "spec": { "template": { "spec": { "version": "1.30" } } } }), "spec.template.spec.version"),
        ];
        for (patch, field) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&pool(), &patch), None)), [field], "{patch}");
        }
        let moved = merged(&out, &json!({ "spec": { "clusterName": "c2" } }));
        assert_eq!(error_fields(&admit(&a, moved, Some(out.clone()))), ["spec.clusterName"]);
    }
}
