//! Defaulting and validation pieces shared by the admission of Machine, MachineSet,
//! MachineDeployment and MachinePool.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta as K8sObjectMeta};

use super::v1beta2;
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::ObjectMeta;
use crate::capi::keys::{CLUSTER_NAME_LABEL, PREFLIGHT_CHECKS, SKIP_PREFLIGHT_CHECKS_ANNOTATION};
use crate::capi::validation::{to_value, validate_annotations, validate_labels};
use crate::capi::version;
use crate::names::label_value_errors;
use crate::selector::{self, Selector};

/// Sets `cluster.x-k8s.io/cluster-name` to the spec's cluster name.
pub(crate) fn set_cluster_name_label(meta: &mut K8sObjectMeta, cluster_name: &str) {
    if !cluster_name.is_empty() {
        meta.labels.get_or_insert_with(BTreeMap::new).insert(CLUSTER_NAME_LABEL.to_string(), cluster_name.to_string());
    }
}

/// `spec.version` must be a Kubernetes semantic version.
pub(crate) fn validate_version(v: Option<&str>, path: &FieldPath) -> Option<FieldError> {
    let v = v?;
    (!version::is_kube_semver(v)).then(|| FieldError::invalid(path.as_str(), v, "must be a valid semantic version"))
}

/// Labels and annotations of a template (`metadata` under `path`).
fn validate_template_metadata(meta: &ObjectMeta, path: &FieldPath) -> Vec<FieldError> {
    let p = path.child("metadata");
    let mut errs = validate_labels(meta.labels.as_ref(), &p.child("labels"));
    errs.extend(validate_annotations(meta.annotations.as_ref(), &p.child("annotations")));
    errs
}

/// Defaults of a Machine spec: the `v` prefix on the version (its references name no
/// namespace: they are always the Machine's).
pub(crate) fn default_machine_spec(spec: &mut v1beta2::MachineSpec) {
    if let Some(v) = spec.version.as_mut() {
        *v = version::with_v_prefix(v);
    }
}

/// Checks of a Machine template: labels, annotations, bootstrap data (every Machine created
/// from it needs some), version format.
pub(crate) fn validate_machine_template(template: &v1beta2::MachineTemplateSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_template_metadata(&template.metadata, path);
    let spec = path.child("spec");
    let b = &template.spec.bootstrap;
    if b.config_ref.is_none() && b.data_secret_name.is_none() {
        errs.push(FieldError::required(
            spec.child("bootstrap").child("data"),
            format!(
                "expected either {p}.bootstrap.dataSecretName or {p}.bootstrap.configRef to be populated",
                p = spec.as_str()
            ),
        ));
    }
    errs.extend(validate_version(template.spec.version.as_deref(), &spec.child("version")));
    errs
}

/// Values of the skip-preflight-checks annotation must name known checks (or `All`).
pub(crate) fn validate_skip_preflight_checks(annotations: Option<&BTreeMap<String, String>>) -> Vec<FieldError> {
    let Some(value) = annotations.and_then(|a| a.get(SKIP_PREFLIGHT_CHECKS_ANNOTATION)) else { return Vec::new() };
    let path = FieldPath::new("metadata").child("annotations").key(SKIP_PREFLIGHT_CHECKS_ANNOTATION);
    value
        .split(',')
        .map(str::trim)
        .filter(|c| !PREFLIGHT_CHECKS.contains(c))
        .map(|c| FieldError::not_supported(path.as_str(), c, PREFLIGHT_CHECKS))
        .collect()
}

/// Replicas may not be negative.
pub(crate) fn validate_replicas(replicas: Option<i32>, path: &FieldPath) -> Option<FieldError> {
    replicas.filter(|r| *r < 0).map(|r| FieldError::invalid(path.as_str(), r, "must be greater than or equal to 0"))
}

/// Objects whose name ends up in label values (Cluster, MachineDeployment) need label-safe names.
pub(crate) fn validate_name_is_label_value(meta: &K8sObjectMeta) -> Vec<FieldError> {
    let Some(name) = meta.name.as_deref() else { return Vec::new() };
    label_value_errors(name)
        .into_iter()
        .map(|e| FieldError::invalid("metadata.name", name, format!("must be a valid label value: {e}")))
        .collect()
}

/// `spec.clusterName` is required and may not change.
pub(crate) fn validate_cluster_name(new: &str, old: Option<&str>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if new.is_empty() {
        errs.push(FieldError::required(path.as_str(), "must be set"));
    }
    if let Some(old) = old {
        errs.extend(crate::capi::validation::immutable(path, &new, &old));
    }
    errs
}

/// An empty selector becomes `{key: value}`, and the template (its metadata) gets the same label.
pub(crate) fn default_empty_selector(selector: &mut LabelSelector, template: &mut ObjectMeta, key: &str, value: &str) {
    if !selector::is_empty(selector) || value.is_empty() {
        return;
    }
    selector.match_labels.get_or_insert_with(BTreeMap::new).insert(key.to_string(), value.to_string());
    template.labels.get_or_insert_with(BTreeMap::new).insert(key.to_string(), value.to_string());
}

/// The selector must be valid and select the template's labels (`template` is its metadata).
pub(crate) fn validate_selector_matches_template(
    sel: &LabelSelector,
    template: &ObjectMeta,
    spec_path: &FieldPath,
) -> Vec<FieldError> {
    match Selector::parse(sel, &spec_path.child("selector")) {
        Err(errs) => errs,
        Ok(parsed) => {
            let labels = template.labels.clone().unwrap_or_default();
            if parsed.matches(&labels) {
                Vec::new()
            } else {
                let path = spec_path.child("template").child("metadata").child("labels");
                vec![FieldError::invalid(path.as_str(), to_value(&labels), "must match spec.selector")]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_preflight_values() {
        let mut a = BTreeMap::new();
        a.insert(
            SKIP_PREFLIGHT_CHECKS_ANNOTATION.to_string(),
            "ControlPlaneIsStable, KubernetesVersionSkew".to_string(),
        );
        assert!(validate_skip_preflight_checks(Some(&a)).is_empty());
        a.insert(SKIP_PREFLIGHT_CHECKS_ANNOTATION.to_string(), "All,ControlPlaneStable".to_string());
        let errs = validate_skip_preflight_checks(Some(&a));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].value, Some("ControlPlaneStable".into()));
    }

    #[test]
    fn bootstrap_and_names() {
        let template = v1beta2::MachineTemplateSpec::default();
        let errs = validate_machine_template(&template, &FieldPath::new("spec").child("template"));
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.template.spec.bootstrap.data"]);
        let meta = K8sObjectMeta { name: Some("-bad".into()), ..Default::default() };
        assert_eq!(validate_name_is_label_value(&meta).len(), 1);
        assert_eq!(
            validate_replicas(Some(-1), &FieldPath::new("spec").child("replicas")).unwrap().field,
            "spec.replicas"
        );
    }
}
