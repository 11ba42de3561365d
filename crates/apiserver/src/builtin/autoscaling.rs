//! autoscaling: HorizontalPodAutoscaler, stored as v2 and also served as v1 (one storage).
//! v1 knows only a CPU utilization target; converting it keeps that target and the
//! replica bounds, as kube-apiserver's conversion does for what v1 can express.

use k8s_openapi::api::autoscaling::{v1, v2};
use serde_json::{Map, Value, json};

use super::kind::{AGE, BASE, Col, Kind, schema_of};
use crate::registry::Conversion;

const COLUMNS: &[Col] = &[
    ("Reference", "string", "#hpa.reference", 0),
    ("Targets", "string", "#hpa.targets", 0),
    ("MinPods", "string", "#none:.spec.minReplicas", 0),
    ("MaxPods", "integer", ".spec.maxReplicas", 0),
    ("Replicas", "integer", "#int:.status.currentReplicas", 0),
    AGE,
];

const HPA: Kind = Kind {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    short: &["hpa"],
    categories: &["all"],
    status: true,
    columns: COLUMNS,
    ..BASE
};

/// The storage version.
pub(super) const V2: Kind = Kind { version: "v2", schema: schema_of::<v2::HorizontalPodAutoscaler>, ..HPA };

/// Served from v2's storage.
pub(super) const V1: Kind = Kind { version: "v1", schema: schema_of::<v1::HorizontalPodAutoscaler>, ..HPA };

pub(super) fn conversion() -> Conversion {
    Conversion { to_storage: v1_to_v2, from_storage: v2_to_v1, field: str::to_string }
}

fn cpu_metric(utilization: &Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

/// Copies the fields both versions share (metadata, bounds, target reference, replicas).
fn common(src: &Value, api_version: &str, spec: &[&str], status: &[&str]) -> Value {
    let pick = |from: &Value, keys: &[&str]| -> Value {
        let mut out = Map::new();
        for k in keys {
            if let Some(v) = from.get(*k) {
                out.insert((*k).to_string(), v.clone());
            }
        }
        Value::Object(out)
    };
    let mut out = json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler", "metadata": src["metadata"]});
    out["spec"] = pick(&src["spec"], spec);
    if src.get("status").is_some() {
        out["status"] = pick(&src["status"], status);
    }
    out
}

const SPEC: &[&str] = &["scaleTargetRef", "minReplicas", "maxReplicas"];
const STATUS: &[&str] = &["observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"];

fn v1_to_v2(obj: Value) -> Value {
    let mut out = common(&obj, "autoscaling/v2", SPEC, STATUS);
    if let Some(u) = obj["spec"].get("targetCPUUtilizationPercentage") {
        out["spec"]["metrics"] = json!([cpu_metric(u)]);
    }
    if let Some(u) = obj["status"].get("currentCPUUtilizationPercentage") {
        out["status"]["currentMetrics"] =
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": u}}}]);
    }
    out
}

fn v2_to_v1(obj: Value) -> Value {
    let mut out = common(&obj, "autoscaling/v1", SPEC, STATUS);
    let is_cpu = |m: &&Value| m["type"] == "Resource" && m["resource"]["name"] == "cpu";
    if let Some(m) = obj["spec"]["metrics"].as_array().and_then(|a| a.iter().find(is_cpu)) {
        out["spec"]["targetCPUUtilizationPercentage"] = m["resource"]["target"]["averageUtilization"].clone();
    }
    if let Some(m) = obj["status"]["currentMetrics"].as_array().and_then(|a| a.iter().find(is_cpu)) {
        out["status"]["currentCPUUtilizationPercentage"] = m["resource"]["current"]["averageUtilization"].clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_round_trips_through_v2() {
        let v1 = json!({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},
            "spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"minReplicas":1,"maxReplicas":5,
                    "targetCPUUtilizationPercentage":70}});
        let v2 = v1_to_v2(v1.clone());
        assert_eq!(v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 70);
        assert_eq!(v2_to_v1(v2), v1);
    }
}
