//! ExtensionConfig v1beta2, the stored version.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClientConfig, ExtensionHandler};
use crate::capi::conditions::Condition;

/// Desired state of an ExtensionConfig.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "runtime.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ExtensionConfig",
    status = "ExtensionConfigStatus",
    derive = "PartialEq",
    category = "cluster-api",
    shortname = "ext",
    doc = "An ExtensionConfig registers a Runtime Extension and lists the handlers it serves.",
    printcolumn = r#"{"description":"Reconciliation paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"ExtensionConfig discovered","jsonPath":".status.conditions[?(@.type==\"Discovered\")].status","name":"Discovered","type":"string"}"#,
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
    /// `Discovered` and `Paused`.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// What the last successful discovery reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub handlers: Option<Vec<ExtensionHandler>>,
    /// What v1alpha1 readers see.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<ExtensionConfigDeprecatedStatus>,
}

/// Status fields kept for clients of older API versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigDeprecatedStatus {
    /// What v1alpha1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<ExtensionConfigV1Beta1DeprecatedStatus>,
}

/// The v1beta1-style conditions (with severity) of an ExtensionConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

crate::capi::conditions::impl_has_deprecated_conditions!(ExtensionConfig);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(ExtensionConfig);
