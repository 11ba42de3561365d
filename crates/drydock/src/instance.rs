//! A running drydock: the API server on its store, listening on TCP, with the Cluster API
//! controllers and the in-memory provider running in-process against it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use drydock_apiserver::{ApiServer, Config};
use drydock_controllers::Settings;

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
    listener: Option<tokio::net::TcpListener>,
    controllers: Option<tokio::task::JoinHandle<()>>,
}

impl Instance {
    /// Takes the data dir's lock, opens the store, binds the listener (recording its address
    /// in the lock file) and starts the controllers (serving starts with [`Instance::serve`]).
    pub async fn start(opts: Options) -> anyhow::Result<Self> {
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
        let controllers = opts.controllers.then(|| match opts.election.clone() {
            None => crate::controllers::start_in_process(&server, endpoint, opts.settings.clone()),
            Some(election) => tokio::spawn(lead(server.clone(), endpoint, opts.settings.clone(), election)),
        });
        Ok(Self { server, addr, listener: Some(listener), controllers })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
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
        let serving = server.serve(listener, shutdown);
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

    /// Serves HTTP in the background (for tests and benchmarks).
    pub fn spawn_serve(&mut self) -> anyhow::Result<()> {
        let listener = self.listener.take().context("already serving")?;
        let router = self.server.router();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(())
    }
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
    let controllers = AbortOnDrop(crate::controllers::start_in_process(&server, endpoint, settings));
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
