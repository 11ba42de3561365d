//! In-place propagation from a MachineSet to its existing Machines and their
//! infrastructure machines and bootstrap configs: labels, annotations, the node timeouts,
//! readiness gates and minReadySeconds change without replacing anything. They are server-side applied (see
//! [`crate::framework::apply`]) under upstream's field managers, so what the set stops
//! propagating is removed and what others set is kept.

use drydock_api::capi::core::v1beta2::{Machine, MachineSet};
use drydock_api::capi::keys::MACHINE_FINALIZER;

use crate::framework::propagate::{InPlaceSpec, MachineFields, NodeTimeouts};
use crate::framework::write;

/// The field manager of what the set applies to its Machines.
pub const MANAGER: &str = "capi-machineset";
/// The field manager of the labels and annotations the set applies to its Machines'
/// infrastructure machines and bootstrap configs.
pub const METADATA_MANAGER: &str = "capi-machineset-metadata";

/// What the set propagates to each of its Machines, computed once per reconcile.
pub fn propagated(ms: &MachineSet) -> MachineFields {
    let tpl = &ms.spec.template.spec;
    MachineFields {
        labels: super::machines::machine_labels(ms),
        annotations: super::machines::machine_annotations(ms),
        timeouts: NodeTimeouts::from_seconds(tpl.deletion.as_ref()),
        in_place: InPlaceSpec {
            readiness_gates: tpl.readiness_gates.clone(),
            min_ready_seconds: tpl.min_ready_seconds,
        },
    }
}

/// True when a live Machine lacks the Machine finalizer.
pub fn needs_finalizer(m: &Machine) -> bool {
    !m.metadata.finalizers.iter().flatten().any(|f| f == MACHINE_FINALIZER)
}

/// A live Machine with the finalizer added.
pub fn with_finalizer(m: &Machine) -> Machine {
    let mut want = m.clone();
    write::add_finalizer(&mut want, MACHINE_FINALIZER);
    want
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::MachineSetSpec;
    use drydock_api::capi::core::v1beta2::{MachineDeletionSpec, MachineReadinessGate};
    use drydock_api::capi::keys::SET_NAME_LABEL;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use serde_json::json;

    fn ms() -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec { cluster_name: "c1".into(), ..Default::default() });
        ms.spec.template.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        ms.spec.template.spec.deletion = Some(deletion(Some(300), None, None));
        ms
    }

    fn deletion(drain: Option<i32>, volume_detach: Option<i32>, node: Option<i32>) -> MachineDeletionSpec {
        MachineDeletionSpec {
            node_drain_timeout_seconds: drain,
            node_volume_detach_timeout_seconds: volume_detach,
            node_deletion_timeout_seconds: node,
        }
    }

    fn machine() -> Machine {
        let mut m = Machine::new("m", Default::default());
        m.metadata.namespace = Some("ns".into());
        m
    }

    #[test]
    fn config_holds_only_the_owned_fields() {
        let ms = ms();
        let mut m = machine();
        m.metadata.labels = Some([("user".to_string(), "mine".to_string())].into());
        m.spec.deletion = Some(deletion(None, Some(60), None));
        m.spec.version = Some("v1.30.2".into());
        let p = propagated(&ms);
        assert_eq!(
            p.config(&m).body(),
            &json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                "metadata": {"name": "m", "namespace": "ns", "labels": {
                    "role": "worker", SET_NAME_LABEL: "ms", "cluster.x-k8s.io/cluster-name": "c1",
                }},
                "spec": {"deletion": {"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 10}},
            })
        );
        assert!(p.would_change(&m, MANAGER));
    }

    #[test]
    fn applies_only_when_something_would_change() {
        let ms = ms();
        let p = propagated(&ms);
        let mut m = machine();
        m.metadata.labels = Some(p.labels.clone());
        m.metadata.labels.as_mut().expect("labels").insert("user".into(), "mine".into());
        m.spec.deletion = Some(deletion(Some(300), None, Some(10)));
        assert!(!p.would_change(&m, MANAGER));
        // A timeout the set never applied is left alone...
        m.spec.deletion = Some(deletion(Some(300), Some(60), Some(10)));
        assert!(!p.would_change(&m, MANAGER));
        // ...one it applied before is given up (removed) by the next apply.
        let owned = json!({"f:metadata": {"f:labels": {"f:role": {}}}, "f:spec": {"f:deletion": {"f:nodeVolumeDetachTimeoutSeconds": {}}}});
        m.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some(MANAGER.into()),
            operation: Some("Apply".into()),
            fields_v1: Some(FieldsV1(owned)),
            ..Default::default()
        }]);
        assert!(p.would_change(&m, MANAGER));
        m.spec.deletion = Some(deletion(Some(300), None, Some(10)));
        assert!(!p.would_change(&m, MANAGER));
        // A template label removed: the set applied it, so it goes.
        let mut fewer = ms.clone();
        fewer.spec.template.metadata.labels = None;
        assert!(propagated(&fewer).would_change(&m, MANAGER));
    }

    #[test]
    fn deleting_machines_only_get_timeouts_and_finalizers_are_added_once() {
        let ms = ms();
        let m = machine();
        let p = propagated(&ms);
        let want = p.deleting(&m);
        assert_eq!(want.metadata.labels, None);
        assert_eq!(want.spec.deletion.and_then(|d| d.node_drain_timeout_seconds), Some(300));
        assert!(needs_finalizer(&m));
        let f = with_finalizer(&m);
        assert_eq!(f.metadata.finalizers, Some(vec![MACHINE_FINALIZER.to_string()]));
        assert!(!needs_finalizer(&f));
    }

    #[test]
    fn readiness_gates_and_min_ready_seconds_change_in_place() {
        let mut ms = ms();
        let gates = vec![MachineReadinessGate { condition_type: "NetworkReady".into(), polarity: None }];
        ms.spec.template.spec.readiness_gates = Some(gates.clone());
        ms.spec.template.spec.min_ready_seconds = Some(30);
        let p = propagated(&ms);
        let mut m = machine();
        m.metadata.labels = Some(p.labels.clone());
        m.spec.deletion = Some(deletion(Some(300), None, Some(10)));
        assert!(p.would_change(&m, MANAGER), "the Machine lacks the gates and minReadySeconds");
        let body = p.config(&m).body().clone();
        assert_eq!(body["spec"]["readinessGates"], json!([{"conditionType": "NetworkReady"}]));
        assert_eq!(body["spec"]["minReadySeconds"], 30);
        m.spec.readiness_gates = Some(gates);
        m.spec.min_ready_seconds = Some(30);
        assert!(!p.would_change(&m, MANAGER));
        // Unset on the template: whatever the Machine has is left alone.
        let mut plain = ms.clone();
        plain.spec.template.spec.readiness_gates = None;
        plain.spec.template.spec.min_ready_seconds = None;
        assert!(!propagated(&plain).would_change(&m, MANAGER));
    }
}
