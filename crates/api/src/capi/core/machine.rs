//! Machine: one node of a workload cluster, backed by an infrastructure machine and a
//! bootstrap config.

use k8s_openapi::api::core::v1::{NodeSystemInfo, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a Machine; also the `spec` of Machine templates in MachineSets,
/// MachineDeployments and MachinePools.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "Machine",
    namespaced,
    status = "MachineStatus",
    derive = "PartialEq",
    shortname = "ma",
    category = "cluster-api",
    doc = "A Machine is one node of a workload cluster.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Node name associated with this machine","jsonPath":".status.nodeRef.name","name":"NodeName","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"ProviderID","type":"string"}"#,
    printcolumn = r#"{"description":"Machine status such as Terminating/Pending/Running/Failed etc","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of Machine","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this Machine","jsonPath":".spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// Name of the Cluster this Machine belongs to. Immutable.
    #[schemars(length(min = 1))]
    pub cluster_name: String,
    /// How the node gets its bootstrap data.
    pub bootstrap: Bootstrap,
    /// The provider-specific machine object (e.g. an InMemoryMachine).
    pub infrastructure_ref: ObjectReference,
    /// Kubernetes version of the node, `vX.Y.Z`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Provider's identifier of the machine; must match the Node's `spec.providerID`.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Failure domain the machine runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Extra conditions that must be true for the Machine to count as ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// Upper bound on node drain time; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// Upper bound on waiting for volumes to detach; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long to keep retrying Node deletion once the infrastructure is gone (default 10s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
}

/// Where bootstrap data comes from: a bootstrap config object, or an existing secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// Bootstrap provider object (e.g. a KubeadmConfig) that produces the data secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_ref: Option<ObjectReference>,
    /// Name of the secret holding the bootstrap data, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_secret_name: Option<String>,
}

/// An additional condition the Machine's readiness depends on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineReadinessGate {
    /// Condition type (in the Machine's v1beta2 conditions) that must be true.
    #[schemars(length(min = 1, max = 316))]
    pub condition_type: String,
}

/// Observed state of a Machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// The Node of this Machine in the workload cluster, set once found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_ref: Option<ObjectReference>,
    /// System information reported by the Node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_info: Option<NodeSystemInfo>,
    /// When the phase last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// Terminal problem reported by a provider (machine-readable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Terminal problem reported by a provider (human-readable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Addresses copied from the infrastructure machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Pending, Provisioning, Provisioned, Running, Deleting, Failed (or Unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Expiry of the node's certificates (control-plane Machines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificates_expiry_date: Option<Time>,
    /// Bootstrap data is available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_ready: Option<bool>,
    /// The infrastructure machine is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_ready: Option<bool>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Progress of an ongoing deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionStatus>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// One address of a machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineAddress {
    /// Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.
    #[serde(rename = "type")]
    pub type_: String,
    /// The address value.
    pub address: String,
}

/// When the deletion steps of a Machine started.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletionStatus {
    /// Start of node drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_start_time: Option<Time>,
    /// Start of waiting for volumes to detach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for_node_volume_detach_start_time: Option<Time>,
}

/// Machine phases (`status.phase`).
pub mod machine_phase {
    pub const PENDING: &str = "Pending";
    pub const PROVISIONING: &str = "Provisioning";
    pub const PROVISIONED: &str = "Provisioned";
    pub const RUNNING: &str = "Running";
    pub const DELETING: &str = "Deleting";
    pub const DELETED: &str = "Deleted";
    pub const FAILED: &str = "Failed";
    pub const UNKNOWN: &str = "Unknown";
}

impl_has_conditions!(Machine);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(Machine);

/// Template for Machines created by a MachineSet, MachineDeployment or MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTemplateSpec {
    /// Labels and annotations of created Machines.
    #[serde(default, skip_serializing_if = "crate::capi::common::ObjectMeta::is_empty")]
    pub metadata: crate::capi::common::ObjectMeta,
    /// Spec of created Machines.
    #[serde(default)]
    pub spec: MachineSpec,
}
