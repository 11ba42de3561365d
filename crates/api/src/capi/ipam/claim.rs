//! IPAddressClaim and IPAddress: the IPAM contract between consumers and pool providers.

use k8s_openapi::api::core::v1::{LocalObjectReference, TypedLocalObjectReference};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::conditions::{Condition, impl_has_conditions};

/// A request for an address from a pool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "IPAddressClaim",
    namespaced,
    status = "IPAddressClaimStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An IPAddressClaim asks a pool for an IP address.",
    printcolumn = r#"{"description":"Name of the pool to allocate an address from","jsonPath":".spec.poolRef.name","name":"Pool Name","type":"string"}"#,
    printcolumn = r#"{"description":"Kind of the pool to allocate an address from","jsonPath":".spec.poolRef.kind","name":"Pool Kind","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of IPAdressClaim","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimSpec {
    /// Cluster the claim belongs to (replaces the cluster-name label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    /// Pool to allocate from: namespaced in the claim's namespace, or cluster-scoped.
    pub pool_ref: TypedLocalObjectReference,
}

/// Observed state of an IPAddressClaim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimStatus {
    /// The IPAddress that fulfils the claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_ref: Option<LocalObjectReference>,
    /// Observations about the claim (Ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// An address allocated from a pool for a claim.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "IPAddress",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An IPAddress is an address a pool allocated for a claim.",
    printcolumn = r#"{"description":"Address","jsonPath":".spec.address","name":"Address","type":"string"}"#,
    printcolumn = r#"{"description":"Name of the pool the address is from","jsonPath":".spec.poolRef.name","name":"Pool Name","type":"string"}"#,
    printcolumn = r#"{"description":"Kind of the pool the address is from","jsonPath":".spec.poolRef.kind","name":"Pool Kind","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of IPAdress","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressSpec {
    /// The claim this address fulfils.
    pub claim_ref: LocalObjectReference,
    /// The pool it was allocated from.
    pub pool_ref: TypedLocalObjectReference,
    /// The IP address.
    pub address: String,
    /// Prefix length of the subnet (0-32 for IPv4, 0-128 for IPv6).
    pub prefix: i32,
    /// Default gateway of the subnet, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
}

impl_has_conditions!(IPAddressClaim);
