//! kube-rs server-side apply (`Patch::Apply` with `PatchParams::apply`, `.force()`,
//! `.dry_run()`) on a built-in kind, a custom resource and a Cluster API kind: the
//! managedFields entries it leaves, conflicts as `kube::Error::Api` 409 Conflict, forcing,
//! and dry runs that store nothing.

use crate::common;

use drydock_api::capi::core::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};
use kube::{CustomResource, Resource};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The shared test Widget (`example.drydock.dev/v1`), a custom resource to the server.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(group = "example.drydock.dev", version = "v1", kind = "Widget", namespaced)]
pub struct WidgetSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// (manager, operation, apiVersion, fieldsV1) of every entry, sorted by manager.
fn managed(meta: &ObjectMeta) -> Vec<(String, String, String, Value)> {
    let mut out: Vec<_> = meta
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            assert_eq!(e.fields_type.as_deref(), Some("FieldsV1"), "{e:?}");
            assert!(e.time.is_some() && e.subresource.is_none(), "{e:?}");
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.api_version.clone().unwrap_or_default(),
                e.fields_v1.as_ref().map(|f| f.0.clone()).unwrap_or_default(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn entry(manager: &str, operation: &str, api_version: &str, fields: Value) -> (String, String, String, Value) {
    (manager.into(), operation.into(), api_version.into(), fields)
}

/// Asserts `err` is the apply conflict with `manager` on `field`.
fn assert_conflict(err: kube::Error, manager: &str, field: &str) {
    let kube::Error::Api(status) = err else { panic!("expected an API error, got {err:?}") };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"), "{status:?}");
    assert_eq!(status.message, format!("Apply failed with 1 conflict: conflict with \"{manager}\": {field}"));
}

/// The story every kind goes through: alice applies `first`, bob's differing `second`
/// conflicts on `field`, a dry run of it stores nothing, forcing it moves the field to bob.
async fn apply_conflict_force<K>(api: &Api<K>, name: &str, first: Value, second: Value, field: &str) -> (K, K)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let alice = PatchParams::apply("alice");
    let bob = PatchParams::apply("bob");
    let created = api.patch(name, &alice, &Patch::Apply(&first)).await.expect("alice applies");
    let err = api.patch(name, &bob, &Patch::Apply(&second)).await.expect_err("bob conflicts");
    assert_conflict(err, "alice", field);

    let dry = api.patch(name, &bob.clone().force().dry_run(), &Patch::Apply(&second)).await.expect("dry run");
    assert!(managed(dry.meta()).iter().any(|e| e.0 == "bob"), "the dry run answers bob's entry: {dry:?}");
    let after_dry = api.get(name).await.expect("get");
    assert_eq!(managed(after_dry.meta()), managed(created.meta()), "a dry run stores nothing");
    assert_eq!(after_dry.meta().resource_version, created.meta().resource_version);

    let forced = api.patch(name, &bob.force(), &Patch::Apply(&second)).await.expect("bob forces");
    (created, forced)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_applies_a_config_map() {
    let s = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(s.client().await, "default");
    let cm = |value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "labels": {"app": "web"}},
               "data": {"mode": value}})
    };
    let (created, forced) = apply_conflict_force(&api, "app", cm("fast"), cm("slow"), ".data.mode").await;
    let labels_and_mode = json!({"f:data": {"f:mode": {}}, "f:metadata": {"f:labels": {"f:app": {}}}});
    assert_eq!(managed(&created.metadata), [entry("alice", "Apply", "v1", labels_and_mode.clone())]);
    assert_eq!(forced.data.as_ref().and_then(|d| d.get("mode")).map(String::as_str), Some("slow"));
    // The label had the same value: still shared; the forced field is bob's alone.
    assert_eq!(
        managed(&forced.metadata),
        [
            entry("alice", "Apply", "v1", json!({"f:metadata": {"f:labels": {"f:app": {}}}})),
            entry("bob", "Apply", "v1", labels_and_mode),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_applies_a_custom_resource() {
    let s = common::start().await;
    let api: Api<Widget> = Api::namespaced(s.client().await, "default");
    let w = |color: &str| {
        json!({"apiVersion": "example.drydock.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"replicas": 2, "color": color}})
    };
    let (created, forced) = apply_conflict_force(&api, "w", w("red"), w("blue"), ".spec.color").await;
    let v = "example.drydock.dev/v1";
    let both = json!({"f:spec": {"f:color": {}, "f:replicas": {}}});
    assert_eq!(managed(&created.metadata), [entry("alice", "Apply", v, both.clone())]);
    assert_eq!(forced.spec.color.as_deref(), Some("blue"));
    assert_eq!(
        managed(&forced.metadata),
        [entry("alice", "Apply", v, json!({"f:spec": {"f:replicas": {}}})), entry("bob", "Apply", v, both)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_applies_a_cluster_api_cluster() {
    let s = common::start_with_capi().await;
    let api: Api<Cluster> = Api::namespaced(s.client().await, "default");
    let cluster = |domain: &str| {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
               "metadata": {"name": "c1", "labels": {"team": "a"}},
               "spec": {"clusterNetwork": {"serviceDomain": domain}}})
    };
    let field = ".spec.clusterNetwork.serviceDomain";
    let (created, forced) =
        apply_conflict_force(&api, "c1", cluster("cluster.local"), cluster("example.internal"), field).await;
    let v = "cluster.x-k8s.io/v1beta1";
    let label = json!({"f:metadata": {"f:labels": {"f:team": {}}}});
    let all =
        json!({"f:metadata": {"f:labels": {"f:team": {}}}, "f:spec": {"f:clusterNetwork": {"f:serviceDomain": {}}}});
    assert_eq!(managed(&created.metadata), [entry("alice", "Apply", v, all.clone())]);
    let domain = forced.spec.cluster_network.as_ref().and_then(|n| n.service_domain.clone());
    assert_eq!(domain.as_deref(), Some("example.internal"));
    assert_eq!(managed(&forced.metadata), [entry("alice", "Apply", v, label), entry("bob", "Apply", v, all)]);
}
