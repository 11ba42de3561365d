//! Expired bootstrap tokens are deleted, as kube-controller-manager's token cleaner does;
//! one extended before it expired, and one far from expiring, stay.

use crate::common;

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};

fn token(id: &str, expires: jiff::Timestamp) -> Secret {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("bootstrap-token-{id}"), "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {
            "token-id": id,
            "token-secret": "0123456789abcdef",
            "expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "usage-bootstrap-authentication": "true",
        },
    }))
    .expect("secret")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_bootstrap_tokens_are_deleted_and_live_ones_kept() {
    let srv = common::start().await;
    let secrets: Api<Secret> = Api::namespaced(srv.in_process_client(), "kube-system");
    let now = jiff::Timestamp::now();
    let soon = now + jiff::SignedDuration::from_secs(2);
    let later = now + jiff::SignedDuration::from_secs(3600);
    for (id, expires) in [("aaaaaa", soon), ("bbbbbb", soon), ("cccccc", later), ("zzzzzz", soon)] {
        secrets.create(&PostParams::default(), &token(id, expires)).await.expect("create token");
    }
    // bbbbbb is extended before it expires, as a joining Machine's token is.
    let extended = serde_json::json!({"stringData": {"expiration": later.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()}});
    secrets.patch("bootstrap-token-bbbbbb", &PatchParams::default(), &Patch::Merge(&extended)).await.expect("extend");

    common::eventually("the expired tokens deleted", Duration::from_secs(30), || async {
        let gone = |s: Option<Secret>| s.is_none();
        let a = gone(secrets.get_opt("bootstrap-token-aaaaaa").await.expect("get"));
        let z = gone(secrets.get_opt("bootstrap-token-zzzzzz").await.expect("get"));
        (a && z).then_some(())
    })
    .await;
    // The extended token's first expiration came between the other two (they are looked at
    // in name order): it was looked at, found extended and kept.
    assert!(secrets.get_opt("bootstrap-token-bbbbbb").await.expect("get").is_some(), "extended token kept");
    assert!(secrets.get_opt("bootstrap-token-cccccc").await.expect("get").is_some(), "live token kept");
}
