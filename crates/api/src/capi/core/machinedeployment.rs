//! MachineDeployment: declarative rollouts of Machines through MachineSets.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use super::machineset::MachineSetDeletePolicy;
use crate::capi::common::{MachineNamingStrategy, V1Beta2ReplicaStatus};
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a MachineDeployment.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
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
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Total number of machines desired by this MachineDeployment","jsonPath":".spec.replicas","name":"Desired","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of non-terminated machines targeted by this MachineDeployment","jsonPath":".status.replicas","name":"Replicas","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of ready machines targeted by this MachineDeployment","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of non-terminated machines targeted by this deployment that have the desired template spec","jsonPath":".status.updatedReplicas","name":"Updated","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of unavailable machines targeted by this MachineDeployment","jsonPath":".status.unavailableReplicas","name":"Unavailable","type":"integer"}"#,
    printcolumn = r#"{"description":"MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of MachineDeployment","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this MachineDeployment","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1))]
    pub cluster_name: String,
    /// Number of Machines wanted (defaulted by admission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// A time after which every Machine created earlier is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// MachineSets and Machines this deployment manages; must match the template labels.
    // Optional on input: admission fills an empty selector (manifests usually omit it).
    #[serde(default, skip_serializing_if = "crate::selector::is_empty")]
    pub selector: LabelSelector,
    /// Template of the Machines to create.
    pub template: MachineTemplateSpec,
    /// How old Machines are replaced by new ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
    /// Seconds a new Machine's Node must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Old MachineSets to keep for rollback (deprecated; default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Stops rollouts (scaling and in-place propagation continue).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Deprecated and unused (default 600).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

/// Rollout strategy of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStrategy {
    /// RollingUpdate (default) or OnDelete.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<MachineDeploymentStrategyType>,
    /// Parameters of a rolling update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<MachineRollingUpdateDeployment>,
    /// Limits on concurrent remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<RemediationStrategy>,
}

/// How a MachineDeployment replaces Machines.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum MachineDeploymentStrategyType {
    /// Create new Machines and delete old ones within surge/unavailability bounds.
    RollingUpdate,
    /// Replace a Machine only after the user deletes it.
    OnDelete,
}

/// Bounds of a rolling update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineRollingUpdateDeployment {
    /// Machines that may be unavailable during the update (int or percent, rounded down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired count (int or percent, rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Which Machines go first when old MachineSets shrink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_policy: Option<MachineSetDeletePolicy>,
}

/// Remediation limits of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemediationStrategy {
    /// Machines that may be remediated at once (int or percent of replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
}

/// Observed state of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Selector in query-string form, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Machines of all MachineSets, deleting ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines of the current MachineSet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// Machines whose Node is Ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines ready for at least minReadySeconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Desired Machines that are not available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
    /// ScalingUp, ScalingDown, Running, Failed or Unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2ReplicaStatus>,
}

impl_has_conditions!(MachineDeployment);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(MachineDeployment);
