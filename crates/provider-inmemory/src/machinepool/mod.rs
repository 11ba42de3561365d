//! DevMachinePools: the infrastructure of MachinePools, their instances simulated in memory.
//!
//! A pool keeps as many instances as its MachinePool's `spec.replicas`, at the version of
//! its template, once the Cluster's infrastructure is ready, its control plane initialized
//! and the pool's bootstrap data secret named (instances join as workers). Each instance
//! starts on the in-memory schedule (`spec.backend.inMemory`, else the defaults): after the
//! VM and Node start-up durations its Node appears, Ready, in the workload cluster. The
//! pool lists every instance's provider ID in `spec.providerIDList` and its state in
//! `status.instances`; `status.ready` says every wanted instance is up. [`instances`]
//! decides what to add and remove (scaling and rolling out); a removed instance's Node is
//! deleted, and a deleted pool deletes the Nodes of all its instances. A MachinePool with
//! `cluster.x-k8s.io/replicas-managed-by` is sized by something else: its pool keeps its
//! size.

mod instances;
pub mod kinds;

use std::sync::Arc;

use drydock_api::capi::core::v1beta2::{Cluster, MachinePool};
use drydock_api::capi::dev::v1beta2::DevMachinePoolInstanceStatus;
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, REPLICAS_MANAGED_BY_ANNOTATION};
use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::Running;
use drydock_controllers::framework::names;
use drydock_controllers::framework::runner::{self, Queue};
use drydock_controllers::framework::write::{Writer, add_finalizer, remove_finalizer};
use drydock_controllers::framework::{Requeue, Result};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;

use self::instances::{INSTANCES_ANNOTATION, Instance};
use self::kinds::{PoolState, SimulatedPool};
use crate::fabricate::{self, MachineFacts};
use crate::index::Gate;
use crate::logical::LogicalCluster;
use crate::timing::Plan;
use crate::{ProviderContext, cluster_paused, is_paused};

struct PoolCtx {
    p: Arc<ProviderContext>,
    writer: Writer,
}

pub fn controller<P: SimulatedPool>(pctx: &Arc<ProviderContext>) -> Running {
    let ctx = &pctx.ctx;
    let i = &ctx.informers;
    let queue = Queue::new(P::CONTROLLER);
    let on_pool = queue.map_to(|mp: &MachinePool| infra_of::<P>(mp));
    let pools = i.machine_pools.store.clone();
    let on_cluster = queue.map_to(move |c: &Cluster| {
        let (ns, name) = (c.namespace(), c.name_any());
        let of_cluster = |mp: &Arc<MachinePool>| mp.namespace() == ns && mp.spec.cluster_name == name;
        pools.state().iter().filter(|mp| of_cluster(mp)).flat_map(|mp| infra_of::<P>(mp)).collect::<Vec<_>>()
    });
    let pools = P::informer(i);
    let c = Controller::for_shared_stream(queue.track(pools.subscribe()), pools.store.clone())
        .watches_shared_stream(i.machine_pools.subscribe(), on_pool)
        .watches_shared_stream(i.clusters.subscribe(), on_cluster);
    let state = Arc::new(PoolCtx { p: pctx.clone(), writer: Writer::tracking(P::CONTROLLER) });
    Box::pin(runner::run(P::CONTROLLER, c, queue, 16, ctx.clock().clone(), state, reconcile::<P>))
}

/// The pool of kind `P` a MachinePool points at.
fn infra_of<P: SimulatedPool>(mp: &MachinePool) -> Vec<ObjectRef<P>> {
    let r = &mp.spec.template.spec.infrastructure_ref;
    let ns = mp.namespace().unwrap_or_default();
    (r.is_kind(&P::group(&()), &P::kind(&())) && !r.name.is_empty())
        .then(|| ObjectRef::new(&r.name).within(&ns))
        .into_iter()
        .collect()
}

/// The MachinePool owning a pool.
fn owner<P: SimulatedPool>(pool: &P, c: &PoolCtx) -> Option<Arc<MachinePool>> {
    let o = drydock_api::capi::owner::find_owner(pool.meta(), "cluster.x-k8s.io", "MachinePool")?;
    let ns = pool.namespace().unwrap_or_default();
    c.p.ctx.informers.machine_pools.store.get(&ObjectRef::new(&o.name).within(&ns))
}

fn workload(c: &PoolCtx, ns: &str, cluster: &str) -> LogicalCluster {
    LogicalCluster::new(&c.p.host.client, &LogicalClusterName::for_cluster(ns, cluster))
}

async fn reconcile<P: SimulatedPool>(pool: Arc<P>, c: Arc<PoolCtx>) -> Result<Requeue> {
    if c.writer.is_stale(pool.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let ns = pool.namespace().unwrap_or_default();
    let api: Api<P> = c.p.ctx.api(&ns);
    let recorded = instances::recorded(pool.meta().annotations.as_ref());
    let cluster_name = pool.labels().get(CLUSTER_NAME_LABEL).cloned();
    if pool.meta().deletion_timestamp.is_some() {
        if let Some(cluster) = &cluster_name {
            let lc = workload(&c, &ns, cluster);
            for i in &recorded {
                lc.delete::<Node>(P::CONTROLLER, None, &i.name).await?;
            }
        }
        let mut want = (*pool).clone();
        if remove_finalizer(&mut want, P::FINALIZER) {
            c.writer.apply(&api, &pool, &want).await?;
        }
        return Ok(Requeue::await_change());
    }
    // The MachinePool controller makes itself the owner; until then there is nothing to run.
    let Some(mp) = owner(pool.as_ref(), &c) else { return Ok(Requeue::await_change()) };
    c.p.ctx.informers.clusters.ready().await;
    let cluster_ref = ObjectRef::new(&mp.spec.cluster_name).within(&ns);
    let Some(cluster) = c.p.ctx.informers.clusters.store.get(&cluster_ref) else {
        return Ok(Requeue::await_change());
    };
    if cluster_paused(&cluster) || is_paused(pool.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let gate = Gate::of(&cluster);
    let bootstrapped = mp.spec.template.spec.bootstrap.data_secret_name.is_some();
    let mut want = (*pool).clone();
    add_finalizer(&mut want, P::FINALIZER);
    if !(gate.infrastructure_ready && gate.control_plane_initialized && bootstrapped) {
        // Cluster and MachinePool changes wake the pool.
        want.mark_waiting();
        c.writer.apply(&api, &pool, &want).await?;
        return Ok(Requeue::await_change());
    }
    let next = run(&c, pool.as_ref(), &mp, recorded, &mut want).await?;
    c.writer.apply(&api, &pool, &want).await?;
    Ok(next.map_or(Requeue::await_change(), |t| Requeue::at(c.p.ctx.clock(), t)))
}

/// Starts, completes and removes instances as planned, recording them in `want`. Returns
/// the next start-up deadline ahead.
async fn run<P: SimulatedPool>(
    c: &PoolCtx,
    pool: &P,
    mp: &MachinePool,
    mut current: Vec<Instance>,
    want: &mut P,
) -> Result<Option<Timestamp>> {
    let ns = pool.namespace().unwrap_or_default();
    let now = c.p.ctx.clock().now();
    let behaviour = pool.behaviour();
    let plan_of = |i: &Instance| Plan::new(&i.name, behaviour, false);
    let node_up = |i: &Instance| plan_of(i).progress(i.started, now).all_done();
    let version = mp.spec.template.spec.version.clone().unwrap_or_default();
    let external = mp.annotations().contains_key(REPLICAS_MANAGED_BY_ANNOTATION);
    let desired = if external && !current.is_empty() {
        // Sized by an autoscaler outside Cluster API (none acts on simulated pools): kept.
        current.iter().filter(|i| i.version == version).count().max(1)
    } else {
        usize::try_from(mp.spec.replicas.unwrap_or(1)).unwrap_or(0)
    };
    let changes = instances::plan(&current, desired, &version, node_up);

    let lc = workload(c, &ns, &mp.spec.cluster_name);
    for name in &changes.remove {
        lc.delete::<Node>(P::CONTROLLER, None, name).await?;
    }
    current.retain(|i| !changes.remove.contains(&i.name));
    for _ in 0..changes.add {
        let name = names::generated_name(&pool.name_any(), &names::random_suffix());
        current.push(Instance { name, version: version.clone(), started: now });
    }
    let mut statuses = Vec::with_capacity(current.len());
    let mut next: Option<Timestamp> = None;
    for i in &current {
        let progress = plan_of(i).progress(i.started, now);
        if progress.all_done() {
            let facts = MachineFacts { name: &i.name, version: &i.version, control_plane: false };
            lc.create(P::CONTROLLER, &fabricate::node(&facts, plan_of(i).deadlines(i.started).node)?).await?;
        }
        next = [next, progress.next].into_iter().flatten().min();
        statuses.push(DevMachinePoolInstanceStatus {
            instance_name: Some(i.name.clone()),
            provider_id: Some(fabricate::provider_id(&i.name)),
            ready: Some(progress.all_done()),
            version: Some(i.version.clone()),
            addresses: None,
        });
    }
    want.annotations_mut().insert(INSTANCES_ANNOTATION.into(), instances::record(&current));
    want.set_provider_id_list(current.iter().map(|i| fabricate::provider_id(&i.name)).collect());
    let all_up = current.len() == desired && statuses.iter().all(|s| s.ready == Some(true));
    want.record(PoolState { instances: statuses, all_up, observed_generation: pool.meta().generation });
    Ok(next)
}
