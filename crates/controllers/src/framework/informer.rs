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
use kube::runtime::reflector::{self, Store, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

struct Pending<K: Resource<DynamicType = ()> + Clone + 'static> {
    writer: Writer<K>,
    subscribers: Vec<mpsc::UnboundedSender<Arc<K>>>,
}

/// One kind's shared watch and store.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    pub store: Store<K>,
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
        let pending = Mutex::new(Some(Pending { writer, subscribers: Vec::new() }));
        Arc::new(Self { store, pending, api, config })
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
        let Some(Pending { mut writer, subscribers }) = self.pending.lock().take() else { return };
        let mut events = watcher(self.api.clone(), self.config.clone()).default_backoff().boxed();
        let kind = K::kind(&()).to_string();
        tokio::spawn(async move {
            // Objects of a (re)list are announced only once it is complete: the store
            // shows them from `InitDone` on, and a controller triggered earlier would find
            // nothing there and drop the request (losing, after a restart, the only
            // trigger of a Machine waiting on a timer).
            let mut listed: Vec<Arc<K>> = Vec::new();
            while let Some(ev) = events.next().await {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(e) => {
                        tracing::warn!(kind = %kind, error = %e, "watch error; retrying");
                        continue;
                    }
                };
                writer.apply_watcher_event(&ev);
                let announce = match ev {
                    watcher::Event::Apply(o) | watcher::Event::Delete(o) => vec![Arc::new(o)],
                    watcher::Event::Init => {
                        listed.clear();
                        continue;
                    }
                    watcher::Event::InitApply(o) => {
                        listed.push(Arc::new(o));
                        continue;
                    }
                    watcher::Event::InitDone => std::mem::take(&mut listed),
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
        let _ = self.store.wait_until_ready().await;
    }
}
