//! MachineSet: keeps a number of identical Machines running.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use crate::capi::common::{MachineNamingStrategy, V1Beta2ReplicaStatus};
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a MachineSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
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
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Total number of machines desired by this machineset","jsonPath":".spec.replicas","name":"Desired","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of non-terminated machines targeted by this machineset","jsonPath":".status.replicas","name":"Replicas","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of ready machines targeted by this machineset.","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of available machines (ready for at least minReadySeconds)","jsonPath":".status.availableReplicas","name":"Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Time duration since creation of MachineSet","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this MachineSet","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1))]
    pub cluster_name: String,
    /// Number of Machines wanted (defaulted by admission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Seconds a new Machine's Node must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Which Machines go first on scale down (default Random).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_policy: Option<MachineSetDeletePolicy>,
    /// Machines this set owns; must match the template labels.
    // Optional on input: admission fills an empty selector (manifests usually omit it).
    #[serde(default, skip_serializing_if = "crate::selector::is_empty")]
    pub selector: LabelSelector,
    /// Template of the Machines to create.
    #[serde(default)]
    pub template: MachineTemplateSpec,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
}

/// Order in which Machines are deleted on scale down.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum MachineSetDeletePolicy {
    /// Prefer annotated and unhealthy Machines, then any.
    Random,
    /// Prefer the newest Machines.
    Newest,
    /// Prefer the oldest Machines.
    Oldest,
}

/// Observed state of a MachineSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetStatus {
    /// Selector in query-string form, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Machines owned by this set, deleting ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines whose labels include all template labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fully_labeled_replicas: Option<i32>,
    /// Machines whose Node is Ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines ready for at least minReadySeconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Never set by the controller; kept for API compatibility.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Never set by the controller; kept for API compatibility.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2ReplicaStatus>,
}

impl_has_conditions!(MachineSet);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(MachineSet);
