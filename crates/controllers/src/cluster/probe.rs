//! `RemoteConnectionProbe`: whether the workload cluster's API server answers, probed as
//! upstream's cluster cache probes it. Once a Cluster's control plane is initialized, its
//! API server is asked for its core API versions (`GET /api`) through the Cluster's
//! kubeconfig every 10 s, each probe given 5 s. The condition is True while the last success is at most the grace period
//! (50 s, upstream's `--remote-connection-grace-period` default) old, and False
//! (`ProbeFailed`) once it is older, or after 5 failures without any success.
//!
//! The first probe runs in the reconcile that first finds the control plane initialized, so
//! that the condition turns True in the same status write. Later ones run in the
//! background ([`Probes::triggers`]) and wake the Cluster only when the verdict they imply
//! changes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::Cluster;
use futures::{Stream, StreamExt};
use jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use parking_lot::Mutex;

use crate::Context;
use crate::framework::clock::elapsed;

/// How often an API server is probed.
pub const INTERVAL: Duration = Duration::from_secs(10);
/// How long a probe may take before it counts as failed.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How long the condition stays True after the last success.
pub const GRACE: Duration = Duration::from_secs(50);
/// Failures without any success after which the probe is reported failed.
const FAILURE_THRESHOLD: u32 = 5;
/// How often the background round looks for due probes and changed verdicts.
const ROUND: Duration = Duration::from_secs(1);
/// Probes in flight at once in a round.
const CONCURRENCY: usize = 32;

type Key = (String, String);

/// What the probes of one Cluster found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Health {
    pub last_probe: Option<Timestamp>,
    pub last_success: Option<Timestamp>,
    /// Failures since the last success.
    pub failures: u32,
}

/// What the condition says of a [`Health`] at some time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verdict {
    /// Not probed often enough to say: the condition keeps what it said (else it says the
    /// connection is not established yet).
    #[default]
    NotYet,
    /// No success within the grace period; when the last success was, if ever.
    Failed {
        last_success: Option<Timestamp>,
    },
    Succeeded,
}

impl Health {
    pub fn verdict(&self, now: Timestamp) -> Verdict {
        match self.last_success {
            None if self.failures < FAILURE_THRESHOLD => Verdict::NotYet,
            Some(t) if elapsed(t, now) <= GRACE => Verdict::Succeeded,
            last_success => Verdict::Failed { last_success },
        }
    }

    fn due(&self, now: Timestamp) -> bool {
        self.last_probe.is_none_or(|t| elapsed(t, now) >= INTERVAL)
    }
}

/// The probes' findings per Cluster, and the verdict each Cluster was last woken for.
pub struct Probes {
    ctx: Arc<Context>,
    health: Mutex<HashMap<Key, (Health, Verdict)>>,
}

impl Probes {
    pub fn new(ctx: Arc<Context>) -> Arc<Self> {
        Arc::new(Self { ctx, health: Mutex::default() })
    }

    /// The verdict on `namespace/name` now, probing it first if it was never probed.
    pub async fn verdict(&self, namespace: &str, name: &str) -> Verdict {
        let key = (namespace.to_string(), name.to_string());
        let known = self.health.lock().get(&key).map(|(h, _)| *h);
        let health = match known {
            Some(h) => h,
            None => self.probe(&key, Health::default()).await,
        };
        let verdict = health.verdict(self.ctx.clock().now());
        if let Some(entry) = self.health.lock().get_mut(&key) {
            entry.1 = verdict;
        }
        verdict
    }

    /// Probes one Cluster's API server and records what it found.
    async fn probe(&self, key: &Key, before: Health) -> Health {
        let answered = async {
            let client = self.ctx.workload.get(&key.0, &key.1).await.ok()?;
            tokio::time::timeout(TIMEOUT, client.list_core_api_versions()).await.ok()?.ok()
        }
        .await
        .is_some();
        let now = self.ctx.clock().now();
        let health = Health {
            last_probe: Some(now),
            last_success: if answered { Some(now) } else { before.last_success },
            failures: if answered { 0 } else { before.failures.saturating_add(1) },
        };
        let mut all = self.health.lock();
        let entry = all.entry(key.clone()).or_insert((health, Verdict::NotYet));
        entry.0 = health;
        health
    }

    /// One round: probes the due ones of `clusters` (the initialized Clusters; the others
    /// are forgotten) and returns those whose verdict changed since they were last woken.
    pub async fn round(&self, clusters: Vec<Key>) -> Vec<Key> {
        let now = self.ctx.clock().now();
        let due: Vec<(Key, Health)> = {
            let mut all = self.health.lock();
            let wanted: std::collections::HashSet<&Key> = clusters.iter().collect();
            all.retain(|k, _| wanted.contains(k));
            clusters
                .iter()
                .filter_map(|k| match all.get(k) {
                    Some((h, _)) => h.due(now).then(|| (k.clone(), *h)),
                    None => Some((k.clone(), Health::default())),
                })
                .collect()
        };
        futures::stream::iter(due)
            .for_each_concurrent(CONCURRENCY, |(k, h)| async move {
                self.probe(&k, h).await;
            })
            .await;
        let now = self.ctx.clock().now();
        let mut all = self.health.lock();
        let mut changed = Vec::new();
        for (k, (health, woken)) in all.iter_mut() {
            let verdict = health.verdict(now);
            if verdict != *woken {
                *woken = verdict;
                changed.push(k.clone());
            }
        }
        changed
    }

    /// The background rounds, every second, as triggers of the Clusters whose verdict
    /// changed. They run while the controller polls the stream.
    pub fn triggers(self: Arc<Self>) -> impl Stream<Item = ObjectRef<Cluster>> + Send + 'static {
        futures::stream::unfold(self, |probes| async move {
            let clock = probes.ctx.clock().clone();
            clock.sleep_until(clock.now() + ROUND).await;
            let initialized = probes
                .ctx
                .informers
                .clusters
                .store
                .state()
                .iter()
                .filter(|c| c.control_plane_initialized())
                .map(|c| {
                    (c.metadata.namespace.clone().unwrap_or_default(), c.metadata.name.clone().unwrap_or_default())
                })
                .collect();
            let changed = probes.round(initialized).await;
            Some((
                futures::stream::iter(changed.into_iter().map(|(ns, name)| ObjectRef::new(&name).within(&ns))),
                probes,
            ))
        })
        .flatten()
    }
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
