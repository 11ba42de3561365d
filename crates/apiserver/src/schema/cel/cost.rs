//! Cost guards for CEL rules. The interpreter counts nothing, so cost is derived from the
//! program's shape: every expression node costs one, and the body of a comprehension
//! (`all`, `exists`, `map`, `filter`, ...) costs once per element. Statically the element
//! count is the schema's bound (`maxItems`, `maxProperties`, `maxLength`) or what fits in a
//! request; at run time it is the size of the value the rule sees.

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value;

use crate::schema::node::{Additional, Node, Type};

/// Most a single rule may be estimated to cost (kube-apiserver's `StaticEstimatedCostLimit`).
pub const STATIC_LIMIT: f64 = 10_000_000.0;
/// Most one evaluation may cost (the per-call limit).
pub const CALL_LIMIT: f64 = 1_000_000.0;
/// Most all the rules of one object may cost together.
pub const OBJECT_BUDGET: f64 = 10_000_000.0;
/// Largest request body, from which unbounded collections are estimated.
const MAX_REQUEST_BYTES: f64 = 3.0 * 1024.0 * 1024.0;

/// The shape of a program that cost depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shape {
    /// Expression nodes outside any comprehension body.
    pub flat: f64,
    /// Nodes per nesting level of comprehension bodies: `nested[0]` run once per element,
    /// `nested[1]` once per element of an element, ...
    pub nested: [f64; 4],
}

impl Shape {
    pub fn of(expr: &IdedExpr) -> Shape {
        let mut s = Shape::default();
        walk(expr, 0, &mut s);
        s
    }

    /// Total nodes, for the size guard.
    pub fn size(&self) -> f64 {
        self.flat + self.nested.iter().sum::<f64>()
    }

    /// Cost when comprehensions iterate over `n` elements at each level.
    pub fn cost(&self, n: f64) -> f64 {
        let mut total = self.flat;
        let mut per = 1.0;
        for level in self.nested {
            per *= n.max(1.0);
            total += level * per;
        }
        total
    }
}

fn walk(e: &IdedExpr, depth: usize, s: &mut Shape) {
    match depth {
        0 => s.flat += 1.0,
        d => s.nested[(d - 1).min(3)] += 1.0,
    }
    match &e.expr {
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                walk(t, depth, s);
            }
            for a in &c.args {
                walk(a, depth, s);
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, depth, s);
            walk(&c.accu_init, depth, s);
            walk(&c.loop_cond, depth + 1, s);
            walk(&c.loop_step, depth + 1, s);
            walk(&c.result, depth, s);
        }
        Expr::List(l) => l.elements.iter().for_each(|x| walk(x, depth, s)),
        Expr::Map(m) => m.entries.iter().for_each(|x| entry(&x.expr, depth, s)),
        Expr::Struct(st) => st.entries.iter().for_each(|x| entry(&x.expr, depth, s)),
        Expr::Select(sel) => walk(&sel.operand, depth, s),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn entry(e: &EntryExpr, depth: usize, s: &mut Shape) {
    match e {
        EntryExpr::StructField(f) => walk(&f.value, depth, s),
        EntryExpr::MapEntry(m) => {
            walk(&m.key, depth, s);
            walk(&m.value, depth, s);
        }
    }
}

/// The most elements a comprehension over the value at `node` (or below it) may see.
pub fn max_cardinality(node: &Node) -> f64 {
    let own = match node.ty {
        Some(Type::Array) => node
            .checks
            .as_ref()
            .and_then(|c| c.max_items)
            .map_or_else(|| MAX_REQUEST_BYTES / min_size(node.items.as_deref()), |m| m as f64),
        Some(Type::Object) if matches!(node.additional, Additional::Schema(_)) || node.preserve_unknown => {
            node.checks.as_ref().and_then(|c| c.max_properties).map_or(MAX_REQUEST_BYTES / 4.0, |m| m as f64)
        }
        Some(Type::String) => node.checks.as_ref().and_then(|c| c.max_length).map_or(MAX_REQUEST_BYTES, |m| m as f64),
        _ => 1.0,
    };
    let mut children = node.properties.iter().map(|(_, n)| max_cardinality(n)).fold(own, f64::max);
    if let Some(i) = &node.items {
        children = children.max(max_cardinality(i));
    }
    if let Additional::Schema(a) = &node.additional {
        children = children.max(max_cardinality(a));
    }
    children
}

/// The smallest serialized size of a list item (`"",` for strings, `{},` for objects).
fn min_size(item: Option<&Node>) -> f64 {
    match item.and_then(|n| n.ty) {
        Some(Type::Integer | Type::Number | Type::Boolean) => 2.0,
        _ => 3.0,
    }
}

/// The most elements a comprehension over `v` (or anything in it) iterates at run time.
pub fn runtime_cardinality(v: &Value) -> f64 {
    match v {
        Value::Array(a) => a.iter().map(runtime_cardinality).fold(a.len() as f64, f64::max),
        Value::Object(m) => m.values().map(runtime_cardinality).fold(m.len() as f64, f64::max),
        Value::String(s) => s.len() as f64,
        _ => 1.0,
    }
}
