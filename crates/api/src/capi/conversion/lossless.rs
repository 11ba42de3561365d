//! Lossless conversion around a kind's typed [`HubSpoke`] functions.
//!
//! Converting `source` to the other version gives `out`. When converting `out` back would
//! not give `source` again, `source` (minus metadata) is kept on `out` in the
//! [`CONVERSION_DATA`] annotation. Converting an object that carries the annotation:
//! - if the kept object converts to exactly this one (nothing changed meanwhile), the kept
//!   object is the answer: the round trip is the identity, whichever way it went;
//! - otherwise (the object was edited in the other version), the converted object gets
//!   back the kept fields the other version cannot show at all (dropping them from the kept
//!   object would not change its conversion), such as an explicit `false` or a field the
//!   other version lacks.

use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{CONVERSION_DATA, Ctx, HubSpoke};
use crate::conversion::{Conversion, ConversionError, RefVersions};

/// The in-process conversion of kind `C` (one spoke around its hub).
pub fn native<C: HubSpoke>() -> Arc<dyn Conversion> {
    Arc::new(Native::<C::Hub>::of::<C>())
}

/// A kind's conversion between its hub and every spoke: spoke to spoke goes through the
/// hub, and the lossless rules apply to the whole way, so what the target spoke cannot hold
/// is kept in the source spoke's own shape.
pub struct Native<H> {
    spokes: Vec<Spoke>,
    hub: PhantomData<fn() -> H>,
}

/// One spoke's typed functions, on bodies without metadata.
struct Spoke {
    api_version: String,
    up: fn(Value, &Ctx<'_>) -> Result<Value, ConversionError>,
    down: fn(Value, &Ctx<'_>) -> Result<Value, ConversionError>,
}

impl<H> Native<H>
where
    H: kube::Resource<DynamicType = ()> + serde::Serialize + serde::de::DeserializeOwned,
{
    /// The conversion between `C`'s spoke and its hub.
    pub fn of<C: HubSpoke<Hub = H>>() -> Self {
        Self { spokes: Vec::new(), hub: PhantomData }.with_spoke::<C>()
    }

    /// Adds another spoke of the same hub (IPAM's v1alpha1 beside v1beta1).
    pub fn with_spoke<C: HubSpoke<Hub = H>>(mut self) -> Self {
        self.spokes.push(Spoke {
            api_version: <C::Spoke as kube::Resource>::api_version(&()).into_owned(),
            up: |v, ctx| through::<C::Spoke, C::Hub>(v, ctx, C::up),
            down: |v, ctx| through::<C::Hub, C::Spoke>(v, ctx, C::down),
        });
        self
    }

    fn kind() -> String {
        H::kind(&()).into_owned()
    }

    fn hub_version() -> String {
        H::api_version(&()).into_owned()
    }

    fn spoke(&self, api_version: &str) -> Option<&Spoke> {
        self.spokes.iter().find(|s| s.api_version == api_version)
    }

    fn serves(&self, api_version: &str) -> bool {
        api_version == Self::hub_version() || self.spoke(api_version).is_some()
    }

    /// Converts a body (metadata is set aside) with the typed functions, through the hub
    /// when both versions are spokes.
    fn typed(&self, body: &Value, from: &str, to: &str, ctx: &Ctx<'_>) -> Result<Value, ConversionError> {
        let mut input = body.clone();
        if let Some(m) = input.as_object_mut() {
            m.insert("metadata".into(), Value::Object(Map::new()));
        }
        let unknown = |v: &str| ConversionError::UnknownVersion { kind: Self::kind(), api_version: v.to_string() };
        let hub = Self::hub_version();
        let in_hub = if from == hub { input } else { (self.spoke(from).ok_or_else(|| unknown(from))?.up)(input, ctx)? };
        let mut out = if to == hub { in_hub } else { (self.spoke(to).ok_or_else(|| unknown(to))?.down)(in_hub, ctx)? };
        if let Some(m) = out.as_object_mut() {
            m.remove("metadata");
            m.insert("apiVersion".into(), Value::String(to.to_string()));
            m.insert("kind".into(), Value::String(Self::kind()));
        }
        Ok(out)
    }

    fn convert_body(
        &self,
        body: &Value,
        kept: Option<Value>,
        (from, to): (&str, &str),
        ctx: &Ctx<'_>,
    ) -> Result<(Value, bool), ConversionError> {
        let mut out = self.typed(body, from, to, ctx)?;
        if let Some(kept) = kept {
            let kept_back = self.typed(&kept, to, from, ctx).ok();
            if kept_back.as_ref() == Some(body) {
                out = kept;
            } else if let Some(kept_back) = kept_back {
                restore_hidden(&mut out, &kept, &kept_back, &|v| self.typed(v, to, from, ctx).ok());
            }
        }
        let lossy = self.typed(&out, to, from, ctx).ok().as_ref() != Some(body);
        Ok((out, lossy))
    }
}

/// Decodes `v` as `From`, converts it with `f` and encodes the result.
fn through<From, To>(v: Value, ctx: &Ctx<'_>, f: fn(From, &Ctx<'_>) -> To) -> Result<Value, ConversionError>
where
    From: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
    To: kube::Resource<DynamicType = ()> + serde::Serialize,
{
    let decoded: From = serde_json::from_value(v).map_err(|e| ConversionError::Decode {
        kind: From::kind(&()).into_owned(),
        api_version: From::api_version(&()).into_owned(),
        message: e.to_string(),
    })?;
    serde_json::to_value(f(decoded, ctx)).map_err(|e| ConversionError::Invalid {
        kind: To::kind(&()).into_owned(),
        api_version: To::api_version(&()).into_owned(),
        message: e.to_string(),
    })
}

impl<H> Conversion for Native<H>
where
    H: kube::Resource<DynamicType = ()> + serde::Serialize + serde::de::DeserializeOwned,
{
    fn convert(&self, mut obj: Value, api_version: &str, refs: &dyn RefVersions) -> Result<Value, ConversionError> {
        let from = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
        if from == api_version {
            return Ok(obj);
        }
        for v in [from.as_str(), api_version] {
            if !self.serves(v) {
                return Err(ConversionError::UnknownVersion { kind: Self::kind(), api_version: v.to_string() });
            }
        }
        let Some(map) = obj.as_object_mut() else {
            return Err(ConversionError::Decode {
                kind: Self::kind(),
                api_version: from,
                message: "not an object".into(),
            });
        };
        let mut metadata = map.remove("metadata").unwrap_or_else(|| Value::Object(Map::new()));
        let kept = take_kept(&mut metadata, api_version);
        let namespace = metadata.get("namespace").and_then(Value::as_str).map(str::to_string);
        let ctx = Ctx { namespace: namespace.as_deref(), refs };
        let (mut out, lossy) = self.convert_body(&obj, kept, (&from, api_version), &ctx)?;
        if lossy {
            let data = serde_json::to_string(&obj).map_err(|e| ConversionError::Invalid {
                kind: Self::kind(),
                api_version: api_version.to_string(),
                message: e.to_string(),
            })?;
            if !metadata.is_object() {
                metadata = Value::Object(Map::new());
            }
            if let Some(m) = metadata.as_object_mut() {
                let annotations = m.entry("annotations").or_insert(Value::Null);
                if !annotations.is_object() {
                    *annotations = Value::Object(Map::new());
                }
                if let Some(a) = annotations.as_object_mut() {
                    a.insert(CONVERSION_DATA.into(), Value::String(data));
                }
            }
        }
        if let Some(m) = out.as_object_mut() {
            m.insert("metadata".into(), metadata);
        }
        Ok(out)
    }
}

/// Removes the conversion-data annotation from `metadata`, returning the object it holds
/// when that object is of `api_version` (a stale or foreign annotation is dropped).
fn take_kept(metadata: &mut Value, api_version: &str) -> Option<Value> {
    let annotations = metadata.get_mut("annotations")?.as_object_mut()?;
    let raw = annotations.remove(CONVERSION_DATA)?;
    if annotations.is_empty()
        && let Some(m) = metadata.as_object_mut()
    {
        m.remove("annotations");
    }
    let kept: Value = serde_json::from_str(raw.as_str()?).ok()?;
    (kept.get("apiVersion").and_then(Value::as_str) == Some(api_version)).then_some(kept)
}

/// Copies into `out` each leaf of `kept` that `out` lacks and that `convert` cannot see:
/// removing it from `kept` leaves `kept_back` (the conversion of `kept`) unchanged.
fn restore_hidden(out: &mut Value, kept: &Value, kept_back: &Value, convert: &dyn Fn(&Value) -> Option<Value>) {
    let mut leaves = Vec::new();
    collect_leaves(kept, &mut Vec::new(), &mut leaves);
    for path in leaves {
        if lookup(out, &path).is_some() {
            continue;
        }
        let mut without = kept.clone();
        remove_path(&mut without, &path);
        if convert(&without).as_ref() == Some(kept_back)
            && let Some(value) = lookup(kept, &path)
        {
            insert_path(out, &path, value.clone());
        }
    }
}

/// One step of a path: an object key, or a list item (found by its `name` when the list's
/// items all have one, else by position).
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Named(String),
    Index(usize),
}

/// Paths of the scalars, empty objects and lists under `v`, parents before children,
/// skipping the type fields; lists of objects are also entered item by item.
fn collect_leaves(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                if prefix.is_empty() && (k == "apiVersion" || k == "kind") {
                    continue;
                }
                prefix.push(Step::Key(k.clone()));
                collect_leaves(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            // The list as a whole first (restored whole when the other side lacks it), then
            // its items' fields (restored into the items the other side kept).
            out.push(prefix.clone());
            let named = items.iter().all(|i| i.get("name").is_some_and(Value::is_string));
            for (i, item) in items.iter().enumerate() {
                let step = match item.get("name").and_then(Value::as_str) {
                    Some(n) if named => Step::Named(n.to_string()),
                    _ => Step::Index(i),
                };
                prefix.push(step);
                collect_leaves(item, prefix, out);
                prefix.pop();
            }
        }
        _ => out.push(prefix.clone()),
    }
}

fn child<'a>(v: &'a Value, step: &Step) -> Option<&'a Value> {
    match step {
        Step::Key(k) => v.as_object()?.get(k),
        Step::Named(n) => v.as_array()?.iter().find(|i| i.get("name").and_then(Value::as_str) == Some(n)),
        Step::Index(i) => v.as_array()?.get(*i),
    }
}

fn child_mut<'a>(v: &'a mut Value, step: &Step) -> Option<&'a mut Value> {
    match step {
        Step::Key(k) => v.as_object_mut()?.get_mut(k),
        Step::Named(n) => v.as_array_mut()?.iter_mut().find(|i| i.get("name").and_then(Value::as_str) == Some(n)),
        Step::Index(i) => v.as_array_mut()?.get_mut(*i),
    }
}

fn lookup<'a>(v: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(v, child)
}

fn remove_path(v: &mut Value, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else { return };
    let Some(parent) = parents.iter().try_fold(v, child_mut) else { return };
    match (last, parent) {
        (Step::Key(k), Value::Object(m)) => {
            m.remove(k);
        }
        (Step::Named(n), Value::Array(items)) => items.retain(|i| i.get("name").and_then(Value::as_str) != Some(n)),
        (Step::Index(i), Value::Array(items)) if *i < items.len() => {
            items.remove(*i);
        }
        _ => {}
    }
}

/// Sets the value at `path`, creating missing objects on the way; a list item that is not
/// there (removed meanwhile) is not recreated.
fn insert_path(v: &mut Value, path: &[Step], value: Value) {
    let Some((last, parents)) = path.split_last() else { return };
    // Objects are created on the way only below the last list item, which must exist.
    let items_end = parents.iter().rposition(|s| !matches!(s, Step::Key(_))).map_or(0, |i| i + 1);
    if lookup(v, &parents[..items_end]).is_none() {
        return;
    }
    let mut cur = v;
    for step in parents {
        cur = match step {
            Step::Key(k) => {
                let Some(m) = cur.as_object_mut() else { return };
                m.entry(k.clone()).or_insert_with(|| Value::Object(Map::new()))
            }
            _ => match child_mut(cur, step) {
                Some(c) => c,
                None => return,
            },
        };
    }
    if let (Step::Key(k), Some(m)) = (last, cur.as_object_mut()) {
        m.insert(k.clone(), value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hidden_fields_inside_list_items_are_restored_by_name() {
        let kept = json!({"spec": {"replicas": 1, "items": [{"name": "a", "taint": "x"}, {"name": "b"}]}});
        // The other version shows names and replicas, not taints.
        let convert = |v: &Value| {
            let mut v = v.clone();
            for i in v["spec"]["items"].as_array_mut().into_iter().flatten() {
                i.as_object_mut().map(|m| m.remove("taint"));
            }
            Some(v)
        };
        let kept_back = convert(&kept).unwrap_or_default();
        // Edited meanwhile: replicas changed and the items reordered.
        let mut out = json!({"spec": {"replicas": 2, "items": [{"name": "b"}, {"name": "a"}]}});
        restore_hidden(&mut out, &kept, &kept_back, &convert);
        assert_eq!(out, json!({"spec": {"replicas": 2, "items": [{"name": "b"}, {"name": "a", "taint": "x"}]}}));
        // An item removed meanwhile stays removed, and so does a list removed meanwhile.
        let mut out = json!({"spec": {"replicas": 2, "items": [{"name": "b"}]}});
        restore_hidden(&mut out, &kept, &kept_back, &convert);
        assert_eq!(out, json!({"spec": {"replicas": 2, "items": [{"name": "b"}]}}));
        let mut out = json!({"spec": {"replicas": 2}});
        restore_hidden(&mut out, &kept, &kept_back, &convert);
        assert_eq!(out, json!({"spec": {"replicas": 2}}));
    }
}
