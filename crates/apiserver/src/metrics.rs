//! Prometheus metrics of the API server and its store, under the names Kubernetes users
//! know from kube-apiserver (`apiserver_request_total`, `apiserver_request_duration_seconds`,
//! `apiserver_watch_events_total`...), plus the store's group-commit figures.

use std::sync::LazyLock;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LatencyLabels {
    pub verb: String,
    pub group: String,
    pub resource: String,
}

pub struct Metrics {
    pub requests: Family<RequestLabels, Counter>,
    pub latency: Family<LatencyLabels, Histogram>,
    pub commit_batch: Histogram,
    pub commit_latency: Histogram,
    pub commits: Counter,
    pub watch_events: Counter,
    pub watchers: Gauge,
    pub objects: Gauge,
    registry: Mutex<Registry>,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let requests = Family::<RequestLabels, Counter>::default();
    let latency = Family::<LatencyLabels, Histogram>::new_with_constructor(|| {
        Histogram::new(exponential_buckets(0.000_1, 2.0, 18))
    });
    let commit_batch = Histogram::new(exponential_buckets(1.0, 2.0, 14));
    let commit_latency = Histogram::new(exponential_buckets(0.000_05, 2.0, 16));
    let commits = Counter::default();
    let watch_events = Counter::default();
    let watchers = Gauge::default();
    let objects = Gauge::default();
    let mut r = Registry::default();
    r.register(
        "apiserver_request",
        "Counter of apiserver requests broken out by verb, group, resource and HTTP response code",
        requests.clone(),
    );
    r.register(
        "apiserver_request_duration_seconds",
        "Response latency distribution in seconds for each verb, group and resource",
        latency.clone(),
    );
    r.register("drydock_store_commit_batch_size", "Writes committed per transaction", commit_batch.clone());
    r.register(
        "drydock_store_commit_duration_seconds",
        "Time to commit one group of writes to the durable log",
        commit_latency.clone(),
    );
    r.register("drydock_store_commits", "Transactions committed to the durable log", commits.clone());
    r.register("apiserver_watch_events", "Watch events delivered to watchers (fan-out)", watch_events.clone());
    r.register("apiserver_registered_watchers", "Watchers currently connected", watchers.clone());
    r.register("drydock_store_revision", "Latest revision handed out by the store", objects.clone());
    Metrics {
        requests,
        latency,
        commit_batch,
        commit_latency,
        commits,
        watch_events,
        watchers,
        objects,
        registry: Mutex::new(r),
    }
});

pub fn get() -> &'static Metrics {
    &METRICS
}

pub fn store_commit(rows: usize, elapsed: Duration) {
    let m = get();
    m.commit_batch.observe(rows as f64);
    m.commit_latency.observe(elapsed.as_secs_f64());
    m.commits.inc();
}

pub fn request(verb: &str, group: &str, resource: &str, code: u16, elapsed: Duration) {
    let m = get();
    m.requests
        .get_or_create(&RequestLabels {
            verb: verb.to_string(),
            group: group.to_string(),
            resource: resource.to_string(),
            code: code.to_string(),
        })
        .inc();
    m.latency
        .get_or_create(&LatencyLabels {
            verb: verb.to_string(),
            group: group.to_string(),
            resource: resource.to_string(),
        })
        .observe(elapsed.as_secs_f64());
}

/// Renders every registered metric in the Prometheus text format.
pub fn encode(out: &mut String) -> std::fmt::Result {
    let r = get().registry.lock();
    let mut text = String::new();
    prometheus_client::encoding::text::encode_registry(&mut text, &r)?;
    out.push_str(&text);
    Ok(())
}
