//! Conversions of IPAddressClaim and IPAddress between v1beta2 (the hub) and each of
//! v1beta1 and v1alpha1, as upstream v1.14 serves them.

mod ipaddress;
mod ipaddressclaim;
mod v1alpha1;

pub use ipaddress::IPAddressConversion;
pub use ipaddressclaim::IPAddressClaimConversion;
pub use v1alpha1::{IPAddressClaimV1Alpha1Conversion, IPAddressV1Alpha1Conversion};

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
