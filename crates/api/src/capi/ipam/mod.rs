//! `ipam.cluster.x-k8s.io`: IPAddressClaim and IPAddress (v1beta1, the Cluster API contract)
//! and the in-cluster provider's pools (v1alpha2).

mod claim;
mod pool;

pub use claim::*;
pub use pool::*;
