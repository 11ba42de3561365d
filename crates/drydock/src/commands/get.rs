//! `drydock get KIND [NAME]` and `drydock get kubeconfig NAME`.

use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};

use super::resolve::resolve;
use super::{Global, OutputFormat, connect, object_name, print_objects, with_type};

/// `drydock get KIND [NAME]`.
pub async fn get(g: &Global, kind: &str, name: Option<&str>, all_namespaces: bool) -> anyhow::Result<String> {
    let (client, server) = connect::client(g.kubeconfig.as_deref()).await?;
    let (kind, name) = match kind.split_once('/') {
        Some((k, n)) => (k, Some(n)),
        None => (kind, name),
    };
    let r = resolve(&client, kind, &server).await?;
    let ns = g.namespace.as_deref().unwrap_or("default");
    let api: Api<DynamicObject> = if !r.namespaced || (all_namespaces && name.is_none()) {
        Api::all_with(client.clone(), &r.resource)
    } else {
        Api::namespaced_with(client.clone(), ns, &r.resource)
    };
    match g.output {
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::Name => {
            let objs = match name {
                Some(n) => vec![api.get(n).await.map_err(|e| connect::explain(e, &server))?],
                None => api.list(&ListParams::default()).await.map_err(|e| connect::explain(e, &server))?.items,
            };
            let objs: Vec<serde_json::Value> = objs
                .into_iter()
                .map(|o| serde_json::to_value(o).map(|v| with_type(v, &r.resource)))
                .collect::<Result<_, _>>()?;
            if g.output == OutputFormat::Name {
                return Ok(objs.iter().map(|o| object_name(o) + "\n").collect());
            }
            print_objects(&objs, g.output, name.is_none())
        }
        OutputFormat::Table | OutputFormat::Wide => {
            let mut path = api.resource_url().to_string();
            if let Some(n) = name {
                path = format!("{path}/{n}");
            }
            let req = http::Request::get(path)
                .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
                .body(Vec::new())
                .context("building request")?;
            let table: serde_json::Value = client.request(req).await.map_err(|e| connect::explain(e, &server))?;
            let text =
                super::table::from_server_table(&table, g.output == OutputFormat::Wide, all_namespaces && r.namespaced);
            if text.is_empty() {
                let scope = if r.namespaced && !all_namespaces { format!(" in {ns} namespace") } else { String::new() };
                eprintln!("No resources found{scope}.");
            }
            Ok(text)
        }
    }
}

/// `drydock get kubeconfig NAME`: the workload cluster's kubeconfig.
pub async fn kubeconfig(g: &Global, cluster: &str) -> anyhow::Result<String> {
    let (client, server) = connect::client(g.kubeconfig.as_deref()).await?;
    let ns = g.namespace.as_deref().unwrap_or("default");
    let secrets: Api<Secret> = Api::namespaced(client, ns);
    let name = format!("{cluster}-kubeconfig");
    let secret = secrets.get_opt(&name).await.map_err(|e| connect::explain(e, &server))?;
    let Some(secret) = secret else {
        bail!(
            "no kubeconfig for cluster {ns}/{cluster} yet (secret {name} not found): is the cluster's control plane provisioned? Check `drydock describe cluster {cluster} -n {ns}`"
        );
    };
    let data = secret
        .data
        .and_then(|d| d.get("value").cloned())
        .with_context(|| format!("secret {name} has no `value` key"))?;
    String::from_utf8(data.0).context("kubeconfig is not UTF-8")
}
