//! `drydock crds`: the apiextensions.k8s.io/v1 CRDs of every Cluster API kind drydock
//! serves, generated from the Rust types, as a multi-document YAML stream.

use anyhow::Context;

pub fn render() -> anyhow::Result<String> {
    let mut out = String::new();
    for crd in drydock_api::capi::crds() {
        let mut v = serde_json::to_value(&crd).context("serializing a CRD")?;
        v["apiVersion"] = "apiextensions.k8s.io/v1".into();
        v["kind"] = "CustomResourceDefinition".into();
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&v).context("rendering a CRD as YAML")?);
    }
    Ok(out)
}
