//! Benchmarks: `drydock bench` provisions a fleet; `drydock bench apiserver` measures the API server alone;
//! `drydock bench compare` runs the fleet bench of this build and another alternately; `drydock bench
//! stores` runs both benches on each store given, side by side.

pub mod apiserver;
pub mod compare;
pub mod fleet;
pub mod stats;
pub mod stores;

use std::ffi::OsStr;
use std::path::Path;

use anyhow::{Context as _, bail};

/// Runs `EXE bench ARGS --json OUT`, its progress output hidden, and reads the results it
/// wrote.
async fn run_child<T: serde::de::DeserializeOwned>(
    exe: &Path,
    args: &[impl AsRef<OsStr>],
    out: &Path,
) -> anyhow::Result<T> {
    let status = tokio::process::Command::new(exe)
        .arg("bench")
        .args(args)
        .arg("--json")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
        .await
        .with_context(|| format!("running {}", exe.display()))?;
    if !status.success() {
        let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
        bail!("{} bench {} failed: {status}", exe.display(), shown.join(" "));
    }
    let text = std::fs::read(out).with_context(|| format!("reading {}", out.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("{} wrote no bench results", exe.display()))
}
