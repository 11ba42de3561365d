//! `drydock controllers`: the Cluster API controllers and the in-memory provider on their
//! own, against the API server a kubeconfig names (a `drydock up --no-controllers`, say).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use axum::routing::get;
use clap::Args;
use drydock::instance::CONTROLLERS_DEADLINE;
use drydock::leader::{self, Election};
use drydock::logging::LogLevel;
use drydock_controllers::Settings;

#[derive(Args, Debug)]
pub struct ControllersArgs {
    /// kubeconfig of the API server to reconcile (else KUBECONFIG, ~/.kube/config, ./.drydock/kubeconfig).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Reconcile only the objects of this namespace (every namespace when absent).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Address to serve the controllers' Prometheus metrics on at `/metrics` (`:8080` for
    /// every interface); `0` serves none.
    #[arg(long, value_name = "ADDRESS", default_value = "0")]
    pub metrics_bind_address: String,
    /// Run the controllers only while holding the leader election Lease, so that several
    /// `drydock controllers` stand by for one another.
    #[arg(long)]
    pub leader_elect: bool,
    /// How long a leader's claim lasts unless renewed: a standby takes over at most this
    /// long after the leader died (a Go duration: 15s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = leader::go_duration)]
    pub leader_elect_lease_duration: Duration,
    /// Namespace of the leader election Lease.
    #[arg(long, value_name = "NAMESPACE", default_value = "kube-system")]
    pub leader_election_namespace: String,
    /// Name of the leader election Lease (by default the one upstream's core manager uses).
    #[arg(long, value_name = "NAME", default_value = leader::DEFAULT_LEASE)]
    pub leader_election_id: String,
    #[command(flatten)]
    pub log: drydock::logging::LogArgs,
}

pub async fn run(args: ControllersArgs) -> anyhow::Result<()> {
    drydock::logging::init(&args.log, LogLevel::Info)?;
    let shutdown = crate::signals::shutdown_on_signals().context("installing signal handlers")?;
    tokio::pin!(shutdown);
    let config = crate::commands::connect::config(args.kubeconfig.as_deref()).await?;
    if let Some(addr) = metrics_address(&args.metrics_bind_address)? {
        serve_metrics(addr).await?;
    }
    let leadership = if args.leader_elect {
        let client = kube::Client::try_from(config.clone()).context("building the API client")?;
        let election = Election {
            lease: args.leader_election_id.clone(),
            namespace: args.leader_election_namespace.clone(),
            identity: Election::unique_identity(),
            lease_duration: args.leader_elect_lease_duration,
        };
        tokio::select! {
            held = leader::acquire(client, &election) => Some(held?),
            () = &mut shutdown => {
                tracing::info!("shutdown: complete (never led)");
                std::process::exit(0)
            }
        }
    } else {
        None
    };
    lead(args, config, leadership, shutdown).await
}

/// Runs the controllers until `shutdown`, or, under leader election, until the Lease is lost.
async fn lead(
    args: ControllersArgs,
    config: kube::Config,
    mut leadership: Option<leader::Leadership>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let server = config.cluster_url.to_string();
    let settings = Settings { namespace: args.namespace.clone(), ..Settings::default() };
    let controllers = drydock::controllers::start_remote(config, settings).await?;
    tracing::info!(%server, namespace = args.namespace.as_deref().unwrap_or("(all)"), "controllers running");
    let lost = async {
        match leadership.as_mut() {
            Some(l) => l.lost().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = shutdown => {}
        () = lost => {
            // Another candidate may already run the controllers: stop at once, as
            // controller-runtime does.
            tracing::error!("leader election lost; exiting");
            std::process::exit(1)
        }
    }
    tracing::info!("shutdown: stopping controllers");
    controllers.abort();
    if tokio::time::timeout(CONTROLLERS_DEADLINE, controllers).await.is_err() {
        tracing::warn!(deadline = ?CONTROLLERS_DEADLINE, "shutdown: controllers did not stop in time");
    }
    if let Some(l) = leadership {
        l.release(RELEASE_DEADLINE).await;
    }
    tracing::info!("shutdown: complete");
    // Informer watches may still be open; they hold nothing to save.
    std::process::exit(0)
}

/// How long a shutdown waits for the API server to record the Lease released.
const RELEASE_DEADLINE: Duration = Duration::from_secs(2);

/// `--metrics-bind-address` as controller-runtime reads it: `0` for none, `:PORT` for
/// every interface, or `HOST:PORT`.
fn metrics_address(flag: &str) -> anyhow::Result<Option<SocketAddr>> {
    if flag == "0" {
        return Ok(None);
    }
    let full = if flag.starts_with(':') { format!("0.0.0.0{flag}") } else { flag.to_string() };
    let addr =
        full.parse().with_context(|| format!("--metrics-bind-address {flag:?}: expected HOST:PORT, :PORT or 0"))?;
    Ok(Some(addr))
}

async fn serve_metrics(addr: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr} for metrics"))?;
    let router = axum::Router::new().route(
        "/metrics",
        get(|| async {
            let mut out = String::new();
            drydock_controllers::encode_metrics(&mut out);
            ([(http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], out)
        }),
    );
    tracing::info!(addr = %listener.local_addr()?, "serving metrics");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::metrics_address;

    #[test]
    fn metrics_addresses_read_as_controller_runtime_reads_them() {
        assert_eq!(metrics_address("0").unwrap(), None);
        assert_eq!(metrics_address(":8080").unwrap(), Some("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(metrics_address("127.0.0.1:9").unwrap(), Some("127.0.0.1:9".parse().unwrap()));
        assert!(metrics_address("localhost").is_err());
    }
}
