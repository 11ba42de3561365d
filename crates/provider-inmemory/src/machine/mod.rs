//! Simulated machines (InMemoryMachine, DevMachine): once its Machine, the Cluster's
//! infrastructure and the bootstrap data are there (workers also wait for the control plane
//! to be initialized), the VM, Node, etcd and API server "start" after the configured
//! delays, and their objects appear in the workload cluster: the Node, the control plane
//! static pods with the etcd membership annotations, and kubeadm's ConfigMap once the first
//! control plane is up. One controller per kind ([`crate::kinds`]) runs this reconcile.
//!
//! The provisioning start is persisted (an annotation, written with the finalizer and the
//! provider ID in one patch), and every deadline is derived from it (see [`crate::timing`]),
//! so a restarted drydock resumes instead of starting over. Conditions record which objects
//! exist, so they are not created twice.
//!
//! [`steps`] decides what a reconcile does, [`workload`] does it in the workload cluster,
//! [`delete`] cleans up.

mod addresses;
mod delete;
mod steps;
mod workload;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use drydock_api::capi::condition_types::WAITING_FOR_CLUSTER_INFRASTRUCTURE;
use drydock_api::capi::conditions::{Condition, Severity, time_at};
use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::ipam::v1beta2::IPAddressClaim;
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL};
use drydock_api::capi::owner::find_owner;
use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::framework::Requeue;
use drydock_controllers::framework::Result;
use drydock_controllers::framework::index::Changes;
use drydock_controllers::framework::runner::{self, Queue};
use drydock_controllers::framework::write::{Writer, add_finalizer};
use drydock_controllers::{Context, Running};
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use parking_lot::Mutex;

use crate::fabricate::{self, MachineFacts};
use crate::fault::Fault;
use crate::index::{ClusterMachines, Gate};
use crate::kinds::{SimulatedMachine, announce_backend, finish_conditions};
use crate::logical::LogicalCluster;
use crate::timing::Plan;
use crate::{ProviderContext, cluster_paused, is_paused};
use addresses::{Claimed, WAITING_FOR_IP_ADDRESSES};
use steps::{set_conditions, steps};
use workload::{Workload, apply_fault, context};

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
    /// Writes the machines, remembering what it superseded.
    writer: Writer,
}

impl MachineCtx {
    /// Writes what differs and remembers that `before` is now outdated.
    async fn write<K: SimulatedMachine>(&self, api: &Api<K>, before: &K, after: &K) -> Result<K> {
        self.writer.apply(api, before, after).await?.or_wanted(after)
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

/// The controller of the simulated machine kind `K`.
pub fn controller<K: SimulatedMachine>(pctx: &Arc<ProviderContext>) -> Running {
    let ctx = &pctx.ctx;
    let informer = K::informer(&ctx.informers);
    let queue = Queue::new(K::CONTROLLER);
    let index = Arc::new(ClusterMachines::default());
    let record = {
        let index = index.clone();
        let machines = ctx.informers.machines.store.clone();
        move |m: Arc<K>| {
            if let Some(c) = cluster_of(m.as_ref(), |r| machines.get(r)) {
                index.record(&m.namespace().unwrap_or_default(), &c, &m.name_any());
            }
            m
        }
    };
    let wake = {
        let index = index.clone();
        let store = informer.store.clone();
        let clusters = ctx.informers.clusters.store.clone();
        move |c: &Cluster| index.on_cluster(c, &clusters, &store)
    };
    let c = Controller::for_shared_stream(queue.track(informer.subscribe()).map(record), informer.store.clone())
        .watches_shared_stream(ctx.informers.machines.subscribe(), queue.map_to(changed_infra_of::<K>(ctx)))
        .watches_shared_stream(ctx.informers.clusters.subscribe(), queue.map_to(wake))
        .watches_shared_stream(ctx.informers.ip_address_claims.subscribe(), queue.map_to(claimant::<K>));
    let mctx = Arc::new(MachineCtx {
        p: pctx.clone(),
        index,
        created: Mutex::new(HashMap::new()),
        writer: Writer::tracking(K::CONTROLLER),
    });
    Box::pin(runner::run(K::CONTROLLER, c, queue, 64, ctx.clock().clone(), mctx, reconcile::<K>))
}

/// What a simulated machine reads of its Machine. Most Machine writes only report its
/// progress (phase, conditions, addresses), which changes nothing simulated: those do not
/// wake the machine.
#[derive(PartialEq)]
struct MachineGate {
    uid: Option<String>,
    infrastructure: String,
    cluster: String,
    version: Option<String>,
    bootstrapped: bool,
    control_plane: bool,
    deleting: bool,
}

impl MachineGate {
    fn of(m: &Machine) -> Self {
        Self {
            uid: m.metadata.uid.clone(),
            infrastructure: m.spec.infrastructure_ref.name.clone(),
            cluster: m.spec.cluster_name.clone(),
            version: m.spec.version.clone(),
            bootstrapped: m.spec.bootstrap.data_secret_name.is_some(),
            control_plane: is_control_plane(m),
            deleting: m.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// [`infra_of`] for the Machines whose [`MachineGate`] changed.
fn changed_infra_of<K: SimulatedMachine>(
    ctx: &Context,
) -> impl Fn(&Machine) -> Vec<ObjectRef<K>> + Send + Sync + use<K> {
    let (gates, machines) = (Changes::default(), ctx.informers.machines.store.clone());
    move |m: &Machine| {
        let refs = infra_of::<K>(m);
        if refs.is_empty() || !gates.changed_in(&machines, m, MachineGate::of(m)) {
            return Vec::new();
        }
        refs
    }
}

/// The machine of kind `K` a Machine points at (any version of the kind).
fn infra_of<K: SimulatedMachine>(m: &Machine) -> Vec<ObjectRef<K>> {
    let r = &m.spec.infrastructure_ref;
    if r.is_kind(&K::group(&()), &K::kind(&())) && !r.name.is_empty() {
        vec![ObjectRef::new(&r.name).within(&m.namespace().unwrap_or_default())]
    } else {
        Vec::new()
    }
}

/// The machine of kind `K` that made an IPAddressClaim (its owner).
fn claimant<K: SimulatedMachine>(claim: &IPAddressClaim) -> Vec<ObjectRef<K>> {
    let ns = claim.namespace().unwrap_or_default();
    find_owner(&claim.metadata, &K::group(&()), &K::kind(&()))
        .map(|o| ObjectRef::new(&o.name).within(&ns))
        .into_iter()
        .collect()
}

fn owner_machine_ref<K: Resource>(imm: &K) -> Option<ObjectRef<Machine>> {
    let o = find_owner(imm.meta(), "cluster.x-k8s.io", "Machine")?;
    Some(ObjectRef::new(&o.name).within(imm.meta().namespace.as_deref().unwrap_or_default()))
}

/// The Cluster name of a machine: its cluster-name label, else its owner Machine's.
fn cluster_of<K: Resource>(imm: &K, machine: impl Fn(&ObjectRef<Machine>) -> Option<Arc<Machine>>) -> Option<String> {
    if let Some(c) = imm.meta().labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)) {
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

fn started_at<K: Resource>(imm: &K) -> Option<Timestamp> {
    imm.meta().annotations.as_ref()?.get(STARTED_ANNOTATION)?.parse().ok()
}

/// A condition that became True at a simulated instant (whole seconds, as conditions are).
fn true_at(type_: &str, at: Timestamp) -> Condition {
    let at = Timestamp::from_second(at.as_second()).unwrap_or(at);
    Condition::true_(type_, Time(at))
}

fn waiting(type_: &str, reason: &str, message: &str, now: Timestamp) -> Condition {
    Condition::false_(type_, reason, Severity::Info, message, time_at(now))
}

async fn reconcile<K: SimulatedMachine>(imm: Arc<K>, c: Arc<MachineCtx>) -> Result<Requeue> {
    // Workload-cluster errors carry context (and are no longer plain 404s): a 404 here is
    // the object itself, deleted while this reconcile ran.
    match reconcile_machine(imm, c).await {
        Err(e) if e.is_not_found() => Ok(Requeue::await_change()),
        r => r,
    }
}

async fn reconcile_machine<K: SimulatedMachine>(imm: Arc<K>, c: Arc<MachineCtx>) -> Result<Requeue> {
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
    let api: Api<K> = p.ctx.api(&ns);
    if imm.meta().deletion_timestamp.is_some() {
        return delete::reconcile_delete(imm.as_ref(), &c, &api).await;
    }
    let informers = &p.ctx.informers;
    // The Machine controller sets the owner; until then there is nothing to simulate for.
    let Some(machine) = owner_machine_ref(imm.as_ref()).and_then(|r| informers.machines.store.get(&r)) else {
        return Ok(Requeue::await_change());
    };
    c.index.record(&ns, &machine.spec.cluster_name, &imm.name_any());
    let Some(cluster) = informers.clusters.store.get(&ObjectRef::new(&machine.spec.cluster_name).within(&ns)) else {
        return Ok(Requeue::await_change());
    };
    if cluster_paused(&cluster) || is_paused(imm.as_ref()) {
        keep_faults_while_paused(&c, imm.as_ref(), &machine).await?;
        return Ok(Requeue::await_change());
    }
    match start(&c, &api, &imm, &machine, &cluster).await? {
        Some((current, start)) => provision(&c, &api, &imm, &machine, current, start).await,
        // Cluster and Machine changes wake this machine again.
        None => Ok(Requeue::await_change()),
    }
}

/// Pausing stops the provider, not the simulated machine: its Node still gets sick.
async fn keep_faults_while_paused<K: SimulatedMachine>(c: &MachineCtx, imm: &K, machine: &Machine) -> Result<()> {
    if !imm.is_condition_true(NODE_PROVISIONED) {
        return Ok(());
    }
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let version = machine.spec.version.clone().unwrap_or_default();
    let facts = MachineFacts { name: &name, version: &version, control_plane: is_control_plane(machine) };
    let lc_name = LogicalClusterName::for_cluster(&ns, &machine.spec.cluster_name);
    let lc = LogicalCluster::new(&c.p.host.client, &lc_name);
    let fault = Fault::of(imm.meta().annotations.as_ref());
    apply_fault(c, &lc, lc_name.as_str(), &facts, &format!("{ns}/{name}"), fault)
        .await
        .map_err(|e| context(e, "injecting a fault"))
}

/// When provisioning started, with the machine as written to record it: the finalizer,
/// provider ID and start go in one write, before anything exists in the workload cluster
/// (so nothing can leak). `None` while provisioning cannot start (recorded in the
/// machine's conditions).
async fn start<K: SimulatedMachine>(
    c: &MachineCtx,
    api: &Api<K>,
    imm: &K,
    machine: &Machine,
    cluster: &Cluster,
) -> Result<Option<(K, Timestamp)>> {
    let now = c.p.ctx.clock().now();
    let mut addresses = None;
    let start = match started_at(imm) {
        Some(t) => t,
        None => {
            let waiting_on = match waiting_for(cluster, machine) {
                Some((reason, message)) => Some((reason, message.to_string())),
                None => match addresses::claim(c, imm, &machine.spec.cluster_name).await? {
                    Claimed::Ready(a) => {
                        addresses = Some(a);
                        None
                    }
                    Claimed::Waiting(message) => Some((WAITING_FOR_IP_ADDRESSES, message)),
                },
            };
            if let Some((reason, message)) = waiting_on {
                let mut want = imm.clone();
                want.set_condition(waiting(VM_PROVISIONED, reason, &message, now));
                want.set_ready_summary(&[VM_PROVISIONED], time_at(now));
                let new = finish_conditions(&mut want, time_at(now));
                c.write(api, imm, &want).await?;
                announce_backend(&c.p.ctx.events, imm, new).await;
                return Ok(None);
            }
            now
        }
    };
    let mut want = imm.clone();
    add_finalizer(&mut want, K::FINALIZER);
    let provider_id = fabricate::provider_id(&imm.name_any());
    let new_id = imm.provider_id() != Some(provider_id.as_str());
    want.set_provider_id(provider_id);
    want.annotations_mut().entry(STARTED_ANNOTATION.to_string()).or_insert_with(|| start.to_string());
    let claimed = addresses.as_ref().is_some_and(|a| !a.is_empty());
    if let Some(a) = addresses.filter(|a| !a.is_empty()) {
        want.set_addresses(a);
    }
    let changed = want.meta() != imm.meta() || new_id || claimed;
    let current = if changed { c.write(api, imm, &want).await? } else { imm.clone() };
    Ok(Some((current, start)))
}

/// Plans the machine from its start and the time, runs the steps due in the workload
/// cluster, then writes the conditions.
async fn provision<K: SimulatedMachine>(
    c: &MachineCtx,
    api: &Api<K>,
    imm: &K,
    machine: &Machine,
    current: K,
    start: Timestamp,
) -> Result<Requeue> {
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let control_plane = is_control_plane(machine);
    let plan = Plan::new(&name, imm.behaviour(), control_plane);
    let clock = c.p.ctx.clock();
    let now = clock.now();
    let progress = plan.progress(start, now);
    let deadlines = plan.deadlines(start);
    let key = format!("{ns}/{name}");
    let ready = imm.is_ready();
    let due = steps(&progress, &deadlines, |t| imm.is_condition_true(t) || c.created(&key, t), ready);
    let mut want = current.clone();
    set_conditions(&mut want, &progress, &deadlines, now);
    let new = finish_conditions(&mut want, time_at(now));

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
        fault: Fault::of(imm.meta().annotations.as_ref()),
    };
    for step in due {
        w.run(c, step, &deadlines).await?;
    }
    c.write(api, &current, &want).await?;
    announce_backend(&c.p.ctx.events, imm, new).await;
    Ok(match progress.next {
        Some(t) => Requeue::at(clock, t),
        None => Requeue::await_change(),
    })
}
