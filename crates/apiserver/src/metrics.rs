//! Prometheus metrics of the API server and its store, under the names Kubernetes users
//! know from kube-apiserver (`apiserver_request_total`, `apiserver_request_duration_seconds`,
//! `apiserver_watch_events_total`...), plus the store's group-commit figures.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
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

/// kube-apiserver labels its etcd metrics with the operation and the resource; drydock's
/// store calls etcd below the resources, so only the operation is known.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EtcdLabels {
    pub operation: String,
}

pub struct Metrics {
    pub etcd_latency: Family<EtcdLabels, Histogram>,
    pub etcd_errors: Family<EtcdLabels, Counter>,
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
    let etcd_latency =
        Family::<EtcdLabels, Histogram>::new_with_constructor(|| Histogram::new(exponential_buckets(0.000_1, 2.0, 18)));
    let etcd_errors = Family::<EtcdLabels, Counter>::default();
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
    r.register(
        "etcd_request_duration_seconds",
        "Etcd request latency in seconds for each operation (the store on etcd)",
        etcd_latency.clone(),
    );
    r.register("etcd_request_errors", "Etcd requests that failed, by operation", etcd_errors.clone());
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
        etcd_latency,
        etcd_errors,
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

/// One call to an etcd member (`operation`: range, txn, compaction), and whether it failed.
pub fn etcd_request(operation: &str, elapsed: Duration, failed: bool) {
    let m = get();
    let labels = EtcdLabels { operation: operation.to_string() };
    m.etcd_latency.get_or_create(&labels).observe(elapsed.as_secs_f64());
    if failed {
        m.etcd_errors.get_or_create(&labels).inc();
    }
}

pub fn store_commit(rows: usize, elapsed: Duration) {
    let m = get();
    m.commit_batch.observe(rows as f64);
    m.commit_latency.observe(elapsed.as_secs_f64());
    m.commits.inc();
}

/// Counts one request and observes its latency. Each thread keeps the series it has
/// counted into by name, so a request allocates no label set once its series exist.
pub fn request(verb: &str, group: &str, resource: &str, code: u16, elapsed: Duration) {
    /// A series' key text (a buffer reused for lookups), and the series by key.
    type Series = (String, HashMap<String, (Counter, Histogram)>);
    thread_local! {
        static SERIES: RefCell<Series> = RefCell::default();
    }
    SERIES.with_borrow_mut(|(key, series)| {
        key.clear();
        let _ = write!(key, "{verb} {group} {resource} {code}");
        if let Some((count, latency)) = series.get(key.as_str()) {
            count.inc();
            latency.observe(elapsed.as_secs_f64());
            return;
        }
        let m = get();
        let (verb, group, resource) = (verb.to_string(), group.to_string(), resource.to_string());
        let count = m.requests.get_or_create(&RequestLabels {
            verb: verb.clone(),
            group: group.clone(),
            resource: resource.clone(),
            code: code.to_string(),
        });
        let latency = m.latency.get_or_create(&LatencyLabels { verb, group, resource });
        count.inc();
        latency.observe(elapsed.as_secs_f64());
        series.insert(key.clone(), (count.clone(), latency.clone()));
    });
}

/// Renders every registered metric in the Prometheus text format.
pub fn encode(out: &mut String) -> std::fmt::Result {
    let r = get().registry.lock();
    let mut text = String::new();
    prometheus_client::encoding::text::encode_registry(&mut text, &r)?;
    out.push_str(&text);
    Ok(())
}
