//! The values of a ClusterClass's variables for one Cluster, as its patches see them.
//!
//! The Cluster webhook has normally validated and defaulted `spec.topology.variables`
//! already; the topology controller defaults again (as upstream does) so a Cluster created
//! before a default was added to the class, or without the webhook, still gets it.

use drydock_api::capi::core::JSONSchemaProps;
use drydock_api::capi::core::v1beta2::{ClusterClassVariable, ClusterVariable};
use serde_json::{Map, Value};

/// A Cluster's variables do not fit its class. The message names the field, as the
/// apiserver would, since it ends up in the Cluster's `TopologyReconciled` condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariableError {
    /// A `required` variable is neither set nor defaulted by its schema.
    #[error(
        "spec.topology.variables[{name}]: Required value: required variable {name:?} is not set and has no default"
    )]
    Required { name: String },
    /// A variable the class does not define.
    #[error(
        "spec.topology.variables[{name}]: Invalid value: unknown variable {name:?}: the ClusterClass does not define it"
    )]
    Unknown { name: String },
    /// The same variable set twice.
    #[error("spec.topology.variables[{name}]: Duplicate value: variable {name:?} is set more than once")]
    Duplicate { name: String },
}

/// The values of the class's variables for a Cluster: the Cluster's value of each class
/// variable, else the schema's top-level `default` (when it has one); nested defaults of the
/// schema fill in missing object properties of either. A `required` variable with neither
/// value nor default, a variable the class does not define, and a variable set twice are
/// errors.
pub fn values(
    class_vars: &[ClusterClassVariable],
    set: &[ClusterVariable],
) -> Result<Map<String, Value>, VariableError> {
    for (i, var) in set.iter().enumerate() {
        if !class_vars.iter().any(|c| c.name == var.name) {
            return Err(VariableError::Unknown { name: var.name.clone() });
        }
        if set[..i].iter().any(|earlier| earlier.name == var.name) {
            return Err(VariableError::Duplicate { name: var.name.clone() });
        }
    }
    let mut out = Map::new();
    for class_var in class_vars {
        let schema = &class_var.schema.open_api_v3_schema;
        let mut value = match (set.iter().find(|v| v.name == class_var.name), &schema.default) {
            (Some(v), _) => v.value.clone(),
            (None, Some(default)) => default.clone(),
            (None, None) if class_var.required => return Err(VariableError::Required { name: class_var.name.clone() }),
            (None, None) => continue,
        };
        apply_nested_defaults(schema, &mut value);
        out.insert(class_var.name.clone(), value);
    }
    Ok(out)
}

/// `base` with the overrides (per control plane or MachineDeployment) replacing values of the
/// same name.
pub fn with_overrides(base: &Map<String, Value>, overrides: &[ClusterVariable]) -> Map<String, Value> {
    let mut out = base.clone();
    for o in overrides {
        out.insert(o.name.clone(), o.value.clone());
    }
    out
}

/// Kubernetes structural defaulting: an object's missing (or null) property that has a
/// `default` gets it, then every property, `additionalProperties` value and array item is
/// defaulted in turn, so defaults nested in defaults apply too.
fn apply_nested_defaults(schema: &JSONSchemaProps, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let props = schema.properties.as_ref();
            for (name, prop) in props.into_iter().flatten() {
                if let Some(default) = &prop.default
                    && map.get(name).is_none_or(Value::is_null)
                {
                    map.insert(name.clone(), default.clone());
                }
            }
            for (name, v) in map.iter_mut() {
                let prop = props.and_then(|p| p.get(name)).or(schema.additional_properties.as_deref());
                if let Some(prop) = prop {
                    apply_nested_defaults(prop, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                items.iter_mut().for_each(|v| apply_nested_defaults(item_schema, v));
            }
        }
        _ => {}
    }
}

/// The value at a `valueFrom.variable` path: a variable name, then `.field`s, each name
/// optionally followed by `[i]` array indexes (`builtin.cluster.name`, `arr[0].x`). The error
/// names the path and what is missing.
pub(super) fn lookup(vars: &Map<String, Value>, path: &str) -> Result<Value, String> {
    let mut cur: Option<&Value> = None;
    for segment in path.split('.') {
        let (name, indexes) = parse_segment(segment).map_err(|e| format!("invalid variable path {path:?}: {e}"))?;
        cur = Some(match cur {
            None => vars.get(name).ok_or_else(|| format!("variable {name:?} not found"))?,
            Some(Value::Object(m)) => {
                m.get(name).ok_or_else(|| format!("variable {path:?}: field {name:?} not found"))?
            }
            Some(_) => return Err(format!("variable {path:?}: cannot read field {name:?} of a non-object value")),
        });
        for i in indexes {
            cur = Some(match cur {
                Some(Value::Array(a)) => {
                    a.get(i).ok_or_else(|| format!("variable {path:?}: index {i} out of range (length {})", a.len()))?
                }
                _ => return Err(format!("variable {path:?}: cannot index a non-array value of {name:?}")),
            });
        }
    }
    cur.cloned().ok_or_else(|| format!("invalid variable path {path:?}"))
}

/// `name[1][2]` into the name and its indexes.
fn parse_segment(segment: &str) -> Result<(&str, Vec<usize>), String> {
    let (name, mut rest) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
    if name.is_empty() {
        return Err("empty name".to_owned());
    }
    let mut indexes = Vec::new();
    while !rest.is_empty() {
        let Some((index, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) else {
            return Err(format!("malformed index in {segment:?}"));
        };
        indexes.push(index.parse().map_err(|_| format!("index {index:?} is not a non-negative integer"))?);
        rest = after;
    }
    Ok((name, indexes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn class_var(name: &str, required: bool, schema: Value) -> ClusterClassVariable {
        serde_json::from_value(json!({"name": name, "required": required, "schema": {"openAPIV3Schema": schema}}))
            .unwrap()
    }

    fn set(name: &str, value: Value) -> ClusterVariable {
        ClusterVariable { name: name.into(), value }
    }

    fn class() -> Vec<ClusterClassVariable> {
        vec![
            class_var("etcdImageTag", true, json!({"type": "string"})),
            class_var("coreDNSImageTag", false, json!({"type": "string", "default": "v1.10"})),
            class_var("maxSurge", false, json!({"type": "string"})),
            class_var(
                "proxy",
                false,
                json!({"type": "object", "default": {}, "properties": {
                    "enabled": {"type": "boolean", "default": false},
                    "port": {"type": "integer", "default": 3128},
                    "tls": {"type": "object", "default": {}, "properties": {"verify": {"type": "boolean", "default": true}}},
                    "hosts": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}},
                }}),
            ),
        ]
    }

    #[test]
    fn set_values_win_and_defaults_fill_in() {
        let got =
            values(&class(), &[set("etcdImageTag", json!("3.5.9")), set("coreDNSImageTag", json!("v1.11"))]).unwrap();
        assert_eq!(got["etcdImageTag"], json!("3.5.9"));
        assert_eq!(got["coreDNSImageTag"], json!("v1.11"));
        // Optional without default: absent.
        assert!(!got.contains_key("maxSurge"));
        // Top-level default `{}`, then its nested defaults, including a default inside a default.
        assert_eq!(got["proxy"], json!({"enabled": false, "port": 3128, "tls": {"verify": true}}));

        let got = values(&class(), &[set("etcdImageTag", json!("x"))]).unwrap();
        assert_eq!(got["coreDNSImageTag"], json!("v1.10"));
    }

    #[test]
    fn nested_defaults_apply_to_set_values_and_array_items() {
        let proxy = json!({"enabled": true, "tls": {"verify": false}, "hosts": [{"weight": 5}, {}], "port": null});
        let got = values(&class(), &[set("etcdImageTag", json!("x")), set("proxy", proxy)]).unwrap();
        assert_eq!(
            got["proxy"],
            json!({"enabled": true, "port": 3128, "tls": {"verify": false}, "hosts": [{"weight": 5}, {"weight": 1}]})
        );
    }

    #[test]
    fn required_unknown_and_duplicate_are_errors_naming_the_field() {
        let err = values(&class(), &[]).unwrap_err();
        assert_eq!(err, VariableError::Required { name: "etcdImageTag".into() });
        assert!(err.to_string().starts_with("spec.topology.variables[etcdImageTag]: Required value: "), "{err}");

        let err = values(&class(), &[set("etcdImageTag", json!("x")), set("nope", json!(1))]).unwrap_err();
        assert_eq!(err, VariableError::Unknown { name: "nope".into() });
        assert!(err.to_string().contains("spec.topology.variables[nope]: Invalid value: unknown variable"), "{err}");

        let err = values(&class(), &[set("etcdImageTag", json!("x")), set("etcdImageTag", json!("y"))]).unwrap_err();
        assert_eq!(err, VariableError::Duplicate { name: "etcdImageTag".into() });
    }

    #[test]
    fn a_required_variable_with_a_default_is_not_an_error() {
        let class = [class_var("region", true, json!({"type": "string", "default": "eu"}))];
        assert_eq!(values(&class, &[]).unwrap()["region"], json!("eu"));
    }

    #[test]
    fn overrides_replace_same_named_values_only() {
        let base = values(&class(), &[set("etcdImageTag", json!("x"))]).unwrap();
        let got = with_overrides(&base, &[set("etcdImageTag", json!("y")), set("maxSurge", json!("1"))]);
        assert_eq!(got["etcdImageTag"], json!("y"));
        assert_eq!(got["maxSurge"], json!("1"));
        assert_eq!(got["coreDNSImageTag"], base["coreDNSImageTag"]);
        assert_eq!(base["etcdImageTag"], json!("x"));
    }

    #[test]
    fn lookup_follows_dots_and_indexes() {
        let vars = json!({
            "builtin": {"cluster": {"name": "c1"}},
            "arr": [{"x": 1}, {"x": [10, 20]}],
            "obj": {"field": "v"},
        });
        let vars = vars.as_object().unwrap();
        assert_eq!(lookup(vars, "builtin.cluster.name").unwrap(), json!("c1"));
        assert_eq!(lookup(vars, "builtin.cluster").unwrap(), json!({"name": "c1"}));
        assert_eq!(lookup(vars, "obj.field").unwrap(), json!("v"));
        assert_eq!(lookup(vars, "arr[0].x").unwrap(), json!(1));
        assert_eq!(lookup(vars, "arr[1].x[1]").unwrap(), json!(20));
        assert_eq!(lookup(vars, "arr").unwrap(), vars["arr"]);

        assert_eq!(lookup(vars, "missing").unwrap_err(), "variable \"missing\" not found");
        assert!(lookup(vars, "obj.nope").unwrap_err().contains("field \"nope\" not found"));
        assert!(lookup(vars, "arr[5]").unwrap_err().contains("index 5 out of range"));
        assert!(lookup(vars, "obj[0]").unwrap_err().contains("cannot index"));
        assert!(lookup(vars, "obj.field.deeper").unwrap_err().contains("non-object"));
        assert!(lookup(vars, "arr[x]").unwrap_err().contains("invalid variable path"));
        assert!(lookup(vars, "arr[0").unwrap_err().contains("malformed index"));
        assert!(lookup(vars, "obj..field").unwrap_err().contains("empty name"));
    }
}
