//! Keyword checks of one value against its node (type, enum, format, pattern, bounds,
//! lengths, counts, junctors), worded as kube-apiserver words OpenAPI failures.

use drydock_api::{FieldError, FieldErrorKind};
use serde_json::Value;

use super::formats;
use super::node::{Checks, Node, Type};
use super::path::Path;

/// JSON type names as OpenAPI calls them.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Integers, including floats without a fraction (`2.0`), as kube-openapi accepts them.
fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.is_finite())
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

pub fn type_error(path: &str, v: &Value, want: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TypeInvalid,
        field: path.to_string(),
        value: Some(Value::String(json_type(v).to_string())),
        detail: format!("{path} in body must be of type {want}: {}", shown(v)),
    }
}

/// Checks `v` against `node`'s keywords. Returns false when the type is wrong, so the walk
/// does not descend into a value of the wrong shape.
pub fn value(node: &Node, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) -> bool {
    if v.is_null() && node.nullable {
        return true;
    }
    if !type_ok(node, v) {
        let want = if node.int_or_string { "integer or string" } else { node.ty.map_or("object", Type::name) };
        errors.push(type_error(&path.render(), v, want));
        return false;
    }
    if let Some(c) = &node.checks {
        checks(c, v, path, errors);
    }
    true
}

fn type_ok(node: &Node, v: &Value) -> bool {
    if node.int_or_string {
        return matches!(json_type(v), "integer" | "string");
    }
    match (node.ty, v) {
        (None, _) => true,
        (Some(Type::Object), Value::Object(_))
        | (Some(Type::Array), Value::Array(_))
        | (Some(Type::String), Value::String(_))
        | (Some(Type::Boolean), Value::Bool(_))
        | (Some(Type::Number), Value::Number(_)) => true,
        (Some(Type::Integer), Value::Number(n)) => is_integer(n),
        _ => false,
    }
}

fn checks(c: &Checks, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if let Some(allowed) = &c.enumeration
        && !allowed.contains(v)
    {
        let names: Vec<String> = allowed.iter().map(|a| a.as_str().map_or(a.to_string(), str::to_string)).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        errors.push(FieldError::not_supported(path.render(), v.clone(), &refs));
    }
    match v {
        Value::Number(n) => number(c, n.as_f64().unwrap_or(0.0), v, path, errors),
        Value::String(s) => string(c, s, v, path, errors),
        Value::Array(items) => counts(c.max_items, c.min_items, items.len(), "items", v, path, errors),
        Value::Object(map) => counts(c.max_properties, c.min_properties, map.len(), "properties", v, path, errors),
        _ => {}
    }
    junctors(c, v, path, errors);
}

fn number(c: &Checks, n: f64, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let mut fail = |detail: String| {
        let p = path.render();
        errors.push(FieldError::invalid(p.clone(), v.clone(), format!("{p} in body {detail}")));
    };
    if let Some(max) = c.maximum {
        if c.exclusive_maximum && n >= max {
            fail(format!("should be less than {}", fmt_num(max)));
        } else if n > max {
            fail(format!("should be less than or equal to {}", fmt_num(max)));
        }
    }
    if let Some(min) = c.minimum {
        if c.exclusive_minimum && n <= min {
            fail(format!("should be greater than {}", fmt_num(min)));
        } else if n < min {
            fail(format!("should be greater than or equal to {}", fmt_num(min)));
        }
    }
    if let Some(m) = c.multiple_of
        && m > 0.0
    {
        let q = n / m;
        if (q - q.round()).abs() > 1e-9 {
            fail(format!("should be a multiple of {}", fmt_num(m)));
        }
    }
}

/// `10` rather than `10.0` for whole bounds, as Go prints them.
fn fmt_num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 { format!("{}", f as i64) } else { f.to_string() }
}

fn string(c: &Checks, s: &str, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let needs_len = c.max_length.is_some() || c.min_length.is_some();
    let chars = if needs_len { s.chars().count() as u64 } else { 0 };
    if let Some(max) = c.max_length
        && chars > max
    {
        errors.push(FieldError::new(
            FieldErrorKind::TooLong,
            path.render(),
            format!("may not be more than {max} bytes"),
        ));
    }
    if let Some(min) = c.min_length
        && chars < min
    {
        let p = path.render();
        errors.push(FieldError::invalid(
            p.clone(),
            v.clone(),
            format!("{p} in body should be at least {min} chars long"),
        ));
    }
    if let Some((src, re)) = &c.pattern
        && !re.is_match(s)
    {
        let p = path.render();
        errors.push(FieldError::invalid(p.clone(), v.clone(), format!("{p} in body should match '{src}'")));
    }
    if let Some(f) = &c.format
        && !formats::valid(f, s)
    {
        let p = path.render();
        errors.push(FieldError::invalid(p.clone(), v.clone(), format!("{p} in body must be of type {f}: \"{s}\"")));
    }
}

fn counts(
    max: Option<u64>,
    min: Option<u64>,
    len: usize,
    what: &str,
    v: &Value,
    path: &Path<'_>,
    errors: &mut Vec<FieldError>,
) {
    let len = len as u64;
    if let Some(max) = max
        && len > max
    {
        errors.push(FieldError {
            kind: FieldErrorKind::TooMany,
            field: path.render(),
            value: Some(Value::from(len)),
            detail: format!("must have at most {max} items"),
        });
    }
    if let Some(min) = min
        && len < min
    {
        let p = path.render();
        errors.push(FieldError::invalid(
            p.clone(),
            v.clone(),
            format!("{p} in body should have at least {min} {what}"),
        ));
    }
}

/// Whether `v` passes `node` entirely (junctor branches are checked all the way down).
fn passes(node: &Node, v: &Value, path: &Path<'_>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if value(node, v, path, &mut errors) {
        match v {
            Value::Object(map) => {
                for (k, child_v) in map {
                    if let Some(child) = node.child(k) {
                        errors.extend(passes(child, child_v, &path.child(k)));
                    }
                }
                for r in &node.required {
                    if !map.contains_key(r) {
                        errors.push(FieldError::required(path.child(r).render(), ""));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &node.items {
                    for (i, v) in items.iter().enumerate() {
                        errors.extend(passes(item, v, &path.index(i)));
                    }
                }
            }
            _ => {}
        }
    }
    errors
}

fn junctors(c: &Checks, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    for sub in &c.all_of {
        errors.extend(passes(sub, v, path));
    }
    let summary = |errors: &mut Vec<FieldError>, what: &str| {
        let p = path.render();
        errors.push(FieldError::invalid(p.clone(), v.clone(), format!("{p} in body {what}")));
    };
    if !c.any_of.is_empty() {
        let results: Vec<Vec<FieldError>> = c.any_of.iter().map(|s| passes(s, v, path)).collect();
        if results.iter().all(|r| !r.is_empty()) {
            errors.extend(results.into_iter().flatten());
            summary(errors, "must validate at least one schema (anyOf)");
        }
    }
    if !c.one_of.is_empty() {
        let results: Vec<Vec<FieldError>> = c.one_of.iter().map(|s| passes(s, v, path)).collect();
        let ok = results.iter().filter(|r| r.is_empty()).count();
        if ok == 0 {
            errors.extend(results.into_iter().flatten());
        }
        if ok != 1 {
            summary(errors, "must validate one and only one schema (oneOf)");
        }
    }
    if let Some(not) = &c.not
        && passes(not, v, path).is_empty()
    {
        summary(errors, "must not validate the schema (not)");
    }
}
