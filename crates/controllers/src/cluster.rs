//! The Cluster controller: ties a Cluster to its infrastructure cluster and control plane,
//! reports their readiness and the phase, and deletes everything in upstream's order.
//!
//! A reconcile (upstream's §7.2): finalizer; the infrastructure cluster (adopted, its
//! readiness, endpoint, endpoint path and failure domains copied; a Cluster without one is
//! ready at once); the control plane (adopted, ready and initialized mirrored, its endpoint
//! used when the infrastructure gave none); ControlPlaneInitialized from the first control
//! plane Node when there is no control plane object; then phase, Ready and one write.
//!
//! Pausing: `spec.paused` or the paused annotation on the Cluster stop its reconciliation;
//! only the `Paused` condition is written (see [`crate::framework::pause`]).
//!
//! Deletion (§7.4): MachineDeployments, MachineSets, MachinePools and worker Machines owned
//! by the Cluster; once none is left the control plane, then the infrastructure cluster; then
//! the kubeconfig; the finalizer last.

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::condition_types::CONTROL_PLANE_READY;
use drydock_api::capi::conditions::{self, HasConditions, MirrorFallback, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::dev::v1beta2::DevCluster;
use drydock_api::capi::docker::v1beta2::DockerCluster;
use drydock_api::capi::inmemory::InMemoryCluster;
use drydock_api::capi::keys::{CLUSTER_FINALIZER, PAUSED_ANNOTATION, has_annotation};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, names as v2names};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use crate::framework::coalesce::{self, Coalesce};
use crate::framework::events::PendingEvents;
use crate::framework::index::{Changes, Index, ref_key};
use crate::framework::pause::{self, Pause};
use crate::framework::referenced::{self, Referenced, Source};
use crate::framework::requeue::Requeue;
use crate::framework::{Error, Result};

use crate::framework::requeue::sooner;
use crate::framework::runner::{self, Queue};
use crate::framework::write::controller_ref_of;
use crate::framework::write::{Status, Writer, add_finalizer};
use crate::workload::ENDPOINT_PATH_ANNOTATION;
use crate::{Context, Running};
use drydock_api::capi::condition_types::CONTROL_PLANE_INITIALIZED;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "cluster";

const READY_SUMMARY: &[&str] = &[CONTROL_PLANE_READY, INFRASTRUCTURE_READY];

/// Recheck of referenced kinds drydock does not watch, and of missing ones.
const UNWATCHED_RECHECK: Duration = Duration::from_secs(30);
/// Recheck while waiting for descendants, the control plane or the infrastructure cluster
/// to disappear (shared informer streams do not report deletions).
const GONE_RECHECK: Duration = Duration::from_secs(2);

/// The controller's state: indexes fed from its trigger streams.
struct State {
    ctx: Arc<Context>,
    /// Cluster name by `<Kind>/<name>` of its infrastructure cluster and control plane.
    referrers: Index,
    machines: Index,
    machine_sets: Index,
    machine_deployments: Index,
    /// What each control plane last looked like to its Cluster: what others wait on, and
    /// what only the Cluster's summary reads.
    control_planes: Changes<ControlPlaneGate>,
    control_plane_summaries: Changes<ControlPlaneSummary>,
    /// What each control plane Machine and MachineDeployment last looked like to its
    /// Cluster (the v1beta2 conditions and counters it aggregates).
    machine_gates: Changes<Vec<GateCondition>>,
    deployment_gates: Changes<Gate>,
    /// Writes Clusters, remembering what it superseded.
    writer: Writer,
    /// Deleting Clusters whose MachinePools are all gone (they have no informer to ask).
    pools_gone: parking_lot::Mutex<std::collections::HashSet<String>>,
    /// Changes that only refresh the Cluster's summary (counters, rolled-up conditions).
    summaries: Arc<Coalesce<Cluster>>,
    /// The workload clusters' API server probes.
    probes: Arc<probe::Probes>,
}

/// What others wait on from the Cluster's reading of its control plane (initialization,
/// adoption, deletion).
#[derive(Clone, Debug, PartialEq)]
struct ControlPlaneGate {
    initialized: bool,
    deleting: bool,
    failed: bool,
    owner: Option<String>,
}

/// What only the Cluster's summary reads of its control plane.
#[derive(Clone, Debug, PartialEq)]
struct ControlPlaneSummary {
    /// Its Ready condition, mirrored into ControlPlaneReady.
    ready_condition: Option<conditions::Condition>,
    /// Its v1beta2 conditions and counters the Cluster's v1beta2 status reads.
    v1beta2: Gate,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    // Changes of its Machines, MachineDeployments and control plane that only its summary
    // reads gather for a window: one status write for a burst of Machine progress.
    let (summaries, summary_triggers) = Coalesce::new(coalesce::SUMMARY);
    let state = Arc::new(State {
        ctx: ctx.clone(),
        referrers: Index::default(),
        machines: Index::default(),
        machine_sets: Index::default(),
        machine_deployments: Index::default(),
        control_planes: Changes::default(),
        control_plane_summaries: Changes::default(),
        machine_gates: Changes::default(),
        deployment_gates: Changes::default(),
        writer: Writer::tracking(CONTROLLER),
        pools_gone: Default::default(),
        summaries,
        probes: probe::Probes::new(ctx.clone()),
    });
    let queue = Queue::new(CONTROLLER);
    let i = &ctx.informers;
    let recorder = state.clone();
    let clusters = futures::StreamExt::inspect(i.clusters.subscribe(), move |c| recorder.record(c));
    let s7 = state.clone();
    let (s1, s2, s3, s4, s5, s6) =
        (state.clone(), state.clone(), state.clone(), state.clone(), state.clone(), state.clone());
    let c = Controller::for_shared_stream(queue.track(clusters), i.clusters.store.clone())
        .watches_shared_stream(
            i.inmemory_clusters.subscribe(),
            queue.map_to(move |o: &InMemoryCluster| s1.referrer_of(&o.metadata, "InMemoryCluster")),
        )
        .watches_shared_stream(
            i.dev_clusters.subscribe(),
            queue.map_to(move |o: &DevCluster| s6.referrer_of(&o.metadata, "DevCluster")),
        )
        .watches_shared_stream(
            i.docker_clusters.subscribe(),
            queue.map_to(move |o: &DockerCluster| s7.referrer_of(&o.metadata, "DockerCluster")),
        )
        .watches_shared_stream(
            i.control_planes.subscribe(),
            queue.map_to(move |o: &KubeadmControlPlane| s2.cluster_of_changed_control_plane(o)),
        )
        .watches_shared_stream(i.machines.subscribe(), queue.map_to(move |m: &Machine| s3.cluster_of_machine(m)))
        .watches_shared_stream(
            i.machine_sets.subscribe(),
            queue.map_to(move |o: &MachineSet| {
                s4.deleting_cluster_of(&s4.machine_sets, &o.metadata, &o.spec.cluster_name)
            }),
        )
        .watches_shared_stream(
            i.machine_deployments.subscribe(),
            queue.map_to(move |o: &MachineDeployment| s5.cluster_of_machine_deployment(o)),
        )
        .reconcile_on(queue.track_refs(futures::stream::select(summary_triggers, state.probes.clone().triggers())));
    Box::pin(runner::run(CONTROLLER, c, queue, ctx.settings.cluster_concurrency, ctx.clock().clone(), state, reconcile))
}

fn in_store<K>(store: &Store<K>, ns: &str, name: &str) -> Option<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    store.get(&ObjectRef::new(name).within(ns))
}

impl State {
    fn record(&self, c: &Cluster) {
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        for r in [c.spec.infrastructure_ref.as_ref(), c.spec.control_plane_ref.as_ref()].into_iter().flatten() {
            self.referrers.record(ns, &ref_key(&r.kind, &r.name), &c.name_any());
        }
    }

    fn cluster(&self, ns: &str, name: &str) -> Option<Arc<Cluster>> {
        in_store(&self.ctx.informers.clusters.store, ns, name)
    }

    /// The Cluster owning (or, before adoption, referencing) an infrastructure cluster or
    /// control plane.
    fn referrer_of(&self, meta: &ObjectMeta, kind: &str) -> Vec<ObjectRef<Cluster>> {
        let ns = meta.namespace.as_deref().unwrap_or_default();
        if let Some(o) = owner::find_owner(meta, "cluster.x-k8s.io", "Cluster") {
            return vec![ObjectRef::new(&o.name).within(ns)];
        }
        let name = meta.name.as_deref().unwrap_or_default();
        let refers = |c: &Cluster| {
            [c.spec.infrastructure_ref.as_ref(), c.spec.control_plane_ref.as_ref()]
                .into_iter()
                .flatten()
                .any(|r| r.kind == kind && r.name == name)
        };
        self.referrers.refs(ns, &ref_key(kind, name), |c| self.cluster(ns, c).is_some_and(|c| refers(&c)))
    }

    /// Control planes update their status often; only what the Cluster mirrors matters.
    fn cluster_of_changed_control_plane(&self, o: &KubeadmControlPlane) -> Vec<ObjectRef<Cluster>> {
        let s = o.status.as_ref();
        let failure = s.and_then(|s| s.deprecated.as_ref()).and_then(|d| d.v1beta1.as_ref());
        let gate = ControlPlaneGate {
            initialized: s.and_then(|s| s.initialization.as_ref()?.control_plane_initialized).unwrap_or(false),
            deleting: o.metadata.deletion_timestamp.is_some(),
            failed: failure.is_some_and(|f| f.failure_reason.is_some() || f.failure_message.is_some()),
            owner: owner::find_owner(&o.metadata, "cluster.x-k8s.io", "Cluster").map(|r| r.name.clone()),
        };
        let summary = ControlPlaneSummary {
            ready_condition: o.get_condition(conditions::READY).cloned(),
            v1beta2: (
                gate_conditions(o.v1beta2_conditions(), ROLLUP_TYPES),
                [
                    o.spec.replicas,
                    s.and_then(|s| s.replicas),
                    s.and_then(|s| s.ready_replicas),
                    s.and_then(|s| s.available_replicas),
                    s.and_then(|s| s.up_to_date_replicas),
                ],
            ),
        };
        let ns = o.metadata.namespace.as_deref().unwrap_or_default();
        let store = &self.ctx.informers.control_planes.store;
        let exists = |k: &str| k.split_once('/').is_some_and(|(n, c)| in_store(store, n, c).is_some());
        let key = format!("{ns}/{}", o.name_any());
        let summarised = self.control_plane_summaries.changed(key.clone(), summary, store.len(), exists);
        if self.control_planes.changed(key, gate, store.len(), exists) {
            self.referrer_of(&o.metadata, "KubeadmControlPlane")
        } else if summarised {
            self.summaries.later(self.referrer_of(&o.metadata, "KubeadmControlPlane"))
        } else {
            Vec::new()
        }
    }

    /// Machines matter to their Cluster while it is deleting (it waits for them), and while
    /// a Cluster without a control plane object waits for its first control plane Node.
    fn cluster_of_machine(&self, m: &Machine) -> Vec<ObjectRef<Cluster>> {
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        self.machines.record(ns, &m.spec.cluster_name, &m.name_any());
        let Some(c) = self.cluster(ns, &m.spec.cluster_name) else {
            return Vec::new();
        };
        let control_plane = crate::framework::objects::is_control_plane(m);
        let waits_for_node = c.spec.control_plane_ref.is_none()
            && !c.control_plane_initialized()
            && control_plane
            && m.status.as_ref().is_some_and(|s| s.node_ref.is_some());
        // Control plane Machines are aggregated directly; workers through their
        // MachineDeployments' changes (as upstream).
        let aggregated = control_plane && {
            let store = &self.ctx.informers.machines.store;
            let exists = |k: &str| k.split_once('/').is_some_and(|(n, m)| in_store(store, n, m).is_some());
            let gate = gate_conditions(m.v1beta2_conditions(), &[v2names::READY, v2names::UP_TO_DATE]);
            self.machine_gates.changed(format!("{ns}/{}", m.name_any()), gate, store.len(), exists)
        };
        if c.metadata.deletion_timestamp.is_some() || waits_for_node {
            vec![ObjectRef::from_obj(c.as_ref())]
        } else if aggregated {
            self.summaries.later(vec![ObjectRef::from_obj(c.as_ref())])
        } else {
            Vec::new()
        }
    }

    /// A MachineDeployment matters to its Cluster while it is deleting, and when what the
    /// Cluster aggregates of it changed.
    fn cluster_of_machine_deployment(&self, o: &MachineDeployment) -> Vec<ObjectRef<Cluster>> {
        let deleting = self.deleting_cluster_of(&self.machine_deployments, &o.metadata, &o.spec.cluster_name);
        if !deleting.is_empty() {
            return deleting;
        }
        let ns = o.metadata.namespace.as_deref().unwrap_or_default();
        let gate = (
            gate_conditions(
                o.v1beta2_conditions(),
                &[ROLLUP_TYPES, &[v2names::MACHINES_READY, v2names::MACHINES_UP_TO_DATE]].concat(),
            ),
            replica_gate(o),
        );
        let store = &self.ctx.informers.machine_deployments.store;
        let exists = |k: &str| k.split_once('/').is_some_and(|(n, m)| in_store(store, n, m).is_some());
        if !self.deployment_gates.changed(format!("{ns}/{}", o.name_any()), gate, store.len(), exists) {
            return Vec::new();
        }
        let cluster = self.cluster(ns, &o.spec.cluster_name);
        self.summaries.later(cluster.map(|c| vec![ObjectRef::from_obj(c.as_ref())]).unwrap_or_default())
    }

    /// Sets the Cluster's v1beta2 status from the objects read (`deleting`: the deletion
    /// stage's reason and message).
    fn set_v1beta2(&self, c: &mut Cluster, seen: &Seen, deleting: Option<(&str, String)>, now: &Time) {
        let f = self.family(c);
        let inputs = v1beta2::Inputs {
            infra: seen.infra.as_ref(),
            control_plane: seen.control_plane.as_ref(),
            control_plane_machines: &f.control_plane_machines,
            worker_machines: &f.worker_machines,
            machine_deployments: &f.machine_deployments,
            machine_sets: &f.machine_sets,
            deleting,
            probe: seen.probe,
        };
        v1beta2::update(c, &inputs, now);
        crate::framework::pause::set_v1beta2_condition(c, None, now);
    }

    fn deleting_cluster_of(&self, index: &Index, meta: &ObjectMeta, cluster: &str) -> Vec<ObjectRef<Cluster>> {
        let ns = meta.namespace.as_deref().unwrap_or_default();
        index.record(ns, cluster, meta.name.as_deref().unwrap_or_default());
        match self.cluster(ns, cluster) {
            Some(c) if c.metadata.deletion_timestamp.is_some() => {
                vec![ObjectRef::from_obj(c.as_ref())]
            }
            _ => Vec::new(),
        }
    }
}

/// The infrastructure cluster and control plane as this reconcile read them.
#[derive(Default)]
struct Seen {
    infra: Option<Referenced>,
    control_plane: Option<Referenced>,
    probe: probe::Verdict,
}

fn is_paused(obj: &Referenced) -> bool {
    has_annotation(obj.meta().annotations.as_ref(), PAUSED_ANNOTATION)
}

async fn reconcile(cluster: Arc<Cluster>, state: Arc<State>) -> Result<Requeue> {
    if state.writer.is_stale(cluster.as_ref()) {
        return Ok(Requeue::await_change());
    }
    // `spec.paused` or the paused annotation: only the Paused condition is written.
    if let Some(p) = Pause::of(&cluster, &cluster.metadata, false) {
        let mut c = (*cluster).clone();
        let now = state.ctx.clock().condition_time();
        pause::set_condition(&mut c, Some(p), &cluster, now);
        let api = state.ctx.api::<Cluster>(&namespace(&cluster));
        state.writer.write(&api, &cluster, &c, Status::observing(false)).await?;
        return Ok(Requeue::await_change());
    }
    if cluster.metadata.deletion_timestamp.is_some() {
        return delete::reconcile(&state, &cluster).await;
    }
    let ctx = &state.ctx;
    let now = ctx.clock().condition_time();
    let mut c = (*cluster).clone();
    pause::set_condition(&mut c, None, &cluster, now.clone());
    add_finalizer(&mut c, CLUSTER_FINALIZER);
    let api = ctx.api::<Cluster>(&cluster.namespace().unwrap_or_default());
    if c.spec.topology.is_some() && (c.spec.infrastructure_ref.is_none() || c.spec.control_plane_ref.is_none()) {
        // Waiting for the topology controller to create the objects.
        state.set_v1beta2(&mut c, &Seen::default(), None, &now);
        state.writer.apply(&api, &cluster, &c).await?;
        return Ok(Requeue::await_change());
    }
    let mut seen = Seen::default();
    let result = reconcile_contracts(&state, &cluster, &mut c, &mut seen, &now).await;
    if c.control_plane_initialized() {
        seen.probe = state.probes.verdict(&namespace(&cluster), &cluster.name_any()).await;
    }
    let mut events = PendingEvents::default();
    finish(&cluster, &mut c, now.clone(), &mut events);
    state.set_v1beta2(&mut c, &seen, None, &now);
    state.writer.write(&api, &cluster, &c, Status::observing(result.is_ok())).await?;
    events.publish(ctx, cluster.as_ref()).await;
    result.map(Requeue::after_opt)
}

async fn reconcile_contracts(
    state: &State,
    cluster: &Cluster,
    c: &mut Cluster,
    seen: &mut Seen,
    now: &Time,
) -> Result<Option<Duration>> {
    let infra = reconcile_infrastructure(state, cluster, c, &mut seen.infra, now).await?;
    let cp = reconcile_control_plane(state, cluster, c, &mut seen.control_plane, now).await?;
    if c.spec.control_plane_ref.is_none() {
        control_plane_initialized_from_machines(state, c, now);
    }
    Ok(sooner(infra, cp))
}

fn namespace(c: &Cluster) -> String {
    c.namespace().unwrap_or_default()
}

/// The full reference of `field` (`infrastructureRef`, `controlPlaneRef`), in the version
/// its CRD names for the contract.
async fn resolve(
    state: &State,
    cluster: &Cluster,
    r: &ContractVersionedObjectReference,
    field: &str,
) -> Result<ObjectReference> {
    let during = format!("resolving spec.{field}");
    state.ctx.contracts.object_ref(r, &namespace(cluster)).await.map_err(Error::during(during))
}

/// Reads and adopts a referenced object; `None` when missing or paused. `seen` gets what
/// was read, paused or not.
async fn adopt(
    state: &State,
    cluster: &Cluster,
    r: &ObjectReference,
    seen: &mut Option<Referenced>,
) -> Result<Option<Referenced>> {
    let ns = namespace(cluster);
    let Some(obj) = referenced::read(&state.ctx, &ns, r).await? else {
        return Ok(None);
    };
    *seen = Some(obj.clone());
    if is_paused(&obj) {
        return Ok(None);
    }
    let owner = controller_ref_of(cluster)?;
    referenced::adopt(&state.ctx, CONTROLLER, r, &obj, &owner, &cluster.name_any(), &[]).await?;
    Ok(Some(obj))
}

fn unwatched(r: &ObjectReference) -> Option<Duration> {
    (!Source::of(r).is_watched()).then_some(UNWATCHED_RECHECK)
}

fn copy_failure(c: &mut Cluster, obj: &Referenced) {
    let (reason, message) = obj.failure();
    if reason.is_none() && message.is_none() {
        return;
    }
    let s = c.deprecated_v1beta1_mut();
    if reason.is_some() {
        s.failure_reason = reason;
    }
    if message.is_some() {
        s.failure_message = message;
    }
}

fn mirror_ready(c: &mut Cluster, obj: &Referenced, condition: &str, ready: bool, waiting: &str, now: &Time) {
    let fallback = if ready {
        MirrorFallback::True
    } else {
        MirrorFallback::False { reason: waiting, severity: Severity::Info, message: "" }
    };
    c.set_condition(conditions::mirror(&obj.conditions(), condition, fallback, now.clone()));
}

/// Copies the endpoint (and its path annotation) unless the Cluster already has a valid one.
fn take_endpoint(c: &mut Cluster, obj: &Referenced) {
    let valid = c.spec.control_plane_endpoint.as_ref().is_some_and(|e| e.is_valid());
    if !valid && let Some(e) = obj.control_plane_endpoint() {
        c.spec.control_plane_endpoint = Some((&e).into());
    }
    if let Some(path) = obj.annotation(ENDPOINT_PATH_ANNOTATION)
        && c.annotations().get(ENDPOINT_PATH_ANNOTATION).map(String::as_str) != Some(path)
    {
        let path = path.to_string();
        c.annotations_mut().insert(ENDPOINT_PATH_ANNOTATION.to_string(), path);
    }
}

async fn reconcile_infrastructure(
    state: &State,
    cluster: &Cluster,
    c: &mut Cluster,
    seen: &mut Option<Referenced>,
    now: &Time,
) -> Result<Option<Duration>> {
    let Some(cref) = c.spec.infrastructure_ref.clone() else {
        // No infrastructure cluster (managed control planes): nothing to wait for.
        c.initialization_mut().infrastructure_provisioned = Some(true);
        c.mark_true(INFRASTRUCTURE_READY, now.clone());
        return Ok(None);
    };
    let r = resolve(state, cluster, &cref, "infrastructureRef").await?;
    let Some(infra) = adopt(state, cluster, &r, seen).await? else {
        let msg = format!("Waiting for {} {}", cref.kind, cref.name);
        c.mark_false(INFRASTRUCTURE_READY, "WaitingForInfrastructure", Severity::Info, &msg, now.clone());
        return Ok(unwatched(&r));
    };
    copy_failure(c, &infra);
    let ready = infra.provisioned();
    // Once provisioned, always provisioned: readiness later is the conditions' business.
    let provisioned = &mut c.initialization_mut().infrastructure_provisioned;
    *provisioned = Some(ready || provisioned.unwrap_or(false));
    mirror_ready(c, &infra, INFRASTRUCTURE_READY, ready, "WaitingForInfrastructure", now);
    if !ready {
        return Ok(unwatched(&r));
    }
    take_endpoint(c, &infra);
    if let Some(fd) = infra.failure_domains().filter(|f| !f.is_empty()) {
        c.status.get_or_insert_with(Default::default).failure_domains = Some(fd);
    }
    Ok(None)
}

async fn reconcile_control_plane(
    state: &State,
    cluster: &Cluster,
    c: &mut Cluster,
    seen: &mut Option<Referenced>,
    now: &Time,
) -> Result<Option<Duration>> {
    let Some(cref) = c.spec.control_plane_ref.clone() else {
        return Ok(None);
    };
    let r = resolve(state, cluster, &cref, "controlPlaneRef").await?;
    let Some(cp) = adopt(state, cluster, &r, seen).await? else {
        let msg = format!("Waiting for {} {}", cref.kind, cref.name);
        c.mark_false(CONTROL_PLANE_READY, "WaitingForControlPlane", Severity::Info, &msg, now.clone());
        return Ok(unwatched(&r));
    };
    copy_failure(c, &cp);
    let ready = cp.control_plane_ready();
    mirror_ready(c, &cp, CONTROL_PLANE_READY, ready, "WaitingForControlPlane", now);
    if !c.control_plane_initialized() {
        if cp.control_plane_initialized() {
            mark_control_plane_initialized(c, now);
        } else {
            c.initialization_mut().control_plane_initialized = Some(false);
            let reason = "WaitingForControlPlaneProviderInitialized";
            c.mark_false(
                CONTROL_PLANE_INITIALIZED,
                reason,
                Severity::Info,
                "Waiting for control plane provider to indicate the control plane has been initialized",
                now.clone(),
            );
        }
    }
    if ready {
        take_endpoint(c, &cp);
    }
    Ok(if ready { None } else { unwatched(&r) })
}

/// Without a control plane object the first control plane Machine with a Node initializes
/// the cluster. Once True it stays True.
fn control_plane_initialized_from_machines(state: &State, c: &mut Cluster, now: &Time) {
    if c.control_plane_initialized() {
        return;
    }
    let ns = namespace(c);
    let name = c.name_any();
    let store = &state.ctx.informers.machines.store;
    let initialized = state
        .machines
        .members(&ns, &name, |m| in_store(store, &ns, m).is_some())
        .iter()
        .filter_map(|m| in_store(store, &ns, m))
        .any(|m| {
            m.metadata.deletion_timestamp.is_none()
                && crate::framework::objects::is_control_plane(&m)
                && m.status.as_ref().is_some_and(|s| s.node_ref.is_some())
        });
    if initialized {
        mark_control_plane_initialized(c, now);
    } else {
        c.initialization_mut().control_plane_initialized = Some(false);
        let msg = "Waiting for the first control plane machine to have its status.nodeRef set";
        c.mark_false(CONTROL_PLANE_INITIALIZED, "MissingNodeRef", Severity::Info, msg, now.clone());
    }
}

/// `status.initialization.controlPlaneInitialized` and its v1beta1 condition; once set,
/// they stay.
fn mark_control_plane_initialized(c: &mut Cluster, now: &Time) {
    c.initialization_mut().control_plane_initialized = Some(true);
    c.mark_true(CONTROL_PLANE_INITIALIZED, now.clone());
}

mod delete;
mod phase;
mod probe;
mod v1beta2;
use phase::finish;
use v1beta2::{Gate, GateCondition, ROLLUP_TYPES, gate_conditions, replica_gate};

#[cfg(test)]
mod tests;
