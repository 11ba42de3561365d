//! Scaling without a rollout step, while the deployment is paused (upstream's `sync`). A
//! single active set (or, with none, the current or newest one) simply follows
//! `spec.replicas`; several active sets are scaled in proportion to their size, so that a
//! rollout paused half way neither starts over nor overshoots its surge when it resumes.
//! An unpaused deployment whose replicas change mid-rollout is not scaled here: the
//! rollout step grows the new set, as upstream does.

use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet};
use drydock_api::capi::keys::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};

use super::plan::{Plan, annotation_i32, available, scale as scale_set, spec};
use super::rollout::{self, replicas};

fn created(ms: &MachineSet) -> Option<jiff::Timestamp> {
    ms.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// The set to scale alone: the only active one (replicas > 0); with none active, the
/// current set, else the newest. `None` with several active sets.
pub fn one_active_or_latest(plan: &Plan) -> Option<String> {
    let mut candidates: Vec<&MachineSet> = plan.current().into_iter().collect();
    let mut old: Vec<&MachineSet> = plan.old().collect();
    old.sort_by(|a, b| created(b).cmp(&created(a)).then_with(|| a.metadata.name.cmp(&b.metadata.name)));
    candidates.extend(old);
    let active: Vec<&&MachineSet> = candidates.iter().filter(|ms| spec(ms) > 0).collect();
    let pick = match active.len() {
        0 => candidates.first().copied(),
        1 => Some(*active[0]),
        _ => None,
    };
    pick.and_then(|ms| ms.metadata.name.clone())
}

/// True when the current set holds every desired Machine, all available.
fn saturated(md: &MachineDeployment, plan: &Plan) -> bool {
    let desired = replicas(md);
    plan.current().is_some_and(|new| {
        spec(new) == desired
            && annotation_i32(new, DESIRED_REPLICAS_ANNOTATION) == Some(desired)
            && available(new) == desired
    })
}

/// A set's share of `to_add` more (or fewer) replicas: its size scaled from the total it
/// was last sized for (`max-replicas`, as read) to the new total.
fn proportion(ms_spec: i32, annotated_max: i32, md_replicas: i32, new_total: i32, to_add: i32, added: i32) -> i32 {
    if ms_spec == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = if md_replicas == 0 {
        -ms_spec
    } else if annotated_max <= 0 {
        0
    } else {
        let scaled = f64::from(ms_spec) * f64::from(new_total) / f64::from(annotated_max);
        // Rounds half away from zero, as Kubernetes does.
        scaled.round() as i32 - ms_spec
    };
    let allowed = to_add - added;
    if to_add > 0 { fraction.min(allowed) } else { fraction.max(allowed) }
}

/// Scales the deployment's sets to its replicas without advancing a rollout.
pub fn scale(md: &MachineDeployment, plan: &mut Plan, max_replicas: i32) {
    let desired = replicas(md);
    if let Some(name) = one_active_or_latest(plan) {
        // Also when the size is right: the annotations record that the set saw the
        // replicas, which ends the scaling event.
        if let Some(ms) = plan.get_mut(&name) {
            scale_set(ms, desired, desired, max_replicas);
        }
        return;
    }
    if saturated(md, plan) {
        for name in plan.old_names() {
            if let Some(ms) = plan.get_mut(&name)
                && spec(ms) > 0
            {
                scale_set(ms, 0, desired, max_replicas);
            }
        }
        return;
    }
    if rollout::strategy_type(md) != drydock_api::capi::core::MachineDeploymentStrategyType::RollingUpdate {
        return;
    }
    let new_total = if desired > 0 { max_replicas } else { 0 };
    let fallback_max = md.status.as_ref().and_then(|s| s.replicas).unwrap_or(0);
    // (name, spec, created, annotated max as read)
    let mut active: Vec<(String, i32, Option<jiff::Timestamp>, i32)> = plan
        .iter()
        .filter(|p| spec(&p.want) > 0)
        .map(|p| {
            (
                p.want.metadata.name.clone().unwrap_or_default(),
                spec(&p.want),
                created(&p.want),
                annotation_i32(&p.before, MAX_REPLICAS_ANNOTATION).unwrap_or(fallback_max),
            )
        })
        .collect();
    let to_add = new_total - active.iter().map(|a| a.1).sum::<i32>();
    // Largest first; among equals the newer gets more when growing, the older loses more
    // when shrinking.
    active.sort_by(|a, b| {
        b.1.cmp(&a.1).then_with(|| if to_add > 0 { b.2.cmp(&a.2) } else { a.2.cmp(&b.2) }.then_with(|| a.0.cmp(&b.0)))
    });
    let mut added = 0;
    let mut sizes: Vec<(String, i32)> = Vec::with_capacity(active.len());
    for (name, s, _, max) in &active {
        let p = proportion(*s, *max, desired, new_total, to_add, added);
        added += p;
        sizes.push((name.clone(), s + p));
    }
    if let Some(first) = sizes.first_mut() {
        first.1 = (first.1 + to_add - added).max(0);
    }
    for (name, size) in sizes {
        if let Some(ms) = plan.get_mut(&name) {
            scale_set(ms, size, desired, max_replicas);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    fn ms(name: &str, replicas: i32, created: i64, version: &str) -> Arc<MachineSet> {
        super::super::plan::test_set(name, replicas, created, version)
    }

    /// A set last sized for a deployment of `desired` replicas and `max` at most.
    fn sized(name: &str, replicas: i32, created: i64, version: &str, desired: i32, max: i32) -> Arc<MachineSet> {
        let mut m = (*ms(name, replicas, created, version)).clone();
        m.metadata.annotations = Some(
            [
                (DESIRED_REPLICAS_ANNOTATION.to_string(), desired.to_string()),
                (MAX_REPLICAS_ANNOTATION.to_string(), max.to_string()),
            ]
            .into(),
        );
        Arc::new(m)
    }

    fn md(version: &str, replicas: i32) -> MachineDeployment {
        let mut md = super::super::rollout::rolling_md(replicas, IntOrString::Int(3), IntOrString::Int(2));
        md.spec.template.spec.version = Some(version.into());
        md
    }

    fn now() -> Timestamp {
        Timestamp::from_second(1000).expect("ts")
    }

    fn specs(plan: &Plan) -> Vec<(String, i32)> {
        let mut v: Vec<(String, i32)> =
            plan.wanted().map(|m| (m.metadata.name.clone().unwrap_or_default(), spec(m))).collect();
        v.sort();
        v
    }

    #[test]
    fn single_target_follows_replicas() {
        // Template changed while paused: no current set; the one active old set scales.
        let d = md("v2", 5);
        let mut plan = Plan::new(&d, vec![ms("old", 3, 1, "v1"), ms("older", 0, 0, "v0")], now());
        assert_eq!(one_active_or_latest(&plan).as_deref(), Some("old"));
        scale(&d, &mut plan, 8);
        assert_eq!(specs(&plan), [("old".into(), 5), ("older".into(), 0)]);
        // Already the right size, but unaware of the replicas: only the annotations change.
        let d3 = md("v1", 3);
        let mut plan = Plan::new(&d3, vec![sized("a", 3, 1, "v1", 5, 8)], now());
        scale(&d3, &mut plan, 6);
        let a = plan.wanted().next().expect("set");
        assert_eq!(spec(a), 3);
        assert_eq!(annotation_i32(a, DESIRED_REPLICAS_ANNOTATION), Some(3));
        assert_eq!(annotation_i32(a, MAX_REPLICAS_ANNOTATION), Some(6));
        // None active: the newest.
        let plan = Plan::new(&d, vec![ms("x", 0, 1, "v1"), ms("y", 0, 5, "v1")], now());
        assert_eq!(one_active_or_latest(&plan).as_deref(), Some("y"));
        // Two active: none.
        let plan = Plan::new(&d, vec![ms("x", 1, 1, "v1"), ms("y", 2, 5, "v1")], now());
        assert_eq!(one_active_or_latest(&plan), None);
    }

    #[test]
    fn a_paused_rollout_scales_in_proportion() {
        // 10 replicas (max 13) paused mid-rollout: old 8, new 5. Scaled to 20 (max 23): +10.
        let d = md("v2", 20);
        let sets = vec![sized("old", 8, 1, "v1", 10, 13), sized("new", 5, 2, "v2", 10, 13)];
        let mut plan = Plan::new(&d, sets.clone(), now());
        scale(&d, &mut plan, 23);
        // old: round(8*23/13) = 14 (+6), new: round(5*23/13) = 9 (+4).
        assert_eq!(specs(&plan), [("new".into(), 9), ("old".into(), 14)]);
        // Scaled down to 4 (max 7): -6 in proportion, rest from the largest.
        let d = md("v2", 4);
        let mut plan = Plan::new(&d, sets, now());
        scale(&d, &mut plan, 7);
        // old: round(8*7/13) = 4 (-4), new: round(5*7/13) = 3 (-2).
        assert_eq!(specs(&plan), [("new".into(), 3), ("old".into(), 4)]);
        let total: i32 = plan.wanted().map(spec).sum();
        assert_eq!(total, 7);
    }

    #[test]
    fn a_saturated_new_set_retires_the_old_ones() {
        let d = md("v2", 3);
        let mut new = (*sized("new", 3, 2, "v2", 3, 6)).clone();
        new.status.get_or_insert_with(Default::default).available_replicas = Some(3);
        let mut plan = Plan::new(&d, vec![sized("old", 1, 1, "v1", 3, 6), Arc::new(new)], now());
        scale(&d, &mut plan, 6);
        assert_eq!(specs(&plan), [("new".into(), 3), ("old".into(), 0)]);
    }
}
