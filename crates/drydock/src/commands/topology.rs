//! `drydock topology plan -f FILE`: what a Cluster with a topology, or a change to it or to
//! its ClusterClass, would create, change and roll, in the order the topology controller
//! applies it and an upgrade moves, without writing anything. The file's Cluster (and
//! ClusterClass, if given) pass the server's admission as a dry run, so invalid variables
//! are reported as an apply would report them; templates given beside a class are used in
//! place of the server's.

use std::fmt::Write as _;

use anyhow::{Context, bail};
use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass};
use drydock_controllers::topology::preview::{self, Preview};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;

use super::table;
use super::{Connection, ObjectOutput, OutputFormat, apply, connect, print_objects};

const GROUP: &str = "cluster.x-k8s.io";
const HUB: &str = "cluster.x-k8s.io/v1beta2";
/// The field manager of the dry runs (nothing is written under it).
const MANAGER: &str = "drydock-topology-plan";

#[derive(clap::Subcommand, Debug)]
pub enum TopologyCommand {
    /// Show what a Cluster's topology (or a change to it or its ClusterClass) would create,
    /// change and roll, in order, without applying it.
    Plan {
        /// Manifest with the Cluster, and optionally its ClusterClass and templates (`-`: stdin).
        #[arg(short = 'f', long)]
        filename: String,
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        output: ObjectOutput,
    },
}

pub async fn run(cmd: &TopologyCommand) -> anyhow::Result<String> {
    let TopologyCommand::Plan { filename, conn, output } = cmd;
    let docs = apply::read_manifests(filename)?;
    let is = |d: &Value, kind: &str| d["kind"] == kind && group_of(d) == GROUP;
    let Some(cluster_doc) = docs.iter().find(|d| is(d, "Cluster")) else {
        bail!("{filename} holds no Cluster");
    };
    let (client, server) = connect::client(conn.kubeconfig.as_deref()).await?;
    let ns =
        cluster_doc["metadata"]["namespace"].as_str().or(conn.namespace.as_deref()).unwrap_or("default").to_string();
    let overlay: Vec<Value> =
        docs.iter().filter(|d| d["kind"].as_str().is_some_and(|k| k.ends_with("Template"))).cloned().collect();
    let class: ClusterClass = match docs.iter().find(|d| is(d, "ClusterClass")) {
        Some(doc) => hub(dry_run(&client, &ns, doc).await?)?,
        None => {
            let cluster: Cluster = hub(cluster_doc.clone())?;
            let t = cluster.spec.topology.as_ref().context("the Cluster has no spec.topology")?;
            let class_ns = t.class_ref.namespace.clone().unwrap_or_else(|| ns.clone());
            Api::<ClusterClass>::namespaced(client.clone(), &class_ns)
                .get(&t.class_ref.name)
                .await
                .map_err(|e| connect::explain(e, &server))
                .with_context(|| format!("reading ClusterClass {class_ns}/{}", t.class_ref.name))?
        }
    };
    let cluster: Cluster = hub(dry_run(&client, &ns, cluster_doc).await?)?;
    let plan = preview::preview(&client, &cluster, &class, &overlay).await.context("planning the topology")?;
    match output.format() {
        f @ (OutputFormat::Json | OutputFormat::Yaml) => print_objects(&[plan], f, false),
        _ => Ok(render(&plan)),
    }
}

fn group_of(d: &Value) -> &str {
    d["apiVersion"].as_str().and_then(|v| v.rsplit_once('/')).map_or("", |(g, _)| g)
}

/// `doc` as the server would admit it (defaults, validation), written nowhere.
async fn dry_run(client: &kube::Client, ns: &str, doc: &Value) -> anyhow::Result<Value> {
    let (api_version, kind) =
        (doc["apiVersion"].as_str().unwrap_or_default(), doc["kind"].as_str().unwrap_or_default());
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let plural = drydock_api::capi::contract::plural(kind);
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural);
    let name = doc["metadata"]["name"].as_str().context("an object without metadata.name")?;
    let mut body = doc.clone();
    body["metadata"]["namespace"] = Value::String(ns.to_string());
    let params = PatchParams::apply(MANAGER).force().dry_run();
    let admitted = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
        .patch(name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| match e {
            kube::Error::Api(s) => anyhow::anyhow!("{kind} {name}: {}", s.message),
            other => anyhow::anyhow!("{kind} {name}: {other}"),
        })?;
    Ok(serde_json::to_value(admitted)?)
}

/// An object of a Cluster API core kind in the hub version the controllers read.
fn hub<T: serde::de::DeserializeOwned>(obj: Value) -> anyhow::Result<T> {
    let obj = if obj["apiVersion"] == HUB {
        obj
    } else {
        let kind = obj["kind"].as_str().unwrap_or_default().to_string();
        let native = drydock_api::capi::kinds()
            .into_iter()
            .find(|k| k.crd.spec.group == GROUP && k.crd.spec.names.kind == kind)
            .and_then(|k| k.conversion)
            .with_context(|| format!("drydock does not convert {kind}"))?;
        native
            .convert(obj, HUB, &drydock_api::conversion::NoRefVersions)
            .with_context(|| format!("converting {kind} to {HUB}"))?
    };
    Ok(serde_json::from_value(obj)?)
}

fn render(p: &Preview) -> String {
    let mut rows = vec![["ACTION", "KIND", "NAME", "DETAIL"].map(String::from).to_vec()];
    rows.extend(
        p.steps.iter().map(|s| vec![s.action.as_str().to_string(), s.kind.clone(), s.name.clone(), s.detail.clone()]),
    );
    let mut out = table::render(&rows);
    if !p.upgrade.is_empty() {
        out.push_str("\nUpgrade order:\n");
        for (i, line) in p.upgrade.iter().enumerate() {
            let _ = writeln!(out, "  {}. {line}", i + 1);
        }
    }
    out
}
