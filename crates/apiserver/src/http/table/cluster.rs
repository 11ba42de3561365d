//! Cells of storage, RBAC, autoscaling, quota, certificate and admission kinds.

use serde_json::{Value, json};

use super::computed::{array, or_none, text};
use super::human_duration;

pub(super) fn cell(name: &str, arg: &str, obj: &Value) -> Option<Value> {
    Some(match name {
        "pv.claim" => {
            let c = &obj["spec"]["claimRef"];
            json!(if c.is_null() { String::new() } else { format!("{}/{}", text(&c["namespace"]), text(&c["name"])) })
        }
        "quota.request" => json!(quota(obj, false)),
        "quota.limit" => json!(quota(obj, true)),
        "binding.role" => {
            let r = &obj["roleRef"];
            json!(format!("{}/{}", text(&r["kind"]), text(&r["name"])))
        }
        "binding.subjects" => {
            let names: Vec<String> = array(obj, ".subjects")
                .iter()
                .filter(|s| s["kind"] == arg)
                .map(|s| match arg {
                    "ServiceAccount" => format!("{}/{}", text(&s["namespace"]), text(&s["name"])),
                    _ => text(&s["name"]),
                })
                .collect();
            json!(names.join(", "))
        }
        "hpa.reference" => {
            let r = &obj["spec"]["scaleTargetRef"];
            json!(format!("{}/{}", text(&r["kind"]), text(&r["name"])))
        }
        "hpa.targets" => or_none(hpa_targets(obj)),
        "csr.duration" => or_none(obj["spec"]["expirationSeconds"].as_i64().map(human_duration).unwrap_or_default()),
        "csr.condition" => {
            let types: Vec<String> = array(obj, ".status.conditions").iter().map(|c| text(&c["type"])).collect();
            json!(if types.is_empty() { "Pending".to_string() } else { types.join(",") })
        }
        "vap.paramKind" => {
            let p = &obj["spec"]["paramKind"];
            json!(if p.is_null() {
                "<unset>".to_string()
            } else {
                format!("{}/{}", text(&p["apiVersion"]), text(&p["kind"]))
            })
        }
        "vapb.paramRef" => {
            let p = &obj["spec"]["paramRef"];
            json!(if p.is_null() {
                "<unset>".to_string()
            } else {
                format!("{}/{}", text(&p["namespace"]), text(&p["name"]))
            })
        }
        "fs.missingPL" => {
            let dangling = array(obj, ".status.conditions").iter().find(|c| c["type"] == "Dangling");
            json!(dangling.map_or("?".to_string(), |c| text(&c["status"])))
        }
        "csidriver.tokenRequests" => {
            let aud: Vec<String> = array(obj, ".spec.tokenRequests").iter().map(|t| text(&t["audience"])).collect();
            json!(if aud.is_empty() { "<unset>".to_string() } else { aud.join(",") })
        }
        _ => return None,
    })
}

/// `resource: used/hard` for each resource under `status.hard`: limits or the rest.
fn quota(obj: &Value, limits: bool) -> String {
    let Some(hard) = obj["status"]["hard"].as_object().or(obj["spec"]["hard"].as_object()) else {
        return String::new();
    };
    let mut keys: Vec<&String> = hard.keys().filter(|k| k.starts_with("limits.") == limits).collect();
    keys.sort();
    let used = &obj["status"]["used"];
    let parts: Vec<String> = keys
        .iter()
        .map(|k| {
            let u = used.get(k.as_str()).map_or_else(|| "0".to_string(), text);
            format!("{k}: {u}/{}", text(&hard[k.as_str()]))
        })
        .collect();
    parts.join(", ")
}

/// `cpu: 50%/80%` per resource metric (`<unknown>` before the autoscaler reports).
fn hpa_targets(obj: &Value) -> String {
    let current = array(obj, ".status.currentMetrics");
    let parts: Vec<String> = array(obj, ".spec.metrics")
        .iter()
        .filter(|m| m["type"] == "Resource")
        .map(|m| {
            let name = text(&m["resource"]["name"]);
            let target = &m["resource"]["target"];
            let (want, unit) = match target["averageUtilization"].as_i64() {
                Some(u) => (u.to_string(), "%"),
                None => (text(&target["averageValue"]), ""),
            };
            let now = current
                .iter()
                .find(|c| c["resource"]["name"] == name.as_str())
                .and_then(|c| c["resource"]["current"]["averageUtilization"].as_i64())
                .map_or_else(|| "<unknown>".to_string(), |u| format!("{u}{unit}"));
            format!("{name}: {now}/{want}{unit}")
        })
        .collect();
    parts.join(", ")
}
