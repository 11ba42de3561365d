//! Kubernetes Events for important transitions, written as events.k8s.io/v1 Events (drydock's
//! API server also shows them through core/v1, so `kubectl describe` lists them).
//!
//! kube-rs' `Recorder` deduplicates repeats into series, but scans its whole cache on every
//! publish under one lock — quadratic at fleet scale. Controllers here record only
//! transitions, so each event is a single create, sent without delaying the reconcile.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Resource;
use kube::api::{Api, PostParams};

use super::metrics;

const REPORTER: &str = "drydock-controller-manager";

/// Publishes events on behalf of drydock's controllers.
#[derive(Clone)]
pub struct Events {
    client: kube::Client,
    instance: String,
}

impl Events {
    pub fn new(client: kube::Client) -> Self {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "local".into());
        Self { client, instance: format!("{REPORTER}-{host}") }
    }

    /// Records a Normal event; failures are logged, never fail a reconcile.
    pub async fn normal<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.publish(obj, "Normal", reason, note);
    }

    pub async fn warning<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.publish(obj, "Warning", reason, note);
    }

    fn publish<K: Resource<DynamicType = ()>>(&self, obj: &K, type_: &str, reason: &str, note: String) {
        let regarding: ObjectReference = obj.object_ref(&());
        log(&regarding, type_, reason, &note);
        let namespace = regarding.namespace.clone().unwrap_or_else(|| "default".into());
        let now = jiff::Timestamp::now();
        let name = format!(
            "{}.{:x}",
            regarding.name.as_deref().unwrap_or("object"),
            now.as_nanosecond().unsigned_abs() ^ u128::from(rand::random::<u32>())
        );
        let event = Event {
            metadata: ObjectMeta { name: Some(name), namespace: Some(namespace.clone()), ..Default::default() },
            event_time: Some(MicroTime(now)),
            action: Some(reason.to_string()),
            reason: Some(reason.to_string()),
            note: Some(note),
            type_: Some(type_.to_string()),
            regarding: Some(regarding),
            reporting_controller: Some(REPORTER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Default::default()
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let reason = reason.to_string();
        tokio::spawn(async move {
            match api.create(&PostParams::default(), &event).await {
                Ok(_) => metrics::write("events"),
                Err(e) => tracing::debug!(error = %e, reason, "could not record event"),
            }
        });
    }
}

/// Logs an event as it is recorded: a Normal one at info, a Warning one at warn.
fn log(regarding: &ObjectReference, type_: &str, reason: &str, note: &str) {
    let kind = regarding.kind.as_deref().unwrap_or_default();
    let namespace = regarding.namespace.as_deref().unwrap_or_default();
    let name = regarding.name.as_deref().unwrap_or_default();
    let object = format_args!("{namespace}/{name}");
    if type_ == "Warning" {
        tracing::warn!(kind, %object, reason, "{note}");
    } else {
        tracing::info!(kind, %object, reason, "{note}");
    }
}

/// Events to publish once the reconcile's writes succeeded.
#[derive(Default)]
pub struct PendingEvents(Vec<(bool, &'static str, String)>);

impl PendingEvents {
    pub fn normal(&mut self, reason: &'static str, note: String) {
        self.0.push((false, reason, note));
    }
    pub fn warning(&mut self, reason: &'static str, note: String) {
        self.0.push((true, reason, note));
    }
    /// How many events are waiting.
    pub fn count(&self) -> usize {
        self.0.len()
    }

    pub async fn publish<K: Resource<DynamicType = ()>>(self, ctx: &crate::Context, obj: &K) {
        for (warning, reason, note) in self.0 {
            if warning {
                ctx.events.warning(obj, reason, note).await;
            } else {
                ctx.events.normal(obj, reason, note).await;
            }
        }
    }
}
