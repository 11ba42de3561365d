//! KubeadmControlPlane (v1beta2): the infrastructure reference, readiness gates, deletion
//! timeouts and taints of the Machines live under `machineTemplate.spec`; rollout and
//! remediation settings are grouped; status reports initialization and counters based on
//! Machine conditions.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use crate::capi::common::{
    ContractVersionedObjectReference, MachineNamingStrategy, MachineTaint, ObjectMeta, StatusVersion,
};
use crate::capi::conditions::Condition;
use crate::capi::core::v1beta2::{MachineDeletionSpec, MachineReadinessGate};

/// Desired state of a KubeadmControlPlane.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "KubeadmControlPlane",
    namespaced,
    status = "KubeadmControlPlaneStatus",
    derive = "PartialEq",
    shortname = "kcp",
    category = "cluster-api",
    doc = "A KubeadmControlPlane manages the control-plane Machines of a Cluster.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn = r#"{"description":"Cluster the control plane belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Whether the control plane is available","jsonPath":".status.conditions[?(@.type==\"Available\")].status","name":"Available","type":"string"}"#,
    printcolumn = r#"{"description":"Machines wanted","jsonPath":".spec.replicas","name":"Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines that exist","jsonPath":".status.replicas","name":"Current","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Ready condition is true","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Available condition is true","jsonPath":".status.availableReplicas","name":"Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose UpToDate condition is true","jsonPath":".status.upToDateReplicas","name":"Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether kubeadm init has completed","jsonPath":".status.initialization.controlPlaneInitialized","name":"Initialized","type":"boolean"}"#,
    printcolumn = r#"{"description":"Time since creation","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version wanted","jsonPath":".spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneSpec {
    /// Number of control-plane Machines (default 1; odd with stacked etcd).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Kubernetes version, `vX.Y.Z`; upgrades go one minor at a time.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
    /// Template of the control-plane Machines.
    pub machine_template: KubeadmControlPlaneMachineTemplate,
    /// kubeadm settings of the control-plane nodes.
    #[serde(default, skip_serializing_if = "KubeadmConfigSpec::is_empty")]
    pub kubeadm_config_spec: KubeadmConfigSpec,
    /// When and how Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<KubeadmControlPlaneRollout>,
    /// Retry limits of Machine remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<KubeadmControlPlaneRemediation>,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming: Option<MachineNamingStrategy>,
}

crate::capi::conditions::impl_has_deprecated_conditions!(KubeadmControlPlane);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(KubeadmControlPlane);

impl KubeadmControlPlaneSpec {
    /// Whether etcd runs outside the control plane Machines (no stacked members to keep in
    /// quorum, any replica count allowed).
    pub fn has_external_etcd(&self) -> bool {
        self.kubeadm_config_spec
            .cluster_configuration
            .as_ref()
            .and_then(|c| c.etcd.as_ref())
            .is_some_and(|e| e.external.is_some())
    }
}

/// Template of control-plane Machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneMachineTemplate {
    /// Labels and annotations of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec fields of the Machines.
    pub spec: KubeadmControlPlaneMachineTemplateSpec,
}

/// The Machine spec fields a control plane sets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneMachineTemplateSpec {
    /// Infrastructure machine template cloned for each Machine.
    pub infrastructure_ref: ContractVersionedObjectReference,
    /// Extra conditions that must hold before a Machine counts as Ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// Node drain, volume detach and Node deletion limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}

/// When and how control-plane Machines are replaced.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneRollout {
    /// Replace every Machine created before this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
    /// Replace Machines before their certificates expire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<KubeadmControlPlaneRolloutBefore>,
    /// How Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<KubeadmControlPlaneRolloutStrategy>,
}

/// Certificate-driven rollout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneRolloutBefore {
    /// Replace Machines whose certificates expire within this many days (at least 7).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 7))]
    pub certificates_expiry_days: Option<i32>,
}

/// How control-plane Machines are replaced.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneRolloutStrategy {
    /// The only strategy: RollingUpdate.
    #[serde(rename = "type")]
    pub type_: KubeadmControlPlaneRolloutStrategyType,
    /// Bounds of a rolling update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<KubeadmControlPlaneRollingUpdate>,
}

/// Rollout strategies of a control plane.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum KubeadmControlPlaneRolloutStrategyType {
    /// Replace Machines one at a time.
    #[default]
    RollingUpdate,
}

/// Rolling update bounds of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneRollingUpdate {
    /// Extra Machines during a rollout: 1 (default) or 0 (scale in first, needs 3+ replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Retry limits of control-plane remediation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneRemediation {
    /// Retries of a failing Machine's replacement (unset: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<i32>,
    /// Wait between retries, in seconds (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub retry_period_seconds: Option<i32>,
    /// A replacement healthy for this many seconds ends the retry sequence (default 3600).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_healthy_period_seconds: Option<i32>,
}

/// Observed state of a KubeadmControlPlane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneStatus {
    /// Observations about this object (Available, Initialized, MachinesReady, ...).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Initial provisioning, as the control plane contract reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<KubeadmControlPlaneInitializationStatus>,
    /// Selector of the control-plane Machines, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub selector: Option<String>,
    /// Machines owned, deleting ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines whose Ready condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Machines whose UpToDate condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Lowest Kubernetes version among the Machines (deprecated: see `versions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub version: Option<String>,
    /// Kubernetes versions of the Machines, with how many run each.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub versions: Option<Vec<StatusVersion>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// The last remediation done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_remediation: Option<LastRemediationStatus>,
    /// Fields kept for v1beta1 clients, to be removed with v1beta1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<KubeadmControlPlaneDeprecatedStatus>,
}

/// Initial provisioning of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneInitializationStatus {
    /// kubeadm init has completed and the cluster can be joined (never reset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

/// The last remediation of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastRemediationStatus {
    /// Machine that was remediated.
    #[schemars(length(min = 1, max = 253))]
    pub machine: String,
    /// When the remediation started.
    pub time: Time,
    /// Retries so far in the current sequence.
    #[schemars(range(min = 0))]
    pub retry_count: i32,
}

/// Deprecated status of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<KubeadmControlPlaneV1Beta1DeprecatedStatus>,
}

/// The v1beta1 status fields of a control plane, with their old meaning.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneV1Beta1DeprecatedStatus {
    /// v1beta1 conditions (with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Problem, machine-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Problem, human-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub failure_message: Option<String>,
    /// Machines with the current spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// Machines whose Node is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
}
