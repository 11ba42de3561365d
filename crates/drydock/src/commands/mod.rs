//! clusterctl-style commands: generate, get, apply (and describe and rollout).

pub mod apply;
pub mod connect;
pub mod describe;
pub mod generate;
pub mod get;
pub mod resolve;
pub mod rollout;
pub mod table;

use std::path::PathBuf;

use anyhow::Context;
use serde::Serialize;

/// `-o` formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum OutputFormat {
    #[default]
    Table,
    Wide,
    Yaml,
    Json,
}

/// Flags every client command takes.
#[derive(Clone, Debug, Default)]
pub struct Global {
    pub kubeconfig: Option<PathBuf>,
    pub namespace: Option<String>,
    pub output: OutputFormat,
}

/// Objects as YAML (documents) or JSON (a List when several).
pub fn print_objects<T: Serialize>(objs: &[T], format: OutputFormat, as_list: bool) -> anyhow::Result<String> {
    let values: Vec<serde_json::Value> = objs.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
    let doc = if as_list {
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": values, "metadata": {}})
    } else {
        values.into_iter().next().unwrap_or(serde_json::Value::Null)
    };
    match format {
        OutputFormat::Json => Ok(serde_json::to_string_pretty(&doc)? + "\n"),
        _ => {
            let mut text = serde_saphyr::to_string(&doc).context("rendering YAML")?;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Ok(text)
        }
    }
}

/// Time since an RFC 3339 timestamp, as kubectl prints ages.
pub fn age(ts: &str) -> String {
    drydock_apiserver::http::table::age(ts)
}
