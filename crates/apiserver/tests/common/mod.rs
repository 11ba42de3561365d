//! A test API server on a temporary data dir, reachable over HTTPS (with the certificates
//! `drydock up` makes: clients present the administrator's) and in-process.
#![allow(dead_code)]

pub mod kubectl;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use drydock_api::resource::NativeKind;
use drydock_api::tenancy::{KubeconfigFor, LogicalClusterName};
use drydock_api::{PrinterColumn, ResourceDef, ScaleDef};
use drydock_apiserver::auth::Peer;
use drydock_apiserver::auth::pki_files::ServerPki;
use drydock_apiserver::{ApiServer, Config};
use serde_json::json;
use tokio::sync::oneshot;

pub struct TestServer {
    pub server: ApiServer,
    pub addr: SocketAddr,
    pub pki: ServerPki,
    pub dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// A kube client over HTTPS.
    pub async fn client(&self) -> kube::Client {
        self.client_at("").await
    }

    /// A kube client over HTTPS for the server URL plus `path` (a logical cluster's).
    pub async fn client_at(&self, path: &str) -> kube::Client {
        let server = format!("{}{path}", self.url());
        let kc = kube::config::Kubeconfig::from_yaml(&self.kubeconfig_text(&server)).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.expect("config");
        kube::Client::try_from(config).expect("client")
    }

    /// A kubeconfig for `server` with the server's CA and the administrator's certificate.
    pub fn kubeconfig_text(&self, server: &str) -> String {
        KubeconfigFor {
            server,
            cluster: "t",
            user: "t",
            context: "t",
            namespace: Some("default"),
            ca_pem: Some(self.pki.ca.cert_pem()),
            client: Some(&self.pki.admin),
            ..Default::default()
        }
        .to_yaml()
    }

    /// A kube client over the router, with no socket.
    pub fn in_process_client(&self) -> kube::Client {
        kube::Client::new(self.server.router(), "default")
    }

    /// Writes a kubeconfig for the server (optionally a logical cluster) and returns its path.
    pub fn kubeconfig(&self, cluster: Option<&str>) -> PathBuf {
        let server = match cluster {
            Some(c) => format!("{}{}", self.url(), LogicalClusterName::new(c).path()),
            None => self.url(),
        };
        let name = cluster.unwrap_or("root");
        let path = self.dir.path().join(format!("kubeconfig-{name}"));
        std::fs::write(&path, self.kubeconfig_text(&server)).expect("write kubeconfig");
        path
    }
}

impl TestServer {
    /// Stops serving and starts a new server on the same data dir.
    pub async fn restart(mut self) -> TestServer {
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("tempdir"));
        drop(self);
        start_in(dir).await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// The custom resource the tests use: a namespaced Widget with status and scale subresources.
pub fn widget() -> ResourceDef {
    ResourceDef::new("example.drydock.dev", "v1", "Widget", "widgets")
        .with_status()
        .with_scale(ScaleDef {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        })
        .short_names(&["wd"])
        .categories(&["all"])
        .column(PrinterColumn::new("Replicas", "integer", ".spec.replicas"))
        .column(PrinterColumn::new("Color", "string", ".spec.color"))
        .schema(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "color": {"type": "string", "enum": ["red", "green", "blue"]},
                    "note": {"type": "string"}
                }},
                "status": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                    "phase": {"type": "string"}
                }}
            }
        }))
}

/// The Widget's CustomResourceDefinition as JSON, to install it in a logical cluster.
pub fn widget_crd() -> String {
    let mut crd = serde_json::to_value(widget().to_crd()).expect("crd");
    crd["apiVersion"] = json!("apiextensions.k8s.io/v1");
    crd["kind"] = json!("CustomResourceDefinition");
    crd.to_string()
}

pub async fn start_in(dir: tempfile::TempDir) -> TestServer {
    start_with(dir, |_| {}).await
}

pub async fn start_with(dir: tempfile::TempDir, tune: impl FnOnce(&mut Config)) -> TestServer {
    serve(dir, tune, vec![widget()]).await
}

/// A server with the Widget and `kinds`.
pub async fn start_with_kinds(kinds: Vec<ResourceDef>) -> TestServer {
    let mut all = vec![widget()];
    all.extend(kinds);
    serve(tempfile::tempdir().expect("tempdir"), |_| {}, all).await
}

/// A server with the Widget and every Cluster API kind, in all their versions.
pub async fn start_with_capi() -> TestServer {
    let mut all = vec![NativeKind::single(&widget())];
    all.extend(drydock_api::capi::kinds());
    serve_kinds(tempfile::tempdir().expect("tempdir"), |_| {}, all).await
}

async fn serve(dir: tempfile::TempDir, tune: impl FnOnce(&mut Config), defs: Vec<ResourceDef>) -> TestServer {
    serve_kinds(dir, tune, defs.iter().map(NativeKind::single).collect()).await
}

async fn serve_kinds(dir: tempfile::TempDir, tune: impl FnOnce(&mut Config), kinds: Vec<NativeKind>) -> TestServer {
    let mut config = Config {
        data_dir: Some(dir.path().to_path_buf()),
        bookmark_interval: Duration::from_secs(1),
        ..Config::default()
    };
    tune(&mut config);
    let server = ApiServer::start(config, kinds, Vec::new()).await.expect("start server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let pki = ServerPki::load_or_create(Some(dir.path()), &["127.0.0.1".to_string()]).expect("certificates");
    let listener = server.tls_listener(listener, &pki).expect("TLS listener");
    let (stop, rx) = oneshot::channel::<()>();
    let service = server.router().into_make_service_with_connect_info::<Peer>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, service)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await;
    });
    TestServer { server, addr, pki, dir, stop: Some(stop) }
}

pub async fn start() -> TestServer {
    start_in(tempfile::tempdir().expect("tempdir")).await
}

/// Polls `f` until it returns Some or the deadline passes.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn path_exists(p: &Path) -> bool {
    p.exists()
}

/// One request to `router` in-process, with a body of content type `ct`: the status code,
/// the response's content type and its body.
pub async fn send_raw(
    router: &axum::Router,
    method: &str,
    path: &str,
    ct: &str,
    accept: &str,
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .header("accept", accept)
        .body(axum::body::Body::from(body))
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let code = resp.status().as_u16();
    let content_type = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let body = resp.into_body().collect().await.expect("body").to_bytes().to_vec();
    (code, content_type, body)
}
