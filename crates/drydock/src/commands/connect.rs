//! Finding the API server the way kubectl does: `--kubeconfig`, then `KUBECONFIG`, then
//! `~/.kube/config`, then drydock's own default data dir (`.drydock/kubeconfig`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The kubeconfig file to use.
pub fn kubeconfig_path(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(env) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let first = std::env::split_paths(&env).next().context("KUBECONFIG is empty")?;
        return Ok(first);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let p = Path::new(&home).join(".kube").join("config");
        if p.exists() {
            return Ok(p);
        }
    }
    let local = PathBuf::from(".drydock").join("kubeconfig");
    if local.exists() {
        return Ok(local);
    }
    bail!(
        "no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or start drydock with `drydock up` in this directory"
    )
}

/// The client configuration of the resolved kubeconfig (its current context).
pub async fn config(flag: Option<&Path>) -> anyhow::Result<kube::Config> {
    let path = kubeconfig_path(flag)?;
    let kc = Kubeconfig::read_from(&path).with_context(|| format!("reading kubeconfig {}", path.display()))?;
    kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("using kubeconfig {}", path.display()))
}

/// A client for the resolved kubeconfig, and the server URL it points at.
pub async fn client(flag: Option<&Path>) -> anyhow::Result<(kube::Client, String)> {
    let config = config(flag).await?;
    let url = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).context("building the API client")?;
    Ok((client, url))
}

/// Turns transport failures into "server unreachable" with the URL and what to do.
pub fn explain(err: kube::Error, server: &str) -> anyhow::Error {
    match err {
        kube::Error::Api(s) => anyhow::anyhow!("{} ({})", s.message, s.reason),
        other => anyhow::anyhow!("cannot reach the API server at {server}: {other}; is `drydock up` running?"),
    }
}
