//! The Machine controller: brings a Machine from its bootstrap config and infrastructure
//! machine to a Node of its workload cluster, and tears all three down when it is deleted.
//!
//! A reconcile runs these steps in order (upstream's §4.2):
//! 1. cluster-name label, finalizer, and a Cluster owner reference for standalone Machines;
//! 2. bootstrap (`contract.rs`): adopt the config, copy `status.dataSecretName` once ready;
//! 3. infrastructure (`contract.rs`): adopt the infrastructure machine, copy its providerID,
//!    addresses and failure domain once it is ready;
//! 4. the Node (`node.rs`): find it by providerID, set `status.nodeRef`, report its health
//!    and propagate labels and annotations to it;
//! 5. phase and Ready (`status.rs`), then one write of what changed, metadata and spec before
//!    status so observedGeneration records the generation that write produced.
//!
//! Deleting Machines go through `delete.rs` (hooks, `drain.rs`, infrastructure, Node).
//!
//! Pausing follows the model of [`crate::framework::pause`]: the Cluster's `spec.paused`
//! or the Machine's own paused annotation stop everything but the `Paused` condition; the
//! paused annotation on the Cluster pauses the Cluster object only.
//!
//! Workload Nodes come from the cross-cluster Node watch when there is one (`nodes.rs`):
//! their changes trigger the Machine, found by the annotations the Machine controller puts
//! on its Node or by providerID. Without it they are read per reconcile and rechecked on a
//! timer while something is awaited.

mod contract;
mod delete;
mod drain;
mod drain_rules;
mod node;
mod status;
mod v1beta2;
mod volume_detach;

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::dev::v1beta2::DevMachine;
use drydock_api::capi::docker::v1beta2::DockerMachine;
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, CONTROL_PLANE_NAME_LABEL, MACHINE_FINALIZER, POOL_NAME_LABEL, SET_NAME_LABEL,
};
use drydock_api::capi::kubeadm::v1beta2::KubeadmConfig;
use drydock_api::capi::owner::{self, api_group};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use crate::framework::Result;
use crate::framework::events::PendingEvents;
use crate::framework::fresh::Superseded;
use crate::framework::index::{Changes, Index, ref_key};
use crate::framework::machine_template;
use crate::framework::nodes::{machine_of_node, record_provider_id};
use crate::framework::pause::{self, Pause};
use crate::framework::requeue::{Requeue, sooner};

use crate::framework::runner::{self, Queue};
use crate::framework::write::{Status, Writer, add_finalizer};
use crate::{Context, Running};

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "machine";

/// How long to wait before looking again for an object that is referenced but missing:
/// its creation normally triggers the Machine, this only covers objects created under an
/// unexpected name by another owner.
pub(crate) const NOT_FOUND_RECHECK: Duration = Duration::from_secs(10);
/// Recheck of referenced kinds drydock does not watch (no event reports their changes).
pub(crate) const UNWATCHED_RECHECK: Duration = Duration::from_secs(10);
/// Recheck while waiting for an object to disappear: shared informer streams report
/// updates but not deletions, so nothing else would wake the Machine.
pub(crate) const GONE_RECHECK: Duration = Duration::from_secs(1);
/// Recheck of the workload cluster while something about its Node is awaited and no Node
/// watch reports changes (controllers against a plain kube-apiserver).
pub(crate) const NODE_RECHECK: Duration = Duration::from_secs(5);

/// The controller's state beside the shared context: indexes fed from its trigger streams.
pub(crate) struct State {
    pub ctx: Arc<Context>,
    /// Machine names by cluster name.
    pub by_cluster: Index,
    /// Machine name by `<Kind>/<name>` of its infrastructure machine and bootstrap config.
    referrers: Index,
    /// What each Cluster last looked like to its Machines.
    cluster_gates: Changes<ClusterGate>,
    /// Writes Machines, remembering what it superseded.
    pub writer: Writer,
    /// Machine `namespace/name`s by providerID (key space [`PROVIDER_KEYS`]).
    by_provider: Index,
    /// What each workload Node (`<logical cluster>/<name>`) last looked like to its Machine.
    node_gates: Changes<u64>,
    /// Nodes patched by this controller and not yet seen back in the Node store.
    pub nodes_written: Superseded,
}

/// The parts of a Cluster a Machine waits on: its pause, and its initialization (after which
/// the workload cluster is reachable). A deleting Cluster does not wake its Machines; they
/// are deleted and their own deletion wakes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ClusterGate {
    paused: bool,
    control_plane_initialized: bool,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State {
        ctx: ctx.clone(),
        by_cluster: Index::default(),
        referrers: Index::default(),
        cluster_gates: Changes::default(),
        writer: Writer::tracking(CONTROLLER),
        by_provider: Index::default(),
        node_gates: Changes::default(),
        nodes_written: Superseded::default(),
    });
    let queue = Queue::new(CONTROLLER);
    let recorder = state.clone();
    let machines = ctx.informers.machines.subscribe().inspect(move |m| recorder.record(m));
    let (s1, s2, s3, s5, s6) = (state.clone(), state.clone(), state.clone(), state.clone(), state.clone());
    let mut c = Controller::for_shared_stream(queue.track(machines), ctx.informers.machines.store.clone())
        .watches_shared_stream(
            ctx.informers.inmemory_machines.subscribe(),
            queue.map_to(move |o: &InMemoryMachine| s1.referrer_of(o.meta(), "InMemoryMachine")),
        )
        .watches_shared_stream(
            ctx.informers.dev_machines.subscribe(),
            queue.map_to(move |o: &DevMachine| s5.referrer_of(o.meta(), "DevMachine")),
        )
        .watches_shared_stream(
            ctx.informers.docker_machines.subscribe(),
            queue.map_to(move |o: &DockerMachine| s6.referrer_of(o.meta(), "DockerMachine")),
        )
        .watches_shared_stream(
            ctx.informers.kubeadm_configs.subscribe(),
            queue.map_to(move |o: &KubeadmConfig| s2.referrer_of(o.meta(), "KubeadmConfig")),
        )
        .watches_shared_stream(
            ctx.informers.clusters.subscribe(),
            queue.map_to(move |c: &Cluster| s3.machines_of_changed_cluster(c)),
        );
    if let Some(nodes) = &ctx.informers.nodes {
        let s4 = state.clone();
        c = c.watches_shared_stream(nodes.subscribe(), queue.map_to(move |n: &Node| s4.machines_of_changed_node(n)));
    }
    Box::pin(runner::run(CONTROLLER, c, queue, ctx.settings.machine_concurrency, ctx.clock().clone(), state, reconcile))
}

impl State {
    fn record(&self, m: &Machine) {
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        let name = m.name_any();
        self.by_cluster.record(ns, &m.spec.cluster_name, &name);
        let refs = [Some(&m.spec.infrastructure_ref), m.spec.bootstrap.config_ref.as_ref()];
        for r in refs.into_iter().flatten() {
            self.referrers.record(ns, &ref_key(&r.kind, &r.name), &name);
        }
        record_provider_id(&self.by_provider, m);
    }

    /// The Machine of a workload Node, when something the Machine reads of it changed.
    fn machines_of_changed_node(&self, n: &Node) -> Vec<ObjectRef<Machine>> {
        let Some(nodes) = self.ctx.informers.nodes.as_ref() else {
            return Vec::new();
        };
        let Some(lc) = nodes.changed(&self.node_gates, n, node_digest) else {
            return Vec::new();
        };
        machine_of_node(&self.ctx, &self.by_provider, lc, n).into_iter().collect()
    }

    fn machine(&self, ns: &str, name: &str) -> Option<Arc<Machine>> {
        self.ctx.informers.machines.store.get(&ObjectRef::new(name).within(ns))
    }

    /// The Machine an infrastructure machine or bootstrap config belongs to: its Machine
    /// owner, or before adoption the Machine whose spec references it.
    fn referrer_of(&self, meta: &ObjectMeta, kind: &str) -> Vec<ObjectRef<Machine>> {
        let ns = meta.namespace.as_deref().unwrap_or_default();
        if let Some(o) = owner::find_owner(meta, "cluster.x-k8s.io", "Machine") {
            return vec![ObjectRef::new(&o.name).within(ns)];
        }
        let name = meta.name.as_deref().unwrap_or_default();
        let refers = |m: &Machine| {
            let refs = [Some(&m.spec.infrastructure_ref), m.spec.bootstrap.config_ref.as_ref()];
            refs.into_iter().flatten().any(|r| r.kind == kind && r.name == name)
        };
        self.referrers.refs(ns, &ref_key(kind, name), |m| self.machine(ns, m).is_some_and(|m| refers(&m)))
    }

    /// The Machines of a Cluster, when something they wait on changed.
    fn machines_of_changed_cluster(&self, c: &Cluster) -> Vec<ObjectRef<Machine>> {
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        let name = c.name_any();
        let gate =
            ClusterGate { paused: pause::cluster_paused(c), control_plane_initialized: c.control_plane_initialized() };
        if !self.cluster_gates.changed_in(&self.ctx.informers.clusters.store, c, gate) {
            return Vec::new();
        }
        self.machines_of(ns, &name).into_iter().map(|m| ObjectRef::new(&m).within(ns)).collect()
    }

    /// Names of the Machines of cluster `ns/cluster` (from the index, checked against the store).
    pub fn machines_of(&self, ns: &str, cluster: &str) -> Vec<String> {
        self.by_cluster.members(ns, cluster, |m| self.machine(ns, m).is_some_and(|m| m.spec.cluster_name == cluster))
    }
}

/// A digest of what the Machine controller reads from a Node: condition statuses, node
/// info, labels, annotations, taints, schedulability, identity and whether it still exists.
fn node_digest(n: &Node, gone: bool) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    gone.hash(&mut h);
    n.metadata.uid.hash(&mut h);
    n.metadata.deletion_timestamp.as_ref().map(|t| t.0.as_second()).hash(&mut h);
    n.metadata.labels.hash(&mut h);
    n.metadata.annotations.hash(&mut h);
    if let Some(spec) = &n.spec {
        spec.provider_id.hash(&mut h);
        spec.unschedulable.hash(&mut h);
        for t in spec.taints.iter().flatten() {
            (&t.key, &t.value, &t.effect).hash(&mut h);
        }
    }
    if let Some(status) = &n.status {
        for c in status.conditions.iter().flatten() {
            (&c.type_, &c.status).hash(&mut h);
        }
        serde_json::to_string(&status.node_info).unwrap_or_default().hash(&mut h);
    }
    h.finish()
}

/// How long a reconcile waits for the caches it reads to load after a (re)start.
const CACHE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

async fn reconcile(machine: Arc<Machine>, state: Arc<State>) -> Result<Requeue> {
    let ctx = &state.ctx;
    // Right after a (re)start the caches of what Machines point at may not be loaded yet,
    // and a missing object must mean a gone one: a provisioned Machine whose infrastructure
    // is gone fails for good. (Bounded: a kind whose CRD is missing never loads.)
    let i = &ctx.informers;
    for listed in [
        &i.clusters.listed,
        &i.inmemory_machines.listed,
        &i.dev_machines.listed,
        &i.docker_machines.listed,
        &i.kubeadm_configs.listed,
    ] {
        let _ = tokio::time::timeout(CACHE_WAIT, listed.wait()).await;
    }
    let ns = machine.namespace().unwrap_or_default();
    let cluster = ctx.informers.clusters.store.get(&ObjectRef::new(&machine.spec.cluster_name).within(&ns));
    if state.writer.is_stale(machine.as_ref()) {
        return Ok(Requeue::await_change());
    }
    if machine.metadata.deletion_timestamp.is_some() {
        return delete::reconcile(&state, &machine, cluster.as_deref()).await;
    }
    // A missing Cluster is waited for: its creation triggers this Machine.
    let Some(cluster) = cluster else {
        return Ok(Requeue::await_change());
    };
    if write_pause(&state, &machine, &cluster).await? {
        return Ok(Requeue::await_change());
    }
    let now = ctx.clock().condition_time();
    let mut m = (*machine).clone();
    pause::set_condition(&mut m, None, &cluster, now.clone());
    adopt_metadata(&mut m, &cluster);
    let mut events = PendingEvents::default();
    let mut steps = contract::Steps::new(&state, &machine, &cluster, now.clone());
    let result = steps.run(&mut m, &mut events).await;
    let up_to_date = machine_template::machine_up_to_date_in(ctx, &m, ctx.clock().now());
    let available_due = status::finish(&machine, &mut m, up_to_date, now);
    state.writer.write(&ctx.api::<Machine>(&ns), &machine, &m, Status::observing(result.is_ok())).await?;
    events.publish(ctx, machine.as_ref()).await;
    result.map(|recheck| Requeue::after_opt(sooner(recheck, available_due)))
}

/// When the Machine is paused, records that in its `Paused` condition (the only write a
/// paused Machine gets) and returns true.
pub(crate) async fn write_pause(state: &State, machine: &Machine, cluster: &Cluster) -> Result<bool> {
    let Some(p) = Pause::of(cluster, &machine.metadata, false) else {
        return Ok(false);
    };
    let mut m = machine.clone();
    pause::set_condition(&mut m, Some(p), cluster, state.ctx.clock().condition_time());
    let api = state.ctx.api::<Machine>(&machine.namespace().unwrap_or_default());
    state.writer.write(&api, machine, &m, Status::observing(false)).await?;
    Ok(true)
}

/// Label, finalizer and, for standalone Machines, a Cluster owner reference.
fn adopt_metadata(m: &mut Machine, cluster: &Cluster) {
    let cluster_name = m.spec.cluster_name.clone();
    m.labels_mut().insert(CLUSTER_NAME_LABEL.to_string(), cluster_name);
    add_finalizer(m, MACHINE_FINALIZER);
    let labels = m.metadata.labels.as_ref();
    let managed = [SET_NAME_LABEL, POOL_NAME_LABEL, CONTROL_PLANE_NAME_LABEL]
        .iter()
        .any(|l| labels.is_some_and(|ls| ls.contains_key(*l)));
    let has_cluster_owner = m
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.kind == "Cluster" && api_group(&r.api_version) == "cluster.x-k8s.io");
    if !managed
        && !has_cluster_owner
        && owner::get_controller(&m.metadata).is_none()
        && let Some(r) = owner::owner_ref(cluster)
    {
        owner::ensure_owner_ref(&mut m.metadata, r);
    }
}
