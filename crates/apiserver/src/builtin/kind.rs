//! One row of the built-in kind tables: everything `kubectl api-resources`, discovery and
//! `kubectl get` need to know about a kind, turned into a [`ResourceDef`] at start-up.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use drydock_api::{PrinterColumn, ResourceDef, ScaleDef};
use serde_json::Value;

/// A printer column: (name, type, JSON path or `#computed`, priority). Priority 1 columns
/// are shown by `-o wide` only.
pub(super) type Col = (&'static str, &'static str, &'static str, i32);

/// The AGE column, for tables whose wide columns come after it.
pub(super) const AGE: Col = ("Age", "date", ".metadata.creationTimestamp", 0);

/// CONTAINERS, IMAGES and SELECTOR of `-o wide` for kinds with a pod template.
pub(super) const WORKLOAD_WIDE: [Col; 3] = [
    ("Containers", "string", "#containers:.spec.template.spec", 1),
    ("Images", "string", "#images:.spec.template.spec", 1),
    ("Selector", "string", "#selector:.spec.selector", 1),
];

/// A built-in kind served at one group/version.
#[derive(Clone, Copy)]
pub(super) struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    pub short: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub status: bool,
    /// `/scale` with `.spec.replicas`, `.status.replicas` and the label selector read from
    /// this path (an object selector is rendered in its string form).
    pub scale_selector: Option<&'static str>,
    pub columns: &'static [Col],
    pub verbs: Option<&'static [&'static str]>,
    /// Field selectors beyond metadata.name and metadata.namespace.
    pub selectable: &'static [&'static str],
    /// The kind's structural schema, from its k8s-openapi type.
    pub schema: fn() -> Value,
}

fn no_schema() -> Value {
    Value::Null
}

/// A namespaced kind with every verb and nothing else; rows override what differs.
pub(super) const BASE: Kind = Kind {
    group: "",
    version: "v1",
    kind: "",
    plural: "",
    namespaced: true,
    short: &[],
    categories: &[],
    status: false,
    scale_selector: None,
    columns: &[],
    verbs: None,
    selectable: &[],
    schema: no_schema,
};

/// Inline structural schema of a k8s-openapi type, for pruning and strict field validation.
pub(super) fn schema_of<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// Generated schemas, shared by every server of the process: generating the inline
/// schema of a pod-template kind takes a while and the result never changes.
static SCHEMAS: LazyLock<Mutex<HashMap<KindKey, Arc<Value>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// (group, version, kind).
type KindKey = (&'static str, &'static str, &'static str);

fn cached_schema(k: &Kind) -> Option<Arc<Value>> {
    let key = (k.group, k.version, k.kind);
    if let Some(s) = SCHEMAS.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Some(s);
    }
    let schema = (k.schema)();
    if schema.is_null() {
        return None;
    }
    let schema = Arc::new(schema);
    if let Ok(mut m) = SCHEMAS.lock() {
        m.insert(key, schema.clone());
    }
    Some(schema)
}

impl Kind {
    pub(super) fn def(&self) -> ResourceDef {
        let mut def = ResourceDef::new(self.group, self.version, self.kind, self.plural)
            .short_names(self.short)
            .categories(self.categories);
        def.namespaced = self.namespaced;
        def.status_subresource = self.status;
        if let Some(selector) = self.scale_selector {
            def.scale = Some(ScaleDef {
                spec_replicas_path: ".spec.replicas".into(),
                status_replicas_path: ".status.replicas".into(),
                label_selector_path: Some(selector.into()),
            });
        }
        def.printer_columns = self
            .columns
            .iter()
            .map(|(name, ty, path, priority)| PrinterColumn::new(name, ty, path).priority(*priority))
            .collect();
        if let Some(verbs) = self.verbs {
            def = def.verbs(verbs);
        }
        def = def.selectable(self.selectable);
        def.schema = cached_schema(self);
        def.admission = super::defaults::admission_for(self.group, self.kind);
        def
    }
}
