//! MachineDrainRule v1beta2: the same fields as v1beta1.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::core::{MachineDrainRuleDrainConfig, MachineDrainRuleMachineSelector, MachineDrainRulePodSelector};

/// Desired behaviour of a MachineDrainRule.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
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
