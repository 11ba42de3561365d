//! `drydock crds`: the apiextensions.k8s.io/v1 CRDs of every Cluster API kind drydock
//! serves, generated from the Rust types, as a multi-document YAML stream. Kinds served in
//! several versions name drydock's `/convert` as their conversion webhook: the
//! `drydock-system/drydock` Service by default, or a URL (with the CA that signs its
//! certificate) for an API server that reaches drydock directly.

use anyhow::Context;
use k8s_openapi::ByteString;

/// Where a real API server reaches drydock's conversion endpoint.
#[derive(clap::Args, Debug, Default)]
pub struct CrdsArgs {
    /// URL of drydock's conversion endpoint (`https://HOST:PORT/convert`), instead of the
    /// in-cluster Service.
    #[arg(long, value_name = "URL")]
    pub conversion_url: Option<String>,
    /// PEM file of the CA that signs the conversion endpoint's certificate (`caBundle`).
    #[arg(long, value_name = "FILE", requires = "conversion_url")]
    pub conversion_ca_file: Option<std::path::PathBuf>,
}

pub fn render(args: &CrdsArgs) -> anyhow::Result<String> {
    let ca = match &args.conversion_ca_file {
        Some(f) => Some(std::fs::read(f).with_context(|| format!("reading {}", f.display()))?),
        None => None,
    };
    let mut out = String::new();
    for mut crd in drydock_api::capi::crds() {
        let client =
            crd.spec.conversion.as_mut().and_then(|c| c.webhook.as_mut()).and_then(|w| w.client_config.as_mut());
        if let (Some(client), Some(url)) = (client, &args.conversion_url) {
            client.service = None;
            client.url = Some(url.clone());
            client.ca_bundle = ca.clone().map(ByteString);
        }
        let mut v = serde_json::to_value(&crd).context("serializing a CRD")?;
        v["apiVersion"] = "apiextensions.k8s.io/v1".into();
        v["kind"] = "CustomResourceDefinition".into();
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&v).context("rendering a CRD as YAML")?);
    }
    Ok(out)
}
