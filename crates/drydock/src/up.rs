//! `drydock up`: the API server on a durable store, plus controllers.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use drydock_apiserver::{ApiServer, Config};

use crate::kubeconfig;

#[derive(Args, Debug, Clone)]
pub struct UpArgs {
    /// Directory for the durable store and the kubeconfig.
    #[arg(long, env = "DRYDOCK_DATA_DIR", default_value = ".drydock")]
    pub data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Durability of commits: `full` fsyncs each group commit, `normal` survives process crashes only.
    #[arg(long, default_value = "full", value_parser = ["full", "normal"])]
    pub sync: String,
}

pub async fn run(args: UpArgs) -> anyhow::Result<()> {
    init_tracing();
    let config = Config {
        data_dir: Some(args.data_dir.clone()),
        sync: if args.sync == "normal" {
            drydock_apiserver::store::SyncMode::Normal
        } else {
            drydock_apiserver::store::SyncMode::Full
        },
        ..Config::default()
    };
    let server = ApiServer::start(config, drydock_api::capi::resources(), Vec::new()).await?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    let kc = args.data_dir.join("kubeconfig");
    kubeconfig::write(&kc, &format!("http://{addr}"), "drydock")?;
    tracing::info!(%addr, kubeconfig = %kc.display(), "drydock API server listening");
    println!(
        "drydock is serving on http://{addr}\n  export KUBECONFIG={}",
        kc.display()
    );
    server.serve(listener, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DRYDOCK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
