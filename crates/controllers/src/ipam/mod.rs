//! In-cluster IPAM, as the Cluster API in-cluster IPAM provider: IPAddressClaims whose pool
//! is an InClusterIPPool (namespaced) or a GlobalInClusterIPPool (cluster-scoped) get an
//! IPAddress with the pool's lowest free address; pools report their address counts and
//! are held while addresses reference them.
//!
//! - [`allocate`]: the allocatable set of a pool and first-fit allocation (pure).
//! - `claim`: the IPAddressClaim controller (one worker).
//! - `address`: creating a claim's IPAddress, and releasing it.
//! - `pool`: the pool controller, one instance per pool kind.
//! - `pool_ref`: the two pool kinds seen alike, and which addresses belong to a pool.
//!
//! Admission refuses pools that overlap (unless annotated as meant: NAT, several sites);
//! overlapping pools that were let be allocate each on its own.
//!
//! Controllers limited to one namespace (`Settings::namespace`) see only that namespace's
//! IPAddresses, so a GlobalInClusterIPPool shared with claims elsewhere must be served by
//! controllers watching every namespace.

mod address;
pub mod allocate;
mod claim;
mod pool;
mod pool_ref;

use std::sync::Arc;

use drydock_api::capi::ipam::{GlobalInClusterIPPool, InClusterIPPool};

pub use claim::CONTROLLER as CLAIM_CONTROLLER;
pub use pool_ref::GROUP;

use crate::{Context, Running};

/// The IPAddressClaim controller and the controllers of both pool kinds.
pub fn controllers(ctx: &Arc<Context>) -> Vec<Running> {
    vec![
        claim::controller(ctx),
        pool::controller::<InClusterIPPool>(ctx),
        pool::controller::<GlobalInClusterIPPool>(ctx),
    ]
}
