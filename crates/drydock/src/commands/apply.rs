//! `drydock apply -f FILE|-`: kubectl's client-side apply for users without kubectl. The
//! last applied configuration is kept in the same annotation kubectl uses, and updates are
//! three-way JSON merge patches (fields removed from the manifest since the last apply are
//! removed from the object).

use std::io::Read;

use anyhow::{Context, bail};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Map, Value, json};

use super::resolve::{gvk_of, resolve_gvk};
use super::{Global, connect, print_objects, with_type};

pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Reads manifests from a file or stdin (`-`), skipping empty documents.
pub fn read_manifests(file: &str) -> anyhow::Result<Vec<Value>> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading stdin")?;
        s
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?
    };
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).with_context(|| format!("parsing {file} as YAML"))?;
    Ok(docs.into_iter().filter(|d| d.is_object()).collect())
}

/// The merge patch that applies `modified` given what was last applied (`original`) and
/// what is there now (`current`).
pub fn three_way_patch(original: &Value, modified: &Value, current: &Value) -> Option<Value> {
    match (original, modified, current) {
        (_, Value::Object(m), Value::Object(c)) => {
            let o = original.as_object().cloned().unwrap_or_default();
            let mut patch = Map::new();
            for (k, mv) in m {
                let ov = o.get(k).unwrap_or(&Value::Null);
                match c.get(k) {
                    Some(cv) if cv.is_object() && mv.is_object() => {
                        if let Some(p) = three_way_patch(ov, mv, cv) {
                            patch.insert(k.clone(), p);
                        }
                    }
                    Some(cv) if cv == mv => {}
                    _ => {
                        patch.insert(k.clone(), mv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !m.contains_key(k) && c.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ => (modified != current).then(|| modified.clone()),
    }
}

pub async fn apply(g: &Global, file: &str) -> anyhow::Result<String> {
    let docs = read_manifests(file)?;
    if docs.is_empty() {
        bail!("no objects passed to apply");
    }
    let (client, server) = connect::client(g.kubeconfig.as_deref()).await?;
    let mut out = String::new();
    let mut written: Vec<Value> = Vec::new();
    for mut doc in docs {
        let gvk = gvk_of(&doc)?;
        let r = resolve_gvk(&client, &gvk, &server).await?;
        let name = doc["metadata"]["name"].as_str().context("object has no metadata.name")?.to_string();
        let ns = doc["metadata"]["namespace"]
            .as_str()
            .map(str::to_string)
            .or(g.namespace.clone())
            .unwrap_or_else(|| "default".into());
        let api: Api<DynamicObject> = if r.namespaced {
            Api::namespaced_with(client.clone(), &ns, &r.resource)
        } else {
            Api::all_with(client.clone(), &r.resource)
        };
        // What we apply is recorded (without the annotation itself) for the next three-way merge.
        if let Some(ann) = doc.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
            ann.remove(LAST_APPLIED);
        }
        let applied = serde_json::to_string(&doc)?;
        doc["metadata"]["annotations"][LAST_APPLIED] = json!(applied);
        let label = format!("{}/{}", gvk.kind.to_ascii_lowercase(), name);
        match api.get_opt(&name).await.map_err(|e| connect::explain(e, &server))? {
            None => {
                let obj: DynamicObject = serde_json::from_value(doc)?;
                let created =
                    api.create(&PostParams::default(), &obj).await.map_err(|e| connect::explain(e, &server))?;
                written.push(with_type(serde_json::to_value(created)?, &r.resource));
                out.push_str(&format!("{label} created\n"));
            }
            Some(live) => {
                let live_v = serde_json::to_value(&live)?;
                let original: Value = live_v["metadata"]["annotations"][LAST_APPLIED]
                    .as_str()
                    .and_then(|s| serde_json::from_str(s).ok())
                    .unwrap_or(Value::Null);
                match three_way_patch(&original, &doc, &live_v) {
                    Some(patch) => {
                        let patched = api
                            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map_err(|e| connect::explain(e, &server))?;
                        written.push(with_type(serde_json::to_value(patched)?, &r.resource));
                        out.push_str(&format!("{label} configured\n"));
                    }
                    None => {
                        written.push(with_type(live_v, &r.resource));
                        out.push_str(&format!("{label} unchanged\n"));
                    }
                }
            }
        }
    }
    // As kubectl apply -o: the objects as they are now, a List when several.
    if g.output.objects() {
        return print_objects(&written, g.output, written.len() > 1);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_way_merge_removes_dropped_fields_only() {
        let original = json!({"spec": {"a": 1, "b": 2}});
        let modified = json!({"spec": {"a": 1, "c": 3}});
        let current = json!({"spec": {"a": 1, "b": 2, "x": "set by a controller"}, "status": {"ok": true}});
        assert_eq!(three_way_patch(&original, &modified, &current), Some(json!({"spec": {"b": null, "c": 3}})));
        assert_eq!(three_way_patch(&modified, &modified, &json!({"spec": {"a": 1, "c": 3}})), None);
    }
}
