//! `drydock up`: the API server on a durable store, plus controllers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use drydock::instance::{Instance, Options};
use drydock::kubeconfig;
use drydock::logging::LogLevel;
use drydock::runtime_config::RuntimeConfig;
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
    /// API versions of drydock's kinds to serve or not, as kube-apiserver's flag:
    /// `GROUP/VERSION=false` (comma-separated, repeatable), e.g. `cluster.x-k8s.io/v1beta2=false`.
    #[arg(long, value_name = "GROUP/VERSION=BOOL")]
    pub runtime_config: Vec<String>,
    #[command(flatten)]
    pub log: drydock::logging::LogArgs,
}

/// The longest a shutdown takes: past it the process exits whatever is still running
/// (the store is crash-safe, so this loses nothing acknowledged).
const HARD_DEADLINE: Duration = Duration::from_secs(4);

/// Exit code of a shutdown cut short by its deadline.
const DEADLINE_EXIT: i32 = 1;

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
    let shutdown = shutdown_on_signals().context("installing signal handlers")?;
    let sync = if args.sync == "normal" { SyncMode::Normal } else { SyncMode::Full };
    let opts = Options {
        server: Config { data_dir: Some(args.data_dir.clone()), sync, ..Config::default() },
        listen: args.listen,
        runtime_config: RuntimeConfig::parse(&args.runtime_config)?,
        ..Options::default()
    };
    // Lock the data dir, open the store, bind: only then is the kubeconfig ours to write.
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
    instance.serve(shutdown).await?;
    tracing::info!("shutdown: complete");
    // What still runs (informer watches, connections past the drain deadline) holds nothing
    // that is not already durable. Exit here rather than have the runtime tear those tasks
    // down one by one, which wakes some of them to log errors about the others being gone.
    std::process::exit(0)
}

/// Listens for SIGINT and SIGTERM from now on. The returned future resolves on the first
/// one, which starts a shutdown bounded by [`HARD_DEADLINE`]; a second one exits at once.
fn shutdown_on_signals() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let mut signals = Signals::new()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (name, _) = signals.next().await;
        tracing::info!(signal = name, deadline = ?HARD_DEADLINE, "shutdown: started; a second signal exits at once");
        let _ = tx.send(());
        spawn_watchdog();
        let (name, code) = signals.next().await;
        tracing::warn!(signal = name, "shutdown: second signal, exiting at once");
        std::process::exit(code);
    });
    Ok(async move {
        let _ = rx.await;
    })
}

/// Ends the process if the shutdown outlives [`HARD_DEADLINE`]. A thread, not a task, so
/// that nothing stuck on the runtime can hold it up.
fn spawn_watchdog() {
    let spawned = std::thread::Builder::new().name("shutdown-deadline".into()).spawn(|| {
        std::thread::sleep(HARD_DEADLINE);
        tracing::error!(deadline = ?HARD_DEADLINE, "shutdown: deadline passed, exiting");
        std::process::exit(DEADLINE_EXIT);
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "shutdown: no deadline thread; the shutdown is not bounded");
    }
}

/// The signals that stop drydock, each with the exit code of a process it ended.
#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
    }

    async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = self.interrupt.recv() => ("SIGINT", 130),
            _ = self.terminate.recv() => ("SIGTERM", 143),
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> std::io::Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) -> (&'static str, i32) {
        let _ = tokio::signal::ctrl_c().await;
        ("ctrl-c", 130)
    }
}
