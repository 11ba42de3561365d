//! KubeadmControlPlaneTemplate: the KubeadmControlPlane a ClusterClass stamps out.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use super::control_plane::{RemediationStrategy, RolloutBefore, RolloutStrategy};
use crate::capi::common::{MachineNamingStrategy, ObjectMeta, TemplateResource, template_kind};
use crate::capi::core::MachineTimeouts;

template_kind! {
    /// Desired state of a KubeadmControlPlaneTemplate.
    KubeadmControlPlaneTemplateSpec {
        group: "controlplane.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "KubeadmControlPlaneTemplate",
        kind_doc: "A KubeadmControlPlaneTemplate is the KubeadmControlPlane of a ClusterClass.",
        age_column: r#"{"description":"Time duration since creation of KubeadmControlPlaneTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The KubeadmControlPlane to stamp out.
        template: KubeadmControlPlaneTemplateResource,
    }
}

/// The control plane a template stamps out.
pub type KubeadmControlPlaneTemplateResource = TemplateResource<KubeadmControlPlaneTemplateResourceSpec>;

/// KubeadmControlPlane spec minus what the Cluster topology provides (replicas, version,
/// infrastructure template).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateResourceSpec {
    /// Template of the control-plane Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_template: Option<KubeadmControlPlaneTemplateMachineTemplate>,
    /// kubeadm settings of the control-plane nodes.
    pub kubeadm_config_spec: KubeadmConfigSpec,
    /// Roll out Machines whose certificates expire soon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_before: Option<RolloutBefore>,
    /// A time after which every Machine created earlier is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// How Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
    /// Retry limits of Machine remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_strategy: Option<RemediationStrategy>,
    /// How Machine names are generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
}

/// Machine template of a control-plane template (no infrastructure reference).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmControlPlaneTemplateMachineTemplate {
    /// Labels and annotations of the generated object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(flatten)]
    pub timeouts: MachineTimeouts,
}
