//! Tests of the KubeadmControlPlane and KubeadmControlPlaneTemplate conversions.

use serde_json::{Value, json};

use super::{KubeadmControlPlaneConversion, KubeadmControlPlaneTemplateConversion};
use crate::capi::conversion::CONVERSION_DATA;
use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

fn kept(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/annotations").and_then(|a| a.get(CONVERSION_DATA))
}

/// A running three-replica control plane, mid-rollout; the infrastructure reference names
/// what the fallback version gives back (no CRD is known in these tests), so nothing needs
/// the annotation.
fn control_plane_v1beta1() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "sample-control-plane", "namespace": "default", "labels": {"cluster.x-k8s.io/cluster-name": "sample"}},
        "spec": {
            "replicas": 3,
            "version": "v1.30.2",
            "machineTemplate": {
                "metadata": {"labels": {"tier": "control-plane"}},
                "infrastructureRef": {
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerMachineTemplate",
                    "name": "sample-control-plane",
                    "namespace": "default",
                },
                "nodeDrainTimeout": "5m0s",
                "nodeDeletionTimeout": "10s",
            },
            "kubeadmConfigSpec": {
                "clusterConfiguration": {"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}},
                "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}}},
                "joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}}},
            },
            "rolloutBefore": {"certificatesExpiryDays": 21},
            "rolloutAfter": "2025-07-01T00:00:00Z",
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "remediationStrategy": {"maxRetry": 5, "retryPeriod": "2m0s", "minHealthyPeriod": "2h0m0s"},
            "machineNamingStrategy": {"template": "{{ .kubeadmControlPlane.name }}-{{ .random }}"},
        },
        "status": {
            "selector": "cluster.x-k8s.io/cluster-name=sample,cluster.x-k8s.io/control-plane",
            "replicas": 4,
            "version": "v1.30.2",
            "updatedReplicas": 2,
            "readyReplicas": 3,
            "unavailableReplicas": 1,
            "initialized": true,
            "ready": true,
            "observedGeneration": 3,
            "conditions": [{"type": "Ready", "status": "False", "severity": "Warning", "reason": "RollingUpdateInProgress", "lastTransitionTime": "2025-07-01T00:01:00Z"}],
            "lastRemediation": {"machine": "sample-control-plane-abcde", "timestamp": "2025-06-30T12:00:00Z", "retryCount": 1},
            "v1beta2": {
                "conditions": [{"type": "Available", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": "2025-06-01T00:00:00Z"}],
                "readyReplicas": 3,
                "availableReplicas": 3,
                "upToDateReplicas": 2,
            },
        },
    })
}

#[test]
fn control_plane_up_restructures_template_rollout_and_status() {
    let v1 = control_plane_v1beta1();
    let v2 = up::<KubeadmControlPlaneConversion>(&v1);
    assert_eq!(v2["apiVersion"], "controlplane.cluster.x-k8s.io/v1beta2");
    assert!(kept(&v2).is_none(), "nothing is lossy: {v2:#}");
    let spec = &v2["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["version"], "v1.30.2");
    assert_eq!(
        spec["machineTemplate"],
        json!({
            "metadata": {"labels": {"tier": "control-plane"}},
            "spec": {
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "sample-control-plane"},
                "deletion": {"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 10},
            },
        })
    );
    assert_eq!(
        spec["kubeadmConfigSpec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"],
        json!([{"name": "eviction-hard", "value": "nodefs.available<0%"}])
    );
    assert_eq!(
        spec["rollout"],
        json!({
            "after": "2025-07-01T00:00:00Z",
            "before": {"certificatesExpiryDays": 21},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        })
    );
    assert_eq!(spec["remediation"], json!({"maxRetry": 5, "retryPeriodSeconds": 120, "minHealthyPeriodSeconds": 7200}));
    assert_eq!(spec["machineNaming"], v1["spec"]["machineNamingStrategy"]);
    for gone in ["rolloutBefore", "rolloutAfter", "rolloutStrategy", "remediationStrategy", "machineNamingStrategy"] {
        assert!(spec.get(gone).is_none(), "{gone}");
    }
    let status = &v2["status"];
    assert_eq!(status["initialization"], json!({"controlPlaneInitialized": true}));
    assert_eq!(status["conditions"], v1["status"]["v1beta2"]["conditions"]);
    assert_eq!(
        (&status["readyReplicas"], &status["availableReplicas"], &status["upToDateReplicas"]),
        (&json!(3), &json!(3), &json!(2))
    );
    assert_eq!(
        status["deprecated"]["v1beta1"],
        json!({
            "conditions": v1["status"]["conditions"],
            "updatedReplicas": 2,
            "readyReplicas": 3,
            "unavailableReplicas": 1,
        })
    );
    assert_eq!(
        status["lastRemediation"],
        json!({"machine": "sample-control-plane-abcde", "time": "2025-06-30T12:00:00Z", "retryCount": 1})
    );
    for same in ["selector", "replicas", "version", "observedGeneration"] {
        assert_eq!(status[same], v1["status"][same], "{same}");
    }
    for gone in ["initialized", "ready", "updatedReplicas", "unavailableReplicas", "v1beta2"] {
        assert!(status.get(gone).is_none(), "{gone}");
    }
    assert_round_trips::<KubeadmControlPlaneConversion>(&v1);
    assert_round_trips::<KubeadmControlPlaneConversion>(&v2);
}

#[test]
fn control_plane_of_the_sample_manifest_round_trips() {
    let v1 = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "sample-control-plane", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "version": "v1.30.2",
            "machineTemplate": {"infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                "kind": "InMemoryMachineTemplate",
                "name": "sample-control-plane",
            }},
            "kubeadmConfigSpec": {
                "clusterConfiguration": {"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}},
                "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}}},
                "joinConfiguration": {"nodeRegistration": {}},
            },
        },
    });
    let v2 = up::<KubeadmControlPlaneConversion>(&v1);
    // The reference's version and the empty join configuration are not v1beta2's to show.
    assert!(kept(&v2).is_some());
    let seen = strip_conversion_data(v2.clone());
    assert_eq!(
        seen["spec"]["machineTemplate"]["spec"]["infrastructureRef"],
        json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryMachineTemplate", "name": "sample-control-plane"})
    );
    assert!(seen["spec"]["kubeadmConfigSpec"].get("joinConfiguration").is_none());
    assert!(seen.get("status").is_none());
    assert_round_trips::<KubeadmControlPlaneConversion>(&v1);
}

fn control_plane_v1beta2() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "cp", "namespace": "team-a"},
        "spec": {
            "replicas": 1,
            "version": "v1.31.0",
            "machineTemplate": {"spec": {
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "cp"},
                "readinessGates": [{"conditionType": "NetworkReady", "polarity": "Positive"}],
                "deletion": {"nodeVolumeDetachTimeoutSeconds": 90},
                "taints": [{"key": "dedicated", "value": "cp", "effect": "NoSchedule", "propagation": "Always"}],
            }},
            "kubeadmConfigSpec": {"clusterConfiguration": {"scheduler": {"extraArgs": [{"name": "v", "value": "3"}]}}},
            "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}},
            "remediation": {"retryPeriodSeconds": 30},
            "machineNaming": {"template": "cp-{{ .random }}"},
        },
        "status": {
            "conditions": [{"type": "Available", "status": "False", "reason": "NotAvailable", "message": "etcd has no quorum", "lastTransitionTime": "2025-06-01T00:00:00Z"}],
            "initialization": {"controlPlaneInitialized": true},
            "replicas": 1,
            "readyReplicas": 0,
            "availableReplicas": 0,
            "upToDateReplicas": 1,
            "versions": [{"version": "v1.31.0", "replicas": 1}],
            "deprecated": {"v1beta1": {"readyReplicas": 0, "updatedReplicas": 1, "unavailableReplicas": 1, "failureReason": "Stuck"}},
        },
    })
}

#[test]
fn control_plane_down_restores_v1beta1_shapes() {
    let v2 = control_plane_v1beta2();
    let v1 = down::<KubeadmControlPlaneConversion>(&v2);
    assert_eq!(v1["apiVersion"], "controlplane.cluster.x-k8s.io/v1beta1");
    assert!(kept(&v1).is_some(), "readiness gates, taints and versions travel in the annotation");
    let v1 = strip_conversion_data(v1);
    let spec = &v1["spec"];
    assert_eq!(
        spec["machineTemplate"],
        json!({
            "infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "DockerMachineTemplate",
                "name": "cp",
                "namespace": "team-a",
            },
            "nodeVolumeDetachTimeout": "1m30s",
        })
    );
    assert_eq!(spec["kubeadmConfigSpec"]["clusterConfiguration"]["scheduler"]["extraArgs"], json!({"v": "3"}));
    assert_eq!(spec["rolloutStrategy"], json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}));
    assert_eq!(spec["remediationStrategy"], json!({"retryPeriod": "30s"}));
    assert_eq!(spec["machineNamingStrategy"], json!({"template": "cp-{{ .random }}"}));
    let status = &v1["status"];
    assert_eq!(status["initialized"], true);
    assert_eq!(status["ready"], false, "no ready replica in the v1beta1 count");
    assert_eq!(
        (&status["readyReplicas"], &status["updatedReplicas"], &status["unavailableReplicas"]),
        (&json!(0), &json!(1), &json!(1))
    );
    assert_eq!(status["failureReason"], "Stuck");
    assert_eq!(
        status["v1beta2"],
        json!({"conditions": v2["status"]["conditions"], "readyReplicas": 0, "availableReplicas": 0, "upToDateReplicas": 1})
    );
    assert!(status.get("versions").is_none() && status.get("deprecated").is_none());
    assert_round_trips::<KubeadmControlPlaneConversion>(&v2);
}

#[test]
fn control_plane_template_converts_both_ways() {
    let v1 = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "cc-control-plane", "namespace": "default"},
        "spec": {"template": {"spec": {
            "machineTemplate": {"metadata": {"labels": {"a": "b"}}, "nodeDrainTimeout": "1m0s"},
            "kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {"timeoutForControlPlane": "20m0s"}}},
            "rolloutBefore": {"certificatesExpiryDays": 30},
            "remediationStrategy": {"maxRetry": 3},
        }}},
    });
    let v2 = up::<KubeadmControlPlaneTemplateConversion>(&v1);
    assert!(kept(&v2).is_none(), "{v2:#}");
    let spec = &v2["spec"]["template"]["spec"];
    assert_eq!(
        spec["machineTemplate"],
        json!({"metadata": {"labels": {"a": "b"}}, "spec": {"deletion": {"nodeDrainTimeoutSeconds": 60}}})
    );
    assert_eq!(
        spec["kubeadmConfigSpec"],
        json!({
            "initConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 1200}},
            "joinConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 1200}},
        })
    );
    assert_eq!(spec["rollout"], json!({"before": {"certificatesExpiryDays": 30}}));
    assert_eq!(spec["remediation"], json!({"maxRetry": 3}));
    assert_round_trips::<KubeadmControlPlaneTemplateConversion>(&v1);
    assert_round_trips::<KubeadmControlPlaneTemplateConversion>(&v2);

    let v2 = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "cc-control-plane", "namespace": "default"},
        "spec": {"template": {
            "metadata": {"annotations": {"note": "x"}},
            "spec": {
                "machineTemplate": {"spec": {"taints": [{"key": "k", "effect": "NoExecute", "propagation": "OnInitialization"}]}},
                "rollout": {"after": "2025-01-01T00:00:00Z"},
                "remediation": {"minHealthyPeriodSeconds": 600},
            },
        }},
    });
    let v1 = strip_conversion_data(down::<KubeadmControlPlaneTemplateConversion>(&v2));
    assert_eq!(
        v1["spec"]["template"],
        json!({
            "metadata": {"annotations": {"note": "x"}},
            "spec": {
                "machineTemplate": {},
                "kubeadmConfigSpec": {},
                "rolloutAfter": "2025-01-01T00:00:00Z",
                "remediationStrategy": {"minHealthyPeriod": "10m0s"},
            },
        })
    );
    assert_round_trips::<KubeadmControlPlaneTemplateConversion>(&v2);
}

#[test]
fn control_plane_written_in_v1beta2_is_admitted_in_v1beta1_and_keeps_its_new_fields() {
    use crate::admission::Operation;
    use crate::capi::resources;

    let def = resources()
        .into_iter()
        .find(|d| d.kind == "KubeadmControlPlane" && d.version == "v1beta2")
        .expect("KubeadmControlPlane is served in v1beta2");
    let admission = def.admission.expect("with admission");
    let mut obj = control_plane_v1beta2();
    obj["spec"].as_object_mut().map(|s| s.remove("rollout"));
    obj["spec"].as_object_mut().map(|s| s.remove("replicas"));
    obj.as_object_mut().map(|o| o.remove("status"));
    let warnings = admission.admit(&mut obj, None, Operation::Create).expect("admitted");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(obj["apiVersion"], "controlplane.cluster.x-k8s.io/v1beta2");
    assert!(kept(&obj).is_none(), "{obj:#}");
    let spec = &obj["spec"];
    assert_eq!(spec["replicas"], 1, "defaulted in v1beta1");
    assert_eq!(spec["rollout"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        spec["machineTemplate"]["spec"]["readinessGates"],
        json!([{"conditionType": "NetworkReady", "polarity": "Positive"}])
    );
    assert_eq!(spec["machineTemplate"]["spec"]["taints"][0]["key"], "dedicated");
    assert_eq!(spec["machineTemplate"]["spec"]["infrastructureRef"]["kind"], "DockerMachineTemplate");
}
