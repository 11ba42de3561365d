//! The MachineHealthCheck controller: judges the health of the Machines a check selects
//! from their Nodes, and hands unhealthy ones over for remediation (upstream's §5).
//!
//! A reconcile of one check:
//! 1. pause (the Cluster's `spec.paused` or the check's paused annotation): only the
//!    `Paused` condition is written;
//! 2. the cluster-name label and a Cluster owner reference;
//! 3. targets: Machines of the cluster matching the selector, without the paused or
//!    `cluster.x-k8s.io/skip-remediation` annotation;
//! 4. each target judged (`judge.rs`) from its Node: read from the cross-cluster Node store
//!    when there is one, else from one list of the workload cluster's Nodes;
//! 5. the short-circuit (`limits.rs`): too many unhealthy targets stop all remediation;
//! 6. Machine conditions and remediation requests (`remediate.rs`), each Machine written
//!    only when its conditions change, conditionally on the version read;
//! 7. status (counters, targets, `RemediationAllowed`) written when it changed.
//!
//! The check is reconciled again when its Machines, its Cluster or (through the Node watch)
//! their Nodes change in a way the judgement reads, and exactly when the earliest running
//! timeout expires; it never polls. Without a Node watch nothing reports Node changes, so
//! a check with targets then looks again every [`UNWATCHED_RECHECK`].

mod judge;
mod limits;
mod remediate;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::condition_types::{
    EXTERNAL_REMEDIATION_REQUEST_AVAILABLE, EXTERNAL_REMEDIATION_TEMPLATE_AVAILABLE, REMEDIATION_ALLOWED,
    TOO_MANY_UNHEALTHY,
};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineHealthCheck};
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, PAUSED_ANNOTATION, REMEDIATE_MACHINE_ANNOTATION, SKIP_REMEDIATION_ANNOTATION, has_annotation,
};
use drydock_api::capi::owner;
use drydock_api::capi::selector::Selector;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed, names};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;

use crate::framework::cluster_index::{ClusterIndex, ClusterScoped};
use crate::framework::index::{Changes, Index};
use crate::framework::nodes::WorkloadNodes;
use crate::framework::nodes::logical_cluster;
use crate::framework::nodes::machine_of_node;
use crate::framework::nodes::record_provider_id;
use crate::framework::pause::{self, Pause};
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::select::parse_selector;
use crate::framework::write::{Status, Writer};
use crate::framework::{Error, Result};
use crate::{Context, Running};
use drydock_api::capi::condition_types::{HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED};
use drydock_api::capi::v1beta2_conditions::names::{
    CONTROL_PLANE_INITIALIZED as V1BETA2_CONTROL_PLANE_INITIALIZED,
    INFRASTRUCTURE_READY as V1BETA2_INFRASTRUCTURE_READY,
};
use judge::{ClusterFacts, Rules, Target, Verdict};
use remediate::RequestError;

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "machinehealthcheck";

/// Recheck of a check with targets when no Node watch reports Node changes.
const UNWATCHED_RECHECK: Duration = Duration::from_secs(30);
/// How long a reconcile waits for the Node watch to load at startup.
const STORE_WAIT: Duration = Duration::from_secs(5);

impl ClusterScoped for MachineHealthCheck {
    fn cluster_name(&self) -> &str {
        &self.spec.cluster_name
    }
}

struct State {
    ctx: Arc<Context>,
    checks: Arc<ClusterIndex<MachineHealthCheck>>,
    machines: Arc<ClusterIndex<Machine>>,
    /// Machines by providerID (to find a Node's Machine).
    by_provider: Index,
    /// What each Machine, Cluster and Node last looked like to the checks.
    machine_gates: Changes<u64>,
    /// The Machine conditions some check's `checks.unhealthyMachineConditions` names (their
    /// changes wake the checks; other condition changes do not).
    machine_condition_types: parking_lot::RwLock<Vec<String>>,
    cluster_gates: Changes<u64>,
    node_gates: Changes<u64>,
    /// Writes checks, and the conditions of Machines, each remembering what it superseded.
    writer: Writer,
    machine_writer: Writer,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let i = &ctx.informers;
    let st = Arc::new(State {
        ctx: ctx.clone(),
        checks: ClusterIndex::new(i.machine_health_checks.store.clone(), i.machine_health_checks.listed.clone()),
        machines: ClusterIndex::new(i.machines.store.clone(), i.machines.listed.clone()),
        by_provider: Index::default(),
        machine_gates: Changes::default(),
        machine_condition_types: Default::default(),
        cluster_gates: Changes::default(),
        node_gates: Changes::default(),
        writer: Writer::tracking(CONTROLLER),
        machine_writer: Writer::tracking(CONTROLLER),
    });
    let queue = Queue::new(CONTROLLER);
    let trigger = queue.track(i.machine_health_checks.subscribe()).map(st.checks.recorder());
    let (s1, s2) = (st.clone(), st.clone());
    let mut c = Controller::for_shared_stream(trigger, i.machine_health_checks.store.clone())
        .watches_shared_stream(i.machines.subscribe(), queue.map_to(move |m: &Machine| s1.checks_of_machine(m)))
        .watches_shared_stream(i.clusters.subscribe(), queue.map_to(move |c: &Cluster| s2.checks_of_cluster(c)));
    if let Some(nodes) = &i.nodes {
        let s3 = st.clone();
        c = c.watches_shared_stream(nodes.subscribe(), queue.map_to(move |n: &Node| s3.checks_of_node(n)));
    }
    Box::pin(runner::run(CONTROLLER, c, queue, ctx.settings.mhc_concurrency, ctx.clock().clone(), st, reconcile))
}

fn digest(f: impl FnOnce(&mut std::collections::hash_map::DefaultHasher)) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    f(&mut h);
    h.finish()
}

/// What a check reads of a Machine (so its other status changes do not wake checks);
/// `condition_types`: the v1beta2 conditions some check judges.
fn machine_digest(m: &Machine, gone: bool, condition_types: &[String]) -> u64 {
    digest(|h| {
        gone.hash(h);
        m.metadata.labels.hash(h);
        let a = m.metadata.annotations.as_ref();
        for k in [PAUSED_ANNOTATION, SKIP_REMEDIATION_ANNOTATION, REMEDIATE_MACHINE_ANNOTATION] {
            has_annotation(a, k).hash(h);
        }
        m.metadata.deletion_timestamp.is_some().hash(h);
        m.metadata.resource_version.is_some().hash(h);
        m.node_name().hash(h);
        let failure = m.failure();
        failure.map(|f| (&f.failure_reason, &f.failure_message)).hash(h);
        for t in [HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED] {
            m.get_condition(t).map(|c| (&c.status, &c.reason, c.last_transition_time.0.as_second())).hash(h);
        }
        let infra = m.v1beta2_condition(V1BETA2_INFRASTRUCTURE_READY);
        infra.map(|c| (&c.status, c.last_transition_time.0.as_second())).hash(h);
        for t in condition_types {
            m.v1beta2_condition(t).map(|c| (&c.status, c.last_transition_time.0.as_second())).hash(h);
        }
    })
}

fn cluster_digest(c: &Cluster, gone: bool) -> u64 {
    digest(|h| {
        gone.hash(h);
        c.spec.paused.hash(h);
        logical_cluster(c).hash(h);
        for t in [V1BETA2_CONTROL_PLANE_INITIALIZED, V1BETA2_INFRASTRUCTURE_READY] {
            c.v1beta2_condition(t).map(|c| (&c.status, c.last_transition_time.0.as_second())).hash(h);
        }
    })
}

fn node_digest(n: &Node, gone: bool) -> u64 {
    digest(|h| {
        gone.hash(h);
        n.metadata.uid.hash(h);
        for c in n.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
            (&c.type_, &c.status, c.last_transition_time.as_ref().map(|t| t.0.as_second())).hash(h);
        }
    })
}

impl State {
    /// Remembers the Machine conditions `rules` judge, so their changes wake the checks.
    fn note_machine_condition_types(&self, rules: &Rules) {
        let known = |t: &String| self.machine_condition_types.read().contains(t);
        let new: Vec<String> = rules.unhealthy_machine_conditions.iter().map(|(t, ..)| t.clone()).collect();
        if new.iter().all(known) {
            return;
        }
        let mut types = self.machine_condition_types.write();
        for t in new {
            if !types.contains(&t) {
                types.push(t);
            }
        }
    }

    fn checks_of(&self, ns: &str, cluster: &str) -> Vec<ObjectRef<MachineHealthCheck>> {
        self.checks.list(ns, cluster).iter().map(|c| ObjectRef::from_obj(c.as_ref())).collect()
    }

    fn checks_of_machine(&self, m: &Machine) -> Vec<ObjectRef<MachineHealthCheck>> {
        self.machines.observe(m);
        record_provider_id(&self.by_provider, m);
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        let store = &self.ctx.informers.machines.store;
        let gone = store.get(&ObjectRef::from_obj(m)).is_none();
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(n, m)| store.get(&ObjectRef::new(m).within(n)).is_some());
        let digest = machine_digest(m, gone, &self.machine_condition_types.read());
        if !self.machine_gates.changed(runner::key_of(m), digest, store.len(), exists) {
            return Vec::new();
        }
        self.checks_of(ns, &m.spec.cluster_name)
    }

    fn checks_of_cluster(&self, c: &Cluster) -> Vec<ObjectRef<MachineHealthCheck>> {
        let store = &self.ctx.informers.clusters.store;
        let gone = store.get(&ObjectRef::from_obj(c)).is_none();
        if !self.cluster_gates.changed_in(store, c, cluster_digest(c, gone)) {
            return Vec::new();
        }
        self.checks_of(c.metadata.namespace.as_deref().unwrap_or_default(), &c.name_any())
    }

    fn checks_of_node(&self, n: &Node) -> Vec<ObjectRef<MachineHealthCheck>> {
        let Some(lc) =
            self.ctx.informers.nodes.as_ref().and_then(|nodes| nodes.changed(&self.node_gates, n, node_digest))
        else {
            return Vec::new();
        };
        let Some(m) = machine_of_node(&self.ctx, &self.by_provider, lc, n)
            .and_then(|r| self.ctx.informers.machines.store.get(&r))
        else {
            return Vec::new();
        };
        self.checks_of(m.metadata.namespace.as_deref().unwrap_or_default(), &m.spec.cluster_name)
    }
}

/// The Nodes of a check's workload cluster.
enum ClusterNodes {
    Watched(Arc<WorkloadNodes>, String),
    /// Listed once for this reconcile (no watch covers the cluster).
    Listed(HashMap<String, Arc<Node>>),
}

impl ClusterNodes {
    async fn of(ctx: &Context, cluster: &Cluster) -> Result<Self> {
        if let (Some(nodes), Some(lc)) = (ctx.informers.nodes.as_ref(), logical_cluster(cluster))
            && nodes.ready_within(STORE_WAIT).await
        {
            return Ok(Self::Watched(nodes.clone(), lc.to_string()));
        }
        let client = ctx.workload.get(&cluster.namespace().unwrap_or_default(), &cluster.name_any()).await?;
        let list = Api::<Node>::all(client).list(&ListParams::default()).await?;
        Ok(Self::Listed(list.items.into_iter().map(|n| (n.name_any(), Arc::new(n))).collect()))
    }

    fn get(&self, name: &str) -> Option<Arc<Node>> {
        match self {
            Self::Watched(nodes, lc) => nodes.get(lc, name),
            Self::Listed(nodes) => nodes.get(name).cloned(),
        }
    }
}

/// Machines of the cluster the check looks after, sorted by name.
fn targets(st: &State, mhc: &MachineHealthCheck, selector: &Selector) -> Vec<Arc<Machine>> {
    let ns = mhc.metadata.namespace.as_deref().unwrap_or_default();
    let mut out: Vec<Arc<Machine>> = st
        .machines
        .list(ns, &mhc.spec.cluster_name)
        .into_iter()
        .filter(|m| selector.matches(m.metadata.labels.as_ref().unwrap_or(&Default::default())))
        .filter(|m| {
            let a = m.metadata.annotations.as_ref();
            !has_annotation(a, PAUSED_ANNOTATION) && !has_annotation(a, SKIP_REMEDIATION_ANNOTATION)
        })
        .collect();
    out.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    out
}

async fn reconcile(mhc: Arc<MachineHealthCheck>, st: Arc<State>) -> Result<Requeue> {
    if st.writer.is_stale(mhc.as_ref()) || mhc.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let ctx = &st.ctx;
    st.machines.ensure_seeded().await;
    st.checks.ensure_seeded().await;
    ctx.informers.clusters.ready().await;
    let ns = mhc.namespace().unwrap_or_default();
    // A missing Cluster is waited for: its creation triggers the check.
    let Some(cluster) = ctx.informers.clusters.store.get(&ObjectRef::new(&mhc.spec.cluster_name).within(&ns)) else {
        return Ok(Requeue::await_change());
    };
    let api: Api<MachineHealthCheck> = ctx.api(&ns);
    let now = ctx.clock().condition_time();
    if let Some(p) = Pause::of(&cluster, &mhc.metadata, false) {
        let mut want = (*mhc).clone();
        pause::set_condition(&mut want, Some(p), &cluster, now.clone());
        st.writer.write(&api, &mhc, &want, Status::observing(false)).await?;
        return Ok(Requeue::await_change());
    }
    let mut want = (*mhc).clone();
    pause::set_condition(&mut want, None, &cluster, now.clone());
    want.labels_mut().insert(CLUSTER_NAME_LABEL.to_string(), mhc.spec.cluster_name.clone());
    if let Some(r) = owner::owner_ref(cluster.as_ref()) {
        owner::ensure_owner_ref(&mut want.metadata, r);
    }
    let result = check(&st, &mhc, &cluster, &mut want, &now).await;
    st.writer.write(&api, &mhc, &want, Status::observing(result.is_ok())).await?;
    result.map(Requeue::after_opt)
}

/// The check's targets, each with its verdict, and whether their Nodes are read without a
/// watch (their changes then go unnoticed until the next look).
async fn judge_targets(
    st: &State,
    mhc: &MachineHealthCheck,
    cluster: &Cluster,
) -> Result<(Vec<(Arc<Machine>, Verdict)>, bool)> {
    let selector = parse_selector(mhc)?;
    let rules = Rules::of(&mhc.spec);
    st.note_machine_condition_types(&rules);
    let facts = ClusterFacts::of(cluster);
    let targets = targets(st, mhc, &selector);
    // Nodes exist only once the control plane is initialized.
    let nodes = match facts.control_plane_initialized {
        Some(_) if !targets.is_empty() => Some(ClusterNodes::of(&st.ctx, cluster).await?),
        _ => None,
    };
    let polled = !matches!(nodes, Some(ClusterNodes::Watched(..))) && facts.control_plane_initialized.is_some();
    let precise_now = st.ctx.clock().now();
    let judged = targets
        .into_iter()
        .map(|m| {
            let node_ref = m.node_name();
            let node = match (&nodes, node_ref) {
                (Some(n), Some(name)) => n.get(name),
                _ => None,
            };
            let node_missing = nodes.is_some() && node_ref.is_some() && node.is_none();
            let target = Target { machine: &m, node: node.as_deref(), node_missing };
            let verdict = judge::judge(&target, &facts, &rules, precise_now);
            (m, verdict)
        })
        .collect();
    Ok((judged, polled))
}

/// The external remediation conditions of a check with a remediation template.
/// `requested`: unhealthy Machines got (or keep) their requests.
fn set_request_conditions(
    want: &mut MachineHealthCheck,
    problem: Option<&RequestError>,
    requested: bool,
    now: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) {
    match problem {
        Some(RequestError::TemplateNotFound(msg)) => {
            let reason = "ExternalRemediationTemplateNotFound";
            want.mark_false(EXTERNAL_REMEDIATION_TEMPLATE_AVAILABLE, reason, Severity::Error, msg, now.clone());
        }
        Some(RequestError::CreationFailed(msg)) => {
            want.mark_true(EXTERNAL_REMEDIATION_TEMPLATE_AVAILABLE, now.clone());
            let reason = "ExternalRemediationRequestCreationFailed";
            want.mark_false(EXTERNAL_REMEDIATION_REQUEST_AVAILABLE, reason, Severity::Error, msg, now.clone());
        }
        None if requested => {
            want.mark_true(EXTERNAL_REMEDIATION_TEMPLATE_AVAILABLE, now.clone());
            want.mark_true(EXTERNAL_REMEDIATION_REQUEST_AVAILABLE, now.clone());
        }
        None => {}
    }
}

/// Judges the targets, writes their conditions and the check's status into `want`; returns
/// when to look again.
async fn check(
    st: &State,
    mhc: &MachineHealthCheck,
    cluster: &Cluster,
    want: &mut MachineHealthCheck,
    now: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) -> Result<Option<Duration>> {
    let ctx = &st.ctx;
    let (judged, polled) = judge_targets(st, mhc, cluster).await?;
    let expected = i32::try_from(judged.len()).unwrap_or(i32::MAX);
    let healthy = i32::try_from(judged.iter().filter(|(_, v)| *v == Verdict::Healthy).count()).unwrap_or(i32::MAX);
    let allowance = limits::allowance(&mhc.spec, expected, healthy).map_err(Error::InvalidSpec)?;

    let was_allowed = !mhc.is_condition_false(REMEDIATION_ALLOWED);
    want.set_v1beta2(remediation_allowed(&allowance), now);
    match &allowance.message {
        None => want.mark_true(REMEDIATION_ALLOWED, now.clone()),
        Some(msg) => {
            want.mark_false(REMEDIATION_ALLOWED, TOO_MANY_UNHEALTHY, Severity::Warning, msg, now.clone());
            if was_allowed && expected > healthy {
                ctx.events.warning(mhc, "RemediationRestricted", msg.clone()).await;
            }
        }
    }
    let template = mhc
        .spec
        .remediation
        .as_ref()
        .and_then(|r| r.template_ref.as_ref())
        .map(|t| t.in_namespace(mhc.metadata.namespace.as_deref()));
    let template = template.as_ref();
    let owner_remediation = allowance.allowed && template.is_none();
    let mut next: Option<Duration> = None;
    let mut request_problem: Option<RequestError> = None;
    for (m, verdict) in &judged {
        if let Verdict::Pending { next: Some(d) } = verdict {
            next = Some(next.map_or(*d, |n| n.min(*d)));
        }
        write_machine(st, m, verdict, owner_remediation, now).await?;
        match (template, verdict) {
            (Some(t), Verdict::Unhealthy { .. }) if allowance.allowed && m.metadata.deletion_timestamp.is_none() => {
                match remediate::ensure_request(ctx, mhc, t, m).await {
                    Ok(true) => {
                        let note =
                            format!("Machine {} has been marked as unhealthy by {}", m.name_any(), mhc.name_any());
                        ctx.events.normal(m.as_ref(), "MachineMarkedUnhealthy", note).await;
                    }
                    Ok(false) => {}
                    Err(e) => request_problem = Some(e),
                }
            }
            // Only a Machine judged otherwise before can have a request to take back.
            (Some(t), Verdict::Healthy) if !m.is_condition_true(HEALTH_CHECK_SUCCEEDED) => {
                remediate::delete_request(ctx, t, m).await?;
            }
            _ => {}
        }
    }
    if template.is_some() {
        let requested = judged.iter().any(|(_, v)| v.is_unhealthy()) && allowance.allowed;
        set_request_conditions(want, request_problem.as_ref(), requested, now);
    }
    let status = want.status.get_or_insert_with(Default::default);
    status.expected_machines = Some(expected);
    status.current_healthy = Some(healthy);
    status.remediations_allowed = Some(allowance.remediations_allowed);
    status.targets = Some(judged.iter().map(|(m, _)| m.name_any()).collect());
    // Without a Node watch, Node changes would go unnoticed.
    if !judged.is_empty() && polled {
        next = Some(next.map_or(UNWATCHED_RECHECK, |n| n.min(UNWATCHED_RECHECK)));
    }
    Ok(next)
}

/// The v1beta2 `RemediationAllowed`: False while the short-circuit holds remediation.
fn remediation_allowed(a: &limits::Allowance) -> Observed {
    match &a.message {
        None => Observed::true_(names::REMEDIATION_ALLOWED, names::REMEDIATION_ALLOWED_REASON),
        Some(msg) => Observed::false_(names::REMEDIATION_ALLOWED, names::TOO_MANY_UNHEALTHY_REASON, msg.clone()),
    }
}

/// Writes the conditions the check wants on a target, if they changed.
async fn write_machine(
    st: &State,
    m: &Arc<Machine>,
    verdict: &Verdict,
    owner_remediation: bool,
    now: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) -> Result<()> {
    // A copy older than this controller's own last write would redo it; the write's event
    // brings the check back.
    if st.machine_writer.is_stale(m.as_ref()) {
        return Ok(());
    }
    let want = remediate::desired(m, verdict, owner_remediation, now);
    if !remediate::conditions_changed(m, &want) {
        return Ok(());
    }
    let api: Api<Machine> = st.ctx.api(&m.namespace().unwrap_or_default());
    match st.machine_writer.write_status(&api, m.as_ref(), &want).await {
        Ok(_) => {}
        // Deleted meanwhile: nothing to judge any more.
        Err(e) if e.is_gone() => return Ok(()),
        Err(e) => return Err(e),
    }
    if remediate::newly_unhealthy(m, verdict) {
        let reason = match verdict {
            Verdict::Unhealthy { message, .. } => message.clone(),
            _ => String::new(),
        };
        let note = format!("Machine {} has been marked as unhealthy: {reason}", m.name_any());
        st.ctx.events.normal(m.as_ref(), "MachineMarkedUnhealthy", note).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::v1beta2_conditions::Status;

    #[test]
    fn remediation_allowed_follows_the_short_circuit() {
        let allowed = limits::Allowance { allowed: true, remediations_allowed: 2, message: None };
        let o = remediation_allowed(&allowed);
        assert_eq!((o.status, o.reason.as_str()), (Status::True, names::REMEDIATION_ALLOWED_REASON));
        let held = limits::Allowance { allowed: false, remediations_allowed: 0, message: Some("too many".into()) };
        let o = remediation_allowed(&held);
        assert_eq!((o.status, o.reason.as_str(), o.message.as_str()), (Status::False, "TooManyUnhealthy", "too many"));
    }
}
