//! Shared informers: one watch and one in-memory store per kind, shared by every
//! controller that reads or is triggered by that kind (kube-rs shared reflectors).

use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::reflector::{self, ReflectHandle, Store, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

/// One kind's shared watch and store.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    pub store: Store<K>,
    writer: Mutex<Option<Writer<K>>>,
    api: Api<K>,
}

impl<K> Informer<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    pub fn new(api: Api<K>) -> Arc<Self> {
        let (store, writer) = reflector::store_shared(4096);
        Arc::new(Self {
            store,
            writer: Mutex::new(Some(writer)),
            api,
        })
    }

    /// A stream of changed objects for a controller. Subscribe before [`Informer::start`].
    pub fn subscribe(&self) -> ReflectHandle<K> {
        let guard = self.writer.lock();
        match guard.as_ref().and_then(Writer::subscribe) {
            Some(h) => h,
            None => panic!("informer for {} subscribed after it started", K::kind(&())),
        }
    }

    /// Starts the watch (once). Store readers see objects after the initial list.
    pub fn start(&self) {
        let Some(writer) = self.writer.lock().take() else {
            return;
        };
        let stream = watcher(self.api.clone(), watcher::Config::default())
            .default_backoff()
            .reflect_shared(writer);
        let kind = K::kind(&()).to_string();
        tokio::spawn(async move {
            stream
                .for_each(|ev| {
                    if let Err(e) = ev {
                        tracing::warn!(kind = %kind, error = %e, "watch error; retrying");
                    }
                    futures::future::ready(())
                })
                .await;
        });
    }

    /// Waits until the initial list has been loaded.
    pub async fn ready(&self) {
        let _ = self.store.wait_until_ready().await;
    }
}
