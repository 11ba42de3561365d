//! The built-in kinds the rest of drydock needs: Namespace, ConfigMap, Secret, Events (core
//! and events.k8s.io, one storage), Lease, Node, Pod, CustomResourceDefinition, and
//! drydock's LogicalCluster (one per hosted API "cluster").

mod config_data;

use drydock_api::tenancy::{LOGICAL_CLUSTER_KIND, LOGICAL_CLUSTER_PLURAL, TENANCY_GROUP, TENANCY_VERSION};
use drydock_api::{PrinterColumn, ResourceDef};
use serde_json::{Map, Value, json};

use crate::registry::{Conversion, RegistryBuilder};

/// Inline structural schema of a k8s-openapi type, for pruning and strict field validation.
fn schema_of<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// Computed printer columns are named with a leading `#` (see `table.rs`).
fn col(name: &str, ty: &str, path: &str) -> PrinterColumn {
    PrinterColumn::new(name, ty, path)
}

/// Namespace, ConfigMap and Secret.
fn core_config() -> [ResourceDef; 3] {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
    [
        ResourceDef::new("", "v1", "Namespace", "namespaces")
            .cluster_scoped()
            .with_status()
            .short_names(&["ns"])
            .column(col("Status", "string", ".status.phase"))
            .schema(schema_of::<Namespace>())
            .verbs(&["create", "delete", "get", "list", "patch", "update", "watch"]),
        ResourceDef::new("", "v1", "ConfigMap", "configmaps")
            .short_names(&["cm"])
            .column(col("Data", "integer", "#count:.data,.binaryData"))
            .schema(schema_of::<ConfigMap>())
            .admission(config_data::ConfigMapAdmission),
        ResourceDef::new("", "v1", "Secret", "secrets")
            .column(col("Type", "string", ".type"))
            .column(col("Data", "integer", "#count:.data"))
            .schema(schema_of::<Secret>())
            .admission(config_data::SecretAdmission),
    ]
}

/// core/v1 Event (events.k8s.io/v1 is served from the same storage).
fn core_event() -> ResourceDef {
    use k8s_openapi::api::core::v1::Event;
    ResourceDef::new("", "v1", "Event", "events")
        .short_names(&["ev"])
        .column(col("Last Seen", "date", "#event.lastSeen"))
        .column(col("Type", "string", ".type"))
        .column(col("Reason", "string", ".reason"))
        .column(col("Object", "string", "#event.object"))
        .column(col("Message", "string", ".message"))
        .schema(schema_of::<Event>())
        .selectable(&[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ])
}

/// Node and Pod.
fn core_workloads() -> [ResourceDef; 2] {
    use k8s_openapi::api::core::v1::{Node, Pod};
    [
        ResourceDef::new("", "v1", "Node", "nodes")
            .cluster_scoped()
            .with_status()
            .short_names(&["no"])
            .column(col("Status", "string", "#node.status"))
            .column(col("Roles", "string", "#node.roles"))
            .column(col("Age", "date", ".metadata.creationTimestamp"))
            .column(col("Version", "string", ".status.nodeInfo.kubeletVersion"))
            .column(col("Internal-IP", "string", "#node.internalIP").priority(1))
            .schema(schema_of::<Node>())
            .selectable(&["spec.providerID", "spec.unschedulable"]),
        ResourceDef::new("", "v1", "Pod", "pods")
            .with_status()
            .short_names(&["po"])
            .column(col("Ready", "string", "#pod.ready"))
            .column(col("Status", "string", ".status.phase"))
            .column(col("Restarts", "integer", "#pod.restarts"))
            .column(col("Age", "date", ".metadata.creationTimestamp"))
            .column(col("Node", "string", ".spec.nodeName").priority(1))
            .schema(schema_of::<Pod>())
            .selectable(&["spec.nodeName", "status.phase"]),
    ]
}

/// Lease, CustomResourceDefinition and drydock's LogicalCluster.
fn api_machinery() -> [ResourceDef; 3] {
    use k8s_openapi::api::coordination::v1::Lease;
    [
        ResourceDef::new("coordination.k8s.io", "v1", "Lease", "leases")
            .column(col("Holder", "string", ".spec.holderIdentity"))
            .schema(schema_of::<Lease>()),
        ResourceDef::new("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions")
            .cluster_scoped()
            .with_status()
            .short_names(&["crd", "crds"])
            .column(col("Created At", "date", ".metadata.creationTimestamp")),
        ResourceDef::new(TENANCY_GROUP, TENANCY_VERSION, LOGICAL_CLUSTER_KIND, LOGICAL_CLUSTER_PLURAL)
            .cluster_scoped()
            .with_status()
            .short_names(&["lc"])
            .column(col("Phase", "string", ".status.phase"))
            .column(col("URL", "string", ".status.url").priority(1)),
    ]
}

/// Registers the built-in kinds.
pub fn register(b: &mut RegistryBuilder) {
    for def in core_config().into_iter().chain([core_event()]).chain(core_workloads()).chain(api_machinery()) {
        b.add(def);
    }
    b.add_converted(
        ResourceDef::new("events.k8s.io", "v1", "Event", "events")
            .short_names(&["ev"])
            .column(col("Type", "string", ".type"))
            .column(col("Reason", "string", ".reason"))
            .column(col("Note", "string", ".note"))
            .selectable(&[
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "reason",
                "type",
            ]),
        "",
        "events",
        Conversion { to_storage: events_v1_to_core, from_storage: core_to_events_v1, field: event_field_to_core },
    );
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

    #[test]
    fn builtin_schemas_are_inline_objects() {
        let s = schema_of::<k8s_openapi::api::core::v1::ConfigMap>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["metadata"]["type"], "object");
        assert!(s["properties"]["metadata"]["properties"]["labels"].is_object());
    }
}
