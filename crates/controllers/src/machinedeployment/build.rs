//! MachineSets built from a MachineDeployment: a new set for a new template, and the
//! fields propagated in place to the current set (labels, annotations, node timeouts,
//! minReadySeconds, readiness gates, deletion order, Machine naming) without replacing its
//! Machines.

use std::collections::BTreeMap;

use drydock_api::capi::core::MachineSetDeletePolicy;
use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet, MachineSetDeletionSpec, MachineSetSpec};
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, DESIRED_REPLICAS_ANNOTATION, MACHINE_SET_FINALIZER,
    MACHINE_TEMPLATE_HASH_LABEL, MAX_REPLICAS_ANNOTATION, PAUSED_ANNOTATION, REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION, SKIP_PREFLIGHT_CHECKS_ANNOTATION,
};
use drydock_api::capi::owner;

use super::plan::set_replica_annotations;
use super::template;
use crate::framework::apply::ApplyConfig;
use crate::framework::names::generated_name;

/// MachineDeployment annotations that describe the deployment itself and are not copied
/// to its sets (pausing a deployment does not pause its sets).
const NOT_PROPAGATED: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    PAUSED_ANNOTATION,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    "cluster.x-k8s.io/conversion-data",
];

/// Deployment annotations its current set carries exactly: present on the set when and
/// only when present on the deployment (other annotations are only added or updated).
/// The change cause labels the revision in `rollout history`; the preflight opt-out must
/// stop applying once removed from the deployment.
pub const MIRRORED: &[&str] =
    &["cluster.x-k8s.io/change-cause", "kubernetes.io/change-cause", SKIP_PREFLIGHT_CHECKS_ANNOTATION];

/// `machine-template-hash` of a new set: the template hash and the set's name suffix.
pub fn hash_label(md: &MachineDeployment, suffix: &str) -> String {
    format!("{}-{suffix}", template::hash(&md.spec.template))
}

/// Annotations the deployment passes to its current set.
pub fn propagated_annotations(md: &MachineDeployment) -> BTreeMap<String, String> {
    md.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| !NOT_PROPAGATED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The labels of a set and of its Machines' template: the deployment's template labels
/// plus the set's hash (and the cluster name, which admission forces anyway).
fn template_labels(md: &MachineDeployment, hash: &str) -> BTreeMap<String, String> {
    let mut labels = md.spec.template.metadata.labels.clone().unwrap_or_default();
    labels.insert(MACHINE_TEMPLATE_HASH_LABEL.to_string(), hash.to_string());
    labels.insert(CLUSTER_NAME_LABEL.to_string(), md.spec.cluster_name.clone());
    labels
}

fn md_name(md: &MachineDeployment) -> String {
    md.metadata.name.clone().unwrap_or_default()
}

/// A new set for the deployment's template: `<md>-<suffix>`, revision `revision`,
/// `replicas` replicas, controlled by the deployment.
pub fn new_machine_set(
    md: &MachineDeployment,
    suffix: &str,
    revision: i64,
    replicas: i32,
    max_replicas: i32,
) -> MachineSet {
    let hash = hash_label(md, suffix);
    let mut ms = MachineSet::new(
        &generated_name(&md_name(md), suffix),
        MachineSetSpec {
            cluster_name: md.spec.cluster_name.clone(),
            replicas: Some(replicas),
            template: md.spec.template.clone(),
            ..Default::default()
        },
    );
    ms.metadata.namespace = md.metadata.namespace.clone();
    ms.metadata.owner_references = owner::controller_ref(md).map(|r| vec![r]);
    // Created with the finalizer its controller would add first, which saves that write.
    ms.metadata.finalizers = Some(vec![MACHINE_SET_FINALIZER.to_string()]);
    apply_in_place(md, &mut ms, &hash);
    let a = ms.metadata.annotations.get_or_insert_with(Default::default);
    a.insert(REVISION_ANNOTATION.to_string(), revision.to_string());
    set_replica_annotations(&mut ms, md.spec.replicas.unwrap_or(1), max_replicas);
    ms
}

/// The labels the deployment gives its set's own metadata.
fn set_labels(md: &MachineDeployment, hash: &str) -> BTreeMap<String, String> {
    let mut labels = template_labels(md, hash);
    labels.insert(DEPLOYMENT_NAME_LABEL.to_string(), md_name(md));
    labels
}

/// The in-place fields a set carries: its own labels and annotations as given, the rest
/// from `spec`.
fn in_place_fields(
    base: ApplyConfig,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    spec: &MachineSetSpec,
) -> ApplyConfig {
    let empty = BTreeMap::new();
    let (tm, ts) = (&spec.template.metadata, &spec.template.spec);
    let deletion = ts.deletion.clone().unwrap_or_default();
    base.labels(labels)
        .annotations(annotations)
        .map(&["spec", "template", "metadata", "labels"], tm.labels.as_ref().unwrap_or(&empty))
        .map(&["spec", "template", "metadata", "annotations"], tm.annotations.as_ref().unwrap_or(&empty))
        .opt(&["spec", "template", "spec", "minReadySeconds"], ts.min_ready_seconds.as_ref())
        .opt(&["spec", "deletion", "order"], spec.deletion.as_ref().and_then(|d| d.order.as_ref()))
        .opt(&["spec", "machineNaming"], spec.machine_naming.as_ref())
        .opt(
            &["spec", "template", "spec", "deletion", "nodeDrainTimeoutSeconds"],
            deletion.node_drain_timeout_seconds.as_ref(),
        )
        .opt(
            &["spec", "template", "spec", "deletion", "nodeDeletionTimeoutSeconds"],
            deletion.node_deletion_timeout_seconds.as_ref(),
        )
        .opt(
            &["spec", "template", "spec", "deletion", "nodeVolumeDetachTimeoutSeconds"],
            deletion.node_volume_detach_timeout_seconds.as_ref(),
        )
        .opt(&["spec", "template", "spec", "readinessGates"], ts.readiness_gates.as_ref())
}

/// The apply configuration of what the deployment owns on its current set `ms` (after
/// [`apply_in_place`]): the set's labels and propagated annotations, and the in-place
/// fields of its spec.
pub fn in_place_config(md: &MachineDeployment, ms: &MachineSet, hash: &str) -> ApplyConfig {
    in_place_fields(ApplyConfig::for_object(ms), &set_labels(md, hash), &propagated_annotations(md), &ms.spec)
}

/// A set's current values of the fields [`in_place_config`] sets.
pub fn in_place_current(ms: &MachineSet) -> ApplyConfig {
    let empty = BTreeMap::new();
    let m = &ms.metadata;
    in_place_fields(
        ApplyConfig::new("", "", "", None),
        m.labels.as_ref().unwrap_or(&empty),
        m.annotations.as_ref().unwrap_or(&empty),
        &ms.spec,
    )
}

/// The hash label of an existing set (required: it keys the set's selector).
pub fn existing_hash(ms: &MachineSet) -> Option<String> {
    ms.metadata.labels.as_ref().and_then(|l| l.get(MACHINE_TEMPLATE_HASH_LABEL)).cloned()
}

/// Sets every field the deployment owns on its current set. Labels and annotations of the
/// set's own metadata are added or updated here (others' keys are kept); keys the
/// deployment stops propagating are removed by applying [`in_place_config`]. Fields inside
/// the spec are set exactly.
pub fn apply_in_place(md: &MachineDeployment, ms: &mut MachineSet, hash: &str) {
    let labels = template_labels(md, hash);
    ms.metadata.labels.get_or_insert_with(Default::default).extend(set_labels(md, hash));
    let annotations = propagated_annotations(md);
    if !annotations.is_empty() {
        ms.metadata.annotations.get_or_insert_with(Default::default).extend(annotations);
    }
    if let Some(a) = ms.metadata.annotations.as_mut() {
        let on_md = md.metadata.annotations.as_ref();
        a.retain(|k, _| !MIRRORED.contains(&k.as_str()) || on_md.is_some_and(|m| m.contains_key(k)));
    }

    let mut selector = md.spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_with(Default::default)
        .insert(MACHINE_TEMPLATE_HASH_LABEL.to_string(), hash.to_string());
    ms.spec.selector = selector;
    ms.spec.template.metadata.labels = Some(labels);
    ms.spec.template.metadata.annotations = md.spec.template.metadata.annotations.clone();
    // Unset means Random (and no minReadySeconds 0), which set admission writes; writing
    // them here keeps the two from undoing each other.
    let order = md.spec.deletion.as_ref().and_then(|d| d.order).unwrap_or(MachineSetDeletePolicy::Random);
    ms.spec.deletion = Some(MachineSetDeletionSpec { order: Some(order) });
    let (to, from) = (&mut ms.spec.template.spec, &md.spec.template.spec);
    to.min_ready_seconds = Some(from.min_ready_seconds.unwrap_or(0));
    to.deletion = from.deletion.clone();
    to.readiness_gates = from.readiness_gates.clone();
    ms.spec.machine_naming = md.spec.machine_naming.clone();
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{MachineDeletionSpec, MachineDeploymentSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    fn md() -> MachineDeployment {
        let mut md = MachineDeployment::new(
            "workers",
            MachineDeploymentSpec {
                cluster_name: "c1".into(),
                replicas: Some(3),
                selector: LabelSelector {
                    match_labels: Some([(CLUSTER_NAME_LABEL.to_string(), "c1".to_string())].into()),
                    match_expressions: None,
                },
                ..Default::default()
            },
        );
        md.metadata.namespace = Some("ns".into());
        md.metadata.uid = Some("md-uid".into());
        md.metadata.annotations = Some(
            [
                ("team".to_string(), "a".to_string()),
                (REVISION_ANNOTATION.to_string(), "4".to_string()),
                ("kubectl.kubernetes.io/last-applied-configuration".to_string(), "{}".to_string()),
            ]
            .into(),
        );
        md.spec.template.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        md.spec.template.metadata.annotations = Some([("t".to_string(), "1".to_string())].into());
        md.spec.template.spec.version = Some("v1.30.2".into());
        md.spec.template.spec.deletion = Some(drain(300));
        md
    }

    fn drain(seconds: i32) -> MachineDeletionSpec {
        MachineDeletionSpec { node_drain_timeout_seconds: Some(seconds), ..Default::default() }
    }

    #[test]
    fn new_set_from_deployment() {
        let md = md();
        let ms = new_machine_set(&md, "x2b4c", 2, 1, 4);
        assert_eq!(ms.metadata.name.as_deref(), Some("workers-x2b4c"));
        assert_eq!(ms.metadata.namespace.as_deref(), Some("ns"));
        assert!(owner::is_controlled_by(&ms.metadata, &md));
        // Created with its finalizer: the set's controller need not write it.
        assert_eq!(ms.metadata.finalizers, Some(vec![MACHINE_SET_FINALIZER.to_string()]));
        let labels = ms.metadata.labels.clone().unwrap_or_default();
        let hash = labels[MACHINE_TEMPLATE_HASH_LABEL].clone();
        assert!(hash.ends_with("-x2b4c"));
        assert_eq!(labels[DEPLOYMENT_NAME_LABEL], "workers");
        assert_eq!(labels["role"], "worker");
        let a = ms.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(a["team"], "a");
        assert_eq!(a[REVISION_ANNOTATION], "2");
        assert_eq!(a[DESIRED_REPLICAS_ANNOTATION], "3");
        assert_eq!(a[MAX_REPLICAS_ANNOTATION], "4");
        assert!(!a.contains_key("kubectl.kubernetes.io/last-applied-configuration"));
        let sel = ms.spec.selector.match_labels.clone().unwrap_or_default();
        assert_eq!(sel[MACHINE_TEMPLATE_HASH_LABEL], hash);
        assert_eq!(sel[CLUSTER_NAME_LABEL], "c1");
        let tl = ms.spec.template.metadata.labels.clone().unwrap_or_default();
        assert_eq!(tl[MACHINE_TEMPLATE_HASH_LABEL], hash);
        assert!(!tl.contains_key(DEPLOYMENT_NAME_LABEL));
        assert_eq!(ms.spec.replicas, Some(1));
        assert_eq!(ms.spec.deletion.as_ref().and_then(|d| d.order), Some(MachineSetDeletePolicy::Random));
        assert_eq!(ms.spec.template.spec.min_ready_seconds, Some(0));
        assert_eq!(ms.spec.template.spec.version.as_deref(), Some("v1.30.2"));
    }

    #[test]
    fn in_place_update_keeps_identity_and_foreign_keys() {
        let mut md = md();
        let mut ms = new_machine_set(&md, "x2b4c", 1, 3, 4);
        ms.metadata.labels.get_or_insert_with(Default::default).insert("someone".into(), "else".into());
        let before_spec_template = ms.spec.template.spec.clone();
        md.spec.template.metadata.labels = Some([("role".to_string(), "db".to_string())].into());
        md.spec.template.spec.deletion = Some(drain(60));
        md.spec.template.spec.min_ready_seconds = Some(10);
        md.spec.deletion = Some(MachineSetDeletionSpec { order: Some(MachineSetDeletePolicy::Oldest) });
        let hash = existing_hash(&ms).expect("hash");
        apply_in_place(&md, &mut ms, &hash);
        let labels = ms.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["role"], "db");
        assert_eq!(labels["someone"], "else");
        assert_eq!(labels[MACHINE_TEMPLATE_HASH_LABEL], hash);
        assert_eq!(ms.spec.template.spec.deletion, Some(drain(60)));
        assert_eq!(ms.spec.template.spec.min_ready_seconds, Some(10));
        assert_eq!(ms.spec.deletion.as_ref().and_then(|d| d.order), Some(MachineSetDeletePolicy::Oldest));
        assert_eq!(ms.spec.replicas, Some(3));
        assert_eq!(ms.spec.template.spec.version, before_spec_template.version);
        // Mirrored annotations follow the deployment exactly; others stay.
        md.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("kubernetes.io/change-cause".into(), "bump".into());
        apply_in_place(&md, &mut ms, &hash);
        let a = ms.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(a["kubernetes.io/change-cause"], "bump");
        if let Some(a) = md.metadata.annotations.as_mut() {
            a.remove("kubernetes.io/change-cause");
            a.remove("team");
        }
        apply_in_place(&md, &mut ms, &hash);
        let a = ms.metadata.annotations.clone().unwrap_or_default();
        assert!(!a.contains_key("kubernetes.io/change-cause"));
        assert_eq!(a["team"], "a");
        // Propagating twice changes nothing.
        let again = {
            let mut m = ms.clone();
            apply_in_place(&md, &mut m, &hash);
            m
        };
        assert_eq!(again, ms);
    }

    #[test]
    fn in_place_config_owns_the_propagated_fields_only() {
        let md = md();
        let ms = new_machine_set(&md, "x2b4c", 2, 1, 4);
        let hash = existing_hash(&ms).expect("hash");
        let c = in_place_config(&md, &ms, &hash);
        let body = c.body();
        assert_eq!(body["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert_eq!(body["kind"], "MachineSet");
        assert_eq!(body["metadata"]["name"], "workers-x2b4c");
        assert_eq!(body["metadata"]["namespace"], "ns");
        assert_eq!(
            body["metadata"]["labels"],
            serde_json::json!({
                "role": "worker", MACHINE_TEMPLATE_HASH_LABEL: hash, CLUSTER_NAME_LABEL: "c1",
                DEPLOYMENT_NAME_LABEL: "workers",
            })
        );
        // The deployment's own annotations (revision, replicas) are not propagated.
        assert_eq!(body["metadata"]["annotations"], serde_json::json!({"team": "a"}));
        assert_eq!(body["spec"]["template"]["metadata"]["annotations"], serde_json::json!({"t": "1"}));
        assert_eq!(
            body["spec"]["template"]["spec"],
            serde_json::json!({"deletion": {"nodeDrainTimeoutSeconds": 300}, "minReadySeconds": 0})
        );
        assert_eq!(body["spec"]["deletion"]["order"], "Random");
        // Nothing that is not in place: no replicas, selector, version or references.
        let spec = body["spec"].as_object().expect("spec");
        let keys: Vec<&str> = spec.keys().map(String::as_str).collect();
        assert_eq!(keys, ["deletion", "template"]);
        // The new set already has it all; a label removed from the template is given up.
        assert!(!crate::framework::apply::would_change(&in_place_current(&ms), &ms.metadata, "m", &c));
        let mut fewer = md.clone();
        fewer.spec.template.metadata.labels = None;
        let mut applied = ms.clone();
        applied.metadata.managed_fields =
            Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
                manager: Some("m".into()),
                operation: Some("Apply".into()),
                fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(c.owned_set())),
                ..Default::default()
            }]);
        let mut want = applied.clone();
        apply_in_place(&fewer, &mut want, &hash);
        let c2 = in_place_config(&fewer, &want, &hash);
        assert!(c2.body()["metadata"]["labels"].get("role").is_none());
        assert!(crate::framework::apply::would_change(&in_place_current(&applied), &applied.metadata, "m", &c2));
    }
}
