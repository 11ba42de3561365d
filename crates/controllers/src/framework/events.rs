//! Kubernetes Events for important transitions (events.k8s.io/v1, also visible to
//! `kubectl describe` through core/v1).

use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Publishes events on behalf of drydock's controllers.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    pub fn new(client: kube::Client) -> Self {
        let reporter = Reporter { controller: "drydock-controller-manager".into(), instance: None };
        Self { recorder: Recorder::new(client, reporter) }
    }

    /// Records a Normal event; failures are logged, never fail a reconcile.
    pub async fn normal<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.publish(obj, EventType::Normal, reason, note).await;
    }

    pub async fn warning<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.publish(obj, EventType::Warning, reason, note).await;
    }

    async fn publish<K: Resource<DynamicType = ()>>(&self, obj: &K, type_: EventType, reason: &str, note: String) {
        let ev = Event { type_, reason: reason.into(), note: Some(note), action: reason.into(), secondary: None };
        if let Err(e) = self.recorder.publish(&ev, &obj.object_ref(&())).await {
            tracing::debug!(error = %e, reason, "could not record event");
        }
    }
}
