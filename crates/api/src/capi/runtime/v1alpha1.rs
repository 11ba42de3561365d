//! ExtensionConfig v1alpha1 (served, deprecated): v1beta1-style conditions in
//! `status.conditions`, the newer ones under `status.v1beta2`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClientConfig, ExtensionHandler};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::Condition;

/// Desired state of an ExtensionConfig.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "runtime.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ExtensionConfig",
    status = "ExtensionConfigStatus",
    derive = "PartialEq",
    category = "cluster-api",
    shortname = "ext",
    doc = "An ExtensionConfig registers a Runtime Extension and lists the handlers it serves.",
    printcolumn = r#"{"description":"Time duration since creation of ExtensionConfig","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigSpec {
    /// How to reach the extension.
    pub client_config: ClientConfig,
    /// Namespaces whose Clusters may use the extension's handlers (every one when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Key/value pairs sent with every call to the extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<BTreeMap<String, String>>,
}

/// Observed state of an ExtensionConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigStatus {
    /// What the last successful discovery reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub handlers: Option<Vec<ExtensionHandler>>,
    /// v1beta1-style conditions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The newer conditions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}
