//! The `/scale` subresource: the autoscaling/v1 Scale view of an object and writes of its
//! replicas.

use drydock_api::FieldError;
use drydock_api::admission::FieldPath;
use drydock_api::selector::Selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::write::{Track, WriteOptions, Written, str_field};
use super::{Api, Target, parse_rv};
use crate::error::{ApiError, ApiResult};

impl Api {
    /// The autoscaling/v1 Scale view of an object.
    pub fn scale_of(&self, t: &Target, obj: &Value) -> ApiResult<Value> {
        let scale = t.res.def.scale.as_ref().ok_or_else(ApiError::not_found_path)?;
        let spec = pointer_of(&scale.spec_replicas_path).and_then(|p| obj.pointer(&p).cloned()).unwrap_or(json!(0));
        let status = pointer_of(&scale.status_replicas_path).and_then(|p| obj.pointer(&p).cloned()).unwrap_or(json!(0));
        let mut st = json!({"replicas": status});
        if let Some(sel) =
            scale.label_selector_path.as_deref().and_then(pointer_of).and_then(|p| obj.pointer(&p).cloned())
        {
            st["selector"] = selector_string(sel);
        }
        let m = &obj["metadata"];
        Ok(json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
                "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
            },
            "spec": {"replicas": spec},
            "status": st,
        }))
    }

    pub(super) async fn update_scale(&self, t: &Target, scale: Value, opts: &WriteOptions) -> ApiResult<Written> {
        let def = t.res.def.scale.clone().ok_or_else(ApiError::not_found_path)?;
        let name = t.name()?.to_string();
        let replicas = match &scale["spec"]["replicas"] {
            Value::Number(n) if n.as_i64().is_some_and(|r| r >= 0) => n.clone(),
            Value::Null => serde_json::Number::from(0),
            other => {
                return Err(ApiError::invalid(
                    &t.res.def,
                    &name,
                    &[FieldError::invalid("spec.replicas", other.clone(), "must be greater than or equal to 0")],
                ));
            }
        };
        let precondition = match str_field(&scale, &["metadata", "resourceVersion"]).filter(|s| !s.is_empty()) {
            Some(rv) => Some(parse_rv(rv)?),
            None => None,
        };
        let pointer =
            pointer_of(&def.spec_replicas_path).ok_or_else(|| ApiError::internal("invalid specReplicasPath"))?;
        let main = Target { sub: None, ..t.clone() };
        let written = self
            .write_loop(
                &main,
                &name,
                precondition,
                &WriteOptions { via_scale: true, ..opts.clone() },
                (Track::Update, super::prepare::Untouched::Nothing),
                |current, _| {
                    let mut doc = current.clone();
                    set_pointer(&mut doc, &pointer, Value::Number(replicas.clone()));
                    Ok(doc)
                },
            )
            .await?;
        let obj: Value = serde_json::from_slice(&written.body).map_err(|e| ApiError::internal(e.to_string()))?;
        let body = serde_json::to_vec(&self.scale_of(t, &obj)?).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Written { body: body.into(), ..written })
    }
}

/// The Scale's `status.selector`: a string as is; an object selector (a workload's
/// `.spec.selector`, a LabelSelector or a ReplicationController's plain map) in its
/// query form.
fn selector_string(sel: Value) -> Value {
    if sel.is_string() {
        return sel;
    }
    let parsed = match serde_json::from_value::<LabelSelector>(sel.clone()) {
        Ok(s) if s.match_labels.is_some() || s.match_expressions.is_some() => Some(s),
        _ => serde_json::from_value(sel)
            .ok()
            .map(|labels| LabelSelector { match_labels: Some(labels), match_expressions: None }),
    };
    parsed
        .and_then(|s| Selector::parse(&s, &FieldPath::new("spec.selector")).ok())
        .map_or(Value::Null, |s| json!(s.to_query()))
}

/// `.spec.replicas` → `/spec/replicas`.
pub(super) fn pointer_of(path: &str) -> Option<String> {
    let p = path.strip_prefix('.')?;
    Some(p.split('.').map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect())
}

pub(super) fn set_pointer(doc: &mut Value, pointer: &str, v: Value) {
    let mut cur = doc;
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    for (i, p) in parts.iter().enumerate() {
        let key = p.replace("~1", "/").replace("~0", "~");
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(map) = cur.as_object_mut() else {
            return;
        };
        if i == parts.len() - 1 {
            map.insert(key, v);
            return;
        }
        cur = map.entry(key).or_insert_with(|| json!({}));
    }
}
