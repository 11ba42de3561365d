//! Scaling outside of a rollout: with one set holding the deployment's Machines, that set
//! follows `spec.replicas`; while the deployment is paused, the single active set (or the
//! newest) does.

use drydock_api::capi::core::{MachineDeployment, MachineSet};

use super::plan::{Plan, scale};
use super::rollout;

/// True when old sets still hold replicas, i.e. a rollout is in progress.
pub fn rollout_in_progress(plan: &Plan) -> bool {
    plan.old().any(|ms| ms.spec.replicas.unwrap_or(0) > 0)
}

/// Scales the current set to the deployment's replicas.
pub fn sync_replicas(md: &MachineDeployment, plan: &mut Plan, max_replicas: i32) {
    let desired = rollout::replicas(md);
    if let Some(current) = plan.current_mut() {
        scale(current, desired, desired, max_replicas);
    }
}

/// The set to scale while paused: the only active one (replicas > 0), or with none
/// active the current set, else the newest. `None` with several active sets (scaling
/// them proportionally comes with the rollout work).
pub fn one_active_or_latest(plan: &Plan) -> Option<String> {
    let mut candidates: Vec<&MachineSet> = plan.current().into_iter().collect();
    let mut old: Vec<&MachineSet> = plan.old().collect();
    old.sort_by(|a, b| {
        let ts = |m: &MachineSet| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
        ts(b)
            .cmp(&ts(a))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    candidates.extend(old);
    let active: Vec<&&MachineSet> = candidates
        .iter()
        .filter(|ms| ms.spec.replicas.unwrap_or(0) > 0)
        .collect();
    let pick = match active.len() {
        0 => candidates.first().copied(),
        1 => Some(*active[0]),
        _ => None,
    };
    pick.and_then(|ms| ms.metadata.name.clone())
}

/// Scales the paused deployment's single target set, if there is one.
pub fn sync_paused(md: &MachineDeployment, plan: &mut Plan, max_replicas: i32) {
    let desired = rollout::replicas(md);
    if let Some(name) = one_active_or_latest(plan)
        && let Some(ms) = plan.get_mut(&name)
    {
        scale(ms, desired, desired, max_replicas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::{MachineDeploymentSpec, MachineSetSpec};
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn ms(name: &str, replicas: i32, created: i64, version: &str) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(
            name,
            MachineSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            },
        );
        ms.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created).expect("ts")));
        ms.spec.template.spec.version = Some(version.into());
        Arc::new(ms)
    }

    fn md(version: &str, replicas: i32) -> MachineDeployment {
        let mut md = MachineDeployment::new(
            "md",
            MachineDeploymentSpec {
                replicas: Some(replicas),
                ..Default::default()
            },
        );
        md.spec.template.spec.version = Some(version.into());
        md
    }

    fn now() -> Timestamp {
        Timestamp::from_second(1000).expect("ts")
    }

    #[test]
    fn single_set_follows_replicas() {
        let d = md("v1", 10);
        let mut plan = Plan::new(&d, vec![ms("a", 3, 1, "v1")], now());
        assert!(!rollout_in_progress(&plan));
        sync_replicas(&d, &mut plan, 11);
        assert_eq!(plan.current().and_then(|m| m.spec.replicas), Some(10));
    }

    #[test]
    fn paused_scales_only_a_single_target() {
        // Template changed while paused: no current set; the one active old set scales.
        let d = md("v2", 5);
        let mut plan = Plan::new(
            &d,
            vec![ms("old", 3, 1, "v1"), ms("older", 0, 0, "v0")],
            now(),
        );
        assert!(rollout_in_progress(&plan));
        assert_eq!(one_active_or_latest(&plan).as_deref(), Some("old"));
        sync_paused(&d, &mut plan, 6);
        assert_eq!(
            plan.old()
                .find(|m| m.metadata.name.as_deref() == Some("old"))
                .and_then(|m| m.spec.replicas),
            Some(5)
        );
        // None active: the newest.
        let plan = Plan::new(&d, vec![ms("x", 0, 1, "v1"), ms("y", 0, 5, "v1")], now());
        assert_eq!(one_active_or_latest(&plan).as_deref(), Some("y"));
        // Two active: none.
        let plan = Plan::new(&d, vec![ms("x", 1, 1, "v1"), ms("y", 2, 5, "v1")], now());
        assert_eq!(one_active_or_latest(&plan), None);
    }
}
