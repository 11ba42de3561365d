//! ClusterClass conversion tests: a quick-start shaped class with status, both ways.

use serde_json::{Value, json};

use super::ClusterClassConversion;
use crate::capi::conversion::CONVERSION_DATA;
use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

fn template(api_version: &str, kind: &str, name: &str) -> Value {
    json!({"ref": {"apiVersion": api_version, "kind": kind, "name": name, "namespace": "default"}})
}

fn variable_schema() -> Value {
    json!({"openAPIV3Schema": {
        "type": "object",
        "required": ["repository"],
        "properties": {
            "repository": {"type": "string", "default": "registry.k8s.io", "minLength": 1},
            "replicas": {"type": "integer", "minimum": 1, "exclusiveMinimum": false},
        },
        "x-kubernetes-validations": [{"rule": "self.repository != ''", "reason": "FieldValueInvalid"}],
        "x-metadata": {"labels": {"team": "infra"}},
    }})
}

/// A ClusterClass as a v1beta1 client writes it, with its status.
fn v1beta1_class() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "ClusterClass",
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {
            "infrastructure": template(INFRA, "InMemoryClusterTemplate", "quick-start"),
            "controlPlane": v1beta1_control_plane(),
            "workers": v1beta1_workers(),
            "variables": [{
                "name": "imageRepository",
                "required": true,
                "metadata": {"labels": {"old": "style"}},
                "schema": variable_schema(),
            }],
            "patches": v1beta1_patches(),
        },
        "status": v1beta1_status(),
    })
}

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1alpha1";

fn v1beta1_control_plane() -> Value {
    json!({
        "ref": {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
            "kind": "KubeadmControlPlaneTemplate",
            "name": "quick-start-cp",
            "namespace": "default",
        },
        "metadata": {"annotations": {"a": "b"}},
        "machineInfrastructure": template(INFRA, "InMemoryMachineTemplate", "quick-start-cp"),
        "machineHealthCheck": {
            "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "5m0s"}],
            "maxUnhealthy": 1,
            "nodeStartupTimeout": "10m0s",
        },
        "namingStrategy": {"template": "{{ .cluster.name }}-cp-{{ .random }}"},
        "nodeDrainTimeout": "1m0s",
    })
}

fn v1beta1_workers() -> Value {
    json!({
        "machineDeployments": [{
            "class": "default-worker",
            "template": {
                "metadata": {"labels": {"role": "worker"}},
                "bootstrap": template("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfigTemplate", "w"),
                "infrastructure": template(INFRA, "InMemoryMachineTemplate", "w"),
            },
            "machineHealthCheck": {"unhealthyRange": "[0-3]"},
            "failureDomain": "fd-1",
            "namingStrategy": {"template": "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}"},
            "minReadySeconds": 5,
            "nodeDeletionTimeout": "30s",
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%"},
                "remediation": {"maxInFlight": 2},
            },
        }],
        "machinePools": [{
            "class": "pool",
            "template": {
                "bootstrap": template("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfigTemplate", "p"),
                "infrastructure": template(INFRA, "InMemoryMachinePoolTemplate", "p"),
            },
            "failureDomains": ["fd-1"],
            "nodeVolumeDetachTimeout": "2m0s",
        }],
    })
}

fn v1beta1_patches() -> Value {
    json!([
        {
            "name": "imageRepository",
            "description": "Sets the image repository.",
            "enabledIf": "{{ if .imageRepository }}true{{ end }}",
            "definitions": [{
                "selector": {
                    "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                    "kind": "KubeadmControlPlaneTemplate",
                    "matchResources": {"controlPlane": true, "machineDeploymentClass": {"names": ["default-worker"]}},
                },
                "jsonPatches": [{
                    "op": "add",
                    "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
                    "valueFrom": {"variable": "imageRepository"},
                }],
            }],
        },
        {
            "name": "external",
            "external": {
                "generateExtension": "generate.ext",
                "validateExtension": "validate.ext",
                "discoverVariablesExtension": "discover.ext",
                "settings": {"k": "v"},
            },
        },
    ])
}

fn v1beta1_status() -> Value {
    json!({
        "observedGeneration": 3,
        "variables": [{
            "name": "imageRepository",
            "definitionsConflict": false,
            "definitions": [{
                "from": "inline",
                "required": true,
                "metadata": {"labels": {"old": "style"}},
                "schema": variable_schema(),
            }],
        }],
        "conditions": [{"type": "VariablesReconciled", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z"}],
        "v1beta2": {"conditions": [{
            "type": "VariablesReady",
            "status": "True",
            "reason": "VariablesReady",
            "message": "",
            "lastTransitionTime": "2024-05-01T10:00:00Z",
        }]},
    })
}

#[test]
fn up_moves_every_field_where_v1beta2_keeps_it() {
    let v1 = v1beta1_class();
    let v2 = up::<ClusterClassConversion>(&v1);
    assert_eq!(v2["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(v2["metadata"], v1["metadata"], "nothing is lossy: no annotation");
    assert_eq!(v2, strip_conversion_data(v2.clone()));
    let spec = &v2["spec"];
    let infra = "infrastructure.cluster.x-k8s.io/v1alpha1";
    assert_eq!(
        spec["infrastructure"],
        json!({"templateRef": {"apiVersion": infra, "kind": "InMemoryClusterTemplate", "name": "quick-start"}})
    );
    let cp = &spec["controlPlane"];
    assert_eq!(cp["templateRef"]["name"], "quick-start-cp");
    assert!(cp.get("ref").is_none());
    assert_eq!(cp["machineInfrastructure"]["templateRef"]["kind"], "InMemoryMachineTemplate");
    assert_eq!(cp["naming"], json!({"template": "{{ .cluster.name }}-cp-{{ .random }}"}));
    assert_eq!(cp["deletion"], json!({"nodeDrainTimeoutSeconds": 60}));
    assert_eq!(
        cp["healthCheck"],
        json!({
            "checks": {
                "nodeStartupTimeoutSeconds": 600,
                "unhealthyNodeConditions": [{"type": "Ready", "status": "False", "timeoutSeconds": 300}],
            },
            "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": 1}},
        })
    );

    let md = &spec["workers"]["machineDeployments"][0];
    assert_eq!(md["metadata"], json!({"labels": {"role": "worker"}}));
    assert_eq!(md["bootstrap"]["templateRef"]["kind"], "KubeadmConfigTemplate");
    assert_eq!(md["infrastructure"]["templateRef"]["name"], "w");
    assert!(md.get("template").is_none());
    assert_eq!(
        md["healthCheck"],
        json!({"remediation": {"maxInFlight": 2, "triggerIf": {"unhealthyInRange": "[0-3]"}}})
    );
    assert_eq!(md["rollout"], json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}}));
    assert_eq!(md["deletion"], json!({"nodeDeletionTimeoutSeconds": 30}));
    assert_eq!(md["naming"]["template"], v1["spec"]["workers"]["machineDeployments"][0]["namingStrategy"]["template"]);
    let mp = &spec["workers"]["machinePools"][0];
    assert_eq!(mp["infrastructure"]["templateRef"]["kind"], "InMemoryMachinePoolTemplate");
    assert_eq!(mp["deletion"], json!({"nodeVolumeDetachTimeoutSeconds": 120}));

    let variable = &spec["variables"][0];
    assert_eq!(variable["deprecatedV1Beta1Metadata"], json!({"labels": {"old": "style"}}));
    assert!(variable.get("metadata").is_none());
    assert_eq!(variable["schema"], variable_schema());
    assert_eq!(spec["patches"][0], v1["spec"]["patches"][0]);
    assert_eq!(
        spec["patches"][1]["external"],
        json!({
            "generatePatchesExtension": "generate.ext",
            "validateTopologyExtension": "validate.ext",
            "discoverVariablesExtension": "discover.ext",
            "settings": {"k": "v"},
        })
    );

    let status = &v2["status"];
    assert_eq!(status["conditions"], v1["status"]["v1beta2"]["conditions"]);
    assert_eq!(status["deprecated"], json!({"v1beta1": {"conditions": v1["status"]["conditions"]}}));
    assert_eq!(
        status["variables"][0]["definitions"][0]["deprecatedV1Beta1Metadata"],
        json!({"labels": {"old": "style"}})
    );
    assert_eq!(status["variables"][0]["definitionsConflict"], false);
    assert_eq!(status["observedGeneration"], 3);
    assert!(status.get("v1beta2").is_none());

    assert_round_trips::<ClusterClassConversion>(&v1);
    assert_eq!(down::<ClusterClassConversion>(&v2), v1);
}

const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io/v1beta2";
const BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io/v1beta2";

fn template_ref(api_version: &str, kind: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name})
}

/// A ClusterClass as a v1beta2 client writes it, with fields v1beta1 cannot hold.
fn v1beta2_class() -> Value {
    let infra = "infrastructure.cluster.x-k8s.io/v1beta1";
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "ClusterClass",
        "metadata": {"name": "cc", "namespace": "ns"},
        "spec": {
            "availabilityGates": [{"conditionType": "Ext"}],
            "infrastructure": {
                "templateRef": template_ref(infra, "DockerClusterTemplate", "t"),
                "naming": {"template": "{{ .cluster.name }}-{{ .random }}"},
            },
            "controlPlane": {
                "templateRef": template_ref(CONTROL_PLANE, "KubeadmControlPlaneTemplate", "cp"),
                "healthCheck": {"remediation": {"templateRef": template_ref(infra, "R", "r")}},
                "deletion": {"nodeVolumeDetachTimeoutSeconds": 45},
                "taints": [{"key": "k", "effect": "NoExecute", "propagation": "OnInitialization"}],
            },
            "workers": {"machineDeployments": [{
                "class": "w",
                "bootstrap": {"templateRef": template_ref(BOOTSTRAP, "KubeadmConfigTemplate", "b")},
                "infrastructure": {"templateRef": template_ref(infra, "DockerMachineTemplate", "t")},
                "deletion": {"order": "Random"},
                "readinessGates": [{"conditionType": "Ext", "polarity": "Positive"}],
            }]},
            "patches": [{"name": "p", "external": {"generatePatchesExtension": "gen"}}],
            "kubernetesVersions": ["v1.30.0", "v1.31.0"],
            "upgrade": {"external": {"generateUpgradePlanExtension": "plan"}},
        },
        "status": {"conditions": [{
            "type": "RefVersionsUpToDate",
            "status": "True",
            "reason": "RefVersionsUpToDate",
            "message": "",
            "lastTransitionTime": "2024-05-01T10:00:00Z",
        }]},
    })
}

#[test]
fn down_moves_every_field_back_and_keeps_the_rest() {
    let v2 = v1beta2_class();
    let v1 = down::<ClusterClassConversion>(&v2);
    assert_eq!(v1["apiVersion"], "cluster.x-k8s.io/v1beta1");
    let spec = &v1["spec"];
    assert_eq!(
        spec["infrastructure"],
        json!({"ref": {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "DockerClusterTemplate",
            "name": "t",
            "namespace": "ns",
        }})
    );
    let cp = &spec["controlPlane"];
    assert_eq!(cp["ref"]["kind"], "KubeadmControlPlaneTemplate");
    assert_eq!(cp["ref"]["namespace"], "ns");
    assert_eq!(cp["machineHealthCheck"]["remediationTemplate"]["namespace"], "ns");
    assert_eq!(cp["nodeVolumeDetachTimeout"], "45s");
    assert!(cp.get("taints").is_none());
    let md = &spec["workers"]["machineDeployments"][0];
    assert_eq!(md["template"]["bootstrap"]["ref"]["apiVersion"], "bootstrap.cluster.x-k8s.io/v1beta2");
    assert_eq!(md["strategy"], json!({"rollingUpdate": {"deletePolicy": "Random"}}));
    assert_eq!(spec["patches"][0]["external"], json!({"generateExtension": "gen"}));
    for gone in ["availabilityGates", "kubernetesVersions", "upgrade"] {
        assert!(spec.get(gone).is_none(), "{gone} is not v1beta1");
    }
    assert_eq!(v1["status"]["v1beta2"]["conditions"], v2["status"]["conditions"]);
    assert!(v1["status"].get("conditions").is_none());
    assert!(v1["metadata"]["annotations"][CONVERSION_DATA].is_string());
    assert_round_trips::<ClusterClassConversion>(&v2);
}

#[test]
fn empty_strings_and_v1beta1_only_shapes_are_kept_aside() {
    let mut v1 = v1beta1_class();
    v1["spec"]["patches"][0]["enabledIf"] = json!("");
    v1["spec"]["controlPlane"]["namingStrategy"]["template"] = json!("");
    v1["spec"]["workers"]["machineDeployments"][0]["strategy"] = json!({"rollingUpdate": {"maxUnavailable": 1}});
    v1["spec"]["infrastructure"]["ref"]["namespace"] = json!("elsewhere");
    v1["spec"]["workers"]["machinePools"] = json!([]);
    let v2 = strip_conversion_data(up::<ClusterClassConversion>(&v1));
    assert!(v2["spec"]["patches"][0].get("enabledIf").is_none());
    assert!(v2["spec"]["controlPlane"].get("naming").is_none());
    assert!(v2["spec"]["workers"].get("machinePools").is_none(), "v1beta2 lists are unset rather than empty");
    // v1beta2 requires a strategy type: v1beta1's default fills it.
    assert_eq!(
        v2["spec"]["workers"]["machineDeployments"][0]["rollout"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})
    );
    assert_round_trips::<ClusterClassConversion>(&v1);
}
