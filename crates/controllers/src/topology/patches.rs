//! The ClusterClass inline patch engine: each inline patch of `spec.patches` over the
//! templates of one Cluster's topology, as upstream's (v1.14) engine applies them.
//! [`super::external`] runs the patches in order, calling extensions for external ones.

use drydock_api::capi::core::v1beta2::{ClusterClassPatch, JSONPatch, PatchDefinition};
use drydock_api::capi::core::{JSONPatchValue, PatchSelector, PatchSelectorMatchNames};
use serde_json::{Map, Value};

use super::json_pointer::{edit, pointer_tokens};
use super::{gotemplate, variables};
use crate::runtime_sdk;
use crate::runtime_sdk::wire::HolderReference;

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
/// metadata, spec.template...), its role, the variables it sees (the global values plus
/// overrides plus a `builtin` object — the caller builds them), and the object that will
/// reference what is made from it (what extensions are told).
#[derive(Debug)]
pub struct Patchable<'a> {
    pub target: Target<'a>,
    pub object: &'a mut Value,
    pub variables: &'a Map<String, Value>,
    pub holder: HolderReference,
}

/// A patch could not be applied. The message names the patch (and the definition, JSON patch
/// and path) since it ends up in the Cluster's `TopologyReconciled` condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch's extension could not be called or failed.
    #[error("patch {patch:?}: {source}")]
    Extension { patch: String, source: runtime_sdk::Error },
    /// An extension answered a patch that cannot be applied.
    #[error("patch {patch:?}: answer item {item}: {message}")]
    Answer { patch: String, item: usize, message: String },
    /// `enabledIf` or a `valueFrom.template` failed to parse, render or (for values) to read
    /// as YAML; the message says which and carries the template engine's message.
    #[error("patch {patch:?}: {message}")]
    Template { patch: String, message: String },
    /// A JSON patch operation could not be applied, or its value could not be computed.
    #[error("patch {patch:?}: definitions[{definition}].jsonPatches[{index}] ({op} {path}): {message}")]
    JsonPatch { patch: String, definition: usize, index: usize, op: String, path: String, message: String },
}

/// Applies one inline patch's definitions to the templates. As upstream, its `enabledIf` is
/// evaluated per template its definitions select, with that template's variables (so a
/// control plane template sees `builtin.controlPlane`, a worker's `builtin.machineDeployment`
/// or `builtin.machinePool`). On error the items may be partly patched: the caller discards
/// them.
pub fn apply_inline(patch: &ClusterClassPatch, items: &mut [Patchable<'_>]) -> Result<(), PatchError> {
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
    Ok(())
}

/// A patch without `enabledIf` is enabled; with one, only if it renders to `true`.
pub fn enabled(patch: &ClusterClassPatch, variables: &Map<String, Value>) -> Result<bool, PatchError> {
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

#[cfg(test)]
mod tests;
