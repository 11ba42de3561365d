//! KubeadmConfig and KubeadmConfigTemplate (v1beta2).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_configuration::ClusterConfiguration;
use super::config_spec::{DiskSetup, File};
use super::node_configuration::{InitConfiguration, JoinConfiguration};
use crate::capi::common::ObjectMeta;
use crate::capi::conditions::Condition;
use crate::capi::kubeadm::{Format, IgnitionSpec, NTP, User};

/// What the bootstrap data of a node does: the kubeadm configuration plus the files, users,
/// commands and disks prepared around it. Also embedded in KubeadmControlPlane.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "bootstrap.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "KubeadmConfig",
    namespaced,
    status = "KubeadmConfigStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmConfig produces the bootstrap data secret of one Machine.",
    printcolumn = r#"{"description":"Cluster the config belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether the bootstrap data secret exists","jsonPath":".status.initialization.dataSecretCreated","name":"Data secret created","type":"string"}"#,
    printcolumn = r#"{"description":"Time since creation","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
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
    #[schemars(length(min = 1, max = 200))]
    pub files: Option<Vec<File>>,
    /// Partitions and filesystems to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_setup: Option<DiskSetup>,
    /// Mount points, each a list of fstab fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub mounts: Option<Vec<Vec<String>>>,
    /// Commands run very early in boot (cloud-init `bootcmd`), on every boot.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub boot_commands: Option<Vec<String>>,
    /// Commands run before kubeadm.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub pre_kubeadm_commands: Option<Vec<String>>,
    /// Commands run after kubeadm.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub post_kubeadm_commands: Option<Vec<String>>,
    /// Users to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub users: Option<Vec<User>>,
    /// NTP settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntp: Option<NTP>,
    /// Output format: cloud-config (default) or ignition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// kubeadm log verbosity (`--v`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<i32>,
    /// Ignition-only settings; requires format ignition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignition: Option<IgnitionSpec>,
}

impl KubeadmConfigSpec {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

crate::capi::conditions::impl_has_deprecated_conditions!(KubeadmConfig);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(KubeadmConfig);

/// Observed state of a KubeadmConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigStatus {
    /// Observations about this object (Ready, DataSecretAvailable, CertificatesAvailable, Paused).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Initial provisioning, as the bootstrap provider contract reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<KubeadmConfigInitializationStatus>,
    /// Name of the Secret holding the bootstrap data.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub data_secret_name: Option<String>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Fields kept for v1beta1 clients, to be removed with v1beta1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<KubeadmConfigDeprecatedStatus>,
}

/// Initial provisioning of a KubeadmConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigInitializationStatus {
    /// The bootstrap data secret has been created (never reset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_secret_created: Option<bool>,
}

/// Deprecated status of a KubeadmConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<KubeadmConfigV1Beta1DeprecatedStatus>,
}

/// The v1beta1 status fields of a KubeadmConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigV1Beta1DeprecatedStatus {
    /// v1beta1 conditions (with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Problem, machine-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_reason: Option<String>,
    /// Problem, human-readable (no longer terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub failure_message: Option<String>,
}

/// Desired state of a KubeadmConfigTemplate.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "bootstrap.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "KubeadmConfigTemplate",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmConfigTemplate is cloned into a KubeadmConfig for each new Machine.",
    printcolumn = r#"{"description":"ClusterClass owning the template","jsonPath":".metadata.ownerReferences[?(@.kind==\"ClusterClass\")].name","name":"ClusterClass","type":"string"}"#,
    printcolumn = r#"{"description":"Cluster owning the template","jsonPath":".metadata.ownerReferences[?(@.kind==\"Cluster\")].name","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time since creation","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigTemplateSpec {
    /// The KubeadmConfig to stamp out.
    pub template: KubeadmConfigTemplateResource,
}

/// The object a KubeadmConfigTemplate stamps out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigTemplateResource {
    /// Labels and annotations of the clones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the clones.
    #[serde(default, skip_serializing_if = "KubeadmConfigSpec::is_empty")]
    pub spec: KubeadmConfigSpec,
}
