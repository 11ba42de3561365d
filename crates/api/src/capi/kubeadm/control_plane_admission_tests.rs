use serde_json::{Value, json};

use super::*;
use crate::capi::testutil::{admit, error_fields, merged};
use crate::capi::typed::Typed;

fn kcp() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
        "metadata": { "name": "cp", "namespace": "ns", "labels": { "cluster.x-k8s.io/cluster-name": "c1" } },
        "spec": {
            "replicas": 3,
            "version": "1.30.2",
            "machineTemplate": {
                "infrastructureRef": { "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachineTemplate", "name": "cp" }
            },
            "kubeadmConfigSpec": {
                "clusterConfiguration": { "apiServer": { "certSANs": ["localhost"] }, "networking": { "podSubnet": "192.168.0.0/16" } },
                "initConfiguration": { "nodeRegistration": {} },
                "joinConfiguration": { "nodeRegistration": {} }
            }
        }
    })
}

#[test]
fn defaults() {
    let no_replicas = merged(&kcp(), &json!({ "spec": { "replicas": null } }));
    let out = admit(&Typed(KubeadmControlPlaneAdmission), no_replicas, None).unwrap();
    let spec = &out["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["version"], "v1.30.2");
    assert_eq!(spec["rolloutStrategy"], json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } }));
    assert_eq!(spec["machineTemplate"]["infrastructureRef"]["namespace"], "ns");
    assert_eq!(spec["kubeadmConfigSpec"]["format"], "cloud-config");
    assert_eq!(spec["kubeadmConfigSpec"]["initConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");
}

#[test]
fn invalid_objects_are_rejected_at_the_right_field() {
    let cases = [
        (json!({ "spec": { "replicas": 0 } }), vec!["spec.replicas"]),
        (json!({ "spec": { "replicas": 2 } }), vec!["spec.replicas"]),
        (json!({ "spec": { "version": "1.30" } }), vec!["spec.version"]),
        (
            json!({ "spec": { "machineTemplate": { "infrastructureRef": { "name": "" } } } }),
            vec!["spec.machineTemplate.infrastructureRef.name"],
        ),
        (
            json!({ "spec": { "machineTemplate": { "infrastructureRef": { "namespace": "other" } } } }),
            vec!["spec.machineTemplate.infrastructureRef.namespace"],
        ),
        (
            json!({ "spec": { "machineTemplate": { "nodeDrainTimeout": "1 hour" } } }),
            vec!["spec.machineTemplate.nodeDrainTimeout"],
        ),
        (
            json!({ "spec": { "rolloutBefore": { "certificatesExpiryDays": 3 } } }),
            vec!["spec.rolloutBefore.certificatesExpiryDays"],
        ),
        (json!({ "spec": { "rolloutStrategy": { "type": "Recreate" } } }), vec!["spec.rolloutStrategy.type"]),
        (
            json!({ "spec": { "rolloutStrategy": { "rollingUpdate": { "maxSurge": 2 } } } }),
            vec!["spec.rolloutStrategy.rollingUpdate.maxSurge"],
        ),
        (
            json!({ "spec": { "replicas": 1, "rolloutStrategy": { "rollingUpdate": { "maxSurge": 0 } } } }),
            vec!["spec.rolloutStrategy.rollingUpdate.maxSurge"],
        ),
        (
            json!({ "spec": { "remediationStrategy": { "retryPeriod": "often" } } }),
            vec!["spec.remediationStrategy.retryPeriod"],
        ),
        (
            json!({ "spec": { "machineNamingStrategy": { "template": "{{ .kubeadmControlPlane.name }}" } } }),
            vec!["spec.machineNamingStrategy.template"],
        ),
        (json!({ "spec": { "kubeadmConfigSpec": { "ignition": {} } } }), vec!["spec.kubeadmConfigSpec.ignition"]),
    ];
    for (patch, want) in cases {
        let r = admit(&Typed(KubeadmControlPlaneAdmission), merged(&kcp(), &patch), None);
        assert_eq!(error_fields(&r), want, "{patch}");
    }
}

#[test]
fn even_replicas_are_fine_with_external_etcd() {
    let external = json!({ "spec": { "replicas": 2, "kubeadmConfigSpec": { "clusterConfiguration": { "etcd": { "external": {
        "endpoints": ["https://etcd:2379"], "caFile": "/ca", "certFile": "/crt", "keyFile": "/key"
    } } } } } });
    assert!(admit(&Typed(KubeadmControlPlaneAdmission), merged(&kcp(), &external), None).is_ok());
}

#[test]
fn allowed_updates() {
    let a = Typed(KubeadmControlPlaneAdmission);
    let old = admit(&a, kcp(), None).unwrap();
    let allowed = [
        json!({ "spec": { "version": "v1.30.9" } }),
        json!({ "spec": { "version": "v1.31.0" } }),
        json!({ "spec": { "replicas": 5 } }),
        json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "apiServer": { "certSANs": ["localhost", "10.0.0.1"] } } } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "files": [ { "path": "/etc/motd", "content": "hi" } ], "preKubeadmCommands": ["true"] } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "etcd": { "local": { "imageTag": "3.5.15-0" } }, "dns": { "imageTag": "v1.11.3" } } } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "joinConfiguration": { "nodeRegistration": { "kubeletExtraArgs": { "v": "4" } } } } } }),
        json!({ "spec": { "machineTemplate": { "infrastructureRef": { "name": "cp-v2" }, "metadata": { "labels": { "a": "b" } }, "nodeDrainTimeout": "5m" } } }),
        json!({ "spec": { "rolloutAfter": "2030-01-01T00:00:00Z", "remediationStrategy": { "maxRetry": 3 } } }),
        json!({ "metadata": { "annotations": { "cluster.x-k8s.io/paused": "" } } }),
    ];
    for patch in allowed {
        let r = admit(&a, merged(&old, &patch), Some(old.clone()));
        assert!(r.is_ok(), "{patch}: {r:?}");
    }
}

#[test]
fn refused_updates() {
    let a = Typed(KubeadmControlPlaneAdmission);
    let old = admit(&a, kcp(), None).unwrap();
    let refused = [
        (json!({ "spec": { "version": "v1.32.0" } }), vec!["spec.version"]),
        (json!({ "spec": { "version": "v1.19.0" } }), vec!["spec.version"]),
        // Unlike upstream, downgrades are refused too (minor or patch).
        (json!({ "spec": { "version": "v1.29.4" } }), vec!["spec.version"]),
        (json!({ "spec": { "version": "v1.30.1" } }), vec!["spec.version"]),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "networking": { "podSubnet": "10.0.0.0/8" } } } } }),
            vec!["spec.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet"],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "controlPlaneEndpoint": "x:6443", "certificatesDir": "/c" } } } }),
            vec![
                "spec.kubeadmConfigSpec.clusterConfiguration.certificatesDir",
                "spec.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint",
            ],
        ),
        (
            json!({ "spec": { "machineTemplate": { "infrastructureRef": { "namespace": "ns2" } } } }),
            vec![
                "spec.machineTemplate.infrastructureRef.namespace",
                "spec.machineTemplate.infrastructureRef.namespace",
            ],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "etcd": { "external": {
                "endpoints": ["https://e:2379"], "caFile": "/ca", "certFile": "/c", "keyFile": "/k"
            } } } } } }),
            vec!["spec.kubeadmConfigSpec.clusterConfiguration.etcd"],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "dns": { "imageTag": "latest" } } } } }),
            vec!["spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag"],
        ),
    ];
    for (patch, want) in refused {
        let r = admit(&a, merged(&old, &patch), Some(old.clone()));
        assert_eq!(error_fields(&r), want, "{patch}");
    }
}

#[test]
fn template() {
    let t = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate",
        "metadata": { "name": "t", "namespace": "ns" },
        "spec": { "template": { "spec": { "kubeadmConfigSpec": {} } } }
    });
    let a = Typed(KubeadmControlPlaneTemplateAdmission);
    let out = admit(&a, t.clone(), None).unwrap();
    assert_eq!(out["spec"]["template"]["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"], 1);
    assert_eq!(out["spec"]["template"]["spec"]["kubeadmConfigSpec"]["format"], "cloud-config");
    let bad = merged(
        &t,
        &json!({ "spec": { "template": { "spec": { "rolloutStrategy": { "rollingUpdate": { "maxSurge": "50%" } } } } } }),
    );
    assert_eq!(error_fields(&admit(&a, bad, None)), ["spec.template.spec.rolloutStrategy.rollingUpdate.maxSurge"]);
}

#[test]
fn refused_version_changes_say_what_to_do() {
    let a = Typed(KubeadmControlPlaneAdmission);
    let old = admit(&a, kcp(), None).unwrap();
    let message = |version: &str| {
        let r = admit(&a, merged(&old, &json!({ "spec": { "version": version } })), Some(old.clone()));
        r.expect_err("refused").iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    };
    let down = message("v1.29.4");
    assert!(down.starts_with("spec.version: Forbidden: "), "{down}");
    for part in ["from v1.30.2 to v1.29.4", "downgrading", "keep spec.version at v1.30.2 or later"] {
        assert!(down.contains(part), "{down}");
    }
    let jump = message("v1.32.1");
    for part in ["spec.version", "from v1.30.2 to v1.32.1", "one minor version at a time", "v1.31.x"] {
        assert!(jump.contains(part), "{jump}");
    }
}
