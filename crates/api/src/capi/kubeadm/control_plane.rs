//! KubeadmControlPlane: control-plane Machines managed as one, with kubeadm and stacked or
//! external etcd.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use crate::capi::common::{MachineNamingStrategy, ObjectMeta, V1Beta2ReplicaStatus};
use crate::capi::conditions::{Condition, impl_has_conditions};
use crate::capi::core::MachineTimeouts;

/// Desired state of a KubeadmControlPlane.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1beta1",
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
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"This denotes whether or not the control plane has the uploaded kubeadm-config configmap","jsonPath":".status.initialized","name":"Initialized","type":"boolean"}"#,
    printcolumn = r#"{"description":"KubeadmControlPlane API Server is ready to receive requests","jsonPath":".status.ready","name":"API Server Available","type":"boolean"}"#,
    printcolumn = r#"{"description":"Total number of machines desired by this control plane","jsonPath":".spec.replicas","name":"Desired","priority":10,"type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of non-terminated machines targeted by this control plane","jsonPath":".status.replicas","name":"Replicas","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of fully running and ready control plane machines","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of non-terminated machines targeted by this control plane that have the desired template spec","jsonPath":".status.updatedReplicas","name":"Updated","type":"integer"}"#,
    printcolumn = r#"{"description":"Total number of unavailable machines targeted by this control plane","jsonPath":".status.unavailableReplicas","name":"Unavailable","type":"integer"}"#,
    printcolumn = r#"{"description":"Time duration since creation of KubeadmControlPlane","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version associated with this control plane","jsonPath":".spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneSpec {
    /// Number of control-plane Machines (default 1; odd with stacked etcd).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Kubernetes version, `vX.Y.Z`; upgrades go one minor at a time.
    pub version: String,
    /// Template of the control-plane Machines.
    pub machine_template: KubeadmControlPlaneMachineTemplate,
    /// kubeadm settings of the control-plane nodes.
    pub kubeadm_config_spec: KubeadmConfigSpec,
    /// Roll out Machines whose certificates expire soon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_before: Option<RolloutBefore>,
    /// A time after which every Machine created earlier is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// How Machines are replaced (default RollingUpdate with maxSurge 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
    /// Retry limits of Machine remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_strategy: Option<RemediationStrategy>,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
}

/// Template of control-plane Machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneMachineTemplate {
    /// Labels and annotations of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Infrastructure machine template cloned for each Machine.
    pub infrastructure_ref: ObjectReference,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(flatten)]
    pub timeouts: MachineTimeouts,
}

/// Certificate-driven rollout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutBefore {
    /// Replace Machines whose certificates expire within this many days (at least 7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificates_expiry_days: Option<i32>,
}

/// Rollout strategy of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// Only `RollingUpdate`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Parameters of a rolling update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdate>,
}

/// Rolling update bounds of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdate {
    /// Extra Machines during a rollout: 1 (default) or 0 (scale in, needs 3+ replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Retry limits of control-plane remediation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemediationStrategy {
    /// Retries of a failing Machine's replacement (unset: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<i32>,
    /// Wait between retries (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_period: Option<String>,
    /// A replacement healthy for this long ends the retry sequence (default 1h).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_healthy_period: Option<String>,
}

/// Observed state of a KubeadmControlPlane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneStatus {
    /// Selector of the control-plane Machines, for the scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Machines owned, deleting ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Lowest Kubernetes version among the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Machines with the current spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// Ready control-plane Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
    /// kubeadm init finished (never reset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialized: Option<bool>,
    /// The API server answered once (never reset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Terminal problem, machine-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Terminal problem, human-readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The last remediation done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_remediation: Option<LastRemediationStatus>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2ReplicaStatus>,
}

/// The last remediation of a control plane.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastRemediationStatus {
    /// Machine that was remediated.
    pub machine: String,
    /// When the remediation started.
    pub timestamp: Time,
    /// Retries so far in the current sequence.
    pub retry_count: i32,
}

impl_has_conditions!(KubeadmControlPlane);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(KubeadmControlPlane);
