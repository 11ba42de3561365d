//! DevMachine v1beta1: a machine of the Dev provider, on the v1beta1 contract
//! (`status.ready`, conditions with severity).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{TemplateResource, V1Beta2Conditions, template_kind};
use crate::capi::conditions::{Condition, impl_has_conditions};
use crate::capi::dev::backend::{DevMachineBackendSpec, MachineAddress};

/// Desired state of a DevMachine.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "DevMachine",
    namespaced,
    status = "DevMachineStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DevMachine is a machine of the Dev provider.",
    printcolumn = r#"{"description":"Cluster this DevMachine belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machine owning this DevMachine","jsonPath":".metadata.ownerReferences[?(@.kind==\"Machine\")].name","name":"Machine","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"ProviderID","type":"string"}"#,
    printcolumn = r#"{"description":"Whether the machine is ready","jsonPath":".status.ready","name":"Ready","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DevMachine was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineSpec {
    /// The machine's identity for its Node; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The backend simulating (or, upstream, running) the machine.
    pub backend: DevMachineBackendSpec,
}

/// Observed state of a DevMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineStatus {
    /// Every simulated component is up (the v1beta1 contract's flag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Addresses of the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Conditions in the newer v1beta2 style, reported alongside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

template_kind! {
    /// Desired state of a DevMachineTemplate.
    DevMachineTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "DevMachineTemplate",
        kind_doc: "A DevMachineTemplate is cloned into a DevMachine for each new Machine.",
        age_column: r#"{"description":"Time since the DevMachineTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DevMachine to stamp out.
        template: DevMachineTemplateResource,
    }
}

/// The DevMachine a template stamps out.
pub type DevMachineTemplateResource = TemplateResource<DevMachineSpec>;

impl_has_conditions!(DevMachine);
