//! The Kubernetes CEL library functions CRD rules use that the `cel` crate lacks:
//! `lists` (isSorted, sum, min, max, indexOf, lastIndexOf), `regex` (find, findAll),
//! `isURL`, `isIP`, `isCIDR` and `isQuantity` (the `url`, `quantity` and `semver` values
//! are in `kinds`, the `format` library in `format`).

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};
use regex::Regex;

use crate::schema::formats;

pub(super) type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
pub(super) type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_isSorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload("indexOf", "list_indexOf", LIST_TYPE, vec![DYN_TYPE], index_of)?;
    env.add_member_overload("lastIndexOf", "list_lastIndexOf", LIST_TYPE, vec![DYN_TYPE], last_index_of)?;
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload("findAll", "string_findAll", STRING_TYPE, vec![STRING_TYPE], find_all)?;
    env.add_member_overload("findAll", "string_findAll_n", STRING_TYPE, vec![STRING_TYPE, INT_TYPE], find_all_n)?;
    env.add_overload("isURL", "isURL_string", vec![STRING_TYPE], is_url)?;
    env.add_overload("isIP", "isIP_string", vec![STRING_TYPE], is_ip)?;
    env.add_overload("isCIDR", "isCIDR_string", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("isQuantity", "isQuantity_string", vec![STRING_TYPE], is_quantity)?;
    Ok(())
}

pub(super) fn values(args: Args<'_, '_>) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(a.as_ref())).collect()
}

pub(super) fn out<'b, 'v>(v: Value) -> Out<'b, 'v> {
    let boxed: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::Owned(boxed))
}

pub(super) fn fail(function: &str, message: &str) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

fn list_arg(function: &str, v: &Value) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(l) => Ok(l.clone()),
        _ => Err(fail(function, "receiver is not a list")),
    }
}

pub(super) fn string_arg<'a>(function: &str, v: &'a Value) -> Result<&'a str, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.as_str()),
        _ => Err(fail(function, "argument is not a string")),
    }
}

fn compare(function: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b).ok_or_else(|| fail(function, "list elements are not comparable"))
}

fn is_sorted<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let list = list_arg("isSorted", &v[0])?;
    for w in list.windows(2) {
        if compare("isSorted", &w[0], &w[1])? == Ordering::Greater {
            return out(Value::Bool(false));
        }
    }
    out(Value::Bool(true))
}

fn sum<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let list = list_arg("sum", &v[0])?;
    let total = match list.first() {
        None | Some(Value::Int(_)) => {
            let mut t: i64 = 0;
            for x in list.iter() {
                let Value::Int(i) = x else { return Err(fail("sum", "mixed element types")) };
                t = t.checked_add(*i).ok_or_else(|| fail("sum", "integer overflow"))?;
            }
            Value::Int(t)
        }
        Some(Value::UInt(_)) => {
            let mut t: u64 = 0;
            for x in list.iter() {
                let Value::UInt(i) = x else { return Err(fail("sum", "mixed element types")) };
                t = t.checked_add(*i).ok_or_else(|| fail("sum", "integer overflow"))?;
            }
            Value::UInt(t)
        }
        Some(Value::Float(_)) => {
            let mut t = 0.0;
            for x in list.iter() {
                let Value::Float(f) = x else { return Err(fail("sum", "mixed element types")) };
                t += f;
            }
            Value::Float(t)
        }
        Some(Value::Duration(_)) => {
            let mut t = chrono::Duration::zero();
            for x in list.iter() {
                let Value::Duration(d) = x else { return Err(fail("sum", "mixed element types")) };
                t += *d;
            }
            Value::Duration(t)
        }
        Some(_) => return Err(fail("sum", "elements cannot be summed")),
    };
    out(total)
}

fn extreme<'b, 'v>(args: Args<'b, 'v>, function: &str, want: Ordering) -> Out<'b, 'v> {
    let v = values(args)?;
    let list = list_arg(function, &v[0])?;
    let mut best = list.first().ok_or_else(|| fail(function, "list is empty"))?;
    for x in list.iter().skip(1) {
        if compare(function, x, best)? == want {
            best = x;
        }
    }
    out(best.clone())
}

fn min<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(args, "max", Ordering::Greater)
}

fn index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let list = list_arg("indexOf", &v[0])?;
    let i = list.iter().position(|x| *x == v[1]).map_or(-1, |i| i as i64);
    out(Value::Int(i))
}

fn last_index_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let list = list_arg("lastIndexOf", &v[0])?;
    let i = list.iter().rposition(|x| *x == v[1]).map_or(-1, |i| i as i64);
    out(Value::Int(i))
}

/// Compiled patterns of `find`/`findAll`: rules use a handful of constant patterns, so
/// each is compiled once (the cache is bounded).
static PATTERNS: LazyLock<parking_lot::Mutex<std::collections::HashMap<String, Regex>>> =
    LazyLock::new(Default::default);

fn pattern(function: &str, src: &str) -> Result<Regex, ExecutionError> {
    let mut cache = PATTERNS.lock();
    if let Some(re) = cache.get(src) {
        return Ok(re.clone());
    }
    let re = Regex::new(src).map_err(|e| fail(function, &e.to_string()))?;
    if cache.len() < 1024 {
        cache.insert(src.to_string(), re.clone());
    }
    Ok(re)
}

fn find<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let s = string_arg("find", &v[0])?;
    let re = pattern("find", string_arg("find", &v[1])?)?;
    out(Value::String(Arc::new(re.find(s).map(|m| m.as_str().to_string()).unwrap_or_default())))
}

fn find_all_limited<'b, 'v>(v: &[Value], limit: Option<usize>) -> Out<'b, 'v> {
    let s = string_arg("findAll", &v[0])?;
    let re = pattern("findAll", string_arg("findAll", &v[1])?)?;
    let found: Vec<Value> = re
        .find_iter(s)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Value::String(Arc::new(m.as_str().to_string())))
        .collect();
    out(Value::List(Arc::new(found)))
}

fn find_all<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    find_all_limited(&values(args)?, None)
}

fn find_all_n<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let limit = match v.get(2) {
        Some(Value::Int(n)) if *n >= 0 => Some(*n as usize),
        _ => None,
    };
    find_all_limited(&v, limit)
}

fn bool_of<'b, 'v>(args: Args<'b, 'v>, function: &str, check: fn(&str) -> bool) -> Out<'b, 'v> {
    let v = values(args)?;
    out(Value::Bool(check(string_arg(function, &v[0])?)))
}

fn is_url<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    bool_of(args, "isURL", |s| super::kinds::Url::parse(s).is_some())
}

fn is_ip<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    bool_of(args, "isIP", |s| s.parse::<std::net::IpAddr>().is_ok())
}

fn is_cidr<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    bool_of(args, "isCIDR", formats::cidr)
}

fn is_quantity<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    bool_of(args, "isQuantity", |s| super::kinds::Quantity::parse(s).is_some())
}
