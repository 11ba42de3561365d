//! kubeconfig files pointing at a drydock API server (or one of its logical clusters).

use std::path::Path;

use anyhow::Context;
use drydock_api::tenancy::KubeconfigFor;

/// A kubeconfig for `server` (a URL, possibly with a `/clusters/<name>` path) whose
/// cluster, user and context are all called `context`, in namespace `default`.
pub fn render(server: &str, context: &str) -> String {
    KubeconfigFor { server, cluster: context, user: context, context, namespace: Some("default"), ..Default::default() }
        .to_yaml()
}

pub fn write(path: &Path, server: &str, context: &str) -> anyhow::Result<()> {
    std::fs::write(path, render(server, context)).with_context(|| format!("writing {}", path.display()))
}
