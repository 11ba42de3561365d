//! The health of one target Machine (upstream's §5.3), as a pure function of the Machine,
//! its Node, the Cluster and the check's rules, so it is tested without a cluster.
//!
//! Checks run in order and the first hit decides: the remediate-machine annotation, a
//! terminal failure, a Node that disappeared, then (once the cluster can have Nodes) the
//! node start-up timeout and the unhealthy Node conditions. Timeouts still running make the
//! target neither healthy nor unhealthy, and say when to look again.

use std::time::Duration;

use crate::framework::objects::is_control_plane;
use drydock_api::capi::condition_types::CONTROL_PLANE_INITIALIZED;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine, MachineHealthCheckSpec};
use drydock_api::capi::duration;
use drydock_api::capi::keys::{REMEDIATE_MACHINE_ANNOTATION, has_annotation};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;

/// Upstream's default node start-up timeout, for checks written without admission defaults.
const DEFAULT_NODE_STARTUP_TIMEOUT: Duration = Duration::from_secs(600);
/// Timers fire a little after a deadline so the comparison at wake-up sees it passed.
const TIMER_SLACK: Duration = Duration::from_millis(50);

/// A check's rules, parsed once per reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// `None`: a Machine may wait for its Node forever.
    pub node_startup_timeout: Option<Duration>,
    /// (Node condition type, status, how long it may hold).
    pub unhealthy_conditions: Vec<(String, String, Duration)>,
}

fn positive(s: &str, field: &str) -> Result<Duration, String> {
    let d = duration::parse(s).map_err(|e| format!("{field}: {e}"))?;
    if d.is_negative() {
        return Err(format!("{field}: {s:?} is negative"));
    }
    Ok(d.unsigned_abs())
}

impl Rules {
    pub fn of(spec: &MachineHealthCheckSpec) -> Result<Self, String> {
        let node_startup_timeout = match spec.node_startup_timeout.as_deref() {
            None => Some(DEFAULT_NODE_STARTUP_TIMEOUT),
            Some(s) => Some(positive(s, "spec.nodeStartupTimeout")?).filter(|d| !d.is_zero()),
        };
        let unhealthy_conditions = spec
            .unhealthy_conditions
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                let timeout = positive(&c.timeout, &format!("spec.unhealthyConditions[{i}].timeout"))?;
                Ok((c.type_.clone(), c.status.clone(), timeout))
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { node_startup_timeout, unhealthy_conditions })
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

fn true_since<K: HasConditions>(obj: &K, type_: &str) -> Option<Timestamp> {
    obj.get_condition(type_).filter(|c| c.is_true()).map(|c| c.last_transition_time.0)
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
    let status = m.status.as_ref();
    if let Some(r) = status.and_then(|s| s.failure_reason.as_deref()) {
        return unhealthy("MachineHasFailure", format!("FailureReason: {r}"));
    }
    if let Some(msg) = status.and_then(|s| s.failure_message.as_deref()) {
        return unhealthy("MachineHasFailure", format!("FailureMessage: {msg}"));
    }
    if t.node_missing {
        let name = status.and_then(|s| s.node_ref.as_ref()).and_then(|r| r.name.as_deref()).unwrap_or_default();
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
    match t.node {
        None => {
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
        Some(node) => {
            let conditions = node.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
            for (type_, wanted, timeout) in &rules.unhealthy_conditions {
                let Some(c) = conditions.iter().find(|c| &c.type_ == type_ && &c.status == wanted) else {
                    continue;
                };
                let since = c.last_transition_time.as_ref().map_or(now, |t| t.0);
                match remaining(since, *timeout, now) {
                    None => {
                        let message = format!(
                            "Condition {type_} on node is reporting status {wanted} for more than {}",
                            show(*timeout)
                        );
                        return unhealthy("UnhealthyNode", message);
                    }
                    Some(left) => next = earlier(next, left),
                }
            }
        }
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
    use drydock_api::capi::conditions::Condition;
    use drydock_api::capi::core::UnhealthyCondition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).expect("ts")
    }

    fn rules(startup: &str) -> Rules {
        let spec = MachineHealthCheckSpec {
            node_startup_timeout: Some(startup.into()),
            unhealthy_conditions: Some(vec![
                UnhealthyCondition { type_: "Ready".into(), status: "False".into(), timeout: "2s".into() },
                UnhealthyCondition { type_: "Ready".into(), status: "Unknown".into(), timeout: "5m".into() },
            ]),
            ..Default::default()
        };
        Rules::of(&spec).expect("rules")
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
        let r = rules("10m");
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
        let r = rules("30s");
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
        m.set_condition(Condition::true_(INFRASTRUCTURE_READY, Time(at(75))));
        let t = Target { machine: &m, node: None, node_missing: false };
        assert!(matches!(judge(&t, &c, &r, at(81)), Verdict::Pending { next: Some(_) }));
        // Disabled: waits forever.
        assert_eq!(judge(&t, &c, &rules("0s"), at(10_000)), Verdict::Pending { next: None });
    }

    #[test]
    fn order_of_checks() {
        let r = rules("10m");
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
        m.status =
            Some(drydock_api::capi::core::MachineStatus { failure_message: Some("boom".into()), ..Default::default() });
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
