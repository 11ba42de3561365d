//! Service defaults and validation. The cluster IP and node ports are allocated after
//! defaulting, with the logical cluster's other Services in view (`builtin::services`).

use drydock_api::FieldError;
use serde_json::{Map, Value, json};

use super::{child, items, set_default};

const TYPES: &[&str] = &["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];

/// Whether Services of this type get node ports.
pub(crate) fn uses_node_ports(ty: &str) -> bool {
    matches!(ty, "NodePort" | "LoadBalancer")
}

/// (index, field path) of each port that needs a node port.
pub(crate) fn node_port_fields(svc: &Value) -> impl Iterator<Item = (usize, String)> + '_ {
    let wanted = uses_node_ports(svc["spec"]["type"].as_str().unwrap_or_default());
    svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(move |_| wanted)
        .map(|(i, _)| (i, format!("spec.ports[{i}].nodePort")))
}

pub(super) fn default(obj: &mut Value, old: Option<&Value>) {
    let Some(spec) = obj.as_object_mut().and_then(|m| child(m, "spec")) else { return };
    set_default(spec, "type", json!("ClusterIP"));
    let ty = spec.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    set_default(spec, "sessionAffinity", json!("None"));
    if spec.get("sessionAffinity").and_then(Value::as_str) == Some("ClientIP")
        && let Some(ip) = child(spec, "sessionAffinityConfig").and_then(|c| child(c, "clientIP"))
    {
        set_default(ip, "timeoutSeconds", json!(10800));
    }
    for p in items(spec, "ports") {
        set_default(p, "protocol", json!("TCP"));
        let port = p.get("port").cloned().unwrap_or(Value::Null);
        let unset = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if unset {
            p.insert("targetPort".into(), port);
        }
    }
    if ty == "ExternalName" {
        return;
    }
    if let Some(old) = old {
        keep_allocations(spec, &old["spec"]);
    }
    set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    if uses_node_ports(&ty) {
        set_default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
    if spec.get("clusterIP").and_then(Value::as_str) == Some("None") {
        set_default(spec, "clusterIPs", json!(["None"]));
    }
}

/// An update that leaves out the cluster IP or a port's node port keeps the allocated
/// one, as kube-apiserver does for `kubectl replace` and client-side apply.
fn keep_allocations(spec: &mut Map<String, Value>, old: &Value) {
    let empty = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v == "");
    if empty(spec.get("clusterIP")) && old["clusterIP"].is_string() {
        spec.insert("clusterIP".into(), old["clusterIP"].clone());
        if empty(spec.get("clusterIPs")) {
            spec.insert("clusterIPs".into(), old["clusterIPs"].clone());
        }
    }
    let old_ports = old["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    for p in items(spec, "ports") {
        if !p.get("nodePort").is_none_or(|v| v.is_null() || v == 0) {
            continue;
        }
        let same = old_ports.iter().find(|o| o["port"] == p["port"] && o["protocol"] == p["protocol"]);
        if let Some(np) = same.map(|o| &o["nodePort"]).filter(|n| n.is_number()) {
            p.insert("nodePort".into(), np.clone());
        }
    }
}

pub(super) fn validate(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let ty = spec["type"].as_str().unwrap_or_default();
    let mut errs = Vec::new();
    if !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported("spec.type", ty, TYPES));
        return errs;
    }
    if ty == "ExternalName" {
        if spec["externalName"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required("spec.externalName", ""));
        }
        return errs;
    }
    let ports = spec["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    if ports.is_empty() && spec["clusterIP"] != "None" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    for (i, p) in ports.iter().enumerate() {
        if ports.len() > 1 && p["name"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("spec.ports[{i}].name"), ""));
        }
        match p["port"].as_i64() {
            Some(1..=65535) => {}
            _ => errs.push(FieldError::invalid(
                format!("spec.ports[{i}].port"),
                p["port"].clone(),
                "must be between 1 and 65535, inclusive",
            )),
        }
        if p["nodePort"].is_number() && !uses_node_ports(ty) {
            errs.push(FieldError::forbidden(
                format!("spec.ports[{i}].nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
    }
    for (i, f) in spec["ipFamilies"].as_array().into_iter().flatten().enumerate() {
        if f != "IPv4" {
            errs.push(FieldError::invalid(
                format!("spec.ipFamilies[{i}]"),
                f.clone(),
                "not configured on this cluster",
            ));
        }
    }
    if let Some(old) = old
        && old["spec"]["type"] != "ExternalName"
        && old["spec"]["clusterIP"].is_string()
        && old["spec"]["clusterIP"] != spec["clusterIP"]
    {
        errs.push(FieldError::invalid("spec.clusterIPs[0]", spec["clusterIP"].clone(), "may not change once set"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_defaults() {
        let mut s = json!({"spec":{"ports":[{"port":80}],"selector":{"app":"a"}}});
        default(&mut s, None);
        let spec = &s["spec"];
        assert_eq!(spec["type"], "ClusterIP");
        assert_eq!(spec["ports"][0], json!({"port":80,"protocol":"TCP","targetPort":80}));
        assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert!(validate(&s, None).is_empty());
    }

    #[test]
    fn update_keeps_allocations() {
        let old = json!({"spec":{"type":"NodePort","clusterIP":"10.96.0.20","clusterIPs":["10.96.0.20"],
            "ports":[{"port":80,"protocol":"TCP","nodePort":30080}]}});
        let mut new = json!({"spec":{"type":"NodePort","ports":[{"port":80}]}});
        default(&mut new, Some(&old));
        assert_eq!(new["spec"]["clusterIP"], "10.96.0.20");
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30080);
    }
}
