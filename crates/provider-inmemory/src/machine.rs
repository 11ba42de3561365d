//! InMemoryMachine: a simulated machine. Once its Machine, the Cluster's infrastructure and
//! the bootstrap data are there (workers also wait for the control plane to be initialized),
//! the VM, Node, etcd and API server "start" after the configured delays, and their objects
//! appear in the workload cluster: the Node, the control plane static pods with the etcd
//! membership annotations, and kubeadm's ConfigMap once the first control plane is up.
//!
//! The provisioning start is persisted (an annotation, written with the finalizer and the
//! provider ID in one patch), and every deadline is derived from it (see [`crate::timing`]),
//! so a restarted drydock resumes instead of starting over. Conditions record which objects
//! exist, so they are not created twice.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use drydock_api::capi::condition_types::WAITING_FOR_CLUSTER_INFRASTRUCTURE;
use drydock_api::capi::conditions::{Condition, HasConditions, Severity, time_at};
use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL};
use drydock_api::capi::owner::{api_group, find_owner};
use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::Running;
use drydock_controllers::etcd::{self, Membership};
use drydock_controllers::framework::Requeue;
use drydock_controllers::framework::nodes::NodeSync;
use drydock_controllers::framework::runner::{self, Queue};
use drydock_controllers::framework::write::{Writer, add_finalizer, remove_finalizer};
use drydock_controllers::framework::{Error, Result};
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ListParams};
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use parking_lot::Mutex;

use crate::fabricate::{self, API_SERVER_COMPONENTS, ETCD, KUBE_SYSTEM, MachineFacts};
use crate::fault::{self, FAULT_REASON, Fault};
use crate::index::{ClusterMachines, Gate};
use crate::logical::LogicalCluster;
use crate::timing::{Deadlines, Plan, Progress, fnv1a};
use crate::{ProviderContext, cluster_paused, is_paused};

const NAME: &str = "inmemorymachine";
pub const FINALIZER: &str = "inmemorymachine.infrastructure.cluster.x-k8s.io";
/// When provisioning started (RFC 3339); every startup deadline derives from it.
pub const STARTED_ANNOTATION: &str = "inmemorymachine.infrastructure.drydock.dev/provisioning-started";

pub const VM_PROVISIONED: &str = "VMProvisioned";
pub const NODE_PROVISIONED: &str = "NodeProvisioned";
pub const ETCD_PROVISIONED: &str = "EtcdProvisioned";
pub const API_SERVER_PROVISIONED: &str = "APIServerProvisioned";

pub const WAITING_FOR_BOOTSTRAP_DATA: &str = "WaitingForBootstrapData";
pub const WAITING_CONTROL_PLANE_INITIALIZED: &str = "WaitingControlPlaneInitialized";
pub const WAITING_FOR_STARTUP_TIMEOUT: &str = "WaitingForStartupTimeout";
pub const WAITING_FOR_VM_PROVISIONED: &str = "WaitingForVMProvisioned";
pub const WAITING_FOR_NODE_PROVISIONED: &str = "WaitingForNodeProvisioned";

struct MachineCtx {
    p: Arc<ProviderContext>,
    index: Arc<ClusterMachines>,
    /// Workload objects created per machine (`namespace/name`) by this process. The
    /// conditions say the same once written, but the next reconcile may still read the
    /// machine from before that write; this keeps it from creating them again.
    created: Mutex<HashMap<String, HashSet<&'static str>>>,
    /// Writes InMemoryMachines, remembering what it superseded.
    writer: Writer,
}

impl MachineCtx {
    /// Writes what differs and remembers that `before` is now outdated.
    async fn write(
        &self,
        api: &Api<InMemoryMachine>,
        before: &InMemoryMachine,
        after: &InMemoryMachine,
    ) -> Result<InMemoryMachine> {
        Ok(self.writer.apply(api, before, after).await?.or_wanted(after))
    }

    fn created(&self, key: &str, what: &'static str) -> bool {
        self.created.lock().get(key).is_some_and(|s| s.contains(what))
    }

    fn record(&self, key: &str, what: &'static str) {
        self.created.lock().entry(key.to_string()).or_default().insert(what);
    }

    fn forget(&self, key: &str, what: &'static str) {
        if let Some(s) = self.created.lock().get_mut(key) {
            s.remove(what);
        }
    }
}

/// What [`MachineCtx::created`] tracks besides the condition types: kubeadm-config was
/// uploaded; the machine joined an existing etcd cluster (so it ran `kubeadm join`, and
/// uploads nothing).
const KUBEADM_CONFIG_UPLOADED: &str = "KubeadmConfigUploaded";
const JOINED: &str = "Joined";
/// A fault was applied to the Node (so healing has something to undo).
const FAULT_APPLIED: &str = "FaultApplied";
/// The Node is absent because of a fault (so healing recreates it).
const FAULT_DELETED_NODE: &str = "FaultDeletedNode";

pub fn controller(pctx: &Arc<ProviderContext>) -> Running {
    let ctx = &pctx.ctx;
    let queue = Queue::new(NAME);
    let index = Arc::new(ClusterMachines::default());
    let record = {
        let index = index.clone();
        let machines = ctx.informers.machines.store.clone();
        move |m: Arc<InMemoryMachine>| {
            if let Some(c) = cluster_of(&m, |r| machines.get(r)) {
                index.record(&m.namespace().unwrap_or_default(), &c, &m.name_any());
            }
            m
        }
    };
    let wake = {
        let index = index.clone();
        let store = ctx.informers.inmemory_machines.store.clone();
        let clusters = ctx.informers.clusters.store.clone();
        move |c: &Cluster| index.on_cluster(c, &clusters, &store)
    };
    let c = Controller::for_shared_stream(
        queue.track(ctx.informers.inmemory_machines.subscribe()).map(record),
        ctx.informers.inmemory_machines.store.clone(),
    )
    .watches_shared_stream(ctx.informers.machines.subscribe(), queue.map_to(infra_of))
    .watches_shared_stream(ctx.informers.clusters.subscribe(), queue.map_to(wake));
    let mctx = Arc::new(MachineCtx {
        p: pctx.clone(),
        index,
        created: Mutex::new(HashMap::new()),
        writer: Writer::tracking(NAME),
    });
    Box::pin(runner::run(NAME, c, queue, 64, ctx.clock().clone(), mctx, reconcile))
}

/// The InMemoryMachine a Machine points at.
fn infra_of(m: &Machine) -> Vec<ObjectRef<InMemoryMachine>> {
    let r = &m.spec.infrastructure_ref;
    let ours = r.kind.as_deref() == Some("InMemoryMachine")
        && r.api_version.as_deref().is_some_and(|v| api_group(v) == "infrastructure.cluster.x-k8s.io");
    match (ours, r.name.as_deref()) {
        (true, Some(n)) => vec![ObjectRef::new(n).within(&m.namespace().unwrap_or_default())],
        _ => Vec::new(),
    }
}

fn owner_machine_ref(imm: &InMemoryMachine) -> Option<ObjectRef<Machine>> {
    let o = find_owner(&imm.metadata, "cluster.x-k8s.io", "Machine")?;
    Some(ObjectRef::new(&o.name).within(&imm.namespace().unwrap_or_default()))
}

/// The Cluster name of a machine: its cluster-name label, else its owner Machine's.
fn cluster_of(imm: &InMemoryMachine, machine: impl Fn(&ObjectRef<Machine>) -> Option<Arc<Machine>>) -> Option<String> {
    if let Some(c) = imm.labels().get(CLUSTER_NAME_LABEL) {
        return Some(c.clone());
    }
    machine(&owner_machine_ref(imm)?).map(|m| m.spec.cluster_name.clone())
}

fn is_control_plane(m: &Machine) -> bool {
    m.labels().contains_key(CONTROL_PLANE_LABEL)
}

/// Why provisioning cannot start yet, as (reason, message).
fn waiting_for(cluster: &Cluster, machine: &Machine) -> Option<(&'static str, &'static str)> {
    let gate = Gate::of(cluster);
    if !gate.infrastructure_ready {
        return Some((WAITING_FOR_CLUSTER_INFRASTRUCTURE, "Waiting for the cluster infrastructure to be ready"));
    }
    if machine.spec.bootstrap.data_secret_name.is_none() {
        return Some((WAITING_FOR_BOOTSTRAP_DATA, "Waiting for the bootstrap data secret"));
    }
    if !is_control_plane(machine) && !gate.control_plane_initialized {
        return Some((WAITING_CONTROL_PLANE_INITIALIZED, "Waiting for the control plane to be initialized"));
    }
    None
}

fn started_at(imm: &InMemoryMachine) -> Option<Timestamp> {
    imm.annotations().get(STARTED_ANNOTATION)?.parse().ok()
}

/// A condition that became True at a simulated instant (whole seconds, as conditions are).
fn true_at(type_: &str, at: Timestamp) -> Condition {
    let at = Timestamp::from_second(at.as_second()).unwrap_or(at);
    Condition::true_(type_, Time(at))
}

fn waiting(type_: &str, reason: &str, message: &str, now: Timestamp) -> Condition {
    Condition::false_(type_, reason, Severity::Info, message, time_at(now))
}

async fn reconcile(imm: Arc<InMemoryMachine>, c: Arc<MachineCtx>) -> Result<Requeue> {
    // Workload-cluster errors carry context (and are no longer plain 404s): a 404 here is
    // the object itself, deleted while this reconcile ran.
    match reconcile_machine(imm, c).await {
        Err(e) if e.is_not_found() => Ok(Requeue::await_change()),
        r => r,
    }
}

async fn reconcile_machine(imm: Arc<InMemoryMachine>, c: Arc<MachineCtx>) -> Result<Requeue> {
    let p = &c.p;
    // After a restart the owner Machine and Cluster may not be loaded yet; their events
    // might already have gone by, so wait for them rather than for the next change.
    p.ctx.informers.machines.ready().await;
    p.ctx.informers.clusters.ready().await;
    if c.writer.is_stale(&*imm) {
        // Read before this controller's last write; that write's event comes next.
        return Ok(Requeue::await_change());
    }
    let ns = imm.namespace().unwrap_or_default();
    let api: Api<InMemoryMachine> = p.ctx.api(&ns);
    if imm.meta().deletion_timestamp.is_some() {
        return reconcile_delete(&imm, &c, &api).await;
    }
    let informers = &p.ctx.informers;
    // The Machine controller sets the owner; until then there is nothing to simulate for.
    let Some(machine) = owner_machine_ref(&imm).and_then(|r| informers.machines.store.get(&r)) else {
        return Ok(Requeue::await_change());
    };
    c.index.record(&ns, &machine.spec.cluster_name, &imm.name_any());
    let Some(cluster) = informers.clusters.store.get(&ObjectRef::new(&machine.spec.cluster_name).within(&ns)) else {
        return Ok(Requeue::await_change());
    };
    if cluster_paused(&cluster) || is_paused(&*imm) {
        keep_faults_while_paused(&c, &imm, &machine).await?;
        return Ok(Requeue::await_change());
    }
    match start(&c, &api, &imm, &machine, &cluster).await? {
        Some((current, start)) => provision(&c, &api, &imm, &machine, current, start).await,
        // Cluster and Machine changes wake this machine again.
        None => Ok(Requeue::await_change()),
    }
}

/// Pausing stops the provider, not the simulated machine: its Node still gets sick.
async fn keep_faults_while_paused(c: &MachineCtx, imm: &InMemoryMachine, machine: &Machine) -> Result<()> {
    if !imm.is_condition_true(NODE_PROVISIONED) {
        return Ok(());
    }
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let version = machine.spec.version.clone().unwrap_or_default();
    let facts = MachineFacts { name: &name, version: &version, control_plane: is_control_plane(machine) };
    let lc_name = LogicalClusterName::for_cluster(&ns, &machine.spec.cluster_name);
    let lc = LogicalCluster::new(&c.p.host.client, &lc_name);
    let fault = Fault::of(imm.metadata.annotations.as_ref());
    apply_fault(c, &lc, lc_name.as_str(), &facts, &format!("{ns}/{name}"), fault)
        .await
        .map_err(|e| context(e, "injecting a fault"))
}

/// When provisioning started, with the machine as written to record it: the finalizer,
/// provider ID and start go in one write, before anything exists in the workload cluster
/// (so nothing can leak). `None` while provisioning cannot start (recorded in the
/// machine's conditions).
async fn start(
    c: &MachineCtx,
    api: &Api<InMemoryMachine>,
    imm: &InMemoryMachine,
    machine: &Machine,
    cluster: &Cluster,
) -> Result<Option<(InMemoryMachine, Timestamp)>> {
    let now = c.p.ctx.clock().now();
    let start = match started_at(imm) {
        Some(t) => t,
        None => {
            if let Some((reason, message)) = waiting_for(cluster, machine) {
                let mut want = imm.clone();
                want.set_condition(waiting(VM_PROVISIONED, reason, message, now));
                want.set_ready_summary(&[VM_PROVISIONED], time_at(now));
                c.write(api, imm, &want).await?;
                return Ok(None);
            }
            now
        }
    };
    let mut want = imm.clone();
    add_finalizer(&mut want, FINALIZER);
    want.spec.provider_id = Some(fabricate::provider_id(&imm.name_any()));
    want.annotations_mut().entry(STARTED_ANNOTATION.to_string()).or_insert_with(|| start.to_string());
    let current = if want.metadata != imm.metadata || want.spec != imm.spec {
        c.write(api, imm, &want).await?
    } else {
        imm.clone()
    };
    Ok(Some((current, start)))
}

/// What one reconcile does in the workload cluster, decided from what it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Registers the Node (under a deleted-Node fault, a kubelet that never registers).
    CreateNode,
    /// Brings the existing Node in line with the machine's fault annotation.
    ApplyFault,
    /// Joins etcd (or founds it).
    CreateEtcdMember,
    /// Starts the API server, scheduler and controller manager.
    CreateControlPlanePods,
    /// Uploads kubeadm-config, unless this machine joined an existing etcd cluster.
    UploadKubeadmConfig,
}

/// The steps due now: what the progress allows and was not done yet. `done` says whether
/// an object exists (its condition is True, or this process created it); `ready` whether
/// the machine already reported ready.
fn steps(progress: &Progress, deadlines: &Deadlines, done: impl Fn(&'static str) -> bool, ready: bool) -> Vec<Step> {
    let mut out = Vec::new();
    if progress.node {
        out.push(if done(NODE_PROVISIONED) { Step::ApplyFault } else { Step::CreateNode });
    }
    if deadlines.etcd.is_none() || deadlines.api_server.is_none() {
        return out;
    }
    if progress.etcd && !done(ETCD_PROVISIONED) {
        out.push(Step::CreateEtcdMember);
    }
    if progress.api_server && !done(API_SERVER_PROVISIONED) {
        out.push(Step::CreateControlPlanePods);
    }
    // The machine that founded etcd ran `kubeadm init`: once it is up, kubeadm-config is
    // uploaded. (After a restart whether it founded etcd is not known; the create is then
    // idempotent.)
    if progress.all_done() && !ready && !done(KUBEADM_CONFIG_UPLOADED) {
        out.push(Step::UploadKubeadmConfig);
    }
    out
}

/// The conditions the progress at `now` gives the machine, its Ready summary and readiness.
fn set_conditions(want: &mut InMemoryMachine, progress: &Progress, deadlines: &Deadlines, now: Timestamp) {
    want.set_condition(if progress.vm {
        true_at(VM_PROVISIONED, deadlines.vm)
    } else {
        waiting(VM_PROVISIONED, WAITING_FOR_STARTUP_TIMEOUT, "Waiting for the VM to start", now)
    });
    want.set_condition(if progress.node {
        true_at(NODE_PROVISIONED, deadlines.node)
    } else if progress.vm {
        waiting(NODE_PROVISIONED, WAITING_FOR_STARTUP_TIMEOUT, "Waiting for the Node to start", now)
    } else {
        waiting(NODE_PROVISIONED, WAITING_FOR_VM_PROVISIONED, "Waiting for the VM", now)
    });
    let mut summary = vec![VM_PROVISIONED, NODE_PROVISIONED];
    if let (Some(etcd_at), Some(api_at)) = (deadlines.etcd, deadlines.api_server) {
        summary.extend([ETCD_PROVISIONED, API_SERVER_PROVISIONED]);
        want.set_condition(if progress.etcd {
            true_at(ETCD_PROVISIONED, etcd_at)
        } else {
            waiting_after_node(ETCD_PROVISIONED, progress.node, "etcd", now)
        });
        want.set_condition(if progress.api_server {
            true_at(API_SERVER_PROVISIONED, api_at)
        } else {
            waiting_after_node(API_SERVER_PROVISIONED, progress.node, "the API server", now)
        });
    }
    want.set_ready_summary(&summary, time_at(now));
    if progress.all_done() {
        want.status.get_or_insert_with(Default::default).ready = Some(true);
    }
}

/// Plans the machine from its start and the time, runs the steps due in the workload
/// cluster, then writes the conditions.
async fn provision(
    c: &MachineCtx,
    api: &Api<InMemoryMachine>,
    imm: &InMemoryMachine,
    machine: &Machine,
    current: InMemoryMachine,
    start: Timestamp,
) -> Result<Requeue> {
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let control_plane = is_control_plane(machine);
    let plan = Plan::new(&name, imm.spec.behaviour.as_ref(), control_plane);
    let clock = c.p.ctx.clock();
    let now = clock.now();
    let progress = plan.progress(start, now);
    let deadlines = plan.deadlines(start);
    let key = format!("{ns}/{name}");
    let ready = imm.status.as_ref().and_then(|s| s.ready).unwrap_or(false);
    let due = steps(&progress, &deadlines, |t| imm.is_condition_true(t) || c.created(&key, t), ready);
    let mut want = current.clone();
    set_conditions(&mut want, &progress, &deadlines, now);

    let lc_name = LogicalClusterName::for_cluster(&ns, &machine.spec.cluster_name);
    let w = Workload {
        lc: LogicalCluster::new(&c.p.host.client, &lc_name),
        lc_name: lc_name.as_str(),
        facts: MachineFacts {
            name: &name,
            version: machine.spec.version.as_deref().unwrap_or_default(),
            control_plane,
        },
        key: &key,
        cluster_name: &machine.spec.cluster_name,
        fault: Fault::of(imm.metadata.annotations.as_ref()),
    };
    for step in due {
        w.run(c, step, &deadlines).await?;
    }
    c.write(api, &current, &want).await?;
    Ok(match progress.next {
        Some(t) => Requeue::at(clock, t),
        None => Requeue::await_change(),
    })
}

/// A machine's view of its workload cluster, for running [`Step`]s.
struct Workload<'a> {
    lc: LogicalCluster,
    lc_name: &'a str,
    facts: MachineFacts<'a>,
    /// The machine's `namespace/name` in [`MachineCtx::created`].
    key: &'a str,
    cluster_name: &'a str,
    fault: Option<Fault>,
}

impl Workload<'_> {
    async fn run(&self, c: &MachineCtx, step: Step, deadlines: &Deadlines) -> Result<()> {
        let (lc, facts, key) = (&self.lc, &self.facts, self.key);
        match step {
            Step::CreateNode => {
                if self.fault == Some(Fault::NodeDeleted) {
                    c.record(key, FAULT_DELETED_NODE);
                } else {
                    lc.create(NAME, &fabricate::node(facts, deadlines.node)?)
                        .await
                        .map_err(|e| context(e, "creating the Node"))?;
                }
                c.record(key, NODE_PROVISIONED);
            }
            Step::ApplyFault => {
                apply_fault(c, lc, self.lc_name, facts, key, self.fault)
                    .await
                    .map_err(|e| context(e, "injecting a fault"))?;
            }
            Step::CreateEtcdMember => {
                let at = deadlines.etcd.unwrap_or(deadlines.node);
                let founded =
                    create_etcd_member(lc, facts, at).await.map_err(|e| context(e, "creating the etcd member"))?;
                c.record(key, ETCD_PROVISIONED);
                if !founded {
                    c.record(key, JOINED);
                }
            }
            Step::CreateControlPlanePods => {
                let at = deadlines.api_server.unwrap_or(deadlines.node);
                for component in API_SERVER_COMPONENTS {
                    let pod = fabricate::static_pod(facts, component, BTreeMap::new(), at)?;
                    lc.create(NAME, &pod).await.map_err(|e| context(e, "creating the control plane pods"))?;
                }
                c.record(key, API_SERVER_PROVISIONED);
            }
            Step::UploadKubeadmConfig if !c.created(key, JOINED) => {
                lc.create(NAME, &fabricate::kubeadm_config(self.cluster_name, facts.version))
                    .await
                    .map_err(|e| context(e, "uploading kubeadm-config"))?;
                c.record(key, KUBEADM_CONFIG_UPLOADED);
            }
            Step::UploadKubeadmConfig => {}
        }
        Ok(())
    }
}

/// Brings the Node in line with the machine's fault annotation (see [`crate::fault`]). The
/// Node is read only for machines with a fault (or one just healed), or when the Node store
/// shows a Ready condition a fault set (left over from before a restart).
async fn apply_fault(
    c: &MachineCtx,
    lc: &LogicalCluster,
    lc_name: &str,
    facts: &MachineFacts<'_>,
    key: &str,
    fault: Option<Fault>,
) -> Result<()> {
    let deleted_by_fault = c.created(key, FAULT_DELETED_NODE);
    let applied = c.created(key, FAULT_APPLIED);
    let leftover = || {
        let store = c.p.ctx.informers.nodes.as_ref().filter(|n| n.sync() == NodeSync::Synced);
        store.and_then(|s| s.get(lc_name, facts.name)).is_some_and(|n| {
            let conditions = n.status.as_ref().and_then(|s| s.conditions.as_ref());
            conditions.into_iter().flatten().any(|c| c.type_ == "Ready" && c.reason.as_deref() == Some(FAULT_REASON))
        })
    };
    if fault.is_none() && !applied && !deleted_by_fault && !leftover() {
        return Ok(());
    }
    let node: Option<Node> = lc.get(None, facts.name).await?;
    match fault::plan(node.as_ref(), fault, deleted_by_fault, c.p.ctx.clock().now())? {
        fault::Action::Nothing => {}
        fault::Action::Delete => {
            lc.delete::<Node>(NAME, None, facts.name).await?;
            c.record(key, FAULT_DELETED_NODE);
        }
        fault::Action::Recreate => {
            lc.create(NAME, &fabricate::node(facts, c.p.ctx.clock().now())?).await?;
            c.forget(key, FAULT_DELETED_NODE);
        }
        fault::Action::SetConditions(patch) => {
            lc.patch_status::<Node>(NAME, None, facts.name, &patch).await?;
        }
    }
    if fault.is_some() {
        c.record(key, FAULT_APPLIED);
    } else if !c.created(key, FAULT_DELETED_NODE) {
        c.forget(key, FAULT_APPLIED);
    }
    Ok(())
}

fn waiting_after_node(type_: &str, node_done: bool, what: &str, now: Timestamp) -> Condition {
    if node_done {
        waiting(type_, WAITING_FOR_STARTUP_TIMEOUT, &format!("Waiting for {what} to start"), now)
    } else {
        waiting(type_, WAITING_FOR_NODE_PROVISIONED, "Waiting for the Node", now)
    }
}

fn context(e: Error, what: &str) -> Error {
    Error::during(format!("{what} in the workload cluster"))(e)
}

/// Creates the `etcd-<node>` pod. Membership is read from the existing members' pods: the
/// first member founds the cluster and leads it. Returns whether this one founded it.
async fn create_etcd_member(lc: &LogicalCluster, f: &MachineFacts<'_>, at: Timestamp) -> Result<bool> {
    let pods: Vec<Pod> = match lc.list(Some(KUBE_SYSTEM), &ListParams::default().labels(etcd::ETCD_SELECTOR)).await {
        Ok(p) => p,
        // The namespace may not exist yet in a brand new logical cluster.
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e),
    };
    let existing = Membership::from_pods(&pods);
    let member_id = fnv1a(&[f.name.as_bytes(), b"/etcd-member"]) as u32;
    let annotations = etcd::new_member_annotations(&existing, member_id, rand::random(), at);
    lc.create(NAME, &fabricate::static_pod(f, ETCD, annotations, at)?).await?;
    Ok(existing.members.is_empty())
}

/// Removes the machine's Node and static pods from the workload cluster (when it still
/// exists), then the finalizer.
async fn reconcile_delete(imm: &InMemoryMachine, c: &MachineCtx, api: &Api<InMemoryMachine>) -> Result<Requeue> {
    if !imm.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let machines = &c.p.ctx.informers.machines.store;
    if let Some(cluster) = cluster_of(imm, |r| machines.get(r)) {
        let lc = LogicalCluster::new(&c.p.host.client, &LogicalClusterName::for_cluster(&ns, &cluster));
        if imm.get_condition(ETCD_PROVISIONED).is_some() || imm.get_condition(API_SERVER_PROVISIONED).is_some() {
            for component in std::iter::once(ETCD).chain(API_SERVER_COMPONENTS) {
                lc.delete::<Pod>(NAME, Some(KUBE_SYSTEM), &fabricate::pod_name(component, &name))
                    .await
                    .map_err(|e| context(e, "deleting the control plane pods"))?;
            }
        }
        if imm.get_condition(NODE_PROVISIONED).is_some() {
            lc.delete::<Node>(NAME, None, &name).await.map_err(|e| context(e, "deleting the Node"))?;
        }
        c.index.forget(&ns, &cluster, &name);
    }
    c.created.lock().remove(&format!("{ns}/{name}"));
    c.writer.forget(imm);
    let mut want = imm.clone();
    remove_finalizer(&mut want, FINALIZER);
    c.writer.apply(api, imm, &want).await?;
    Ok(Requeue::await_change())
}
