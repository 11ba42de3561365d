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
//! Pausing follows the model of [`crate::machineset::pause`]: the Cluster's `spec.paused`
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
pub(crate) mod index;
mod node;
pub mod nodes;
pub(crate) mod referenced;
mod status;

use std::sync::Arc;
use std::time::Duration;

use crate::framework::requeue::Requeue;
use drydock_api::capi::conditions;
use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, CONTROL_PLANE_NAME_LABEL, MACHINE_FINALIZER,
    NODE_CLUSTER_NAMESPACE_ANNOTATION, NODE_MACHINE_ANNOTATION, POOL_NAME_LABEL, SET_NAME_LABEL,
};
use drydock_api::capi::kubeadm::KubeadmConfig;
use drydock_api::capi::owner::{self, api_group};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use crate::framework::patch::{add_finalizer, apply_changes};
use crate::framework::runner::{self, Queue};
use crate::framework::{Error, Result};
use crate::machineset::pause::{self, Pause};
use crate::{Context, Running};
use index::{Changes, Index, Written, ref_key};

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
    /// Machines written by this controller and not yet seen back in the store.
    pub written: Written,
    /// Machine `namespace/name`s by providerID (key space [`PROVIDER_KEYS`]).
    by_provider: Index,
    /// What each workload Node (`<logical cluster>/<name>`) last looked like to its Machine.
    node_gates: Changes<u64>,
    /// Nodes patched by this controller and not yet seen back in the Node store.
    pub nodes_written: Written,
}

/// The "namespace" of providerIDs in [`State::by_provider`] (they span namespaces).
const PROVIDER_KEYS: &str = "*";

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
        written: Written::default(),
        by_provider: Index::default(),
        node_gates: Changes::default(),
        nodes_written: Written::default(),
    });
    let queue = Queue::new(CONTROLLER);
    let recorder = state.clone();
    let machines = ctx.informers.machines.subscribe().inspect(move |m| recorder.record(m));
    let (s1, s2, s3) = (state.clone(), state.clone(), state.clone());
    let mut c = Controller::for_shared_stream(queue.track(machines), ctx.informers.machines.store.clone())
        .watches_shared_stream(
            ctx.informers.inmemory_machines.subscribe(),
            queue.map_to(move |o: &InMemoryMachine| s1.referrer_of(o.meta(), "InMemoryMachine")),
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
            if let (Some(kind), Some(target)) = (r.kind.as_deref(), r.name.as_deref()) {
                self.referrers.record(ns, &ref_key(kind, target), &name);
            }
        }
        record_provider_id(&self.by_provider, m);
    }

    /// The Machine of a workload Node, when something the Machine reads of it changed.
    fn machines_of_changed_node(&self, n: &Node) -> Vec<ObjectRef<Machine>> {
        let Some(nodes) = self.ctx.informers.nodes.as_ref() else {
            return Vec::new();
        };
        let Some(lc) = nodes::logical_cluster_of(n) else {
            return Vec::new();
        };
        let name = n.metadata.name.as_deref().unwrap_or_default();
        let gone = nodes.get(lc, name).is_none();
        let exists = |k: &str| k.split_once('/').is_some_and(|(c, n)| nodes.get(c, n).is_some());
        if !self.node_gates.changed(format!("{lc}/{name}"), node_digest(n, gone), nodes.len(), exists) {
            return Vec::new();
        }
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
            refs.into_iter().flatten().any(|r| r.kind.as_deref() == Some(kind) && r.name.as_deref() == Some(name))
        };
        self.referrers
            .members(ns, &ref_key(kind, name), |m| self.machine(ns, m).is_some_and(|m| refers(&m)))
            .into_iter()
            .map(|m| ObjectRef::new(&m).within(ns))
            .collect()
    }

    /// The Machines of a Cluster, when something they wait on changed.
    fn machines_of_changed_cluster(&self, c: &Cluster) -> Vec<ObjectRef<Machine>> {
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        let name = c.name_any();
        let gate = ClusterGate {
            paused: cluster_paused(c),
            control_plane_initialized: conditions::is_true(
                c.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default(),
                CONTROL_PLANE_INITIALIZED,
            ),
        };
        let clusters = &self.ctx.informers.clusters.store;
        let live = clusters.len();
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(n, c)| clusters.get(&ObjectRef::new(c).within(n)).is_some());
        if !self.cluster_gates.changed(format!("{ns}/{name}"), gate, live, exists) {
            return Vec::new();
        }
        self.machines_of(ns, &name).into_iter().map(|m| ObjectRef::new(&m).within(ns)).collect()
    }

    /// Remembers the version a write of `m` produced (see [`Written`]).
    pub fn wrote(&self, m: &Machine, rv: Option<String>) {
        let store = &self.ctx.informers.machines.store;
        let exists = |k: &str| k.split_once('/').is_some_and(|(n, m)| self.machine(n, m).is_some());
        self.written.record(runner::key_of(m), rv.as_deref(), store.len(), exists);
    }

    /// Names of the Machines of cluster `ns/cluster` (from the index, checked against the store).
    pub fn machines_of(&self, ns: &str, cluster: &str) -> Vec<String> {
        self.by_cluster.members(ns, cluster, |m| self.machine(ns, m).is_some_and(|m| m.spec.cluster_name == cluster))
    }
}

/// Condition types set on Machines.
pub(crate) const BOOTSTRAP_READY: &str = "BootstrapReady";
pub(crate) const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
pub(crate) const NODE_HEALTHY: &str = "NodeHealthy";
pub(crate) const CONTROL_PLANE_INITIALIZED: &str = "ControlPlaneInitialized";

/// A Cluster pauses all its objects with `spec.paused`. (Its paused annotation pauses the
/// Cluster object alone, like the annotation on any object.)
pub(crate) fn cluster_paused(c: &Cluster) -> bool {
    c.spec.paused == Some(true)
}

/// The logical cluster of drydock's API server hosting a Cluster's workload cluster (from the
/// endpoint path its infrastructure reported), if it is hosted that way.
pub(crate) fn logical_cluster(c: &Cluster) -> Option<&str> {
    let path = c.metadata.annotations.as_ref()?.get(crate::workload::ENDPOINT_PATH_ANNOTATION)?;
    drydock_api::tenancy::LogicalClusterName::name_in_path(path)
}

/// Records a Machine's providerID in an index read by [`machine_of_node`].
pub(crate) fn record_provider_id(by_provider: &Index, m: &Machine) {
    if let (Some(pid), Some(ns), Some(name)) =
        (m.spec.provider_id.as_deref(), m.metadata.namespace.as_deref(), m.metadata.name.as_deref())
    {
        by_provider.record(PROVIDER_KEYS, pid, &format!("{ns}/{name}"));
    }
}

/// The Machine a workload Node (read through the cross-cluster watch, in logical cluster
/// `lc`) belongs to: named by the annotations its Machine put on it, else the Machine with
/// its providerID whose Cluster lives in `lc`. `by_provider` maps providerIDs to Machines.
pub(crate) fn machine_of_node(ctx: &Context, by_provider: &Index, lc: &str, n: &Node) -> Option<ObjectRef<Machine>> {
    let machines = &ctx.informers.machines.store;
    let clusters = &ctx.informers.clusters.store;
    let in_lc = |m: &Machine| {
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        clusters.get(&ObjectRef::new(&m.spec.cluster_name).within(ns)).is_some_and(|c| logical_cluster(&c) == Some(lc))
    };
    let annotations = n.metadata.annotations.as_ref();
    let named = |k: &str| annotations.and_then(|a| a.get(k));
    if let (Some(ns), Some(name)) = (named(NODE_CLUSTER_NAMESPACE_ANNOTATION), named(NODE_MACHINE_ANNOTATION)) {
        let r = ObjectRef::new(name).within(ns);
        if machines.get(&r).is_some_and(|m| in_lc(&m)) {
            return Some(r);
        }
    }
    let pid = n.spec.as_ref().and_then(|s| s.provider_id.as_deref())?;
    let of = |key: &str| key.split_once('/').and_then(|(ns, m)| machines.get(&ObjectRef::new(m).within(ns)));
    by_provider
        .members(PROVIDER_KEYS, pid, |k| of(k).is_some_and(|m| m.spec.provider_id.as_deref() == Some(pid)))
        .iter()
        .filter_map(|k| of(k))
        .find(|m| in_lc(m))
        .map(|m| ObjectRef::from_obj(m.as_ref()))
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

pub(crate) fn is_control_plane(m: &Machine) -> bool {
    m.metadata.labels.as_ref().is_some_and(|l| l.contains_key(CONTROL_PLANE_LABEL))
}

/// Events to publish once the reconcile's writes succeeded.
#[derive(Default)]
pub(crate) struct Events(Vec<(bool, &'static str, String)>);

impl Events {
    pub fn normal(&mut self, reason: &'static str, note: String) {
        self.0.push((false, reason, note));
    }
    pub fn warning(&mut self, reason: &'static str, note: String) {
        self.0.push((true, reason, note));
    }
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub async fn publish<K: Resource<DynamicType = ()>>(self, ctx: &Context, obj: &K) {
        for (warning, reason, note) in self.0 {
            if warning {
                ctx.events.warning(obj, reason, note).await;
            } else {
                ctx.events.normal(obj, reason, note).await;
            }
        }
    }
}

/// The earlier of two optional rechecks.
pub(crate) fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

pub(crate) fn action(recheck: Option<Duration>) -> Requeue {
    Requeue::after_opt(recheck)
}

async fn reconcile(machine: Arc<Machine>, state: Arc<State>) -> Result<Requeue> {
    let ctx = &state.ctx;
    let ns = machine.namespace().unwrap_or_default();
    let cluster = ctx.informers.clusters.store.get(&ObjectRef::new(&machine.spec.cluster_name).within(&ns));
    if state.written.is_behind(&runner::key_of(machine.as_ref()), machine.metadata.resource_version.as_deref()) {
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
    let mut events = Events::default();
    let mut steps = contract::Steps::new(&state, &machine, &cluster, now.clone());
    let result = steps.run(&mut m, &mut events).await;
    status::finish(&machine, &mut m, now);
    let rv = write_changes(&ctx.api::<Machine>(&ns), CONTROLLER, &machine, &m, result.is_ok()).await?;
    state.wrote(&machine, rv);
    events.publish(ctx, machine.as_ref()).await;
    result.map(action)
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
    let rv = write_changes(&api, CONTROLLER, machine, &m, false).await?;
    state.wrote(machine, rv);
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

/// Kinds whose status records the generation it was computed for.
pub(crate) trait ObservesGeneration: Sized {
    /// Replaces this object's status with `other`'s.
    fn take_status(&mut self, other: &Self);
    fn set_observed_generation(&mut self, generation: Option<i64>);
}

impl ObservesGeneration for Machine {
    fn take_status(&mut self, other: &Self) {
        self.status.clone_from(&other.status);
    }
    fn set_observed_generation(&mut self, generation: Option<i64>) {
        self.status.get_or_insert_with(Default::default).observed_generation = generation;
    }
}

impl ObservesGeneration for Cluster {
    fn take_status(&mut self, other: &Self) {
        self.status.clone_from(&other.status);
    }
    fn set_observed_generation(&mut self, generation: Option<i64>) {
        self.status.get_or_insert_with(Default::default).observed_generation = generation;
    }
}

/// Writes what differs between `before` and `after` ([`apply_changes`]): metadata and spec
/// first, then the status, recording (when `observed`) the generation the spec write
/// produced, so a reconcile that changes the spec does not need another write just to catch
/// observedGeneration up. Returns the resourceVersion of the last write, if any.
pub(crate) async fn write_changes<K>(
    api: &kube::Api<K>,
    controller: &str,
    before: &K,
    after: &K,
    observed: bool,
) -> Result<Option<String>>
where
    K: Resource + serde::Serialize + serde::de::DeserializeOwned + Clone + std::fmt::Debug + ObservesGeneration,
{
    let mut main = after.clone();
    main.take_status(before);
    let (current, written) = apply_changes(api, controller, before, &main).await?;
    let base = if written.main { current } else { before.clone() };
    let mut next = base.clone();
    next.take_status(after);
    if observed {
        next.set_observed_generation(base.meta().generation);
    }
    let last = write_status_if_unchanged(api, controller, &base, &next).await?;
    let last = last.or_else(|| written.main.then_some(base));
    Ok(last.and_then(|l| l.meta().resource_version.clone()))
}

/// Writes the status of `after` if it differs from `before`'s, on the condition that the
/// object is still at `before`'s resourceVersion: other controllers (the
/// MachineHealthCheck, the Machine's owner) write conditions of the same list, and a patch
/// computed from an older copy would drop theirs. Returns the object written, if any.
pub(crate) async fn write_status_if_unchanged<K>(
    api: &kube::Api<K>,
    controller: &str,
    before: &K,
    after: &K,
) -> Result<Option<K>>
where
    K: Resource + serde::Serialize + serde::de::DeserializeOwned + Clone + std::fmt::Debug,
{
    let status = |o: &K| -> Result<serde_json::Value> {
        Ok(serde_json::to_value(o)?.get("status").cloned().unwrap_or(serde_json::Value::Null))
    };
    let (old, new) = (status(before)?, status(after)?);
    let Some(diff) = crate::framework::diff::merge_diff(&old, &new) else {
        return Ok(None);
    };
    let body = serde_json::json!({
        "metadata": {"resourceVersion": before.meta().resource_version},
        "status": if new.is_null() { serde_json::Value::Null } else { diff },
    });
    let name = before.meta().name.clone().unwrap_or_default();
    let written = api.patch_status(&name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&body)).await?;
    crate::framework::metrics::write(controller);
    Ok(Some(written))
}

/// A reference to `owner` as the controller of the objects it adopts.
pub(crate) fn controller_ref_of<K: Resource<DynamicType = ()>>(
    owner: &K,
) -> Result<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    owner::controller_ref(owner).ok_or_else(|| Error::other("owner has no name or uid yet"))
}
