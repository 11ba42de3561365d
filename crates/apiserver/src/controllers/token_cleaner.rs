//! kube-controller-manager's token cleaner: the Secret of a bootstrap token
//! (`kube-system`, type `bootstrap.kubernetes.io/token`) is deleted once its `expiration`
//! has passed, in every logical cluster. Cluster API's join tokens are extended while their
//! Machine joins and then left to expire; this is what removes them.
//!
//! One task keeps the expirations in order and sleeps until the first; an extended token
//! is looked at again when its old expiration comes, found alive, and kept.

use std::collections::BTreeSet;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jiff::Timestamp;

use super::{SecretsOfType, target};
use crate::rest::{Api, DeleteOptions};
use crate::store::Stored;
use crate::store::watch::{EventFilter, EventType, Scope};

const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
const NAMESPACE: &str = "kube-system";

/// Bootstrap token Secrets.
const TOKENS: SecretsOfType = SecretsOfType { type_: SECRET_TYPE, namespace: Some(NAMESPACE) };

/// When a token's Secret expires, if it says.
fn expiration(obj: &Stored) -> Option<Timestamp> {
    let v = obj.to_value().ok()?;
    let text = STANDARD.decode(v["data"]["expiration"].as_str()?).ok()?;
    std::str::from_utf8(&text).ok()?.parse().ok()
}

pub async fn run(api: Arc<Api>) {
    let Some(res) = api.registry.lookup("", "v1", "secrets").map(|r| r.id) else {
        return;
    };
    let after = api.store.revision();
    let Ok(sub) = api.store.hub().subscribe(Scope::AllClusters(res), Arc::new(TOKENS), after, true) else {
        return;
    };
    // (expires, cluster, name), earliest first.
    let mut due: BTreeSet<(Timestamp, Arc<str>, String)> = BTreeSet::new();
    for cluster in api.store.clusters() {
        for (key, obj) in api.store.scan(Some(&cluster), Some(NAMESPACE)) {
            if key.res == res
                && TOKENS.matches(&key, &obj.meta)
                && let Some(t) = expiration(&obj)
            {
                due.insert((t, key.cluster, key.name));
            }
        }
    }
    let mut rx = sub.rx;
    loop {
        let wait = due.first().map(|(t, ..)| t.duration_since(Timestamp::now()).unsigned_abs());
        tokio::select! {
            ev = rx.recv() => {
                let Some((_, ev)) = ev else { return };
                if ev.rv() > after && ev.kind != EventType::Deleted && let Some(t) = expiration(&ev.obj) {
                    due.insert((t, ev.key.cluster.clone(), ev.key.name.clone()));
                }
            }
            () = tokio::time::sleep(wait.unwrap_or_default()), if wait.is_some() => {
                let now = Timestamp::now();
                while let Some(first) = due.first().filter(|(t, ..)| *t <= now).cloned() {
                    due.remove(&first);
                    delete_if_expired(&api, &first.1, &first.2, now).await;
                }
            }
        }
    }
}

/// Deletes the token's Secret if it (still) has expired: it may have been extended since.
async fn delete_if_expired(api: &Api, cluster: &str, name: &str, now: Timestamp) {
    let Some(t) = target(api, cluster, "", "secrets", Some(NAMESPACE), Some(name)) else { return };
    let Ok(current) = api.get(&t) else { return };
    if expiration(&current).is_none_or(|e| e > now) {
        return;
    }
    if let Err(e) = api.delete(&t, &DeleteOptions::default()).await
        && e.code != 404
    {
        tracing::warn!(cluster, name, error = %e, "deleting an expired bootstrap token");
    }
}
