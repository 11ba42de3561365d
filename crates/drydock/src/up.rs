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
    /// The host (and port, else the listen port) advertised as the workload clusters' API
    /// endpoint: a load balancer in front of several replicas, say. The listen address when
    /// absent.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub external_hostname: Option<String>,
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
    /// Serve plain HTTP, without TLS or authentication (every request is an
    /// administrator's, as kube-apiserver's former insecure port): loopback addresses only.
    #[arg(long)]
    pub plain_http: bool,
    /// Static bearer tokens, as kube-apiserver's flag: a CSV file of
    /// `token,user,uid,"group1,group2"` lines.
    #[arg(long, value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,
    /// The `iss` of the ServiceAccount tokens drydock issues (TokenRequest, `kubectl create
    /// token`) and the base of its OpenID discovery, as kube-apiserver's flag.
    #[arg(long, value_name = "URL", default_value = drydock_apiserver::auth::service_accounts::DEFAULT_ISSUER)]
    pub service_account_issuer: String,
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
        server: Config {
            data_dir: Some(args.data_dir.clone()),
            sync,
            etcd,
            token_auth_file: args.token_auth_file.clone(),
            service_account_issuer: args.service_account_issuer.clone(),
            ..Config::default()
        },
        plain_http: args.plain_http,
        election,
        external_endpoint: args.external_hostname.as_deref().map(|h| external_endpoint(h, args.listen.port())),
        listen: args.listen,
        runtime_config: RuntimeConfig::parse(&args.runtime_config)?,
        controllers: !args.no_controllers,
        ..Options::default()
    };
    // Lock the data dir, open the store, bind: only then is the kubeconfig ours to write.
    let instance = Instance::start(opts).await?;
    let kc = args.data_dir.join("kubeconfig");
    kubeconfig::write(&kc, &instance.kubeconfig(&instance.url(), "drydock"))?;
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

/// `HOST[:PORT]` (an IPv6 address in brackets when it has a port), the port `listen_port`
/// when not given.
fn external_endpoint(hostname: &str, listen_port: u16) -> (String, u16) {
    if let Some(rest) = hostname.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok()).unwrap_or(listen_port);
        return (host.to_string(), port);
    }
    match hostname.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host.to_string(), port),
            Err(_) => (hostname.to_string(), listen_port),
        },
        _ => (hostname.to_string(), listen_port),
    }
}

#[cfg(test)]
mod tests {
    use super::external_endpoint;

    #[test]
    fn external_hostnames_with_and_without_ports() {
        let e = |s| external_endpoint(s, 6443);
        assert_eq!(e("lb.example.com"), ("lb.example.com".into(), 6443));
        assert_eq!(e("lb.example.com:443"), ("lb.example.com".into(), 443));
        assert_eq!(e("10.0.0.9:7000"), ("10.0.0.9".into(), 7000));
        assert_eq!(e("[fd00::1]:7000"), ("fd00::1".into(), 7000));
        assert_eq!(e("[fd00::1]"), ("fd00::1".into(), 6443));
        assert_eq!(e("fd00::1"), ("fd00::1".into(), 6443));
    }
}
