//! `drydock up`: the API server on a durable store, plus controllers.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use drydock::instance::{Instance, Options};
use drydock::kubeconfig;
use drydock::logging::LogLevel;
use drydock_apiserver::Config;
use drydock_apiserver::store::SyncMode;

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
    /// Also create a small demo cluster and show its progress until it is ready.
    #[arg(long)]
    pub demo: bool,
    #[command(flatten)]
    pub log: drydock::logging::LogArgs,
}

pub async fn run(args: UpArgs) -> anyhow::Result<()> {
    // The demo draws a progress bar on stderr: only warnings interrupt it, unless asked.
    let level = if args.demo { LogLevel::Warn } else { LogLevel::Info };
    drydock::logging::init(&args.log, level)?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        data_dir = %args.data_dir.display(),
        listen = %args.listen,
        sync = %args.sync,
        "starting drydock"
    );
    let sync = if args.sync == "normal" { SyncMode::Normal } else { SyncMode::Full };
    let opts = Options {
        server: Config { data_dir: Some(args.data_dir.clone()), sync, ..Config::default() },
        listen: args.listen,
        ..Options::default()
    };
    let instance = Instance::start(opts).await?;
    let kc = args.data_dir.join("kubeconfig");
    kubeconfig::write(&kc, &instance.url(), "drydock")?;
    tracing::info!(addr = %instance.addr, kubeconfig = %kc.display(), "drydock API server listening");
    println!("drydock is serving on {}\n  export KUBECONFIG={}", instance.url(), kc.display());
    if args.demo {
        let (kc, dir) = (kc.clone(), args.data_dir.clone());
        tokio::spawn(async move {
            if let Err(e) = crate::demo::run(&kc, &dir).await {
                eprintln!("demo: {e:#}");
            }
        });
    }
    instance.serve(shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
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
