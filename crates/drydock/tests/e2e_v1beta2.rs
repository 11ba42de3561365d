//! Cluster API v1beta2 beside v1beta1, as users meet it: a cluster written in v1beta2
//! provisions, every object reads in both versions (the same objects, references resolved
//! through the providers' contract labels), and clients of either version drive one fleet
//! at the same time.

use crate::common;

use std::time::Duration;

use drydock_api::capi::core::{self, v1beta2};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use common::{Env, eventually, generated_cluster, kubectl, kubectl_ok};

const WAIT: Duration = Duration::from_secs(90);
const MANIFEST: &str = include_str!("data/cluster-in-memory-v1beta2.yaml");

fn list(kc: &std::path::Path, resource: &str) -> Vec<Value> {
    let out = kubectl_ok(kc, &["get", resource, "-n", "default", "-o", "json"], None);
    let v: Value = serde_json::from_str(&out).expect("json");
    v["items"].as_array().cloned().unwrap_or_default()
}

/// The v1beta2 condition `type_` of an object read in v1beta2 (null when absent).
fn condition<'a>(obj: &'a Value, type_: &str) -> &'a Value {
    obj["status"]["conditions"].as_array().and_then(|c| c.iter().find(|c| c["type"] == type_)).unwrap_or(&Value::Null)
}

fn of_cluster<'a>(items: &'a [Value], cluster: &str) -> Vec<&'a Value> {
    items.iter().filter(|m| m["spec"]["clusterName"] == cluster).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1beta2_cluster_provisions_and_reads_in_both_versions() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(MANIFEST));
    let running = eventually("3 Running, Available Machines, read in v1beta2", WAIT, || {
        let items = list(&kc, "machines.v1beta2.cluster.x-k8s.io");
        let running = of_cluster(&items, "modern")
            .iter()
            .filter(|m| m["status"]["phase"] == "Running" && condition(m, "Available")["status"] == "True")
            .count();
        std::future::ready((running == 3).then_some(items))
    })
    .await;
    let v1 = list(&kc, "machines.v1beta1.cluster.x-k8s.io");
    assert_eq!(v1.len(), running.len());
    for m2 in &running {
        let name = &m2["metadata"]["name"];
        let m1 = v1.iter().find(|m| m["metadata"]["name"] == *name).expect("the same Machine in v1beta1");
        assert_eq!(m1["metadata"]["uid"], m2["metadata"]["uid"]);
        assert_eq!(m1["apiVersion"], "cluster.x-k8s.io/v1beta1");
        assert_eq!(m2["apiVersion"], "cluster.x-k8s.io/v1beta2");
        // v1beta2 names the group; v1beta1 the version the provider's contract label gives.
        assert_eq!(
            m2["spec"]["infrastructureRef"],
            json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryMachine", "name": m1["spec"]["infrastructureRef"]["name"]})
        );
        assert_eq!(m1["spec"]["infrastructureRef"]["apiVersion"], "infrastructure.cluster.x-k8s.io/v1alpha1");
        assert_eq!(m1["spec"]["infrastructureRef"]["namespace"], "default");
        assert_eq!(m2["status"]["initialization"]["infrastructureProvisioned"], true, "{m2:#}");
        assert_eq!(m1["status"]["infrastructureReady"], true);
        assert!(m2["status"]["nodeRef"]["name"].is_string() && m2["status"]["nodeRef"].get("kind").is_none(), "{m2:#}");
        let ready_v1beta1 = m2["status"]["deprecated"]["v1beta1"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
        assert!(ready_v1beta1, "v1beta1 conditions are kept under status.deprecated.v1beta1: {m2:#}");
        // The v1beta2 conditions, as upstream's Machine controller reports them.
        for (type_, status, reason) in [
            ("Ready", "True", "Ready"),
            ("BootstrapConfigReady", "True", "Ready"),
            ("InfrastructureReady", "True", "Ready"),
            ("NodeReady", "True", "NodeReady"),
            ("NodeHealthy", "True", "NodeHealthy"),
            ("Updating", "False", "NotUpdating"),
            ("Deleting", "False", "NotDeleting"),
            ("Paused", "False", "NotPaused"),
        ] {
            let c = condition(m2, type_);
            assert_eq!((c["status"].as_str(), c["reason"].as_str()), (Some(status), Some(reason)), "{type_}: {m2:#}");
            assert!(c["lastTransitionTime"].is_string() && c["observedGeneration"].is_i64(), "{c}");
        }
    }
    // The KubeadmControlPlane written in v1beta2 reads in v1beta1 with its moved fields.
    let kcp = kubectl_ok(
        &kc,
        &["get", "kubeadmcontrolplanes.v1beta1.controlplane.cluster.x-k8s.io", "modern-control-plane", "-o", "json"],
        None,
    );
    let kcp: Value = serde_json::from_str(&kcp).expect("json");
    assert_eq!(kcp["spec"]["machineTemplate"]["infrastructureRef"]["kind"], "InMemoryMachineTemplate");
    assert_eq!(kcp["spec"]["machineTemplate"]["nodeDrainTimeout"], "1m0s");
    assert_eq!(
        kcp["spec"]["kubeadmConfigSpec"]["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"],
        json!({"eviction-hard": "nodefs.available<0%"})
    );
    let cluster = kubectl_ok(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "modern", "-o", "json"], None);
    let cluster: Value = serde_json::from_str(&cluster).expect("json");
    assert_eq!(cluster["status"]["initialization"]["controlPlaneInitialized"], true, "{cluster:#}");
    assert_eq!(cluster["status"]["initialization"]["infrastructureProvisioned"], true);
}

async fn ready_replicas_v1beta1(api: &Api<core::MachineDeployment>, name: &str) -> Option<i32> {
    api.get(name).await.ok()?.status?.ready_replicas
}

async fn ready_replicas_v1beta2(api: &Api<v1beta2::MachineDeployment>, name: &str) -> Option<i32> {
    api.get(name).await.ok()?.status?.deprecated?.v1beta1?.ready_replicas
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1beta1_and_v1beta2_clients_drive_one_fleet_at_once() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let client = env.client();
    let old: Api<core::MachineDeployment> = Api::namespaced(client.clone(), "default");
    let new: Api<v1beta2::MachineDeployment> = Api::namespaced(client.clone(), "default");
    // One cluster written in each version, at once.
    let classic = generated_cluster("classic", &["--worker-machine-count", "1"]);
    let (a, b) = tokio::join!(
        tokio::task::spawn_blocking({
            let kc = kc.clone();
            move || kubectl_ok(&kc, &["apply", "-f", "-"], Some(&classic))
        }),
        tokio::task::spawn_blocking({
            let kc = kc.clone();
            move || kubectl_ok(&kc, &["apply", "-f", "-"], Some(MANIFEST))
        }),
    );
    a.expect("apply classic");
    b.expect("apply modern");
    eventually("both MachineDeployments", WAIT, || async {
        let md = (old.get_opt("classic-md-0").await.ok().flatten(), new.get_opt("modern-workers").await.ok().flatten());
        (md.0.is_some() && md.1.is_some()).then_some(())
    })
    .await;

    // Each client scales the deployment written in the other version, concurrently: a
    // typed v1beta1 read-modify-write of a v1beta2 object, and a v1beta2 patch of a v1beta1 one.
    let scale_modern = async {
        // A read-modify-write, retried when the controllers wrote in between (409).
        for _ in 0..50 {
            let mut md = old.get("modern-workers").await.expect("read modern in v1beta1");
            md.spec.replicas = Some(3);
            match old.replace("modern-workers", &PostParams::default(), &md).await {
                Ok(written) => return written,
                Err(kube::Error::Api(e)) if e.code == 409 => continue,
                Err(e) => panic!("v1beta1 replace: {e}"),
            }
        }
        panic!("modern-workers kept changing under the v1beta1 client")
    };
    let apply = PatchParams::apply("v1beta2-client").force();
    let replicas = Patch::Apply(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "spec": {"replicas": 2},
    }));
    let scale_classic = new.patch("classic-md-0", &apply, &replicas);
    let (modern, classic) = tokio::join!(scale_modern, scale_classic);
    assert_eq!(modern.spec.replicas, Some(3));
    assert_eq!(classic.expect("v1beta2 apply").spec.replicas, Some(2));

    eventually("modern scaled by the v1beta1 client", WAIT, || async {
        (ready_replicas_v1beta2(&new, "modern-workers").await == Some(3)).then_some(())
    })
    .await;
    eventually("classic scaled by the v1beta2 client", WAIT, || async {
        (ready_replicas_v1beta1(&old, "classic-md-0").await == Some(2)).then_some(())
    })
    .await;

    // The v1beta1 write kept what only v1beta2 holds: the rollout and deletion settings.
    let modern = new.get("modern-workers").await.expect("modern");
    let rollout =
        modern.spec.rollout.as_ref().and_then(|r| r.strategy.as_ref()).and_then(|s| s.rolling_update.as_ref());
    assert!(rollout.is_some(), "{:?}", modern.spec.rollout);
    let deletion = modern.spec.template.spec.deletion.as_ref().and_then(|d| d.node_deletion_timeout_seconds);
    assert_eq!(deletion, Some(10));
    let machines: Api<v1beta2::Machine> = Api::namespaced(client, "default");
    let all = machines.list(&ListParams::default()).await.expect("list v1beta2 Machines");
    let workers = |c: &str| all.items.iter().filter(|m| m.spec.cluster_name == c).count();
    assert_eq!(workers("modern"), 4, "1 control plane + 3 workers");
    assert_eq!(workers("classic"), 3, "1 control plane + 2 workers");
}

/// A MachineDeployment as an applier of `version` writes it, with `max_surge`.
fn applied_deployment(version: &str, max_surge: u32) -> String {
    let (strategy, infra) = if version == "v1beta1" {
        (
            format!("strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {max_surge}}}}}"),
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: InMemoryMachineTemplate, name: t}",
        )
    } else {
        (
            format!("rollout: {{strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {max_surge}}}}}}}"),
            "{apiGroup: infrastructure.cluster.x-k8s.io, kind: InMemoryMachineTemplate, name: t}",
        )
    };
    format!(
        "apiVersion: cluster.x-k8s.io/{version}\nkind: MachineDeployment\nmetadata: {{name: ssa, namespace: default}}\n\
         spec:\n  clusterName: c\n  replicas: 0\n  {strategy}\n  template:\n    spec:\n      clusterName: c\n      \
         bootstrap: {{dataSecretName: s}}\n      infrastructureRef: {infra}\n"
    )
}

/// Server-side apply across versions: a manager owns fields by the paths of the version it
/// applied in (v1beta1's `spec.strategy` is v1beta2's `spec.rollout.strategy`), so an
/// apply in the other version conflicts with it on the same field, names it in the owner's
/// paths, and a forced apply takes it over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_conflicts_follow_fields_across_versions() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let apply = |manager: &str, manifest: &str, force: bool| {
        let mut args = vec!["apply", "--server-side", "--field-manager", manager, "-f", "-"];
        if force {
            args.push("--force-conflicts");
        }
        kubectl(&kc, &args, Some(manifest))
    };
    let (ok, _, err) = apply("old-tool", &applied_deployment("v1beta1", 1), false);
    assert!(ok, "{err}");
    // The same value is no conflict: both own it.
    let (ok, _, err) = apply("new-tool", &applied_deployment("v1beta2", 1), false);
    assert!(ok, "{err}");
    let (ok, _, err) = apply("new-tool", &applied_deployment("v1beta2", 2), false);
    assert!(!ok, "changing a field old-tool owns conflicts");
    assert!(err.contains(r#"conflict with "old-tool": .spec.strategy.rollingUpdate.maxSurge"#), "{err}");
    let (ok, _, err) = apply("new-tool", &applied_deployment("v1beta2", 2), true);
    assert!(ok, "{err}");
    let md: Value = serde_json::from_str(&kubectl_ok(
        &kc,
        &["get", "machinedeployments.v1beta1.cluster.x-k8s.io", "ssa", "-o", "json", "--show-managed-fields"],
        None,
    ))
    .expect("json");
    assert_eq!(md["spec"]["strategy"]["rollingUpdate"]["maxSurge"], 2);
    let entry = |manager: &str| {
        md["metadata"]["managedFields"].as_array().and_then(|l| l.iter().find(|e| e["manager"] == manager)).cloned()
    };
    let old = entry("old-tool").expect("old-tool's entry");
    assert_eq!(old["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert!(old["fieldsV1"]["f:spec"]["f:strategy"]["f:rollingUpdate"].get("f:maxSurge").is_none(), "{old}");
    assert!(old["fieldsV1"]["f:spec"].get("f:replicas").is_some(), "old-tool keeps the rest: {old}");
    let new = entry("new-tool").expect("new-tool's entry");
    assert!(new["fieldsV1"]["f:spec"]["f:rollout"]["f:strategy"]["f:rollingUpdate"].get("f:maxSurge").is_some());
    // The old tool setting its value again conflicts with the new owner, in v1beta2 paths.
    let (ok, _, err) = apply("old-tool", &applied_deployment("v1beta1", 1), false);
    assert!(!ok);
    assert!(err.contains(r#"conflict with "new-tool": .spec.rollout.strategy.rollingUpdate.maxSurge"#), "{err}");
}

/// An applier that moves to v1beta2 and leaves out a field it set in v1beta1 gives it up:
/// the field it owned by v1beta1's path (`spec.rolloutAfter`) is pruned at v1beta2's
/// (`spec.rollout.after`), as kube-apiserver prunes across versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applier_moving_to_v1beta2_drops_what_it_no_longer_sets() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let apply = |manifest: &str| {
        kubectl_ok(&kc, &["apply", "--server-side", "--field-manager", "tool", "-f", "-"], Some(manifest))
    };
    let with_rollout_after = applied_deployment("v1beta1", 1)
        .replace("  replicas: 0\n", "  replicas: 0\n  rolloutAfter: \"2030-01-01T00:00:00Z\"\n");
    apply(&with_rollout_after);
    let get = || -> Value {
        let out = kubectl_ok(&kc, &["get", "machinedeployments.v1beta2.cluster.x-k8s.io", "ssa", "-o", "json"], None);
        serde_json::from_str(&out).expect("json")
    };
    assert_eq!(get()["spec"]["rollout"]["after"], "2030-01-01T00:00:00Z");
    apply(&applied_deployment("v1beta2", 1));
    let md = get();
    assert!(md["spec"]["rollout"].get("after").is_none(), "{:#}", md["spec"]);
    assert_eq!(md["spec"]["rollout"]["strategy"]["rollingUpdate"]["maxSurge"], 1, "what it still sets stays");
}

/// A Cluster whose ClusterClass names templates that do not exist says so in
/// `TopologyReconciled` (and so in `Available`), instead of waiting in silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topology_cluster_says_why_its_class_cannot_be_used() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let manifest = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: quick-start, namespace: default}\n\
        spec:\n  infrastructure: {templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevClusterTemplate, name: t}}\n  \
        controlPlane: {templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: t}}\n  \
        variables: [{name: region, required: true, schema: {openAPIV3Schema: {type: string}}}]\n\
        ---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: shaped, namespace: default}\n\
        spec:\n  topology: {classRef: {name: quick-start}, version: v1.33.0, variables: [{name: region, value: eu}]}\n";
    let (ok, _, stderr) = kubectl(&kc, &["apply", "-f", "-"], Some(manifest));
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("Warning"), "nothing to warn about: {stderr}");
    let cluster = eventually("the Cluster to say why it waits", WAIT, || {
        let out = kubectl_ok(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "shaped", "-o", "json"], None);
        let cluster: Value = serde_json::from_str(&out).expect("json");
        std::future::ready(
            (condition(&cluster, "TopologyReconciled")["reason"] == "ReconcileFailed").then_some(cluster),
        )
    })
    .await;
    let topology = condition(&cluster, "TopologyReconciled");
    assert_eq!(topology["status"], "False");
    assert!(topology["message"].as_str().is_some_and(|m| m.contains("DevClusterTemplate default/t")), "{topology}");
    let available = condition(&cluster, "Available");
    assert_eq!(available["status"], "False", "{cluster:#}");
    assert!(available["message"].as_str().is_some_and(|m| m.contains("TopologyReconciled")), "{available}");

    // The class itself is reconciled: its variables are listed, with where they come from.
    let class = eventually("the ClusterClass's VariablesReady", WAIT, || {
        let out =
            kubectl_ok(&kc, &["get", "clusterclasses.v1beta2.cluster.x-k8s.io", "quick-start", "-o", "json"], None);
        let class: Value = serde_json::from_str(&out).expect("json");
        std::future::ready((condition(&class, "VariablesReady")["status"] == "True").then_some(class))
    })
    .await;
    assert_eq!(
        class["status"]["variables"],
        json!([{"name": "region", "definitionsConflict": false, "definitions": [
            {"from": "inline", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}}]}]),
        "{class:#}"
    );
    assert_eq!(class["status"]["observedGeneration"], class["metadata"]["generation"]);
    let v1 = kubectl_ok(&kc, &["get", "clusterclasses.v1beta1.cluster.x-k8s.io", "quick-start", "-o", "json"], None);
    let v1: Value = serde_json::from_str(&v1).expect("json");
    let reconciled =
        v1["status"]["conditions"].as_array().and_then(|c| c.iter().find(|c| c["type"] == "VariablesReconciled"));
    assert_eq!(reconciled.map(|c| c["status"].clone()), Some(json!("True")), "{v1:#}");
}

/// A provider of the user's own, on the v1beta1 contract: its CRD lists v1alpha1 and
/// v1beta1 under the contract label, so v1beta1 is the version to use. As upstream's
/// providers do, it lets the Cluster API manager at its kinds with a ClusterRole the
/// manager's role aggregates.
const THIRD_PARTY_PROVIDER: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: acme-provider-for-capi
  labels: {cluster.x-k8s.io/aggregate-to-manager: "true"}
rules:
- apiGroups: [infrastructure.acme.example]
  resources: ["*"]
  verbs: [get, list, watch, patch, update, delete]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: acmemachinetemplates.infrastructure.acme.example
  labels: {cluster.x-k8s.io/v1beta1: v1alpha1_v1beta1}
spec:
  group: infrastructure.acme.example
  scope: Namespaced
  names: {kind: AcmeMachineTemplate, plural: acmemachinetemplates, singular: acmemachinetemplate, listKind: AcmeMachineTemplateList}
  versions:
  - {name: v1alpha1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1beta1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
"#;

const CLASS_TEMPLATES: &str = "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DevClusterTemplate\n\
    metadata: {name: dev, namespace: default}\nspec: {template: {spec: {backend: {inMemory: {}}}}}\n---\n\
    apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlaneTemplate\n\
    metadata: {name: kcp, namespace: default}\nspec: {template: {spec: {kubeadmConfigSpec: {}}}}\n---\n\
    apiVersion: infrastructure.acme.example/v1alpha1\nkind: AcmeMachineTemplate\n\
    metadata: {name: acme, namespace: default}\nspec: {template: {spec: {}}}\n";

fn class_manifest(dev: &str, acme: &str) -> String {
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {{name: versions, namespace: default}}\n\
         spec:\n  infrastructure: {{templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/{dev}, kind: DevClusterTemplate, name: dev}}}}\n  \
         controlPlane:\n    templateRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: kcp}}\n    \
         machineInfrastructure: {{templateRef: {{apiVersion: infrastructure.acme.example/{acme}, kind: AcmeMachineTemplate, name: acme}}}}\n"
    )
}

/// A class's template references are checked against the versions their providers'
/// contract labels list (drydock's own kinds and a provider CRD the user installed), again
/// when the provider is upgraded, and every template it references gets the class as an
/// owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusterclass_flags_outdated_template_versions_and_owns_its_templates() {
    let env = Env::start_paused().await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(THIRD_PARTY_PROVIDER));
    kubectl_ok(
        &kc,
        &["wait", "--for=condition=Established", "crd/acmemachinetemplates.infrastructure.acme.example"],
        None,
    );
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(CLASS_TEMPLATES));
    let (ok, _, stderr) = kubectl(&kc, &["apply", "-f", "-"], Some(&class_manifest("v1beta1", "v1alpha1")));
    assert!(ok, "{stderr}");
    let ref_versions = |want: &'static str| {
        let kc = kc.clone();
        move || {
            let out =
                kubectl_ok(&kc, &["get", "clusterclasses.v1beta2.cluster.x-k8s.io", "versions", "-o", "json"], None);
            let class: Value = serde_json::from_str(&out).expect("json");
            let c = condition(&class, "RefVersionsUpToDate").clone();
            std::future::ready(
                (c["status"] == want && class["status"]["observedGeneration"] == class["metadata"]["generation"])
                    .then_some(c),
            )
        }
    };
    let outdated = eventually("RefVersionsUpToDate False", WAIT, ref_versions("False")).await;
    assert_eq!(outdated["reason"], "RefVersionsNotUpToDate");
    let message = outdated["message"].as_str().unwrap_or_default();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines,
        [
            "* DevClusterTemplate dev: apiVersion infrastructure.cluster.x-k8s.io/v1beta1 should be infrastructure.cluster.x-k8s.io/v1beta2",
            "* AcmeMachineTemplate acme: apiVersion infrastructure.acme.example/v1alpha1 should be infrastructure.acme.example/v1beta1",
        ],
        "the KubeadmControlPlaneTemplate is current: {message}"
    );
    for template in ["devclustertemplates/dev", "kubeadmcontrolplanetemplates/kcp", "acmemachinetemplates/acme"] {
        let owners = eventually("the class owning its template", WAIT, || {
            let out = kubectl_ok(&kc, &["get", template, "-o", "jsonpath={.metadata.ownerReferences}"], None);
            let owners: Value = serde_json::from_str(if out.is_empty() { "[]" } else { &out }).expect("json");
            std::future::ready(owners.as_array().filter(|o| !o.is_empty()).cloned())
        })
        .await;
        assert_eq!(owners.len(), 1, "{template}: {owners:?}");
        assert_eq!((owners[0]["kind"].as_str(), owners[0]["name"].as_str()), (Some("ClusterClass"), Some("versions")));
        assert_eq!(owners[0]["controller"], Value::Null, "{template}: an owner, not the controller");
    }

    // The user moves the class to the versions the contracts name.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&class_manifest("v1beta2", "v1beta1")));
    let current = eventually("RefVersionsUpToDate True", WAIT, ref_versions("True")).await;
    assert_eq!(current["reason"], "RefVersionsUpToDate");

    // The provider is upgraded to the v1beta2 contract; CRDs are not watched, and the class
    // is looked at again within the resync period.
    let upgraded = THIRD_PARTY_PROVIDER
        .replace("labels: {cluster.x-k8s.io/v1beta1: v1alpha1_v1beta1}", "labels: {cluster.x-k8s.io/v1beta1: v1alpha1_v1beta1, cluster.x-k8s.io/v1beta2: v1beta2}")
        .replace("  - {name: v1beta1, served: true, storage: true,", "  - {name: v1beta2, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n  - {name: v1beta1, served: true, storage: true,");
    assert_ne!(upgraded, THIRD_PARTY_PROVIDER);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&upgraded));
    env.clock.advance(Duration::from_secs(600));
    let behind = eventually("RefVersionsUpToDate False after the upgrade", WAIT, ref_versions("False")).await;
    assert_eq!(
        behind["message"],
        "* AcmeMachineTemplate acme: apiVersion infrastructure.acme.example/v1beta1 should be infrastructure.acme.example/v1beta2"
    );
}

/// `RemoteConnectionProbe` follows the workload cluster's API server: True once it answers;
/// made unreachable (the `api-unreachable` fault on its infrastructure cluster), False once
/// the grace period is over, naming the last success, and the Cluster is no longer
/// Available; healed, True again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_connection_probe_follows_the_workload_api_server() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generated_cluster("probed", &["--worker-machine-count", "0"])));
    let cluster = || {
        let out = kubectl_ok(&kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "probed", "-o", "json"], None);
        serde_json::from_str::<Value>(&out).expect("json")
    };
    let probe_is = |status: &'static str| {
        move || {
            let c = cluster();
            std::future::ready((condition(&c, "RemoteConnectionProbe")["status"] == status).then_some(c))
        }
    };
    let answered = eventually("the probe to succeed", WAIT, probe_is("True")).await;
    assert_eq!(condition(&answered, "RemoteConnectionProbe")["reason"], "ProbeSucceeded");
    let infra = &answered["spec"]["infrastructureRef"];
    let infra = format!("{}/{}", infra["kind"].as_str().expect("kind"), infra["name"].as_str().expect("name"));

    kubectl_ok(&kc, &["annotate", &infra, "infrastructure.drydock.dev/fault=api-unreachable"], None);
    eventually("the workload API server to answer 503", WAIT, || {
        let (ok, _, stderr) = kubectl(&kc, &["get", "--raw", "/clusters/default.probed/api"], None);
        std::future::ready((!ok && stderr.contains("ServiceUnavailable")).then_some(()))
    })
    .await;
    let failed =
        eventually("the probe to fail once its grace period is over", Duration::from_secs(150), probe_is("False"))
            .await;
    let probe = condition(&failed, "RemoteConnectionProbe");
    assert_eq!(probe["reason"], "ProbeFailed");
    let message = probe["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Remote connection probe failed, probe last succeeded at "), "{probe}");
    let available = condition(&failed, "Available");
    assert_eq!(available["status"], "False", "{failed:#}");
    assert!(available["message"].as_str().is_some_and(|m| m.contains("RemoteConnectionProbe")), "{available}");

    kubectl_ok(&kc, &["annotate", &infra, "infrastructure.drydock.dev/fault-"], None);
    let healed = eventually("the probe to succeed again", WAIT, probe_is("True")).await;
    assert_eq!(condition(&healed, "RemoteConnectionProbe")["reason"], "ProbeSucceeded");
    eventually("the Cluster Available again", WAIT, || {
        let c = cluster();
        std::future::ready((condition(&c, "Available")["status"] == "True").then_some(()))
    })
    .await;
}
