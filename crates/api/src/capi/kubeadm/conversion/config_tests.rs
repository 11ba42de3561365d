//! Tests of the KubeadmConfig and KubeadmConfigTemplate conversions.

use serde_json::{Value, json};

use super::{KubeadmConfigConversion, KubeadmConfigTemplateConversion};
use crate::capi::conversion::CONVERSION_DATA;
use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

fn kept(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/annotations").and_then(|a| a.get(CONVERSION_DATA))
}

/// A control-plane KubeadmConfig as KubeadmControlPlane creates it, bootstrapped; every
/// field has a v1beta2 counterpart, so nothing needs the annotation.
fn control_plane_config_v1beta1() -> Value {
    json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfig",
        "metadata": {
            "name": "sample-control-plane-x7k2p",
            "namespace": "default",
            "labels": {"cluster.x-k8s.io/cluster-name": "sample", "cluster.x-k8s.io/control-plane": ""},
        },
        "spec": {
            "clusterConfiguration": {
                "apiServer": {
                    "certSANs": ["localhost", "127.0.0.1"],
                    "extraArgs": {"v": "2", "audit-log-path": "-"},
                    "timeoutForControlPlane": "4m0s",
                },
                "controllerManager": {"extraArgs": {"bind-address": "0.0.0.0"}},
                "etcd": {"local": {"dataDir": "/var/lib/etcddisk/etcd", "extraArgs": {"quota-backend-bytes": "8589934592"}}},
                "controlPlaneEndpoint": "10.0.0.1:6443",
                "featureGates": {"ControlPlaneKubeletLocalMode": true},
            },
            "initConfiguration": {
                "bootstrapTokens": [{"token": "abcdef.0123456789abcdef", "ttl": "24h0m0s", "usages": ["signing", "authentication"]}],
                "nodeRegistration": {
                    "kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%", "cgroup-driver": "systemd"},
                    "taints": [],
                },
                "localAPIEndpoint": {"advertiseAddress": "10.0.0.5", "bindPort": 6443},
            },
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}, "imagePullPolicy": "IfNotPresent"},
                "discovery": {
                    "bootstrapToken": {"token": "abcdef.0123456789abcdef", "apiServerEndpoint": "10.0.0.1:6443", "caCertHashes": ["sha256:0a1b"]},
                    "timeout": "5m0s",
                },
                "controlPlane": {},
            },
            "files": [{"path": "/etc/kubernetes/audit.yaml", "content": "rules: []", "permissions": "0600", "owner": "root:root"}],
            "diskSetup": {
                "partitions": [{"device": "/dev/sdb", "layout": true, "tableType": "gpt"}],
                "filesystems": [{"device": "/dev/sdb1", "filesystem": "ext4", "label": "etcd_disk"}],
            },
            "mounts": [["LABEL=etcd_disk", "/var/lib/etcddisk"]],
            "preKubeadmCommands": ["systemctl restart containerd"],
            "postKubeadmCommands": ["echo done"],
            "users": [{"name": "capi", "sudo": "ALL=(ALL) NOPASSWD:ALL", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3"]}],
            "ntp": {"servers": ["time.example.com"], "enabled": true},
            "format": "cloud-config",
            "verbosity": 5,
        },
        "status": {
            "ready": true,
            "dataSecretName": "sample-control-plane-x7k2p",
            "observedGeneration": 2,
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2025-06-01T10:00:00Z"},
                {"type": "CertificatesAvailable", "status": "True", "lastTransitionTime": "2025-06-01T09:59:00Z"},
            ],
            "v1beta2": {"conditions": [{
                "type": "Ready", "status": "True", "reason": "Ready", "message": "bootstrap data secret created",
                "lastTransitionTime": "2025-06-01T10:00:00Z", "observedGeneration": 2,
            }]},
        },
    })
}

#[test]
fn kubeadm_config_up_moves_args_timeouts_and_status() {
    let v1 = control_plane_config_v1beta1();
    let v2 = up::<KubeadmConfigConversion>(&v1);
    assert_eq!(v2["apiVersion"], "bootstrap.cluster.x-k8s.io/v1beta2");
    assert!(kept(&v2).is_none(), "nothing is lossy: {v2:#}");
    assert_eq!(v2["metadata"], v1["metadata"]);
    let spec = &v2["spec"];
    let cc = &spec["clusterConfiguration"];
    assert_eq!(
        cc["apiServer"]["extraArgs"],
        json!([{"name": "audit-log-path", "value": "-"}, {"name": "v", "value": "2"}])
    );
    assert!(cc["apiServer"].get("timeoutForControlPlane").is_none());
    assert_eq!(cc["apiServer"]["certSANs"], json!(["localhost", "127.0.0.1"]));
    assert_eq!(cc["controllerManager"]["extraArgs"], json!([{"name": "bind-address", "value": "0.0.0.0"}]));
    assert_eq!(cc["etcd"]["local"]["extraArgs"], json!([{"name": "quota-backend-bytes", "value": "8589934592"}]));
    let init = &spec["initConfiguration"];
    assert_eq!(init["timeouts"], json!({"controlPlaneComponentHealthCheckSeconds": 240}));
    assert_eq!(init["bootstrapTokens"][0]["ttlSeconds"], 86400);
    assert!(init["bootstrapTokens"][0].get("ttl").is_none());
    assert_eq!(
        init["nodeRegistration"]["kubeletExtraArgs"],
        json!([{"name": "cgroup-driver", "value": "systemd"}, {"name": "eviction-hard", "value": "nodefs.available<0%"}])
    );
    assert_eq!(init["nodeRegistration"]["taints"], json!([]));
    let join = &spec["joinConfiguration"];
    assert_eq!(join["timeouts"], json!({"controlPlaneComponentHealthCheckSeconds": 240, "tlsBootstrapSeconds": 300}));
    assert!(join["discovery"].get("timeout").is_none());
    assert_eq!(join["discovery"]["bootstrapToken"]["token"], "abcdef.0123456789abcdef");
    assert_eq!(join["controlPlane"], json!({}));
    assert_eq!(spec["diskSetup"]["partitions"][0], json!({"device": "/dev/sdb", "layout": true, "tableType": "gpt"}));
    for same in ["files", "mounts", "preKubeadmCommands", "postKubeadmCommands", "users", "ntp", "format", "verbosity"]
    {
        assert_eq!(spec[same], v1["spec"][same], "{same}");
    }
    let status = &v2["status"];
    assert_eq!(status["initialization"], json!({"dataSecretCreated": true}));
    assert_eq!(status["dataSecretName"], "sample-control-plane-x7k2p");
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(status["conditions"], v1["status"]["v1beta2"]["conditions"]);
    assert_eq!(status["deprecated"]["v1beta1"]["conditions"], v1["status"]["conditions"]);
    assert!(status.get("ready").is_none() && status.get("v1beta2").is_none());
    assert_round_trips::<KubeadmConfigConversion>(&v1);
    assert_round_trips::<KubeadmConfigConversion>(&v2);
}

#[test]
fn kubeadm_config_up_drops_what_v1beta2_removed_and_keeps_it_for_v1beta1() {
    let mut v1 = control_plane_config_v1beta1();
    v1["spec"]["clusterConfiguration"]["kubernetesVersion"] = json!("v1.30.2");
    v1["spec"]["clusterConfiguration"]["clusterName"] = json!("sample");
    v1["spec"]["clusterConfiguration"]["networking"] =
        json!({"podSubnet": "192.168.0.0/16", "dnsDomain": "cluster.local"});
    v1["spec"]["clusterConfiguration"]["apiVersion"] = json!("kubeadm.k8s.io/v1beta3");
    v1["spec"]["useExperimentalRetryJoin"] = json!(true);
    v1["status"]["failureReason"] = json!("");
    let v2 = up::<KubeadmConfigConversion>(&v1);
    assert!(kept(&v2).is_some(), "removed fields are kept for the way back");
    let seen = strip_conversion_data(v2.clone());
    let cc = &seen["spec"]["clusterConfiguration"];
    for gone in ["kubernetesVersion", "clusterName", "networking", "apiVersion"] {
        assert!(cc.get(gone).is_none(), "{gone}");
    }
    assert!(seen["spec"].get("useExperimentalRetryJoin").is_none());
    assert!(seen["status"]["deprecated"]["v1beta1"].get("failureReason").is_none(), "empty strings are unset");
    assert_eq!(
        seen["spec"]["initConfiguration"],
        up::<KubeadmConfigConversion>(&control_plane_config_v1beta1())["spec"]["initConfiguration"]
    );
    assert_round_trips::<KubeadmConfigConversion>(&v1);
}

/// A worker KubeadmConfig written in v1beta2, with fields v1beta1 does not have.
fn worker_config_v1beta2() -> Value {
    json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmConfig",
        "metadata": {"name": "sample-workers-6tq9v", "namespace": "default"},
        "spec": {
            "clusterConfiguration": {"encryptionAlgorithm": "ECDSA-P256", "imageRepository": "registry.example.com"},
            "initConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 90, "kubeletHealthCheckSeconds": 30}},
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": [{"name": "node-labels", "value": "role=worker"}, {"name": "v", "value": "4"}]},
                "discovery": {"bootstrapToken": {"apiServerEndpoint": "10.0.0.1:6443"}},
                "timeouts": {"tlsBootstrapSeconds": 120},
            },
            "bootCommands": ["echo boot"],
            "files": [{"path": "/etc/motd", "content": "hi {{ .nodeName }}", "contentFormat": "Template"}],
            "diskSetup": {"partitions": [{"device": "/dev/sdc", "diskLayout": [{"percentage": 100}]}]},
        },
        "status": {
            "conditions": [{
                "type": "Ready", "status": "False", "reason": "NotReady", "message": "waiting for the control plane",
                "lastTransitionTime": "2025-06-01T10:00:00Z", "observedGeneration": 1,
            }],
            "initialization": {"dataSecretCreated": false},
            "observedGeneration": 1,
            "deprecated": {"v1beta1": {
                "conditions": [{"type": "Ready", "status": "False", "severity": "Info", "reason": "WaitingForControlPlaneAvailable", "lastTransitionTime": "2025-06-01T10:00:00Z"}],
                "failureReason": "Transient",
                "failureMessage": "control plane not reachable",
            }},
        },
    })
}

#[test]
fn kubeadm_config_down_restores_v1beta1_shapes() {
    let v2 = worker_config_v1beta2();
    let v1 = down::<KubeadmConfigConversion>(&v2);
    assert_eq!(v1["apiVersion"], "bootstrap.cluster.x-k8s.io/v1beta1");
    assert!(kept(&v1).is_some(), "v1beta2-only fields travel in the annotation");
    let v1 = strip_conversion_data(v1);
    let spec = &v1["spec"];
    assert_eq!(spec["clusterConfiguration"]["apiServer"]["timeoutForControlPlane"], "1m30s");
    assert_eq!(spec["clusterConfiguration"]["imageRepository"], "registry.example.com");
    assert!(spec["clusterConfiguration"].get("encryptionAlgorithm").is_none());
    assert!(spec.get("initConfiguration").is_none(), "only v1beta2 timeouts were in it");
    let join = &spec["joinConfiguration"];
    assert_eq!(join["nodeRegistration"]["kubeletExtraArgs"], json!({"node-labels": "role=worker", "v": "4"}));
    assert_eq!(join["discovery"]["timeout"], "2m0s");
    assert_eq!(join["discovery"]["bootstrapToken"], json!({"token": "", "apiServerEndpoint": "10.0.0.1:6443"}));
    assert!(join.get("timeouts").is_none());
    assert!(spec.get("bootCommands").is_none());
    assert_eq!(spec["files"], json!([{"path": "/etc/motd", "content": "hi {{ .nodeName }}"}]));
    assert_eq!(spec["diskSetup"]["partitions"], json!([{"device": "/dev/sdc", "layout": false}]));
    let status = &v1["status"];
    assert_eq!(status["ready"], false);
    assert_eq!(status["observedGeneration"], 1);
    assert_eq!(status["conditions"], v2["status"]["deprecated"]["v1beta1"]["conditions"]);
    assert_eq!(status["failureReason"], "Transient");
    assert_eq!(status["failureMessage"], "control plane not reachable");
    assert_eq!(status["v1beta2"]["conditions"], v2["status"]["conditions"]);
    assert!(status.get("deprecated").is_none() && status.get("initialization").is_none());
    assert_round_trips::<KubeadmConfigConversion>(&v2);
}

#[test]
fn kubeadm_config_template_converts_its_template_spec() {
    let v1 = json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "sample-workers", "namespace": "default"},
        "spec": {"template": {
            "metadata": {"labels": {"pool": "a"}},
            "spec": {
                "joinConfiguration": {
                    "nodeRegistration": {"kubeletExtraArgs": {"node-labels": "role=worker"}},
                    "discovery": {"timeout": "45s"},
                },
            },
        }},
    });
    let v2 = up::<KubeadmConfigTemplateConversion>(&v1);
    assert!(kept(&v2).is_none(), "{v2:#}");
    let template = &v2["spec"]["template"];
    assert_eq!(template["metadata"], json!({"labels": {"pool": "a"}}));
    assert_eq!(
        template["spec"]["joinConfiguration"],
        json!({
            "nodeRegistration": {"kubeletExtraArgs": [{"name": "node-labels", "value": "role=worker"}]},
            "timeouts": {"tlsBootstrapSeconds": 45},
        })
    );
    assert_round_trips::<KubeadmConfigTemplateConversion>(&v1);
    assert_round_trips::<KubeadmConfigTemplateConversion>(&v2);

    let mut v2 = worker_config_v1beta2();
    let spec = v2["spec"].take();
    let v2 = json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "sample-workers", "namespace": "default"},
        "spec": {"template": {"spec": spec}},
    });
    let v1 = strip_conversion_data(down::<KubeadmConfigTemplateConversion>(&v2));
    let spec = &v1["spec"]["template"]["spec"];
    assert_eq!(spec["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]["node-labels"], "role=worker");
    assert_eq!(spec["joinConfiguration"]["discovery"]["timeout"], "2m0s");
    assert_round_trips::<KubeadmConfigTemplateConversion>(&v2);

    // An empty template spec is `{}` in v1beta1 and unset in v1beta2.
    let empty = json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "empty", "namespace": "default"},
        "spec": {"template": {"spec": {}}},
    });
    let v2 = up::<KubeadmConfigTemplateConversion>(&empty);
    assert_eq!(v2["spec"], json!({"template": {}}));
    assert!(kept(&v2).is_none());
}
