//! drydock's in-memory infrastructure provider: InMemoryCluster and InMemoryMachine
//! (upstream's CAPIM kinds) and the Dev kinds of upstream's test provider (DevCluster and
//! DevMachine, whose `spec.backend.inMemory` is this provider), backed by simulated machines
//! and whole simulated workload clusters. Each workload cluster is a logical cluster of a
//! drydock API server (the "host"): its Nodes, control plane static pods and etcd members
//! are ordinary objects there, so kubectl can look at them through the cluster's kubeconfig.
//!
//! A Dev object on the docker backend is simulated in memory as well: drydock runs no
//! containers, and says so (condition `BackendSimulated`, a Warning Event, an admission
//! warning). Upstream's Docker kinds (DockerCluster, DockerMachine, DockerMachinePool) are
//! simulated the same way. [`machinepool`] runs the instances of Dev and Docker pools.
//!
//! Faults are injected with an annotation on a simulated machine (see [`fault`]):
//! `infrastructure.drydock.dev/fault: node-not-ready | node-unknown | node-deleted` makes the
//! simulated Node's Ready condition False or Unknown, or removes the Node (one that never
//! registered, if set from the start); removing the annotation brings the Node back Ready.

pub mod cluster;
pub mod fabricate;
pub mod fault;
mod index;
pub mod kinds;
pub mod logical;
pub mod machine;
pub mod machinepool;
pub mod timing;

use std::sync::Arc;

use drydock_api::capi::dev::v1beta2::{DevCluster, DevMachine, DevMachinePool};
use drydock_api::capi::docker::v1beta2::{DockerCluster, DockerMachine, DockerMachinePool};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_controllers::{Context, Running};

/// Where simulated workload clusters live.
#[derive(Clone)]
pub struct Host {
    /// Client for the root logical cluster of the hosting drydock API server (creates and
    /// deletes LogicalClusters).
    pub client: kube::Client,
    /// Host and port clients use to reach the hosting API server.
    pub endpoint_host: String,
    pub endpoint_port: u16,
}

/// The provider's context: the controllers' context plus the host.
pub struct ProviderContext {
    pub ctx: Arc<Context>,
    pub host: Host,
}

pub use drydock_controllers::workload::ENDPOINT_PATH_ANNOTATION;

/// Reconciliation of `obj` is paused: its Cluster is paused (`spec.paused`), or the object
/// itself carries the paused annotation.
pub(crate) fn is_paused<K: kube::Resource>(obj: &K) -> bool {
    drydock_api::capi::keys::has_annotation(obj.meta().annotations.as_ref(), drydock_api::capi::keys::PAUSED_ANNOTATION)
}

/// Whether reconciling an object of `cluster` is paused: `spec.paused` pauses every object
/// of the cluster (the paused annotation on the Cluster pauses the Cluster object only).
pub(crate) fn cluster_paused(cluster: &drydock_api::capi::core::v1beta2::Cluster) -> bool {
    cluster.spec.paused == Some(true)
}

/// The provider's controllers (subscribe before the informers start).
pub fn controllers(pctx: Arc<ProviderContext>) -> Vec<Running> {
    vec![
        cluster::controller::<InMemoryCluster>(&pctx),
        cluster::controller::<DevCluster>(&pctx),
        machine::controller::<InMemoryMachine>(&pctx),
        machine::controller::<DevMachine>(&pctx),
        cluster::controller::<DockerCluster>(&pctx),
        machine::controller::<DockerMachine>(&pctx),
        machinepool::controller::<DevMachinePool>(&pctx),
        machinepool::controller::<DockerMachinePool>(&pctx),
    ]
}
