//! The MachineDeployment's v1beta2 status, computed from its MachineSets (as planned this
//! reconcile): counters summed from theirs, `Available` from the available replicas and
//! `maxUnavailable`, `RollingOut` from which sets run an outdated template (the comparison
//! that gives their Machines `UpToDate`), and the Machine aggregates, scaling and
//! remediation from the sets' own v1beta2 conditions, which their controller computes from
//! the Machines. A set's status changes wake the deployment, so nothing here reads Machines.

use drydock_api::capi::core::MachineDeploymentStrategyType;
use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet};
use drydock_api::capi::v1beta2_conditions::{
    self as v1beta2, Condition, HasV1Beta2Conditions, Observed, Polarity, Reasons, Status, names,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::plan::Plan;
use super::{rollout, template};
use crate::framework::scaling::{creation_blocked, plural, scaling_down_of, scaling_up_of};

const MACHINE_SET: (&str, &str) = ("MachineSet", "MachineSets");

/// The v1beta2 counters summed over the sets; `None` while no set reports one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub ready: Option<i32>,
    pub available: Option<i32>,
    pub up_to_date: Option<i32>,
}

fn add(sum: Option<i32>, v: Option<i32>) -> Option<i32> {
    match (sum, v) {
        (None, v) => v,
        (s, None) => s,
        (Some(s), Some(v)) => Some(s.saturating_add(v)),
    }
}

pub fn count<'a>(sets: impl IntoIterator<Item = &'a MachineSet>) -> Counters {
    let mut c = Counters::default();
    for v in sets.into_iter().filter_map(|ms| ms.status.as_ref()) {
        c.ready = add(c.ready, v.ready_replicas);
        c.available = add(c.available, v.available_replicas);
        c.up_to_date = add(c.up_to_date, v.up_to_date_replicas);
    }
    c
}

/// Machines of the set (deleting ones included), as its status last reported.
fn replicas(ms: &MachineSet) -> i32 {
    ms.status.as_ref().and_then(|s| s.replicas).unwrap_or(0).max(0)
}

/// `Available`: at least `spec.replicas - maxUnavailable` Machines are available
/// (`max_unavailable` is 0 for strategies other than a rolling update).
pub fn available(md: &MachineDeployment, available: Option<i32>, max_unavailable: i32) -> Observed {
    let Some(desired) = md.spec.replicas else {
        return Observed::unknown(
            names::AVAILABLE,
            names::WAITING_FOR_REPLICAS_SET_REASON,
            "Waiting for spec.replicas set",
        );
    };
    let Some(available) = available else {
        return Observed::unknown(
            names::AVAILABLE,
            names::WAITING_FOR_AVAILABLE_REPLICAS_SET_REASON,
            "Waiting for status.availableReplicas set",
        );
    };
    let required = (desired - max_unavailable).max(0);
    if available >= required {
        return Observed::true_(names::AVAILABLE, names::AVAILABLE_REASON);
    }
    let why = if rollout::strategy_type(md) == MachineDeploymentStrategyType::RollingUpdate {
        format!("spec.rollout.strategy.rollingUpdate.maxUnavailable is {max_unavailable}, spec.replicas is {desired}")
    } else {
        format!("spec.replicas is {desired}")
    };
    let noun = if available == 1 { "replica" } else { "replicas" };
    let message = format!("{available} available {noun}, at least {required} required ({why})");
    Observed::false_(names::AVAILABLE, names::NOT_AVAILABLE_REASON, message)
}

/// `RollingOut`: True while sets running an outdated template still have Machines, saying
/// how many and what changes.
pub fn rolling_out<'a>(
    md: &MachineDeployment,
    sets: impl IntoIterator<Item = &'a MachineSet>,
    now: Timestamp,
) -> Observed {
    let mut outdated = 0;
    let mut changes: Vec<String> = Vec::new();
    for ms in sets.into_iter().filter(|ms| replicas(ms) > 0) {
        let why = template::outdated(ms, md, now);
        if why.is_empty() {
            continue;
        }
        outdated += replicas(ms);
        for line in why {
            if !changes.contains(&line) {
                changes.push(line);
            }
        }
    }
    if outdated == 0 {
        return Observed::false_(names::ROLLING_OUT, names::NOT_ROLLING_OUT_REASON, "");
    }
    let noun = if outdated == 1 { "replica" } else { "replicas" };
    let mut message = format!("Rolling out {outdated} not up-to-date {noun}");
    for line in &changes {
        message.push_str("\n* ");
        message.push_str(line);
    }
    Observed::new(names::ROLLING_OUT, Status::True, names::ROLLING_OUT_REASON, message)
}

/// `type_` over the `source` aggregate of the sets that have Machines: the one set's own
/// condition when only one has (it says which Machines), else an aggregate naming sets.
fn over_sets<'a>(
    type_: &str,
    source: &str,
    sets: impl IntoIterator<Item = &'a MachineSet>,
    reasons: Reasons,
) -> Observed {
    let with_machines: Vec<&MachineSet> = sets.into_iter().filter(|ms| replicas(ms) > 0).collect();
    if let [only] = with_machines.as_slice()
        && let Some(c) = only.v1beta2_condition(source)
    {
        return Observed::new(type_, Status::parse(&c.status), &c.reason, c.message.clone());
    }
    let objects =
        with_machines.iter().map(|ms| (ms.metadata.name.as_deref().unwrap_or_default(), ms.v1beta2_conditions()));
    v1beta2::aggregate(type_, source, Polarity::Positive, MACHINE_SET, objects, reasons, names::NO_REPLICAS_REASON)
}

/// `Remediating`: True while any set remediates, with what they say.
pub fn remediating<'a>(sets: impl IntoIterator<Item = &'a MachineSet>) -> Observed {
    let under_way: Vec<(&str, &[Condition])> = sets
        .into_iter()
        .filter(|ms| ms.is_v1beta2_true(names::REMEDIATING))
        .map(|ms| (ms.metadata.name.as_deref().unwrap_or_default(), ms.v1beta2_conditions()))
        .collect();
    match under_way.as_slice() {
        [] => Observed::false_(names::REMEDIATING, names::NOT_REMEDIATING_REASON, ""),
        [(_, conditions)] => {
            let message = v1beta2::get(conditions, names::REMEDIATING).map(|c| c.message.clone()).unwrap_or_default();
            Observed::new(names::REMEDIATING, Status::True, names::REMEDIATING_REASON, message)
        }
        _ => {
            let reasons = Reasons::REMEDIATING;
            let listed = v1beta2::aggregate(
                names::REMEDIATING,
                names::REMEDIATING,
                Polarity::Negative,
                MACHINE_SET,
                under_way,
                reasons,
                names::NOT_REMEDIATING_REASON,
            );
            Observed::new(names::REMEDIATING, Status::True, names::REMEDIATING_REASON, listed.message)
        }
    }
}

/// `Deleting` of a deployment being deleted, with `left` MachineSets still there.
pub fn deleting(left: usize) -> Observed {
    let message =
        if left == 0 { String::new() } else { format!("Deleting {}", plural(left, "MachineSet", "MachineSets")) };
    Observed::new(names::DELETING, Status::True, names::DELETING_REASON, message)
}

/// Sets the v1beta2 counters and every condition but `Paused` (the reconcile's) of a
/// deployment that is not being deleted, after its v1beta1 status (whose MachinesCreated
/// says what holds creation).
pub fn set(md: &mut MachineDeployment, plan: &Plan, max_unavailable: i32, now: Timestamp, at: &Time) {
    let c = count(plan.wanted());
    let v = md.status.get_or_insert_with(Default::default);
    v.ready_replicas = c.ready;
    v.available_replicas = c.available;
    v.up_to_date_replicas = c.up_to_date;
    let current: i32 = plan.wanted().map(replicas).sum();
    let current = current.max(0) as usize;
    let observed = [
        available(md, c.available, max_unavailable),
        over_sets(names::MACHINES_READY, names::MACHINES_READY, plan.wanted(), Reasons::READY),
        over_sets(names::MACHINES_UP_TO_DATE, names::MACHINES_UP_TO_DATE, plan.wanted(), Reasons::UP_TO_DATE),
        rolling_out(md, plan.wanted(), now),
        scaling_up_of(md.spec.replicas, current, creation_blocked(md)),
        scaling_down_of(md.spec.replicas, current),
        remediating(plan.wanted()),
        Observed::false_(names::DELETING, names::NOT_DELETING_REASON, ""),
    ];
    for o in observed {
        md.set_v1beta2(o, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::v1beta2::{MachineDeploymentSpec, MachineSetSpec, MachineSetStatus};

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).expect("ts")
    }

    fn md(replicas: Option<i32>) -> MachineDeployment {
        let mut md = MachineDeployment::new("md", MachineDeploymentSpec { replicas, ..Default::default() });
        md.spec.template.spec.version = Some("v2".into());
        md
    }

    fn ms(name: &str, version: &str, replicas: i32, available: i32) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(name, MachineSetSpec { replicas: Some(replicas), ..Default::default() });
        ms.metadata.creation_timestamp = Some(Time(at(1)));
        ms.spec.template.spec.version = Some(version.into());
        ms.status = Some(MachineSetStatus {
            replicas: Some(replicas),
            ready_replicas: Some(available),
            available_replicas: Some(available),
            up_to_date_replicas: Some(available),
            ..Default::default()
        });
        Arc::new(ms)
    }

    #[test]
    fn available_needs_replicas_minus_max_unavailable() {
        let d = md(Some(3));
        let a = available(&d, Some(2), 0);
        assert_eq!((a.status, a.reason.as_str()), (Status::False, names::NOT_AVAILABLE_REASON));
        assert_eq!(
            a.message,
            "2 available replicas, at least 3 required \
             (spec.rollout.strategy.rollingUpdate.maxUnavailable is 0, spec.replicas is 3)"
        );
        assert_eq!(available(&d, Some(2), 1).status, Status::True);
        assert_eq!(available(&d, Some(3), 0).reason, names::AVAILABLE_REASON);
        let waiting = available(&d, None, 0);
        assert_eq!(
            (waiting.status, waiting.reason.as_str()),
            (Status::Unknown, names::WAITING_FOR_AVAILABLE_REPLICAS_SET_REASON)
        );
        assert_eq!(available(&md(None), Some(3), 0).reason, names::WAITING_FOR_REPLICAS_SET_REASON);

        let mut on_delete = md(Some(1));
        crate::machinedeployment::rollout::set_on_delete(&mut on_delete);
        assert_eq!(
            available(&on_delete, Some(0), 0).message,
            "0 available replicas, at least 1 required (spec.replicas is 1)"
        );
    }

    #[test]
    fn rolling_out_while_outdated_sets_have_machines() {
        let d = md(Some(3));
        let sets = [ms("new", "v2", 2, 2), ms("old", "v1", 1, 1), ms("older", "v0", 0, 0)];
        let r = rolling_out(&d, sets.iter().map(|s| &**s), at(100));
        assert_eq!((r.status, r.reason.as_str()), (Status::True, names::ROLLING_OUT_REASON));
        assert_eq!(r.message, "Rolling out 1 not up-to-date replica\n* Version v1 (v2 wanted)");
        let done = rolling_out(&d, sets[..1].iter().chain(&sets[2..]).map(|s| &**s), at(100));
        assert_eq!((done.status, done.reason.as_str()), (Status::False, names::NOT_ROLLING_OUT_REASON));
    }

    #[test]
    fn conditions_come_from_the_sets_and_recompute_identically() {
        let mut new = (*ms("new", "v2", 2, 1)).clone();
        let not_ready = Observed::false_(names::MACHINES_READY, names::NOT_READY_REASON, "* Machine a: booting");
        new.set_v1beta2(not_ready, &Time(at(1)));
        let remediating = Observed::new(names::REMEDIATING, Status::True, names::REMEDIATING_REASON, "* Machine a: x");
        new.set_v1beta2(remediating, &Time(at(1)));
        let mut d = md(Some(3));
        let plan = Plan::new(&d, vec![Arc::new(new), ms("old", "v1", 2, 2)], at(100));
        set(&mut d, &plan, 1, at(100), &Time(at(100)));
        let get = |d: &MachineDeployment, t: &str| d.v1beta2_condition(t).cloned().expect("condition");
        let v = d.status.clone().expect("status");
        assert_eq!((v.ready_replicas, v.available_replicas, v.up_to_date_replicas), (Some(3), Some(3), Some(3)));
        assert_eq!(get(&d, names::AVAILABLE).status, "True");
        let ready = get(&d, names::MACHINES_READY);
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("False", names::NOT_READY_REASON));
        assert_eq!(
            ready.message,
            "* MachineSet new: * Machine a: booting\n* MachineSet old: Condition MachinesReady not yet reported"
        );
        assert_eq!(get(&d, names::REMEDIATING).message, "* Machine a: x");
        let down = get(&d, names::SCALING_DOWN);
        assert_eq!((down.status.as_str(), down.message.as_str()), ("True", "Scaling down from 4 to 3 replicas"));
        assert_eq!(get(&d, names::SCALING_UP).reason, names::NOT_SCALING_UP_REASON);
        assert_eq!(get(&d, names::ROLLING_OUT).status, "True");
        assert_eq!(get(&d, names::DELETING).reason, names::NOT_DELETING_REASON);
        let before = d.clone();
        set(&mut d, &plan, 1, at(200), &Time(at(200)));
        assert_eq!(d, before, "an unchanged state writes nothing");

        let mut empty = md(Some(0));
        let none = Plan::new(&empty, vec![], at(1));
        set(&mut empty, &none, 0, at(1), &Time(at(1)));
        assert_eq!(get(&empty, names::MACHINES_READY).reason, names::NO_REPLICAS_REASON);
        assert_eq!(get(&empty, names::AVAILABLE).reason, names::WAITING_FOR_AVAILABLE_REPLICAS_SET_REASON);
    }

    #[test]
    fn one_set_with_machines_is_mirrored() {
        let mut only = (*ms("only", "v2", 1, 1)).clone();
        let up = Observed::false_(names::MACHINES_UP_TO_DATE, names::NOT_UP_TO_DATE_REASON, "* Machine a: * Version");
        only.set_v1beta2(up, &Time(at(1)));
        let sets = [only, (*ms("empty", "v2", 0, 0)).clone()];
        let o = over_sets(names::MACHINES_UP_TO_DATE, names::MACHINES_UP_TO_DATE, &sets, Reasons::UP_TO_DATE);
        assert_eq!(
            (o.status, o.reason.as_str(), o.message.as_str()),
            (Status::False, names::NOT_UP_TO_DATE_REASON, "* Machine a: * Version")
        );
    }
}
