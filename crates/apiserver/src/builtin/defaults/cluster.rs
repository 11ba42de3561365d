//! Defaults of the remaining kinds: storage, endpoints, network policies, RBAC subjects,
//! autoscalers, priority classes and webhook configurations.

use serde_json::{Value, json};

use super::{child, existing, items, set_default, spec};

pub(super) fn persistent_volume_claim(obj: &mut Value, old: Option<&Value>) {
    if let Some(spec) = spec(obj) {
        set_default(spec, "volumeMode", json!("Filesystem"));
    }
    if old.is_none()
        && let Some(status) = obj.as_object_mut().and_then(|m| child(m, "status"))
    {
        set_default(status, "phase", json!("Pending"));
    }
}

pub(super) fn persistent_volume(obj: &mut Value, old: Option<&Value>) {
    if let Some(spec) = spec(obj) {
        set_default(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
        set_default(spec, "volumeMode", json!("Filesystem"));
    }
    if old.is_none()
        && let Some(status) = obj.as_object_mut().and_then(|m| child(m, "status"))
    {
        set_default(status, "phase", json!("Pending"));
    }
}

pub(super) fn endpoints(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    for subset in items(map, "subsets") {
        for p in items(subset, "ports") {
            set_default(p, "protocol", json!("TCP"));
        }
    }
}

pub(super) fn endpoint_slice(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    for p in items(map, "ports") {
        set_default(p, "protocol", json!("TCP"));
        set_default(p, "name", json!(""));
    }
}

/// policyTypes: Ingress always, Egress when egress rules are given.
pub(super) fn network_policy(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    for key in ["ingress", "egress"] {
        for rule in items(spec, key) {
            for p in items(rule, "ports") {
                set_default(p, "protocol", json!("TCP"));
            }
        }
    }
    let egress = spec.get("egress").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    let types = if egress { json!(["Ingress", "Egress"]) } else { json!(["Ingress"]) };
    set_default(spec, "policyTypes", types);
}

/// Subjects' apiGroup follows their kind.
pub(super) fn role_binding(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    for s in items(map, "subjects") {
        let group = match s.get("kind").and_then(Value::as_str) {
            Some("ServiceAccount") => "",
            _ => "rbac.authorization.k8s.io",
        };
        set_default(s, "apiGroup", json!(group));
    }
}

/// minReplicas 1 and, without metrics, an 80% CPU utilization target.
pub(super) fn horizontal_pod_autoscaler(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "minReplicas", json!(1));
    if spec.get("metrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
}

pub(super) fn storage_class(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    set_default(map, "reclaimPolicy", json!("Delete"));
    set_default(map, "volumeBindingMode", json!("Immediate"));
}

pub(super) fn csi_driver(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "attachRequired", json!(true));
    set_default(spec, "podInfoOnMount", json!(false));
    set_default(spec, "storageCapacity", json!(false));
    set_default(spec, "requiresRepublish", json!(false));
    set_default(spec, "seLinuxMount", json!(false));
    set_default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    set_default(spec, "volumeLifecycleModes", json!(["Persistent"]));
}

pub(super) fn priority_class(obj: &mut Value, _old: Option<&Value>) {
    if let Some(map) = obj.as_object_mut() {
        set_default(map, "preemptionPolicy", json!("PreemptLowerPriority"));
    }
}

/// Webhooks of either configuration kind.
pub(super) fn webhooks(obj: &mut Value, _old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    let mutating = map.get("kind").and_then(Value::as_str) == Some("MutatingWebhookConfiguration");
    for w in items(map, "webhooks") {
        set_default(w, "failurePolicy", json!("Fail"));
        set_default(w, "matchPolicy", json!("Equivalent"));
        set_default(w, "namespaceSelector", json!({}));
        set_default(w, "objectSelector", json!({}));
        set_default(w, "timeoutSeconds", json!(10));
        if mutating {
            set_default(w, "reinvocationPolicy", json!("Never"));
        }
        for r in items(w, "rules") {
            set_default(r, "scope", json!("*"));
        }
        if let Some(svc) = existing(w, "clientConfig").and_then(|c| existing(c, "service")) {
            set_default(svc, "port", json!(443));
        }
    }
}
