//! `Cluster.spec.topology` v1beta2: a Cluster shaped by a ClusterClass (`classRef`), with
//! health checks, rollout and deletion settings grouped as in the other v1beta2 kinds.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::{MachineDeletionSpec, MachineReadinessGate};
use crate::capi::common::{
    MachineTaint, ObjectMeta, UnhealthyMachineCondition, UnhealthyNodeCondition, VersionedTemplateReference,
};
use crate::capi::core::{MachineDeploymentStrategyType, MachineSetDeletePolicy};

/// The ClusterClass a Cluster uses and the values it fills in.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The ClusterClass.
    pub class_ref: ClusterClassRef,
    /// Kubernetes version of the cluster, `vX.Y.Z`.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
    /// Control-plane settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlaneTopology>,
    /// Worker MachineDeployments and MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersTopology>,
    /// Values of the ClusterClass variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub variables: Option<Vec<ClusterVariable>>,
}

/// Name and namespace of a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassRef {
    /// Name of the ClusterClass.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Namespace of the ClusterClass (default: the Cluster's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub namespace: Option<String>,
}

/// Control-plane part of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneTopology {
    /// Labels and annotations for the control plane and its Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Number of control-plane Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// When every control-plane Machine is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<ControlPlaneTopologyRollout>,
    /// Health check of the control-plane Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<ControlPlaneTopologyHealthCheck>,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Extra conditions the Machines' Ready condition depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
    /// Variable values for the control plane only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// Rollout of a topology's control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneTopologyRollout {
    /// Machines created before this time are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
}

/// Worker part of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersTopology {
    /// MachineDeployments.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2000))]
    pub machine_deployments: Option<Vec<MachineDeploymentTopology>>,
    /// MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2000))]
    pub machine_pools: Option<Vec<MachinePoolTopology>>,
}

/// One MachineDeployment of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopology {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// MachineDeployment class in the ClusterClass.
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// Unique name within the topology.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// Failure domain the Machines are placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Number of Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineDeploymentTopologyHealthCheck>,
    /// Node drain, volume detach and Node deletion limits, and which Machines go first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<TopologyMachineDeploymentDeletion>,
    /// Seconds a new Machine must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_ready_seconds: Option<i32>,
    /// Extra conditions the Machines' Ready condition depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// How and when Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<MachineDeploymentTopologyRollout>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
    /// Variable values for this MachineDeployment only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// Rollout of a topology's MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopologyRollout {
    /// Machines created before this time are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
    /// How Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<TopologyRolloutStrategy>,
}

/// One MachinePool of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolTopology {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// MachinePool class in the ClusterClass.
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// Unique name within the topology.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// Failure domains the machines may be placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub failure_domains: Option<Vec<String>>,
    /// Node drain, volume detach and Node deletion limits of the machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Seconds a new machine must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_ready_seconds: Option<i32>,
    /// Number of machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Taints the machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
    /// Variable values for this MachinePool only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// Limits on deleting a MachineDeployment's Machines, and which Machines go first when it
/// scales down.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyMachineDeploymentDeletion {
    /// Random, Newest or Oldest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<MachineSetDeletePolicy>,
    /// Upper bound on node drain time; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_drain_timeout_seconds: Option<i32>,
    /// Upper bound on waiting for volumes to detach; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_volume_detach_timeout_seconds: Option<i32>,
    /// How long Node deletion is retried once the infrastructure is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_deletion_timeout_seconds: Option<i32>,
}

/// How a MachineDeployment's Machines are replaced.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyRolloutStrategy {
    /// RollingUpdate or OnDelete.
    #[serde(rename = "type")]
    pub type_: MachineDeploymentStrategyType,
    /// Bounds of a rolling update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<TopologyRollingUpdate>,
}

/// Bounds of a rolling update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyRollingUpdate {
    /// Machines that may be unavailable during the update (int or percent, rounded down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired count (int or percent, rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Health check of a topology's control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneTopologyHealthCheck {
    /// Create the health check (default: when the class or this topology defines checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// When a Machine is unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<TopologyHealthCheckChecks>,
    /// What happens to unhealthy Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<ControlPlaneHealthCheckRemediation>,
}

/// Health check of a topology's MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopologyHealthCheck {
    /// Create the health check (default: when the class or this topology defines checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// When a Machine is unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<TopologyHealthCheckChecks>,
    /// What happens to unhealthy Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<WorkerHealthCheckRemediation>,
}

/// When a Machine counts as unhealthy (ClusterClass and topology health checks).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyHealthCheckChecks {
    /// How long a Machine may go without a Node (0 disables the check).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_startup_timeout_seconds: Option<i32>,
    /// Node conditions that make a Machine unhealthy once held for their timeout (ORed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub unhealthy_node_conditions: Option<Vec<UnhealthyNodeCondition>>,
    /// Machine conditions that make a Machine unhealthy once held for their timeout (ORed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub unhealthy_machine_conditions: Option<Vec<UnhealthyMachineCondition>>,
}

/// Remediation of unhealthy control-plane Machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneHealthCheckRemediation {
    /// When remediation happens at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_if: Option<TopologyRemediationTriggerIf>,
    /// Template for external remediation requests, instead of owner remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_ref: Option<VersionedTemplateReference>,
}

/// Remediation of unhealthy worker Machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerHealthCheckRemediation {
    /// Machines that may be remediated at once (int or percent of replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
    /// When remediation happens at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_if: Option<TopologyRemediationTriggerIf>,
    /// Template for external remediation requests, instead of owner remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_ref: Option<VersionedTemplateReference>,
}

/// Bounds on the number of unhealthy Machines within which remediation happens.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyRemediationTriggerIf {
    /// Remediate only while at most this many Machines are unhealthy (int or percent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_less_than_or_equal_to: Option<IntOrString>,
    /// Remediate only while the unhealthy count is within `[min-max]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub unhealthy_in_range: Option<String>,
}

/// Variable values overriding the Cluster-wide ones for one part of the topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableOverrides {
    /// Variable values that replace the Cluster-wide ones here.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub overrides: Option<Vec<ClusterVariable>>,
}

/// The value of one ClusterClass variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVariable {
    /// Variable name.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Any JSON value matching the variable's schema.
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub value: Value,
}
