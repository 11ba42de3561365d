//! Remediation of control plane Machines a MachineHealthCheck marked (upstream §6.7):
//! `HealthCheckSucceeded` False and `OwnerRemediated` False. Runs before rollouts and
//! scaling in every reconcile:
//!
//! 1. stale marks go: a Machine healthy again loses its `OwnerRemediated` condition;
//! 2. one unhealthy Machine is chosen: no Node first, then an unhealthy etcd member, then
//!    other unhealthy components, then the oldest;
//! 3. one remediation at a time: while the control plane carries the
//!    `remediation-in-progress` annotation (until the replacement is created) nothing else
//!    is remediated;
//! 4. retry limits of `spec.remediation` for a Machine that is itself a
//!    replacement (`remediation-for` annotation): within `minHealthyPeriod` of the last
//!    remediation it is a retry, which waits `retryPeriodSeconds` and stops after `maxRetry`;
//! 5. once initialized, safety gates: more than one Machine, none provisioning or
//!    deleting, and etcd keeps quorum without this member (members without a Machine, or
//!    unhealthy, count against it);
//! 6. etcd leadership moves to the newest healthy member, then the Machine is deleted (its
//!    member goes in the pre-terminate hook, see `hook`). Before kubeadm init finished (a
//!    first Machine that never came up) none of the gates apply: it is deleted directly.
//!
//! A held remediation says why in the Machine's `OwnerRemediated` condition (False,
//! `WaitingForRemediation`) and in a warning event on the control plane when that changes.
//! The replacement comes from the normal scale up, carrying `remediation-for`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use drydock_api::capi::condition_types::{
    HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED, REMEDIATION_FAILED, REMEDIATION_IN_PROGRESS, WAITING_FOR_REMEDIATION,
};
use drydock_api::capi::conditions::{Condition, HasConditions, Severity};
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{REMEDIATION_FOR_ANNOTATION, REMEDIATION_IN_PROGRESS_ANNOTATION};
use drydock_api::capi::kubeadm::v1beta2::{KubeadmControlPlane, LastRemediationStatus};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::Api;
use serde::{Deserialize, Serialize};

use super::health::Observed;
use super::{CONTROLLER, Pending, State, UNSTABLE_RECHECK, is_deleting, members};
use crate::framework::Result;
use crate::framework::write::delete_if_present;

/// A replacement healthy this long ends a retry sequence (upstream's default).
const DEFAULT_MIN_HEALTHY_PERIOD: SignedDuration = SignedDuration::from_hours(1);

/// The value of the `remediation-in-progress` and `remediation-for` annotations.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RemediationData {
    /// The Machine remediated.
    pub machine: String,
    /// When (RFC 3339).
    pub timestamp: Time,
    /// Retries so far in this sequence.
    pub retry_count: i32,
}

impl RemediationData {
    pub fn parse(v: &str) -> Option<Self> {
        serde_json::from_str(v).ok()
    }

    fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// What remediation did this reconcile.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// A Machine was deleted: scaling waits for it to go.
    pub deleted: bool,
    /// Look again then (a retry period, or a held remediation).
    pub recheck: Option<Duration>,
}

/// Marked by a MachineHealthCheck and not yet taken on.
pub(super) fn is_unhealthy(m: &Machine) -> bool {
    m.is_condition_false(HEALTH_CHECK_SUCCEEDED) && m.is_condition_false(OWNER_REMEDIATED)
}

/// The Machine to remediate first: no Node, then an unhealthy etcd member, then unhealthy
/// components, then the oldest (name breaks ties).
pub fn choose<'a>(unhealthy: &[&'a Arc<Machine>], observed: Option<&Observed>) -> Option<&'a Arc<Machine>> {
    let rank = |m: &Machine| -> u8 {
        let no_node = m.status.as_ref().and_then(|s| s.node_ref.as_ref()).is_none();
        let Some(o) = observed else { return if no_node { 0 } else { 3 } };
        let h = o.health(m);
        if no_node || h.node.is_none() {
            0
        } else if !h.etcd_member_healthy {
            1
        } else if !h.components_healthy() {
            2
        } else {
            3
        }
    };
    unhealthy.iter().copied().min_by(|a, b| {
        let ts = |m: &Machine| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
        rank(a).cmp(&rank(b)).then_with(|| ts(a).cmp(&ts(b))).then_with(|| a.name_any().cmp(&b.name_any()))
    })
}

/// Why a retry must wait or stop, or the retry count of this remediation.
pub fn retry_count(kcp: &KubeadmControlPlane, m: &Machine, now: Timestamp) -> std::result::Result<i32, Held> {
    let Some(last) = m.annotations().get(REMEDIATION_FOR_ANNOTATION).and_then(|v| RemediationData::parse(v)) else {
        return Ok(0);
    };
    let strategy = kcp.spec.remediation.as_ref();
    let period = |v: Option<i32>, default: SignedDuration| v.map_or(default, |s| SignedDuration::from_secs(s.into()));
    let min_healthy = period(strategy.and_then(|s| s.min_healthy_period_seconds), DEFAULT_MIN_HEALTHY_PERIOD);
    let retry_period = period(strategy.and_then(|s| s.retry_period_seconds), SignedDuration::ZERO);
    let at = last.timestamp.0;
    if at + min_healthy <= now {
        // Healthy long enough since the last remediation: a new sequence.
        return Ok(0);
    }
    let name = m.name_any();
    if at + retry_period > now {
        let left = Duration::try_from(now.duration_until(at + retry_period)).unwrap_or_default();
        return Err(Held {
            message: format!(
                "Machine {name} replaces {}, remediated at {at}; waiting for spec.remediation.retryPeriodSeconds \
                 ({retry_period:#}) before remediating again",
                last.machine
            ),
            recheck: Some(left + Duration::from_secs(1)),
        });
    }
    if let Some(max) = strategy.and_then(|s| s.max_retry)
        && last.retry_count >= max
    {
        return Err(Held {
            message: format!(
                "Machine {name} is not remediated: its predecessors were already remediated {} times within \
                 spec.remediation.minHealthyPeriodSeconds ({min_healthy:#}), the limit of \
                 spec.remediation.maxRetry ({max})",
                last.retry_count
            ),
            recheck: None,
        });
    }
    Ok(last.retry_count + 1)
}

/// A remediation that cannot go ahead now.
#[derive(Debug, PartialEq, Eq)]
pub struct Held {
    pub message: String,
    pub recheck: Option<Duration>,
}

impl Held {
    fn waiting(message: String) -> Self {
        Held { message, recheck: Some(UNSTABLE_RECHECK) }
    }
}

/// Whether etcd keeps quorum once the victim's member is gone: members of other Machines
/// that are healthy must be a majority of the members left.
pub fn etcd_keeps_quorum(o: &Observed, machines: &[Arc<Machine>], victim: &Machine) -> std::result::Result<(), String> {
    let victim_node = o.health(victim).node;
    let machine_nodes: HashSet<String> =
        machines.iter().filter(|m| m.name_any() != victim.name_any()).filter_map(|m| o.health(m).node).collect();
    let left: Vec<_> = o.membership.members.iter().filter(|m| Some(&m.node) != victim_node.as_ref()).collect();
    let total = left.len();
    let healthy = left.iter().filter(|m| m.healthy && machine_nodes.contains(&m.node)).count();
    let quorum = total / 2 + 1;
    if healthy >= quorum {
        return Ok(());
    }
    Err(format!(
        "Machine {} is not remediated: removing its etcd member could make etcd lose quorum ({healthy} of the \
         {total} remaining members healthy, {quorum} needed); waiting for the other members to recover",
        victim.name_any()
    ))
}

/// The safety gates of an initialized control plane.
fn gates(machines: &[Arc<Machine>], observed: Option<&Observed>, victim: &Machine) -> std::result::Result<(), Held> {
    let name = victim.name_any();
    if machines.len() <= 1 {
        return Err(Held {
            message: format!(
                "Machine {name} is not remediated: a control plane of {} replica cannot replace its only Machine",
                machines.len()
            ),
            recheck: None,
        });
    }
    if let Some(p) = machines
        .iter()
        .find(|m| !is_unhealthy(m) && !is_deleting(m) && m.status.as_ref().and_then(|s| s.node_ref.as_ref()).is_none())
    {
        return Err(Held::waiting(format!(
            "Machine {name} is not remediated yet: waiting for Machine {} to finish provisioning",
            p.name_any()
        )));
    }
    if let Some(d) = machines.iter().find(|m| is_deleting(m)) {
        return Err(Held::waiting(format!(
            "Machine {name} is not remediated yet: waiting for Machine {} to be deleted",
            d.name_any()
        )));
    }
    let Some(o) = observed else {
        return Err(Held::waiting(format!(
            "Machine {name} is not remediated yet: the workload cluster cannot be read to check etcd quorum"
        )));
    };
    etcd_keeps_quorum(o, machines, victim).map_err(Held::waiting)
}

/// Writes a Machine's `OwnerRemediated` (or removes it), conditional on the version read
/// (the Machine controller writes the same list). Returns whether it changed.
async fn write_owner_remediated(api: &Api<Machine>, m: &Machine, c: Option<Condition>) -> Result<bool> {
    let mut want = m.clone();
    match c {
        Some(c) => want.set_condition(c),
        None => want.delete_condition(OWNER_REMEDIATED),
    }
    if want.conditions() == m.conditions() {
        return Ok(false);
    }
    match super::WRITER.write_status(api, m, &want).await {
        Ok(written) => Ok(written.is_some()),
        Err(e) if e.is_gone() => Ok(false),
        Err(e) => Err(e),
    }
}

fn waiting(message: &str, now: Time) -> Condition {
    Condition::false_(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, message, now)
}

/// Records why a remediation is held; the event only when the reason is new.
async fn hold(s: &State, kcp: &KubeadmControlPlane, api: &Api<Machine>, m: &Machine, held: Held) -> Result<Outcome> {
    if write_owner_remediated(api, m, Some(waiting(&held.message, s.ctx.clock().condition_time()))).await? {
        s.ctx.events.warning(kcp, "RemediationHeld", held.message.clone()).await;
    }
    tracing::debug!(machine = %m.name_any(), reason = %held.message, "remediation held");
    Ok(Outcome { deleted: false, recheck: held.recheck })
}

/// `status.lastRemediation`: the remediation in progress, else the newest one a Machine
/// records as its origin.
pub fn last_remediation(kcp: &KubeadmControlPlane, machines: &[Arc<Machine>]) -> Option<LastRemediationStatus> {
    let in_progress = kcp.annotations().get(REMEDIATION_IN_PROGRESS_ANNOTATION).and_then(|v| RemediationData::parse(v));
    let data = in_progress.or_else(|| {
        machines
            .iter()
            .filter_map(|m| RemediationData::parse(m.annotations().get(REMEDIATION_FOR_ANNOTATION)?))
            .max_by_key(|d| d.timestamp.0)
    })?;
    Some(LastRemediationStatus { machine: data.machine, time: data.timestamp, retry_count: data.retry_count })
}

/// One remediation step; see the module documentation. `kcp` is updated when its
/// annotations are written.
pub(super) async fn reconcile(
    s: &State,
    kcp_api: &Api<KubeadmControlPlane>,
    kcp: &mut KubeadmControlPlane,
    cluster: &str,
    machines: &[Arc<Machine>],
    observed: Option<&Observed>,
) -> Result<Outcome> {
    let ns = kcp.namespace().unwrap_or_default();
    let api: Api<Machine> = s.ctx.api(&ns);
    for m in machines.iter().filter(|m| !is_deleting(m)) {
        if m.is_condition_true(HEALTH_CHECK_SUCCEEDED) && m.is_condition_false(OWNER_REMEDIATED) {
            write_owner_remediated(&api, m, None).await?;
        }
    }
    let unhealthy: Vec<&Arc<Machine>> = machines.iter().filter(|m| is_unhealthy(m)).collect();
    // The remediation this control plane started and did not finish (the annotation is
    // written before the Machine is deleted) goes on with the same Machine.
    let started = kcp.annotations().get(REMEDIATION_IN_PROGRESS_ANNOTATION).map(|v| RemediationData::parse(v));
    let resumed = started
        .as_ref()
        .and_then(|d| d.as_ref())
        .and_then(|d| unhealthy.iter().copied().find(|m| m.name_any() == d.machine && !is_deleting(m)));
    let Some(victim) = resumed.or_else(|| choose(&unhealthy, observed)) else {
        return Ok(Outcome::default());
    };
    if is_deleting(victim) {
        return Ok(Outcome::default());
    }
    if let Some(data) = &started
        && resumed.is_none()
    {
        let since = data.as_ref().map(|d| d.timestamp.0);
        let replaced = machines
            .iter()
            .any(|m| m.metadata.creation_timestamp.as_ref().is_some_and(|c| since.is_none_or(|t| c.0 > t)));
        if !replaced {
            tracing::debug!(control_plane = %kcp.name_any(), "another remediation is in progress");
            return Ok(Outcome { deleted: false, recheck: Some(UNSTABLE_RECHECK) });
        }
        // Its replacement exists: the annotation outlived the remediation.
        let mut want = kcp.clone();
        want.annotations_mut().remove(REMEDIATION_IN_PROGRESS_ANNOTATION);
        *kcp = s.write(kcp_api, kcp, &want).await?;
    }
    let now = s.ctx.clock().now();
    let retry = match (resumed, started.flatten()) {
        (Some(_), Some(d)) => d.retry_count,
        _ => match retry_count(kcp, victim, now) {
            Ok(n) => n,
            Err(held) => return hold(s, kcp, &api, victim, held).await,
        },
    };
    let initialized = super::status::is_initialized(kcp) || observed.is_some_and(|o| o.kubeadm_config);
    if initialized && let Err(held) = gates(machines, observed, victim) {
        return hold(s, kcp, &api, victim, held).await;
    }

    // Committed: recorded on the Machine and the control plane first, so that a reconcile
    // stopped half way resumes with this Machine.
    let name = victim.name_any();
    let cond_now = || drydock_api::capi::conditions::time_at(now);
    let in_progress = Condition::false_(OWNER_REMEDIATED, REMEDIATION_IN_PROGRESS, Severity::Warning, "", cond_now());
    write_owner_remediated(&api, victim, Some(in_progress)).await?;
    if resumed.is_none() {
        let data = RemediationData { machine: name.clone(), timestamp: cond_now(), retry_count: retry };
        let mut want = kcp.clone();
        want.annotations_mut().insert(REMEDIATION_IN_PROGRESS_ANNOTATION.into(), data.to_annotation());
        *kcp = s.write(kcp_api, kcp, &want).await?;
    }
    if initialized
        && let Some(o) = observed
        && let Err(e) = members::move_leadership_away(s, kcp, cluster, machines, o, victim).await
    {
        let message = format!("Remediation of Machine {name} failed: {e}");
        let failed = Condition::false_(OWNER_REMEDIATED, REMEDIATION_FAILED, Severity::Warning, &message, cond_now());
        // Read again: the write above changed the Machine.
        if let Some(m) = api.get_opt(&name).await?
            && write_owner_remediated(&api, &m, Some(failed)).await?
        {
            s.ctx.events.warning(kcp, "RemediationFailed", message).await;
        }
        return Ok(Outcome { deleted: false, recheck: Some(UNSTABLE_RECHECK) });
    }
    delete_if_present(&api, CONTROLLER, &name).await?;
    s.expect(kcp, Pending::Deleted(name.clone(), Instant::now()));
    let note = if retry > 0 { format!(" (retry {retry})") } else { String::new() };
    s.ctx
        .events
        .normal(kcp, "MachineRemediated", format!("Deleted unhealthy control plane Machine {name}{note}"))
        .await;
    Ok(Outcome { deleted: true, recheck: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etcd;
    fn now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }
    use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlaneRemediation;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    fn machine(name: &str, age: i64, node: bool) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.metadata.creation_timestamp = Some(Time(Timestamp::from_second(1_000_000 - age).unwrap()));
        if node {
            m.status = Some(drydock_api::capi::core::v1beta2::MachineStatus {
                node_ref: Some(drydock_api::capi::core::v1beta2::MachineNodeReference { name: name.into() }),
                ..Default::default()
            });
        }
        m.mark_false(HEALTH_CHECK_SUCCEEDED, "UnhealthyNode", Severity::Warning, "", now());
        m.mark_false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, "", now());
        Arc::new(m)
    }

    fn observed(members: &[(&str, bool)]) -> Observed {
        let pod = |node: &str, healthy: bool| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"name": etcd::pod_name(node), "labels": {"component": "etcd"},
                             "annotations": {etcd::MEMBER_ID_ANNOTATION: node, etcd::CLUSTER_ID_ANNOTATION: "c"}},
                "spec": {"nodeName": node, "containers": []},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if healthy {"True"} else {"False"}}]},
            }))
            .unwrap()
        };
        let pods: Vec<Pod> = members.iter().map(|(n, h)| pod(n, *h)).collect();
        let nodes: Vec<Node> =
            members.iter().map(|(n, _)| serde_json::from_value(json!({"metadata": {"name": n}})).unwrap()).collect();
        Observed { nodes, membership: etcd::Membership::from_pods(&pods), pods, kubeadm_config: true }
    }

    #[test]
    fn quorum_projection() {
        let ms = [machine("a", 3, true), machine("b", 2, true), machine("c", 1, true)];
        let all = observed(&[("a", true), ("b", true), ("c", true)]);
        assert!(etcd_keeps_quorum(&all, &ms, &ms[0]).is_ok(), "3 healthy: one may go");
        let one_down = observed(&[("a", false), ("b", true), ("c", true)]);
        assert!(etcd_keeps_quorum(&one_down, &ms, &ms[0]).is_ok(), "removing the unhealthy member");
        let err = etcd_keeps_quorum(&one_down, &ms, &ms[1]).unwrap_err();
        assert!(err.contains("lose quorum") && err.contains("1 of the 2 remaining"), "{err}");
        // A member without a Machine counts as unhealthy.
        let stray = observed(&[("a", true), ("b", true), ("c", true), ("x", true), ("y", true)]);
        assert!(etcd_keeps_quorum(&stray, &ms, &ms[0]).is_err());
        // Five members tolerate one more failure.
        let five = [ms[0].clone(), ms[1].clone(), ms[2].clone(), machine("d", 0, true), machine("e", 0, true)];
        let degraded = observed(&[("a", false), ("b", true), ("c", true), ("d", true), ("e", true)]);
        assert!(etcd_keeps_quorum(&degraded, &five, &five[1]).is_ok());
    }

    #[test]
    fn choice_prefers_no_node_then_bad_etcd_then_age() {
        let (a, b, c) = (machine("a", 30, true), machine("b", 20, true), machine("c", 10, false));
        let o = observed(&[("a", true), ("b", false)]);
        assert_eq!(choose(&[&a, &b, &c], Some(&o)).unwrap().name_any(), "c");
        assert_eq!(choose(&[&a, &b], Some(&o)).unwrap().name_any(), "b");
        let healthy = observed(&[("a", true), ("b", true)]);
        assert_eq!(choose(&[&b, &a], Some(&healthy)).unwrap().name_any(), "a", "oldest");
        assert!(choose(&[], Some(&o)).is_none());
    }

    #[test]
    fn retry_limits() {
        let t0 = Timestamp::from_second(2_000_000_000).unwrap();
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        let mut m = (*machine("m", 0, true)).clone();
        assert_eq!(retry_count(&kcp, &m, t0), Ok(0), "not a replacement");
        let data = |secs_ago: i64, count: i32| {
            RemediationData {
                machine: "old".into(),
                timestamp: Time(Timestamp::from_second(t0.as_second() - secs_ago).unwrap()),
                retry_count: count,
            }
            .to_annotation()
        };
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(60, 2));
        assert_eq!(retry_count(&kcp, &m, t0), Ok(3), "within the default hour: a retry");
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(7200, 2));
        assert_eq!(retry_count(&kcp, &m, t0), Ok(0), "healthy long enough: a new sequence");

        kcp.spec.remediation = Some(KubeadmControlPlaneRemediation {
            max_retry: Some(2),
            retry_period_seconds: Some(300),
            min_healthy_period_seconds: Some(1800),
        });
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(60, 0));
        let held = retry_count(&kcp, &m, t0).unwrap_err();
        assert!(held.message.contains("retryPeriodSeconds"), "{}", held.message);
        assert_eq!(held.recheck, Some(Duration::from_secs(241)));
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(600, 1));
        assert_eq!(retry_count(&kcp, &m, t0), Ok(2));
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(600, 2));
        let held = retry_count(&kcp, &m, t0).unwrap_err();
        assert!(held.message.contains("maxRetry (2)"), "{}", held.message);
        assert_eq!(held.recheck, None);
        m.annotations_mut().insert(REMEDIATION_FOR_ANNOTATION.into(), data(3600, 2));
        assert_eq!(retry_count(&kcp, &m, t0), Ok(0), "past minHealthyPeriod");
    }

    #[test]
    fn gates_of_an_initialized_control_plane() {
        let o = observed(&[("a", true), ("b", true), ("c", true)]);
        let single = [machine("a", 3, true)];
        assert!(gates(&single, Some(&o), &single[0]).unwrap_err().message.contains("only Machine"));
        let mut provisioning = (*machine("c", 1, false)).clone();
        provisioning.status = None;
        provisioning.mark_true(HEALTH_CHECK_SUCCEEDED, now());
        provisioning.delete_condition(OWNER_REMEDIATED);
        let ms = [machine("a", 3, true), machine("b", 2, true), Arc::new(provisioning)];
        assert!(gates(&ms, Some(&o), &ms[0]).unwrap_err().message.contains("finish provisioning"));
        let ms = [machine("a", 3, true), machine("b", 2, true), machine("c", 1, true)];
        assert!(gates(&ms, Some(&o), &ms[0]).is_ok());
        assert!(gates(&ms, None, &ms[0]).is_err());
    }

    #[test]
    fn last_remediation_prefers_the_one_in_progress() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        let at = |s: i64| Time(Timestamp::from_second(s).unwrap());
        let mut a = (*machine("a", 0, true)).clone();
        a.annotations_mut().insert(
            REMEDIATION_FOR_ANNOTATION.into(),
            RemediationData { machine: "x".into(), timestamp: at(100), retry_count: 0 }.to_annotation(),
        );
        let mut b = a.clone();
        b.annotations_mut().insert(
            REMEDIATION_FOR_ANNOTATION.into(),
            RemediationData { machine: "y".into(), timestamp: at(200), retry_count: 1 }.to_annotation(),
        );
        let ms = [Arc::new(a), Arc::new(b)];
        assert_eq!(last_remediation(&kcp, &ms).unwrap().machine, "y");
        kcp.annotations_mut().insert(
            REMEDIATION_IN_PROGRESS_ANNOTATION.into(),
            RemediationData { machine: "z".into(), timestamp: at(300), retry_count: 2 }.to_annotation(),
        );
        let last = last_remediation(&kcp, &ms).unwrap();
        assert_eq!((last.machine.as_str(), last.retry_count), ("z", 2));
        assert!(last_remediation(&KubeadmControlPlane::new("k", Default::default()), &[]).is_none());
    }
}
