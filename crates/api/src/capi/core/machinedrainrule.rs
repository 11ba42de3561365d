//! MachineDrainRule: per-Pod drain behaviour (drain in order, skip, or wait for completion).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Desired behaviour of a MachineDrainRule.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "MachineDrainRule",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A MachineDrainRule sets how matching Pods are handled when a Node is drained.",
    printcolumn = r#"{"description":"Drain behavior","jsonPath":".spec.drain.behavior","name":"Behavior","type":"string"}"#,
    printcolumn = r#"{"description":"Drain order","jsonPath":".spec.drain.order","name":"Order","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of the MachineDrainRule","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineDrainRuleSpec {
    /// What happens to matching Pods.
    pub drain: MachineDrainRuleDrainConfig,
    /// Machines the rule applies to (ORed); unset means all Machines in the namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub machines: Option<Vec<MachineDrainRuleMachineSelector>>,
    /// Pods the rule applies to (ORed); unset means all Pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub pods: Option<Vec<MachineDrainRulePodSelector>>,
}

/// Drain behaviour and order.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDrainRuleDrainConfig {
    /// Drain, Skip or WaitCompleted.
    pub behavior: MachineDrainRuleDrainBehavior,
    /// Pods are evicted in groups of increasing order (default 0); only with Drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<i32>,
}

/// How matching Pods are treated during drain.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum MachineDrainRuleDrainBehavior {
    /// Evict the Pods, group by group in `order`.
    #[default]
    Drain,
    /// Leave the Pods alone.
    Skip,
    /// Do not evict; wait until the Pods complete.
    WaitCompleted,
}

/// Selects Machines (ANDed with a Cluster selector).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDrainRuleMachineSelector {
    /// Labels of the Machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Labels of the Machine's Cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<LabelSelector>,
}

/// Selects Pods (ANDed with a Namespace selector).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDrainRulePodSelector {
    /// Labels of the Pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Labels of the Pod's Namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
}
