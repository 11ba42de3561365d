//! MachineDeployment status: replica counters summed over its sets, the phase, and the
//! Available, MachineSetReady, MachinesCreated and Ready conditions (Paused is set by the
//! reconcile, see [`crate::framework::pause`]).

use drydock_api::capi::condition_types::{
    AVAILABLE, MACHINE_SET_READY, MACHINES_CREATED, WAITING_FOR_AVAILABLE_MACHINES, WAITING_FOR_MACHINE_SET,
};
use drydock_api::capi::conditions::{self, HasConditions, MirrorFallback, Severity};
use drydock_api::capi::core::v1beta2::{
    MachineDeployment, MachineDeploymentDeprecatedStatus, MachineDeploymentStatus,
    MachineDeploymentV1Beta1DeprecatedStatus, MachineSet, MachineSetV1Beta1DeprecatedStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::plan::Plan;

pub const PHASE_RUNNING: &str = "Running";
pub const PHASE_SCALING_UP: &str = "ScalingUp";
pub const PHASE_SCALING_DOWN: &str = "ScalingDown";
pub const PHASE_FAILED: &str = "Failed";

/// A v1beta1 counter of a set (under `status.deprecated.v1beta1`; the rollout budgets with
/// their meaning, see [`crate::machineset::status`]).
fn v1beta1_of(ms: &MachineSet, f: impl Fn(&MachineSetV1Beta1DeprecatedStatus) -> Option<i32>) -> i32 {
    ms.deprecated_v1beta1().and_then(f).unwrap_or(0)
}

fn replicas_of(ms: &MachineSet) -> i32 {
    ms.status.as_ref().and_then(|s| s.replicas).unwrap_or(0)
}

/// `status.deprecated.v1beta1.availableReplicas` of a deployment: Machines ready for
/// minReadySeconds, as the rollout counts them.
pub fn available(md: &MachineDeployment) -> i32 {
    md.deprecated_v1beta1().and_then(|d| d.available_replicas).unwrap_or(0)
}

/// Counters and phase from the sets (as wanted after this reconcile's scaling).
pub fn compute(md: &MachineDeployment, plan: &Plan, selector: String) -> MachineDeploymentStatus {
    let desired = md.spec.replicas.unwrap_or(1);
    let (mut replicas, mut ready, mut available, mut spec_total) = (0, 0, 0, 0);
    let mut failed = false;
    for ms in plan.wanted() {
        replicas += replicas_of(ms);
        ready += v1beta1_of(ms, |s| s.ready_replicas);
        available += v1beta1_of(ms, |s| s.available_replicas);
        spec_total += ms.spec.replicas.unwrap_or(0);
        failed |= ms.deprecated_v1beta1().is_some_and(|s| s.failure_reason.is_some() || s.failure_message.is_some());
    }
    let updated = plan.current().map_or(0, replicas_of);
    // Later rules win, as upstream applies them in this order.
    let mut phase = None;
    if desired == ready {
        phase = Some(PHASE_RUNNING);
    }
    if desired > ready {
        phase = Some(PHASE_SCALING_UP);
    }
    if spec_total - available < 0 {
        phase = Some(PHASE_SCALING_DOWN);
    }
    if failed {
        phase = Some(PHASE_FAILED);
    }
    let mut had = md.status.clone().unwrap_or_default();
    let old = had.deprecated.take().and_then(|d| d.v1beta1).unwrap_or_default();
    MachineDeploymentStatus {
        observed_generation: md.metadata.generation,
        selector: Some(selector),
        replicas: Some(replicas),
        phase: phase.map(str::to_string),
        deprecated: Some(MachineDeploymentDeprecatedStatus {
            v1beta1: Some(MachineDeploymentV1Beta1DeprecatedStatus {
                updated_replicas: Some(updated),
                ready_replicas: Some(ready),
                available_replicas: Some(available),
                unavailable_replicas: Some((spec_total - available).max(0)),
                ..old
            }),
        }),
        ..had
    }
}

/// Sets Available (enough Machines available given maxUnavailable), MachineSetReady
/// (the current set's Ready) and Ready (a summary of Available).
pub fn set_conditions(md: &mut MachineDeployment, plan: &Plan, max_unavailable: i32, now: Time) {
    let desired = md.spec.replicas.unwrap_or(1);
    let available = available(md);
    let needed = desired - max_unavailable;
    if available >= needed {
        md.mark_true(AVAILABLE, now.clone());
    } else {
        md.mark_false(
            AVAILABLE,
            WAITING_FOR_AVAILABLE_MACHINES,
            Severity::Warning,
            &format!("Minimum availability requires {needed} replicas, current {available} available"),
            now.clone(),
        );
    }
    let ms_ready = match plan.current() {
        Some(ms) => conditions::mirror(
            ms.conditions(),
            MACHINE_SET_READY,
            MirrorFallback::False { reason: WAITING_FOR_MACHINE_SET, severity: Severity::Info, message: "" },
            now.clone(),
        ),
        None => conditions::Condition::false_(
            MACHINE_SET_READY,
            WAITING_FOR_MACHINE_SET,
            Severity::Info,
            "MachineSet not found",
            now.clone(),
        ),
    };
    md.set_condition(ms_ready);
    set_machines_created(md, plan, now.clone());
    md.set_ready_summary(&[AVAILABLE], now);
}

/// MachinesCreated: False with the reason of the first set (current first) that cannot
/// create its Machines, naming it; True when every set can.
fn set_machines_created(md: &mut MachineDeployment, plan: &Plan, now: Time) {
    if plan.is_empty() {
        return;
    }
    let blocked =
        plan.current().into_iter().chain(plan.old()).filter(|ms| ms.metadata.deletion_timestamp.is_none()).find_map(
            |ms| {
                let c = ms.get_condition(MACHINES_CREATED)?;
                c.is_false().then(|| (ms.metadata.name.as_deref().unwrap_or_default(), c))
            },
        );
    match blocked {
        Some((name, c)) => md.mark_false(
            MACHINES_CREATED,
            c.reason.as_deref().unwrap_or_default(),
            c.severity().unwrap_or(Severity::Warning),
            &format!("MachineSet {name}: {}", c.message.as_deref().unwrap_or_default()),
            now,
        ),
        None => md.mark_true(MACHINES_CREATED, now),
    }
}

/// Complete: every desired Machine is up to date and available (the v1beta2 counters, as
/// upstream's rollout judges it), and nothing else remains.
pub fn is_complete(md: &MachineDeployment) -> bool {
    let desired = md.spec.replicas.unwrap_or(1);
    let Some(s) = md.status.as_ref() else {
        return false;
    };
    s.up_to_date_replicas == Some(desired)
        && s.replicas == Some(desired)
        && s.available_replicas == Some(desired)
        && s.observed_generation >= md.metadata.generation
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::v1beta2::{
        MachineDeploymentSpec, MachineSetDeprecatedStatus, MachineSetSpec, MachineSetStatus,
    };
    use jiff::Timestamp;

    fn ms(name: &str, version: &str, spec: i32, replicas: i32, ready: i32, available: i32) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(name, MachineSetSpec { replicas: Some(spec), ..Default::default() });
        ms.spec.template.spec.version = Some(version.into());
        // The v1beta2 counters as the set's controller reports them: every Machine of a
        // set running the deployment's version is up to date.
        let up_to_date = if version == "v2" { replicas } else { 0 };
        ms.status = Some(MachineSetStatus {
            replicas: Some(replicas),
            ready_replicas: Some(ready),
            available_replicas: Some(available),
            up_to_date_replicas: Some(up_to_date),
            deprecated: Some(MachineSetDeprecatedStatus {
                v1beta1: Some(MachineSetV1Beta1DeprecatedStatus {
                    ready_replicas: Some(ready),
                    available_replicas: Some(available),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        });
        Arc::new(ms)
    }

    /// The v1beta1 counters of a computed status.
    fn old(s: &MachineDeploymentStatus) -> MachineDeploymentV1Beta1DeprecatedStatus {
        s.deprecated.clone().and_then(|d| d.v1beta1).unwrap_or_default()
    }

    fn md(replicas: i32) -> MachineDeployment {
        let mut md =
            MachineDeployment::new("md", MachineDeploymentSpec { replicas: Some(replicas), ..Default::default() });
        md.metadata.generation = Some(3);
        md.spec.template.spec.version = Some("v2".into());
        md
    }

    fn now() -> Timestamp {
        Timestamp::from_second(100).expect("ts")
    }

    #[test]
    fn sums_over_sets_and_picks_the_phase() {
        let d = md(3);
        let plan = Plan::new(&d, vec![ms("new", "v2", 2, 2, 1, 1), ms("old", "v1", 1, 2, 2, 2)], now());
        let s = compute(&d, &plan, "a=b".into());
        assert_eq!(s.replicas, Some(4));
        assert_eq!(old(&s).updated_replicas, Some(2));
        assert_eq!(old(&s).ready_replicas, Some(3));
        assert_eq!(old(&s).available_replicas, Some(3));
        assert_eq!(old(&s).unavailable_replicas, Some(0));
        assert_eq!(s.observed_generation, Some(3));
        assert_eq!(s.phase.as_deref(), Some(PHASE_RUNNING));

        let plan = Plan::new(&d, vec![ms("new", "v2", 3, 1, 0, 0)], now());
        let s = compute(&d, &plan, String::new());
        assert_eq!(s.phase.as_deref(), Some(PHASE_SCALING_UP));
        assert_eq!(old(&s).unavailable_replicas, Some(3));

        let d1 = md(1);
        let plan = Plan::new(&d1, vec![ms("new", "v2", 1, 5, 5, 5)], now());
        assert_eq!(compute(&d1, &plan, String::new()).phase.as_deref(), Some(PHASE_SCALING_DOWN));

        let plan = Plan::new(&d, vec![ms("old", "v1", 3, 3, 3, 3)], now());
        let s = compute(&d, &plan, String::new());
        assert_eq!(old(&s).updated_replicas, Some(0));
    }

    #[test]
    fn conditions_and_completion() {
        let t = Time(now());
        let mut d = md(3);
        let plan = Plan::new(&d, vec![ms("new", "v2", 3, 3, 2, 2)], now());
        d.status = Some(compute(&d, &plan, String::new()));
        set_conditions(&mut d, &plan, 0, t.clone());
        let a = d.get_condition(AVAILABLE).expect("available");
        assert_eq!(a.reason.as_deref(), Some(WAITING_FOR_AVAILABLE_MACHINES));
        assert_eq!(a.message.as_deref(), Some("Minimum availability requires 3 replicas, current 2 available"));
        assert!(d.is_condition_false(conditions::READY));
        assert_eq!(d.get_condition(MACHINE_SET_READY).and_then(|c| c.reason.as_deref()), Some(WAITING_FOR_MACHINE_SET));
        assert!(!is_complete(&d));
        set_conditions(&mut d, &plan, 1, t.clone());
        assert!(d.is_condition_true(AVAILABLE));
        assert!(d.is_condition_true(conditions::READY));

        let plan = Plan::new(&d, vec![ms("new", "v2", 3, 3, 3, 3)], now());
        d.status = Some(compute(&d, &plan, String::new()));
        assert!(!is_complete(&d), "complete is judged on the v1beta2 counters, not yet summed");
        super::super::v1beta2::set(&mut d, &plan, 0, now(), &t);
        assert!(is_complete(&d));
        assert!(d.is_condition_true(MACHINES_CREATED));
        let mut held = (*ms("new", "v2", 4, 3, 3, 3)).clone();
        held.mark_false(MACHINES_CREATED, "PreflightCheckFailed", Severity::Error, "on hold", t.clone());
        let plan = Plan::new(&d, vec![Arc::new(held)], now());
        set_conditions(&mut d, &plan, 0, t.clone());
        let c = d.get_condition(MACHINES_CREATED).expect("machines created");
        assert_eq!(c.reason.as_deref(), Some("PreflightCheckFailed"));
        assert_eq!(c.message.as_deref(), Some("MachineSet new: on hold"));
        assert_eq!(c.severity(), Some(Severity::Error));
        let none = Plan::new(&d, vec![], now());
        set_conditions(&mut d, &none, 0, t);
        assert_eq!(d.get_condition(MACHINE_SET_READY).and_then(|c| c.message.as_deref()), Some("MachineSet not found"));
    }
}
