//! Leader election: several `drydock controllers` stand by for one another, and only the
//! holder of a coordination.k8s.io Lease runs the controllers, as controller-runtime's
//! `--leader-elect` does. A holder that loses the Lease stops; one that shuts down
//! releases it (standbys check the Lease when the holder's claim would have run out, so
//! they take over at most one lease duration after the holder died or stopped).

use std::time::Duration;

use anyhow::Context as _;
use kube_lease_manager::{LeaseCreateMode, LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The Lease upstream's core Cluster API manager elects its leader with.
pub const DEFAULT_LEASE: &str = "controller-leader-election-capi";

/// Who competes for which Lease, and for how long a holder's claim lasts.
#[derive(Clone, Debug)]
pub struct Election {
    pub lease: String,
    pub namespace: String,
    /// Unique among the candidates: [`Election::unique_identity`].
    pub identity: String,
    /// How long a claim lasts unless renewed; a standby takes over at most this long after
    /// its holder died.
    pub lease_duration: Duration,
}

impl Election {
    /// `<hostname>_<random UUID>`, as client-go's candidates name themselves.
    pub fn unique_identity() -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "drydock".to_string());
        format!("{host}_{}", uuid::Uuid::new_v4())
    }
}

/// The Lease, held. [`Leadership::release`] gives it up.
pub struct Leadership {
    lease: String,
    held: watch::Receiver<bool>,
    manager: JoinHandle<kube_lease_manager::Result<LeaseManager>>,
}

/// Waits until this candidate holds the Lease (creating it when absent), renewing it from
/// then on in the background.
pub async fn acquire(client: kube::Client, election: &Election) -> anyhow::Result<Leadership> {
    let duration = election.lease_duration.as_secs().max(1);
    // Renewed when a third of the claim is left: two thirds of it for a slow API server.
    let grace = (duration / 3).max(1);
    let manager = LeaseManagerBuilder::new(client, &election.lease)
        .with_namespace(&election.namespace)
        .with_identity(&election.identity)
        .with_duration(duration)
        .with_grace(grace)
        .with_create_mode(LeaseCreateMode::AutoCreate)
        .build()
        .await
        .with_context(|| format!("preparing the Lease {}/{}", election.namespace, election.lease))?;
    drydock_controllers::framework::metrics::leader(&election.lease, false);
    let (mut held, manager) = manager.watch().await;
    tracing::info!(lease = %election.lease, namespace = %election.namespace, identity = %election.identity, "waiting to hold the leader election lease");
    held.wait_for(|h| *h).await.context("the lease manager stopped before this candidate held the Lease")?;
    drydock_controllers::framework::metrics::leader(&election.lease, true);
    tracing::info!(lease = %election.lease, identity = %election.identity, "holding the leader election lease");
    Ok(Leadership { lease: election.lease.clone(), held, manager })
}

impl Leadership {
    /// Resolves once the Lease is no longer held (another candidate took it over, or the
    /// renewals stopped).
    pub async fn lost(&mut self) {
        let _ = self.held.wait_for(|h| !*h).await;
        drydock_controllers::framework::metrics::leader(&self.lease, false);
    }

    /// Gives the Lease up, waiting at most `deadline` for the API server to record it.
    pub async fn release(self, deadline: Duration) {
        drop(self.held);
        match tokio::time::timeout(deadline, self.manager).await {
            Ok(Ok(Ok(_))) => tracing::info!(lease = %self.lease, "released the leader election lease"),
            Ok(Ok(Err(e))) => tracing::warn!(lease = %self.lease, error = %e, "releasing the leader election lease"),
            Ok(Err(e)) => tracing::warn!(lease = %self.lease, error = %e, "the lease manager ended abnormally"),
            Err(_) => tracing::warn!(lease = %self.lease, ?deadline, "the lease was not released in time"),
        }
        drydock_controllers::framework::metrics::leader(&self.lease, false);
    }
}

/// A Go duration (`15s`, `1m30s`), as kube-apiserver's and controller-runtime's flags take.
pub fn go_duration(s: &str) -> Result<Duration, String> {
    drydock_api::capi::duration::parse(s)
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration such as 15s or 1m"))
}
