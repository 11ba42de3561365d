//! The health of one target Machine (upstream's §5.3), as a pure function of the Machine,
//! its Node, the Cluster and the check's rules, so it is tested without a cluster.
//!
//! Checks run in order and the first hit decides: the remediate-machine annotation, a
//! terminal failure, a Node that disappeared, then (once the cluster can have Nodes) the
//! node start-up timeout, the unhealthy Node conditions and the unhealthy Machine conditions.
//! Timeouts still running make the target neither healthy nor unhealthy, and say when to
//! look again.

use std::time::Duration;

use crate::framework::objects::is_control_plane;
use drydock_api::capi::conditions::STATUS_TRUE;
use drydock_api::capi::core::DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS;
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineHealthCheckSpec};
use drydock_api::capi::keys::{REMEDIATE_MACHINE_ANNOTATION, has_annotation};
use drydock_api::capi::v1beta2_conditions::HasV1Beta2Conditions;
use drydock_api::capi::v1beta2_conditions::names::{CONTROL_PLANE_INITIALIZED, INFRASTRUCTURE_READY};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
/// Timers fire a little after a deadline so the comparison at wake-up sees it passed.
const TIMER_SLACK: Duration = Duration::from_millis(50);

/// A check's rules, read once per reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// `None`: a Machine may wait for its Node forever.
    pub node_startup_timeout: Option<Duration>,
    /// (Node condition type, status, how long it may hold).
    pub unhealthy_node_conditions: Vec<(String, String, Duration)>,
    /// (Machine condition type, status, how long it may hold), on the v1beta2 conditions.
    pub unhealthy_machine_conditions: Vec<(String, &'static str, Duration)>,
}

fn seconds(s: i32) -> Duration {
    Duration::from_secs(u64::try_from(s).unwrap_or(0))
}

impl Rules {
    pub fn of(spec: &MachineHealthCheckSpec) -> Self {
        let checks = spec.checks.as_ref();
        let startup =
            checks.and_then(|c| c.node_startup_timeout_seconds).unwrap_or(DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS);
        let node_startup_timeout = Some(seconds(startup)).filter(|d| !d.is_zero());
        let unhealthy_node_conditions = checks
            .and_then(|c| c.unhealthy_node_conditions.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone(), seconds(c.timeout_seconds)))
            .collect();
        let unhealthy_machine_conditions = checks
            .and_then(|c| c.unhealthy_machine_conditions.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|c| (c.type_.clone(), c.status.as_str(), seconds(c.timeout_seconds)))
            .collect();
        Self { node_startup_timeout, unhealthy_node_conditions, unhealthy_machine_conditions }
    }
}

/// What the judgement needs of the Cluster: when it became able to run Nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClusterFacts {
    /// When `ControlPlaneInitialized` became True (`None` while it is not).
    pub control_plane_initialized: Option<Timestamp>,
    /// When the `InfrastructureReady` condition became True (`None` while it is not).
    pub infrastructure_ready: Option<Timestamp>,
}

/// When the v1beta2 condition `type_` became True (as upstream v1.14 reads it).
fn true_since<K: HasV1Beta2Conditions>(obj: &K, type_: &str) -> Option<Timestamp> {
    obj.v1beta2_condition(type_).filter(|c| c.status == STATUS_TRUE).map(|c| c.last_transition_time.0)
}

impl ClusterFacts {
    pub fn of(c: &Cluster) -> Self {
        Self {
            control_plane_initialized: true_since(c, CONTROL_PLANE_INITIALIZED),
            infrastructure_ready: true_since(c, INFRASTRUCTURE_READY),
        }
    }
}

/// A target as seen this reconcile.
pub(crate) struct Target<'a> {
    pub machine: &'a Machine,
    /// Its Node (read by `status.nodeRef` once the control plane is initialized).
    pub node: Option<&'a Node>,
    /// `status.nodeRef` is set but that Node is gone.
    pub node_missing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Healthy,
    Unhealthy {
        reason: &'static str,
        message: String,
    },
    /// Neither healthy nor unhealthy (waiting for a Node, a timeout still running, deleting,
    /// or the cluster not ready for Nodes): look again after `next`, else on a change.
    Pending {
        next: Option<Duration>,
    },
}

impl Verdict {
    pub fn is_unhealthy(&self) -> bool {
        matches!(self, Verdict::Unhealthy { .. })
    }
}

/// Time from `now` until `start + timeout` (plus slack), or `None` once that has passed.
fn remaining(start: Timestamp, timeout: Duration, now: Timestamp) -> Option<Duration> {
    let deadline = start.checked_add(timeout).ok()?;
    (deadline >= now).then(|| now.duration_until(deadline).unsigned_abs() + TIMER_SLACK)
}

fn earlier(a: Option<Duration>, b: Duration) -> Option<Duration> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// The first rule (condition type, status, timeout) whose condition has held longer than
/// its timeout, as `Err`; else the time until the earliest one running out, if any.
/// `since` says since when a condition type has had a status.
fn held_too_long<'a>(
    rules: impl Iterator<Item = (&'a str, &'a str, Duration)>,
    since: impl Fn(&str, &str) -> Option<Timestamp>,
    now: Timestamp,
) -> Result<Option<Duration>, (&'a str, &'a str, Duration)> {
    let mut next = None;
    for (type_, wanted, timeout) in rules {
        let Some(start) = since(type_, wanted) else { continue };
        match remaining(start, timeout, now) {
            None => return Err((type_, wanted, timeout)),
            Some(left) => next = earlier(next, left),
        }
    }
    Ok(next)
}

/// The Node's and the Machine's conditions against the rules: an unhealthy verdict, or the
/// time until the earliest running timeout expires.
fn held_conditions(
    m: &Machine,
    node: Option<&Node>,
    rules: &Rules,
    now: Timestamp,
) -> Result<Option<Duration>, Verdict> {
    let mut next = None;
    if let Some(node) = node {
        let conditions = node.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
        let since = |type_: &str, status: &str| {
            let c = conditions.iter().find(|c| c.type_ == type_ && c.status == status)?;
            Some(c.last_transition_time.as_ref().map_or(now, |t| t.0))
        };
        let node_rules = rules.unhealthy_node_conditions.iter().map(|(t, s, d)| (t.as_str(), s.as_str(), *d));
        next = held_too_long(node_rules, since, now).map_err(|(type_, wanted, timeout)| Verdict::Unhealthy {
            reason: "UnhealthyNode",
            message: format!("Condition {type_} on node is reporting status {wanted} for more than {}", show(timeout)),
        })?;
    }
    let since = |type_: &str, status: &str| {
        m.v1beta2_condition(type_).filter(|c| c.status == status).map(|c| c.last_transition_time.0)
    };
    let machine_rules = rules.unhealthy_machine_conditions.iter().map(|(t, s, d)| (t.as_str(), *s, *d));
    let left = held_too_long(machine_rules, since, now).map_err(|(type_, wanted, timeout)| Verdict::Unhealthy {
        reason: "UnhealthyMachine",
        message: format!("Condition {type_} on Machine is reporting status {wanted} for more than {}", show(timeout)),
    })?;
    Ok(left.map_or(next, |left| earlier(next, left)))
}

/// Judges one target; see the module documentation for the order of the checks.
pub(crate) fn judge(t: &Target<'_>, cluster: &ClusterFacts, rules: &Rules, now: Timestamp) -> Verdict {
    let m = t.machine;
    let unhealthy = |reason, message: String| Verdict::Unhealthy { reason, message };
    if has_annotation(m.metadata.annotations.as_ref(), REMEDIATE_MACHINE_ANNOTATION) {
        return unhealthy(
            "HasRemediateMachineAnnotation",
            "Marked for remediation via remediate-machine annotation".into(),
        );
    }
    let failure = m.failure();
    if let Some(r) = failure.and_then(|f| f.failure_reason.as_deref()) {
        return unhealthy("MachineHasFailure", format!("FailureReason: {r}"));
    }
    if let Some(msg) = failure.and_then(|f| f.failure_message.as_deref()) {
        return unhealthy("MachineHasFailure", format!("FailureMessage: {msg}"));
    }
    if t.node_missing {
        let name = m.node_name().unwrap_or_default();
        return unhealthy("NodeNotFound", format!("Node {name} not found"));
    }
    // Workers cannot have Nodes before the control plane is up; nothing runs before the
    // infrastructure does. Cluster changes bring the check back.
    if cluster.control_plane_initialized.is_none() && !is_control_plane(m) {
        return Verdict::Pending { next: None };
    }
    let Some(infra_ready) = cluster.infrastructure_ready else {
        return Verdict::Pending { next: None };
    };
    let mut next = None;
    if t.node.is_none() {
        let Some(timeout) = rules.node_startup_timeout else {
            return Verdict::Pending { next: None };
        };
        // The clock starts when the Machine could last have started a Node.
        let start = [
            m.metadata.creation_timestamp.as_ref().map(|t| t.0),
            cluster.control_plane_initialized,
            Some(infra_ready),
            true_since(m, INFRASTRUCTURE_READY),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(now);
        match remaining(start, timeout, now) {
            None => {
                let message = format!("Node failed to report startup in {}", show(timeout));
                return unhealthy("NodeStartupTimeout", message);
            }
            Some(left) => next = earlier(next, left),
        }
    }
    match held_conditions(m, t.node, rules, now) {
        Err(verdict) => return verdict,
        Ok(left) => next = left.map_or(next, |left| earlier(next, left)),
    }
    if next.is_some() || t.node.is_none() || m.metadata.deletion_timestamp.is_some() {
        return Verdict::Pending { next };
    }
    Verdict::Healthy
}

/// A duration as users write them (`2s`, `5m0s`, `1h0m0s`).
pub(crate) fn show(d: Duration) -> String {
    let s = d.as_secs();
    let ms = d.subsec_millis();
    if s == 0 && ms > 0 {
        return format!("{ms}ms");
    }
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    let secs = if ms > 0 { format!("{s}.{ms:03}").trim_end_matches('0').to_string() } else { s.to_string() };
    match (h, m) {
        (0, 0) => format!("{secs}s"),
        (0, m) => format!("{m}m{secs}s"),
        (h, m) => format!("{h}h{m}m{secs}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::common::{ConditionStatus, UnhealthyMachineCondition, UnhealthyNodeCondition};
    use drydock_api::capi::core::v1beta2::MachineHealthCheckChecks;
    use drydock_api::capi::v1beta2_conditions::Observed;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).expect("ts")
    }

    fn rules(startup_seconds: i32) -> Rules {
        let node = |status: &str, timeout_seconds| UnhealthyNodeCondition {
            type_: "Ready".into(),
            status: status.into(),
            timeout_seconds,
        };
        let spec = MachineHealthCheckSpec {
            checks: Some(MachineHealthCheckChecks {
                node_startup_timeout_seconds: Some(startup_seconds),
                unhealthy_node_conditions: Some(vec![node("False", 2), node("Unknown", 300)]),
                unhealthy_machine_conditions: Some(vec![UnhealthyMachineCondition {
                    type_: "Ready".into(),
                    status: ConditionStatus::False,
                    timeout_seconds: 60,
                }]),
            }),
            ..Default::default()
        };
        Rules::of(&spec)
    }

    fn machine(created: i64) -> Machine {
        let mut m = Machine::new("m", Default::default());
        m.metadata.creation_timestamp = Some(Time(at(created)));
        m
    }

    fn node(ready: &str, since: i64) -> Node {
        serde_json::from_value(json!({"metadata": {"name": "n"}, "status": {"conditions": [
            {"type": "Ready", "status": ready, "lastTransitionTime": Time(at(since))}]}}))
        .expect("node")
    }

    fn ready_cluster() -> ClusterFacts {
        ClusterFacts { control_plane_initialized: Some(at(50)), infrastructure_ready: Some(at(40)) }
    }

    #[test]
    fn node_conditions_with_timeouts() {
        let m = machine(0);
        let r = rules(600);
        let c = ready_cluster();
        let healthy = node("True", 60);
        let t = Target { machine: &m, node: Some(&healthy), node_missing: false };
        assert_eq!(judge(&t, &c, &r, at(100)), Verdict::Healthy);
        let sick = node("False", 99);
        let t = Target { machine: &m, node: Some(&sick), node_missing: false };
        assert_eq!(judge(&t, &c, &r, at(100)), Verdict::Pending { next: Some(Duration::from_millis(1050)) });
        assert_eq!(judge(&t, &c, &r, at(101)), Verdict::Pending { next: Some(TIMER_SLACK) });
        let v = judge(&t, &c, &r, at(102));
        assert!(
            matches!(&v, Verdict::Unhealthy { reason: "UnhealthyNode", message }
            if message == "Condition Ready on node is reporting status False for more than 2s"),
            "{v:?}"
        );
        let unknown = node("Unknown", 0);
        let t = Target { machine: &m, node: Some(&unknown), node_missing: false };
        assert!(matches!(judge(&t, &c, &r, at(299)), Verdict::Pending { next: Some(_) }));
        assert!(judge(&t, &c, &r, at(301)).is_unhealthy());
    }

    #[test]
    fn node_startup_clock_starts_at_the_latest_readiness() {
        let mut m = machine(0);
        let r = rules(30);
        let c = ready_cluster();
        let t = Target { machine: &m, node: None, node_missing: false };
        // Started at 50 (control plane initialized), the latest of creation and the cluster's times.
        assert_eq!(judge(&t, &c, &r, at(70)), Verdict::Pending { next: Some(Duration::from_secs(10) + TIMER_SLACK) });
        let v = judge(&t, &c, &r, at(81));
        assert!(
            matches!(&v, Verdict::Unhealthy { reason: "NodeStartupTimeout", message }
            if message == "Node failed to report startup in 30s"),
            "{v:?}"
        );
        m.set_v1beta2(Observed::true_(INFRASTRUCTURE_READY, "Ready"), &Time(at(75)));
        let t = Target { machine: &m, node: None, node_missing: false };
        assert!(matches!(judge(&t, &c, &r, at(81)), Verdict::Pending { next: Some(_) }));
        // Disabled: waits forever.
        assert_eq!(judge(&t, &c, &rules(0), at(10_000)), Verdict::Pending { next: None });
    }

    #[test]
    fn unset_checks_mean_upstream_defaults() {
        let r = Rules::of(&MachineHealthCheckSpec::default());
        assert_eq!(r.node_startup_timeout, Some(Duration::from_secs(600)));
        assert!(r.unhealthy_node_conditions.is_empty() && r.unhealthy_machine_conditions.is_empty());
    }

    #[test]
    fn machine_conditions_with_timeouts() {
        use drydock_api::capi::v1beta2_conditions::Status;
        let mut m = machine(0);
        let r = rules(600);
        let c = ready_cluster();
        let n = node("True", 0);
        m.set_v1beta2(Observed::new("Ready", Status::False, "NotReady", ""), &Time(at(100)));
        let t = Target { machine: &m, node: Some(&n), node_missing: false };
        assert_eq!(judge(&t, &c, &r, at(130)), Verdict::Pending { next: Some(Duration::from_secs(30) + TIMER_SLACK) });
        let v = judge(&t, &c, &r, at(161));
        assert!(
            matches!(&v, Verdict::Unhealthy { reason: "UnhealthyMachine", message }
            if message == "Condition Ready on Machine is reporting status False for more than 1m0s"),
            "{v:?}"
        );
    }

    #[test]
    fn order_of_checks() {
        let r = rules(600);
        let c = ready_cluster();
        let mut m = machine(0);
        m.metadata.annotations = Some([(REMEDIATE_MACHINE_ANNOTATION.to_string(), String::new())].into());
        let n = node("True", 0);
        let t = Target { machine: &m, node: Some(&n), node_missing: false };
        assert!(matches!(
            judge(&t, &c, &r, at(100)),
            Verdict::Unhealthy { reason: "HasRemediateMachineAnnotation", .. }
        ));
        let mut m = machine(0);
        m.deprecated_v1beta1_mut().failure_message = Some("boom".into());
        let t = Target { machine: &m, node: Some(&n), node_missing: false };
        assert!(
            matches!(judge(&t, &c, &r, at(100)), Verdict::Unhealthy { reason: "MachineHasFailure", message } if message == "FailureMessage: boom")
        );
        let m = machine(0);
        let t = Target { machine: &m, node: None, node_missing: true };
        assert!(matches!(judge(&t, &c, &r, at(100)), Verdict::Unhealthy { reason: "NodeNotFound", .. }));
        // Workers wait for the control plane, without a timer.
        let early = ClusterFacts { control_plane_initialized: None, infrastructure_ready: Some(at(0)) };
        let t = Target { machine: &m, node: None, node_missing: false };
        assert_eq!(judge(&t, &early, &r, at(10_000)), Verdict::Pending { next: None });
        // A deleting Machine is never healthy.
        let mut going = machine(0);
        going.metadata.deletion_timestamp = Some(Time(at(90)));
        let t = Target { machine: &going, node: Some(&n), node_missing: false };
        assert_eq!(judge(&t, &c, &r, at(100)), Verdict::Pending { next: None });
    }

    #[test]
    fn durations_read_like_go() {
        assert_eq!(show(Duration::from_secs(2)), "2s");
        assert_eq!(show(Duration::from_secs(300)), "5m0s");
        assert_eq!(show(Duration::from_secs(3723)), "1h2m3s");
        assert_eq!(show(Duration::from_millis(1500)), "1.5s");
        assert_eq!(show(Duration::from_millis(200)), "200ms");
    }
}
