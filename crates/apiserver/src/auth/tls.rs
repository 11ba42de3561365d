//! The HTTPS listener. Handshakes run beside the accept loop (a slow client holds up no
//! other); each reads the client's hello first and picks the server configuration by the
//! name it asks for: a workload cluster's TLS server name gets a serving certificate signed
//! by that cluster's CA (the `<cluster>-ca` Secret) and accepts client certificates of that
//! CA alone; any other name gets the server's own certificate and CA.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use drydock_api::pki::{Authority, Certificate, KeyAndCert, Leaf};
use drydock_api::tenancy::LogicalClusterName;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{Acceptor, ServerConfig, WebPkiClientVerifier};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::LazyConfigAcceptor;
use tokio_rustls::server::TlsStream;

use super::{Peer, Scope, UserInfo};

/// How long a client may take to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Finds the CA (certificate and key, PEM) of the workload cluster `(namespace, cluster)`.
pub type CaLookup = Arc<dyn Fn(String, String) -> BoxFuture<'static, Option<KeyAndCert>> + Send + Sync>;

/// The server configurations: the server's own, and one per workload cluster asked for.
pub struct Certificates {
    root: Arc<ServerConfig>,
    lookup: CaLookup,
    /// Per logical cluster: the CA certificate it was made for, and the configuration.
    clusters: Mutex<HashMap<LogicalClusterName, (String, Arc<ServerConfig>)>>,
}

impl Certificates {
    pub fn new(ca_pem: &str, serving: &KeyAndCert, lookup: CaLookup) -> anyhow::Result<Self> {
        Ok(Self { root: server_config(ca_pem, serving)?, lookup, clusters: Mutex::default() })
    }

    /// The configuration for the logical cluster `lc`, following its CA Secret (a new CA
    /// gets a new serving certificate).
    async fn for_cluster(&self, lc: &LogicalClusterName) -> anyhow::Result<Arc<ServerConfig>> {
        let (ns, name) = lc.workload_cluster().context("not a workload cluster's name")?;
        let ca = (self.lookup)(ns.to_string(), name.to_string())
            .await
            .with_context(|| format!("the workload cluster {lc} has no CA Secret {ns}/{name}-ca"))?;
        if let Some((pem, config)) = self.clusters.lock().get(lc)
            && *pem == ca.cert_pem
        {
            return Ok(config.clone());
        }
        let authority = Authority::from_pem(&ca.cert_pem, &ca.key_pem)?;
        let serving = authority.issue(&Leaf::server("kube-apiserver", &[lc.tls_server_name()]))?;
        let config = server_config(&ca.cert_pem, &serving)?;
        self.clusters.lock().insert(lc.clone(), (ca.cert_pem, config.clone()));
        Ok(config)
    }
}

/// A rustls server configuration serving `serving` and verifying client certificates (when
/// a client offers one) against `ca_pem`.
fn server_config(ca_pem: &str, serving: &KeyAndCert) -> anyhow::Result<Arc<ServerConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.context("reading the CA certificate")?).context("trusting the CA certificate")?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .context("building the client certificate verifier")?;
    let chain = CertificateDer::pem_slice_iter(serving.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .context("reading the serving certificate")?;
    let key = PrivateKeyDer::from_pem_slice(serving.key_pem.as_bytes()).context("reading the serving key")?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .context("the serving certificate")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Accepts TCP connections and hands out those whose TLS handshake completed, each with
/// the [`Peer`] it authenticated as.
pub struct TlsListener {
    incoming: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, Peer)>,
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, certs: Arc<Certificates>) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let (tx, incoming) = tokio::sync::mpsc::channel(256);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, remote) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors, say: wait rather than spin.
                        tracing::warn!(error = %e, "accepting a connection");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (tx, certs) = (tx.clone(), certs.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(stream, remote, &certs)).await {
                        Ok(Ok(conn)) => {
                            let _ = tx.send(conn).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%remote, error = %format!("{e:#}"), "TLS handshake failed"),
                        Err(_) => tracing::debug!(%remote, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self { incoming, local, accepting })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

async fn handshake(
    stream: TcpStream,
    remote: SocketAddr,
    certs: &Certificates,
) -> anyhow::Result<(TlsStream<TcpStream>, Peer)> {
    let start = LazyConfigAcceptor::new(Acceptor::default(), stream).await.context("reading the client hello")?;
    let asked = start.client_hello().server_name().and_then(LogicalClusterName::from_tls_server_name);
    let (scope, config) = match asked {
        Some(lc) => {
            let config = certs.for_cluster(&lc).await?;
            (Scope::Cluster(lc), config)
        }
        None => (Scope::Root, certs.root.clone()),
    };
    let tls = start.into_stream(config).await.context("completing the handshake")?;
    let certificate_user = tls.get_ref().1.peer_certificates().and_then(|chain| chain.first()).and_then(user_of);
    Ok((tls, Peer { remote, scope, certificate_user }))
}

/// The user a verified client certificate names: CN the name, O the groups; a certificate
/// without a CN names nobody (as kube-apiserver ignores it).
fn user_of(cert: &CertificateDer<'_>) -> Option<UserInfo> {
    let cert = Certificate::from_der(cert).ok()?;
    (!cert.common_name.is_empty()).then(|| UserInfo::new(cert.common_name, "", cert.organizations))
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(conn) => conn,
            // The accept loop ended (it only does when the listener is dropped).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(Peer { remote: self.local, scope: Scope::Root, certificate_user: None })
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        stream.remote_addr().clone()
    }
}
