//! Old MachineSets beyond the revision history limit (v1beta1's `revisionHistoryLimit`, kept
//! for rollback; see [`revision_history_limit`]) are deleted once a deployment is complete,
//! oldest first, and only when they are empty and settled. An ineligible set is skipped, not
//! replaced by a newer one, so fewer may go than the limit allows.
//!
//! [`revision_history_limit`]: drydock_api::capi::core::conversion::revision_history_limit

use drydock_api::capi::core::v1beta2::MachineSet;

use super::plan::Plan;

fn eligible(ms: &MachineSet) -> bool {
    let status = ms.status.as_ref();
    ms.metadata.deletion_timestamp.is_none()
        && ms.spec.replicas.unwrap_or(0) == 0
        && status.and_then(|s| s.replicas).unwrap_or(0) == 0
        && ms.metadata.generation.unwrap_or(0) <= status.and_then(|s| s.observed_generation).unwrap_or(0)
}

/// Names of the old sets to delete, given the history limit.
pub fn to_delete(plan: &Plan, limit: i32) -> Vec<String> {
    let mut candidates: Vec<&MachineSet> = plan.old().filter(|ms| ms.metadata.deletion_timestamp.is_none()).collect();
    let excess = candidates.len() as i64 - i64::from(limit.max(0));
    if excess <= 0 {
        return Vec::new();
    }
    candidates.sort_by(|a, b| {
        let ts = |m: &MachineSet| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
        ts(a).cmp(&ts(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    candidates
        .into_iter()
        .take(excess as usize)
        .filter(|ms| eligible(ms))
        .filter_map(|ms| ms.metadata.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use drydock_api::capi::core::v1beta2::{
        MachineDeployment, MachineDeploymentSpec, MachineSetSpec, MachineSetStatus,
    };
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn ms(name: &str, created: i64, version: &str, spec: i32, status: i32) -> Arc<MachineSet> {
        let mut ms = MachineSet::new(name, MachineSetSpec { replicas: Some(spec), ..Default::default() });
        ms.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created).expect("ts")));
        ms.metadata.generation = Some(2);
        ms.spec.template.spec.version = Some(version.into());
        ms.status =
            Some(MachineSetStatus { replicas: Some(status), observed_generation: Some(2), ..Default::default() });
        Arc::new(ms)
    }

    #[test]
    fn deletes_oldest_empty_sets_beyond_the_limit() {
        let mut md = MachineDeployment::new("md", MachineDeploymentSpec::default());
        md.spec.template.spec.version = Some("v4".into());
        let sets = vec![
            ms("current", 40, "v4", 3, 3),
            ms("r1", 10, "v1", 0, 0),
            ms("r2-still-draining", 20, "v2", 0, 1),
            ms("r3", 30, "v3", 0, 0),
        ];
        let plan = Plan::new(&md, sets.clone(), Timestamp::from_second(100).expect("ts"));
        // Limit 1: three old sets, the two oldest are candidates; r2 is not empty yet.
        assert_eq!(to_delete(&plan, 1), ["r1"]);
        assert_eq!(to_delete(&plan, 0), ["r1", "r3"]);
        assert!(to_delete(&plan, 3).is_empty());
        // A set whose latest spec was not observed yet stays.
        let mut unobserved = (*sets[1]).clone();
        unobserved.metadata.generation = Some(3);
        let plan =
            Plan::new(&md, vec![sets[0].clone(), Arc::new(unobserved)], Timestamp::from_second(100).expect("ts"));
        assert!(to_delete(&plan, 0).is_empty());
    }
}
