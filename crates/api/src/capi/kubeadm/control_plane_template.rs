//! KubeadmControlPlaneTemplate: the KubeadmControlPlane a ClusterClass stamps out.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use super::control_plane::{RemediationStrategy, RolloutBefore, RolloutStrategy};
use crate::capi::common::{MachineNamingStrategy, ObjectMeta};

/// Desired state of a KubeadmControlPlaneTemplate.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "KubeadmControlPlaneTemplate",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmControlPlaneTemplate is the KubeadmControlPlane of a ClusterClass.",
    printcolumn = r#"{"description":"Time duration since creation of KubeadmControlPlaneTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateSpec {
    pub template: KubeadmControlPlaneTemplateResource,
}

/// The control plane a template stamps out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateResource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    pub spec: KubeadmControlPlaneTemplateResourceSpec,
}

/// KubeadmControlPlane spec minus what the Cluster topology provides (replicas, version,
/// infrastructure template).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateResourceSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_template: Option<KubeadmControlPlaneTemplateMachineTemplate>,
    pub kubeadm_config_spec: KubeadmConfigSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_before: Option<RolloutBefore>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_strategy: Option<RemediationStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
}

/// Machine template of a control-plane template (no infrastructure reference).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateMachineTemplate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
}
