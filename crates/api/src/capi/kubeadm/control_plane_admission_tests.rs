use serde_json::{Value, json};

use super::*;
use crate::capi::testutil::{admit, error_fields, merged};
use crate::capi::typed::Typed;

fn kcp() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
        "metadata": { "name": "cp", "namespace": "ns", "labels": { "cluster.x-k8s.io/cluster-name": "c1" } },
        "spec": {
            "replicas": 3,
            "version": "1.30.2",
            "machineTemplate": { "spec": {
                "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryMachineTemplate", "name": "cp" }
            } },
            "kubeadmConfigSpec": {
                "clusterConfiguration": { "apiServer": { "certSANs": ["localhost"] }, "certificatesDir": "/etc/kubernetes/pki" },
                "initConfiguration": { "nodeRegistration": {} },
                "joinConfiguration": { "nodeRegistration": {} }
            }
        }
    })
}

/// A rollout strategy patch (v1beta2 requires the type whenever a strategy is given).
fn strategy(max_surge: Value) -> Value {
    json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": max_surge } })
}

#[test]
fn defaults() {
    let no_replicas = merged(&kcp(), &json!({ "spec": { "replicas": null } }));
    let out = admit(&Typed(KubeadmControlPlaneAdmission), no_replicas, None).unwrap();
    let spec = &out["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["version"], "v1.30.2");
    assert_eq!(spec["rollout"], json!({ "strategy": strategy(json!(1)) }));
    // A v1beta2 reference names no namespace: nothing to default.
    assert_eq!(spec["machineTemplate"], kcp()["spec"]["machineTemplate"]);
    assert_eq!(spec["kubeadmConfigSpec"]["format"], "cloud-config");
    assert_eq!(spec["kubeadmConfigSpec"]["initConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(spec["kubeadmConfigSpec"]["joinConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");
}

#[test]
fn invalid_objects_are_rejected_at_the_right_field() {
    let cases = [
        (json!({ "spec": { "replicas": 0 } }), vec!["spec.replicas"]),
        (json!({ "spec": { "replicas": 2 } }), vec!["spec.replicas"]),
        (json!({ "spec": { "version": "1.30" } }), vec!["spec.version"]),
        (
            json!({ "spec": { "machineTemplate": { "spec": { "infrastructureRef": { "name": "" } } } } }),
            vec!["spec.machineTemplate.spec.infrastructureRef.name"],
        ),
        (
            json!({ "spec": { "machineTemplate": { "spec": { "infrastructureRef": { "apiGroup": "", "kind": "" } } } } }),
            vec![
                "spec.machineTemplate.spec.infrastructureRef.apiGroup",
                "spec.machineTemplate.spec.infrastructureRef.kind",
            ],
        ),
        (
            json!({ "spec": { "machineTemplate": { "metadata": { "labels": { "a": "not a value" } } } } }),
            vec!["spec.machineTemplate.metadata.labels[a]"],
        ),
        // Shapes the types cannot hold are reported where they are.
        (
            json!({ "spec": { "machineTemplate": { "spec": { "deletion": { "nodeDrainTimeoutSeconds": "1 hour" } } } } }),
            vec!["spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds"],
        ),
        (json!({ "spec": { "rollout": { "strategy": { "type": "Recreate" } } } }), vec!["spec.rollout.strategy.type"]),
        (
            json!({ "spec": { "rollout": { "before": { "certificatesExpiryDays": 3 } } } }),
            vec!["spec.rollout.before.certificatesExpiryDays"],
        ),
        (
            json!({ "spec": { "rollout": { "strategy": strategy(json!(2)) } } }),
            vec!["spec.rollout.strategy.rollingUpdate.maxSurge"],
        ),
        (
            json!({ "spec": { "replicas": 1, "rollout": { "strategy": strategy(json!(0)) } } }),
            vec!["spec.rollout.strategy.rollingUpdate.maxSurge"],
        ),
        (json!({ "spec": { "remediation": { "maxRetry": -1 } } }), vec!["spec.remediation.maxRetry"]),
        (
            json!({ "spec": { "machineNaming": { "template": "{{ .kubeadmControlPlane.name }}" } } }),
            vec!["spec.machineNaming.template"],
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
        json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "apiServer": {
            "certSANs": ["localhost", "10.0.0.1"], "extraArgs": [ { "name": "v", "value": "2" } ]
        } } } } }),
        json!({ "spec": { "kubeadmConfigSpec": {
            "files": [ { "path": "/etc/motd", "content": "hi" } ], "preKubeadmCommands": ["true"], "bootCommands": ["true"]
        } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": {
            "etcd": { "local": { "imageTag": "3.5.15-0" } }, "dns": { "imageTag": "v1.11.3" }
        } } } }),
        json!({ "spec": { "version": "v1.31.0", "kubeadmConfigSpec": { "clusterConfiguration": {
            "certificateValidityPeriodDays": 365
        } } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "joinConfiguration": {
            "nodeRegistration": { "kubeletExtraArgs": [ { "name": "v", "value": "4" } ] }, "timeouts": { "discoverySeconds": 60 }
        } } } }),
        json!({ "spec": { "kubeadmConfigSpec": { "initConfiguration": {
            "timeouts": { "controlPlaneComponentHealthCheckSeconds": 300 }
        } } } }),
        json!({ "spec": { "machineTemplate": {
            "metadata": { "labels": { "a": "b" } },
            "spec": {
                "infrastructureRef": { "name": "cp-v2" },
                "deletion": { "nodeDrainTimeoutSeconds": 300 },
                "readinessGates": [ { "conditionType": "Extra" } ],
                "taints": [ { "key": "k", "effect": "NoSchedule", "propagation": "Always" } ]
            }
        } } }),
        json!({ "spec": { "rollout": { "after": "2030-01-01T00:00:00Z" }, "remediation": { "maxRetry": 3, "retryPeriodSeconds": 60 } } }),
        json!({ "spec": { "machineNaming": { "template": "{{ .kubeadmControlPlane.name }}-{{ .random }}" } } }),
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
    let cluster_configuration = "spec.kubeadmConfigSpec.clusterConfiguration";
    let refused = [
        (json!({ "spec": { "version": "v1.32.0" } }), vec!["spec.version".to_string()]),
        (json!({ "spec": { "version": "v1.19.0" } }), vec!["spec.version".to_string()]),
        // Unlike upstream, downgrades are refused too (minor or patch).
        (json!({ "spec": { "version": "v1.29.4" } }), vec!["spec.version".to_string()]),
        (json!({ "spec": { "version": "v1.30.1" } }), vec!["spec.version".to_string()]),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "controlPlaneEndpoint": "x:6443", "certificatesDir": "/c" } } } }),
            vec![
                format!("{cluster_configuration}.certificatesDir"),
                format!("{cluster_configuration}.controlPlaneEndpoint"),
            ],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": {
                "caCertificateValidityPeriodDays": 365, "encryptionAlgorithm": "ECDSA-P256"
            } } } }),
            vec![
                format!("{cluster_configuration}.caCertificateValidityPeriodDays"),
                format!("{cluster_configuration}.encryptionAlgorithm"),
            ],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "etcd": { "external": {
                "endpoints": ["https://e:2379"], "caFile": "/ca", "certFile": "/c", "keyFile": "/k"
            } } } } } }),
            vec![format!("{cluster_configuration}.etcd")],
        ),
        (
            json!({ "spec": { "kubeadmConfigSpec": { "clusterConfiguration": { "dns": { "imageTag": "latest" } } } } }),
            vec![format!("{cluster_configuration}.dns.imageTag")],
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
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
        "metadata": { "name": "t", "namespace": "ns" },
        "spec": { "template": { "spec": { "kubeadmConfigSpec": {} } } }
    });
    let a = Typed(KubeadmControlPlaneTemplateAdmission);
    let out = admit(&a, t.clone(), None).unwrap();
    assert_eq!(out["spec"]["template"]["spec"]["rollout"], json!({ "strategy": strategy(json!(1)) }));
    assert_eq!(out["spec"]["template"]["spec"]["kubeadmConfigSpec"]["format"], "cloud-config");
    let cases = [
        (
            json!({ "rollout": { "strategy": strategy(json!("50%")) } }),
            "spec.template.spec.rollout.strategy.rollingUpdate.maxSurge",
        ),
        (json!({ "remediation": { "maxRetry": -2 } }), "spec.template.spec.remediation.maxRetry"),
        (
            json!({ "machineTemplate": { "metadata": { "annotations": { "-bad": "" } } } }),
            "spec.template.spec.machineTemplate.metadata.annotations",
        ),
        (json!({ "machineNaming": { "template": "fixed" } }), "spec.template.spec.machineNaming.template"),
    ];
    for (patch, field) in cases {
        let bad = merged(&t, &json!({ "spec": { "template": { "spec": patch } } }));
        assert_eq!(error_fields(&admit(&a, bad, None)), [field], "{patch}");
    }
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

/// Certificate validity: kubeadm v1.31+ only, no longer than the CA's, and longer than the
/// renewal horizon (else every Machine would be replaced as soon as it is created).
#[test]
fn certificate_validity_checks() {
    let a = Typed(KubeadmControlPlaneAdmission);
    let with = |version: &str, validity: Value, ca: Value, expiry: Value| {
        merged(
            &kcp(),
            &json!({ "spec": {
                "version": version,
                "rollout": { "before": { "certificatesExpiryDays": expiry } },
                "kubeadmConfigSpec": { "clusterConfiguration": {
                    "certificateValidityPeriodDays": validity, "caCertificateValidityPeriodDays": ca
                } }
            } }),
        )
    };
    let validity = "spec.kubeadmConfigSpec.clusterConfiguration.certificateValidityPeriodDays";
    let expiry = "spec.rollout.before.certificatesExpiryDays";
    let cases = [
        (with("v1.31.0", json!(90), Value::Null, json!(30)), vec![]),
        (with("v1.30.2", json!(90), Value::Null, json!(30)), vec![validity]),
        (with("v1.31.0", json!(900), json!(365), json!(30)), vec![validity]),
        (with("v1.31.0", json!(90), Value::Null, json!(90)), vec![expiry]),
        // Unset: kubeadm's year, on any version.
        (with("v1.30.2", Value::Null, Value::Null, json!(364)), vec![]),
        (with("v1.30.2", Value::Null, Value::Null, json!(365)), vec![expiry]),
    ];
    for (obj, want) in cases {
        assert_eq!(error_fields(&admit(&a, obj.clone(), None)), want, "{obj}");
    }
}
