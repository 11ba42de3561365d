//! MachineHealthCheck v1beta2: what makes a Machine unhealthy is under `checks` (timeouts in
//! seconds, Machine conditions too), when and how to remediate under `remediation`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{UnhealthyMachineCondition, UnhealthyNodeCondition, VersionedTemplateReference};
use crate::capi::conditions::Condition;

/// Desired state of a MachineHealthCheck.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "MachineHealthCheck",
    namespaced,
    status = "MachineHealthCheckStatus",
    derive = "PartialEq",
    shortname = "mhc",
    shortname = "mhcs",
    category = "cluster-api",
    doc = "A MachineHealthCheck marks unhealthy Machines for remediation.",
    printcolumn = r#"{"description":"Cluster the MachineHealthCheck belongs to","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machines checked","jsonPath":".status.expectedMachines","name":"Replicas","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines found healthy","jsonPath":".status.currentHealthy","name":"Healthy","type":"integer"}"#,
    printcolumn = r#"{"description":"Status of the Paused condition","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Time since the MachineHealthCheck was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
    /// Machines to check; must not be empty.
    pub selector: LabelSelector,
    /// What makes a Machine unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<MachineHealthCheckChecks>,
    /// When and how unhealthy Machines are remediated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<MachineHealthCheckRemediation>,
}

/// What makes a Machine unhealthy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckChecks {
    /// How long a Machine may go without a Node (default 600; 0 disables; else at least 30).
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

/// When and how unhealthy Machines are remediated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckRemediation {
    /// Remediation happens only while the unhealthy Machines stay within these bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_if: Option<MachineHealthCheckRemediationTriggerIf>,
    /// Template for external remediation requests, instead of remediation by the owner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_ref: Option<VersionedTemplateReference>,
}

/// Bounds on the unhealthy Machines within which remediation happens.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckRemediationTriggerIf {
    /// Remediate only while at most this many Machines (int or percent) are unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_less_than_or_equal_to: Option<IntOrString>,
    /// Remediate only while the unhealthy count is in `[min-max]`; wins over the above.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub unhealthy_in_range: Option<String>,
}

/// Observed state of a MachineHealthCheck.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckStatus {
    /// Conditions of the MachineHealthCheck (RemediationAllowed, Paused).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Machines matched by the selector.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub expected_machines: Option<i32>,
    /// Machines judged healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub current_healthy: Option<i32>,
    /// Further Machines that may be remediated before remediation stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub remediations_allowed: Option<i32>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Names of the checked Machines, sorted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 10000))]
    pub targets: Option<Vec<String>>,
    /// What only v1beta1 reported, kept while clients move over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineHealthCheckDeprecatedStatus>,
}

/// Status fields only v1beta1 had.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineHealthCheckDeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineHealthCheckV1Beta1DeprecatedStatus>,
}

/// A MachineHealthCheck's v1beta1 conditions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineHealthCheckV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style, with severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

crate::capi::conditions::impl_has_deprecated_conditions!(MachineHealthCheck);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(MachineHealthCheck);
