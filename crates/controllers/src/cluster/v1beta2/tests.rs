use super::*;
use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::conditions::time_at;
use drydock_api::capi::core::v1beta2::ClusterAvailabilityGate;
use drydock_api::capi::kubeadm::v1beta2::{KubeadmControlPlane, KubeadmControlPlaneInitializationStatus};
use kube::api::DynamicObject;
use serde_json::json;

fn now() -> Time {
    time_at(jiff::Timestamp::from_second(1_700_000_000).unwrap())
}

fn with(conditions: &[Cond]) -> Vec<Condition> {
    let mut out = Vec::new();
    for c in conditions {
        v2::set(&mut out, c.clone(), Some(1), &now());
    }
    out
}

fn md(name: &str, conditions: &[Cond]) -> Arc<MachineDeployment> {
    let mut md = MachineDeployment::new(name, Default::default());
    md.spec.replicas = Some(2);
    let s = md.status.get_or_insert_with(Default::default);
    s.replicas = Some(2);
    s.conditions = Some(with(conditions));
    s.ready_replicas = Some(2);
    s.available_replicas = Some(1);
    s.up_to_date_replicas = Some(2);
    Arc::new(md)
}

fn machine(name: &str, conditions: &[Cond]) -> Arc<Machine> {
    let mut m = Machine::new(name, Default::default());
    *m.v1beta2_conditions_mut() = with(conditions);
    Arc::new(m)
}

fn cluster() -> Cluster {
    let mut c = Cluster::new("c1", Default::default());
    c.spec.infrastructure_ref = Some(ContractVersionedObjectReference {
        api_group: "infrastructure.cluster.x-k8s.io".into(),
        kind: "GenericCluster".into(),
        name: "c1".into(),
    });
    c.spec.control_plane_ref = Some(ContractVersionedObjectReference {
        api_group: "controlplane.cluster.x-k8s.io".into(),
        kind: "KubeadmControlPlane".into(),
        name: "cp".into(),
    });
    c
}

fn dynamic(data: serde_json::Value) -> Referenced {
    let mut o = DynamicObject::new("c1", &kube::api::ApiResource::erase::<Cluster>(&()));
    o.data = data;
    Referenced::Dynamic(Box::new(o))
}

fn kcp(conditions: &[Cond]) -> Referenced {
    let mut k = KubeadmControlPlane::new("cp", Default::default());
    k.spec.replicas = Some(3);
    let s = k.status.get_or_insert_with(Default::default);
    s.replicas = Some(3);
    s.initialization = Some(KubeadmControlPlaneInitializationStatus { control_plane_initialized: Some(true) });
    s.conditions = Some(with(conditions));
    s.ready_replicas = Some(3);
    s.available_replicas = Some(3);
    s.up_to_date_replicas = Some(2);
    Referenced::KubeadmControlPlane(Arc::new(k))
}

fn condition<'a>(c: &'a Cluster, t: &str) -> (&'a str, &'a str, &'a str) {
    let c = c.v1beta2_condition(t).unwrap_or_else(|| panic!("{t} not set"));
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[test]
fn workers_available_aggregates_machine_deployments() {
    assert_eq!(workers_available(&[]).reason, NO_WORKERS_REASON);
    assert_eq!(workers_available(&[]).status, Status::True);
    let up = md("md-a", &[Cond::true_(AVAILABLE, AVAILABLE_REASON)]);
    let down = md("md-b", &[Cond::false_(AVAILABLE, NOT_AVAILABLE_REASON, "1 available, 2 wanted")]);
    let w = workers_available(&[up.clone(), down]);
    assert_eq!((w.status, w.reason.as_str()), (Status::False, NOT_AVAILABLE_REASON));
    assert_eq!(w.message, "* MachineDeployment md-b: 1 available, 2 wanted");
    let unknown = workers_available(&[up, md("md-c", &[])]);
    assert_eq!((unknown.status, unknown.reason.as_str()), (Status::Unknown, AVAILABLE_UNKNOWN_REASON));
}

#[test]
fn available_summarises_its_inputs_and_gates() {
    let mut c = cluster();
    let fine = [
        deleting(None),
        Cond::true_(REMOTE_CONNECTION_PROBE, PROBE_SUCCEEDED_REASON),
        Cond::true_(INFRASTRUCTURE_READY, READY_REASON),
        Cond::true_(CONTROL_PLANE_AVAILABLE, AVAILABLE_REASON),
        Cond::true_(WORKERS_AVAILABLE, NO_WORKERS_REASON),
    ];
    for f in &fine {
        c.set_v1beta2(f.clone(), &now());
    }
    assert_eq!(available(&c).status, Status::True, "TopologyReconciled counts only when present");
    c.spec.availability_gates =
        Some(vec![ClusterAvailabilityGate { condition_type: "NetworkReady".into(), polarity: None }]);
    let a = available(&c);
    assert_eq!((a.status, a.message.as_str()), (Status::Unknown, "* NetworkReady: Condition not yet reported"));
    c.set_v1beta2(Cond::true_("NetworkReady", "Ready"), &now());
    c.set_v1beta2(deleting(Some((WAITING_FOR_WORKERS_DELETION_REASON, "* Machines: w1".into()))), &now());
    let a = available(&c);
    assert_eq!((a.status, a.reason.as_str()), (Status::False, NOT_AVAILABLE_REASON));
    assert_eq!(a.message, "* Deleting: * Machines: w1");
}

#[test]
fn mirrors_v1beta2_conditions_or_falls_back_on_the_contract() {
    let c = cluster();
    // A v1beta2 infrastructure cluster reporting Ready.
    let reported = dynamic(json!({"status": {"initialization": {"provisioned": false},
        "conditions": [{"type": "Ready", "status": "False", "reason": "Provisioning", "message": "creating LB",
                        "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}));
    let r = infrastructure_ready(&c, Some(&reported));
    assert_eq!((r.status, r.reason.as_str(), r.message.as_str()), (Status::False, "Provisioning", "creating LB"));
    // A v1beta1 provider: its status.ready.
    let ready = infrastructure_ready(&c, Some(&dynamic(json!({"status": {"ready": true}}))));
    assert_eq!((ready.status, ready.reason.as_str()), (Status::True, READY_REASON));
    let missing = infrastructure_ready(&c, None);
    assert_eq!((missing.status, missing.reason.as_str()), (Status::Unknown, OBJECT_DOES_NOT_EXIST_REASON));
    assert_eq!(missing.message, "GenericCluster does not exist");
    // The control plane's own Available.
    let cp = kcp(&[Cond::true_(AVAILABLE, AVAILABLE_REASON)]);
    let reported = reported_conditions(&cp);
    let a = control_plane_available(&c, Some(&cp), reported.as_deref());
    assert_eq!((a.status, a.reason.as_str()), (Status::True, AVAILABLE_REASON));
}

#[test]
fn update_rolls_up_and_counts() {
    let mut c = cluster();
    c.initialization_mut().control_plane_initialized = Some(true);
    let cp = kcp(&[
        Cond::true_(AVAILABLE, AVAILABLE_REASON),
        Cond::new(ROLLING_OUT, Status::True, ROLLING_OUT_REASON, "Rolling out 1 not up-to-date replicas\n* Test"),
        Cond::false_(SCALING_UP, NOT_SCALING_UP_REASON, ""),
    ]);
    let infra = dynamic(json!({"status": {"ready": true}}));
    let mds = [
        md(
            "md-b",
            &[
                Cond::true_(AVAILABLE, AVAILABLE_REASON),
                Cond::new(SCALING_UP, Status::True, SCALING_UP_REASON, "Scaling up from 1 to 2 replicas"),
            ],
        ),
        md(
            "md-a",
            &[Cond::true_(AVAILABLE, AVAILABLE_REASON), Cond::unknown(ROLLING_OUT, ROLLING_OUT_UNKNOWN_REASON, "")],
        ),
    ];
    let cp_machines = [
        machine("cp-1", &[Cond::true_(READY, READY_REASON), Cond::true_(UP_TO_DATE, UP_TO_DATE_REASON)]),
        machine("cp-2", &[Cond::false_(READY, NOT_READY_REASON, "booting")]),
    ];
    let workers = [machine("w-1", &[Cond::true_(READY, READY_REASON)])];
    let i = Inputs {
        infra: Some(&infra),
        control_plane: Some(&cp),
        control_plane_machines: &cp_machines,
        worker_machines: &workers,
        machine_deployments: &mds,
        machine_sets: &[],
        deleting: None,
        probe: Verdict::Succeeded,
    };
    update(&mut c, &i, &now());
    assert_eq!(
        condition(&c, ROLLING_OUT),
        ("True", ROLLING_OUT_REASON, "* KubeadmControlPlane cp:\n  Rolling out 1 not up-to-date replicas\n  * Test")
    );
    assert_eq!(
        condition(&c, SCALING_UP),
        ("True", SCALING_UP_REASON, "* MachineDeployment md-b: Scaling up from 1 to 2 replicas")
    );
    assert_eq!(condition(&c, SCALING_DOWN), ("False", NOT_SCALING_DOWN_REASON, ""));
    assert_eq!(condition(&c, CONTROL_PLANE_MACHINES_READY), ("False", NOT_READY_REASON, "* Machine cp-2: booting"));
    assert_eq!(
        condition(&c, CONTROL_PLANE_MACHINES_UP_TO_DATE),
        ("True", UP_TO_DATE_REASON, ""),
        "only reporting Machines"
    );
    assert_eq!(condition(&c, WORKER_MACHINES_UP_TO_DATE), ("True", NO_REPLICAS_REASON, ""));
    assert_eq!(condition(&c, WORKER_MACHINES_READY).0, "True");
    assert_eq!(condition(&c, REMOTE_CONNECTION_PROBE), ("True", PROBE_SUCCEEDED_REASON, ""));
    assert_eq!(condition(&c, CONTROL_PLANE_INITIALIZED).0, "True");
    assert_eq!(condition(&c, AVAILABLE), ("True", AVAILABLE_REASON, ""));
    let v = c.status.clone().unwrap();
    let cpc = v.control_plane.unwrap();
    assert_eq!((cpc.desired_replicas, cpc.replicas, cpc.up_to_date_replicas), (Some(3), Some(3), Some(2)));
    let w = v.workers.unwrap();
    assert_eq!(
        (w.desired_replicas, w.replicas, w.ready_replicas, w.available_replicas),
        (Some(4), Some(4), Some(4), Some(2))
    );
    let before = c.clone();
    update(&mut c, &i, &now());
    assert_eq!(c, before, "recomputing changes nothing");
}

#[test]
fn the_topology_condition_is_left_to_the_topology_controller_and_counts_for_available() {
    let mut c = Cluster::new("c1", Default::default());
    c.spec.topology =
        Some(serde_json::from_value(json!({"classRef": {"name": "quick-start"}, "version": "v1.33.0"})).unwrap());
    let i = Inputs {
        infra: None,
        control_plane: None,
        control_plane_machines: &[],
        worker_machines: &[],
        machine_deployments: &[],
        machine_sets: &[],
        deleting: None,
        probe: Verdict::Succeeded,
    };
    update(&mut c, &i, &now());
    assert!(c.v1beta2_conditions().iter().all(|c| c.type_ != TOPOLOGY_RECONCILED), "not set by the Cluster controller");
    c.set_v1beta2(Cond::false_(TOPOLOGY_RECONCILED, "ClusterCreating", "creating the control plane"), &now());
    update(&mut c, &i, &now());
    assert_eq!(condition(&c, TOPOLOGY_RECONCILED), ("False", "ClusterCreating", "creating the control plane"), "kept");
    let available = available(&c);
    assert_eq!(available.status, Status::False);
    assert!(available.message.contains("creating the control plane"), "{}", available.message);
}
