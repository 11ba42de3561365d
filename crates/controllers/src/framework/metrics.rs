//! controller-runtime's metric names, so dashboards built for Cluster API work unchanged:
//! `controller_runtime_reconcile_total`, `controller_runtime_reconcile_errors_total`,
//! `controller_runtime_reconcile_time_seconds`, `controller_runtime_active_workers`,
//! `workqueue_depth`, `workqueue_adds_total`, and client-go's `leader_election_master_status`.

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
pub struct ResultLabels {
    pub controller: String,
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabel {
    pub controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabel {
    pub name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaseLabel {
    pub name: String,
}

pub struct Metrics {
    pub reconciles: Family<ResultLabels, Counter>,
    pub errors: Family<ControllerLabel, Counter>,
    pub time: Family<ControllerLabel, Histogram>,
    pub active: Family<ControllerLabel, Gauge>,
    pub depth: Family<QueueLabel, Gauge>,
    pub adds: Family<QueueLabel, Counter>,
    pub writes: Family<ControllerLabel, Counter>,
    pub leader: Family<LeaseLabel, Gauge>,
    registry: Mutex<Registry>,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let m = Metrics {
        reconciles: Family::default(),
        errors: Family::default(),
        time: Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.000_1, 2.0, 18))),
        active: Family::default(),
        depth: Family::default(),
        adds: Family::default(),
        writes: Family::default(),
        leader: Family::default(),
        registry: Mutex::new(Registry::default()),
    };
    {
        let mut r = m.registry.lock();
        r.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconciles.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.time.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active.clone(),
        );
        r.register("workqueue_depth", "Current depth of workqueue", m.depth.clone());
        r.register("workqueue_adds", "Total number of adds handled by workqueue", m.adds.clone());
        r.register("drydock_controller_writes", "API writes issued by each controller", m.writes.clone());
        r.register(
            "leader_election_master_status",
            "Whether this process holds the leader election lease (1) or not (0)",
            m.leader.clone(),
        );
    }
    m
});

pub fn get() -> &'static Metrics {
    &METRICS
}

pub fn controller(name: &str) -> ControllerLabel {
    ControllerLabel { controller: name.to_string() }
}

pub fn observe(name: &str, result: &str, elapsed: Duration) {
    let m = get();
    m.reconciles.get_or_create(&ResultLabels { controller: name.into(), result: result.into() }).inc();
    m.time.get_or_create(&controller(name)).observe(elapsed.as_secs_f64());
    if result == "error" {
        m.errors.get_or_create(&controller(name)).inc();
    }
}

/// Counts one API write made by a controller (write amplification).
pub fn write(name: &str) {
    get().writes.get_or_create(&controller(name)).inc();
}

/// Records whether this process holds the leader election lease `name`.
pub fn leader(name: &str, holds: bool) {
    get().leader.get_or_create(&LeaseLabel { name: name.to_string() }).set(i64::from(holds));
}

/// Renders the controllers' metrics in the Prometheus text format (no `# EOF`).
pub fn encode(out: &mut String) {
    let r = get().registry.lock();
    let mut text = String::new();
    if prometheus_client::encoding::text::encode_registry(&mut text, &r).is_ok() {
        out.push_str(&text);
    }
}
