//! Cells of Nodes, Pods, Jobs and the like.

use serde_json::{Value, json};

use super::computed::{array, or_none, text};
use super::{age, human_duration, jsonpath};

fn conditions(obj: &Value) -> impl Iterator<Item = &Value> {
    obj["status"]["conditions"].as_array().into_iter().flatten()
}

fn condition_true(obj: &Value, ty: &str) -> bool {
    conditions(obj).any(|c| c["type"] == ty && c["status"] == "True")
}

pub(super) fn cell(name: &str, arg: &str, obj: &Value) -> Option<Value> {
    Some(match name {
        "node.status" => {
            let mut s = if condition_true(obj, "Ready") { "Ready".to_string() } else { "NotReady".to_string() };
            if obj["spec"]["unschedulable"] == true {
                s.push_str(",SchedulingDisabled");
            }
            json!(s)
        }
        "node.roles" => {
            let roles: Vec<&str> = obj["metadata"]["labels"]
                .as_object()
                .map(|m| m.keys().filter_map(|k| k.strip_prefix("node-role.kubernetes.io/")).collect())
                .unwrap_or_default();
            json!(if roles.is_empty() { "<none>".to_string() } else { roles.join(",") })
        }
        "node.address" => array(obj, ".status.addresses")
            .iter()
            .find(|a| a["type"] == arg)
            .map_or(json!("<none>"), |a| a["address"].clone()),
        "pod.ready" => {
            let total = array(obj, ".spec.containers").len();
            let ready = array(obj, ".status.containerStatuses").iter().filter(|c| c["ready"] == true).count();
            json!(format!("{ready}/{total}"))
        }
        "pod.restarts" => {
            let n: i64 =
                array(obj, ".status.containerStatuses").iter().filter_map(|c| c["restartCount"].as_i64()).sum();
            json!(n)
        }
        "pod.status" => json!(pod_status(obj)),
        "pod.ip" => or_none(text(&obj["status"]["podIP"])),
        "pod.readinessGates" => {
            let gates = array(obj, ".spec.readinessGates");
            if gates.is_empty() {
                json!("<none>")
            } else {
                let met = gates
                    .iter()
                    .filter(|g| condition_true(obj, g["conditionType"].as_str().unwrap_or_default()))
                    .count();
                json!(format!("{met}/{}", gates.len()))
            }
        }
        "job.status" => json!(job_status(obj)),
        "job.completions" => {
            let succeeded = obj["status"]["succeeded"].as_i64().unwrap_or(0);
            match (obj["spec"]["completions"].as_i64(), obj["spec"]["parallelism"].as_i64()) {
                (Some(c), _) => json!(format!("{succeeded}/{c}")),
                (None, Some(p)) if p > 1 => json!(format!("{succeeded}/1 of {p}")),
                _ => json!(format!("{succeeded}/1")),
            }
        }
        "job.duration" => json!(job_duration(obj)),
        "event.lastSeen" => {
            let t = obj["lastTimestamp"]
                .as_str()
                .or(obj["eventTime"].as_str())
                .or(obj["metadata"]["creationTimestamp"].as_str());
            t.map_or(Value::Null, |s| json!(age(s)))
        }
        "event.object" => {
            let io = &obj["involvedObject"];
            json!(format!("{}/{}", text(&io["kind"]).to_ascii_lowercase(), text(&io["name"])))
        }
        _ => return None,
    })
}

/// What kubectl shows as a Pod's STATUS: Terminating, a container's waiting or
/// terminated reason, the Pod's reason, or its phase.
fn pod_status(obj: &Value) -> String {
    if obj["metadata"]["deletionTimestamp"].is_string() {
        return "Terminating".into();
    }
    let reason = array(obj, ".status.containerStatuses")
        .iter()
        .find_map(|c| c["state"]["waiting"]["reason"].as_str().or(c["state"]["terminated"]["reason"].as_str()));
    reason.or(obj["status"]["reason"].as_str()).or(obj["status"]["phase"].as_str()).unwrap_or("Pending").to_string()
}

fn job_status(obj: &Value) -> &'static str {
    if condition_true(obj, "Complete") {
        "Complete"
    } else if condition_true(obj, "Failed") {
        "Failed"
    } else if obj["metadata"]["deletionTimestamp"].is_string() {
        "Terminating"
    } else if condition_true(obj, "FailureTarget") {
        "FailureTarget"
    } else if condition_true(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else if condition_true(obj, "Suspended") {
        "Suspended"
    } else {
        "Running"
    }
}

fn job_duration(obj: &Value) -> String {
    let parse = |p: &str| jsonpath(obj, p).and_then(Value::as_str).and_then(|s| s.parse::<jiff::Timestamp>().ok());
    let Some(start) = parse(".status.startTime") else { return String::new() };
    let end = parse(".status.completionTime").unwrap_or_else(jiff::Timestamp::now);
    human_duration(end.as_second() - start.as_second())
}
