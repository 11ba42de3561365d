//! RollingUpdate, the old sets' side: they shrink only as far as availability allows, so
//! at least `replicas − maxUnavailable` Machines stay available throughout.
//!
//! With `minAvailable = replicas − maxUnavailable`:
//! 1. `maxScaledDown = Σ spec − minAvailable − (new.spec − new.available)`; nothing goes
//!    while it is not positive (the new set's Machines must become available first).
//! 2. Old sets, oldest first, give up their unavailable replicas (up to `maxScaledDown` in
//!    total): taking those away costs no availability.
//! 3. Old sets, oldest first, give up replicas within the availability budget
//!    `Σ available − minAvailable`.
//!
//! Availability is read from the sets' status as reported. A set that reports more
//! available Machines than its (just lowered) spec is counted at its spec: the Machines
//! beyond it are about to be deleted, and counting them would let the budget take down
//! more than `maxUnavailable` allows (upstream errors out in step 2 in that case).

use drydock_api::capi::core::v1beta2::MachineDeployment;

use super::plan::{Plan, available, scale_down_in_order, spec};
use super::rollout::replicas;

/// Shrinks the old sets for one rolling update step (after the new set's step).
pub fn reconcile_old(md: &MachineDeployment, plan: &mut Plan, max_unavailable: i32, max_replicas: i32) {
    let old_total: i32 = plan.old().map(spec).sum();
    if old_total == 0 {
        return;
    }
    let desired = replicas(md);
    let all_total: i32 = plan.wanted().map(spec).sum();
    let min_available = desired - max_unavailable;
    let new_unavailable = plan.current().map_or(0, |new| (spec(new) - available(new)).max(0));
    let max_scaled_down = all_total - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return;
    }
    let order = plan.old_oldest_first();
    cleanup_unavailable(plan, &order, max_scaled_down, desired, max_replicas);
    scale_down_within_budget(plan, &order, min_available, desired, max_replicas);
}

/// Step 2: removes old sets' unavailable replicas, up to `max` in total.
fn cleanup_unavailable(plan: &mut Plan, order: &[String], max: i32, desired: i32, max_replicas: i32) {
    // A set's unavailable replicas: what it is to keep beyond what is available.
    scale_down_in_order(plan, order, max, |ms| spec(ms) - available(ms), (desired, max_replicas));
}

/// Step 3: takes old sets down within the availability budget.
fn scale_down_within_budget(plan: &mut Plan, order: &[String], min_available: i32, desired: i32, max_replicas: i32) {
    let total_available: i32 = plan.wanted().map(available).sum();
    if total_available <= min_available {
        return;
    }
    scale_down_in_order(plan, order, total_available - min_available, spec, (desired, max_replicas));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::v1beta2::{MachineSet, MachineSetSpec, MachineSetStatus};
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use crate::machinedeployment::rollout::{max_surge, max_unavailable, reconcile_new, rolling_md};

    fn md(replicas: i32, surge: i32, unavailable: i32) -> MachineDeployment {
        let mut md = rolling_md(replicas, IntOrString::Int(surge), IntOrString::Int(unavailable));
        md.spec.template.spec.version = Some("v2".into());
        md
    }

    /// A set: `(spec, machines, available)`.
    fn ms(name: &str, created: i64, version: &str, s: (i32, i32, i32)) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(name, MachineSetSpec { replicas: Some(s.0), ..Default::default() });
        ms.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created).expect("ts")));
        ms.spec.template.spec.version = Some(version.into());
        ms.status = Some(MachineSetStatus { replicas: Some(s.1), available_replicas: Some(s.2), ..Default::default() });
        Arc::new(ms)
    }

    fn step(d: &MachineDeployment, sets: Vec<Arc<MachineSet>>) -> Vec<(String, i32)> {
        let mut plan = Plan::new(d, sets, Timestamp::from_second(1000).expect("ts"));
        let max = d.spec.replicas.unwrap_or(1) + max_surge(d).expect("surge");
        reconcile_new(d, &mut plan, max).expect("new");
        reconcile_old(d, &mut plan, max_unavailable(d).expect("unavailable"), max);
        let mut out: Vec<(String, i32)> =
            plan.wanted().map(|m| (m.metadata.name.clone().unwrap_or_default(), spec(m))).collect();
        out.sort();
        out
    }

    fn pairs(v: &[(&str, i32)]) -> Vec<(String, i32)> {
        v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn worked_example_surge_one_unavailable_zero() {
        let d = md(3, 1, 0);
        // The new set starts at 1; nothing old goes before it is available.
        let out = step(&d, vec![ms("old", 1, "v1", (3, 3, 3)), ms("new", 2, "v2", (1, 0, 0))]);
        assert_eq!(out, pairs(&[("new", 1), ("old", 3)]));
        // Available: one old Machine goes.
        let out = step(&d, vec![ms("old", 1, "v1", (3, 3, 3)), ms("new", 2, "v2", (1, 1, 1))]);
        assert_eq!(out, pairs(&[("new", 1), ("old", 2)]));
        // While that Machine is still deleting, the new set cannot grow.
        let out = step(&d, vec![ms("old", 1, "v1", (2, 3, 2)), ms("new", 2, "v2", (1, 1, 1))]);
        assert_eq!(out, pairs(&[("new", 1), ("old", 2)]));
        // Once it is gone, it grows by one.
        let out = step(&d, vec![ms("old", 1, "v1", (2, 2, 2)), ms("new", 2, "v2", (1, 1, 1))]);
        assert_eq!(out, pairs(&[("new", 2), ("old", 2)]));
    }

    #[test]
    fn ten_with_surge_three_unavailable_two() {
        let d = md(10, 3, 2);
        // The new set may take the whole surge; two old Machines go at once.
        let out = step(&d, vec![ms("old", 1, "v1", (10, 10, 10)), ms("new", 2, "v2", (3, 0, 0))]);
        assert_eq!(out, pairs(&[("new", 3), ("old", 8)]));
        // Just scaled down, the old set still reports its ten available: counted as eight,
        // so nothing more goes until the new Machines are available.
        let out = step(&d, vec![ms("old", 1, "v1", (8, 10, 10)), ms("new", 2, "v2", (3, 3, 0))]);
        assert_eq!(out, pairs(&[("new", 3), ("old", 8)]));
        let out = step(&d, vec![ms("old", 1, "v1", (8, 10, 10)), ms("new", 2, "v2", (3, 3, 3))]);
        assert_eq!(out, pairs(&[("new", 3), ("old", 5)]));
    }

    #[test]
    fn unavailable_old_replicas_go_first_and_oldest_sets_first() {
        let d = md(4, 1, 0);
        // The oldest set has two unavailable Machines: they go without touching availability.
        let out = step(
            &d,
            vec![ms("a-oldest", 1, "v0", (2, 2, 0)), ms("b-old", 2, "v1", (2, 2, 2)), ms("new", 3, "v2", (1, 1, 1))],
        );
        // maxScaledDown = 5 - 4 - 0 = 1: one unavailable Machine of the oldest set.
        assert_eq!(out, pairs(&[("a-oldest", 1), ("b-old", 2), ("new", 1)]));
    }

    #[test]
    fn a_smaller_deployment_cuts_the_new_set_directly() {
        let d = md(2, 1, 0);
        let out = step(&d, vec![ms("old", 1, "v1", (1, 1, 1)), ms("new", 2, "v2", (4, 4, 4))]);
        // New cut to 2; with 2 available of 2 needed plus the old one, the old one goes.
        assert_eq!(out, pairs(&[("new", 2), ("old", 0)]));
    }
}
