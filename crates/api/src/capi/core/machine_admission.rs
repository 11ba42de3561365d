//! Machine admission (v1beta2, the stored version): cluster-name label, version prefix and
//! node deletion timeout defaults; bootstrap, version, reference and immutability checks.

use super::checks::{default_machine_spec, set_cluster_name_label, validate_cluster_name, validate_version};
use super::v1beta2::{Machine, MachineDeletionSpec};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::ContractVersionedObjectReference;
use crate::capi::refs;
use crate::capi::typed::KindAdmission;

/// Default wait, in seconds, for the Node to be deleted once the infrastructure is gone.
pub const DEFAULT_NODE_DELETION_TIMEOUT_SECONDS: i32 = 10;

pub(crate) struct MachineAdmission;

impl KindAdmission for MachineAdmission {
    type Object = Machine;

    fn default(&self, m: &mut Machine, _old: Option<&Machine>) -> Result<(), Vec<FieldError>> {
        set_cluster_name_label(&mut m.metadata, &m.spec.cluster_name);
        default_machine_spec(&mut m.spec);
        let deletion = m.spec.deletion.get_or_insert_with(MachineDeletionSpec::default);
        deletion.node_deletion_timeout_seconds.get_or_insert(DEFAULT_NODE_DELETION_TIMEOUT_SECONDS);
        Ok(())
    }

    fn validate(&self, m: &Machine, old: Option<&Machine>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_cluster_name(
            &m.spec.cluster_name,
            old.map(|o| o.spec.cluster_name.as_str()),
            &spec.child("clusterName"),
        );
        // MachinePool Machines get their bootstrap data from the pool.
        let in_pool = m.metadata.owner_references.iter().flatten().any(|r| r.kind == "MachinePool");
        let b = &m.spec.bootstrap;
        if !in_pool && b.config_ref.is_none() && b.data_secret_name.is_none() {
            errs.push(FieldError::required(
                spec.child("bootstrap").child("data"),
                "expected either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated",
            ));
        }
        errs.extend(validate_version(m.spec.version.as_deref(), &spec.child("version")));
        let infra = spec.child("infrastructureRef");
        errs.extend(validate_ref(&m.spec.infrastructure_ref, &infra));
        let config = spec.child("bootstrap").child("configRef");
        errs.extend(b.config_ref.iter().flat_map(|r| validate_ref(r, &config)));
        let mut seen = std::collections::BTreeSet::new();
        for (i, gate) in m.spec.readiness_gates.iter().flatten().enumerate() {
            if !seen.insert(gate.condition_type.as_str()) {
                errs.push(FieldError::duplicate(
                    spec.child("readinessGates").index(i).child("conditionType"),
                    gate.condition_type.as_str(),
                ));
            }
        }
        if let Some(old) = old {
            // The infrastructure machine and bootstrap config are fixed for a Machine's life;
            // a different one needs a new Machine.
            errs.extend(same_target(&m.spec.infrastructure_ref, &old.spec.infrastructure_ref, &infra));
            if let (Some(new), Some(prev)) = (&b.config_ref, &old.spec.bootstrap.config_ref) {
                errs.extend(same_target(new, prev, &config));
            }
        }
        errs
    }
}

/// A v1beta2 reference names a group, kind and name, in the Machine's namespace.
fn validate_ref(r: &ContractVersionedObjectReference, path: &FieldPath) -> Vec<FieldError> {
    refs::validate_fields_set([("apiGroup", &*r.api_group), ("kind", &r.kind), ("name", &r.name)], path)
}

fn same_target(
    new: &ContractVersionedObjectReference,
    old: &ContractVersionedObjectReference,
    path: &FieldPath,
) -> Option<FieldError> {
    (new != old).then(|| FieldError::forbidden(path.as_str(), "cannot point to another object"))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn machine() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": { "name": "m1", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "version": "1.30.2",
                "bootstrap": { "configRef": { "apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "m1" } },
                "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachine", "name": "m1" }
            }
        })
    }

    #[test]
    fn defaults() {
        let out = admit(&Typed(MachineAdmission), machine(), None).unwrap();
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(out["spec"]["version"], "v1.30.2");
        assert_eq!(out["spec"]["deletion"]["nodeDeletionTimeoutSeconds"], DEFAULT_NODE_DELETION_TIMEOUT_SECONDS);
        let zero = merged(&machine(), &json!({ "spec": { "deletion": { "nodeDeletionTimeoutSeconds": 0 } } }));
        let out = admit(&Typed(MachineAdmission), zero, None).unwrap();
        assert_eq!(out["spec"]["deletion"]["nodeDeletionTimeoutSeconds"], 0, "0 (retry forever) is kept");
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let cases = [
            (json!({ "spec": { "bootstrap": { "configRef": null } } }), vec!["spec.bootstrap.data"]),
            (json!({ "spec": { "version": "1.30" } }), vec!["spec.version"]),
            (json!({ "spec": { "clusterName": "" } }), vec!["spec.clusterName"]),
            (json!({ "spec": { "infrastructureRef": { "name": "" } } }), vec!["spec.infrastructureRef.name"]),
            (
                json!({ "spec": { "bootstrap": { "configRef": { "apiGroup": "" } } } }),
                vec!["spec.bootstrap.configRef.apiGroup"],
            ),
            (
                json!({ "spec": { "readinessGates": [ { "conditionType": "A" }, { "conditionType": "A" } ] } }),
                vec!["spec.readinessGates[1].conditionType"],
            ),
            (json!({ "spec": { "replicas": "x", "clusterName": 5 } }), vec!["spec.clusterName"]),
        ];
        for (patch, want) in cases {
            let r = admit(&Typed(MachineAdmission), merged(&machine(), &patch), None);
            assert_eq!(error_fields(&r), want, "{patch}");
        }
    }

    #[test]
    fn bootstrap_secret_or_machine_pool_owner_is_enough() {
        let with_secret =
            merged(&machine(), &json!({ "spec": { "bootstrap": { "configRef": null, "dataSecretName": "s" } } }));
        assert!(admit(&Typed(MachineAdmission), with_secret, None).is_ok());
        let pool_machine = merged(
            &machine(),
            &json!({
                "metadata": { "ownerReferences": [ { "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool", "name": "p", "uid": "u" } ] },
                "spec": { "bootstrap": { "configRef": null } }
            }),
        );
        assert!(admit(&Typed(MachineAdmission), pool_machine, None).is_ok());
    }

    #[test]
    fn updates() {
        let a = Typed(MachineAdmission);
        let old = admit(&a, machine(), None).unwrap();
        let allowed = [
            json!({ "spec": { "providerID": "in-memory://m1", "bootstrap": { "dataSecretName": "m1" } } }),
            json!({ "metadata": { "labels": { "extra": "x" } } }),
        ];
        for patch in allowed {
            assert!(admit(&a, merged(&old, &patch), Some(old.clone())).is_ok(), "{patch}");
        }
        let forbidden = [
            (json!({ "spec": { "clusterName": "c2" } }), "spec.clusterName"),
            (json!({ "spec": { "infrastructureRef": { "name": "m2" } } }), "spec.infrastructureRef"),
            (json!({ "spec": { "bootstrap": { "configRef": { "kind": "Other" } } } }), "spec.bootstrap.configRef"),
        ];
        for (patch, field) in forbidden {
            let r = admit(&a, merged(&old, &patch), Some(old.clone()));
            assert!(error_fields(&r).contains(&field.to_string()), "{patch}: {r:?}");
        }
    }

    /// The status passes through admission as it came, whatever it holds, and an update is
    /// compared with the stored object's declared fields.
    #[test]
    fn admission_leaves_the_status_alone() {
        use crate::admission::{Admission, Operation};
        let a = Typed(MachineAdmission);
        let status = json!({ "phase": "Running", "notAField": [1, 2], "conditions": "not a list" });
        let machine = |name: &str| {
            json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                "metadata": { "name": "m", "namespace": "default" },
                "spec": { "clusterName": name, "bootstrap": { "dataSecretName": "s" },
                          "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachine", "name": "m" } },
                "status": status,
            })
        };
        let mut obj = machine("c");
        let errors = a.admit(&mut obj, Some(&machine("c")), Operation::Update).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(obj["status"], status);
        assert_eq!(obj["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c", "defaulted");
        let mut renamed = machine("d");
        let errors = a.admit(&mut renamed, Some(&machine("c")), Operation::Update).unwrap();
        assert_eq!(errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["spec.clusterName"]);
    }
}
