//! The ClusterClass inline patch engine: `spec.patches` run in list order over the templates
//! of one Cluster's topology, each patch seeing the output of the previous one, as upstream's
//! (v1.14) engine does. External patches (Runtime SDK extensions) are refused.

use drydock_api::capi::core::v1beta2::{ClusterClassPatch, JSONPatch, PatchDefinition};
use drydock_api::capi::core::{JSONPatchValue, PatchSelector, PatchSelectorMatchNames};
use serde_json::{Map, Value};

use super::{gotemplate, variables};

/// What a patch definition's selector can match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    InfrastructureCluster,
    /// The control-plane template and the control plane's machine infrastructure template
    /// (told apart by the selector's apiVersion and kind).
    ControlPlane,
    MachineDeployment {
        class: &'a str,
    },
    MachinePool {
        class: &'a str,
    },
}

/// One template the patches may edit: the whole template object as JSON (apiVersion, kind,
/// metadata, spec.template...), its role, and the variables it sees (the global values plus
/// overrides plus a `builtin` object — the caller builds them).
#[derive(Debug)]
pub struct Patchable<'a> {
    pub target: Target<'a>,
    pub object: &'a mut Value,
    pub variables: &'a Map<String, Value>,
}

/// A patch could not be applied. The message names the patch (and the definition, JSON patch
/// and path) since it ends up in the Cluster's `TopologyReconciled` condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch calls a Runtime SDK extension.
    #[error("patch {patch:?}: external patches (Runtime SDK extensions) are not supported by drydock yet")]
    External { patch: String },
    /// `enabledIf` or a `valueFrom.template` failed to parse, render or (for values) to read
    /// as YAML; the message says which and carries the template engine's message.
    #[error("patch {patch:?}: {message}")]
    Template { patch: String, message: String },
    /// A JSON patch operation could not be applied, or its value could not be computed.
    #[error("patch {patch:?}: definitions[{definition}].jsonPatches[{index}] ({op} {path}): {message}")]
    JsonPatch { patch: String, definition: usize, index: usize, op: String, path: String, message: String },
}

/// Runs the class's patches in order on the templates. As upstream, each patch's `enabledIf`
/// is evaluated per template its definitions select, with that template's variables (so a
/// control plane template sees `builtin.controlPlane`, a worker's `builtin.machineDeployment`
/// or `builtin.machinePool`). On error the items may be partly patched: the caller discards
/// them.
pub fn apply(patches: &[ClusterClassPatch], items: &mut [Patchable<'_>]) -> Result<(), PatchError> {
    for patch in patches {
        if patch.external.is_some() {
            return Err(PatchError::External { patch: patch.name.clone() });
        }
        for item in items.iter_mut() {
            let selected: Vec<(usize, &PatchDefinition)> =
                patch.definitions.iter().flatten().enumerate().filter(|(_, d)| selects(&d.selector, item)).collect();
            if selected.is_empty() || !enabled(patch, item.variables)? {
                continue;
            }
            for (d, definition) in selected {
                for (j, op) in definition.json_patches.iter().enumerate() {
                    apply_op(patch, (d, j), op, item)?;
                }
            }
        }
    }
    Ok(())
}

/// A patch without `enabledIf` is enabled; with one, only if it renders to `true`.
fn enabled(patch: &ClusterClassPatch, variables: &Map<String, Value>) -> Result<bool, PatchError> {
    let Some(condition) = &patch.enabled_if else {
        return Ok(true);
    };
    let out = gotemplate::render("enabledIf", condition, variables)
        .map_err(|message| PatchError::Template { patch: patch.name.clone(), message })?;
    Ok(out.trim() == "true")
}

/// The selector's apiVersion and kind are the item's, and its `matchResources` covers the
/// item's role.
fn selects(selector: &PatchSelector, item: &Patchable<'_>) -> bool {
    let field = |name: &str| item.object.get(name).and_then(Value::as_str);
    if field("apiVersion") != Some(selector.api_version.as_str()) || field("kind") != Some(selector.kind.as_str()) {
        return false;
    }
    let m = &selector.match_resources;
    match item.target {
        Target::InfrastructureCluster => m.infrastructure_cluster == Some(true),
        Target::ControlPlane => m.control_plane == Some(true),
        Target::MachineDeployment { class } => class_selected(m.machine_deployment_class.as_ref(), class),
        Target::MachinePool { class } => class_selected(m.machine_pool_class.as_ref(), class),
    }
}

/// Class name patterns: exact, `*`, `prefix*` or `*suffix`.
fn class_selected(names: Option<&PatchSelectorMatchNames>, class: &str) -> bool {
    names.and_then(|n| n.names.as_ref()).into_iter().flatten().any(|pattern| {
        pattern == "*"
            || pattern == class
            || pattern.strip_prefix('*').is_some_and(|suffix| class.ends_with(suffix))
            || pattern.strip_suffix('*').is_some_and(|prefix| class.starts_with(prefix))
    })
}

/// Applies JSON patch `j` of definition `d`.
fn apply_op(
    patch: &ClusterClassPatch,
    at: (usize, usize),
    op: &JSONPatch,
    item: &mut Patchable,
) -> Result<(), PatchError> {
    let (d, j) = at;
    let fail = |message: String| PatchError::JsonPatch {
        patch: patch.name.clone(),
        definition: d,
        index: j,
        op: op.op.clone(),
        path: op.path.clone(),
        message,
    };
    let tokens = pointer_tokens(&op.path).map_err(fail)?;
    let value = match (op.op.as_str(), &op.value, &op.value_from) {
        ("remove", ..) => None,
        ("add" | "replace", Some(v), _) => Some(v.clone()),
        ("add" | "replace", None, Some(JSONPatchValue { variable: Some(path), .. })) => {
            Some(variables::lookup(item.variables, path).map_err(|e| fail(format!("valueFrom.variable: {e}")))?)
        }
        ("add" | "replace", None, Some(JSONPatchValue { template: Some(template), .. })) => {
            let name = format!("definitions[{d}].jsonPatches[{j}].valueFrom.template");
            let value = gotemplate::render_value(&name, template, item.variables)
                .map_err(|message| PatchError::Template { patch: patch.name.clone(), message })?;
            Some(value)
        }
        ("add" | "replace", ..) => return Err(fail("needs a value, valueFrom.variable or valueFrom.template".into())),
        (other, ..) => return Err(fail(format!("unsupported op {other:?}: only add, replace and remove are"))),
    };
    edit(item.object, op.op == "add", &tokens, value).map_err(fail)
}

/// RFC 6901: `""` is the whole document, else `/`-separated tokens with `~1` for `/` and
/// `~0` for `~`.
fn pointer_tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err("a path must be empty or start with \"/\"".into());
    };
    rest.split('/')
        .map(|token| {
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => return Err(format!("invalid escape in {token:?}: \"~\" must be followed by 0 or 1")),
                }
            }
            Ok(out)
        })
        .collect()
}

/// An array position: a decimal index without leading zeros, below `len` (or equal to it, or
/// `-`, when appending).
fn array_index(token: &str, len: usize, appending: bool) -> Result<usize, String> {
    if appending && token == "-" {
        return Ok(len);
    }
    let well_formed =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    match token.parse::<usize>() {
        Ok(i) if well_formed && (i < len || (appending && i == len)) => Ok(i),
        Ok(_) if well_formed => Err(format!("index {token} is out of range (array length {len})")),
        _ => Err(format!("{token:?} is not an array index")),
    }
}

/// The container the last token is in. For `add` (`create`), missing or null intermediate
/// values become objects, or arrays when the next token is an index, as upstream's
/// JSON patch library does with `EnsurePathExistsOnAdd`.
fn parent<'v>(doc: &'v mut Value, tokens: &[String], create: bool) -> Result<&'v mut Value, String> {
    let mut cur = doc;
    let steps = tokens.len().saturating_sub(1);
    for (i, token) in tokens.iter().take(steps).enumerate() {
        cur = match cur {
            Value::Object(map) => {
                if create && map.get(token).is_none_or(Value::is_null) {
                    let next = tokens.get(i + 1).map(String::as_str).unwrap_or_default();
                    let index_next = next == "-" || (!next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()));
                    let empty = if index_next { Value::Array(Vec::new()) } else { Value::Object(Map::new()) };
                    map.insert(token.clone(), empty);
                }
                map.get_mut(token).ok_or_else(|| format!("missing {token:?}"))?
            }
            Value::Array(items) => {
                let idx = array_index(token, items.len(), false)?;
                items.get_mut(idx).ok_or_else(|| format!("missing index {idx}"))?
            }
            _ => return Err(format!("{token:?} is inside a value that is neither an object nor an array")),
        };
    }
    Ok(cur)
}

/// `add` (`adding`) or `replace` the value at `tokens`, or `remove` it (no value).
fn edit(doc: &mut Value, adding: bool, tokens: &[String], value: Option<Value>) -> Result<(), String> {
    let Some(last) = tokens.last() else {
        *doc = value.ok_or("cannot remove the whole object")?;
        return Ok(());
    };
    match (parent(doc, tokens, adding)?, value) {
        (Value::Object(map), Some(v)) if adding => drop(map.insert(last.clone(), v)),
        (Value::Object(map), Some(v)) => {
            *map.get_mut(last).ok_or_else(|| format!("missing {last:?}: replace needs an existing value"))? = v;
        }
        (Value::Object(map), None) => {
            drop(map.remove(last).ok_or_else(|| format!("missing {last:?}: nothing to remove"))?)
        }
        (Value::Array(items), value) => {
            let idx = array_index(last, items.len(), adding)?;
            match value {
                Some(v) if adding => items.insert(idx, v),
                Some(v) => items[idx] = v,
                None => drop(items.remove(idx)),
            }
        }
        _ => return Err(format!("{last:?} is inside a value that is neither an object nor an array")),
    }
    Ok(())
}

#[cfg(test)]
mod tests;
