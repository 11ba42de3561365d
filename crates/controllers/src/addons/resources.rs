//! A set's resources as read from the management cluster: each Secret or ConfigMap, its
//! data in key order, the hash a Reconcile set compares, and the manifests it holds.

use std::collections::BTreeMap;

use drydock_api::capi::addons::{RESOURCE_SET_SECRET_TYPE, ResourceKind, ResourceRef};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use serde_json::Value;

use crate::Context;

/// One resource, read.
pub(super) struct Resource {
    pub r: ResourceRef,
    pub owners: Vec<OwnerReference>,
    /// `sha256:<hex>` over the data values in key order.
    pub hash: String,
    /// The manifests of every value, in key order.
    pub objects: Result<Vec<Value>, String>,
}

/// Why a resource could not be read.
pub(super) enum Unavailable {
    /// It does not exist (yet): the set applies it once it does.
    Missing(String),
    /// A Secret of another type than [`RESOURCE_SET_SECRET_TYPE`].
    WrongSecretType(String),
    /// The API server did not answer.
    Failed(String),
}

impl Unavailable {
    pub fn message(&self) -> &str {
        match self {
            Self::Missing(m) | Self::WrongSecretType(m) | Self::Failed(m) => m,
        }
    }
}

/// Reads `r` in `namespace`: from the informers (ConfigMaps, and Secrets of the resource-set
/// type), else from the API server, to tell a missing Secret from one of the wrong type.
pub(super) async fn read(ctx: &Context, namespace: &str, r: &ResourceRef) -> Result<Resource, Unavailable> {
    let (data, meta) = match r.kind {
        ResourceKind::ConfigMap => {
            let Some(cm) = ctx.informers.addon_config_maps.store.get(&ObjectRef::new(&r.name).within(namespace)) else {
                return Err(Unavailable::Missing(format!("ConfigMap {namespace}/{} not found", r.name)));
            };
            (
                cm.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.into_bytes())).collect(),
                cm.metadata.clone(),
            )
        }
        ResourceKind::Secret => {
            let secret = match ctx.informers.addon_secrets.store.get(&ObjectRef::new(&r.name).within(namespace)) {
                Some(s) => (*s).clone(),
                None => secret_of_another_type(ctx, namespace, &r.name).await?,
            };
            let data: BTreeMap<String, Vec<u8>> =
                secret.data.clone().unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect();
            (data, secret.metadata)
        }
    };
    Ok(Resource {
        r: r.clone(),
        owners: meta.owner_references.unwrap_or_default(),
        hash: hash(&data),
        objects: manifests(&data),
    })
}

/// The Secret the informer (which sees only the resource-set type) does not hold: absent,
/// or of another type.
async fn secret_of_another_type(ctx: &Context, namespace: &str, name: &str) -> Result<Secret, Unavailable> {
    let api: Api<Secret> = ctx.api(namespace);
    match api.get_opt(name).await {
        Ok(None) => Err(Unavailable::Missing(format!("Secret {namespace}/{name} not found"))),
        Ok(Some(s)) if s.type_.as_deref() == Some(RESOURCE_SET_SECRET_TYPE) => Ok(s),
        Ok(Some(s)) => Err(Unavailable::WrongSecretType(format!(
            "Secret {namespace}/{name} has type {:?}; a ClusterResourceSet applies Secrets of type {RESOURCE_SET_SECRET_TYPE:?} only",
            s.type_.unwrap_or_default()
        ))),
        Err(e) => Err(Unavailable::Failed(format!("reading Secret {namespace}/{name}: {e}"))),
    }
}

/// `sha256:<hex>` of the values in key order.
fn hash(data: &BTreeMap<String, Vec<u8>>) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for v in data.values() {
        ctx.update(v);
    }
    let hex: String = ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Every object of every value: YAML documents (or JSON), a `List` expanded into its items.
fn manifests(data: &BTreeMap<String, Vec<u8>>) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (key, bytes) in data {
        let text = std::str::from_utf8(bytes).map_err(|_| format!("{key}: not UTF-8 text"))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| format!("{key}: not YAML: {e}"))?;
        for doc in docs {
            match doc {
                Value::Null => {}
                Value::Object(ref o) if o.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List")) => {
                    out.extend(o.get("items").and_then(Value::as_array).into_iter().flatten().cloned());
                }
                Value::Object(_) => out.push(doc),
                other => return Err(format!("{key}: a document is not an object: {other}")),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect()
    }

    #[test]
    fn manifests_are_read_in_key_order_and_lists_expanded() {
        let d = data(&[
            (
                "b.yaml",
                "kind: ConfigMap\napiVersion: v1\nmetadata: {name: b}\n---\n---\nkind: Namespace\napiVersion: v1\nmetadata: {name: ns1}\n",
            ),
            (
                "a.json",
                r#"{"kind": "List", "apiVersion": "v1", "items": [{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}]}"#,
            ),
        ]);
        let names: Vec<_> = manifests(&d).expect("manifests").iter().map(|o| o["metadata"]["name"].clone()).collect();
        assert_eq!(names, ["a", "b", "ns1"]);
        assert!(manifests(&data(&[("x", "- 1\n- 2\n")])).is_err(), "a list of scalars is no manifest");
    }

    #[test]
    fn the_hash_follows_the_data() {
        let a = hash(&data(&[("k", "v1")]));
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64, "{a}");
        assert_eq!(a, hash(&data(&[("k", "v1")])));
        assert_ne!(a, hash(&data(&[("k", "v2")])));
    }
}
