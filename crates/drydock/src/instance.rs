//! A running drydock: the API server on its store, listening on TCP, with the Cluster API
//! controllers and the in-memory provider running in-process against it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use drydock_apiserver::auth::Peer;
use drydock_apiserver::auth::pki_files::{self, ServerPki};
use drydock_apiserver::{ApiServer, Config};
use drydock_controllers::Settings;

use crate::api_faults::ApiFaults;

/// How to start an instance.
#[derive(Clone, Debug)]
pub struct Options {
    pub server: Config,
    pub listen: SocketAddr,
    pub controllers: bool,
    pub settings: Settings,
    /// Kinds served beside Cluster API's (say, a provider's remediation kinds), schemaless.
    pub extra_resources: Vec<drydock_api::ResourceDef>,
    /// Versions of the Cluster API kinds switched on or off (`--runtime-config`).
    pub runtime_config: crate::runtime_config::RuntimeConfig,
    /// Run the controllers only while holding this Lease (replicas sharing one store).
    pub election: Option<crate::leader::Election>,
    /// Where the workload clusters' API endpoints are advertised (host, port): a load
    /// balancer in front of several replicas, say. The listen address when absent.
    pub external_endpoint: Option<(String, u16)>,
    /// Serve plain HTTP without authentication (loopback only) instead of HTTPS.
    pub plain_http: bool,
    /// Faults on the in-process controllers' API calls (chaos runs).
    pub api_faults: Option<Arc<ApiFaults>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            server: Config::default(),
            listen: "127.0.0.1:0".parse().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0))),
            controllers: true,
            settings: Settings::default(),
            extra_resources: Vec::new(),
            runtime_config: crate::runtime_config::RuntimeConfig::default(),
            election: None,
            external_endpoint: None,
            plain_http: false,
            api_faults: None,
        }
    }
}

/// How long a shutdown waits for clients to take their last answers before closing their
/// connections anyway.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(2);
/// How long a shutdown waits for the controllers to stop.
pub const CONTROLLERS_DEADLINE: Duration = Duration::from_millis(500);
/// How long a shutdown waits for the store to commit the writes queued before it.
pub const FLUSH_DEADLINE: Duration = Duration::from_millis(500);

pub struct Instance {
    pub server: Arc<ApiServer>,
    pub addr: SocketAddr,
    /// The server's certificates (none when serving plain HTTP).
    pub pki: Option<Arc<ServerPki>>,
    listener: Option<tokio::net::TcpListener>,
    controllers: Option<tokio::task::JoinHandle<()>>,
    /// What in-process controllers start with (`None` under leader election), for
    /// [`Instance::restart_controllers`].
    restart: Option<ControllerStart>,
}

/// What in-process controllers are started with: the advertised endpoint, the settings and
/// the faults on their API calls.
type ControllerStart = ((String, u16), Settings, Option<Arc<ApiFaults>>);

impl Instance {
    /// Takes the data dir's lock, opens the store, binds the listener (recording its address
    /// in the lock file) and starts the controllers (serving starts with [`Instance::serve`]).
    pub async fn start(opts: Options) -> anyhow::Result<Self> {
        if opts.plain_http && !opts.listen.ip().is_loopback() {
            anyhow::bail!(
                "plain HTTP serves every request as an administrator: only on a loopback address, not {}",
                opts.listen
            );
        }
        let metrics: drydock_apiserver::MetricsSource = Arc::new(drydock_controllers::encode_metrics);
        let mut kinds = drydock_api::capi::kinds();
        opts.runtime_config.apply(&mut kinds)?;
        kinds.extend(opts.extra_resources.iter().map(drydock_api::resource::NativeKind::single));
        let server = Arc::new(ApiServer::start(opts.server.clone(), kinds, vec![metrics]).await?);
        let listener =
            tokio::net::TcpListener::bind(opts.listen).await.with_context(|| format!("binding {}", opts.listen))?;
        let addr = listener.local_addr()?;
        server.record_address(addr)?;
        let endpoint = opts.external_endpoint.clone().unwrap_or_else(|| (addr.ip().to_string(), addr.port()));
        let pki = if opts.plain_http {
            None
        } else {
            let names = serving_names(addr, opts.external_endpoint.as_ref().map(|e| e.0.as_str()));
            let dir = opts.server.data_dir.as_deref();
            let mut ca = pki_files::local_ca(dir)?;
            // Replicas on one etcd share one CA: a kubeconfig works through any of them.
            if opts.server.etcd.is_some() {
                ca = pki_files::shared_ca(server.client(None), ca).await?;
            }
            Some(Arc::new(ServerPki::with_ca(dir, &names, ca)?))
        };
        let restart = (opts.controllers && opts.election.is_none())
            .then(|| (endpoint.clone(), opts.settings.clone(), opts.api_faults.clone()));
        let controllers = opts.controllers.then(|| match opts.election.clone() {
            None => {
                crate::controllers::start_in_process(&server, endpoint, opts.settings.clone(), opts.api_faults.clone())
            }
            Some(election) => tokio::spawn(lead(server.clone(), endpoint, opts.settings.clone(), election)),
        });
        Ok(Self { server, addr, pki, listener: Some(listener), controllers, restart })
    }

    /// The server's URL: `https://`, or `http://` when serving plain HTTP.
    pub fn url(&self) -> String {
        let scheme = if self.pki.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// An administrator's kubeconfig for `server` (this server's URL, possibly with a
    /// logical cluster's path) with `context` naming its entries: the CA and the
    /// administrator's client certificate when serving HTTPS.
    pub fn kubeconfig(&self, server: &str, context: &str) -> String {
        crate::kubeconfig::render(server, context, self.pki.as_deref())
    }

    /// Serves HTTP until `shutdown` resolves, then shuts down within [`DRAIN_DEADLINE`] +
    /// [`CONTROLLERS_DEADLINE`] + [`FLUSH_DEADLINE`] whatever clients do: stops accepting,
    /// ends the watches, waits for the requests in flight (each answered only once its write
    /// is durable), stops the controllers, and waits for the store to commit what they
    /// queued.
    pub async fn serve(
        mut self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let listener = self.listener.take().context("already serving")?;
        let (began, shutting_down) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            shutdown.await;
            let _ = began.send(());
        };
        let server = self.server.clone();
        let pki = self.pki.clone();
        let serving = async move {
            match pki {
                Some(pki) => server.serve_tls(listener, &pki, shutdown).await,
                None => server.serve(listener, shutdown).await,
            }
        };
        tokio::pin!(serving);
        let served = tokio::select! {
            served = &mut serving => served,
            _ = shutting_down => match tokio::time::timeout(DRAIN_DEADLINE, &mut serving).await {
                Ok(served) => served,
                Err(_) => {
                    tracing::warn!(deadline = ?DRAIN_DEADLINE, "shutdown: clients still hold connections; closing them");
                    Ok(())
                }
            },
        };
        tracing::info!("shutdown: stopping controllers");
        if tokio::time::timeout(CONTROLLERS_DEADLINE, self.stop_controllers()).await.is_err() {
            tracing::warn!(deadline = ?CONTROLLERS_DEADLINE, "shutdown: controllers did not stop in time");
        } else {
            tracing::info!("shutdown: controllers stopped");
        }
        flush(&self.server.api.store).await;
        served
    }

    /// Stops the controllers and waits until they are gone. Dropping a runtime with
    /// kube-rs controllers still running can panic inside them (a reconcile task cancelled
    /// before the controller that awaits it), so a clean exit stops them first.
    pub async fn stop_controllers(&mut self) {
        if let Some(handle) = self.controllers.take() {
            handle.abort();
            let _ = handle.await;
        }
    }

    /// Stops the in-process controllers and starts them afresh, as a crashed controller
    /// manager comes back: new caches, nothing remembered but what the API holds.
    pub async fn restart_controllers(&mut self) -> anyhow::Result<()> {
        let (endpoint, settings, faults) = self.restart.clone().context("no in-process controllers to restart")?;
        self.stop_controllers().await;
        self.controllers = Some(crate::controllers::start_in_process(&self.server, endpoint, settings, faults));
        Ok(())
    }

    /// Serves in the background (for tests and benchmarks).
    pub fn spawn_serve(&mut self) -> anyhow::Result<()> {
        let listener = self.listener.take().context("already serving")?;
        let router = self.server.router();
        match &self.pki {
            Some(pki) => {
                let listener = self.server.tls_listener(listener, pki)?;
                let service = router.into_make_service_with_connect_info::<Peer>();
                tokio::spawn(async move { axum::serve(listener, service).await });
            }
            None => {
                tokio::spawn(async move { axum::serve(listener, router).await });
            }
        }
        Ok(())
    }
}

/// The names the serving certificate is for: loopback's, the listen address (unless it is
/// every address) and the advertised host.
fn serving_names(addr: SocketAddr, external_host: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> =
        ["localhost", "127.0.0.1", "::1", "kubernetes", "kubernetes.default", "kubernetes.default.svc"]
            .map(String::from)
            .into();
    if !addr.ip().is_unspecified() {
        names.push(addr.ip().to_string());
    }
    names.extend(external_host.map(String::from));
    names.sort();
    names.dedup();
    names
}

/// Runs the controllers in-process while this replica holds the leader election Lease;
/// exits the process once it is lost, as a controller manager does, since another replica
/// may already run them.
async fn lead(server: Arc<ApiServer>, endpoint: (String, u16), settings: Settings, election: crate::leader::Election) {
    let mut held = match crate::leader::acquire(server.client(None), &election).await {
        Ok(held) => held,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "leader election failed; the controllers do not run here");
            return;
        }
    };
    let controllers = AbortOnDrop(crate::controllers::start_in_process(&server, endpoint, settings, None));
    held.lost().await;
    drop(controllers);
    tracing::error!("leader election lost; exiting");
    std::process::exit(1)
}

/// Stops a task when its owner is dropped (the leader task is aborted on shutdown).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Waits until every write the store took so far is committed (or the store failed),
/// up to [`FLUSH_DEADLINE`].
async fn flush(store: &drydock_apiserver::store::Store) {
    let target = store.revision();
    let deadline = tokio::time::Instant::now() + FLUSH_DEADLINE;
    while store.hub().published() < target && store.healthy() {
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                revision = target,
                committed = store.hub().published(),
                "shutdown: store not flushed in time"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tracing::info!(revision = target, "shutdown: store flushed");
}
