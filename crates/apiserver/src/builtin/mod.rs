//! The built-in kinds: every resource a Kubernetes 1.33 kube-apiserver serves without
//! feature gates (except the create-only reviews, of which `http/review.rs` answers
//! SelfSubjectReview, and read-only component statuses), plus
//! CustomResourceDefinition and drydock's LogicalCluster (one per hosted API "cluster").
//!
//! Most kinds are rows of per-group tables ([`kind::Kind`]); `defaults` holds the
//! defaulting and validation kube-apiserver applies to them, `services` the Service IP
//! and node port allocation.

mod admissionregistration;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod config_data;
mod core;
pub mod defaults;
mod discovery;
mod events;
mod flowcontrol;
mod kind;
mod networking;
mod policy;
mod rbac;
mod scheduling;
pub mod services;
mod storage;

use drydock_api::tenancy::{LOGICAL_CLUSTER_KIND, LOGICAL_CLUSTER_PLURAL, TENANCY_GROUP, TENANCY_VERSION};
use drydock_api::{PrinterColumn, ResourceDef};

use crate::registry::RegistryBuilder;
use kind::schema_of;

/// API groups whose kinds are built in (not custom resources): strategic merge patch
/// applies to them, and their updates need no resourceVersion.
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apps",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// Whether `group` is one of Kubernetes' own API groups served here.
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// Computed printer columns are named with a leading `#` (see `http/table`).
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
            .selectable(&["type"])
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
            .column(col("Created At", "date", "#createdAt")),
        ResourceDef::new(TENANCY_GROUP, TENANCY_VERSION, LOGICAL_CLUSTER_KIND, LOGICAL_CLUSTER_PLURAL)
            .cluster_scoped()
            .with_status()
            .short_names(&["lc"])
            .column(col("Phase", "string", ".status.phase"))
            .column(col("URL", "string", ".status.url").priority(1)),
    ]
}

/// The group tables, in the order discovery lists them.
const TABLES: &[&[kind::Kind]] = &[
    core::KINDS,
    apps::KINDS,
    batch::KINDS,
    rbac::KINDS,
    networking::KINDS,
    discovery::KINDS,
    policy::KINDS,
    storage::KINDS,
    scheduling::KINDS,
    certificates::KINDS,
    admissionregistration::KINDS,
    flowcontrol::KINDS,
];

/// Registers the built-in kinds.
pub fn register(b: &mut RegistryBuilder) {
    for def in core_config().into_iter().chain([core_event()]) {
        b.add(def);
    }
    for k in TABLES.iter().flat_map(|t| t.iter()) {
        b.add(k.def());
    }
    b.add(autoscaling::V2.def());
    b.add_converted(autoscaling::V1.def(), "autoscaling", "horizontalpodautoscalers", autoscaling::conversion());
    for def in api_machinery() {
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
        events::conversion(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn builtin_schemas_are_inline_objects() {
        let s: Value = schema_of::<k8s_openapi::api::core::v1::ConfigMap>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["metadata"]["type"], "object");
        assert!(s["properties"]["metadata"]["properties"]["labels"].is_object());
    }

    #[test]
    fn every_table_row_is_complete_and_unique() {
        let mut b = crate::registry::Registry::builder(crate::store::ResIds::new());
        register(&mut b);
        let reg = b.build().expect("registry builds");
        for r in reg.all() {
            let d = &r.def;
            assert!(!d.kind.is_empty() && !d.plural.is_empty(), "{d:?}");
            assert!(is_builtin_group(&d.group) || d.group == TENANCY_GROUP, "{d:?}");
        }
        assert!(reg.lookup("apps", "v1", "deployments").is_some_and(|r| r.def.scale.is_some()));
        assert!(reg.lookup("autoscaling", "v1", "horizontalpodautoscalers").is_some());
    }
}
