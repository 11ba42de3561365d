//! KubeadmConfigTemplate: the KubeadmConfig cloned for each Machine of a MachineSet.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::KubeadmConfigSpec;
use crate::capi::common::{ObjectMeta, template_kind};

template_kind! {
    /// Desired state of a KubeadmConfigTemplate.
    KubeadmConfigTemplateSpec {
        group: "bootstrap.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "KubeadmConfigTemplate",
        kind_doc: "A KubeadmConfigTemplate is cloned into a KubeadmConfig for each new Machine.",
        age_column: r#"{"description":"Time duration since creation of KubeadmConfigTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The KubeadmConfig to stamp out.
        template: KubeadmConfigTemplateResource,
    }
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
