//! In-place propagation from a MachineSet to its existing Machines and their
//! infrastructure machines and bootstrap configs: labels, annotations and the node
//! timeouts change without replacing anything (see [`crate::framework::propagate`]).

use std::collections::BTreeMap;

use drydock_api::capi::core::{Machine, MachineSet};
use drydock_api::capi::keys::MACHINE_FINALIZER;

use crate::framework::propagate::{NodeTimeouts, contains, merge_into};
use crate::framework::write;

/// What the set propagates to each of its Machines, computed once per reconcile.
pub struct Propagated<'a> {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub timeouts: NodeTimeouts<'a>,
}

impl<'a> Propagated<'a> {
    pub fn new(ms: &'a MachineSet) -> Self {
        let tpl = &ms.spec.template.spec;
        Self {
            labels: super::machines::machine_labels(ms),
            annotations: super::machines::machine_annotations(ms),
            timeouts: NodeTimeouts::new(
                tpl.node_drain_timeout.as_deref(),
                tpl.node_volume_detach_timeout.as_deref(),
                tpl.node_deletion_timeout.as_deref(),
            ),
        }
    }

    /// True when the Machine already has everything (checked without copying it: this
    /// runs for every Machine on every reconcile).
    pub fn is_applied(&self, m: &Machine) -> bool {
        let timeouts = self.timeouts.is_applied(&m.spec);
        if m.metadata.deletion_timestamp.is_some() {
            return timeouts;
        }
        timeouts
            && contains(m.metadata.labels.as_ref(), &self.labels)
            && contains(m.metadata.annotations.as_ref(), &self.annotations)
            && m.metadata.finalizers.iter().flatten().any(|f| f == MACHINE_FINALIZER)
    }

    /// The Machine as the set wants it. A deleting Machine only gets the timeouts (they
    /// govern its deletion); others also get the labels, annotations and finalizer.
    pub fn apply(&self, m: &Machine) -> Machine {
        let mut want = m.clone();
        if m.metadata.deletion_timestamp.is_none() {
            merge_into(&mut want.metadata.labels, &self.labels);
            merge_into(&mut want.metadata.annotations, &self.annotations);
            write::add_finalizer(&mut want, MACHINE_FINALIZER);
        }
        self.timeouts.apply(&mut want.spec);
        want
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::{MachineSetSpec, MachineSpec};
    use drydock_api::capi::keys::SET_NAME_LABEL;

    fn ms() -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec { cluster_name: "c1".into(), ..Default::default() });
        ms.spec.template.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        ms.spec.template.spec.node_drain_timeout = Some("5m".into());
        ms
    }

    #[test]
    fn adds_labels_keeps_foreign_ones_and_sets_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.labels = Some([("user".to_string(), "mine".to_string())].into());
        m.spec.node_volume_detach_timeout = Some("1m".into());
        let p = Propagated::new(&ms);
        assert!(!p.is_applied(&m));
        let want = p.apply(&m);
        assert!(p.is_applied(&want));
        let labels = want.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["user"], "mine");
        assert_eq!(labels["role"], "worker");
        assert_eq!(labels[SET_NAME_LABEL], "ms");
        assert_eq!(want.metadata.finalizers, Some(vec![MACHINE_FINALIZER.to_string()]));
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
        assert_eq!(want.spec.node_volume_detach_timeout, None);
        assert_eq!(want.spec.node_deletion_timeout.as_deref(), Some("10s"));
        // Propagating again changes nothing.
        assert_eq!(p.apply(&want), want);
    }

    #[test]
    fn deleting_machines_only_get_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.deletion_timestamp = Some(drydock_api::capi::conditions::time_at(jiff::Timestamp::now()));
        let p = Propagated::new(&ms);
        let want = p.apply(&m);
        assert!(p.is_applied(&want));
        assert_eq!(want.metadata.labels, None);
        assert_eq!(want.metadata.finalizers, None);
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
    }
}
