//! KubeadmConfigTemplate: the KubeadmConfig cloned for each Machine of a MachineSet.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use crate::capi::common::ObjectMeta;

/// Desired state of a KubeadmConfigTemplate.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "bootstrap.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "KubeadmConfigTemplate",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A KubeadmConfigTemplate is cloned into a KubeadmConfig for each new Machine.",
    printcolumn = r#"{"description":"Time duration since creation of KubeadmConfigTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigTemplateSpec {
    /// The KubeadmConfig to stamp out.
    pub template: KubeadmConfigTemplateResource,
}

/// The object a template stamps out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeadmConfigTemplateResource {
    /// Labels and annotations of the clones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the clones.
    #[serde(default)]
    pub spec: KubeadmConfigSpec,
}
