//! OnDelete: nothing is replaced until someone deletes an old Machine. Old sets stop
//! creating Machines (`cluster.x-k8s.io/disable-machine-create`) and follow their Machines
//! down as they are deleted; the new set grows into the room that leaves.
//!
//! Per step: the new set is grown to fill `replicas − Σ max(spec, reported replicas)` (see
//! [`super::rollout::new_set_replicas`]); each old set's spec becomes its Machines that are
//! not being deleted; and when the deployment was scaled down, old sets (in plan order)
//! give up what is still too much.

use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet};
use drydock_api::capi::keys::DISABLE_MACHINE_CREATE_ANNOTATION;

use super::plan::{Plan, scale, scale_down_in_order, spec};
use super::rollout::replicas;

/// Machines selected by a set: all of them, and how many of those are being deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub total: i32,
    pub deleting: i32,
}

/// Lets the set create Machines again (it is the current one).
pub fn allow_creation(ms: &mut MachineSet) {
    if let Some(a) = ms.metadata.annotations.as_mut() {
        a.remove(DISABLE_MACHINE_CREATE_ANNOTATION);
    }
}

/// Shrinks the old sets for one OnDelete step (after the new set's step). `count` gives
/// the Machines an old set selects.
pub fn reconcile_old(
    md: &MachineDeployment,
    plan: &mut Plan,
    max_replicas: i32,
    count: impl Fn(&MachineSet) -> Counted,
) {
    let desired = replicas(md);
    let mut scale_down = plan.wanted().map(spec).sum::<i32>() - desired;
    let order = plan.old_names();
    for name in &order {
        let Some(ms) = plan.get_mut(name) else {
            continue;
        };
        let before = spec(ms);
        if before == 0 {
            continue;
        }
        ms.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .entry(DISABLE_MACHINE_CREATE_ANNOTATION.to_string())
            .or_insert_with(|| "true".to_string());
        let c = count(ms);
        // Deleted Machines are not replaced: the set follows them down (never up).
        let remaining = (c.total - c.deleting).clamp(0, before);
        if remaining != before {
            scale(ms, remaining, desired, max_replicas);
        }
        scale_down -= before - remaining;
    }
    scale_down_in_order(plan, &order, scale_down, spec, (desired, max_replicas));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::v1beta2::{MachineDeploymentSpec, MachineSetSpec, MachineSetStatus};
    use drydock_api::capi::keys::has_annotation;
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use crate::machinedeployment::rollout::{reconcile_new, set_on_delete};

    fn md(replicas: i32) -> MachineDeployment {
        let mut md =
            MachineDeployment::new("md", MachineDeploymentSpec { replicas: Some(replicas), ..Default::default() });
        set_on_delete(&mut md);
        md.spec.template.spec.version = Some("v2".into());
        md
    }

    fn ms(name: &str, version: &str, spec: i32, machines: i32) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(name, MachineSetSpec { replicas: Some(spec), ..Default::default() });
        ms.metadata.creation_timestamp = Some(Time(Timestamp::from_second(1).expect("ts")));
        ms.spec.template.spec.version = Some(version.into());
        ms.status = Some(MachineSetStatus { replicas: Some(machines), ..Default::default() });
        Arc::new(ms)
    }

    fn step(d: &MachineDeployment, sets: Vec<Arc<MachineSet>>, old: Counted) -> Plan {
        let mut plan = Plan::new(d, sets, Timestamp::from_second(10).expect("ts"));
        reconcile_new(d, &mut plan, 3).expect("new");
        reconcile_old(d, &mut plan, 3, |_| old);
        plan
    }

    fn specs(plan: &Plan) -> Vec<(String, i32)> {
        let mut v: Vec<(String, i32)> =
            plan.wanted().map(|m| (m.metadata.name.clone().unwrap_or_default(), spec(m))).collect();
        v.sort();
        v
    }

    #[test]
    fn nothing_moves_until_a_machine_is_deleted() {
        let d = md(3);
        let all = Counted { total: 3, deleting: 0 };
        let plan = step(&d, vec![ms("old", "v1", 3, 3), ms("new", "v2", 0, 0)], all);
        assert_eq!(specs(&plan), [("new".into(), 0), ("old".into(), 3)]);
        let old = plan.old().next().expect("old");
        assert!(has_annotation(old.metadata.annotations.as_ref(), DISABLE_MACHINE_CREATE_ANNOTATION));
        // One deleted: the old set follows, the new one waits for it to be gone ...
        let one = Counted { total: 3, deleting: 1 };
        let plan = step(&d, vec![ms("old", "v1", 3, 3), ms("new", "v2", 0, 0)], one);
        assert_eq!(specs(&plan), [("new".into(), 0), ("old".into(), 2)]);
        // ... and then takes its place.
        let gone = Counted { total: 2, deleting: 0 };
        let plan = step(&d, vec![ms("old", "v1", 2, 2), ms("new", "v2", 0, 0)], gone);
        assert_eq!(specs(&plan), [("new".into(), 1), ("old".into(), 2)]);
    }

    #[test]
    fn a_smaller_deployment_takes_from_old_sets() {
        let d = md(2);
        let all = Counted { total: 3, deleting: 0 };
        let plan = step(&d, vec![ms("old", "v1", 3, 3), ms("new", "v2", 1, 1)], all);
        assert_eq!(specs(&plan), [("new".into(), 1), ("old".into(), 1)]);
    }
}
