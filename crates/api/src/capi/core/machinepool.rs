//! MachinePool: a group of machines managed as one by the infrastructure provider.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use crate::capi::common::V1Beta2ReplicaStatus;
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a MachinePool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "MachinePool",
    namespaced,
    status = "MachinePoolStatus",
    derive = "PartialEq",
    shortname = "mp",
    category = "cluster-api",
    doc = "A MachinePool is a group of machines the infrastructure provider scales as one.",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"),
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Total number of machines desired by this MachinePool","jsonPath":".spec.replicas","name":"Desired","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"MachinePool replicas count","jsonPath":".status.replicas","name":"Replicas","type":"string"}"#,
    printcolumn = r#"{"description":"MachinePool status such as Terminating/Pending/Provisioning/Running/Failed etc","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of MachinePool","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this MachinePool","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1))]
    pub cluster_name: String,
    /// Number of machines wanted (defaulted by admission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Template of the pool's machines.
    pub template: MachineTemplateSpec,
    /// Seconds a new node must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Provider IDs of the pool's instances, as reported by the provider.
    #[serde(rename = "providerIDList", skip_serializing_if = "Option::is_none")]
    pub provider_id_list: Option<Vec<String>>,
    /// Failure domains the pool may place machines in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<Vec<String>>,
}

/// Observed state of a MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatus {
    /// Nodes of the pool's instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_refs: Option<Vec<ObjectReference>>,
    /// Replicas that exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Replicas whose Node is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Replicas ready for at least minReadySeconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Desired replicas that are not available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
    /// Terminal problem, machine-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Terminal problem, human-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Pending, Provisioning, Provisioned, Running, ScalingUp, ScalingDown, Scaling, Deleting, Failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Bootstrap data is available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_ready: Option<bool>,
    /// The infrastructure is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_ready: Option<bool>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2ReplicaStatus>,
}

impl_has_conditions!(MachinePool);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(MachinePool);
