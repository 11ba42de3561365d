//! KubeadmConfig: bootstrap data (cloud-init or Ignition running kubeadm) for one Machine.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cloud_init::{DiskSetup, File, Format, IgnitionSpec, NTP, User};
use super::cluster_configuration::ClusterConfiguration;
use super::node_configuration::{InitConfiguration, JoinConfiguration};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::{Condition, impl_has_conditions};

/// What the bootstrap data of a node does: the kubeadm configuration plus the files, users,
/// commands and disks prepared around it. Also embedded in KubeadmControlPlane.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "bootstrap.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "KubeadmConfig",
    namespaced,
    status = "KubeadmConfigStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmConfig produces the bootstrap data secret of one Machine.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of KubeadmConfig","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigSpec {
    /// Cluster-wide kubeadm settings (control-plane nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_configuration: Option<ClusterConfiguration>,
    /// `kubeadm init` settings (first control-plane node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_configuration: Option<InitConfiguration>,
    /// `kubeadm join` settings (every other node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_configuration: Option<JoinConfiguration>,
    /// Files written before kubeadm runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<File>>,
    /// Partitions and filesystems to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_setup: Option<DiskSetup>,
    /// Mount points, each a list of fstab fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mounts: Option<Vec<Vec<String>>>,
    /// Commands run before kubeadm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_kubeadm_commands: Option<Vec<String>>,
    /// Commands run after kubeadm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_kubeadm_commands: Option<Vec<String>>,
    /// Users to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<Vec<User>>,
    /// NTP servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntp: Option<NTP>,
    /// Output format: cloud-config (default) or ignition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// kubeadm log verbosity (`--v`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<i32>,
    /// Retry `kubeadm join` with a script (deprecated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_experimental_retry_join: Option<bool>,
    /// Ignition-only settings; requires format ignition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignition: Option<IgnitionSpec>,
}

/// Observed state of a KubeadmConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigStatus {
    /// The bootstrap data secret exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Name of the secret with the bootstrap data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_secret_name: Option<String>,
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
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

impl_has_conditions!(KubeadmConfig);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(KubeadmConfig);
