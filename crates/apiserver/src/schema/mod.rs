//! OpenAPI v3 schema processing of objects, as kube-apiserver applies a CRD's structural
//! schema: unknown fields pruned (reported under `fieldValidation=Strict`/`Warn`), nulls of
//! non-nullable fields dropped, defaults applied, every value checked against its
//! keywords; after admission, required fields and CEL `x-kubernetes-validations`.
//!
//! A [`Validator`] is compiled once per served version (regexes, CEL programs, defaults,
//! and flags saying which subtrees need a walk), so a write parses nothing.

mod ascending;
mod cel;
mod formats;
mod late;
mod list_types;
mod meta;
mod node;
mod path;
mod prune;
mod structural;
mod validate;

use std::sync::{Arc, LazyLock};

use drydock_api::{FieldError, FieldErrorKind, ResourceDef};
use serde_json::Value;

use self::node::{Compiler, Node};
use self::path::Path;
use self::prune::Walk;
pub use self::structural::check_crd_schema;

/// A compiled schema.
pub struct Validator {
    root: Node,
    schema: Arc<Value>,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("has_defaults", &self.has_defaults())
            .field("has_rules", &self.has_rules())
            .finish_non_exhaustive()
    }
}

/// What the write-time walk found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Paths of fields the schema does not know (already removed from the object).
    pub unknown: Vec<String>,
    /// Type, format, bound, enum and list-type violations.
    pub errors: Vec<FieldError>,
}

/// What validation after admission found.
#[derive(Debug, Default)]
pub struct Report {
    pub errors: Vec<FieldError>,
    /// Failures on values an update left unchanged (ratcheting), for `Warning` headers.
    pub warnings: Vec<String>,
}

/// Objects of kinds without a schema: only their metadata is checked.
static SCHEMALESS: LazyLock<Validator> =
    LazyLock::new(|| Validator { root: Node::default(), schema: Arc::new(Value::Null) });

impl Validator {
    /// Compiles a CRD version's `openAPIV3Schema`.
    pub fn compile(schema: Arc<Value>) -> Result<Validator, Vec<FieldError>> {
        Self::compile_with(schema, false)
    }

    /// Compiles a schema generated from a built-in type, where `type: object` without
    /// properties means free-form (RawExtension, FieldsV1), not "prune everything".
    pub fn compile_builtin(schema: Arc<Value>) -> Result<Validator, Vec<FieldError>> {
        Self::compile_with(schema, true)
    }

    fn compile_with(schema: Arc<Value>, free_form_objects: bool) -> Result<Validator, Vec<FieldError>> {
        let mut errors = Vec::new();
        let root = Compiler { errors: &mut errors, with_rules: true, free_form_objects }.node(&schema, &Path::ROOT);
        if errors.is_empty() { Ok(Validator { root, schema }) } else { Err(errors) }
    }

    /// The validator of a registered kind: built-in groups (no dot, or `*.k8s.io`) have
    /// generated schemas, every other group a CRD's.
    pub fn for_def(def: &ResourceDef) -> anyhow::Result<Option<Arc<Validator>>> {
        let Some(schema) = &def.schema else { return Ok(None) };
        let builtin = !def.group.contains('.') || def.group.ends_with(".k8s.io");
        let compiled = if builtin { Self::compile_builtin(schema.clone()) } else { Self::compile(schema.clone()) };
        match compiled {
            Ok(v) => Ok(Some(Arc::new(v))),
            Err(errs) => {
                let list: Vec<String> = errs.iter().map(ToString::to_string).collect();
                anyhow::bail!("schema of {}/{} {}: {}", def.group, def.version, def.kind, list.join(", "))
            }
        }
    }

    /// The validator for a kind that may have none.
    pub fn or_schemaless(v: Option<&Arc<Validator>>) -> &Validator {
        v.map_or(&*SCHEMALESS, |v| v)
    }

    pub fn schema(&self) -> &Arc<Value> {
        &self.schema
    }

    /// Whether the schema declares any default.
    pub fn has_defaults(&self) -> bool {
        self.root.has_defaults
    }

    /// Whether the schema carries CEL rules.
    pub fn has_rules(&self) -> bool {
        self.root.has_rules
    }

    /// Whether the root keeps fields it does not declare.
    pub fn preserves_unknown(&self) -> bool {
        self.root.keeps_unknown()
    }

    /// The write-time walk: prunes, drops disallowed nulls, defaults and checks keywords
    /// (`old`: the stored object on update; failures on values it holds unchanged are
    /// not reported).
    pub fn process(&self, obj: &mut Value, old: Option<&Value>) -> Outcome {
        self.process_apart(obj, old, &[])
    }

    /// [`Validator::process`] of an object whose top-level members named in `apart` are
    /// left out: unchanged from `old` and kept as stored, so neither walked nor defaulted.
    /// Only for a schema that [`Validator::walks_apart`] them.
    pub fn process_apart(&self, obj: &mut Value, old: Option<&Value>, apart: &[&str]) -> Outcome {
        let mut out = Outcome::default();
        let Value::Object(map) = obj else {
            out.errors.push(FieldError::new(FieldErrorKind::TypeInvalid, "", "object must be a JSON object"));
            return out;
        };
        let mut w = Walk { unknown: &mut out.unknown, errors: &mut out.errors, validate: true };
        prune::walk_object(&self.root, map, old.and_then(Value::as_object), &Path::ROOT, &mut w, true, apart);
        out
    }

    /// Validation after admission: required fields and CEL rules (`old`: the stored object
    /// on update, for transition rules and ratcheting).
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Report {
        self.validate_apart(obj, old, &[])
    }

    /// [`Validator::validate`] of an object with members left out, as
    /// [`Validator::process_apart`].
    pub fn validate_apart(&self, obj: &Value, old: Option<&Value>, apart: &[&str]) -> Report {
        let mut r = Report::default();
        if self.root.has_late_checks {
            late::run(&self.root, (obj, apart), old, &mut r);
        }
        r
    }

    /// Whether an object's top-level member `key`, unchanged, may be left out of the walks
    /// ([`Validator::process_apart`]): the schema declares it (the walk would prune it
    /// otherwise) and no rule of the root sees the whole object.
    pub fn walks_apart(&self, key: &str) -> bool {
        self.root.rules.is_empty() && (self.root.property(key).is_some() || self.root.keeps_unknown())
    }
}

/// Applies defaults only, as reads from storage do (nothing is pruned or checked).
pub fn default_object(v: &Validator, obj: &mut Value) {
    default_object_apart(v, obj, &[]);
}

/// [`default_object`] of an object whose top-level members named in `apart` are left out
/// (kept as stored): they are not defaulted.
pub fn default_object_apart(v: &Validator, obj: &mut Value, apart: &[&str]) {
    prune::default_only_apart(&v.root, obj, true, apart);
}

#[cfg(test)]
mod tests;

/// The problems of a lone value (a ClusterClass variable's) against an `openAPIV3Schema`,
/// reported under `path`: the value is checked as the one property of an object, with
/// fields the schema does not declare refused (as upstream's variable validation does,
/// rather than pruned).
pub fn check_value(schema: &Value, value: &Value, path: &drydock_api::admission::FieldPath) -> Vec<FieldError> {
    let wrapped = serde_json::json!({"type": "object", "properties": {"value": schema}});
    let rebase = |field: &str| format!("{}{}", path.as_str(), field.strip_prefix("value").unwrap_or(field));
    let validator = match Validator::compile(Arc::new(wrapped)) {
        Ok(v) => v,
        Err(errs) => {
            return errs
                .into_iter()
                .map(|e| {
                    FieldError::new(
                        FieldErrorKind::Invalid,
                        path.as_str(),
                        format!("the variable's schema is invalid: {e}"),
                    )
                })
                .collect();
        }
    };
    let mut obj = serde_json::json!({ "value": value });
    let outcome = validator.process(&mut obj, None);
    let mut errors: Vec<FieldError> = outcome.errors;
    errors.extend(
        outcome
            .unknown
            .iter()
            .map(|u| FieldError::new(FieldErrorKind::Invalid, u.as_str(), "field not declared in the schema")),
    );
    errors.extend(validator.validate(&obj, None).errors);
    for e in &mut errors {
        e.field = rebase(&e.field);
    }
    errors
}
