//! The MachineSet's v1beta2 status: replica counters and conditions read from its Machines'
//! v1beta2 conditions, and the `UpToDate` condition the set gives its Machines.
//!
//! Counters: `readyReplicas` counts Machines whose `Ready` is True, `availableReplicas`
//! those whose `Ready` has been True for `minReadySeconds` (from its transition time),
//! `upToDateReplicas` those whose `UpToDate` is True. Deleting Machines count as none of
//! them, as in the v1beta1 counters (see [`super::status`]).

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::{Machine, MachineSet};
use drydock_api::capi::keys::{DISABLE_MACHINE_CREATE_ANNOTATION, has_annotation};
use drydock_api::capi::v1beta2_conditions::{
    self as v1beta2, Condition, HasV1Beta2Conditions, Observed, Polarity, Reasons, Status, names,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::remediation;
use crate::framework::scaling::{creation_blocked, plural, scaling_down_of, scaling_up_of};

const MACHINE: (&str, &str) = ("Machine", "Machines");

/// v1beta2 replica counters of a MachineSet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub ready: i32,
    pub available: i32,
    pub up_to_date: i32,
}

/// When the Machine's v1beta2 `Ready` became True, if it is now.
fn ready_since(m: &Machine) -> Option<Timestamp> {
    m.v1beta2_condition(names::READY).filter(|c| c.status == Status::True.as_str()).map(|c| c.last_transition_time.0)
}

/// Counts the Machines; also returns how long until the next ready Machine becomes
/// available, when one is waiting for minReadySeconds.
pub fn count(ms: &MachineSet, machines: &[Arc<Machine>], now: Timestamp) -> (Counters, Option<Duration>) {
    let min_ready = Duration::from_secs(ms.spec.template.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
    let mut c = Counters::default();
    let mut next: Option<Duration> = None;
    for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
        if m.is_v1beta2_true(names::UP_TO_DATE) {
            c.up_to_date += 1;
        }
        let Some(since) = ready_since(m) else {
            continue;
        };
        c.ready += 1;
        let held = Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO);
        if held >= min_ready {
            c.available += 1;
        } else {
            let wait = min_ready - held;
            next = Some(next.map_or(wait, |w| w.min(wait)));
        }
    }
    (c, next)
}

/// `ScalingUp`: True while fewer Machines exist than wanted, saying what holds creation.
pub fn scaling_up(ms: &MachineSet, current: usize) -> Observed {
    let blocked = if has_annotation(ms.metadata.annotations.as_ref(), DISABLE_MACHINE_CREATE_ANNOTATION) {
        Some(format!("Machine creation is disabled by the {DISABLE_MACHINE_CREATE_ANNOTATION} annotation"))
    } else {
        creation_blocked(ms)
    };
    scaling_up_of(ms.spec.replicas, current, blocked)
}

/// `ScalingDown`: True while more Machines exist (deleting ones included) than wanted.
pub fn scaling_down(ms: &MachineSet, current: usize) -> Observed {
    scaling_down_of(ms.spec.replicas, current)
}

/// `Remediating`: True while Machines of the set are being remediated, naming them with
/// their `OwnerRemediated` message. An old set of a rollout (`remediates` false) leaves
/// its unhealthy Machines to the rollout.
pub fn remediating(machines: &[Arc<Machine>], remediates: bool) -> Observed {
    let under_way: Vec<(&str, &[Condition])> =
        machines.iter().filter(|m| remediation::is_remediating(m)).map(|m| named(m)).collect();
    if under_way.is_empty() {
        return Observed::false_(names::REMEDIATING, names::NOT_REMEDIATING_REASON, "");
    }
    if !remediates {
        let message = format!(
            "{} to remediate, left to the rollout that removes this MachineSet",
            plural(under_way.len(), "Machine", "Machines")
        );
        return Observed::false_(names::REMEDIATING, names::NOT_REMEDIATING_REASON, message);
    }
    let reasons = Reasons::REMEDIATING;
    let listed = v1beta2::aggregate(
        names::REMEDIATING,
        names::OWNER_REMEDIATED,
        Polarity::Positive,
        MACHINE,
        under_way,
        reasons,
        names::REMEDIATING_REASON,
    );
    Observed::new(names::REMEDIATING, Status::True, names::REMEDIATING_REASON, listed.message)
}

/// `Deleting` of a set being deleted, with `left` Machines still there.
pub fn deleting(left: usize) -> Observed {
    let message = if left == 0 { String::new() } else { format!("Deleting {}", plural(left, "Machine", "Machines")) };
    Observed::new(names::DELETING, Status::True, names::DELETING_REASON, message)
}

fn named(m: &Machine) -> (&str, &[Condition]) {
    (m.metadata.name.as_deref().unwrap_or_default(), m.v1beta2_conditions())
}

/// Sets the v1beta2 counters and every condition but `Paused` (the reconcile's) of a set
/// that is not being deleted. `machines` carry the `UpToDate` this reconcile gave them;
/// `remediates`: the set replaces its unhealthy Machines (see [`remediating`]).
pub fn set(ms: &mut MachineSet, machines: &[Arc<Machine>], c: Counters, remediates: bool, now: &Time) {
    let v = ms.status.get_or_insert_with(Default::default);
    v.ready_replicas = Some(c.ready);
    v.available_replicas = Some(c.available);
    v.up_to_date_replicas = Some(c.up_to_date);
    let ready = v1beta2::aggregate(
        names::MACHINES_READY,
        names::READY,
        Polarity::Positive,
        MACHINE,
        machines.iter().map(|m| named(m)),
        Reasons::READY,
        names::NO_REPLICAS_REASON,
    );
    let up_to_date = v1beta2::aggregate(
        names::MACHINES_UP_TO_DATE,
        names::UP_TO_DATE,
        Polarity::Positive,
        MACHINE,
        machines.iter().map(|m| named(m)),
        Reasons::UP_TO_DATE,
        names::NO_REPLICAS_REASON,
    );
    let observed = [
        ready,
        up_to_date,
        scaling_up(ms, machines.len()),
        scaling_down(ms, machines.len()),
        remediating(machines, remediates),
        Observed::false_(names::DELETING, names::NOT_DELETING_REASON, ""),
    ];
    for o in observed {
        ms.set_v1beta2(o, now);
    }
}

/// The Machine with `up_to_date` set, or `None` when it already carries exactly that, or
/// when the Machine controller has not reported on it yet: that controller sets `UpToDate`
/// in each of its own status writes (as upstream's does), so the set only corrects it when
/// it changes between them (a new template, a passed `rolloutAfter`).
pub fn with_up_to_date(m: &Machine, up_to_date: &Observed, now: &Time) -> Option<Machine> {
    m.v1beta2_condition(names::READY)?;
    let have = m.v1beta2_condition(names::UP_TO_DATE);
    let same = have.is_some_and(|c| {
        c.status == up_to_date.status.as_str()
            && c.reason == up_to_date.reason
            && c.message == up_to_date.message
            && c.observed_generation == m.metadata.generation
    });
    if same {
        return None;
    }
    let mut want = m.clone();
    want.set_v1beta2(up_to_date.clone(), now);
    Some(want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::condition_types::{MACHINES_CREATED, PREFLIGHT_CHECK_FAILED};
    use drydock_api::capi::condition_types::{OWNER_REMEDIATED, WAITING_FOR_REMEDIATION};
    use drydock_api::capi::conditions::HasConditions;
    use drydock_api::capi::conditions::Severity;
    use drydock_api::capi::core::v1beta2::{
        MachineDeployment, MachineDeploymentRolloutSpec, MachineDeploymentSpec, MachineSetSpec,
    };

    use crate::framework::machine_template as template;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).expect("valid timestamp")
    }

    fn t(secs: i64) -> Time {
        Time(at(secs))
    }

    fn machine(name: &str, ready_since: Option<i64>, up_to_date: Option<bool>) -> Machine {
        let mut m = Machine::new(name, Default::default());
        if let Some(s) = ready_since {
            m.set_v1beta2(Observed::true_(names::READY, names::READY_REASON), &t(s));
        } else {
            m.set_v1beta2(Observed::false_(names::READY, names::NOT_READY_REASON, "* NodeHealthy: booting"), &t(0));
        }
        if let Some(u) = up_to_date {
            let o = Observed::when(names::UP_TO_DATE, u, names::UP_TO_DATE_REASON, names::NOT_UP_TO_DATE_REASON, "");
            m.set_v1beta2(o, &t(0));
        }
        m
    }

    fn ms(replicas: Option<i32>, min_ready: i32) -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec { replicas, ..Default::default() });
        ms.spec.template.spec.min_ready_seconds = Some(min_ready);
        ms
    }

    fn get<'a>(ms: &'a MachineSet, type_: &str) -> &'a Condition {
        ms.v1beta2_condition(type_).expect("condition set")
    }

    #[test]
    fn counts_ready_available_and_up_to_date_without_deleting_machines() {
        let mut deleting = machine("e", Some(0), Some(true));
        deleting.metadata.deletion_timestamp = Some(t(150));
        let machines: Vec<Arc<Machine>> = vec![
            machine("a", Some(100), Some(true)),
            machine("b", Some(190), Some(false)),
            machine("c", None, Some(true)),
            machine("d", Some(0), None),
            deleting,
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let (c, next) = count(&ms(Some(3), 30), &machines, at(200));
        assert_eq!(c, Counters { ready: 3, available: 2, up_to_date: 2 });
        assert_eq!(next, Some(Duration::from_secs(20)));
        let (c, next) = count(&ms(Some(3), 0), &machines, at(200));
        assert_eq!((c.available, next), (3, None));
    }

    #[test]
    fn scaling_conditions_follow_replicas() {
        let up = scaling_up(&ms(Some(3), 0), 1);
        assert_eq!((up.status, up.reason.as_str()), (Status::True, names::SCALING_UP_REASON));
        assert_eq!(up.message, "Scaling up from 1 to 3 replicas");
        let down = scaling_down(&ms(Some(3), 0), 1);
        assert_eq!((down.status, down.reason.as_str()), (Status::False, names::NOT_SCALING_DOWN_REASON));
        let down = scaling_down(&ms(Some(1), 0), 3);
        assert_eq!(down.message, "Scaling down from 3 to 1 replicas");
        assert_eq!(scaling_up(&ms(Some(1), 0), 3).reason, names::NOT_SCALING_UP_REASON);
        let unset = scaling_up(&ms(None, 0), 0);
        assert_eq!((unset.status, unset.reason.as_str()), (Status::Unknown, names::WAITING_FOR_REPLICAS_SET_REASON));

        let mut held = ms(Some(2), 0);
        held.mark_false(MACHINES_CREATED, PREFLIGHT_CHECK_FAILED, Severity::Error, "control plane is upgrading", t(1));
        assert_eq!(
            scaling_up(&held, 0).message,
            "Scaling up from 0 to 2 replicas is blocked because:\n* control plane is upgrading"
        );
    }

    #[test]
    fn conditions_aggregate_the_machines_and_recompute_identically() {
        let machines: Vec<Arc<Machine>> = vec![machine("a", Some(1), Some(true)), machine("b", None, Some(false))]
            .into_iter()
            .map(Arc::new)
            .collect();
        let mut s = ms(Some(2), 0);
        set(&mut s, &machines, Counters { ready: 1, available: 1, up_to_date: 1 }, true, &t(10));
        let ready = get(&s, names::MACHINES_READY);
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("False", names::NOT_READY_REASON));
        assert_eq!(ready.message, "* Machine b: * NodeHealthy: booting");
        let up = get(&s, names::MACHINES_UP_TO_DATE);
        assert_eq!((up.status.as_str(), up.reason.as_str()), ("False", names::NOT_UP_TO_DATE_REASON));
        assert_eq!(get(&s, names::REMEDIATING).reason, names::NOT_REMEDIATING_REASON);
        assert_eq!(get(&s, names::DELETING).reason, names::NOT_DELETING_REASON);
        let v = s.status.as_ref().expect("status");
        assert_eq!((v.ready_replicas, v.available_replicas, v.up_to_date_replicas), (Some(1), Some(1), Some(1)));
        let before = s.clone();
        set(&mut s, &machines, Counters { ready: 1, available: 1, up_to_date: 1 }, true, &t(20));
        assert_eq!(s, before, "an unchanged state writes nothing");

        let mut empty = ms(Some(0), 0);
        set(&mut empty, &[], Counters::default(), true, &t(10));
        assert_eq!(get(&empty, names::MACHINES_READY).reason, names::NO_REPLICAS_REASON);
        assert_eq!(get(&empty, names::MACHINES_UP_TO_DATE).reason, names::NO_REPLICAS_REASON);
    }

    #[test]
    fn remediating_names_the_machines_in_remediation() {
        let mut sick = machine("sick", None, Some(true));
        sick.mark_false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, "", t(1));
        let o =
            Observed::false_(names::OWNER_REMEDIATED, names::WAITING_FOR_REMEDIATION_REASON, "Waiting for remediation");
        sick.set_v1beta2(o, &t(1));
        let machines = vec![Arc::new(sick), Arc::new(machine("fine", Some(1), Some(true)))];
        let r = remediating(&machines, true);
        assert_eq!((r.status, r.reason.as_str()), (Status::True, names::REMEDIATING_REASON));
        assert_eq!(r.message, "* Machine sick: Waiting for remediation");
        assert_eq!(remediating(&machines[1..], true).status, Status::False);
        let old = remediating(&machines, false);
        assert_eq!((old.status, old.reason.as_str()), (Status::False, names::NOT_REMEDIATING_REASON));
        assert_eq!(old.message, "1 Machine to remediate, left to the rollout that removes this MachineSet");
    }

    #[test]
    fn deleting_counts_the_machines_left() {
        assert_eq!(deleting(3).message, "Deleting 3 Machines");
        assert_eq!(deleting(1).message, "Deleting 1 Machine");
        assert_eq!(deleting(0).message, "");
    }

    #[test]
    fn machines_are_up_to_date_with_the_deployment_template() {
        let mut md = MachineDeployment::new("md", MachineDeploymentSpec::default());
        md.spec.template.spec.version = Some("v1.31.0".into());
        let mut s = ms(Some(1), 0);
        s.metadata.creation_timestamp = Some(t(10));
        s.spec.template.spec.version = Some("v1.31.0".into());
        s.spec.template.metadata.labels = Some([("in-place".to_string(), "yes".to_string())].into());
        let ok = template::machine_up_to_date(&s, &md, at(100));
        assert_eq!((ok.status, ok.reason.as_str()), (Status::True, names::UP_TO_DATE_REASON));

        s.spec.template.spec.version = Some("v1.30.2".into());
        let old = template::machine_up_to_date(&s, &md, at(100));
        assert_eq!((old.status, old.reason.as_str()), (Status::False, names::NOT_UP_TO_DATE_REASON));
        assert_eq!(old.message, "* Version v1.30.2 (v1.31.0 wanted)");

        s.spec.template.spec.version = Some("v1.31.0".into());
        md.spec.rollout = Some(MachineDeploymentRolloutSpec { after: Some(t(50)), strategy: None });
        assert_eq!(template::machine_up_to_date(&s, &md, at(40)).status, Status::True, "not yet passed");
        let expired = template::machine_up_to_date(&s, &md, at(60));
        assert_eq!(expired.message, "* MachineDeployment spec.rolloutAfter passed");

        // Left to the Machine controller's first status write, then written only on change.
        let m = Machine::new("m", Default::default());
        assert!(with_up_to_date(&m, &expired, &t(60)).is_none(), "not reported on yet");
        let m = machine("m", None, None);
        let written = with_up_to_date(&m, &expired, &t(60)).expect("changed");
        assert!(with_up_to_date(&written, &expired, &t(70)).is_none());
        assert!(with_up_to_date(&written, &ok, &t(70)).is_some());
    }
}
