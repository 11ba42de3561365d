//! Conversions of IPAddressClaim and IPAddress between v1beta1 and v1beta2 (the hub).
//!
//! Upstream also serves both kinds in v1alpha1; drydock serves v1beta1 and v1beta2 only.

mod ipaddress;
mod ipaddressclaim;

pub use ipaddress::IPAddressConversion;
pub use ipaddressclaim::IPAddressClaimConversion;

use k8s_openapi::api::core::v1::TypedLocalObjectReference;

use super::v1beta2::IPPoolReference;

/// A v1beta1 pool reference as v1beta2 has it: an omitted group becomes the empty string.
fn pool_ref_up(r: TypedLocalObjectReference) -> IPPoolReference {
    IPPoolReference { name: r.name, kind: r.kind, api_group: r.api_group.unwrap_or_default() }
}

/// A v1beta2 pool reference as v1beta1 has it: an empty group is omitted.
fn pool_ref_down(r: IPPoolReference) -> TypedLocalObjectReference {
    TypedLocalObjectReference { api_group: Some(r.api_group).filter(|g| !g.is_empty()), kind: r.kind, name: r.name }
}
