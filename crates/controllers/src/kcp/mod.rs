//! The KubeadmControlPlane controller: a Cluster's control plane Machines, managed as one.
//!
//! A reconcile (upstream's §6.2):
//! 1. a paused control plane (its own `cluster.x-k8s.io/paused` annotation, or its
//!    Cluster's `spec.paused`; see `framework::pause`) only gets its `Paused` condition;
//! 2. wait for the Cluster's owner reference, add finalizer and cluster-name label;
//! 3. wait for the Cluster's infrastructure, look up or generate the cluster certificates
//!    ([`certificates`]), wait for the control plane endpoint, then write the
//!    `<cluster>-kubeconfig` Secret ([`kubeconfig`]);
//! 4. propagate the machine template's metadata and timeouts in place (`propagate`);
//! 5. read the workload cluster once ([`health`]): Nodes, static pods, etcd membership;
//! 6. run the pre-terminate hook of a deleting Machine: remove its etcd member ([`hook`]);
//! 7. remediate one Machine a MachineHealthCheck marked, if safe ([`remediation`]);
//! 8. judge which Machines are outdated ([`rollout`]) and move one step (`steps`, with
//!    [`scale`] choosing and `create` building Machines): roll out, or scale to
//!    `spec.replicas`, one Machine at a time, each only once every existing one is Ready
//!    with a healthy etcd member; a Machine is deleted only while etcd keeps quorum without
//!    it, leadership moved away first;
//! 9. write the status ([`status`]) once, only what changed.
//!
//! Deletion (`delete`) waits for the cluster's workers, then deletes every Machine.

pub mod certificates;
mod create;
mod delete;
pub mod health;
pub mod hook;
mod index;
pub mod kubeconfig;
mod members;
mod propagate;
pub mod remediation;
pub mod rollout;
pub mod scale;
pub mod status;
mod steps;
pub mod v1beta2;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, KUBEADM_CONTROL_PLANE_FINALIZER};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::owner::{api_group, find_owner, get_controller, is_controlled_by};
use drydock_api::capi::v1beta2_conditions::HasV1Beta2Conditions;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use parking_lot::Mutex;

use crate::framework::Result;
use crate::framework::index::Changes;
use crate::framework::write::{Writer, add_finalizer};

use crate::framework::pause::{self, Pause};
use crate::framework::requeue::{Requeue, sooner};
use crate::framework::runner::{self, Queue};
use crate::{Context, Running};
use index::MachineIndex;
use rollout::Outdated;
use steps::{Next, Step};

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "kubeadmcontrolplane";

/// Writes the control planes' Machines and other objects (control planes themselves go
/// through [`State::write`], which tracks staleness).
pub(crate) static WRITER: Writer = Writer::new(CONTROLLER);

/// The field manager of what the control plane applies to its Machines (upstream's name).
pub(crate) const MANAGER: &str = "capi-kubeadmcontrolplane";

/// The field manager of the labels and annotations the control plane applies to its
/// Machines' infrastructure machines and KubeadmConfigs (upstream's name).
pub(crate) const METADATA_MANAGER: &str = "capi-kubeadmcontrolplane-metadata";
/// Recheck while waiting for a Machine to disappear. Its deletion event normally wakes the
/// control plane first; this only bounds the wait if an event is missed.
const GONE_RECHECK: Duration = Duration::from_secs(10);
/// Recheck while the control plane is not stable (a Machine provisioning, a component
/// unhealthy, the workload cluster unreachable). Machine updates normally come first; this
/// only bounds the wait when the workload cluster changes on its own (upstream: 20 s).
const UNSTABLE_RECHECK: Duration = Duration::from_secs(20);
/// How long a Machine this controller created or deleted may take to show in the store.
const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(10);

/// A write of this controller the shared store has not reflected yet.
#[derive(Clone, Debug)]
enum Pending {
    Created(String, Instant),
    Deleted(String, Instant),
}

/// The controller's state beside the shared context.
pub(crate) struct State {
    ctx: Arc<Context>,
    machines: MachineIndex,
    kubeconfigs: kubeconfig::Written,
    certificates: certificates::Known,
    /// Per control plane (`namespace/name`): the Machine last created or deleted, until the
    /// store shows it, so a reconcile on a stale store never creates a second Machine.
    pending: Mutex<HashMap<String, Pending>>,
    /// The Machine index was filled from the loaded store.
    seeded: AtomicBool,
    /// Writes control planes, remembering what it superseded.
    writer: Writer,
    /// What each Cluster last showed of the parts the control plane acts on.
    cluster_gates: Changes<ClusterGate>,
}

/// The parts of a Cluster the control plane acts on: its spec (endpoint, network, pause),
/// its annotations (pause, the endpoint path), deletion, infrastructure readiness and
/// failure domains. Most Cluster writes only restate the Cluster's own conditions and
/// counters, which are computed from the control plane and its Machines: those do not wake it.
#[derive(Debug, PartialEq, Eq)]
struct ClusterGate {
    generation: Option<i64>,
    deleting: bool,
    infrastructure_ready: bool,
    /// A hash of the annotations and the failure domains, so the gate stays small.
    digest: u64,
}

impl ClusterGate {
    fn of(c: &Cluster) -> Self {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        c.metadata.annotations.hash(&mut h);
        let status = c.status.as_ref();
        serde_json::to_string(&status.and_then(|s| s.failure_domains.as_ref())).unwrap_or_default().hash(&mut h);
        Self {
            generation: c.metadata.generation,
            deleting: c.metadata.deletion_timestamp.is_some(),
            infrastructure_ready: c.infrastructure_provisioned(),
            digest: h.finish(),
        }
    }
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State {
        ctx: ctx.clone(),
        machines: MachineIndex::default(),
        kubeconfigs: kubeconfig::Written::default(),
        certificates: certificates::Known::default(),
        pending: Mutex::new(HashMap::new()),
        seeded: AtomicBool::new(false),
        writer: Writer::tracking(CONTROLLER),
        cluster_gates: Changes::default(),
    });
    let queue = Queue::new(CONTROLLER);
    let recorder = state.clone();
    let clusters = ctx.informers.clusters.store.clone();
    let gated = state.clone();
    let machines = ctx.informers.machines.subscribe().inspect(move |m| recorder.machines.record(m));
    let c = Controller::for_shared_stream(
        queue.track(ctx.informers.control_planes.subscribe()),
        ctx.informers.control_planes.store.clone(),
    )
    .watches_shared_stream(
        machines,
        queue.map_to(move |m: &Machine| {
            let mut refs = owner_of(m);
            if refs.is_empty() {
                refs = deleting_cluster_control_plane(m, &clusters);
            }
            refs
        }),
    )
    .watches_shared_stream(
        ctx.informers.clusters.subscribe(),
        queue.map_to(move |c: &Cluster| gated.changed_cluster(c)),
    );
    // etcd changes on its own (a member fails, another leads): its pods wake the control
    // plane whose Machine runs the member, found through the member's Node.
    let c = match ctx.informers.nodes.clone() {
        Some(nodes) => {
            let machines = ctx.informers.machines.store.clone();
            let members = crate::etcd::member_changes(nodes.all_clusters_client());
            c.watches_shared_stream(
                members,
                queue.map_to(move |p: &Pod| {
                    let lc = crate::framework::nodes::lc_annotation(&p.metadata);
                    let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref());
                    let machine = lc.zip(node).and_then(|(lc, node)| nodes.machine_of(lc, node));
                    machine.and_then(|m| machines.get(&m)).map(|m| owner_of(&m)).unwrap_or_default()
                }),
            )
        }
        None => c,
    };
    Box::pin(runner::run(CONTROLLER, c, queue, ctx.settings.kcp_concurrency, ctx.clock().clone(), state, reconcile))
}

fn is_kcp_ref(api_version: &str, kind: &str) -> bool {
    kind == "KubeadmControlPlane" && api_group(api_version) == "controlplane.cluster.x-k8s.io"
}

/// The KCP controlling a Machine.
fn owner_of(m: &Machine) -> Vec<ObjectRef<KubeadmControlPlane>> {
    get_controller(&m.metadata)
        .filter(|o| is_kcp_ref(&o.api_version, &o.kind))
        .map(|o| ObjectRef::new(&o.name).within(&m.namespace().unwrap_or_default()))
        .into_iter()
        .collect()
}

/// The KCP of a Machine's Cluster while that Cluster is being deleted: a deleting control
/// plane waits for the workers, and their changes (and deletions) are what it waits on.
fn deleting_cluster_control_plane(m: &Machine, clusters: &Store<Cluster>) -> Vec<ObjectRef<KubeadmControlPlane>> {
    let ns = m.namespace().unwrap_or_default();
    clusters
        .get(&ObjectRef::new(&m.spec.cluster_name).within(&ns))
        .filter(|c| c.metadata.deletion_timestamp.is_some())
        .map(|c| control_plane_of(&c))
        .unwrap_or_default()
}

/// The KCP a Cluster points at.
fn control_plane_of(c: &Cluster) -> Vec<ObjectRef<KubeadmControlPlane>> {
    c.spec
        .control_plane_ref
        .as_ref()
        .filter(|r| r.kind == "KubeadmControlPlane" && r.api_group == "controlplane.cluster.x-k8s.io")
        .map(|r| r.name.as_str())
        .map(|n| ObjectRef::new(n).within(&c.namespace().unwrap_or_default()))
        .into_iter()
        .collect()
}

fn key(kcp: &KubeadmControlPlane) -> String {
    format!("{}/{}", kcp.namespace().unwrap_or_default(), kcp.name_any())
}

fn is_deleting(m: &Machine) -> bool {
    m.metadata.deletion_timestamp.is_some()
}

impl State {
    /// The control plane of a Cluster whose gate changed.
    fn changed_cluster(&self, c: &Cluster) -> Vec<ObjectRef<KubeadmControlPlane>> {
        let store = &self.ctx.informers.clusters.store;
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(n, c)| store.get(&ObjectRef::new(c).within(n)).is_some());
        let key = format!("{}/{}", c.namespace().unwrap_or_default(), c.name_any());
        if !self.cluster_gates.changed(key, ClusterGate::of(c), store.len(), exists) {
            return Vec::new();
        }
        control_plane_of(c)
    }

    /// Writes what differs and remembers that `before` is now outdated.
    async fn write(
        &self,
        api: &Api<KubeadmControlPlane>,
        before: &KubeadmControlPlane,
        after: &KubeadmControlPlane,
    ) -> Result<KubeadmControlPlane> {
        self.writer.apply(api, before, after).await?.or_wanted(after)
    }

    /// Waits until the Machine and Cluster stores hold their initial lists (after a restart
    /// a control plane must not count Machines before they are loaded: it would create
    /// another), then fills the Machine index from the store once, since the trigger stream
    /// that feeds it may still be catching up.
    async fn caught_up(&self) {
        let informers = &self.ctx.informers;
        informers.machines.ready().await;
        informers.clusters.ready().await;
        if !self.seeded.load(Ordering::Acquire) {
            // Concurrent reconciles may both seed; recording is idempotent.
            for m in informers.machines.store.state() {
                self.machines.record(&m);
            }
            self.seeded.store(true, Ordering::Release);
        }
    }

    /// Machines of `cluster` this control plane controls.
    fn owned_machines(&self, kcp: &KubeadmControlPlane, cluster: &str) -> Vec<Arc<Machine>> {
        let ns = kcp.namespace().unwrap_or_default();
        self.machines
            .machines(&ns, cluster, &self.ctx.informers.machines.store)
            .into_iter()
            .filter(|m| is_controlled_by(&m.metadata, kcp))
            .collect()
    }

    /// How long to wait for the store to catch up with this controller's last write, if it
    /// has not yet.
    fn wait_for_store(&self, kcp: &KubeadmControlPlane, cluster: &str) -> Option<Duration> {
        let k = key(kcp);
        let ns = kcp.namespace().unwrap_or_default();
        let mut pending = self.pending.lock();
        let (name, since, seen) = match pending.get(&k)? {
            Pending::Created(name, since) => {
                let seen = self.ctx.informers.machines.store.get(&ObjectRef::new(name).within(&ns));
                if seen.is_some() {
                    self.machines.insert(&ns, cluster, name);
                }
                (name.clone(), *since, seen.is_some())
            }
            Pending::Deleted(name, since) => {
                let m = self.ctx.informers.machines.store.get(&ObjectRef::new(name).within(&ns));
                (name.clone(), *since, m.is_none_or(|m| is_deleting(&m)))
            }
        };
        let waited = since.elapsed();
        if seen || waited >= EXPECTATION_TIMEOUT {
            if !seen {
                tracing::warn!(control_plane = %k, machine = %name, "the Machine store did not reflect a write in time");
            }
            pending.remove(&k);
            return None;
        }
        Some(EXPECTATION_TIMEOUT - waited)
    }

    fn expect(&self, kcp: &KubeadmControlPlane, p: Pending) {
        self.pending.lock().insert(key(kcp), p);
    }
}

/// Longest wait before looking at a control plane again for time-driven rollouts
/// (`rolloutAfter`, certificate expiry): far instants are approached in steps.
const LONGEST_RECHECK: Duration = Duration::from_secs(24 * 3600);

async fn reconcile(kcp: Arc<KubeadmControlPlane>, s: Arc<State>) -> Result<Requeue> {
    // Errors of other objects carry context (and are no longer plain 404s): a 404 here is
    // the control plane itself, deleted while this reconcile ran.
    match reconcile_control_plane(kcp, s).await {
        Err(e) if e.is_not_found() => Ok(Requeue::await_change()),
        r => r,
    }
}

async fn reconcile_control_plane(kcp: Arc<KubeadmControlPlane>, s: Arc<State>) -> Result<Requeue> {
    s.caught_up().await;
    if s.writer.is_stale(&*kcp) {
        // Read before this controller's last write; that write's event comes next.
        return Ok(Requeue::await_change());
    }
    let ns = kcp.namespace().unwrap_or_default();
    let api: Api<KubeadmControlPlane> = s.ctx.api(&ns);
    // The Cluster controller sets this owner reference; upstream waits for it.
    let cluster_name = find_owner(&kcp.metadata, "cluster.x-k8s.io", "Cluster").map(|o| o.name.clone());
    let cluster =
        cluster_name.as_ref().and_then(|n| s.ctx.informers.clusters.store.get(&ObjectRef::new(n).within(&ns)));
    // The pause model (see `framework::pause`): the Cluster's spec.paused or the control
    // plane's own annotation stop everything, deletion included; the annotation on the
    // Cluster object pauses only the Cluster.
    if let Some(c) = &cluster
        && let Some(p) = Pause::of(c, &kcp.metadata, false)
    {
        let mut want = (*kcp).clone();
        let now = s.ctx.clock().condition_time();
        pause::set_condition(&mut want, Some(p), c, now);
        s.write(&api, &kcp, &want).await?;
        return Ok(Requeue::await_change());
    }
    if kcp.meta().deletion_timestamp.is_some() {
        return delete::reconcile(&s, &api, &kcp, cluster_name.as_deref()).await;
    }
    let (Some(cluster_name), Some(cluster)) = (cluster_name, cluster) else {
        return Ok(Requeue::await_change());
    };
    let mut want = (*kcp).clone();
    add_finalizer(&mut want, KUBEADM_CONTROL_PLANE_FINALIZER);
    want.labels_mut().insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
    let current = if want.metadata != kcp.metadata { s.write(&api, &kcp, &want).await? } else { (*kcp).clone() };
    if cluster.infrastructure_provisioned() {
        certificates::reconcile(&s, &api, &current, &cluster_name).await?;
    }
    let Some(server) = server_or_wait(&s, &api, &current, &cluster, &cluster_name).await? else {
        // The Cluster's changes wake this control plane.
        return Ok(Requeue::await_change());
    };
    let kc = kubeconfig::ensure(&s.ctx, &s.kubeconfigs, CONTROLLER, &current, &cluster, &server).await?;
    if let Some(wait) = s.wait_for_store(&current, &cluster_name) {
        return Ok(Requeue::after(wait));
    }
    let machines = s.owned_machines(&current, &cluster_name);
    if propagate::sync(&s.ctx, &current, &cluster_name, &machines).await? {
        // The Machines' update events bring the next reconcile, on what was written.
        return Ok(Requeue::await_change());
    }
    let renew_kubeconfig = kc.renew_at.map(|t| s.ctx.clock().until(t));
    let cp = ControlPlane { kcp: current, cluster: &cluster, cluster_name: &cluster_name, machines: &machines };
    let requeue = reconcile_machines(&s, &api, cp).await?;
    // The kubeconfig's client certificate is renewed by a reconcile at its renewal time.
    Ok(requeue.sooner(Requeue::after_opt(renew_kubeconfig.map(|d| d.min(LONGEST_RECHECK)))))
}

/// The workload cluster's API server URL once the Cluster's infrastructure is ready;
/// until then records what the control plane waits for.
async fn server_or_wait(
    s: &State,
    api: &Api<KubeadmControlPlane>,
    current: &KubeadmControlPlane,
    cluster: &Cluster,
    cluster_name: &str,
) -> Result<Option<String>> {
    let infra_ready = cluster.infrastructure_provisioned();
    if let Some(server) = kubeconfig::server_url(cluster).filter(|_| infra_ready) {
        return Ok(Some(server));
    }
    let now = s.ctx.clock().condition_time();
    let mut want = current.clone();
    let msg = if infra_ready {
        "Waiting for the cluster's control plane endpoint"
    } else {
        "Waiting for the cluster's infrastructure"
    };
    status::waiting(&mut want, cluster_name, msg, infra_ready, now.clone());
    pause::set_condition(&mut want, None, cluster, now);
    s.write(api, current, &want).await?;
    Ok(None)
}

/// A control plane with its Cluster and Machines, as one reconcile read them.
struct ControlPlane<'a> {
    kcp: KubeadmControlPlane,
    cluster: &'a Cluster,
    cluster_name: &'a str,
    machines: &'a [Arc<Machine>],
}

/// Deletion hooks, remediation, then one scaling or rollout step, then the status.
async fn reconcile_machines(s: &State, api: &Api<KubeadmControlPlane>, cp: ControlPlane<'_>) -> Result<Requeue> {
    let ControlPlane { kcp: mut current, cluster, cluster_name, machines } = cp;
    let initialized = status::is_initialized(&current);
    let observed = observe(s, &current, cluster_name, machines, initialized).await;
    if hook::reconcile(s, &current, cluster_name, machines, observed.as_ref()).await? {
        // The Machine's deletion goes on; its update brings the next reconcile.
        return Ok(Requeue::await_change());
    }
    // Remediation first, rollouts and scaling after (upstream's order).
    let remediated = remediation::reconcile(s, api, &mut current, cluster_name, machines, observed.as_ref()).await?;
    if remediated.deleted {
        return Ok(Requeue::after(GONE_RECHECK));
    }
    let outdated = judge_outdated(s, &current, machines).await;
    let inputs = steps::Inputs {
        kcp: &current,
        cluster,
        cluster_name,
        machines,
        observed: observed.as_ref(),
        outdated: &outdated,
    };
    let (wait, blocked, creation_failed) = match steps::scale_step(s, api, &inputs).await {
        // The status would describe the Machines as they were before this step; the
        // created or deleting Machine's event brings the next reconcile, which writes it.
        Ok(Next::MachinesChanged(a)) => return Ok(a),
        Ok(Next::Wait { after, blocked }) => (after, blocked, None),
        Err(Step::CreateFailed(msg)) => (Some(UNSTABLE_RECHECK), None, Some(msg)),
        Err(Step::Failed(e)) => return Err(e),
    };
    let now = s.ctx.clock().condition_time();
    let machines = &write_machine_conditions(s, &current, machines, observed.as_ref(), &outdated, &now).await?;
    let mut want = current.clone();
    let inputs = status::Inputs {
        cluster: cluster_name,
        machines,
        observed: observed.as_ref(),
        creation_failed,
        outdated: &outdated,
        blocked: blocked.as_deref(),
        now: now.clone(),
    };
    status::update(&mut want, &inputs);
    let v2 = v1beta2::Inputs {
        machines,
        observed: observed.as_ref(),
        blocked: blocked.as_deref(),
        certificates: true,
        now: &now,
    };
    v1beta2::update(&mut want, &v2);
    pause::set_condition(&mut want, None, cluster, now);
    let became_initialized = !initialized && status::is_initialized(&want);
    s.write(api, &current, &want).await?;
    if became_initialized {
        let note = "kubeadm init finished on the first control plane Machine".into();
        s.ctx.events.normal(&current, "ControlPlaneInitialized", note).await;
    }
    let timed = outdated.next_check.map(|d| d.min(LONGEST_RECHECK));
    Ok(Requeue::after_opt(sooner(sooner(wait, remediated.recheck), timed)))
}

/// Writes the conditions the control plane owns on its Machines where they changed (one
/// status write each, conditional on the version read: the Machine controller writes the
/// same list). Returns the Machines as they now stand. A Machine changed meanwhile is left
/// for the reconcile its change brings.
async fn write_machine_conditions(
    s: &State,
    kcp: &KubeadmControlPlane,
    machines: &[Arc<Machine>],
    observed: Option<&health::Observed>,
    outdated: &Outdated,
    now: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) -> Result<Vec<Arc<Machine>>> {
    let external_etcd = kcp.spec.has_external_etcd();
    let api: Api<Machine> = s.ctx.api(&kcp.namespace().unwrap_or_default());
    let mut out = Vec::with_capacity(machines.len());
    for m in machines {
        let wanted = v1beta2::machine_conditions(m, observed, outdated, external_etcd);
        let Some(conditions) = v1beta2::updated_conditions(m.v1beta2_conditions(), wanted, m.metadata.generation, now)
        else {
            out.push(m.clone());
            continue;
        };
        let mut want = (**m).clone();
        *want.v1beta2_conditions_mut() = conditions;
        match WRITER.write_status(&api, m, &want).await {
            Ok(_) => out.push(Arc::new(want)),
            Err(e) if e.is_conflict() || e.is_gone() => {
                tracing::debug!(machine = %m.name_any(), "Machine changed meanwhile; its conditions wait for the next reconcile");
                out.push(m.clone());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// What the workload cluster shows of the control plane, when it has Machines and answers.
async fn observe(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster_name: &str,
    machines: &[Arc<Machine>],
    initialized: bool,
) -> Option<health::Observed> {
    if machines.is_empty() {
        return None;
    }
    let ns = kcp.namespace().unwrap_or_default();
    match s.ctx.workload.get(&ns, cluster_name).await {
        Ok(client) => health::observe(&client, !initialized).await,
        Err(e) => Err(e),
    }
    .inspect_err(|e| tracing::debug!(cluster = %cluster_name, error = %e, "workload cluster not readable"))
    .ok()
}

/// Which Machines need a rollout, and why.
async fn judge_outdated(s: &State, kcp: &KubeadmControlPlane, machines: &[Arc<Machine>]) -> Outdated {
    let mut facts = Vec::with_capacity(machines.len());
    for m in machines {
        facts.push(rollout::facts(&s.ctx, m).await);
    }
    let outdated = Outdated::judge(kcp, machines.iter().map(|m| m.as_ref()).zip(facts.iter()), s.ctx.clock().now());
    for m in machines.iter().filter(|m| outdated.is_outdated(m)) {
        tracing::debug!(machine = %m.name_any(), reason = outdated.reason(&m.name_any()), "needs rollout");
    }
    outdated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_machines_and_clusters_to_their_control_plane() {
        let mut m = Machine::new("m", Default::default());
        m.metadata.namespace = Some("ns".into());
        assert!(owner_of(&m).is_empty());
        m.metadata.owner_references = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1beta1".into(),
            kind: "KubeadmControlPlane".into(),
            name: "cp".into(),
            uid: "u".into(),
            controller: Some(true),
            ..Default::default()
        }]);
        assert_eq!(owner_of(&m), vec![ObjectRef::new("cp").within("ns")]);

        let mut c = Cluster::new("c", Default::default());
        c.metadata.namespace = Some("ns".into());
        c.spec.control_plane_ref = Some(drydock_api::capi::common::ContractVersionedObjectReference {
            api_group: "controlplane.cluster.x-k8s.io".into(),
            kind: "KubeadmControlPlane".into(),
            name: "cp".into(),
        });
        assert_eq!(control_plane_of(&c), vec![ObjectRef::new("cp").within("ns")]);
    }
}
