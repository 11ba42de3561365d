//! kubeconfig files pointing at a drydock API server (or one of its logical clusters).

use std::path::Path;

use drydock_api::pki::KeyAndCert;
use drydock_api::tenancy::KubeconfigFor;
use drydock_apiserver::auth::pki_files::ServerPki;

/// A kubeconfig for `server` (a URL, possibly with a `/clusters/<name>` path) whose
/// cluster, user and context are all called `context`, in namespace `default`; with the
/// server's CA and the administrator's client certificate from `pki` when it serves HTTPS.
pub fn render(server: &str, context: &str, pki: Option<&ServerPki>) -> String {
    KubeconfigFor {
        server,
        cluster: context,
        user: context,
        context,
        namespace: Some("default"),
        ca_pem: pki.map(|p| p.ca.cert_pem()),
        client: pki.map(|p| &p.admin as &KeyAndCert),
        ..Default::default()
    }
    .to_yaml()
}

/// Writes `text` to `path`, readable by its owner alone (it holds a private key).
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    drydock_apiserver::auth::pki_files::write_private(path, text)
}
