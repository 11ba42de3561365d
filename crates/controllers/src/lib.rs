//! drydock's Cluster API controllers, built on kube-rs: they run in-process with
//! `drydock up` and against any kube-apiserver through a kubeconfig.
//!
//! Each controller is one module with a `controller(ctx)` future; [`run`] starts them all
//! on shared informers (one watch and one store per kind).

pub mod addons;
pub mod cluster;
pub mod clusterclass;
pub mod context;
pub mod etcd;
pub mod extensionconfig;
pub mod external;
pub mod framework;
pub mod ipam;
pub mod kcp;
pub mod kubeadmconfig;
pub mod machine;
pub mod machinedeployment;
pub mod machinepool;
pub mod machineset;
pub mod mhc;
pub mod runtime_sdk;
pub mod topology;
pub mod workload;

use std::sync::Arc;

pub use context::{Context, Informers, Settings};
pub use drydock_api::components::Component;

/// A controller ready to run (its informer subscriptions are already taken).
pub type Running = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Builds every controller of drydock's Cluster API components (core, kubeadm bootstrap and
/// control plane, in-cluster IPAM), each on the context `as_` gives for its component (its
/// own identity: [`Context::acting_as`]); the caller adds provider controllers, then calls
/// [`start`] once all have subscribed.
pub fn controllers(as_: impl Fn(Component) -> Arc<Context>) -> Vec<Running> {
    let core = as_(Component::Core);
    let mut all = vec![
        cluster::controller(&core),
        clusterclass::controller(&core),
        machine::controller(&core),
        kubeadmconfig::controller(&as_(Component::KubeadmBootstrap)),
        machineset::controller(&core),
        machinedeployment::controller(&core),
        kcp::controller(&as_(Component::KubeadmControlPlane)),
        mhc::controller(&core),
        machinepool::controller(&core),
        topology::controller(&core),
        addons::controller(&core),
        extensionconfig::controller(&core),
    ];
    all.extend(ipam::controllers(&as_(Component::IpamInCluster)));
    all
}

/// Starts the shared informers and runs the given controllers until they end.
pub async fn start(ctx: Arc<Context>, controllers: Vec<Running>) {
    ctx.informers.start();
    tracing::info!(controllers = controllers.len(), "controllers started");
    futures::future::join_all(controllers).await;
}

/// The controllers' Prometheus metrics, for the API server's /metrics.
pub fn encode_metrics(out: &mut String) {
    framework::metrics::encode(out);
}
