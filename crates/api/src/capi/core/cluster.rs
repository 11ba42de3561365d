//! Cluster: a workload cluster, tying together its infrastructure and control plane.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::topology::Topology;
use crate::capi::common::APIEndpoint;
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a Cluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "Cluster",
    namespaced,
    status = "ClusterStatus",
    derive = "PartialEq",
    shortname = "cl",
    category = "cluster-api",
    doc = "A Cluster is a workload cluster: its network, infrastructure and control plane.",
    printcolumn = r#"{"description":"ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass","jsonPath":".spec.topology.class","name":"ClusterClass","type":"string"}"#,
    printcolumn = r#"{"description":"Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of Cluster","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this Cluster","jsonPath":".spec.topology.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Stops every controller from reconciling this Cluster and its objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Pod and service networks of the workload cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_network: Option<ClusterNetwork>,
    /// Address of the API server; filled from the infrastructure or control plane if unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<APIEndpoint>,
    /// The control plane object (e.g. a KubeadmControlPlane).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_ref: Option<ObjectReference>,
    /// The infrastructure cluster object (e.g. an InMemoryCluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<ObjectReference>,
    /// Managed topology from a ClusterClass; cannot be removed once set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// Extra conditions that must be true for the Cluster to count as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub availability_gates: Option<Vec<ClusterAvailabilityGate>>,
}

/// Networks of a workload cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    /// Port the API server binds to (default 6443).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server_port: Option<i32>,
    /// Service CIDRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<NetworkRanges>,
    /// Pod CIDRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<NetworkRanges>,
    /// DNS domain of services (e.g. `cluster.local`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_domain: Option<String>,
}

/// A list of CIDR blocks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRanges {
    /// CIDR blocks, e.g. `10.0.0.0/16`.
    pub cidr_blocks: Vec<String>,
}

/// An additional condition the Cluster's availability depends on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAvailabilityGate {
    /// Condition type (in the Cluster's v1beta2 conditions) that must be true.
    #[schemars(length(min = 1, max = 316))]
    pub condition_type: String,
}

/// Observed state of a Cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Failure domains reported by the infrastructure cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<BTreeMap<String, FailureDomainSpec>>,
    /// Terminal problem, machine-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Terminal problem, human-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Pending, Provisioning, Provisioned, Deleting, Failed (or Unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The infrastructure cluster is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_ready: Option<bool>,
    /// The control plane is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_ready: Option<bool>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<ClusterV1Beta2Status>,
}

/// One failure domain.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomainSpec {
    /// Control-plane Machines may be placed here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Provider-specific attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// v1beta2 status of a Cluster: newer conditions and replica counters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterV1Beta2Status {
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>>,
    /// Control-plane replica counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ClusterReplicaCounters>,
    /// Worker replica counters (MachineDeployments, MachinePools, standalone MachineSets/Machines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<ClusterReplicaCounters>,
}

/// Replica counters reported on a Cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReplicaCounters {
    /// Replicas wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// Replicas that exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Replicas with the current spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Replicas whose Node is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Replicas ready for at least minReadySeconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
}

/// Cluster phases (`status.phase`).
pub mod cluster_phase {
    pub const PENDING: &str = "Pending";
    pub const PROVISIONING: &str = "Provisioning";
    pub const PROVISIONED: &str = "Provisioned";
    pub const DELETING: &str = "Deleting";
    pub const FAILED: &str = "Failed";
    pub const UNKNOWN: &str = "Unknown";
}

impl_has_conditions!(Cluster);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(Cluster);
