//! Computed cells: a printer column whose path starts with `#` names a function here,
//! optionally with an argument (`#int:.status.replicas`). The generic ones below cover
//! most built-in columns; cells particular to one kind live in the area modules.

use drydock_api::admission::FieldPath;
use drydock_api::selector::Selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::{age, cluster, jsonpath, network, workloads};

/// `<none>` for an empty string, as kubectl's printers show missing values.
pub(super) fn or_none(s: String) -> Value {
    if s.is_empty() { json!("<none>") } else { json!(s) }
}

/// The strings (or numbers) of a value, rendered.
pub(super) fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The elements of the array at `path`.
pub(super) fn array<'a>(obj: &'a Value, path: &str) -> &'a [Value] {
    jsonpath(obj, path).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn int(obj: &Value, path: &str) -> i64 {
    jsonpath(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// A LabelSelector (or a plain label map) in its query form.
pub(super) fn selector(v: Option<&Value>) -> String {
    let Some(v) = v.filter(|v| !v.is_null()) else { return String::new() };
    let parsed = match serde_json::from_value::<LabelSelector>(v.clone()) {
        Ok(s) if s.match_labels.is_some() || s.match_expressions.is_some() => s,
        _ => return map(v),
    };
    Selector::parse(&parsed, &FieldPath::new("selector")).map(|s| s.to_query()).unwrap_or_default()
}

/// `k=v,k2=v2` in key order.
fn map(v: &Value) -> String {
    let Some(m) = v.as_object() else { return String::new() };
    let mut pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k}={}", text(v))).collect();
    pairs.sort();
    pairs.join(",")
}

fn containers(obj: &Value, pod_spec: &str, field: &str) -> Value {
    let list: Vec<String> = array(obj, &format!("{pod_spec}.containers")).iter().map(|c| text(&c[field])).collect();
    or_none(list.join(","))
}

pub(super) fn computed_cell(spec: &str, obj: &Value) -> Value {
    let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
    let at = || jsonpath(obj, arg).filter(|v| !v.is_null() && *v != "");
    match name {
        "count" => {
            let n: usize =
                arg.split(',').filter_map(|p| jsonpath(obj, p)).filter_map(Value::as_object).map(|m| m.len()).sum();
            json!(n)
        }
        "len" => json!(array(obj, arg).len()),
        "int" => json!(int(obj, arg)),
        "ratio" => {
            let (a, b) = arg.split_once(',').unwrap_or((arg, ""));
            json!(format!("{}/{}", int(obj, a), int(obj, b)))
        }
        "none" => or_none(at().map(text).unwrap_or_default()),
        "unset" => at().map_or(json!("<unset>"), |v| json!(text(v))),
        "empty" => json!(at().map(text).unwrap_or_default()),
        "na" => at().map_or(json!("N/A"), |v| json!(text(v))),
        "bool" => json!(at().and_then(Value::as_bool).unwrap_or(false)),
        "map" => or_none(at().map(map).unwrap_or_default()),
        "selector" => or_none(selector(at())),
        "join" => or_none(array(obj, arg).iter().map(text).collect::<Vec<_>>().join(",")),
        "containers" => containers(obj, arg, "name"),
        "images" => containers(obj, arg, "image"),
        "ageOr" => or_none(at().and_then(Value::as_str).map(age).unwrap_or_default()),
        "createdAt" => obj["metadata"]["creationTimestamp"].clone(),
        "accessModes" => json!(access_modes(array(obj, arg))),
        "controller" => {
            let owner = array(obj, ".metadata.ownerReferences").iter().find(|o| o["controller"] == true);
            or_none(owner.map(owner_name).unwrap_or_default())
        }
        _ => workloads::cell(name, arg, obj)
            .or_else(|| network::cell(name, obj))
            .or_else(|| cluster::cell(name, arg, obj))
            .unwrap_or(Value::Null),
    }
}

/// `deployment.apps/name`, as kubectl names an owner.
fn owner_name(o: &Value) -> String {
    let kind = text(&o["kind"]).to_ascii_lowercase();
    let api_version = text(&o["apiVersion"]);
    match api_version.split_once('/') {
        Some((group, _)) => format!("{kind}.{group}/{}", text(&o["name"])),
        None => format!("{kind}/{}", text(&o["name"])),
    }
}

fn access_modes(modes: &[Value]) -> String {
    let short: Vec<&str> = modes
        .iter()
        .filter_map(|m| match m.as_str()? {
            "ReadWriteOnce" => Some("RWO"),
            "ReadOnlyMany" => Some("ROX"),
            "ReadWriteMany" => Some("RWX"),
            "ReadWriteOncePod" => Some("RWOP"),
            _ => None,
        })
        .collect();
    short.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_cells() {
        let d = json!({"spec":{"replicas":3,"selector":{"matchLabels":{"app":"a","tier":"web"}},
            "template":{"spec":{"containers":[{"name":"c1","image":"i1"},{"name":"c2","image":"i2"}]}}},
            "status":{"readyReplicas":2}});
        assert_eq!(computed_cell("ratio:.status.readyReplicas,.spec.replicas", &d), json!("2/3"));
        assert_eq!(computed_cell("int:.status.updatedReplicas", &d), json!(0));
        assert_eq!(computed_cell("selector:.spec.selector", &d), json!("app=a,tier=web"));
        assert_eq!(computed_cell("containers:.spec.template.spec", &d), json!("c1,c2"));
        assert_eq!(computed_cell("images:.spec.template.spec", &d), json!("i1,i2"));
        assert_eq!(computed_cell("none:.spec.missing", &d), json!("<none>"));
        assert_eq!(computed_cell("map:.spec.selector.matchLabels", &d), json!("app=a,tier=web"));
    }
}
