//! The managed-topology controller: a Cluster with `spec.topology` gets its infrastructure
//! cluster, control plane (with its machine infrastructure template), MachineDeployments
//! (with bootstrap and infrastructure templates), MachinePools (with a bootstrap config and
//! an infrastructure machine pool) and MachineHealthChecks made from its ClusterClass, with
//! the class's variables and patches applied (inline, and external through Runtime
//! Extensions).
//!
//! Each reconcile reads the class's templates and the objects the topology already has
//! ([`blueprint`]), computes every object the topology wants ([`desired`], with
//! [`variables`], [`patches`] and [`external`]; versions through [`upgrade`]), then applies
//! them with server-side apply under the `capi-topology` field manager ([`apply`]), so a
//! user's change to a field the topology sets is reverted and other fields are left alone.
//! `TopologyReconciled` says how it went ([`status`]).

mod apply;
mod blueprint;
mod deployments;
mod desired;
mod external;
mod gotemplate;
mod json_pointer;
mod patches;
mod pools;
pub mod preview;
mod progress;
mod semver_constraint;
mod status;
mod upgrade;
mod upgrade_plan;
mod variables;
mod workers;

use std::sync::Arc;

use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass};
use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::v1beta2_conditions::HasV1Beta2Conditions;
use drydock_api::capi::v1beta2_conditions::names::TOPOLOGY_RECONCILED;
use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::write::Writer;
use crate::framework::{Result, pause};
use crate::runtime_sdk::Registry;
use crate::{Context, Running};

/// The field manager of everything the topology applies, as upstream's.
pub const FIELD_MANAGER: &str = "capi-topology";
/// Label of every object the topology made.
pub const OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
/// Label naming the topology's MachineDeployment an object belongs to.
pub const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
/// Label naming the topology's MachinePool an object belongs to.
pub const POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";

const CONTROLLER: &str = "topology";

struct State {
    ctx: Arc<Context>,
    writer: Writer,
}

/// The controller: Clusters with a topology, woken by their class, control plane,
/// MachineDeployments and MachinePools changing.
pub fn controller(ctx: &Arc<Context>) -> Running {
    let queue = Queue::new(CONTROLLER);
    let state = Arc::new(State { ctx: ctx.clone(), writer: Writer::tracking(CONTROLLER) });
    let with_topology = ctx.informers.clusters.subscribe().filter(|c| std::future::ready(c.spec.topology.is_some()));
    let trigger = queue.track(with_topology);
    let clusters = ctx.informers.clusters.store.clone();
    let on_class = queue.map_to(move |cc: &ClusterClass| clusters_of_class(&clusters, cc));
    let on_control_plane =
        queue.map_to(|o: &drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane| owner_cluster(o));
    let on_deployment = queue.map_to(|o: &drydock_api::capi::core::v1beta2::MachineDeployment| owner_cluster(o));
    let on_pool = queue.map_to(|o: &drydock_api::capi::core::v1beta2::MachinePool| owner_cluster(o));
    let c = kube::runtime::Controller::for_shared_stream(trigger, ctx.informers.clusters.store.clone())
        .watches_shared_stream(ctx.informers.cluster_classes.subscribe(), on_class)
        .watches_shared_stream(ctx.informers.control_planes.subscribe(), on_control_plane)
        .watches_shared_stream(ctx.informers.machine_deployments.subscribe(), on_deployment)
        .watches_shared_stream(ctx.informers.machine_pools.subscribe(), on_pool);
    let concurrency = ctx.settings.topology_concurrency;
    Box::pin(runner::run(CONTROLLER, c, queue, concurrency, ctx.clock().clone(), state, reconcile))
}

/// The Clusters whose topology uses `cc`.
fn clusters_of_class(clusters: &Store<Cluster>, cc: &ClusterClass) -> Vec<ObjectRef<Cluster>> {
    let (name, ns) = (cc.name_any(), cc.namespace().unwrap_or_default());
    clusters
        .state()
        .iter()
        .filter(|c| {
            c.spec.topology.as_ref().is_some_and(|t| {
                let cns = t.class_ref.namespace.clone().or_else(|| c.namespace()).unwrap_or_default();
                t.class_ref.name == name && cns == ns
            })
        })
        .map(|c| ObjectRef::from_obj(&**c))
        .collect()
}

/// The Cluster of an object the topology made (labelled as such).
fn owner_cluster<K: kube::Resource>(o: &K) -> Vec<ObjectRef<Cluster>> {
    let labels = o.meta().labels.as_ref();
    if !labels.is_some_and(|l| l.contains_key(OWNED_LABEL)) {
        return Vec::new();
    }
    let Some(cluster) = labels.and_then(|l| l.get(CLUSTER_NAME_LABEL)) else {
        return Vec::new();
    };
    vec![ObjectRef::new(cluster).within(o.meta().namespace.as_deref().unwrap_or_default())]
}

async fn reconcile(cluster: Arc<Cluster>, st: Arc<State>) -> Result<Requeue> {
    let Some(topology) = cluster.spec.topology.as_ref() else {
        return Ok(Requeue::await_change());
    };
    if st.writer.is_stale(cluster.as_ref()) {
        return Ok(Requeue::await_change());
    }
    if cluster.metadata.deletion_timestamp.is_some() {
        // Deletion is the Cluster controller's; the topology only says so.
        st.report(&cluster, status::deleting()).await?;
        return Ok(Requeue::await_change());
    }
    if pause::cluster_paused(&cluster) {
        st.report(&cluster, status::paused()).await?;
        return Ok(Requeue::await_change());
    }
    let class_ns = topology.class_ref.namespace.clone().or_else(|| cluster.namespace()).unwrap_or_default();
    let class = st.ctx.informers.cluster_classes.store.get(&ObjectRef::new(&topology.class_ref.name).within(&class_ns));
    let Some(class) = class.filter(|cc| status::class_reconciled(cc)) else {
        st.report(&cluster, status::class_not_reconciled(&topology.class_ref.name, &class_ns)).await?;
        return Ok(Requeue::await_change());
    };
    match reconcile_topology(&st, &cluster, &class).await {
        Ok(progress) => {
            st.report(&cluster, status::reconciled(&progress)).await?;
            Ok(progress.requeue)
        }
        Err(e) => {
            let report = status::failed(&e);
            // An extension's failure is also an Event, once per new message.
            let known = cluster.v1beta2_condition(TOPOLOGY_RECONCILED).is_some_and(|c| c.message == report.message);
            if e.is_extension() && !known {
                st.ctx.events.warning(cluster.as_ref(), "TopologyReconcileFailed", report.message.clone()).await;
            }
            st.report(&cluster, report).await?;
            Err(e)
        }
    }
}

/// Plans the topology from the class and what exists, then applies the plan.
async fn reconcile_topology(st: &State, cluster: &Cluster, class: &ClusterClass) -> Result<upgrade::Progress> {
    let client = &st.ctx.client;
    let mut blueprint = blueprint::Blueprint::load(client, class, cluster, &[]).await?;
    let listed = blueprint::Listed::from_stores(&st.ctx, cluster);
    let current = blueprint::Current::load(client, cluster, &blueprint, &listed).await?;
    let registry = Registry::new(st.ctx.informers.extension_configs.store.state());
    let ext = external::Extensions::load(client, registry, class, &cluster.namespace().unwrap_or_default()).await;
    upgrade_plan::apply(&mut blueprint, cluster, &current, &ext).await?;
    let plan = desired::plan(cluster, &blueprint, &current, &ext).await?;
    apply::apply(&st.ctx, cluster, &blueprint, &current, &plan).await?;
    Ok(plan.progress)
}

impl State {
    /// Writes `TopologyReconciled` (both versions) when it changed.
    async fn report(&self, cluster: &Cluster, cond: status::Report) -> Result<()> {
        let now = self.ctx.clock().condition_time();
        let mut want = cluster.clone();
        status::set(&mut want, &cond, &now);
        let api = self.ctx.api::<Cluster>(&cluster.namespace().unwrap_or_default());
        self.writer.write_status(&api, cluster, &want).await?;
        Ok(())
    }
}
