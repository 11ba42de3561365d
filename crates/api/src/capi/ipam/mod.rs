//! `ipam.cluster.x-k8s.io`: IPAddressClaim and IPAddress (v1beta1, the Cluster API contract,
//! with v1beta2 and v1alpha1 served through [`conversion`]) and the in-cluster provider's
//! pools (v1alpha2).

mod address_range;
mod claim;
mod claim_admission;
pub mod conversion;
mod pool;
mod pool_admission;
mod pool_stored;
pub mod v1alpha1;
pub mod v1beta2;

pub use address_range::{IpRange, RangeError, ip_to_u128};
pub use claim::*;
pub(crate) use claim_admission::{IPAddressAdmission, IPAddressClaimAdmission};
pub use pool::*;
pub(crate) use pool_admission::{GlobalInClusterIPPoolAdmission, InClusterIPPoolAdmission};
pub use pool_stored::ALLOW_OVERLAP_ANNOTATION;
