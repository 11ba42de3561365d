//! MachineSet admission (v1beta2, the stored version): cluster-name label, replicas
//! (autoscaler-aware), deletion order, selector and version defaults; selector, template,
//! preflight-annotation and immutability checks.

use super::checks::{
    default_empty_selector, default_machine_spec, set_cluster_name_label, validate_cluster_name,
    validate_machine_template, validate_replicas, validate_selector_matches_template, validate_skip_preflight_checks,
};
use super::machineset::MachineSetDeletePolicy;
use super::replicas::{OldReplicas, default_replicas};
use super::v1beta2::{MachineSet, MachineSetDeletionSpec};
use crate::admission::{FieldError, FieldPath};
use crate::capi::keys::SET_NAME_LABEL;
use crate::capi::naming;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::format_label_value;

pub(crate) struct MachineSetAdmission;

impl KindAdmission for MachineSetAdmission {
    type Object = MachineSet;

    fn default(&self, ms: &mut MachineSet, old: Option<&MachineSet>) -> Result<(), Vec<FieldError>> {
        set_cluster_name_label(&mut ms.metadata, &ms.spec.cluster_name);
        if ms.spec.replicas.is_none() {
            let old = old.map_or(OldReplicas::Create, |o| OldReplicas::Update(o.spec.replicas));
            ms.spec.replicas = Some(default_replicas(ms.metadata.annotations.as_ref(), old).map_err(|e| vec![e])?);
        }
        ms.spec.template.spec.min_ready_seconds.get_or_insert(0);
        let deletion = ms.spec.deletion.get_or_insert_with(MachineSetDeletionSpec::default);
        deletion.order.get_or_insert(MachineSetDeletePolicy::Random);
        let set_name = format_label_value(ms.metadata.name.as_deref().unwrap_or_default());
        default_empty_selector(&mut ms.spec.selector, &mut ms.spec.template.metadata, SET_NAME_LABEL, &set_name);
        default_machine_spec(&mut ms.spec.template.spec);
        Ok(())
    }

    fn validate(&self, ms: &MachineSet, old: Option<&MachineSet>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_cluster_name(
            &ms.spec.cluster_name,
            old.map(|o| o.spec.cluster_name.as_str()),
            &spec.child("clusterName"),
        );
        errs.extend(validate_replicas(ms.spec.replicas, &spec.child("replicas")));
        errs.extend(validate_selector_matches_template(&ms.spec.selector, &ms.spec.template.metadata, &spec));
        errs.extend(validate_machine_template(&ms.spec.template, &spec.child("template")));
        errs.extend(validate_skip_preflight_checks(ms.metadata.annotations.as_ref()));
        if let Some(t) = ms.spec.machine_naming.as_ref().and_then(|s| s.template.as_deref()) {
            let name = ms.metadata.name.as_deref().unwrap_or("machineset");
            errs.extend(naming::validate_template(
                t,
                &[("cluster.name", ms.spec.cluster_name.as_str()), ("machineSet.name", name)],
                &spec.child("machineNaming").child("template"),
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::keys::{AUTOSCALER_MAX_SIZE_ANNOTATION, AUTOSCALER_MIN_SIZE_ANNOTATION};
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn machineset() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
            "metadata": { "name": "ms1", "namespace": "ns" },
            "spec": {
                "clusterName": "c1",
                "selector": {},
                "template": {
                    "spec": {
                        "clusterName": "c1",
                        "version": "1.30.2",
                        "bootstrap": { "dataSecretName": "s" },
                        "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachineTemplate", "name": "t" }
                    }
                }
            }
        })
    }

    #[test]
    fn defaults() {
        let out = admit(&Typed(MachineSetAdmission), machineset(), None).unwrap();
        assert_eq!(out["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(out["spec"]["replicas"], 1);
        assert_eq!(out["spec"]["template"]["spec"]["minReadySeconds"], 0);
        assert_eq!(out["spec"]["deletion"]["order"], "Random");
        assert_eq!(out["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/set-name"], "ms1");
        assert_eq!(out["spec"]["template"]["metadata"]["labels"]["cluster.x-k8s.io/set-name"], "ms1");
        assert_eq!(out["spec"]["template"]["spec"]["version"], "v1.30.2");
    }

    #[test]
    fn replicas_follow_autoscaler_annotations() {
        let a = Typed(MachineSetAdmission);
        let annotated = merged(
            &machineset(),
            &json!({ "metadata": { "annotations": { AUTOSCALER_MIN_SIZE_ANNOTATION: "2", AUTOSCALER_MAX_SIZE_ANNOTATION: "5" } } }),
        );
        let created = admit(&a, annotated.clone(), None).unwrap();
        assert_eq!(created["spec"]["replicas"], 2);
        // An update that drops replicas keeps the stored value while it is within bounds...
        let mut old = created.clone();
        old["spec"]["replicas"] = json!(4);
        assert_eq!(admit(&a, annotated.clone(), Some(old.clone())).unwrap()["spec"]["replicas"], 4);
        // ...and clamps it otherwise.
        old["spec"]["replicas"] = json!(9);
        assert_eq!(admit(&a, annotated.clone(), Some(old)).unwrap()["spec"]["replicas"], 5);
        let bad =
            merged(&annotated, &json!({ "metadata": { "annotations": { AUTOSCALER_MAX_SIZE_ANNOTATION: "many" } } }));
        assert_eq!(
            error_fields(&admit(&a, bad, None)),
            [format!("metadata.annotations[{AUTOSCALER_MAX_SIZE_ANNOTATION}]")]
        );
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let cases = [
            (
                json!({ "spec": { "selector": { "matchLabels": { "app": "x" } } } }),
                vec!["spec.template.metadata.labels"],
            ),
            (
                json!({ "spec": { "selector": { "matchExpressions": [ { "key": "a", "operator": "Equals", "values": ["b"] } ] } } }),
                vec!["spec.selector.matchExpressions[0].operator"],
            ),
            (json!({ "spec": { "replicas": -1 } }), vec!["spec.replicas"]),
            (json!({ "spec": { "template": { "spec": { "version": "v1.30" } } } }), vec!["spec.template.spec.version"]),
            (
                json!({ "spec": { "template": { "metadata": { "labels": { "bad key!": "v" } } } } }),
                vec!["spec.template.metadata.labels"],
            ),
            (
                json!({ "metadata": { "annotations": { "machineset.cluster.x-k8s.io/skip-preflight-checks": "ControlPlaneStable" } } }),
                vec!["metadata.annotations[machineset.cluster.x-k8s.io/skip-preflight-checks]"],
            ),
            (
                json!({ "spec": { "machineNaming": { "template": "{{ .machineSet.name }}" } } }),
                vec!["spec.machineNaming.template"],
            ),
            (json!({ "spec": { "deletion": { "order": "Largest" } } }), vec!["spec.deletion.order"]),
        ];
        for (patch, want) in cases {
            let r = admit(&Typed(MachineSetAdmission), merged(&machineset(), &patch), None);
            assert_eq!(error_fields(&r), want, "{patch}");
        }
    }

    #[test]
    fn updates() {
        let a = Typed(MachineSetAdmission);
        let old = admit(&a, machineset(), None).unwrap();
        let scaled =
            merged(&old, &json!({ "spec": { "replicas": 3, "template": { "metadata": { "labels": { "x": "y" } } } } }));
        assert!(admit(&a, scaled, Some(old.clone())).is_ok());
        let moved = merged(&old, &json!({ "spec": { "clusterName": "c2" } }));
        assert_eq!(error_fields(&admit(&a, moved, Some(old))), ["spec.clusterName"]);
    }
}
