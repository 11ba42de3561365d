//! drydock's embedded Kubernetes-compatible API server.
//!
//! * [`store`]: the revisioned in-memory store over a durable log (SQLite by default).
//! * [`rest`]: Kubernetes REST semantics (create/update/patch/delete/watch, subresources,
//!   finalizers, admission) independent of HTTP.
//! * [`http`]: the axum front: paths, discovery, content negotiation, tables, watch streams.
//! * [`controllers`]: the server's own control loops (garbage collection, namespace and
//!   logical-cluster lifecycle).
//! * [`crd`]: CustomResourceDefinitions served at runtime, per logical cluster; drydock's
//!   own kinds are served through them too.
//!
//! Start one with [`ApiServer::start`] and serve [`ApiServer::router`] over TCP, or hand the
//! router to `kube::Client::new` to talk to it in-process.

pub mod auth;
pub mod builtin;
pub mod controllers;
pub mod crd;
pub mod error;
pub mod http;
pub mod lock;
pub mod managed;
pub mod metrics;
pub mod ordered;
pub mod patch;
pub mod registry;
pub mod rest;
pub mod schema;
pub mod selector;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use drydock_api::resource::NativeKind;
use drydock_api::tenancy::LogicalClusterName;

pub use error::{ApiError, ApiResult};
pub use http::MetricsSource;
pub use rest::Api;

/// How to run the server.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the durable log lives (`<dir>/drydock.db`, unless the store is etcd); `None`
    /// keeps nothing on disk.
    pub data_dir: Option<PathBuf>,
    pub sync: store::SyncMode,
    /// Keep objects in etcd instead of the embedded log (several replicas may share it).
    pub etcd: Option<store::EtcdOptions>,
    pub store: store::StoreConfig,
    /// Kubernetes minor version reported by /version.
    pub version_minor: String,
    pub bookmark_interval: Duration,
    /// kube-apiserver's `--token-auth-file`: static bearer tokens (CSV).
    pub token_auth_file: Option<PathBuf>,
    /// kube-apiserver's `--service-account-issuer`: the `iss` of ServiceAccount tokens.
    pub service_account_issuer: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: None,
            sync: store::SyncMode::Full,
            etcd: None,
            store: store::StoreConfig::default(),
            version_minor: "33".into(),
            bookmark_interval: Duration::from_secs(30),
            token_auth_file: None,
            service_account_issuer: auth::service_accounts::DEFAULT_ISSUER.into(),
        }
    }
}

/// A running API server: store, registry, internal controllers, and the HTTP router.
pub struct ApiServer {
    pub api: Api,
    server: Arc<http::Server>,
    /// Held while the server lives when it has a data dir.
    lock: Option<lock::DataDirLock>,
}

impl ApiServer {
    /// Takes the data dir's lock, opens the store, registers built-in kinds and `resources`,
    /// and starts the internal controllers. Fails at once, naming the holder, when another
    /// server owns the data dir. Must be called inside a Tokio runtime.
    pub async fn start(
        config: Config,
        kinds: Vec<NativeKind>,
        extra_metrics: Vec<MetricsSource>,
    ) -> anyhow::Result<Self> {
        let ids = store::ResIds::new();
        let mut b = registry::Registry::builder(ids.clone());
        builtin::register(&mut b);
        b.set_admission(crd::GROUP, crd::KIND, Arc::new(crd::validate::CrdAdmission));
        let registries = Arc::new(registry::Registries::new(Arc::new(b.build()?), &kinds));
        let mut dir_lock = None;
        if let Some(dir) = &config.data_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating data dir {}", dir.display()))?;
            dir_lock = Some(lock::DataDirLock::acquire(dir)?);
        }
        let names: Arc<dyn store::ResourceNames> = ids;
        let st = match (&config.etcd, &config.data_dir) {
            (Some(etcd), _) => store::Store::open_etcd(etcd, names, config.store.clone()).await?,
            (None, dir) => {
                let backend: Box<dyn store::Backend> = match dir {
                    Some(dir) => Box::new(store::SqliteBackend::open(&dir.join("drydock.db"), config.sync)?),
                    None => Box::new(store::MemoryBackend),
                };
                tokio::task::block_in_place(|| store::Store::open(backend, names, config.store.clone()))?
            }
        };
        let api = Api::with_registries(st, registries);
        // Serve the CRDs already stored before drydock's own are written (their update
        // is then checked against what is served).
        crd::controller::sync_all(&api).await;
        controllers::bootstrap(&api, &kinds).await?;
        crd::controller::sync_all(&api).await;
        controllers::spawn(&api);
        let tokens = match &config.token_auth_file {
            Some(path) => auth::tokens::StaticTokens::read(path)?,
            None => auth::tokens::StaticTokens::default(),
        };
        let mut key = auth::service_accounts::local_key(config.data_dir.as_deref())?;
        if config.etcd.is_some() {
            key = auth::service_accounts::shared_key(&api, key).await?;
        }
        let service_accounts =
            Arc::new(auth::service_accounts::ServiceAccountTokens::new(&config.service_account_issuer, vec![], &key)?);
        // The CA a Secret-based token's `ca.crt` names: the one `drydock up` serves with.
        let ca_file = config.data_dir.as_ref().map(|d| d.join("pki/ca.crt"));
        tokio::spawn(controllers::legacy_tokens::run(Arc::new(api.clone()), service_accounts.clone(), ca_file));
        auth::rbac::cache::PolicyCache::track(&api);
        let server = Arc::new(http::Server {
            policies: Default::default(),
            authn: auth::Authenticator { tokens, service_accounts: Some(service_accounts) },
            api: api.clone(),
            version_minor: config.version_minor.clone(),
            extra_metrics,
            bookmark_interval: config.bookmark_interval,
            stopping: tokio::sync::watch::channel(false).0,
        });
        Ok(Self { api, server, lock: dir_lock })
    }

    /// Records in the data dir's lock file the address this server listens on (nothing
    /// without a data dir).
    pub fn record_address(&self, addr: std::net::SocketAddr) -> anyhow::Result<()> {
        if let Some(l) = &self.lock {
            l.record_address(addr)?;
        }
        Ok(())
    }

    /// A kube client talking to this server in-process (no socket), to the root logical
    /// cluster or to the logical cluster `cluster`.
    /// Its writes are recorded in managedFields under the manager `drydock` (the User-Agent's
    /// name), as a controller manager's are under its binary's name; its watch events, lists
    /// and write responses carry only the Apply entries of managedFields
    /// (`managed::apply_only`).
    /// Its requests are the server's own (`system:drydock`, allowed everything).
    pub fn client(&self, cluster: Option<&LogicalClusterName>) -> kube::Client {
        self.client_as(cluster, auth::UserInfo::in_process())
    }

    /// [`Self::client`] making its requests as `user`, whom RBAC authorizes.
    pub fn client_as(&self, cluster: Option<&LogicalClusterName>, user: auth::UserInfo) -> kube::Client {
        let marker = http::InProcess { user: Arc::new(user) };
        let router = tower::ServiceBuilder::new()
            .map_request(move |mut r: axum::http::Request<kube::client::Body>| {
                r.headers_mut().insert(
                    axum::http::header::USER_AGENT,
                    axum::http::HeaderValue::from_static(concat!("drydock/v", env!("CARGO_PKG_VERSION"))),
                );
                r.extensions_mut().insert(marker.clone());
                r
            })
            .service(self.router());
        match cluster {
            None => kube::Client::new(router, "default"),
            Some(c) => kube::Client::new(http::prefix::Prefixed::new(router, c.path()), "default"),
        }
    }

    /// Whether this server hosts the logical cluster `name`.
    pub fn hosts(&self, name: &LogicalClusterName) -> bool {
        http::logical_cluster_exists(&self.api, name)
    }

    /// The HTTP router serving the whole API.
    pub fn router(&self) -> axum::Router {
        http::router(self.server.clone())
    }

    /// Serves plain HTTP on `listener` (no TLS, no authentication: every request is an
    /// administrator's) until `shutdown` resolves; see [`Self::serve_tls`].
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        axum::serve(listener, self.router())
            .with_graceful_shutdown(self.stop_on(shutdown))
            .await
            .context("serving HTTP")?;
        tracing::info!("shutdown: every request in flight answered");
        Ok(())
    }

    /// Serves HTTPS on `listener` with the certificates of `pki`, authenticating clients
    /// ([`auth`]), until `shutdown` resolves, then stops accepting, ends every open watch
    /// (its client resumes from its last revision, here after a restart or elsewhere) and
    /// returns once the requests in flight are answered. A client that does not read its
    /// response can hold that up: callers put a deadline on it.
    pub async fn serve_tls(
        &self,
        listener: tokio::net::TcpListener,
        pki: &auth::pki_files::ServerPki,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let listener = self.tls_listener(listener, pki)?;
        let service = self.router().into_make_service_with_connect_info::<auth::Peer>();
        axum::serve(listener, service).with_graceful_shutdown(self.stop_on(shutdown)).await.context("serving HTTPS")?;
        tracing::info!("shutdown: every request in flight answered");
        Ok(())
    }

    /// The HTTPS listener on `listener`: the server's certificates from `pki`, the workload
    /// clusters' from their `<cluster>-ca` Secrets.
    pub fn tls_listener(
        &self,
        listener: tokio::net::TcpListener,
        pki: &auth::pki_files::ServerPki,
    ) -> anyhow::Result<auth::tls::TlsListener> {
        let client = self.client(None);
        let lookup: auth::tls::CaLookup = Arc::new(move |ns: String, cluster: String| {
            let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> = kube::Api::namespaced(client.clone(), &ns);
            Box::pin(async move {
                let secret = secrets.get_opt(&format!("{cluster}-ca")).await.ok()??;
                let data = secret.data?;
                let text = |k: &str| data.get(k).and_then(|v| String::from_utf8(v.0.clone()).ok());
                Some(drydock_api::pki::KeyAndCert { cert_pem: text("tls.crt")?, key_pem: text("tls.key")? })
            })
        });
        let certs = auth::tls::Certificates::new(pki.ca.cert_pem(), &pki.serving, lookup)?;
        Ok(auth::tls::TlsListener::new(listener, Arc::new(certs))?)
    }

    /// `shutdown`, then: stop accepting and end the watches.
    fn stop_on(
        &self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let server = self.server.clone();
        async move {
            shutdown.await;
            tracing::info!("shutdown: no longer accepting connections, ending watches");
            server.stopping.send_replace(true);
        }
    }
}
