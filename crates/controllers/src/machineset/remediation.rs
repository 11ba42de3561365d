//! Remediation by the MachineSet: Machines a MachineHealthCheck marked for their owner
//! (`OwnerRemediated` False) are deleted, and the set's scale up replaces them once they
//! are gone.
//!
//! Only the set running its MachineDeployment's current revision remediates; an old set's
//! unhealthy Machines go first when the rollout scales it down (the delete policy ranks
//! them first). `spec.strategy.remediation.maxInFlight` of the deployment bounds how many
//! Machines are being remediated at once. The preflight checks must pass: while they fail,
//! the unhealthy Machines stay and their `OwnerRemediated` message says why.
//!
//! A Machine is marked `OwnerRemediated` True before it is deleted, so a reconcile that
//! stops between the two finishes the deletion next time without asking again.
//!
//! The v1beta2 `OwnerRemediated` moves with the v1beta1 one, in the same write: False
//! `RemediationDeferred` while the preflight checks hold it, False `MachineDeleting` once
//! approved (v1beta2 has no True for it), removed with it.

use std::sync::Arc;

use drydock_api::capi::condition_types::{HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED, WAITING_FOR_REMEDIATION};
use drydock_api::capi::conditions::{Condition, HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineSet};
use drydock_api::capi::intstr;
use drydock_api::capi::keys::REVISION_ANNOTATION;
use drydock_api::capi::v1beta2_conditions::{self as v1beta2, HasV1Beta2Conditions, Observed, names};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;

use super::State;
use super::preflight::{self, Verdict};
use crate::framework::{Result, write};

/// What remediation did, for the caller's requeue.
#[derive(Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    #[default]
    Nothing,
    /// Machines were deleted.
    Deleted,
    /// Unhealthy Machines wait for the preflight checks.
    Held,
}

/// How many Machines may be in remediation at once; `None` for no limit.
fn max_in_flight(ms: &MachineSet, st: &State) -> std::result::Result<Option<i32>, String> {
    let Some(md) = super::owning_deployment(st, ms) else {
        return Ok(None);
    };
    let Some(v) = md.spec.remediation.as_ref().and_then(|r| r.max_in_flight.as_ref()) else {
        return Ok(None);
    };
    intstr::scaled_value(v, md.spec.replicas.unwrap_or(1), true)
        .map(Some)
        .map_err(|e| format!("spec.remediation.maxInFlight: {e}"))
}

/// False when the set belongs to a MachineDeployment whose revision is not the set's (an
/// old set being rolled away does not replace Machines).
fn is_current_revision(st: &State, ms: &MachineSet) -> bool {
    let Some(md) = super::owning_deployment(st, ms) else {
        return true;
    };
    let revision =
        |a: Option<&std::collections::BTreeMap<String, String>>| a.and_then(|a| a.get(REVISION_ANNOTATION)).cloned();
    revision(md.metadata.annotations.as_ref()) == revision(ms.metadata.annotations.as_ref())
}

/// The Machines to act on, newest first: `approved` were already marked for deletion,
/// `unhealthy` wait for approval. `stale` lost their health problem since being marked.
#[derive(Debug, Default, PartialEq)]
pub struct Candidates {
    pub approved: Vec<Arc<Machine>>,
    pub unhealthy: Vec<Arc<Machine>>,
    pub stale: Vec<Arc<Machine>>,
    /// Deleting Machines whose remediation is under way.
    pub in_flight: usize,
}

/// Sorts the set's Machines (`deleting` says whether one is going, cached or pending).
pub fn candidates(machines: &[Arc<Machine>], deleting: impl Fn(&Machine) -> bool) -> Candidates {
    let mut c = Candidates::default();
    for m in machines {
        let Some(owner) = m.get_condition(OWNER_REMEDIATED) else {
            continue;
        };
        if deleting(m) {
            if owner.is_true() {
                c.in_flight += 1;
            }
            continue;
        }
        if owner.is_true() {
            c.approved.push(m.clone());
        } else if owner.is_false() {
            if m.is_condition_true(HEALTH_CHECK_SUCCEEDED) {
                c.stale.push(m.clone());
            } else {
                c.unhealthy.push(m.clone());
            }
        }
    }
    let newest_first = |a: &Arc<Machine>, b: &Arc<Machine>| {
        let ts = |m: &Machine| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
        ts(b).cmp(&ts(a)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
    };
    c.approved.sort_by(newest_first);
    c.unhealthy.sort_by(newest_first);
    c
}

/// True while the Machine is being remediated by its owner: handed over and still
/// unhealthy, or approved (the same Machines [`candidates`] acts on or counts in flight).
pub fn is_remediating(m: &Machine) -> bool {
    let Some(owner) = m.get_condition(OWNER_REMEDIATED) else {
        return false;
    };
    owner.is_true()
        || (owner.is_false() && m.metadata.deletion_timestamp.is_none() && !m.is_condition_true(HEALTH_CHECK_SUCCEEDED))
}

/// Writes the Machine's conditions, conditional on the version read (a concurrent writer
/// of the same list makes this conflict and the reconcile retry, instead of one dropping
/// the other's condition).
async fn write_conditions(api: &Api<Machine>, before: &Machine, after: &Machine) -> Result<()> {
    if before.conditions() == after.conditions() && before.v1beta2_conditions() == after.v1beta2_conditions() {
        return Ok(());
    }
    match super::WRITER.write_status(api, before, after).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_gone() => Ok(()),
        Err(e) => Err(e),
    }
}

/// The Machine with `OwnerRemediated` set in both condition lists (`None`: removed).
fn with_condition(m: &Machine, c: Option<(Condition, Observed)>, now: &Time) -> Machine {
    let mut want = m.clone();
    match c {
        Some((v1, v2)) => {
            want.set_condition(v1);
            want.set_v1beta2(v2, now);
        }
        None => {
            want.delete_condition(OWNER_REMEDIATED);
            if want.v1beta2_condition(names::OWNER_REMEDIATED).is_some() {
                v1beta2::delete(want.v1beta2_conditions_mut(), names::OWNER_REMEDIATED);
            }
        }
    }
    want
}

/// `OwnerRemediated` of a Machine held by the preflight checks.
fn deferred(message: &str, now: &Time) -> (Condition, Observed) {
    let v1 = Condition::false_(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, message, now.clone());
    let v2 = Observed::false_(names::OWNER_REMEDIATED, names::REMEDIATION_DEFERRED_REASON, message);
    (v1, v2)
}

/// `OwnerRemediated` of a Machine approved for deletion.
fn approval(now: &Time) -> (Condition, Observed) {
    let v2 = Observed::false_(names::OWNER_REMEDIATED, names::MACHINE_DELETING_REASON, "Machine is deleting");
    (Condition::true_(OWNER_REMEDIATED, now.clone()), v2)
}

/// Deletes the set's unhealthy Machines when allowed; see the module documentation.
pub async fn reconcile(
    st: &State,
    ms: &MachineSet,
    cluster: &Cluster,
    machines: &[Arc<Machine>],
    deleting: impl Fn(&Machine) -> bool,
) -> Result<Outcome> {
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let cond_now = || st.ctx.clock().condition_time();
    let api: Api<Machine> = st.ctx.api(ns);
    let mut c = candidates(machines, deleting);
    for m in &c.stale {
        write_conditions(&api, m, &with_condition(m, None, &cond_now())).await?;
    }
    if (c.approved.is_empty() && c.unhealthy.is_empty()) || !is_current_revision(st, ms) {
        return Ok(Outcome::Nothing);
    }
    let limit = max_in_flight(ms, st).map_err(crate::framework::Error::InvalidSpec)?;
    let mut room = limit.map_or(usize::MAX, |l| (l.max(0) as usize).saturating_sub(c.in_flight));
    // Already approved Machines are in flight too: delete them first.
    let approved = std::mem::take(&mut c.approved);
    let mut deleted = false;
    for m in &approved {
        delete(st, ms, &api, m).await?;
        deleted = true;
        room = room.saturating_sub(1);
    }
    c.unhealthy.truncate(room);
    if c.unhealthy.is_empty() {
        return Ok(if deleted { Outcome::Deleted } else { Outcome::Nothing });
    }
    let verdict = preflight::check(st, cluster, ms, preflight::ACTION_REMEDIATION).await;
    if let Some(message) = verdict.message() {
        for m in &c.unhealthy {
            let now = cond_now();
            write_conditions(&api, m, &with_condition(m, Some(deferred(message, &now)), &now)).await?;
        }
        return Ok(Outcome::Held);
    }
    debug_assert_eq!(verdict, Verdict::Pass);
    for m in &c.unhealthy {
        let now = cond_now();
        write_conditions(&api, m, &with_condition(m, Some(approval(&now)), &now)).await?;
        delete(st, ms, &api, m).await?;
    }
    Ok(Outcome::Deleted)
}

async fn delete(st: &State, ms: &MachineSet, api: &Api<Machine>, m: &Machine) -> Result<()> {
    let name = m.metadata.name.as_deref().unwrap_or_default();
    match write::delete_if_present(api, super::NAME, name).await {
        Ok(_) => {
            st.expectations.expect_delete(&super::key(ms), name);
            st.ctx
                .events
                .normal(ms, "SuccessfulDelete", format!("Deleted unhealthy machine {name:?} for remediation"))
                .await;
            Ok(())
        }
        Err(e) => {
            st.ctx
                .events
                .warning(ms, "FailedDelete", format!("Failed to delete unhealthy machine {name:?}: {e}"))
                .await;
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn machine(name: &str, created: i64, owner: Option<bool>, healthy: Option<bool>) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created).expect("ts")));
        let now = drydock_api::capi::conditions::time_at(jiff::Timestamp::now());
        match owner {
            Some(true) => m.mark_true(OWNER_REMEDIATED, now.clone()),
            Some(false) => m.mark_false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, "", now.clone()),
            None => {}
        }
        match healthy {
            Some(true) => m.mark_true(HEALTH_CHECK_SUCCEEDED, now),
            Some(false) => m.mark_false(HEALTH_CHECK_SUCCEEDED, "UnhealthyNode", Severity::Warning, "", now),
            None => {}
        }
        Arc::new(m)
    }

    fn names(v: &[Arc<Machine>]) -> Vec<&str> {
        v.iter().filter_map(|m| m.metadata.name.as_deref()).collect()
    }

    #[test]
    fn sorts_machines_by_remediation_state() {
        let machines = vec![
            machine("healthy", 1, None, Some(true)),
            machine("old-unhealthy", 1, Some(false), Some(false)),
            machine("new-unhealthy", 5, Some(false), None),
            machine("recovered", 2, Some(false), Some(true)),
            machine("approved", 3, Some(true), Some(false)),
            machine("going", 3, Some(true), Some(false)),
            machine("going-unmarked", 3, Some(false), Some(false)),
        ];
        let c = candidates(&machines, |m| m.metadata.name.as_deref().is_some_and(|n| n.starts_with("going")));
        assert_eq!(names(&c.unhealthy), ["new-unhealthy", "old-unhealthy"]);
        assert_eq!(names(&c.approved), ["approved"]);
        assert_eq!(names(&c.stale), ["recovered"]);
        assert_eq!(c.in_flight, 1);
    }

    #[test]
    fn remediating_machines_are_the_ones_acted_on() {
        let going = |m: Arc<Machine>| {
            let mut m = (*m).clone();
            m.metadata.deletion_timestamp = m.metadata.creation_timestamp.clone();
            m
        };
        assert!(is_remediating(&machine("unhealthy", 1, Some(false), Some(false))));
        assert!(is_remediating(&machine("approved", 1, Some(true), None)));
        assert!(is_remediating(&going(machine("in-flight", 1, Some(true), None))));
        assert!(!is_remediating(&machine("recovered", 1, Some(false), Some(true))));
        assert!(!is_remediating(&going(machine("going-unmarked", 1, Some(false), None))));
        assert!(!is_remediating(&machine("healthy", 1, None, Some(true))));
    }

    #[test]
    fn v1beta2_owner_remediated_moves_with_the_v1beta1_one() {
        let t = Time(Timestamp::from_second(10).expect("ts"));
        let m = machine("m", 1, Some(false), Some(false));
        let v2 = |m: &Machine| {
            m.v1beta2_condition(names::OWNER_REMEDIATED)
                .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
        };
        let held = with_condition(&m, Some(deferred("preflight says no", &t)), &t);
        assert_eq!(held.get_condition(OWNER_REMEDIATED).and_then(|c| c.message.as_deref()), Some("preflight says no"));
        assert_eq!(
            v2(&held),
            Some(("False".into(), names::REMEDIATION_DEFERRED_REASON.into(), "preflight says no".into()))
        );
        let ok = with_condition(&held, Some(approval(&t)), &t);
        assert!(ok.is_condition_true(OWNER_REMEDIATED));
        assert_eq!(
            v2(&ok),
            Some(("False".into(), names::MACHINE_DELETING_REASON.into(), "Machine is deleting".into()))
        );
        let cleared = with_condition(&ok, None, &t);
        assert!(cleared.get_condition(OWNER_REMEDIATED).is_none());
        assert_eq!(v2(&cleared), None);
    }
}
