//! CEL `x-kubernetes-validations`: rules are compiled once with the schema, evaluated with
//! `self` (and `oldSelf` for transition rules) typed by the schema, within a cost budget
//! per object.

mod cost;
mod escape;
mod format;
mod kinds;
mod library;
mod value;

use std::sync::{Arc, LazyLock};

use cel::common::types::CelOptional;
use cel::{Context, Env, Program};
use drydock_api::{FieldError, FieldErrorKind};
use serde_json::{Map, Value};

pub use self::cost::{OBJECT_BUDGET, STATIC_LIMIT};
pub use self::value::to_cel;
use super::node::Node;
use super::path::Path;

/// Largest program accepted, in expression nodes: a guard against rules that are
/// expensive to hold and walk whatever their data.
const MAX_PROGRAM_NODES: f64 = 10_000.0;
/// Longest rule source, and deepest bracket nesting, accepted before parsing: the parser
/// and the interpreter recurse over the expression, so a pathological one must not reach
/// them.
const MAX_SOURCE: usize = 8 * 1024;
const MAX_NESTING: usize = 64;
/// Operator characters: each binary operator or selection can add a level to the parse
/// tree, so their count bounds how deep a chain like `a + a + ...` nests.
const MAX_OPERATORS: usize = 600;
/// Longest `messageExpression`, as kube-apiserver limits it.
const MAX_MESSAGE_EXPRESSION: usize = 5 * 1024;

/// The environment every rule compiles and runs in: standard CEL, the cel-go extensions
/// Kubernetes enables (strings, lists, math) and the Kubernetes library.
static ENV: LazyLock<Option<Arc<Env>>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings).ok()?;
    env.add_extension(cel::extensions::lists).ok()?;
    env.add_extension(cel::extensions::math).ok()?;
    library::extension(&mut env).ok()?;
    kinds::extension(&mut env).ok()?;
    format::extension(&mut env).ok()?;
    Some(Arc::new(env))
});

fn env() -> Result<&'static Arc<Env>, String> {
    ENV.as_ref().ok_or_else(|| "the CEL environment failed to initialise".to_string())
}

/// One compiled `x-kubernetes-validations` entry.
#[derive(Debug)]
pub struct Rule {
    pub source: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    reason: FieldErrorKind,
    /// `fieldPath`, split into property names.
    field_path: Vec<String>,
    /// Uses `oldSelf`: runs only on update with an old value (unless optional).
    pub transition: bool,
    optional_old_self: bool,
    shape: cost::Shape,
    /// Cost estimated from the schema's bounds, checked when a CRD is written.
    pub estimated_cost: f64,
    /// Where the rule sits in the schema, for CRD-write errors.
    pub at: String,
    /// The schema type failures name as their value (`Invalid value: "object"`).
    type_name: &'static str,
}

/// Compiles the rules of one schema node.
pub fn compile_rules(s: &Map<String, Value>, node: &Node, path: &Path<'_>, errors: &mut Vec<FieldError>) -> Vec<Rule> {
    let Some(list) = s.get("x-kubernetes-validations").and_then(Value::as_array) else { return Vec::new() };
    let base = path.child("x-kubernetes-validations");
    let cardinality = cost::max_cardinality(node);
    list.iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let at = base.index(i);
            match compile_rule(r, &at, cardinality, errors) {
                Ok(rule) => Some(Rule { type_name: node.type_name(), ..rule }),
                Err(e) => {
                    errors.push(e);
                    None
                }
            }
        })
        .collect()
}

fn compile_rule(r: &Value, at: &Path<'_>, cardinality: f64, errors: &mut Vec<FieldError>) -> Result<Rule, FieldError> {
    let env = env().map_err(|e| FieldError::new(FieldErrorKind::Invalid, at.render(), e))?;
    let rule_path = at.child("rule");
    let source = r.get("rule").and_then(Value::as_str).unwrap_or_default();
    if source.trim().is_empty() {
        return Err(FieldError::required(rule_path.render(), ""));
    }
    if let Err(why) = parseable(source) {
        return Err(FieldError::forbidden(rule_path.render(), why));
    }
    let program = env.compile(source).map_err(|e| {
        FieldError::invalid(rule_path.render(), source, format!("compilation failed: {}", one_line(&e.to_string())))
    })?;
    let refs = program.references();
    let transition = refs.has_variable("oldSelf");
    let shape = cost::Shape::of(program.expression());
    if shape.size() > MAX_PROGRAM_NODES {
        return Err(FieldError::forbidden(rule_path.render(), "the rule is too large to compile"));
    }
    let message = r.get("message").and_then(Value::as_str).map(str::to_string);
    check_message(source, message.as_deref(), at, errors);
    let message_expression = compile_message_expression(env, r, at, errors);
    let reason = reason(r, at, errors);
    let field_path = field_path(r, at, errors);
    let optional_old_self = r.get("optionalOldSelf").and_then(Value::as_bool).unwrap_or(false);
    if optional_old_self && !transition {
        errors.push(FieldError::invalid(
            at.child("optionalOldSelf").render(),
            true,
            "may not be set if rule does not use oldSelf",
        ));
    }
    Ok(Rule {
        source: source.to_string(),
        program,
        message,
        message_expression,
        reason,
        field_path,
        transition,
        optional_old_self,
        shape,
        estimated_cost: shape.cost(cardinality),
        at: rule_path.render(),
        type_name: "object",
    })
}

/// Refuses sources too long or too deeply nested to parse safely.
fn parseable(source: &str) -> Result<(), String> {
    if source.len() > MAX_SOURCE {
        return Err(format!("the rule is longer than {MAX_SOURCE} bytes"));
    }
    let mut depth = 0usize;
    let mut operators = 0usize;
    for b in source.bytes() {
        match b {
            b'+' | b'-' | b'*' | b'/' | b'%' | b'<' | b'>' | b'=' | b'!' | b'&' | b'|' | b'?' | b'.' => {
                operators += 1;
                if operators > MAX_OPERATORS {
                    return Err(format!("the rule has more than {MAX_OPERATORS} operators"));
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(format!("the rule nests deeper than {MAX_NESTING} levels"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn check_message(source: &str, message: Option<&str>, at: &Path<'_>, errors: &mut Vec<FieldError>) {
    match message {
        Some(m) if m.trim().is_empty() => {
            errors.push(FieldError::required(at.child("message").render(), "message must be non-empty if specified"));
        }
        Some(m) if m.contains('\n') => {
            errors.push(FieldError::invalid(at.child("message").render(), m, "message must not contain line breaks"))
        }
        None if source.contains('\n') => errors.push(FieldError::required(
            at.child("message").render(),
            "message must be specified if rule contains line break",
        )),
        _ => {}
    }
}

fn compile_message_expression(env: &Env, r: &Value, at: &Path<'_>, errors: &mut Vec<FieldError>) -> Option<Program> {
    let src = r.get("messageExpression").and_then(Value::as_str)?;
    let p = at.child("messageExpression");
    if src.len() > MAX_MESSAGE_EXPRESSION {
        errors.push(FieldError::new(
            FieldErrorKind::TooLong,
            p.render(),
            format!("may not be more than {MAX_MESSAGE_EXPRESSION} bytes"),
        ));
        return None;
    }
    if let Err(why) = parseable(src) {
        errors.push(FieldError::forbidden(p.render(), why));
        return None;
    }
    match env.compile(src) {
        Ok(program) => Some(program),
        Err(e) => {
            errors.push(FieldError::invalid(
                p.render(),
                src,
                format!("messageExpression compilation failed: {}", one_line(&e.to_string())),
            ));
            None
        }
    }
}

fn reason(r: &Value, at: &Path<'_>, errors: &mut Vec<FieldError>) -> FieldErrorKind {
    match r.get("reason").and_then(Value::as_str) {
        None | Some("FieldValueInvalid") => FieldErrorKind::Invalid,
        Some("FieldValueForbidden") => FieldErrorKind::Forbidden,
        Some("FieldValueRequired") => FieldErrorKind::Required,
        Some("FieldValueDuplicate") => FieldErrorKind::Duplicate,
        Some(other) => {
            errors.push(FieldError::not_supported(
                at.child("reason").render(),
                other,
                &["FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"],
            ));
            FieldErrorKind::Invalid
        }
    }
}

/// Parses `fieldPath` (`.a.b`, `.a['x.y']`) into property names.
fn field_path(r: &Value, at: &Path<'_>, errors: &mut Vec<FieldError>) -> Vec<String> {
    let Some(src) = r.get("fieldPath").and_then(Value::as_str) else { return Vec::new() };
    match parse_field_path(src) {
        Some(p) => p,
        None => {
            errors.push(FieldError::invalid(at.child("fieldPath").render(), src, "fieldPath must be a valid path"));
            Vec::new()
        }
    }
}

fn parse_field_path(src: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push(r[..end].to_string());
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            out.push(r[..end].to_string());
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// What evaluating rules found, and how much budget is left.
pub struct Eval<'o> {
    pub errors: &'o mut Vec<FieldError>,
    pub warnings: &'o mut Vec<String>,
    pub budget: f64,
    /// Set once the budget ran out: no further rule runs.
    pub exhausted: bool,
}

/// Runs the rules of `node` on `v` (`old`: the value in the stored object, on update).
pub fn run(node: &Node, v: &Value, old: Option<&Value>, path: &Path<'_>, resource: bool, e: &mut Eval<'_>) {
    if e.exhausted || node.rules.is_empty() {
        return;
    }
    let Ok(env) = env() else { return };
    let this = to_cel(Some(node), v, resource);
    let before = old.map(|o| to_cel(Some(node), o, resource));
    let mut ctx = Context::with_env(env.clone());
    let bound = bind(&mut ctx, "self", &this).and_then(|()| match &before {
        Some(b) => bind(&mut ctx, "oldSelf", b),
        None => Ok(()),
    });
    if let Err(msg) = bound {
        e.errors.push(FieldError::invalid(path.render(), node.type_name(), msg));
        return;
    }
    let cardinality = cost::runtime_cardinality(v);
    for rule in &node.rules {
        if rule.transition && before.is_none() && !rule.optional_old_self {
            continue;
        }
        let cost = rule.shape.cost(cardinality);
        if cost > e.budget {
            e.exhausted = true;
            e.errors.push(FieldError::invalid(
                path.render(),
                node.type_name(),
                "validation failed due to running out of cost budget, no further validation rules will be run",
            ));
            return;
        }
        e.budget -= cost;
        if cost > cost::CALL_LIMIT {
            e.errors.push(FieldError::invalid(
                path.render(),
                node.type_name(),
                format!("call cost exceeds limit for rule: {}", rule.source),
            ));
            continue;
        }
        let Some(failure) = evaluate(&ctx, rule, before.as_ref()) else { continue };
        // Ratcheting: a rule that failed on a value the update did not change is a warning.
        if !rule.transition && old.is_some_and(|o| o == v) {
            e.warnings.push(failure.into_error(path, rule).to_string());
        } else {
            e.errors.push(failure.into_error(path, rule));
        }
    }
}

fn bind(ctx: &mut Context<'_, '_>, name: &str, v: &cel::Value) -> Result<(), String> {
    let val: Box<dyn cel::common::value::Val> = v.clone().try_into().map_err(|e: cel::ExecutionError| e.to_string())?;
    ctx.add_variable_as_val(name, val);
    Ok(())
}

/// Runs one rule; `None` when it holds.
fn evaluate(ctx: &Context<'_, '_>, rule: &Rule, before: Option<&cel::Value>) -> Option<Failure> {
    let result = if rule.optional_old_self {
        // `oldSelf` is an optional here: present on update, `optional.none()` on create.
        let mut scope = ctx.new_inner_scope();
        let old = match before.map(|b| b.clone().try_into()) {
            Some(Ok(val)) => CelOptional::of(val),
            Some(Err(e)) => return Some(Failure::Error(e.to_string())),
            None => CelOptional::none(),
        };
        scope.add_variable_as_val("oldSelf", Box::new(old));
        rule.program.execute(&scope)
    } else {
        rule.program.execute(ctx)
    };
    match result {
        Ok(cel::Value::Bool(true)) => None,
        Ok(cel::Value::Bool(false)) => Some(Failure::Message(message(ctx, rule))),
        Ok(other) => Some(Failure::Error(format!("rule did not evaluate to a bool: {other:?}"))),
        Err(err) => Some(Failure::Error(err.to_string())),
    }
}

/// The failure text: `messageExpression` when it yields one line of text, else `message`,
/// else `failed rule: <rule>`.
fn message(ctx: &Context<'_, '_>, rule: &Rule) -> String {
    if let Some(expr) = &rule.message_expression
        && let Ok(cel::Value::String(s)) = expr.execute(ctx)
        && !s.trim().is_empty()
        && !s.contains('\n')
    {
        return s.to_string();
    }
    match &rule.message {
        Some(m) => m.clone(),
        None => format!("failed rule: {}", rule.source.trim()),
    }
}

/// Why a rule failed: its message, or an evaluation error.
enum Failure {
    Message(String),
    Error(String),
}

impl Failure {
    fn into_error(self, path: &Path<'_>, rule: &Rule) -> FieldError {
        let mut field = path.render();
        for p in &rule.field_path {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(p);
        }
        match self {
            Failure::Error(msg) => FieldError::invalid(field, rule.type_name, msg),
            Failure::Message(msg) => match rule.reason {
                FieldErrorKind::Forbidden => FieldError::forbidden(field, msg),
                FieldErrorKind::Required => FieldError::required(field, msg),
                FieldErrorKind::Duplicate => FieldError::new(FieldErrorKind::Duplicate, field, msg),
                _ => FieldError::invalid(field, rule.type_name, msg),
            },
        }
    }
}
