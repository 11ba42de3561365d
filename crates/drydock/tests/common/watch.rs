//! Recording what a watch sees, to check the order in which objects changed.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::watcher;

/// Every `(resourceVersion, value)` a watch saw, in order. drydock's resourceVersions are
/// store revisions, so they order events across kinds.
pub type Seen = Arc<Mutex<Vec<(u64, String)>>>;

/// Watches `api` in the background, recording `read` of each object seen.
pub fn record<K, F>(api: Api<K>, read: F) -> Seen
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    F: Fn(&K) -> String + Send + 'static,
{
    let seen: Seen = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()));
        while let Some(Ok(e)) = events.next().await {
            if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) = e {
                let rv = o.meta().resource_version.as_deref().and_then(|r| r.parse().ok()).unwrap_or_default();
                out.lock().expect("lock").push((rv, read(&o)));
            }
        }
    });
    seen
}

/// The resourceVersion of the first value seen that `pick` accepts.
pub fn first_where(seen: &Seen, pick: impl Fn(&str) -> bool) -> Option<u64> {
    seen.lock().expect("lock").iter().find(|(_, v)| pick(v)).map(|(rv, _)| *rv)
}
