//! `drydock up`: the API server on a durable store, plus controllers.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use drydock::instance::{Instance, Options};
use drydock::kubeconfig;
use drydock::leader::Election;
use drydock::logging::LogLevel;
use drydock::runtime_config::RuntimeConfig;
use drydock::store_args::StoreArgs;
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
    #[command(flatten)]
    pub store: StoreArgs,
    /// With several replicas: how long the controllers' leader holds its claim unless
    /// renewed, so a standby replica takes over at most this long after the leader died.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = drydock::leader::go_duration)]
    pub leader_elect_lease_duration: std::time::Duration,
    /// Durability of commits: `full` fsyncs each group commit, `normal` survives process crashes only.
    #[arg(long, default_value = "full", value_parser = ["full", "normal"])]
    pub sync: String,
    /// Also create a small demo cluster and show its progress until it is ready.
    #[arg(long, conflicts_with = "no_controllers")]
    pub demo: bool,
    /// Serve the API alone, without the controllers and the in-memory provider (run them
    /// with `drydock controllers --kubeconfig <data dir>/kubeconfig`, or bring others).
    #[arg(long)]
    pub no_controllers: bool,
    /// API versions of drydock's kinds to serve or not, as kube-apiserver's flag:
    /// `GROUP/VERSION=false` (comma-separated, repeatable), e.g. `cluster.x-k8s.io/v1beta2=false`.
    #[arg(long, value_name = "GROUP/VERSION=BOOL")]
    pub runtime_config: Vec<String>,
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
        store = %args.store.store,
        sync = %args.sync,
        controllers = !args.no_controllers,
        "starting drydock"
    );
    let shutdown = crate::signals::shutdown_on_signals().context("installing signal handlers")?;
    let sync = if args.sync == "normal" { SyncMode::Normal } else { SyncMode::Full };
    let etcd = args.store.etcd()?;
    // Replicas sharing etcd run the controllers one at a time.
    let election = etcd.as_ref().map(|_| Election {
        lease: drydock::leader::DEFAULT_LEASE.into(),
        namespace: "kube-system".into(),
        identity: Election::unique_identity(),
        lease_duration: args.leader_elect_lease_duration,
    });
    let opts = Options {
        server: Config { data_dir: Some(args.data_dir.clone()), sync, etcd, ..Config::default() },
        election,
        listen: args.listen,
        runtime_config: RuntimeConfig::parse(&args.runtime_config)?,
        controllers: !args.no_controllers,
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
