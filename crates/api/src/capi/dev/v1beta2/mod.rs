//! `infrastructure.cluster.x-k8s.io/v1beta2` Dev kinds: the version upstream stores, on the
//! v1beta2 contract (`status.initialization.provisioned`, failure domains as a list,
//! `metav1.Condition`s with the old ones under `status.deprecated.v1beta1`), the version drydock
//! stores too; v1beta1 clients go through [`super::conversion`]. DevMachinePool(+Template)
//! exist only here.

mod cluster;
mod machine;
mod machinepool;

pub use cluster::*;
pub use machine::*;
pub use machinepool::*;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::ObjectMeta;
use crate::capi::conditions::Condition;

/// The object a v1beta2 template kind stamps out (its metadata, when given, is not empty).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateResource<S> {
    /// Labels and annotations of the generated object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minProperties" = 1))]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the generated object.
    pub spec: S,
}

/// How far initial provisioning went (the v1beta2 infrastructure contract).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializationStatus {
    /// The infrastructure is provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

/// What a v1beta2 status keeps of v1beta1 while both are served.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<V1Beta1DeprecatedStatus>,
}

/// v1beta1 fields of a v1beta2 status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style (with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// `metav1.Condition`s, at most 32, one per type.
pub type Conditions = Vec<MetaCondition>;
