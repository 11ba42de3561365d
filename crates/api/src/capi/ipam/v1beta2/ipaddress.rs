//! IPAddress v1beta2, and the pool and claim references both IPAM kinds use.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SUBDOMAIN_PATTERN;

/// The pool an address is (to be) allocated from: all three fields are required, the group
/// included (v1beta1 let it be omitted).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPPoolReference {
    /// Name of the pool.
    #[schemars(length(min = 1, max = 253), regex(pattern = SUBDOMAIN_PATTERN))]
    pub name: String,
    /// Kind of the pool (`InClusterIPPool`, `GlobalInClusterIPPool`, a provider's kind).
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"))]
    pub kind: String,
    /// API group of the pool's kind, fully qualified.
    #[schemars(length(min = 1, max = 253), regex(pattern = SUBDOMAIN_PATTERN))]
    pub api_group: String,
}

/// The IPAddressClaim an address was allocated for, in the address's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimReference {
    /// Name of the claim.
    #[schemars(length(min = 1, max = 253), regex(pattern = SUBDOMAIN_PATTERN))]
    pub name: String,
}

/// An address allocated from a pool for a claim.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1beta2",
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
    pub claim_ref: IPAddressClaimReference,
    /// The pool it was allocated from.
    pub pool_ref: IPPoolReference,
    /// The IP address, IPv4 or IPv6.
    #[schemars(length(min = 1, max = 39))]
    pub address: String,
    /// Prefix length of the subnet (0-32 for IPv4, 0-128 for IPv6).
    #[schemars(range(min = 0, max = 128))]
    pub prefix: i32,
    /// Default gateway of the subnet, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 39))]
    pub gateway: Option<String>,
}
