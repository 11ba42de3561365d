//! The MachineSets of a MachineDeployment as read and as the reconcile wants them.
//!
//! Planning is a pure function of what the reconcile read: every step (adoption, the new
//! set, in-place propagation, scaling, rollout) edits the wanted copies; the apply step
//! then writes each set once (creating new ones), and only if it differs from what was read.

use std::cmp::Ordering;
use std::sync::Arc;

use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet};
use drydock_api::capi::keys::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};
use drydock_api::capi::owner;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::template;
use crate::framework::apply::ApplyConfig;

/// How the apply step writes a planned set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A set of the deployment: what differs is patched.
    Update,
    /// An orphan the deployment adopts: patched with its new controller.
    Adopt,
    /// A new set: created.
    Create,
}

/// One MachineSet: as read, and as wanted.
pub struct Planned {
    pub before: Arc<MachineSet>,
    pub want: MachineSet,
    pub write: Write,
    /// What the deployment server-side applies to the set (the current one only).
    pub owned: Option<ApplyConfig>,
}

#[derive(Default)]
pub struct Plan {
    sets: Vec<Planned>,
    current: Option<usize>,
}

/// Most replicas first, then oldest, then by name: the first matching set is the current
/// one, and old sets keep this order.
fn order(a: &MachineSet, b: &MachineSet) -> Ordering {
    b.spec
        .replicas
        .unwrap_or(0)
        .cmp(&a.spec.replicas.unwrap_or(0))
        .then_with(|| {
            let ts = |m: &MachineSet| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
            ts(a).cmp(&ts(b))
        })
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

impl Plan {
    /// Sorts the sets and finds the one running the deployment's template (a set being
    /// deleted does not count: it must be replaced). With
    /// `rolloutAfter` passed, only a set created at or after it qualifies, so every
    /// Machine created before gets replaced.
    pub fn new(md: &MachineDeployment, sets: Vec<Arc<MachineSet>>, now: Timestamp) -> Self {
        Self::adopting(md, sets, Vec::new(), None, now)
    }

    /// Like [`Plan::new`], with `orphans` (sets without a controller that the deployment's
    /// selector matches) planned for adoption with `owner` as their controller.
    pub fn adopting(
        md: &MachineDeployment,
        owned: Vec<Arc<MachineSet>>,
        orphans: Vec<Arc<MachineSet>>,
        owner: Option<&OwnerReference>,
        now: Timestamp,
    ) -> Self {
        let mut sets: Vec<(Arc<MachineSet>, Write)> = owned.into_iter().map(|s| (s, Write::Update)).collect();
        if owner.is_some() {
            sets.extend(orphans.into_iter().map(|s| (s, Write::Adopt)));
        }
        sets.sort_by(|a, b| order(&a.0, &b.0));
        let current = sets
            .iter()
            .position(|(ms, _)| ms.metadata.deletion_timestamp.is_none() && template::outdated(ms, md, now).is_empty());
        let sets = sets
            .into_iter()
            .map(|(before, write)| {
                let mut want = (*before).clone();
                if let (Write::Adopt, Some(owner)) = (write, owner) {
                    owner::ensure_owner_ref(&mut want.metadata, owner.clone());
                }
                Planned { want, before, write, owned: None }
            })
            .collect();
        Self { sets, current }
    }

    /// Adds a set to create; it becomes the current one.
    pub fn push_new(&mut self, new: MachineSet) {
        self.sets.push(Planned { want: new.clone(), before: Arc::new(new), write: Write::Create, owned: None });
        self.current = Some(self.sets.len() - 1);
    }

    pub fn current(&self) -> Option<&MachineSet> {
        self.current.map(|i| &self.sets[i].want)
    }

    pub fn current_mut(&mut self) -> Option<&mut MachineSet> {
        self.current.map(|i| &mut self.sets[i].want)
    }

    /// Records what the deployment applies to the current set.
    pub fn set_current_owned(&mut self, config: ApplyConfig) {
        if let Some(i) = self.current {
            self.sets[i].owned = Some(config);
        }
    }

    /// Every set as wanted, current included.
    pub fn wanted(&self) -> impl Iterator<Item = &MachineSet> {
        self.sets.iter().map(|p| &p.want)
    }

    /// The sets that are not current, as wanted, in plan order.
    pub fn old(&self) -> impl Iterator<Item = &MachineSet> {
        let current = self.current;
        self.sets.iter().enumerate().filter(move |(i, _)| Some(*i) != current).map(|(_, p)| &p.want)
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Planned> {
        self.sets.iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Planned> {
        self.sets.iter_mut()
    }

    /// Names of the sets that are not current, oldest first (then by name): the order in
    /// which a rollout takes old sets down.
    pub fn old_oldest_first(&self) -> Vec<String> {
        let mut old: Vec<&MachineSet> = self.old().collect();
        old.sort_by(|a, b| {
            let ts = |m: &MachineSet| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
            ts(a).cmp(&ts(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        old.into_iter().filter_map(|m| m.metadata.name.clone()).collect()
    }

    /// Names of the sets that are not current, in plan order.
    pub fn old_names(&self) -> Vec<String> {
        self.old().filter_map(|m| m.metadata.name.clone()).collect()
    }

    /// The set named `name` as read.
    pub fn before(&self, name: &str) -> Option<&MachineSet> {
        self.sets.iter().find(|p| p.want.metadata.name.as_deref() == Some(name)).map(|p| &*p.before)
    }

    /// Mutable access to the set named `name`.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut MachineSet> {
        self.sets.iter_mut().find(|p| p.want.metadata.name.as_deref() == Some(name)).map(|p| &mut p.want)
    }
}

/// A set's replicas as wanted so far.
pub fn spec(ms: &MachineSet) -> i32 {
    ms.spec.replicas.unwrap_or(0)
}

/// A set's available Machines as last reported, never more than it is to keep: a set just
/// scaled down still reports Machines it is about to delete. The rollout budgets with the
/// v1beta2 count (Machines whose `Available` condition is True: Ready for
/// minReadySeconds), as upstream's rollout planner does since v1beta2.
pub fn available(ms: &MachineSet) -> i32 {
    let reported = ms.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0);
    reported.min(spec(ms)).max(0)
}

/// An integer annotation of a set.
pub fn annotation_i32(ms: &MachineSet, key: &str) -> Option<i32> {
    ms.metadata.annotations.as_ref()?.get(key)?.parse().ok()
}

/// Scales a set and records the deployment's desired and maximum replicas on it.
pub fn scale(ms: &mut MachineSet, replicas: i32, md_replicas: i32, max_replicas: i32) {
    ms.spec.replicas = Some(replicas);
    set_replica_annotations(ms, md_replicas, max_replicas);
}

/// Takes up to `amount` replicas off the named sets, in order, at most `room` of each,
/// recording the deployment's replicas on the sets it scales. Returns how many it took.
pub fn scale_down_in_order(
    plan: &mut Plan,
    order: &[String],
    amount: i32,
    room: impl Fn(&MachineSet) -> i32,
    (desired, max_replicas): (i32, i32),
) -> i32 {
    let mut taken = 0;
    for name in order {
        if taken >= amount {
            break;
        }
        let Some(ms) = plan.get_mut(name) else {
            continue;
        };
        let r = room(ms);
        if r <= 0 {
            continue;
        }
        let down = r.min(amount - taken);
        scale(ms, spec(ms) - down, desired, max_replicas);
        taken += down;
    }
    taken
}

pub fn set_replica_annotations(ms: &mut MachineSet, md_replicas: i32, max_replicas: i32) {
    let a = ms.metadata.annotations.get_or_insert_with(Default::default);
    a.insert(DESIRED_REPLICAS_ANNOTATION.to_string(), md_replicas.to_string());
    a.insert(MAX_REPLICAS_ANNOTATION.to_string(), max_replicas.to_string());
}

/// A set of `replicas` Machines of `version`, created at second `created`, for the
/// planners' tests.
#[cfg(test)]
pub(crate) fn test_set(name: &str, replicas: i32, created: i64, version: &str) -> Arc<MachineSet> {
    let spec = drydock_api::capi::core::v1beta2::MachineSetSpec { replicas: Some(replicas), ..Default::default() };
    let mut ms = MachineSet::new(name, spec);
    let created = Timestamp::from_second(created).expect("a representable instant");
    ms.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(created));
    ms.spec.template.spec.version = Some(version.into());
    Arc::new(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::MachineDeploymentSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn ms(name: &str, replicas: i32, created: i64, version: &str) -> Arc<MachineSet> {
        test_set(name, replicas, created, version)
    }

    fn md(version: &str) -> MachineDeployment {
        let mut md = MachineDeployment::new("md", MachineDeploymentSpec::default());
        md.spec.template.spec.version = Some(version.into());
        md
    }

    fn names<'a>(it: impl Iterator<Item = &'a MachineSet>) -> Vec<String> {
        it.filter_map(|m| m.metadata.name.clone()).collect()
    }

    #[test]
    fn current_is_the_largest_matching_set() {
        let now = Timestamp::from_second(1000).expect("ts");
        let sets = vec![
            ms("b-v1-small", 1, 10, "v1"),
            ms("a-v2", 2, 20, "v2"),
            ms("c-v1-big", 3, 30, "v1"),
            ms("d-v1-big-newer", 3, 40, "v1"),
        ];
        let plan = Plan::new(&md("v1"), sets.clone(), now);
        assert_eq!(plan.current().and_then(|m| m.metadata.name.as_deref()), Some("c-v1-big"));
        assert_eq!(names(plan.old()), ["d-v1-big-newer", "a-v2", "b-v1-small"]);
        let plan = Plan::new(&md("v3"), sets, now);
        assert!(plan.current().is_none());
        assert_eq!(plan.old().count(), 4);
    }

    #[test]
    fn rollout_after_skips_older_sets_once_passed() {
        let sets = vec![ms("old", 3, 10, "v1"), ms("newer", 1, 50, "v1")];
        let mut d = md("v1");
        let after = Some(Time(Timestamp::from_second(40).expect("ts")));
        d.spec.rollout = Some(drydock_api::capi::core::v1beta2::MachineDeploymentRolloutSpec { after, strategy: None });
        let before = Plan::new(&d, sets.clone(), Timestamp::from_second(30).expect("ts"));
        assert_eq!(before.current().and_then(|m| m.metadata.name.as_deref()), Some("old"));
        let after = Plan::new(&d, sets.clone(), Timestamp::from_second(60).expect("ts"));
        assert_eq!(after.current().and_then(|m| m.metadata.name.as_deref()), Some("newer"));
        let only_old = Plan::new(&d, vec![sets[0].clone()], Timestamp::from_second(60).expect("ts"));
        assert!(only_old.current().is_none());
    }

    #[test]
    fn scaling_records_replica_annotations() {
        let mut s = (*ms("a", 1, 1, "v1")).clone();
        scale(&mut s, 5, 5, 6);
        assert_eq!(s.spec.replicas, Some(5));
        let a = s.metadata.annotations.clone().unwrap_or_default();
        assert_eq!((a[DESIRED_REPLICAS_ANNOTATION].as_str(), a[MAX_REPLICAS_ANNOTATION].as_str()), ("5", "6"));
    }
}
