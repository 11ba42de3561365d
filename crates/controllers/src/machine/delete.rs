//! Deleting a Machine (upstream's §4.6): pre-drain hooks, the drain (`drain.rs`), the wait
//! for volumes to detach (`volume_detach.rs`), pre-terminate hooks, then the infrastructure machine and the
//! bootstrap config (each waited for until gone), then the Node (waited for until gone, at
//! most `deletion.nodeDeletionTimeoutSeconds`), then the finalizer.
//!
//! Hooks are annotations with the prefixes `pre-drain.delete.hook.machine.cluster.x-k8s.io`
//! and `pre-terminate.delete.hook.machine.cluster.x-k8s.io`; their owners remove them, which
//! triggers the next step. Pre-drain hooks and the drain apply only when the Node is to be
//! deleted (not when the whole cluster goes, or no control plane is left to serve it), and
//! so does the wait for volumes.

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::condition_types::{
    DELETED, DELETING, PRE_DRAIN_HOOK_SUCCEEDED, PRE_TERMINATE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK,
};
use drydock_api::capi::conditions::{self, HasConditions, MirrorFallback, Severity};
use drydock_api::capi::core::DEFAULT_NODE_DELETION_TIMEOUT_SECONDS;
use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::{CONTROL_PLANE_LABEL, has_annotation_prefix};
use drydock_api::capi::keys::{MACHINE_FINALIZER, PRE_DRAIN_DELETE_HOOK_PREFIX, PRE_TERMINATE_DELETE_HOOK_PREFIX};
use drydock_api::capi::v1beta2_conditions::names::{
    BOOTSTRAP_CONFIG_READY, INFRASTRUCTURE_READY as V1BETA2_INFRASTRUCTURE_READY, OBJECT_DELETED_REASON,
};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::DeleteParams;

use super::drain::{self, Drain};
use super::volume_detach::{self, Detach};
use super::{CONTROLLER, GONE_RECHECK, State, status};
use crate::framework::events::PendingEvents;
use crate::framework::node_reader::{NodeReader, node_ref_name, workload_nodes};
use crate::framework::pause;
use crate::framework::referenced::{self, Referenced};
use crate::framework::requeue::Requeue;
use crate::framework::write::{Status, remove_finalizer};
use crate::framework::{Error, Result};
use drydock_api::capi::condition_types::BOOTSTRAP_READY;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;
use drydock_api::capi::condition_types::NODE_HEALTHY;

/// How often a Node that is not gone yet is looked at again when no watch reports it.
const NODE_DELETION_RETRY: Duration = Duration::from_secs(2);
/// How often a Node deletion without deadline (`nodeDeletionTimeoutSeconds: 0`) is looked at
/// again when nothing else triggers the Machine.
const NODE_DELETION_RECHECK: Duration = Duration::from_secs(60);

/// Why the Node of a deleting Machine is left alone.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KeepNode {
    /// The whole cluster goes away; its Nodes with it.
    ClusterDeleting,
    /// The control plane object is being deleted.
    ControlPlaneDeleting,
    /// No control plane Machine remains to serve the workload API.
    NoControlPlane,
}

/// Whether the Node may be deleted, from what the stores say about the cluster.
pub(crate) fn node_deletion(
    cluster: Option<&Cluster>,
    control_plane_deleting: bool,
    live_control_plane_machines: usize,
) -> Result<(), KeepNode> {
    match cluster {
        None => Err(KeepNode::ClusterDeleting),
        Some(c) if c.metadata.deletion_timestamp.is_some() => Err(KeepNode::ClusterDeleting),
        Some(_) if control_plane_deleting => Err(KeepNode::ControlPlaneDeleting),
        Some(_) if live_control_plane_machines == 0 => Err(KeepNode::NoControlPlane),
        Some(_) => Ok(()),
    }
}

pub(super) async fn reconcile(state: &State, machine: &Arc<Machine>, cluster: Option<&Cluster>) -> Result<Requeue> {
    if !machine.finalizers().iter().any(|f| f == MACHINE_FINALIZER) {
        return Ok(Requeue::await_change());
    }
    // A paused Machine is not deleted either (upstream checks pause before deletion).
    if let Some(c) = cluster
        && super::write_pause(state, machine, c).await?
    {
        return Ok(Requeue::await_change());
    }
    let ctx = &state.ctx;
    let ns = machine.namespace().unwrap_or_default();
    let api = ctx.api::<Machine>(&ns);
    let now = ctx.clock().condition_time();
    let mut m = (**machine).clone();
    if let Some(c) = cluster {
        pause::set_condition(&mut m, None, c, now.clone());
    }
    let mut events = PendingEvents::default();
    let allowed =
        node_deletion(cluster, control_plane_deleting(state, &ns, cluster).await?, live_control_planes(state, &ns, &m));

    // Pre-drain hooks, the drain and the volumes only matter when the Node is going away
    // with the Machine.
    if let (Ok(()), Some(cluster)) = (&allowed, cluster)
        && let Some(requeue) = empty_node(state, &mut m, cluster, &now, &mut events).await?
    {
        return write_status(state, machine, m, now, events).await.map(|_| requeue);
    }
    if has_annotation_prefix(m.metadata.annotations.as_ref(), PRE_TERMINATE_DELETE_HOOK_PREFIX) {
        m.mark_false(PRE_TERMINATE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK, Severity::Info, "", now.clone());
        return write_status(state, machine, m, now, events).await;
    }
    m.mark_true(PRE_TERMINATE_HOOK_SUCCEEDED, now.clone());
    m.mark_false(NODE_HEALTHY, DELETING, Severity::Info, "", now.clone());

    // Infrastructure first, then bootstrap; each must be gone before the next step.
    let infra = m.spec.infrastructure_ref.clone();
    if !delete_and_wait(state, &ns, &infra, &mut m, INFRASTRUCTURE_READY, &now).await? {
        return write_status(state, machine, m, now, events).await.map(|_| Requeue::after(GONE_RECHECK));
    }
    if let Some(config) = m.spec.bootstrap.config_ref.clone()
        && !delete_and_wait(state, &ns, &config, &mut m, BOOTSTRAP_READY, &now).await?
    {
        return write_status(state, machine, m, now, events).await.map(|_| Requeue::after(GONE_RECHECK));
    }

    if let (Ok(()), Some(cluster)) = (&allowed, cluster) {
        let outcome = delete_node(state, &m, cluster).await;
        if outcome != NodeDeletion::Gone {
            let left = node_deletion_time_left(&m, &now);
            let (reason, severity, msg) = match &outcome {
                NodeDeletion::Failed(msg) => ("DeletionFailed", Severity::Warning, msg.clone()),
                _ => (DELETING, Severity::Info, "Waiting for the Node to be deleted".to_string()),
            };
            let first = m.get_condition(NODE_HEALTHY).is_none_or(|c| c.reason.as_deref() != Some(reason));
            m.mark_false(NODE_HEALTHY, reason, severity, &msg, now.clone());
            if first && let NodeDeletion::Failed(msg) = &outcome {
                events.warning("FailedDeleteNode", msg.clone());
            }
            if let Some(left) = left {
                tracing::debug!(machine = %machine.name_any(), outcome = ?outcome, "node not deleted yet; retrying");
                // With a Node watch its disappearance triggers the Machine; else poll.
                let recheck = match outcome {
                    NodeDeletion::Pending { watched: true } => left,
                    _ => left.min(NODE_DELETION_RETRY),
                };
                return write_status(state, machine, m, now, events).await.map(|_| Requeue::after(recheck));
            }
            tracing::warn!(machine = %machine.name_any(), outcome = ?outcome, "giving up on deleting the node");
            events.warning("NodeDeletionTimedOut", format!("gave up waiting for the Node to be deleted: {msg}"));
        }
    }

    // Done: only the finalizer is written (the object disappears with it, so no status).
    events.publish(ctx, machine.as_ref()).await;
    let mut done = (**machine).clone();
    remove_finalizer(&mut done, MACHINE_FINALIZER);
    state.writer.forget(machine.as_ref());
    state.writer.apply(&api, machine, &done).await?;
    Ok(Requeue::await_change())
}

/// The steps before the Node goes: pre-drain hooks, the drain, the wait for its volumes.
/// `Some` while one of them holds the deletion (with when to look again).
async fn empty_node(
    state: &State,
    m: &mut Machine,
    cluster: &Cluster,
    now: &Time,
    events: &mut PendingEvents,
) -> Result<Option<Requeue>> {
    if has_annotation_prefix(m.metadata.annotations.as_ref(), PRE_DRAIN_DELETE_HOOK_PREFIX) {
        m.mark_false(PRE_DRAIN_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK, Severity::Info, "", now.clone());
        // The hook's removal is a Machine change: it triggers the next step.
        return Ok(Some(Requeue::await_change()));
    }
    m.mark_true(PRE_DRAIN_HOOK_SUCCEEDED, now.clone());
    if let Drain::Wait(after) = drain::run(state, m, cluster, now, events).await? {
        return Ok(Some(Requeue::after(after)));
    }
    if let Detach::Wait(after) = volume_detach::run(state, m, cluster, now).await? {
        return Ok(Some(Requeue::after(after)));
    }
    Ok(None)
}

async fn write_status(
    state: &State,
    machine: &Machine,
    mut m: Machine,
    now: Time,
    events: PendingEvents,
) -> Result<Requeue> {
    status::finish(machine, &mut m, None, now);
    let api = state.ctx.api::<Machine>(&machine.namespace().unwrap_or_default());
    state.writer.write(&api, machine, &m, Status::observing(true)).await?;
    events.publish(&state.ctx, machine).await;
    Ok(Requeue::await_change())
}

/// Deletes the object `r` points at; true once it is gone (possibly right away). While it
/// exists its readiness is mirrored into `condition` (falling back to Deleting); once gone
/// the condition says Deleted.
async fn delete_and_wait(
    state: &State,
    ns: &str,
    r: &ContractVersionedObjectReference,
    m: &mut Machine,
    condition: &str,
    now: &Time,
) -> Result<bool> {
    let v1beta2_type = if condition == BOOTSTRAP_READY { BOOTSTRAP_CONFIG_READY } else { V1BETA2_INFRASTRUCTURE_READY };
    // A kind whose CRD is gone has no objects left to wait for.
    let full = referenced::resolve(&state.ctx, ns, r).await?;
    let obj = match &full {
        Some(full) => referenced::read(&state.ctx, ns, full).await?.map(|o| (o, full)),
        None => None,
    };
    match obj {
        Some((obj, full)) if !referenced::delete(&state.ctx, CONTROLLER, ns, full, &obj).await? => {
            let fallback = MirrorFallback::False { reason: DELETING, severity: Severity::Info, message: "" };
            m.set_condition(conditions::mirror(&obj.conditions(), condition, fallback, now.clone()));
            m.set_v1beta2(super::contract::mirror_ready(v1beta2_type, &obj, full, false), now);
            Ok(false)
        }
        // Gone, or deleted just now (nothing held it).
        _ => {
            m.mark_false(condition, DELETED, Severity::Info, "", now.clone());
            let gone = format!("{} {} has been deleted", r.kind, r.name);
            m.set_v1beta2(Observed::false_(v1beta2_type, OBJECT_DELETED_REASON, gone), now);
            Ok(true)
        }
    }
}

/// Where deleting the Node stands.
#[derive(Debug, PartialEq, Eq)]
enum NodeDeletion {
    Gone,
    /// Deleted, but still there (a finalizer holds it). `watched`: its disappearance will
    /// be reported by the Node watch.
    Pending {
        watched: bool,
    },
    Failed(String),
}

/// Deletes the Machine's Node (found by nodeRef, else by providerID) and reports whether it
/// is gone. Unlike upstream, a Node held by a finalizer is waited for (within
/// nodeDeletionTimeoutSeconds) rather than taken as deleted.
async fn delete_node(state: &State, m: &Machine, cluster: &Cluster) -> NodeDeletion {
    if node_ref_name(m).is_none() && m.spec.provider_id.is_none() {
        return NodeDeletion::Gone;
    }
    let failed = |e: Error| NodeDeletion::Failed(e.to_string());
    let reader = match NodeReader::of(&state.ctx, cluster).await {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let node = match reader.of_machine(m).await {
        Ok(Some(n)) => n,
        Ok(None) => return NodeDeletion::Gone,
        Err(e) => return failed(e),
    };
    let pending = NodeDeletion::Pending { watched: reader.is_watched() };
    if node.metadata.deletion_timestamp.is_some() {
        return pending;
    }
    let name = node.name_any();
    let api = match workload_nodes(&state.ctx, cluster).await {
        Ok(a) => a,
        Err(e) => return failed(e),
    };
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(either) => {
            crate::framework::metrics::write(CONTROLLER);
            if either.is_left() { pending } else { NodeDeletion::Gone }
        }
        Err(kube::Error::Api(s)) if s.code == 404 => NodeDeletion::Gone,
        Err(e) => NodeDeletion::Failed(format!("deleting Node {name}: {e}")),
    }
}

/// Time left to keep retrying Node deletion: `deletion.nodeDeletionTimeoutSeconds` (default
/// 10) from the deletion timestamp. `None` once it has elapsed. A zero timeout retries
/// forever, as upstream's does: the answer is then always [`NODE_DELETION_RECHECK`].
fn node_deletion_time_left(m: &Machine, now: &Time) -> Option<Duration> {
    let seconds = m
        .spec
        .deletion
        .as_ref()
        .and_then(|d| d.node_deletion_timeout_seconds)
        .unwrap_or(DEFAULT_NODE_DELETION_TIMEOUT_SECONDS);
    if seconds <= 0 {
        return Some(NODE_DELETION_RECHECK);
    }
    let since = m.metadata.deletion_timestamp.as_ref()?;
    let deadline = since.0.checked_add(jiff::SignedDuration::from_secs(i64::from(seconds))).ok()?;
    let left = now.0.duration_until(deadline);
    (left.is_positive()).then(|| left.unsigned_abs())
}

/// Whether the Cluster's control plane object is being deleted.
async fn control_plane_deleting(state: &State, ns: &str, cluster: Option<&Cluster>) -> Result<bool> {
    let Some(r) = cluster.and_then(|c| c.spec.control_plane_ref.as_ref()) else {
        return Ok(false);
    };
    Ok(referenced::read_versioned(&state.ctx, ns, r).await?.as_ref().is_some_and(Referenced::is_deleting))
}

/// Control plane Machines of the cluster that are not being deleted.
fn live_control_planes(state: &State, ns: &str, m: &Machine) -> usize {
    state
        .machines_of(ns, &m.spec.cluster_name)
        .iter()
        .filter_map(|name| {
            state.ctx.informers.machines.store.get(&kube::runtime::reflector::ObjectRef::new(name).within(ns))
        })
        .filter(|o| o.metadata.deletion_timestamp.is_none())
        .filter(|o| o.metadata.labels.as_ref().is_some_and(|l| l.contains_key(CONTROL_PLANE_LABEL)))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_deletion_rules() {
        let mut c = Cluster::new("c", Default::default());
        assert_eq!(node_deletion(None, false, 1), Err(KeepNode::ClusterDeleting));
        assert_eq!(node_deletion(Some(&c), false, 1), Ok(()));
        assert_eq!(node_deletion(Some(&c), true, 1), Err(KeepNode::ControlPlaneDeleting));
        assert_eq!(node_deletion(Some(&c), false, 0), Err(KeepNode::NoControlPlane));
        c.metadata.deletion_timestamp = Some(conditions::time_at(jiff::Timestamp::now()));
        assert_eq!(node_deletion(Some(&c), false, 1), Err(KeepNode::ClusterDeleting));
    }

    #[test]
    fn node_deletion_timeout() {
        use drydock_api::capi::core::v1beta2::MachineDeletionSpec;
        let mut m = Machine::new("m", Default::default());
        let start = Time(jiff::Timestamp::from_second(1_000).unwrap());
        m.metadata.deletion_timestamp = Some(start);
        let at = |s| Time(jiff::Timestamp::from_second(s).unwrap());
        assert_eq!(node_deletion_time_left(&m, &at(1_004)), Some(Duration::from_secs(6)));
        assert_eq!(node_deletion_time_left(&m, &at(1_010)), None);
        let timeout = |s| Some(MachineDeletionSpec { node_deletion_timeout_seconds: Some(s), ..Default::default() });
        m.spec.deletion = timeout(60);
        assert_eq!(node_deletion_time_left(&m, &at(1_010)), Some(Duration::from_secs(50)));
        // Zero: never given up, however long ago the deletion started.
        m.spec.deletion = timeout(0);
        assert_eq!(node_deletion_time_left(&m, &at(1_011)), Some(NODE_DELETION_RECHECK));
        assert_eq!(node_deletion_time_left(&m, &at(1_000_000)), Some(NODE_DELETION_RECHECK));
    }
}
