//! MachineSet status: replica counters and the MachinesCreated, Resized, MachinesReady and
//! Ready conditions.
//!
//! Readiness is read from the Machines, not from the workload clusters' Nodes: the Machine
//! controller reflects its Node's health into `NodeHealthy` (whose transition time moves
//! only when its status changes), so a ready Machine is one with a nodeRef and a True
//! `NodeHealthy`, available once that has held for minReadySeconds. Reading Nodes from
//! every workload cluster on every MachineSet reconcile would not scale to a fleet.
//!
//! Deleting Machines count in `replicas` (they still exist, and a rollout must not surge
//! past them) but are neither ready nor available, unlike upstream: a rollout's
//! availability budget counting Machines on their way out would let it take more down
//! than `maxUnavailable` allows.

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::condition_types::{
    MACHINES_CREATED, MACHINES_READY, NODE_HEALTHY, RESIZED, SCALING_DOWN, SCALING_UP,
};
use drydock_api::capi::conditions::{self, Condition, HasConditions, READY, Severity};
use drydock_api::capi::core::v1beta2::{Machine, MachineSet};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Conditions the MachineSet's Ready summarises, in priority order.
pub const READY_SUMMARY: &[&str] = &[MACHINES_CREATED, RESIZED, MACHINES_READY];

/// When the Machine's Node became healthy, if it is now.
pub fn ready_since(m: &Machine) -> Option<Timestamp> {
    m.status.as_ref()?.node_ref.as_ref()?;
    let healthy = m.get_condition(NODE_HEALTHY)?;
    healthy.is_true().then_some(healthy.last_transition_time.0)
}

/// Replica counters of a MachineSet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub replicas: i32,
    pub fully_labeled: i32,
    pub ready: i32,
    pub available: i32,
}

/// Counts the MachineSet's Machines (deleting ones included). Also returns how long until
/// the next ready Machine becomes available, when one is waiting for minReadySeconds.
pub fn count(ms: &MachineSet, machines: &[Arc<Machine>], now: Timestamp) -> (Counters, Option<Duration>) {
    let template_labels = ms.spec.template.metadata.labels.as_ref();
    let min_ready = Duration::from_secs(ms.spec.template.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
    let mut c = Counters::default();
    let mut next_available: Option<Duration> = None;
    for m in machines {
        c.replicas += 1;
        let labels = m.metadata.labels.as_ref();
        let fully_labeled =
            template_labels.is_none_or(|want| want.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)));
        if fully_labeled {
            c.fully_labeled += 1;
        }
        if m.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(since) = ready_since(m) else {
            continue;
        };
        c.ready += 1;
        let held = now.duration_since(since);
        let held = Duration::try_from(held).unwrap_or(Duration::ZERO);
        if min_ready.is_zero() || held >= min_ready {
            c.available += 1;
        } else {
            let wait = min_ready - held;
            next_available = Some(next_available.map_or(wait, |w| w.min(wait)));
        }
    }
    (c, next_available)
}

/// Writes the counters, selector and observed generation into the status (the counters of
/// v1beta1 meaning under `deprecated.v1beta1`).
pub fn set_counters(ms: &mut MachineSet, c: Counters, selector: String, generation: Option<i64>) {
    let status = ms.status.get_or_insert_with(Default::default);
    status.selector = Some(selector);
    status.replicas = Some(c.replicas);
    if generation.is_some() {
        status.observed_generation = generation;
    }
    let old = ms.deprecated_v1beta1_mut();
    old.fully_labeled_replicas = Some(c.fully_labeled);
    old.ready_replicas = Some(c.ready);
    old.available_replicas = Some(c.available);
}

/// Sets Resized (and MachinesCreated once every Machine exists) from the counters.
pub fn set_resized(ms: &mut MachineSet, desired: i32, c: Counters, now: Time) {
    if c.replicas < desired {
        ms.mark_false(
            RESIZED,
            SCALING_UP,
            Severity::Warning,
            &format!("Scaling up MachineSet to {desired} replicas (actual {})", c.replicas),
            now,
        );
        return;
    }
    if c.replicas > desired {
        ms.mark_false(
            RESIZED,
            SCALING_DOWN,
            Severity::Warning,
            &format!("Scaling down MachineSet to {desired} replicas (actual {})", c.replicas),
            now.clone(),
        );
    } else if c.ready == c.replicas {
        ms.mark_true(RESIZED, now.clone());
    }
    ms.mark_true(MACHINES_CREATED, now);
}

/// Merges the Machines' Ready conditions into one: the worst wins (False/Error,
/// False/Warning, False/Info, True, Unknown), its reason names the Machine
/// (`<Reason> @ Machine/<name>`), and a non-True result counts how many are ready.
/// `None` when no Machine reports Ready.
pub fn aggregate_ready(machines: &[Arc<Machine>], type_: &str, now: Time) -> Option<Condition> {
    let mut total = 0;
    let mut ready = 0;
    let mut worst: Option<(u8, &Condition, &str)> = None;
    for m in machines {
        let Some(c) = m.get_condition(READY) else {
            continue;
        };
        total += 1;
        if c.is_true() {
            ready += 1;
        }
        let rank = rank(c);
        if worst.is_none_or(|(r, _, _)| rank < r) {
            worst = Some((rank, c, m.metadata.name.as_deref().unwrap_or_default()));
        }
    }
    let (_, c, name) = worst?;
    let message = format!("{ready} of {total} completed");
    Some(match c.status.as_str() {
        conditions::STATUS_TRUE => Condition::true_(type_, now),
        conditions::STATUS_FALSE => Condition::false_(
            type_,
            &format!("{} @ Machine/{name}", c.reason.as_deref().unwrap_or_default()),
            c.severity().unwrap_or(Severity::Info),
            &message,
            now,
        ),
        _ => Condition::unknown(
            type_,
            &format!("{} @ Machine/{name}", c.reason.as_deref().unwrap_or_default()),
            &message,
            now,
        ),
    })
}

/// Lower is worse; the same order as the Ready summary.
fn rank(c: &Condition) -> u8 {
    match c.status.as_str() {
        conditions::STATUS_FALSE => match c.severity() {
            Some(Severity::Error) => 0,
            Some(Severity::Warning) => 1,
            _ => 2,
        },
        conditions::STATUS_TRUE => 3,
        _ => 4,
    }
}

/// Sets MachinesReady from the Machines; with no Machines there is nothing to wait for.
pub fn set_machines_ready(ms: &mut MachineSet, machines: &[Arc<Machine>], now: Time) {
    if machines.is_empty() {
        ms.mark_true(MACHINES_READY, now);
    } else if let Some(c) = aggregate_ready(machines, MACHINES_READY, now) {
        ms.set_condition(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::MachineSetSpec;
    use drydock_api::capi::core::v1beta2::MachineStatus;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).expect("valid timestamp")
    }

    fn machine(name: &str, healthy_since: Option<i64>) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        if let Some(t) = healthy_since {
            m.status = Some(MachineStatus {
                node_ref: Some(drydock_api::capi::core::v1beta2::MachineNodeReference { name: "n".into() }),
                ..Default::default()
            });
            m.mark_true(NODE_HEALTHY, Time(at(t)));
        }
        Arc::new(m)
    }

    fn ms(min_ready: i32) -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec::default());
        ms.spec.template.spec.min_ready_seconds = Some(min_ready);
        ms.spec.template.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        ms
    }

    #[test]
    fn counts_ready_and_available_after_min_ready_seconds() {
        let mut unlabeled = (*machine("d", Some(0))).clone();
        unlabeled.metadata.labels = None;
        let mut deleting = (*machine("e", Some(0))).clone();
        deleting.metadata.deletion_timestamp = Some(Time(at(150)));
        let machines = vec![
            machine("a", Some(100)),
            machine("b", Some(190)),
            machine("c", None),
            Arc::new(unlabeled),
            Arc::new(deleting),
        ];
        let (c, next) = count(&ms(30), &machines, at(200));
        assert_eq!(c, Counters { replicas: 5, fully_labeled: 4, ready: 3, available: 2 });
        assert_eq!(next, Some(Duration::from_secs(20)));
        let (c, next) = count(&ms(0), &machines, at(200));
        assert_eq!((c.available, next), (3, None));
    }

    #[test]
    fn resized_follows_counts() {
        let now = Time(at(5));
        let mut s = ms(0);
        let c = |replicas, ready| Counters { replicas, ready, ..Default::default() };
        set_resized(&mut s, 3, c(1, 0), now.clone());
        let r = s.get_condition(RESIZED).expect("resized");
        assert_eq!(r.reason.as_deref(), Some(SCALING_UP));
        assert_eq!(r.message.as_deref(), Some("Scaling up MachineSet to 3 replicas (actual 1)"));
        assert!(s.get_condition(MACHINES_CREATED).is_none());
        set_resized(&mut s, 3, c(3, 1), now.clone());
        assert!(s.is_condition_false(RESIZED));
        assert!(s.is_condition_true(MACHINES_CREATED));
        set_resized(&mut s, 3, c(3, 3), now.clone());
        assert!(s.is_condition_true(RESIZED));
        set_resized(&mut s, 1, c(3, 3), now);
        assert_eq!(s.get_condition(RESIZED).and_then(|r| r.reason.as_deref()), Some(SCALING_DOWN));
    }

    #[test]
    fn aggregate_names_the_worst_machine() {
        let now = Time(at(5));
        let mut a = (*machine("a", None)).clone();
        a.mark_true(READY, now.clone());
        let mut b = (*machine("b", None)).clone();
        b.mark_false(READY, "WaitingForInfrastructure", Severity::Info, "", now.clone());
        let mut c = (*machine("c", None)).clone();
        c.mark_false(READY, "DrainingFailed", Severity::Warning, "", now.clone());
        let all = vec![Arc::new(a.clone()), Arc::new(b), Arc::new(c), machine("d", None)];
        let agg = aggregate_ready(&all, MACHINES_READY, now.clone()).expect("aggregate");
        assert_eq!(agg.reason.as_deref(), Some("DrainingFailed @ Machine/c"));
        assert_eq!(agg.severity(), Some(Severity::Warning));
        assert_eq!(agg.message.as_deref(), Some("1 of 3 completed"));
        let agg = aggregate_ready(&[Arc::new(a)], MACHINES_READY, now.clone()).expect("aggregate");
        assert!(agg.is_true());
        assert!(aggregate_ready(&[machine("x", None)], MACHINES_READY, now.clone()).is_none());

        let mut s = ms(0);
        set_machines_ready(&mut s, &[], now);
        assert!(s.is_condition_true(MACHINES_READY));
    }
}
