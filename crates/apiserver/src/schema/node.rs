//! A schema compiled once into a tree of [`Node`]s: property lookups are binary searches,
//! patterns are compiled regexes, defaults are pre-pruned, and each node knows whether
//! anything below it needs a walk (defaults, required fields, CEL rules), so a write only
//! visits what the schema can act on.

use drydock_api::FieldError;
use regex::Regex;
use serde_json::{Map, Value};

use super::cel::Rule;
use super::path::Path;

/// The `type` of a schema node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }
}

/// `x-kubernetes-list-type`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ListType {
    #[default]
    Atomic,
    Set,
    Map(Vec<String>),
}

/// What may appear besides the declared properties.
#[derive(Debug, Default)]
pub enum Additional {
    /// Nothing: unknown fields are pruned.
    #[default]
    None,
    /// Anything, kept as is (`additionalProperties: true`, preserve-unknown-fields).
    Any,
    /// Every other key's value follows this schema (a map).
    Schema(Box<Node>),
}

/// Value checks beyond type, kept out of line: most nodes have none.
#[derive(Debug, Default)]
pub struct Checks {
    pub enumeration: Option<Vec<Value>>,
    pub format: Option<String>,
    pub pattern: Option<(String, Regex)>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub max_items: Option<u64>,
    pub min_items: Option<u64>,
    pub max_properties: Option<u64>,
    pub min_properties: Option<u64>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
}

/// One compiled schema node.
#[derive(Debug, Default)]
pub struct Node {
    pub ty: Option<Type>,
    pub nullable: bool,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded: bool,
    /// Declared properties, sorted by name.
    pub properties: Vec<(String, Node)>,
    pub additional: Additional,
    pub items: Option<Box<Node>>,
    pub default: Option<Value>,
    pub required: Vec<String>,
    pub list_type: ListType,
    pub checks: Option<Box<Checks>>,
    pub rules: Vec<Rule>,
    /// Some property of this node has a default.
    pub defaults_here: bool,
    /// Defaults apply somewhere at or below this node.
    pub has_defaults: bool,
    /// Required fields or CEL rules somewhere at or below this node.
    pub has_late_checks: bool,
    /// CEL rules somewhere at or below this node.
    pub has_rules: bool,
}

impl Node {
    /// The declared property `name`.
    pub fn property(&self, name: &str) -> Option<&Node> {
        self.properties.binary_search_by(|(k, _)| k.as_str().cmp(name)).ok().map(|i| &self.properties[i].1)
    }

    /// The schema of `name`'s value: a declared property or the map's value schema.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.property(name).or(self.values())
    }

    /// The schema of a map's values (`additionalProperties` with a schema).
    pub fn values(&self) -> Option<&Node> {
        match &self.additional {
            Additional::Schema(s) => Some(s),
            _ => None,
        }
    }

    /// Whether unknown keys are kept.
    pub fn keeps_unknown(&self) -> bool {
        self.preserve_unknown || matches!(self.additional, Additional::Any)
    }

    /// The type name CEL failures and type errors report.
    pub fn type_name(&self) -> &'static str {
        match self.ty {
            Some(t) => t.name(),
            None if self.int_or_string => "integer-or-string",
            None => "object",
        }
    }
}

/// Compiles schema JSON into nodes, collecting every problem with its path.
pub struct Compiler<'e> {
    pub errors: &'e mut Vec<FieldError>,
    /// Builds CEL programs; off for the nodes of junctors, which carry no rules.
    pub with_rules: bool,
    /// Treats `type: object` without properties as free-form, as the schemas generated from
    /// the built-in types mean it (RawExtension, FieldsV1); CRDs prune such objects empty.
    pub free_form_objects: bool,
}

fn flag(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn num(s: &Map<String, Value>, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

fn count(s: &Map<String, Value>, key: &str) -> Option<u64> {
    s.get(key).and_then(|v| v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)))
}

/// The schema's type, reading schemars' `["string", "null"]` as a nullable string.
fn parse_type(s: &Map<String, Value>) -> (Option<Type>, bool) {
    match s.get("type") {
        Some(Value::String(t)) => (Type::parse(t), false),
        Some(Value::Array(ts)) => {
            let null = ts.iter().any(|t| t == "null");
            (ts.iter().filter_map(Value::as_str).find_map(Type::parse), null)
        }
        _ => (None, false),
    }
}

impl Compiler<'_> {
    pub fn node(&mut self, schema: &Value, path: &Path<'_>) -> Node {
        let Value::Object(s) = schema else { return Node::default() };
        let (ty, null_type) = parse_type(s);
        let mut node = Node {
            ty,
            nullable: flag(s, "nullable") || null_type,
            int_or_string: flag(s, "x-kubernetes-int-or-string"),
            preserve_unknown: flag(s, "x-kubernetes-preserve-unknown-fields"),
            embedded: flag(s, "x-kubernetes-embedded-resource"),
            required: s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            list_type: list_type(s),
            ..Node::default()
        };
        if let Some(Value::Object(props)) = s.get("properties") {
            let props_path = path.child("properties");
            let mut out: Vec<(String, Node)> =
                props.iter().map(|(k, v)| (k.clone(), self.node(v, &props_path.key(k)))).collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            node.properties = out;
        }
        node.additional = match s.get("additionalProperties") {
            Some(Value::Bool(true)) => Additional::Any,
            Some(a @ Value::Object(_)) => {
                Additional::Schema(Box::new(self.node(a, &path.child("additionalProperties"))))
            }
            _ => Additional::None,
        };
        if let Some(items) = s.get("items").filter(|i| i.is_object()) {
            node.items = Some(Box::new(self.node(items, &path.child("items"))));
        }
        node.checks = self.checks(s, path);
        if self.with_rules {
            node.rules = super::cel::compile_rules(s, &node, path, self.errors);
        }
        if self.free_form_objects
            && node.ty == Some(Type::Object)
            && node.properties.is_empty()
            && matches!(node.additional, Additional::None)
        {
            node.preserve_unknown = true;
        }
        // Flags first: pre-pruning the default walks this node.
        node.summarise();
        self.defaults(s, &mut node);
        node
    }

    fn checks(&mut self, s: &Map<String, Value>, path: &Path<'_>) -> Option<Box<Checks>> {
        let mut c = Checks {
            enumeration: s.get("enum").and_then(Value::as_array).cloned(),
            format: s.get("format").and_then(Value::as_str).map(str::to_string),
            maximum: num(s, "maximum"),
            exclusive_maximum: flag(s, "exclusiveMaximum"),
            minimum: num(s, "minimum"),
            exclusive_minimum: flag(s, "exclusiveMinimum"),
            multiple_of: num(s, "multipleOf"),
            max_length: count(s, "maxLength"),
            min_length: count(s, "minLength"),
            max_items: count(s, "maxItems"),
            min_items: count(s, "minItems"),
            max_properties: count(s, "maxProperties"),
            min_properties: count(s, "minProperties"),
            ..Checks::default()
        };
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            match Regex::new(p) {
                Ok(re) => c.pattern = Some((p.to_string(), re)),
                Err(e) => self.errors.push(FieldError::invalid(
                    path.child("pattern").render(),
                    p,
                    format!("must be a valid regular expression, but isn't: {e}"),
                )),
            }
        }
        let mut junctor =
            Compiler { errors: self.errors, with_rules: false, free_form_objects: self.free_form_objects };
        for (key, out) in [("allOf", &mut c.all_of), ("anyOf", &mut c.any_of), ("oneOf", &mut c.one_of)] {
            if let Some(list) = s.get(key).and_then(Value::as_array) {
                let p = path.child(key);
                *out = list.iter().enumerate().map(|(i, sub)| junctor.node(sub, &p.index(i))).collect();
            }
        }
        if let Some(n) = s.get("not").filter(|n| n.is_object()) {
            c.not = Some(Box::new(junctor.node(n, &path.child("not"))));
        }
        let empty = c.enumeration.is_none()
            && c.format.is_none()
            && c.pattern.is_none()
            && c.maximum.is_none()
            && c.minimum.is_none()
            && c.multiple_of.is_none()
            && c.max_length.is_none()
            && c.min_length.is_none()
            && c.max_items.is_none()
            && c.min_items.is_none()
            && c.max_properties.is_none()
            && c.min_properties.is_none()
            && c.all_of.is_empty()
            && c.any_of.is_empty()
            && c.one_of.is_empty()
            && c.not.is_none();
        if empty { None } else { Some(Box::new(c)) }
    }

    /// Records each default, pruned and defaulted by its own schema, so applying one is a clone.
    fn defaults(&mut self, s: &Map<String, Value>, node: &mut Node) {
        if let Some(d) = s.get("default").filter(|d| !d.is_null()) {
            let mut d = d.clone();
            super::prune::prune_default(node, &mut d);
            node.default = Some(d);
        }
    }
}

impl Node {
    /// Derives the subtree flags from the children.
    fn summarise(&mut self) {
        let mut children: Vec<&Node> = self.properties.iter().map(|(_, n)| n).collect();
        if let Additional::Schema(a) = &self.additional {
            children.push(a);
        }
        if let Some(i) = &self.items {
            children.push(i);
        }
        self.defaults_here = self.properties.iter().any(|(_, n)| n.default.is_some());
        self.has_defaults = self.defaults_here || children.iter().any(|c| c.has_defaults);
        self.has_rules = !self.rules.is_empty() || children.iter().any(|c| c.has_rules);
        self.has_late_checks =
            self.has_rules || !self.required.is_empty() || children.iter().any(|c| c.has_late_checks);
    }
}

fn list_type(s: &Map<String, Value>) -> ListType {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(
            s.get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
        ),
        _ => ListType::Atomic,
    }
}
