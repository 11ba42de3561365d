//! MachineSet v1beta2: `deletePolicy` became `deletion.order`, `machineNamingStrategy`
//! `machineNaming`, `minReadySeconds` moved into the Machine template; the replica counters
//! follow Machine conditions, the old ones are kept under `deprecated.v1beta1`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use crate::capi::common::{MachineNamingStrategy, StatusVersion};
use crate::capi::conditions::Condition;
use crate::capi::core::MachineSetDeletePolicy;

/// Desired state of a MachineSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "MachineSet",
    namespaced,
    status = "MachineSetStatus",
    derive = "PartialEq",
    shortname = "ms",
    category = "cluster-api",
    doc = "A MachineSet keeps a number of identical Machines running.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn = r#"{"description":"Cluster the MachineSet belongs to","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machines wanted","jsonPath":".spec.replicas","name":"Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines that exist","jsonPath":".status.replicas","name":"Current","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Ready condition is True","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Available condition is True","jsonPath":".status.availableReplicas","name":"Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose UpToDate condition is True","jsonPath":".status.upToDateReplicas","name":"Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Status of the Paused condition","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Time since the MachineSet was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version of the Machines","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
    /// Number of Machines wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines this set owns; must match the template labels.
    // Optional on input, as in v1beta1: admission fills it from the template labels.
    #[serde(default, skip_serializing_if = "crate::selector::is_empty")]
    pub selector: LabelSelector,
    /// Template of the Machines to create.
    pub template: MachineTemplateSpec,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming: Option<MachineNamingStrategy>,
    /// How Machines are picked for deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineSetDeletionSpec>,
}

/// Deletion settings of a MachineSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetDeletionSpec {
    /// Which Machines go first on scale down (Random, Newest or Oldest; default Random).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<MachineSetDeletePolicy>,
}

/// Observed state of a MachineSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetStatus {
    /// Conditions of the MachineSet (MachinesReady, MachinesUpToDate, ScalingUp, ...).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Selector in query-string form, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub selector: Option<String>,
    /// Machines owned by this set, deleting ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines whose Ready condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Machines whose UpToDate condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Kubernetes versions of the Machines, with how many run each.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub versions: Option<Vec<StatusVersion>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// What only v1beta1 reported, kept while clients move over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineSetDeprecatedStatus>,
}

/// Status fields only v1beta1 had.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineSetDeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineSetV1Beta1DeprecatedStatus>,
}

/// A MachineSet's v1beta1 conditions, failure fields and counters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style, with severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Never set by the controller; kept for API compatibility.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Never set by the controller; kept for API compatibility.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub failure_message: Option<String>,
    /// Machines whose labels include all template labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fully_labeled_replicas: Option<i32>,
    /// Machines whose Node is Ready (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines ready for at least minReadySeconds (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
}

impl_hub_conditions!(MachineSet, MachineSetV1Beta1DeprecatedStatus);
