//! `ipam.cluster.x-k8s.io/v1beta2`: IPAddressClaim and IPAddress as Cluster API v1.11+
//! serves and stores them (the hub of conversion; [`super::conversion`] converts to and from
//! v1beta1). References are typed structs with every field required instead of the core
//! Kubernetes reference types, and the claim's status has `metav1.Condition`s.

mod ipaddress;
mod ipaddressclaim;

pub use ipaddress::*;
pub use ipaddressclaim::*;

/// A DNS-1123 subdomain: lower-case alphanumerics, `-` and `.`, alphanumeric at both ends.
/// The shape of object names and API groups.
pub(crate) const SUBDOMAIN_PATTERN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
