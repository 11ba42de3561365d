//! Cluster v1beta2: contract-versioned references, `topology.classRef`, and a status with
//! `initialization`, a list of failure domains, replica counters for the control plane and
//! the workers, and the v1beta1 conditions under `deprecated.v1beta1`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::topology::Topology;
use crate::capi::common::{ConditionPolarity, ContractVersionedObjectReference, StatusVersion};
use crate::capi::conditions::Condition;

/// Desired state of a Cluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "Cluster",
    namespaced,
    status = "ClusterStatus",
    derive = "PartialEq",
    shortname = "cl",
    category = "cluster-api",
    doc = "A Cluster is a workload cluster: its network, infrastructure and control plane.",
    printcolumn = r#"{"description":"The ClusterClass the Cluster is shaped by, if any","jsonPath":".spec.topology.classRef.name","name":"ClusterClass","type":"string"}"#,
    printcolumn = r#"{"description":"Whether the Cluster is available","jsonPath":".status.conditions[?(@.type==\"Available\")].status","name":"Available","type":"string"}"#,
    printcolumn = r#"{"description":"Control-plane Machines wanted","jsonPath":".status.controlPlane.desiredReplicas","name":"CP Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Control-plane Machines that exist","jsonPath":".status.controlPlane.replicas","name":"CP Current","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Control-plane Machines that are ready","jsonPath":".status.controlPlane.readyReplicas","name":"CP Ready","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Control-plane Machines that are available","jsonPath":".status.controlPlane.availableReplicas","name":"CP Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Control-plane Machines with the current spec","jsonPath":".status.controlPlane.upToDateReplicas","name":"CP Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Worker Machines wanted","jsonPath":".status.workers.desiredReplicas","name":"W Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Worker Machines that exist","jsonPath":".status.workers.replicas","name":"W Current","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Worker Machines that are ready","jsonPath":".status.workers.readyReplicas","name":"W Ready","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Worker Machines that are available","jsonPath":".status.workers.availableReplicas","name":"W Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Worker Machines with the current spec","jsonPath":".status.workers.upToDateReplicas","name":"W Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Lifecycle phase of the Cluster","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the Cluster was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version of the topology","jsonPath":".spec.topology.version","name":"Version","type":"string"}"#
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
    pub control_plane_ref: Option<ContractVersionedObjectReference>,
    /// The infrastructure cluster object (e.g. an InMemoryCluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<ContractVersionedObjectReference>,
    /// Managed topology from a ClusterClass; cannot be removed once set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// Extra conditions the Cluster's Available condition depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub availability_gates: Option<Vec<ClusterAvailabilityGate>>,
}

/// Networks of a workload cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    /// Port the API server binds to (default 6443).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub api_server_port: Option<i32>,
    /// Service CIDRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<NetworkRanges>,
    /// Pod CIDRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<NetworkRanges>,
    /// DNS domain of services (e.g. `cluster.local`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub service_domain: Option<String>,
}

impl ClusterNetwork {
    /// Nothing set: v1beta2 leaves such a network out.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// A list of CIDR blocks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRanges {
    /// CIDR blocks, e.g. `10.0.0.0/16`.
    #[schemars(length(min = 1, max = 100))]
    pub cidr_blocks: Vec<String>,
}

/// Where a control plane's API server listens; either part may still be unknown.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIEndpoint {
    /// Hostname or IP address.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub host: Option<String>,
    /// TCP port.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

impl APIEndpoint {
    /// An endpoint is usable once both host and port are set.
    pub fn is_valid(&self) -> bool {
        self.host.as_deref().is_some_and(|h| !h.is_empty()) && self.port.is_some_and(|p| p != 0)
    }

    /// The host, empty while unknown.
    pub fn host(&self) -> &str {
        self.host.as_deref().unwrap_or_default()
    }

    /// The port, 0 while unknown.
    pub fn port(&self) -> i32 {
        self.port.unwrap_or_default()
    }
}

impl From<&crate::capi::common::APIEndpoint> for APIEndpoint {
    fn from(e: &crate::capi::common::APIEndpoint) -> Self {
        Self { host: (!e.host.is_empty()).then(|| e.host.clone()), port: (e.port != 0).then_some(e.port) }
    }
}

/// An additional condition the Cluster's availability depends on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAvailabilityGate {
    /// Condition type (in the Cluster's conditions) the gate looks at.
    #[schemars(length(min = 1, max = 316))]
    pub condition_type: String,
    /// Whether the condition counts when True (Positive, the default) or when False.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polarity: Option<ConditionPolarity>,
}

/// Observed state of a Cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Observations about this object (Available, InfrastructureReady, ...).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Milestones of the initial provisioning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<ClusterInitializationStatus>,
    /// Control-plane replica counters and versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ClusterReplicasStatus>,
    /// Worker replica counters and versions (MachineDeployments, MachinePools, standalone
    /// MachineSets and Machines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<ClusterReplicasStatus>,
    /// Failure domains reported by the infrastructure cluster, sorted by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub failure_domains: Option<Vec<FailureDomain>>,
    /// Pending, Provisioning, Provisioned, Deleting, Failed or Unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Pending", "Provisioning", "Provisioned", "Deleting", "Failed", "Unknown"]))]
    pub phase: Option<String>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Fields kept for clients of the older API version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<ClusterDeprecatedStatus>,
}

/// Milestones of a Cluster's initial provisioning; once true they stay true.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInitializationStatus {
    /// The infrastructure cluster reported itself provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// The control plane reported itself initialized (it can take API requests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

/// One failure domain.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomain {
    /// Name, unique in the list.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Control-plane Machines may be placed here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Provider-specific attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// Replica counters of the control plane or of the workers, with the versions they run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReplicasStatus {
    /// Replicas wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// Replicas that exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Replicas whose UpToDate condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Replicas whose Ready condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Replicas whose Available condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Kubernetes versions the replicas run, with how many run each.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub versions: Option<Vec<StatusVersion>>,
    /// Versions an ongoing upgrade still goes through, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub upgrade_plan: Option<Vec<ClusterUpgradeStep>>,
}

/// One step of an upgrade plan.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterUpgradeStep {
    /// Kubernetes version of the step.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
}

/// Status fields kept for clients of older API versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<ClusterV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions (with severity) and failure fields of a Cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Problem reported by a provider, machine-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Problem reported by a provider, human-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub failure_message: Option<String>,
}

impl_hub_status!(Cluster, ClusterInitializationStatus, ClusterV1Beta1DeprecatedStatus);

impl Cluster {
    /// `status.initialization.infrastructureProvisioned`.
    pub fn infrastructure_provisioned(&self) -> bool {
        self.initialization().and_then(|i| i.infrastructure_provisioned).unwrap_or(false)
    }

    /// `status.initialization.controlPlaneInitialized`: the control plane takes API requests.
    pub fn control_plane_initialized(&self) -> bool {
        self.initialization().and_then(|i| i.control_plane_initialized).unwrap_or(false)
    }
}
