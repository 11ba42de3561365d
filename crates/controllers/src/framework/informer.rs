//! Shared informers: one watch and one in-memory store per kind, shared by every
//! controller that reads or is triggered by that kind.
//!
//! Each subscriber gets every applied *and deleted* object (kube-rs' shared reflector
//! streams leave deletions out, so an owner would never hear that its child is gone).
//! Subscriber queues are unbounded on purpose: a controller whose workers are all busy
//! stops pulling triggers, and a bounded queue would then stall the watch, and with it the
//! store every other controller reads. Queued items are `Arc`s and the controller's
//! scheduler deduplicates them when it catches up.

use std::fmt::Debug;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};

/// Whether an informer has loaded its initial list, for any number of waiters. (kube-rs'
/// `Store::wait_until_ready` parks every waiter on one oneshot receiver, which wakes only
/// the last to poll it: a controller whose workers waited together stalled for good.)
#[derive(Clone, Debug)]
pub struct Listed(watch::Receiver<bool>);

impl Listed {
    /// The signal and its sender, which raises it with `send_replace(true)`.
    pub fn channel() -> (watch::Sender<bool>, Self) {
        let (tx, rx) = watch::channel(false);
        (tx, Self(rx))
    }

    /// Waits until the list is loaded (or the informer stopped before loading it).
    pub async fn wait(&self) {
        let _ = self.0.clone().wait_for(|listed| *listed).await;
    }
}

struct Pending<K: Resource<DynamicType = ()> + Clone + 'static> {
    writer: Writer<K>,
    subscribers: Vec<mpsc::UnboundedSender<Arc<K>>>,
    listed: watch::Sender<bool>,
}

/// One kind's shared watch and store.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    pub store: Store<K>,
    /// Raised once the store holds the initial list.
    pub listed: Listed,
    pending: Mutex<Option<Pending<K>>>,
    api: Api<K>,
    config: watcher::Config,
}

impl<K> Informer<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    pub fn new(api: Api<K>) -> Arc<Self> {
        Self::with_config(api, watcher::Config::default())
    }

    /// An informer of the objects `config` selects (a label or field selector).
    pub fn with_config(api: Api<K>, config: watcher::Config) -> Arc<Self> {
        let (store, writer) = reflector::store();
        let (tx, listed) = Listed::channel();
        let pending = Mutex::new(Some(Pending { writer, subscribers: Vec::new(), listed: tx }));
        Arc::new(Self { store, listed, pending, api, config })
    }

    /// A stream of changed (applied or deleted) objects for a controller. Subscribe before
    /// [`Informer::start`].
    pub fn subscribe(&self) -> impl Stream<Item = Arc<K>> + Send + 'static {
        let (tx, rx) = mpsc::unbounded_channel();
        match self.pending.lock().as_mut() {
            Some(p) => p.subscribers.push(tx),
            None => panic!("informer for {} subscribed after it started", K::kind(&())),
        }
        tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
    }

    /// Starts the watch (once). Store readers see objects after the initial list.
    pub fn start(&self) {
        let Some(Pending { mut writer, subscribers, listed: raise }) = self.pending.lock().take() else { return };
        let mut events = watcher(self.api.clone(), self.config.clone()).default_backoff().boxed();
        let kind = K::kind(&()).to_string();
        tokio::spawn(async move {
            // Objects of a (re)list are announced only once it is complete: the store
            // shows them from `InitDone` on, and a controller triggered earlier would find
            // nothing there and drop the request (losing, after a restart, the only
            // trigger of a Machine waiting on a timer).
            let mut listed: Vec<ObjectRef<K>> = Vec::new();
            let store = writer.as_reader();
            while let Some(ev) = events.next().await {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(e) => {
                        tracing::warn!(kind = %kind, error = %e, "watch error; retrying");
                        continue;
                    }
                };
                writer.apply_watcher_event(&ev);
                // Subscribers get the store's own copy where it has one: an event's object is
                // cloned once, by the store, not again for them.
                let announce = match ev {
                    watcher::Event::Apply(o) => {
                        vec![store.get(&ObjectRef::from_obj(&o)).unwrap_or_else(|| Arc::new(o))]
                    }
                    watcher::Event::Delete(o) => vec![Arc::new(o)],
                    watcher::Event::Init => {
                        tracing::debug!(kind = %kind, "informer listing");
                        listed.clear();
                        continue;
                    }
                    watcher::Event::InitApply(o) => {
                        listed.push(ObjectRef::from_obj(&o));
                        continue;
                    }
                    watcher::Event::InitDone => {
                        tracing::debug!(kind = %kind, objects = listed.len(), "informer listed");
                        raise.send_replace(true);
                        std::mem::take(&mut listed).iter().filter_map(|r| store.get(r)).collect()
                    }
                };
                for obj in &announce {
                    for s in &subscribers {
                        // A gone subscriber (its controller stopped) is simply skipped.
                        let _ = s.send(obj.clone());
                    }
                }
            }
        });
    }

    /// Waits until the initial list has been loaded.
    pub async fn ready(&self) {
        self.listed.wait().await;
    }

    /// Waits, at most `limit`, until the store holds `name` in `namespace`; false if it
    /// never did. A controller that created an object under a generated name calls it
    /// before its next reconcile, which reads the store and would otherwise, if it ran
    /// before the create's watch event, create the object again under another name
    /// (upstream's topology controller waits for its cache the same way).
    pub async fn wait_for(&self, namespace: &str, name: &str, limit: std::time::Duration) -> bool {
        let key = kube::runtime::reflector::ObjectRef::new(name).within(namespace);
        let deadline = tokio::time::Instant::now() + limit;
        while self.store.get(&key).is_none() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Listed;

    #[tokio::test]
    async fn every_waiter_wakes_when_the_list_is_loaded() {
        let (raise, listed) = Listed::channel();
        let waiters: Vec<_> = (0..16)
            .map(|_| {
                let listed = listed.clone();
                tokio::spawn(async move { listed.wait().await })
            })
            .collect();
        tokio::task::yield_now().await;
        raise.send_replace(true);
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(10), w).await.expect("a waiter stayed asleep").expect("waiter");
        }
        // Later waiters return at once.
        tokio::time::timeout(Duration::from_secs(10), listed.wait()).await.expect("a late waiter stayed asleep");
    }
}
