//! The token controller of `kubernetes.io/service-account-token` Secrets, as
//! kube-controller-manager runs it: a Secret of that type naming a ServiceAccount (the
//! `kubernetes.io/service-account.name` annotation) gets a token for it in `data.token`,
//! with `namespace` and the server's `ca.crt`, and the ServiceAccount's uid in
//! `kubernetes.io/service-account.uid`. The token does not expire; it authenticates while
//! the Secret holds it and the ServiceAccount exists with that uid (`auth/mod.rs`). Tools
//! that predate TokenRequest (`argocd cluster add`, older CI integrations) create these.

use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use drydock_api::tenancy::LogicalClusterName;
use serde_json::json;

use super::{SecretsOfType, target};
use crate::auth::service_accounts::{LegacyClaims, ServiceAccountTokens};
use crate::rest::{Api, WriteOptions};
use crate::store::watch::{EventType, Scope};

pub const SECRET_TYPE: &str = "kubernetes.io/service-account-token";
pub const NAME_ANNOTATION: &str = "kubernetes.io/service-account.name";
const UID_ANNOTATION: &str = "kubernetes.io/service-account.uid";

pub async fn run(api: Arc<Api>, issuer: Arc<ServiceAccountTokens>, ca_file: Option<PathBuf>) {
    let Some(res) = api.registry.lookup("", "v1", "secrets").map(|r| r.id) else {
        return;
    };
    let after = api.store.revision();
    let Ok(sub) = api.store.hub().subscribe(
        Scope::AllClusters(res),
        Arc::new(SecretsOfType { type_: SECRET_TYPE, namespace: None }),
        after,
        true,
    ) else {
        return;
    };
    let mut rx = sub.rx;
    while let Some((_, ev)) = rx.recv().await {
        if ev.rv() > after && ev.kind != EventType::Deleted {
            let k = &ev.key;
            // Read when needed: `drydock up` writes it once the server has started.
            let ca_pem = ca_file.as_ref().and_then(|f| std::fs::read_to_string(f).ok());
            if let Err(e) = populate(&api, &issuer, ca_pem.as_deref(), &k.cluster, &k.namespace, &k.name).await {
                tracing::warn!(cluster = %k.cluster, namespace = %k.namespace, name = %k.name, error = %e, "populating a service account token Secret");
            }
        }
    }
}

/// Writes the token into the Secret unless it holds one for its ServiceAccount already.
async fn populate(
    api: &Api,
    issuer: &ServiceAccountTokens,
    ca_pem: Option<&str>,
    cluster: &str,
    namespace: &str,
    name: &str,
) -> Result<(), String> {
    let Some(t) = target(api, cluster, "", "secrets", Some(namespace), Some(name)) else { return Ok(()) };
    let Ok(current) = api.get(&t) else { return Ok(()) };
    let mut secret = api.value(&t.res, &current).map_err(|e| e.to_string())?;
    if secret["type"] != SECRET_TYPE || secret["metadata"]["deletionTimestamp"].is_string() {
        return Ok(());
    }
    let Some(sa_name) = secret["metadata"]["annotations"][NAME_ANNOTATION].as_str().map(str::to_string) else {
        return Ok(());
    };
    let Some(sa) = target(api, cluster, "", "serviceaccounts", Some(namespace), Some(&sa_name)) else { return Ok(()) };
    // Without its ServiceAccount the Secret stays empty, as upstream leaves it until it is
    // cleaned up.
    let Ok(account) = api.get(&sa) else { return Ok(()) };
    let sa_uid = account.meta.uid.clone();
    let has_token = secret["data"]["token"].is_string();
    if has_token && secret["metadata"]["annotations"][UID_ANNOTATION] == sa_uid.as_str() {
        return Ok(());
    }
    let cluster_name = (cluster != LogicalClusterName::ROOT).then(|| cluster.to_string());
    let token = issuer
        .issue_legacy(LegacyClaims {
            iss: String::new(),
            sub: String::new(),
            namespace: namespace.to_string(),
            secret_name: name.to_string(),
            service_account_name: sa_name,
            service_account_uid: sa_uid.clone(),
            cluster_name,
        })
        .map_err(|e| format!("{e:#}"))?;
    let data = secret["data"].as_object_mut().map(std::mem::take).unwrap_or_default();
    secret["data"] = json!(data);
    secret["data"]["token"] = json!(STANDARD.encode(token));
    secret["data"]["namespace"] = json!(STANDARD.encode(namespace));
    if let Some(ca) = ca_pem {
        secret["data"]["ca.crt"] = json!(STANDARD.encode(ca));
    }
    secret["metadata"]["annotations"][UID_ANNOTATION] = json!(sa_uid);
    match api.update(&t, secret, &WriteOptions::by("tokens-controller")).await {
        // A newer write of the Secret: its event brings it back here.
        Err(e) if e.code == 409 => Ok(()),
        other => other.map(drop).map_err(|e| e.to_string()),
    }
}
