//! kubeconfig files pointing at a drydock API server (or one of its logical clusters).

use std::path::Path;

use anyhow::Context;

/// A kubeconfig for `server` (a URL, possibly with a `/clusters/<name>` prefix).
pub fn render(server: &str, context: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: {context}
  cluster:
    server: {server}
contexts:
- name: {context}
  context:
    cluster: {context}
    user: {context}
    namespace: default
current-context: {context}
users:
- name: {context}
  user: {{}}
"
    )
}

pub fn write(path: &Path, server: &str, context: &str) -> anyhow::Result<()> {
    std::fs::write(path, render(server, context)).with_context(|| format!("writing {}", path.display()))
}
