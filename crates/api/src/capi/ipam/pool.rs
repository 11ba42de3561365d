//! InClusterIPPool and GlobalInClusterIPPool: address pools of the in-cluster IPAM provider
//! (namespaced and cluster-scoped; one spec and status, the global kind's spec wraps the
//! namespaced kind's).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Addresses a pool hands out.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1alpha2",
    kind = "InClusterIPPool",
    namespaced,
    status = "InClusterIPPoolStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An InClusterIPPool hands out addresses to claims in its namespace.",
    printcolumn = r#"{"description":"List of addresses, to allocate from","jsonPath":".spec.addresses","name":"Addresses","type":"string"}"#,
    printcolumn = r#"{"description":"Count of IPs configured for the pool","jsonPath":".status.ipAddresses.total","name":"Total","type":"integer"}"#,
    printcolumn = r#"{"description":"Count of unallocated IPs in the pool","jsonPath":".status.ipAddresses.free","name":"Free","type":"integer"}"#,
    printcolumn = r#"{"description":"Count of allocated IPs in the pool","jsonPath":".status.ipAddresses.used","name":"Used","type":"integer"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct InClusterIPPoolSpec {
    /// Single IPs, `a-b` ranges and CIDRs, all in one family and in one prefix.
    pub addresses: Vec<String>,
    /// Prefix length written to every IPAddress.
    #[schemars(range(min = 0, max = 128))]
    pub prefix: i32,
    /// Gateway written to every IPAddress; never allocated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// Hand out the network and broadcast addresses too.
    #[serde(rename = "allocateReservedIPAddresses", skip_serializing_if = "Option::is_none")]
    pub allocate_reserved_ip_addresses: Option<bool>,
    /// Addresses never handed out (same syntax as `addresses`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_addresses: Option<Vec<String>>,
    /// Seconds a released address stays reserved before it can be reused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub address_reuse_grace_period_seconds: Option<i32>,
}

/// Observed state of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InClusterIPPoolStatus {
    /// Address counts.
    #[serde(rename = "ipAddresses", skip_serializing_if = "Option::is_none")]
    pub ip_addresses: Option<IPAddressStatusSummary>,
}

/// Address counts of a pool (saturating at the maximum integer for big IPv6 pools).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressStatusSummary {
    /// Allocatable addresses.
    pub total: i64,
    /// Allocatable addresses not in use.
    pub free: i64,
    /// Addresses in use.
    pub used: i64,
    /// Addresses in use that are no longer in the pool.
    pub out_of_range: i64,
}

/// A cluster-scoped pool: claims in any namespace can use it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1alpha2",
    kind = "GlobalInClusterIPPool",
    status = "InClusterIPPoolStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A GlobalInClusterIPPool hands out addresses to claims in every namespace.",
    printcolumn = r#"{"description":"List of addresses, to allocate from","jsonPath":".spec.addresses","name":"Addresses","type":"string"}"#,
    printcolumn = r#"{"description":"Count of IPs configured for the pool","jsonPath":".status.ipAddresses.total","name":"Total","type":"integer"}"#,
    printcolumn = r#"{"description":"Count of unallocated IPs in the pool","jsonPath":".status.ipAddresses.free","name":"Free","type":"integer"}"#,
    printcolumn = r#"{"description":"Count of allocated IPs in the pool","jsonPath":".status.ipAddresses.used","name":"Used","type":"integer"}"#
)]
#[serde(transparent)]
pub struct GlobalInClusterIPPoolSpec(pub InClusterIPPoolSpec);
