//! Which Machines go first when a MachineSet scales down.
//!
//! Every Machine gets a priority from 0 to 100; the highest go first, ties broken by name.
//! Deleting Machines come first (they are already going), then Machines annotated with
//! `cluster.x-k8s.io/delete-machine`, then unhealthy ones, then the policy's order: by age
//! for Oldest and Newest, none for Random. The annotation outranks unhealthiness for every
//! policy, as in Cluster API 1.9.

use std::cmp::Ordering;
use std::sync::Arc;

use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::MachineSetDeletePolicy;
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{DELETE_MACHINE_ANNOTATION, has_annotation};
use jiff::Timestamp;

use drydock_api::capi::condition_types::{HEALTH_CHECK_SUCCEEDED, NODE_HEALTHY};

const MUST_DELETE: f64 = 100.0;
const SHOULD_DELETE: f64 = 75.0;
const BETTER_DELETE: f64 = 50.0;
const COULD_DELETE: f64 = 20.0;
/// Ten days: the age at which the Oldest score reaches about 63% of its range.
const AGE_SCALE_SECONDS: f64 = 864_000.0;

/// False when the Machine has no Node yet, reports a failure, or its Node or health check
/// is known bad (Unknown does not count as bad).
pub fn is_healthy(m: &Machine) -> bool {
    m.node_name().is_some()
        && m.failure().is_none()
        && !m.is_condition_false(NODE_HEALTHY)
        && !m.is_condition_false(HEALTH_CHECK_SUCCEEDED)
}

fn oldest_score(m: &Machine, now: Timestamp) -> f64 {
    let Some(created) = m.metadata.creation_timestamp.as_ref() else {
        return 0.0;
    };
    let age = now.duration_since(created.0).as_secs_f64();
    if age <= 0.0 {
        return 0.0;
    }
    BETTER_DELETE * (1.0 - (-age / AGE_SCALE_SECONDS).exp())
}

/// The deletion priority of one Machine. `deleting` says whether it is being deleted
/// (its deletionTimestamp, or a deletion this controller issued and the cache has not
/// shown yet).
pub fn priority(m: &Machine, policy: MachineSetDeletePolicy, deleting: bool, now: Timestamp) -> f64 {
    if deleting {
        return MUST_DELETE;
    }
    if has_annotation(m.metadata.annotations.as_ref(), DELETE_MACHINE_ANNOTATION) {
        return SHOULD_DELETE;
    }
    if !is_healthy(m) {
        return BETTER_DELETE;
    }
    match policy {
        MachineSetDeletePolicy::Oldest => oldest_score(m, now),
        MachineSetDeletePolicy::Newest => BETTER_DELETE - oldest_score(m, now),
        MachineSetDeletePolicy::Random => COULD_DELETE,
    }
}

/// The `count` Machines to delete first, highest priority first (ties by name).
pub fn pick(
    machines: &[Arc<Machine>],
    policy: MachineSetDeletePolicy,
    count: usize,
    now: Timestamp,
    deleting: impl Fn(&Machine) -> bool,
) -> Vec<&Arc<Machine>> {
    let mut scored: Vec<(f64, &Arc<Machine>)> =
        machines.iter().map(|m| (priority(m, policy, deleting(m), now), m)).collect();
    scored.sort_by(|(sa, a), (sb, b)| {
        sb.partial_cmp(sa).unwrap_or(Ordering::Equal).then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    scored.into_iter().take(count).map(|(_, m)| m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions::Severity;

    fn cond_now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }
    use drydock_api::capi::core::v1beta2::MachineStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).expect("valid timestamp")
    }

    fn machine(name: &str, created: i64) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.metadata.creation_timestamp = Some(Time(at(created)));
        m.status = Some(MachineStatus {
            node_ref: Some(drydock_api::capi::core::v1beta2::MachineNodeReference { name: "n".into() }),
            ..Default::default()
        });
        Arc::new(m)
    }

    fn names(v: Vec<&Arc<Machine>>) -> Vec<String> {
        v.iter().filter_map(|m| m.metadata.name.clone()).collect()
    }

    #[test]
    fn oldest_and_newest_follow_age() {
        let now = at(1_000_000);
        let ms = vec![machine("b", 999_000), machine("a", 500_000), machine("c", 999_990)];
        let none = |_: &Machine| false;
        let oldest = pick(&ms, MachineSetDeletePolicy::Oldest, 2, now, none);
        assert_eq!(names(oldest), ["a", "b"]);
        let newest = pick(&ms, MachineSetDeletePolicy::Newest, 2, now, none);
        assert_eq!(names(newest), ["c", "b"]);
        // Random gives equal scores: name order decides.
        let random = pick(&ms, MachineSetDeletePolicy::Random, 3, now, none);
        assert_eq!(names(random), ["a", "b", "c"]);
    }

    #[test]
    fn deleting_then_annotated_then_unhealthy_first() {
        let now = at(1_000_000);
        let annotated = {
            let mut m = (*machine("z-annotated", 999_999)).clone();
            m.metadata.annotations = Some([(DELETE_MACHINE_ANNOTATION.to_string(), String::new())].into());
            Arc::new(m)
        };
        let no_node = {
            let mut m = (*machine("y-no-node", 999_999)).clone();
            m.status = None;
            Arc::new(m)
        };
        let node_bad = {
            let mut m = (*machine("x-node-bad", 999_999)).clone();
            m.mark_false(NODE_HEALTHY, "NodeConditionsFailed", Severity::Warning, "", cond_now());
            Arc::new(m)
        };
        let ms = vec![machine("a-old", 1), node_bad, no_node, annotated, machine("w-deleting", 999_999)];
        let deleting = |m: &Machine| m.metadata.name.as_deref() == Some("w-deleting");
        let order = pick(&ms, MachineSetDeletePolicy::Oldest, 5, now, deleting);
        assert_eq!(names(order), ["w-deleting", "z-annotated", "x-node-bad", "y-no-node", "a-old"]);
        // Random: the annotation still outranks unhealthy Machines.
        let order = pick(&ms, MachineSetDeletePolicy::Random, 2, now, deleting);
        assert_eq!(names(order), ["w-deleting", "z-annotated"]);
    }

    #[test]
    fn unknown_node_health_is_not_unhealthy() {
        let mut m = (*machine("m", 1)).clone();
        m.mark_unknown(NODE_HEALTHY, "NodeInspectionFailed", "", cond_now());
        assert!(is_healthy(&m));
        m.deprecated_v1beta1_mut().failure_reason = Some("x".into());
        assert!(!is_healthy(&m));
        let mut fresh = (*machine("n", 10)).clone();
        fresh.metadata.creation_timestamp = None;
        assert_eq!(priority(&fresh, MachineSetDeletePolicy::Oldest, false, at(5)), 0.0);
    }
}
