use super::delete::{Stage, stage};
use super::phase::{PhaseInputs, phase};
use super::*;
use drydock_api::capi::common::ContractVersionedObjectReference;

#[test]
fn phases() {
    let none = PhaseInputs::default();
    assert_eq!(phase(None, none), "Pending");
    let refs = PhaseInputs { has_refs: true, ..none };
    assert_eq!(phase(Some("Pending"), refs), "Provisioning");
    let infra = PhaseInputs { infrastructure_ready: true, ..refs };
    assert_eq!(phase(Some("Provisioning"), infra), "Provisioning", "an endpoint is needed too");
    let provisioned = PhaseInputs { endpoint_valid: true, ..infra };
    assert_eq!(phase(Some("Provisioning"), provisioned), "Provisioned");
    // A Cluster with neither reference but ready infrastructure and an endpoint.
    let bare = PhaseInputs { infrastructure_ready: true, endpoint_valid: true, ..none };
    assert_eq!(phase(None, bare), "Provisioned");
    assert_eq!(phase(Some("Provisioned"), PhaseInputs { failed: true, ..provisioned }), "Failed");
    assert_eq!(phase(Some("Failed"), PhaseInputs { deleting: true, failed: true, ..none }), "Deleting");
}

#[test]
fn deletion_order() {
    assert_eq!(stage(2, true, true), Stage::Descendants { remaining: 2 });
    assert_eq!(stage(0, true, true), Stage::ControlPlane);
    assert_eq!(stage(0, false, true), Stage::Infrastructure);
    assert_eq!(stage(0, false, false), Stage::Finalize);
}

#[test]
fn endpoint_and_path_are_taken_once() {
    let mut ic = InMemoryCluster::new("c", Default::default());
    ic.spec.control_plane_endpoint = Some(drydock_api::capi::common::APIEndpoint { host: "h".into(), port: 1 });
    ic.metadata.annotations = Some([(ENDPOINT_PATH_ANNOTATION.to_string(), "/clusters/ns.c".to_string())].into());
    let infra = Referenced::InMemoryCluster(Arc::new(ic));
    let mut c = Cluster::new("c", Default::default());
    take_endpoint(&mut c, &infra);
    assert_eq!(c.spec.control_plane_endpoint.as_ref().unwrap().host(), "h");
    assert_eq!(c.annotations()[ENDPOINT_PATH_ANNOTATION], "/clusters/ns.c");
    let mine = drydock_api::capi::core::v1beta2::APIEndpoint { host: Some("mine".into()), port: Some(2) };
    c.spec.control_plane_endpoint = Some(mine);
    take_endpoint(&mut c, &infra);
    assert_eq!(c.spec.control_plane_endpoint.as_ref().unwrap().host(), "mine");
}

#[test]
fn finish_emits_an_event_per_phase_change() {
    let mut before = Cluster::new("c", Default::default());
    before.spec.infrastructure_ref = Some(ContractVersionedObjectReference::default());
    let mut c = before.clone();
    let mut events = PendingEvents::default();
    finish(&before, &mut c, conditions::time_at(jiff::Timestamp::now()), &mut events);
    assert_eq!(c.status.as_ref().unwrap().phase.as_deref(), Some("Provisioning"));
    let mut again = c.clone();
    let mut none = PendingEvents::default();
    finish(&c, &mut again, conditions::time_at(jiff::Timestamp::now()), &mut none);
    assert_eq!(again, c);
    assert_eq!((events.count(), none.count()), (1, 0));
}
