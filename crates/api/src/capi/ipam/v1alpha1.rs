//! `ipam.cluster.x-k8s.io/v1alpha1`: the first IPAM contract, which upstream v1.14 still
//! serves (not deprecated, unlike v1beta1) for providers written against it. The same
//! fields as v1beta1 except the claim's `clusterName`; [`super::conversion`] converts it
//! through the v1beta2 hub.

use k8s_openapi::api::core::v1::{LocalObjectReference, TypedLocalObjectReference};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request for an address from a pool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "IPAddressClaim",
    namespaced,
    status = "super::IPAddressClaimStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An IPAddressClaim asks a pool for an IP address.",
    printcolumn = r#"{"description":"Name of the pool to allocate an address from","jsonPath":".spec.poolRef.name","name":"Pool Name","type":"string"}"#,
    printcolumn = r#"{"description":"Kind of the pool to allocate an address from","jsonPath":".spec.poolRef.kind","name":"Pool Kind","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the IPAddressClaim was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimSpec {
    /// Pool to allocate from: namespaced in the claim's namespace, or cluster-scoped.
    pub pool_ref: TypedLocalObjectReference,
}

/// An address allocated from a pool for a claim.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "IPAddress",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An IPAddress is an address a pool allocated for a claim.",
    printcolumn = r#"{"description":"Address","jsonPath":".spec.address","name":"Address","type":"string"}"#,
    printcolumn = r#"{"description":"Name of the pool the address is from","jsonPath":".spec.poolRef.name","name":"Pool Name","type":"string"}"#,
    printcolumn = r#"{"description":"Kind of the pool the address is from","jsonPath":".spec.poolRef.kind","name":"Pool Kind","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the IPAddress was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressSpec {
    /// The claim this address fulfils.
    pub claim_ref: LocalObjectReference,
    /// The pool it was allocated from.
    pub pool_ref: TypedLocalObjectReference,
    /// The IP address.
    #[schemars(length(min = 1, max = 39))]
    pub address: String,
    /// Prefix length of the subnet (0-32 for IPv4, 0-128 for IPv6).
    pub prefix: i32,
    /// Default gateway of the subnet, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 39))]
    pub gateway: Option<String>,
}
