//! KubeadmControlPlaneTemplate (v1beta2): the KubeadmControlPlane a ClusterClass stamps out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use super::control_plane::{KubeadmControlPlaneRemediation, KubeadmControlPlaneRollout};
use crate::capi::common::{MachineNamingStrategy, MachineTaint, ObjectMeta};
use crate::capi::core::v1beta2::MachineDeletionSpec;

/// Desired state of a KubeadmControlPlaneTemplate.
#[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "KubeadmControlPlaneTemplate",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmControlPlaneTemplate is the KubeadmControlPlane of a ClusterClass.",
    printcolumn = r#"{"description":"ClusterClass owning the template","jsonPath":".metadata.ownerReferences[?(@.kind==\"ClusterClass\")].name","name":"ClusterClass","type":"string"}"#,
    printcolumn = r#"{"description":"Time since creation","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateSpec {
    /// The KubeadmControlPlane to stamp out.
    pub template: KubeadmControlPlaneTemplateResource,
}

/// The control plane a template stamps out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateResource {
    /// Labels and annotations of the generated object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the generated object.
    #[serde(default, skip_serializing_if = "KubeadmControlPlaneTemplateResourceSpec::is_empty")]
    pub spec: KubeadmControlPlaneTemplateResourceSpec,
}

/// KubeadmControlPlane spec minus what the Cluster topology provides (replicas, version,
/// infrastructure template).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateResourceSpec {
    /// Template of the control-plane Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_template: Option<KubeadmControlPlaneTemplateMachineTemplate>,
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

impl KubeadmControlPlaneTemplateResourceSpec {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Machine template of a control-plane template (no infrastructure reference).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateMachineTemplate {
    /// Labels and annotations of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec fields of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<KubeadmControlPlaneTemplateMachineTemplateSpec>,
}

/// The Machine spec fields a control-plane template sets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateMachineTemplateSpec {
    /// Node drain, volume detach and Node deletion limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}
