//! A DevMachinePool's instances and what to do with them: how many to add and which to
//! remove, for the MachinePool's replicas and version. A new version rolls out one
//! instance at a time with one spare (a new instance first, an outdated one removed once
//! the pool has enough ready ones without it: maxSurge 1, maxUnavailable 0); scaling down
//! removes outdated instances first, then those not ready, then the newest.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Where the instances are recorded: their start times must survive a restart, and no
/// upstream field holds them.
pub const INSTANCES_ANNOTATION: &str = "devmachinepool.infrastructure.drydock.dev/instances";

/// One simulated instance of a pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    pub name: String,
    /// The Kubernetes version it was started with.
    pub version: String,
    /// When it started provisioning; its start-up deadlines derive from it.
    pub started: Timestamp,
}

/// The instances recorded on a pool (none when the annotation is missing or unreadable).
pub fn recorded(annotations: Option<&BTreeMap<String, String>>) -> Vec<Instance> {
    annotations.and_then(|a| a.get(INSTANCES_ANNOTATION)).and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default()
}

/// The annotation value recording `instances`.
pub fn record(instances: &[Instance]) -> String {
    serde_json::to_string(instances).unwrap_or_else(|_| "[]".into())
}

/// What the pool does now.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Instances to start.
    pub add: usize,
    /// Names of instances to remove.
    pub remove: Vec<String>,
}

/// Plans the pool's changes: `desired` replicas at `version`; `ready` says which instances
/// have their Node.
pub fn plan(instances: &[Instance], desired: usize, version: &str, ready: impl Fn(&Instance) -> bool) -> Changes {
    let outdated = |i: &Instance| i.version != version;
    let current = instances.iter().filter(|i| !outdated(i)).count();
    let rolling = instances.iter().any(outdated);
    // One spare instance while rolling out.
    let limit = desired + usize::from(rolling && desired > 0);
    let add = desired.saturating_sub(current).min(limit.saturating_sub(instances.len()));

    // Removal order: outdated (oldest first), then not ready, then the newest.
    let mut order: Vec<&Instance> = instances.iter().collect();
    order.sort_by_key(|i| {
        let age = if outdated(i) { i.started.as_second() } else { -i.started.as_second() };
        (!outdated(i), ready(i), age, i.name.clone())
    });
    let mut ready_count = instances.iter().filter(|i| ready(i)).count();
    let mut current_left = current;
    let mut remove = Vec::new();
    for i in order {
        let r = ready(i);
        // An outdated instance goes when it is not ready, or enough ready ones remain without
        // it; a current one when there are more than wanted.
        let go = if outdated(i) { !r || ready_count > desired } else { current_left > desired };
        if go {
            remove.push(i.name.clone());
            ready_count -= usize::from(r);
            current_left -= usize::from(!outdated(i));
        }
    }
    Changes { add, remove }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(name: &str, version: &str, at: i64) -> Instance {
        Instance { name: name.into(), version: version.into(), started: Timestamp::from_second(at).expect("time") }
    }

    #[test]
    fn scales_up_and_down_newest_first() {
        let all_ready = |_: &Instance| true;
        assert_eq!(plan(&[], 3, "v1", all_ready), Changes { add: 3, remove: vec![] });
        let three = [inst("a", "v1", 1), inst("b", "v1", 2), inst("c", "v1", 3)];
        assert_eq!(plan(&three, 3, "v1", all_ready), Changes::default());
        assert_eq!(plan(&three, 1, "v1", all_ready), Changes { add: 0, remove: vec!["c".into(), "b".into()] });
        let not_ready = |i: &Instance| i.name != "a";
        assert_eq!(plan(&three, 2, "v1", not_ready).remove, ["a"], "a not-ready instance goes first");
    }

    #[test]
    fn rolls_out_one_spare_instance_at_a_time_keeping_the_ready_count() {
        let old = [inst("a", "v1", 1), inst("b", "v1", 2)];
        // A new instance first; nothing removed while it is not ready.
        assert_eq!(plan(&old, 2, "v2", |_| true), Changes { add: 1, remove: vec![] });
        let mut pool = old.to_vec();
        pool.push(inst("n1", "v2", 3));
        let ready = |i: &Instance| i.name != "n1";
        assert_eq!(plan(&pool, 2, "v2", ready), Changes::default());
        // Once it is ready, one outdated instance goes, and the next new one starts after.
        assert_eq!(plan(&pool, 2, "v2", |_| true), Changes { add: 0, remove: vec!["a".into()] });
        let pool = [inst("b", "v1", 2), inst("n1", "v2", 3)];
        assert_eq!(plan(&pool, 2, "v2", |_| true), Changes { add: 1, remove: vec![] });
        let pool = [inst("b", "v1", 2), inst("n1", "v2", 3), inst("n2", "v2", 4)];
        assert_eq!(plan(&pool, 2, "v2", |_| true), Changes { add: 0, remove: vec!["b".into()] });
    }

    #[test]
    fn the_record_round_trips() {
        let instances = vec![inst("a", "v1", 1)];
        let annotations = BTreeMap::from([(INSTANCES_ANNOTATION.to_string(), record(&instances))]);
        assert_eq!(recorded(Some(&annotations)), instances);
        assert!(recorded(None).is_empty());
    }
}
