//! events.k8s.io/v1 Events, served from core/v1 Event storage: the two shapes differ only
//! in field names.

use serde_json::{Map, Value, json};

use crate::registry::Conversion;

pub(super) fn conversion() -> Conversion {
    Conversion { to_storage: events_v1_to_core, from_storage: core_to_events_v1, field: event_field_to_core }
}

/// Field renames between events.k8s.io/v1 (left) and core/v1 (right).
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedCount", "count"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedSource", "source"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
    ("type", "type"),
    ("reason", "reason"),
    ("action", "action"),
    ("related", "related"),
    ("series", "series"),
    ("eventTime", "eventTime"),
    ("metadata", "metadata"),
];

fn rename(obj: Value, api_version: &str, forward: bool) -> Value {
    let Value::Object(src) = obj else { return obj };
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!("Event"));
    for (a, b) in EVENT_FIELDS {
        let (from, to) = if forward { (a, b) } else { (b, a) };
        if let Some(v) = src.get(*from) {
            out.insert((*to).to_string(), v.clone());
        }
    }
    Value::Object(out)
}

fn event_field_to_core(path: &str) -> String {
    let (head, rest) = path.split_once('.').unwrap_or((path, ""));
    let head = EVENT_FIELDS.iter().find(|(a, _)| *a == head).map_or(head, |(_, b)| b);
    if rest.is_empty() { head.to_string() } else { format!("{head}.{rest}") }
}

fn events_v1_to_core(obj: Value) -> Value {
    rename(obj, "v1", true)
}

fn core_to_events_v1(obj: Value) -> Value {
    rename(obj, "events.k8s.io/v1", false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_conversion_round_trips() {
        let v1 = json!({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},
            "regarding":{"kind":"Machine","name":"m"},"note":"hi","reason":"Created","type":"Normal",
            "reportingController":"drydock","reportingInstance":"i","action":"Create","eventTime":"2026-01-01T00:00:00.000000Z"});
        let core = events_v1_to_core(v1.clone());
        assert_eq!(core["involvedObject"]["name"], "m");
        assert_eq!(core["message"], "hi");
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core_to_events_v1(core), v1);
    }
}
