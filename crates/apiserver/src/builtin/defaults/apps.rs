//! Deployment, ReplicaSet, StatefulSet, DaemonSet and ReplicationController defaults, and
//! the selector checks kube-apiserver makes on them.

use std::collections::BTreeMap;

use drydock_api::admission::FieldPath;
use drydock_api::selector::Selector;
use drydock_api::{FieldError, FieldErrorKind};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Map, Value, json};

use super::pod::{self, validate_pod_spec};
use super::{child, existing, items, set_default, spec};

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = existing(spec, "template") {
        pod::template(t);
    }
}

pub(super) fn deployment(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "replicas", json!(1));
    if let Some(strategy) = child(spec, "strategy") {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(ru) = child(strategy, "rollingUpdate")
        {
            set_default(ru, "maxUnavailable", json!("25%"));
            set_default(ru, "maxSurge", json!("25%"));
        }
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    set_default(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

pub(super) fn replica_set(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "replicas", json!(1));
    template(spec);
}

pub(super) fn stateful_set(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "replicas", json!(1));
    set_default(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(strategy) = child(spec, "updateStrategy") {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(ru) = child(strategy, "rollingUpdate")
        {
            set_default(ru, "partition", json!(0));
        }
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    if let Some(policy) = child(spec, "persistentVolumeClaimRetentionPolicy") {
        set_default(policy, "whenDeleted", json!("Retain"));
        set_default(policy, "whenScaled", json!("Retain"));
    }
    for claim in items(spec, "volumeClaimTemplates") {
        set_default(claim, "apiVersion", json!("v1"));
        set_default(claim, "kind", json!("PersistentVolumeClaim"));
        if let Some(s) = child(claim, "spec") {
            set_default(s, "volumeMode", json!("Filesystem"));
        }
        if let Some(s) = child(claim, "status") {
            set_default(s, "phase", json!("Pending"));
        }
    }
    template(spec);
}

pub(super) fn daemon_set(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    if let Some(strategy) = child(spec, "updateStrategy") {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(ru) = child(strategy, "rollingUpdate")
        {
            set_default(ru, "maxUnavailable", json!(1));
            set_default(ru, "maxSurge", json!(0));
        }
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// A ReplicationController's selector and labels default to its template's labels.
pub(super) fn replication_controller(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    let labels = map
        .get("spec")
        .map(|s| s["template"]["metadata"]["labels"].clone())
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()));
    if let Some(labels) = &labels
        && let Some(meta) = child(map, "metadata")
        && meta.get("labels").and_then(Value::as_object).is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), labels.clone());
    }
    let Some(spec) = child(map, "spec") else { return };
    set_default(spec, "replicas", json!(1));
    if let Some(labels) = labels
        && spec.get("selector").and_then(Value::as_object).is_none_or(Map::is_empty)
    {
        spec.insert("selector".into(), labels);
    }
    template(spec);
}

/// Go's `%#v` of a label map, as kube-apiserver prints it in this error.
fn go_map(labels: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
    format!("map[string]string{{{}}}", pairs.join(", "))
}

fn labels_of(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
        .unwrap_or_default()
}

/// apps/v1 workloads: a selector is required, must select the template's labels and
/// never changes; the template is a valid pod template.
pub(super) fn validate_selector_workload(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    let labels = labels_of(&spec["template"]["metadata"]["labels"]);
    match serde_json::from_value::<LabelSelector>(spec["selector"].clone()) {
        Ok(sel) if !spec["selector"].is_null() => match Selector::parse(&sel, &FieldPath::new("spec.selector")) {
            Ok(s) if s.is_empty() => errs.push(FieldError::invalid(
                "spec.selector",
                spec["selector"].clone(),
                "empty selector is invalid for deployment",
            )),
            Ok(s) if !s.matches(&labels) => errs.push(FieldError::new(
                FieldErrorKind::Invalid,
                "spec.template.metadata.labels",
                format!("{}: `selector` does not match template `labels`", go_map(&labels)),
            )),
            Ok(_) => {}
            Err(e) => errs.extend(e),
        },
        _ => errs.push(FieldError::required("spec.selector", "")),
    }
    if let Some(old) = old
        && !old["spec"]["selector"].is_null()
        && old["spec"]["selector"] != spec["selector"]
    {
        errs.push(FieldError::invalid("spec.selector", spec["selector"].clone(), "field is immutable"));
    }
    errs.extend(validate_pod_spec(&spec["template"]["spec"], "spec.template.spec"));
    errs
}

/// A ReplicationController's selector (a plain map) must select its template's labels.
pub(super) fn validate_replication_controller(obj: &Value, _old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let selector = labels_of(&spec["selector"]);
    let labels = labels_of(&spec["template"]["metadata"]["labels"]);
    let mut errs = Vec::new();
    if selector.is_empty() {
        errs.push(FieldError::required("spec.selector", ""));
    } else if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
        errs.push(FieldError::new(
            FieldErrorKind::Invalid,
            "spec.template.metadata.labels",
            format!("{}: `selector` does not match template `labels`", go_map(&labels)),
        ));
    }
    errs.extend(validate_pod_spec(&spec["template"]["spec"], "spec.template.spec"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_defaults_and_selector_check() {
        let mut d = json!({"spec":{"selector":{"matchLabels":{"app":"a"}},
            "template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}});
        deployment(&mut d, None);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}})
        );
        let errs = validate_selector_workload(&d, None);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            errs[0].to_string(),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`"
        );
    }

    #[test]
    fn recreate_strategy_gets_no_rolling_update() {
        let mut d = json!({"spec":{"strategy":{"type":"Recreate"}}});
        deployment(&mut d, None);
        assert_eq!(d["spec"]["strategy"], json!({"type":"Recreate"}));
    }
}
