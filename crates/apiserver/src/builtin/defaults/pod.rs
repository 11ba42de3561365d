//! Pod and pod template defaults (`SetDefaults_PodSpec`, `SetDefaults_Container` and the
//! admission plugins every cluster runs: ServiceAccount, Priority, DefaultTolerationSeconds).

use drydock_api::FieldError;
use serde_json::{Map, Value, json};

use super::{child, existing, items, set_default};

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// A Pod: its spec's defaults, what admission plugins add, and status at creation.
pub(super) fn pod(obj: &mut Value, old: Option<&Value>) {
    let Some(map) = obj.as_object_mut() else { return };
    if let Some(spec) = child(map, "spec") {
        pod_spec(spec);
        set_default(spec, "enableServiceLinks", json!(true));
        set_default(spec, "serviceAccountName", json!("default"));
        let sa = spec.get("serviceAccountName").cloned().unwrap_or(Value::Null);
        set_default(spec, "serviceAccount", sa);
        set_default(spec, "priority", json!(0));
        set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
        default_tolerations(spec);
    }
    if old.is_none() {
        let qos = map.get("spec").map_or("BestEffort", qos_class);
        if let Some(status) = child(map, "status") {
            set_default(status, "phase", json!("Pending"));
            set_default(status, "qosClass", json!(qos));
        }
    }
}

/// Tolerates not-ready and unreachable Nodes for 300 s, unless the Pod says otherwise.
fn default_tolerations(spec: &mut Map<String, Value>) {
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else { return };
    for key in [NOT_READY, UNREACHABLE] {
        let has = list
            .iter()
            .any(|t| t["key"] == key && (t["effect"] == "NoExecute" || t["effect"].is_null() || t["effect"] == ""));
        if !has {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// Guaranteed when every container's requests equal its limits for cpu and memory,
/// BestEffort when none sets either, otherwise Burstable.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> =
        ["containers", "initContainers"].iter().flat_map(|k| spec[*k].as_array().into_iter().flatten()).collect();
    let any = containers
        .iter()
        .any(|c| ["requests", "limits"].iter().any(|k| c["resources"][*k].as_object().is_some_and(|m| !m.is_empty())));
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = &c["resources"]["limits"][*r];
            !limit.is_null() && (c["resources"]["requests"][*r].is_null() || c["resources"]["requests"][*r] == *limit)
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}

/// A PodTemplate object: its template's spec.
pub(super) fn pod_template_kind(obj: &mut Value, _old: Option<&Value>) {
    if let Some(t) = obj.as_object_mut().and_then(|m| existing(m, "template")) {
        template(t);
    }
}

/// A pod template inside a workload: the pod spec's defaults.
pub(super) fn template(tmpl: &mut Map<String, Value>) {
    if let Some(spec) = child(tmpl, "spec") {
        pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and the defaults of everything inside it.
pub(super) fn pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        for c in items(spec, key) {
            container(c);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

fn container(c: &mut Map<String, Value>) {
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    let policy = pull_policy(c.get("image").and_then(Value::as_str).unwrap_or_default());
    set_default(c, "imagePullPolicy", json!(policy));
    set_default(c, "resources", json!({}));
    for p in items(c, "ports") {
        set_default(p, "protocol", json!("TCP"));
    }
    for e in items(c, "env") {
        if let Some(field_ref) = existing(e, "valueFrom").and_then(|v| existing(v, "fieldRef")) {
            set_default(field_ref, "apiVersion", json!("v1"));
        }
    }
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = existing(c, key) {
            probe(p);
        }
    }
}

/// `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests included).
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

fn probe(p: &mut Map<String, Value>) {
    set_default(p, "timeoutSeconds", json!(1));
    set_default(p, "periodSeconds", json!(10));
    set_default(p, "successThreshold", json!(1));
    set_default(p, "failureThreshold", json!(3));
    if let Some(get) = existing(p, "httpGet") {
        set_default(get, "scheme", json!("HTTP"));
    }
}

fn volume(v: &mut Map<String, Value>) {
    for key in ["configMap", "secret", "downwardAPI", "projected"] {
        if let Some(src) = existing(v, key) {
            set_default(src, "defaultMode", json!(420));
        }
    }
    if let Some(host) = existing(v, "hostPath") {
        set_default(host, "type", json!(""));
    }
}

/// Containers need a name and an image: what `kubectl run` users and hand-written
/// manifests most often miss.
pub(super) fn validate_pod(obj: &Value, _old: Option<&Value>) -> Vec<FieldError> {
    validate_pod_spec(&obj["spec"], "spec")
}

/// Checks of a pod spec at `path`.
pub(super) fn validate_pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let containers = spec["containers"].as_array().map(Vec::as_slice).unwrap_or_default();
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    for (i, c) in containers.iter().enumerate() {
        if c["name"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("{path}.containers[{i}].name"), ""));
        }
        if c["image"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("{path}.containers[{i}].image"), ""));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn pod_defaults() {
        let mut p = json!({"spec":{"containers":[{"name":"a","image":"x:1","ports":[{"containerPort":80}]}]}});
        pod(&mut p, None);
        let s = &p["spec"];
        assert_eq!(s["restartPolicy"], "Always");
        assert_eq!(s["dnsPolicy"], "ClusterFirst");
        assert_eq!(s["serviceAccountName"], "default");
        assert_eq!(s["containers"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(s["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(p["status"], json!({"phase":"Pending","qosClass":"BestEffort"}));
    }
}
