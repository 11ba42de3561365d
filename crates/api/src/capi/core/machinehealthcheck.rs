//! MachineHealthCheck: marks Machines unhealthy from Node conditions so their owner remediates.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a MachineHealthCheck.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "MachineHealthCheck",
    namespaced,
    status = "MachineHealthCheckStatus",
    derive = "PartialEq",
    shortname = "mhc",
    shortname = "mhcs",
    category = "cluster-api",
    doc = "A MachineHealthCheck marks unhealthy Machines for remediation.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Number of machines currently monitored","jsonPath":".status.expectedMachines","name":"ExpectedMachines","type":"integer"}"#,
    printcolumn = r#"{"description":"Maximum number of unhealthy machines allowed","jsonPath":".spec.maxUnhealthy","name":"MaxUnhealthy","type":"string"}"#,
    printcolumn = r#"{"description":"Current observed healthy machines","jsonPath":".status.currentHealthy","name":"CurrentHealthy","type":"integer"}"#,
    printcolumn = r#"{"description":"Time duration since creation of MachineHealthCheck","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1))]
    pub cluster_name: String,
    /// Machines to check; must not be empty.
    pub selector: LabelSelector,
    /// Node conditions that make a Machine unhealthy once held for their timeout (ORed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_conditions: Option<Vec<UnhealthyCondition>>,
    /// Remediation stops when more Machines than this are unhealthy (default 100%).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unhealthy: Option<IntOrString>,
    /// Remediation happens only while the unhealthy count is in `[min-max]`; wins over maxUnhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_range: Option<String>,
    /// How long a Machine may go without a Node (default 10m; 0 disables; else at least 30s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout: Option<String>,
    /// Template for external remediation requests, instead of owner remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_template: Option<ObjectReference>,
}

/// A Node condition that counts as unhealthy after `timeout`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyCondition {
    /// Node condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[schemars(length(min = 1))]
    pub status: String,
    /// How long the condition must hold (Go duration).
    pub timeout: String,
}

/// Observed state of a MachineHealthCheck.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckStatus {
    /// Machines matched by the selector.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub expected_machines: Option<i32>,
    /// Machines judged healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub current_healthy: Option<i32>,
    /// Further Machines that may be remediated before the short-circuit trips.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub remediations_allowed: Option<i32>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Names of the checked Machines, sorted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

impl_has_conditions!(MachineHealthCheck);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(MachineHealthCheck);
