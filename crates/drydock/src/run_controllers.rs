//! `drydock controllers`: the Cluster API controllers and the in-memory provider on their
//! own, against the API server a kubeconfig names (a `drydock up --no-controllers`, say).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use axum::routing::get;
use clap::Args;
use drydock::instance::CONTROLLERS_DEADLINE;
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
    #[command(flatten)]
    pub log: drydock::logging::LogArgs,
}

pub async fn run(args: ControllersArgs) -> anyhow::Result<()> {
    drydock::logging::init(&args.log, LogLevel::Info)?;
    let shutdown = crate::signals::shutdown_on_signals().context("installing signal handlers")?;
    let config = crate::commands::connect::config(args.kubeconfig.as_deref()).await?;
    let server = config.cluster_url.to_string();
    if let Some(addr) = metrics_address(&args.metrics_bind_address)? {
        serve_metrics(addr).await?;
    }
    let settings = Settings { namespace: args.namespace.clone(), ..Settings::default() };
    let controllers = drydock::controllers::start_remote(config, settings).await?;
    tracing::info!(%server, namespace = args.namespace.as_deref().unwrap_or("(all)"), "controllers running");
    shutdown.await;
    tracing::info!("shutdown: stopping controllers");
    controllers.abort();
    if tokio::time::timeout(CONTROLLERS_DEADLINE, controllers).await.is_err() {
        tracing::warn!(deadline = ?CONTROLLERS_DEADLINE, "shutdown: controllers did not stop in time");
    }
    tracing::info!("shutdown: complete");
    // Informer watches may still be open; they hold nothing to save.
    std::process::exit(0)
}

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
