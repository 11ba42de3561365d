//! `Cluster.spec.topology`: a Cluster shaped by a ClusterClass.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clusterclass::{MachineHealthCheckClass, MachineTimeouts, WorkerMachineLimits, Workers};
use super::machinedeployment::MachineDeploymentStrategy;
use crate::capi::common::ObjectMeta;

/// The ClusterClass a Cluster uses and the values it fills in.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// Name of the ClusterClass.
    pub class: String,
    /// Namespace of the ClusterClass (default: the Cluster's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub class_namespace: Option<String>,
    /// Kubernetes version of the cluster, `vX.Y.Z`.
    pub version: String,
    /// A time after which every Machine created earlier is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// Control-plane settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlaneTopology>,
    /// Worker MachineDeployments and MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersTopology>,
    /// Values of the ClusterClass variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<ClusterVariable>>,
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
    /// Health check of the control-plane Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(flatten)]
    pub timeouts: MachineTimeouts,
    /// Variable values for the control plane only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// Worker part of a topology.
pub type WorkersTopology = Workers<MachineDeploymentTopology, MachinePoolTopology>;

/// One MachineDeployment of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopology {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// MachineDeployment class in the ClusterClass.
    pub class: String,
    /// Unique name within the topology.
    pub name: String,
    /// Failure domain the Machines are placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Number of Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// Deletion limits and readiness wait of the Machines.
    #[serde(flatten)]
    pub machines: WorkerMachineLimits,
    /// Rollout strategy of the MachineDeployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
    /// Variable values for this MachineDeployment only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// One MachinePool of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolTopology {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// MachinePool class in the ClusterClass.
    pub class: String,
    /// Unique name within the topology.
    pub name: String,
    /// Failure domains the machines may be placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<Vec<String>>,
    /// Deletion limits and readiness wait of the Machines.
    #[serde(flatten)]
    pub machines: WorkerMachineLimits,
    /// Number of Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Variable values for this MachinePool only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// A MachineHealthCheck generated for part of a topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckTopology {
    /// Create the health check (default: when the class defines one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable: Option<bool>,
    /// The health check itself.
    #[serde(flatten)]
    pub checks: MachineHealthCheckClass,
}

/// Variable values overriding the Cluster-wide ones for one part of the topology.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableOverrides {
    /// Variable values that replace the Cluster-wide ones here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrides: Option<Vec<ClusterVariable>>,
}

/// The value of one ClusterClass variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVariable {
    /// Variable name.
    pub name: String,
    /// Which definition the value is for, when several patches define the same name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definition_from: Option<String>,
    /// Any JSON value matching the variable's schema.
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub value: Value,
}
