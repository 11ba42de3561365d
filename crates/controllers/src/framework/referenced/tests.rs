//! Reading providers on either contract.

use super::*;
use serde_json::json;

fn r(api_version: &str, kind: &str) -> ObjectReference {
    ObjectReference { api_version: Some(api_version.into()), kind: Some(kind.into()), ..Default::default() }
}

#[test]
fn sources_by_group_and_kind() {
    assert_eq!(Source::of(&r("infrastructure.cluster.x-k8s.io/v1alpha1", "InMemoryMachine")), Source::InMemoryMachine);
    assert_eq!(Source::of(&r("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig")), Source::KubeadmConfig);
    // A store holds every version of its kind.
    for v in ["v1beta1", "v1beta2"] {
        let group = format!("infrastructure.cluster.x-k8s.io/{v}");
        assert_eq!(Source::of(&r(&group, "DevMachine")), Source::DevMachine);
        assert_eq!(Source::of(&r(&group, "DevCluster")), Source::DevCluster);
    }
    assert_eq!(Source::of(&r("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachinePool")), Source::Api);
    assert_eq!(Source::of(&r("other.io/v1", "InMemoryMachine")), Source::Api);
    assert!(!Source::Api.is_watched());
}

#[test]
fn dynamic_contract_fields() {
    let o: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "infrastructure.example.io/v1", "kind": "FooMachine",
        "metadata": {"name": "m"},
        "spec": {"providerID": "foo://1", "failureDomain": "fd1"},
        "status": {"ready": true, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                   "failureReason": "Broken", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    }))
    .unwrap();
    let o = Referenced::Dynamic(Box::new(o));
    assert!(o.provisioned());
    assert_eq!(o.provider_id().as_deref(), Some("foo://1"));
    assert_eq!(o.failure_domain().as_deref(), Some("fd1"));
    assert_eq!(o.addresses().unwrap()[0].address, "10.0.0.1");
    assert_eq!(o.failure().0.as_deref(), Some("Broken"));
    assert_eq!(o.conditions().len(), 1);
    assert!(o.control_plane_endpoint().is_none());
}

fn dynamic(v: Value) -> Referenced {
    Referenced::Dynamic(Box::new(serde_json::from_value(v).unwrap()))
}

#[test]
fn v1beta2_contract_flags_and_conditions() {
    let infra = dynamic(json!({
        "apiVersion": "infrastructure.example.io/v1beta2", "kind": "FooCluster", "metadata": {"name": "c"},
        "status": {
            "initialization": {"provisioned": true},
            "failureDomains": [{"name": "fd-b"}, {"name": "fd-a", "controlPlane": true, "attributes": {"zone": "a"}}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "Provisioned", "message": "",
                            "lastTransitionTime": "2025-01-01T00:00:00Z", "observedGeneration": 2}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "False", "severity": "Info",
                "reason": "Old", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}},
        }
    }));
    assert!(infra.provisioned());
    let fds = infra.failure_domains().unwrap();
    assert_eq!(fds.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["fd-a", "fd-b"], "sorted by name");
    assert_eq!(fds[0].control_plane, Some(true));
    assert_eq!(fds[0].attributes.as_ref().unwrap()["zone"], "a");
    let conditions = infra.conditions();
    assert_eq!(conditions[0].reason.as_deref(), Some("Old"), "the deprecated v1beta1 conditions win");

    let bootstrap = dynamic(json!({
        "apiVersion": "bootstrap.example.io/v1beta2", "kind": "FooConfig", "metadata": {"name": "b"},
        "status": {"initialization": {"dataSecretCreated": true}, "dataSecretName": "b-data",
                   "conditions": [{"type": "Ready", "status": "False", "reason": "Waiting", "message": "m",
                                   "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
    }));
    assert!(bootstrap.data_secret_created() && !bootstrap.provisioned());
    assert_eq!(bootstrap.data_secret_name().as_deref(), Some("b-data"));
    assert_eq!(bootstrap.conditions()[0].message.as_deref(), Some("m"), "v1beta2 conditions otherwise");

    let cp = dynamic(json!({
        "apiVersion": "controlplane.example.io/v1beta2", "kind": "FooControlPlane", "metadata": {"name": "cp"},
        "status": {"initialization": {"controlPlaneInitialized": true}}
    }));
    assert!(cp.control_plane_initialized() && cp.control_plane_ready());
    let waiting = dynamic(json!({
        "apiVersion": "controlplane.example.io/v1beta2", "kind": "FooControlPlane", "metadata": {"name": "cp"},
        "status": {"initialization": {"controlPlaneInitialized": false}}
    }));
    assert!(!waiting.control_plane_initialized() && !waiting.control_plane_ready());

    let machine = dynamic(json!({
        "apiVersion": "infrastructure.example.io/v1beta2", "kind": "FooMachine", "metadata": {"name": "m"},
        "spec": {"providerID": "foo://m"},
        "status": {"initialization": {"provisioned": false}, "failureDomain": "fd-a"}
    }));
    assert!(!machine.provisioned());
    assert_eq!(machine.failure_domain().as_deref(), Some("fd-a"));
}

#[test]
fn v1beta1_contract_flags() {
    let cp = dynamic(json!({
        "apiVersion": "controlplane.example.io/v1beta1", "kind": "FooControlPlane", "metadata": {"name": "cp"},
        "status": {"ready": false, "initialized": true, "failureDomains": {"fd1": {"controlPlane": true}}}
    }));
    assert!(cp.control_plane_initialized() && !cp.control_plane_ready());
    let fds = cp.failure_domains().unwrap();
    assert_eq!((fds[0].name.as_str(), fds[0].control_plane), ("fd1", Some(true)), "the map becomes the list");
    let config = dynamic(json!({
        "apiVersion": "bootstrap.example.io/v1beta1", "kind": "FooConfig", "metadata": {"name": "b"},
        "status": {"ready": true}
    }));
    assert!(config.data_secret_created());
}

#[test]
fn dev_kinds_read_typed() {
    use drydock_api::capi::dev::backend::{MachineAddress as DevAddress, MachineAddressType};
    use drydock_api::capi::dev::v1beta2::{
        APIEndpoint as DevEndpoint, DevClusterStatus, DevMachineStatus, FailureDomain, InitializationStatus,
    };
    let mut c = DevCluster::new("c", Default::default());
    c.spec.control_plane_endpoint = Some(DevEndpoint { host: Some("h".into()), port: Some(6443) });
    c.status = Some(DevClusterStatus {
        initialization: Some(InitializationStatus { provisioned: Some(true) }),
        failure_domains: Some(vec![FailureDomain { name: "fd1".into(), control_plane: Some(true), attributes: None }]),
        ..Default::default()
    });
    let c = Referenced::DevCluster(Arc::new(c));
    assert!(c.provisioned());
    assert_eq!(c.control_plane_endpoint().map(|e| (e.host, e.port)), Some(("h".to_string(), 6443)));
    assert_eq!(c.failure_domains().unwrap()[0].control_plane, Some(true));
    let mut m = DevMachine::new("m", Default::default());
    m.spec.provider_id = Some("in-memory://m".into());
    m.status = Some(DevMachineStatus {
        addresses: Some(vec![DevAddress { type_: MachineAddressType::InternalIP, address: "10.0.0.1".into() }]),
        ..Default::default()
    });
    let m = Referenced::DevMachine(Arc::new(m));
    assert!(!m.provisioned());
    assert_eq!(m.provider_id().as_deref(), Some("in-memory://m"));
    assert_eq!(m.addresses().unwrap()[0].type_, "InternalIP");
}
