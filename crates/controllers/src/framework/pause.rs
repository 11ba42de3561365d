//! Pausing: one model for every controller (Cluster, Machine, MachineSet, MachineDeployment,
//! KubeadmControlPlane, MachineHealthCheck).
//!
//! | mechanism | what stops | what goes on |
//! |---|---|---|
//! | `cluster.x-k8s.io/paused` annotation on an object | all reconciliation of that object by its own controller | its children: the annotation is not inherited (a paused MachineDeployment's sets still keep their Machines) |
//! | Cluster `spec.paused: true` | every object of that cluster | nothing |
//! | MachineDeployment `spec.paused: true` | the rollout only: no new MachineSet, old sets are not scaled down, no cleanup of old sets | in-place propagation to the current set, scaling to `spec.replicas` (proportionally across the sets), status, health checks and remediation |
//!
//! The annotation on a Cluster pauses the Cluster object only, like on any other object;
//! pausing a whole cluster is `spec.paused`.
//!
//! A paused object carries a `Paused` condition, True, with reason `ClusterPaused`,
//! `AnnotationPaused` or `RolloutPaused` (in that precedence) and a message saying what
//! holds it. Setting it is the only write made while an object is fully paused; it is
//! removed when the object resumes. Objects skipped while their Cluster was paused are
//! reconciled again when it resumes (the Cluster watch notices the transition).

use std::collections::HashSet;

use drydock_api::capi::condition_types::{
    ANNOTATION_PAUSED_REASON, CLUSTER_PAUSED_REASON, PAUSED, ROLLOUT_PAUSED_REASON,
};
use drydock_api::capi::conditions::{Condition, HasConditions, STATUS_TRUE};
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::keys::{PAUSED_ANNOTATION, has_annotation};
use drydock_api::capi::v1beta2_conditions::names::{NOT_PAUSED_REASON, PAUSED as V1BETA2_PAUSED, PAUSED_REASON};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use parking_lot::Mutex;

use crate::framework::runner::key_of;

/// Why an object is paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// The object's Cluster has `spec.paused`: nothing is reconciled.
    Cluster,
    /// The object has the paused annotation: nothing is reconciled.
    Annotation,
    /// A MachineDeployment with `spec.paused`: only the rollout is held.
    Rollout,
}

impl Pause {
    /// What holds the object, most encompassing first. `rollout_paused` is a
    /// MachineDeployment's `spec.paused` (false for other kinds).
    pub fn of(cluster: &Cluster, meta: &ObjectMeta, rollout_paused: bool) -> Option<Pause> {
        if cluster.spec.paused == Some(true) {
            Some(Pause::Cluster)
        } else if has_annotation(meta.annotations.as_ref(), PAUSED_ANNOTATION) {
            Some(Pause::Annotation)
        } else if rollout_paused {
            Some(Pause::Rollout)
        } else {
            None
        }
    }

    /// True when the object's reconciliation stops entirely (not just its rollout).
    pub fn stops_everything(self) -> bool {
        self != Pause::Rollout
    }

    fn reason(self) -> &'static str {
        match self {
            Pause::Cluster => CLUSTER_PAUSED_REASON,
            Pause::Annotation => ANNOTATION_PAUSED_REASON,
            Pause::Rollout => ROLLOUT_PAUSED_REASON,
        }
    }

    fn message(self, cluster: &str) -> String {
        match self {
            Pause::Cluster => format!("Cluster {cluster} is paused (spec.paused): nothing is reconciled"),
            Pause::Annotation => {
                format!("The {PAUSED_ANNOTATION} annotation is set: nothing is reconciled")
            }
            Pause::Rollout => "spec.paused is set: rollouts are held; scaling, in-place \
                               propagation and status go on"
                .to_string(),
        }
    }
}

/// True when the object must not be reconciled at all now.
pub fn is_paused(cluster: &Cluster, meta: &ObjectMeta) -> bool {
    Pause::of(cluster, meta, false).is_some()
}

/// Sets the `Paused` condition for `pause`, or removes it when not paused, and the v1beta2
/// one ([`set_v1beta2_condition`]).
pub fn set_condition<K: HasConditions + HasV1Beta2Conditions>(
    obj: &mut K,
    pause: Option<Pause>,
    cluster: &Cluster,
    now: Time,
) {
    set_conditions(obj, pause, cluster.metadata.name.as_deref().unwrap_or_default(), now);
}

/// The Paused conditions of an object no Cluster owns (a ClusterClass): only the paused
/// annotation pauses it. Returns whether it is paused.
pub fn set_condition_unowned<K: HasConditions + HasV1Beta2Conditions>(
    obj: &mut K,
    meta: &ObjectMeta,
    now: Time,
) -> bool {
    let pause = has_annotation(meta.annotations.as_ref(), PAUSED_ANNOTATION).then_some(Pause::Annotation);
    set_conditions(obj, pause, "", now);
    pause.is_some()
}

fn set_conditions<K: HasConditions + HasV1Beta2Conditions>(
    obj: &mut K,
    pause: Option<Pause>,
    cluster: &str,
    now: Time,
) {
    set_v1beta2(obj, pause.map(|p| (p, cluster)), &now);
    match pause {
        Some(p) => obj.set_condition(Condition {
            type_: PAUSED.to_string(),
            status: STATUS_TRUE.to_string(),
            severity: None,
            last_transition_time: now,
            reason: Some(p.reason().to_string()),
            message: Some(p.message(cluster)),
        }),
        None => {
            if obj.get_condition(PAUSED).is_some() {
                obj.delete_condition(PAUSED);
            }
        }
    }
}

/// Sets the v1beta2 `Paused` alone (for kinds without a v1beta1 one): True while
/// reconciliation stops, False otherwise (a held rollout is not a paused object: it is still
/// reconciled).
pub fn set_v1beta2_condition<K: HasV1Beta2Conditions>(obj: &mut K, pause: Option<(Pause, &Cluster)>, now: &Time) {
    set_v1beta2(obj, pause.map(|(p, c)| (p, c.metadata.name.as_deref().unwrap_or_default())), now);
}

fn set_v1beta2<K: HasV1Beta2Conditions>(obj: &mut K, pause: Option<(Pause, &str)>, now: &Time) {
    let v1beta2 = match pause.filter(|(p, _)| p.stops_everything()) {
        Some((p, cluster)) => Observed::true_(V1BETA2_PAUSED, PAUSED_REASON).with_message(p.message(cluster)),
        None => Observed::false_(V1BETA2_PAUSED, NOT_PAUSED_REASON, ""),
    };
    obj.set_v1beta2(v1beta2, now);
}

/// A Cluster pauses all its objects with `spec.paused`. (Its paused annotation pauses the
/// Cluster object alone, like the annotation on any object.)
pub fn cluster_paused(c: &Cluster) -> bool {
    c.spec.paused == Some(true)
}

/// Remembers which Clusters were seen paused, to notice when one pauses or resumes.
#[derive(Default)]
pub struct ClusterPauses {
    paused: Mutex<HashSet<String>>,
}

impl ClusterPauses {
    /// Records the Cluster's state; true when it changed (paused, or resumed). A Cluster
    /// first seen paused counts as a change: its objects must show the condition.
    pub fn changed(&self, cluster: &Cluster) -> bool {
        let key = key_of(cluster);
        let mut paused = self.paused.lock();
        if cluster.spec.paused == Some(true) { paused.insert(key) } else { paused.remove(&key) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }
    use drydock_api::capi::core::v1beta2::ClusterSpec;
    use drydock_api::capi::core::v1beta2::{MachineSet, MachineSetSpec};

    fn annotated() -> ObjectMeta {
        ObjectMeta { annotations: Some([(PAUSED_ANNOTATION.to_string(), String::new())].into()), ..Default::default() }
    }

    #[test]
    fn transitions_both_ways_once() {
        let mut c = Cluster::new("c1", ClusterSpec::default());
        c.metadata.namespace = Some("ns".into());
        let p = ClusterPauses::default();
        assert!(!p.changed(&c));
        c.spec.paused = Some(true);
        assert!(is_paused(&c, &ObjectMeta::default()));
        assert!(p.changed(&c));
        assert!(!p.changed(&c));
        c.spec.paused = None;
        assert!(p.changed(&c));
        assert!(!p.changed(&c));
        assert!(is_paused(&c, &annotated()));
    }

    #[test]
    fn precedence_and_scope() {
        let mut c = Cluster::new("c1", ClusterSpec::default());
        let plain = ObjectMeta::default();
        assert_eq!(Pause::of(&c, &plain, false), None);
        assert_eq!(Pause::of(&c, &plain, true), Some(Pause::Rollout));
        assert_eq!(Pause::of(&c, &annotated(), true), Some(Pause::Annotation));
        // The annotation on the Cluster pauses the Cluster object only.
        c.metadata.annotations = annotated().annotations;
        assert_eq!(Pause::of(&c, &plain, false), None);
        c.spec.paused = Some(true);
        assert_eq!(Pause::of(&c, &annotated(), true), Some(Pause::Cluster));
        assert!(Pause::Cluster.stops_everything());
        assert!(!Pause::Rollout.stops_everything());
    }

    #[test]
    fn condition_is_set_and_removed() {
        let c = Cluster::new("c1", ClusterSpec::default());
        let mut ms = MachineSet::new("ms", MachineSetSpec::default());
        set_condition(&mut ms, Some(Pause::Annotation), &c, now());
        let cond = ms.get_condition(PAUSED).expect("paused");
        assert!(cond.is_true());
        assert_eq!(cond.reason.as_deref(), Some(ANNOTATION_PAUSED_REASON));
        let before = ms.clone();
        set_condition(&mut ms, Some(Pause::Annotation), &c, now());
        assert_eq!(ms, before, "setting it again changes nothing");
        set_condition(&mut ms, None, &c, now());
        assert!(ms.get_condition(PAUSED).is_none());
        let untouched = ms.clone();
        set_condition(&mut ms, None, &c, now());
        assert_eq!(ms, untouched);
    }
}
