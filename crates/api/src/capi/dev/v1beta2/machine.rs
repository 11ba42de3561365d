//! DevMachine v1beta2 (and its template).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Conditions, DeprecatedStatus, InitializationStatus, TemplateResource};
use crate::capi::dev::backend::{DevMachineBackendSpec, MachineAddress};

/// Desired state of a DevMachine.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "DevMachine",
    namespaced,
    status = "DevMachineStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DevMachine is a machine of the Dev provider.",
    printcolumn = r#"{"description":"Cluster this DevMachine belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"Provider ID","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Failure domain the machine runs in","jsonPath":".status.failureDomain","name":"Failure domain","type":"string"}"#,
    printcolumn = r#"{"description":"Internal IP address","jsonPath":".status.addresses[?(@.type==\"InternalIP\")].address","name":"IP","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether the machine is provisioned","jsonPath":".status.initialization.provisioned","name":"Provisioned","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DevMachine was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineSpec {
    /// The machine's identity for its Node; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub provider_id: Option<String>,
    /// The backend simulating (or, upstream, running) the machine.
    pub backend: DevMachineBackendSpec,
}

/// Observed state of a DevMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineStatus {
    /// How far initial provisioning went.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minProperties" = 1))]
    pub initialization: Option<InitializationStatus>,
    /// Addresses of the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// The failure domain the machine runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Observations about this object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Conditions>,
    /// What is left of the v1beta1 status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedStatus>,
}

/// Desired state of a DevMachineTemplate.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "DevMachineTemplate",
    namespaced,
    status = "DevMachineTemplateStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DevMachineTemplate is cloned into a DevMachine for each new Machine.",
    printcolumn = r#"{"description":"Time since the DevMachineTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineTemplateSpec {
    /// The DevMachine to stamp out.
    pub template: DevMachineTemplateResource,
}

/// The DevMachine a template stamps out.
pub type DevMachineTemplateResource = TemplateResource<DevMachineSpec>;

/// What the machines of a template offer (read by autoscalers scaling from zero).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineTemplateStatus {
    /// Resources of one machine (cpu, memory, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<BTreeMap<String, Quantity>>,
}

crate::capi::conditions::impl_has_deprecated_conditions!(DevMachine);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(DevMachine);
