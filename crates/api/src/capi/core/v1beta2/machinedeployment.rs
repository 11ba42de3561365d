//! MachineDeployment v1beta2: `rolloutAfter` and `strategy` became `rollout`, the strategy's
//! remediation `remediation`, its delete policy `deletion.order`; `minReadySeconds` moved into
//! the Machine template; `revisionHistoryLimit` and `progressDeadlineSeconds` are gone.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use super::machineset::MachineSetDeletionSpec;
use crate::capi::common::{MachineNamingStrategy, StatusVersion};
use crate::capi::conditions::Condition;
use crate::capi::core::MachineDeploymentStrategyType;

/// Desired state of a MachineDeployment.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "MachineDeployment",
    namespaced,
    status = "MachineDeploymentStatus",
    derive = "PartialEq",
    shortname = "md",
    category = "cluster-api",
    doc = "A MachineDeployment rolls out Machines declaratively through MachineSets.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn = r#"{"description":"Cluster the MachineDeployment belongs to","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Status of the Available condition","jsonPath":".status.conditions[?(@.type==\"Available\")].status","name":"Available","type":"string"}"#,
    printcolumn = r#"{"description":"Machines wanted","jsonPath":".spec.replicas","name":"Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines that exist","jsonPath":".status.replicas","name":"Current","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Ready condition is True","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Available condition is True","jsonPath":".status.availableReplicas","name":"Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose UpToDate condition is True","jsonPath":".status.upToDateReplicas","name":"Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Status of the Paused condition","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Lifecycle phase of the MachineDeployment","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the MachineDeployment was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version of the Machines","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
    /// Number of Machines wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// MachineSets and Machines this deployment manages; must match the template labels.
    // Optional on input, as in v1beta1: admission fills it from the template labels.
    #[serde(default, skip_serializing_if = "crate::selector::is_empty")]
    pub selector: LabelSelector,
    /// Template of the Machines to create.
    pub template: MachineTemplateSpec,
    /// How and when Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<MachineDeploymentRolloutSpec>,
    /// Limits on remediation of unhealthy Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<MachineDeploymentRemediationSpec>,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming: Option<MachineNamingStrategy>,
    /// How Machines are picked for deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineSetDeletionSpec>,
    /// Stops rollouts (scaling continues).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// Rollout settings of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRolloutSpec {
    /// A time after which every Machine created earlier is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
    /// How old Machines are replaced by new ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentRolloutStrategy>,
}

/// How a MachineDeployment replaces Machines.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRolloutStrategy {
    /// RollingUpdate or OnDelete.
    #[serde(rename = "type")]
    pub type_: MachineDeploymentStrategyType,
    /// Bounds of a rolling update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<MachineDeploymentRolloutStrategyRollingUpdate>,
}

/// Bounds of a rolling update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRolloutStrategyRollingUpdate {
    /// Machines that may be unavailable during the update (int or percent, rounded down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired count (int or percent, rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Remediation limits of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRemediationSpec {
    /// Machines that may be remediated at once (int or percent of replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
}

/// Observed state of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    /// Conditions of the MachineDeployment (Available, MachinesReady, RollingOut, ...).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Selector in query-string form, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub selector: Option<String>,
    /// Machines of all MachineSets, deleting ones included.
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
    /// ScalingUp, ScalingDown, Running, Failed or Unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["ScalingUp", "ScalingDown", "Running", "Failed", "Unknown"]))]
    pub phase: Option<String>,
    /// What only v1beta1 reported, kept while clients move over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineDeploymentDeprecatedStatus>,
}

/// Status fields only v1beta1 had.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineDeploymentDeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineDeploymentV1Beta1DeprecatedStatus>,
}

/// A MachineDeployment's v1beta1 conditions and counters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style, with severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Machines of the current MachineSet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// Machines whose Node is Ready (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines ready for at least minReadySeconds (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Desired Machines that are not available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
}

impl_hub_conditions!(MachineDeployment, MachineDeploymentV1Beta1DeprecatedStatus);
