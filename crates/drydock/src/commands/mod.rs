//! clusterctl-style commands: generate, get, apply (and describe and rollout).

pub mod apply;
pub mod connect;
pub mod describe;
pub mod generate;
pub mod get;
pub mod migrate;
pub mod resolve;
pub mod rollout;
pub mod rollout_status;
pub mod table;
pub mod topology;

use std::path::PathBuf;

use anyhow::Context;
use serde::Serialize;

/// How a command prints: its own human-readable form (`Table`: a table, a tree, a message)
/// or the objects it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Table,
    Wide,
    Yaml,
    Json,
    Name,
}

impl OutputFormat {
    /// Whether objects are printed (YAML or JSON) instead of the human-readable form.
    pub fn objects(self) -> bool {
        matches!(self, Self::Yaml | Self::Json)
    }
}

/// Where the API server is and which namespace to address: the flags of every command
/// that talks to a server.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Connection {
    /// kubeconfig file to use (else KUBECONFIG, ~/.kube/config, ./.drydock/kubeconfig).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace of the objects addressed (default: `default`).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
}

/// `-o` of `get`: kubectl's formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GetFormat {
    /// The table with the columns marked wide.
    Wide,
    /// The objects as YAML.
    Yaml,
    /// The objects as JSON (several: a `List`).
    Json,
    /// `kind.group/name` per object.
    Name,
}

/// `-o` of commands whose default output is a message, tree or table: print the objects
/// they read or wrote instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ObjectFormat {
    /// The objects as YAML.
    Yaml,
    /// The objects as JSON (several: a `List`).
    Json,
}

/// The `-o` flag of commands that can print objects.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct ObjectOutput {
    /// Print the objects as yaml or json instead of the default output.
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<ObjectFormat>,
}

impl ObjectOutput {
    pub fn format(self) -> OutputFormat {
        match self.output {
            None => OutputFormat::Table,
            Some(ObjectFormat::Yaml) => OutputFormat::Yaml,
            Some(ObjectFormat::Json) => OutputFormat::Json,
        }
    }
}

impl From<Option<GetFormat>> for OutputFormat {
    fn from(f: Option<GetFormat>) -> Self {
        match f {
            None => Self::Table,
            Some(GetFormat::Wide) => Self::Wide,
            Some(GetFormat::Yaml) => Self::Yaml,
            Some(GetFormat::Json) => Self::Json,
            Some(GetFormat::Name) => Self::Name,
        }
    }
}

/// What a client command was given: where the server is, the namespace, the output.
#[derive(Clone, Debug, Default)]
pub struct Global {
    pub kubeconfig: Option<PathBuf>,
    pub namespace: Option<String>,
    pub output: OutputFormat,
}

impl Global {
    pub fn new(c: &Connection, output: OutputFormat) -> Self {
        Self { kubeconfig: c.kubeconfig.clone(), namespace: c.namespace.clone(), output }
    }
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

/// An object read from a list, with the apiVersion and kind its items may lack.
pub fn with_type(mut obj: serde_json::Value, r: &kube::core::ApiResource) -> serde_json::Value {
    if obj["apiVersion"].is_null() {
        obj["apiVersion"] = serde_json::json!(r.api_version);
    }
    if obj["kind"].is_null() {
        obj["kind"] = serde_json::json!(r.kind);
    }
    obj
}

/// `kind.group/name`, as `kubectl get -o name` prints an object (`kind/name` in the core group).
pub fn object_name(obj: &serde_json::Value) -> String {
    let kind = obj["kind"].as_str().unwrap_or_default().to_ascii_lowercase();
    let group = obj["apiVersion"].as_str().and_then(|av| av.split_once('/')).map(|(g, _)| g).unwrap_or_default();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if group.is_empty() { format!("{kind}/{name}") } else { format!("{kind}.{group}/{name}") }
}

/// Time since an RFC 3339 timestamp, as kubectl prints ages.
pub fn age(ts: &str) -> String {
    drydock_apiserver::http::table::age(ts)
}
