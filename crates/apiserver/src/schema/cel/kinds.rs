//! The Kubernetes CEL value kinds rules build from strings: `url(s)` with its getters,
//! `quantity(s)` with its comparisons and arithmetic, `semver(s)` with its parts and order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::common::types::{INT_TYPE, STRING_TYPE, Type};
use cel::objects::{Key, Map, Opaque};
use cel::{DeclarationError, Env, Value};

use super::library::{Args, Out, fail, out, string_arg, values};

fn url_type() -> Type {
    Type::new_opaque_type("kubernetes.URL")
}

fn semver_type() -> Type {
    Type::new_opaque_type("kubernetes.Semver")
}

/// A semantic version.
#[derive(Debug, PartialEq, Eq)]
pub struct Semver(semver::Version);

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn quantity_type() -> Type {
    Type::new_opaque_type("kubernetes.Quantity")
}

/// A parsed absolute URL (or absolute path), as Go's `url.ParseRequestURI` reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

impl Url {
    pub fn parse(s: &str) -> Option<Url> {
        if s.contains(char::is_whitespace) {
            return None;
        }
        let (rest, query) = match s.split_once('?') {
            Some((r, q)) => (r, q.split('#').next().unwrap_or_default().to_string()),
            None => (s.split('#').next().unwrap_or_default(), String::new()),
        };
        if rest.starts_with('/') {
            return Some(Url { scheme: String::new(), host: String::new(), path: rest.to_string(), query });
        }
        let (scheme, after) = rest.split_once("://")?;
        let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !valid_scheme {
            return None;
        }
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        let host = authority.rsplit('@').next().unwrap_or_default();
        Some(Url { scheme: scheme.to_string(), host: host.to_string(), path: path.to_string(), query })
    }

    /// The host without its port (brackets of an IPv6 literal removed).
    fn hostname(&self) -> &str {
        if let Some(rest) = self.host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or_default();
        }
        self.host.split(':').next().unwrap_or_default()
    }

    fn port(&self) -> &str {
        let after_v6 = self.host.rsplit(']').next().unwrap_or_default();
        after_v6.rsplit_once(':').map(|(_, p)| p).unwrap_or_default()
    }

    fn query_map(&self) -> Value {
        let mut grouped: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for pair in self.query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            grouped.entry(k.to_string()).or_default().push(Value::String(Arc::new(v.to_string())));
        }
        let map: HashMap<Key, Value> =
            grouped.into_iter().map(|(k, v)| (Key::String(Arc::new(k)), Value::List(Arc::new(v)))).collect();
        Value::Map(Map { map: Arc::new(map) })
    }
}

/// A resource quantity held exactly in nano-units.
#[derive(Debug, PartialEq, Eq)]
pub struct Quantity(i128);

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

impl Quantity {
    /// Parses `100m`, `1.5Gi`, `2e3`, `-4`.
    pub fn parse(s: &str) -> Option<Quantity> {
        let split = s.find(|c: char| !(c.is_ascii_digit() || "+-.".contains(c))).unwrap_or(s.len());
        let (number, suffix) = s.split_at(split);
        let (neg, digits) = match number.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, number.strip_prefix('+').unwrap_or(number)),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if (whole.is_empty() && frac.is_empty()) || !(whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())) {
            return None;
        }
        let mut nanos: i128 = 0;
        for b in whole.bytes() {
            nanos = nanos.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
        }
        nanos = nanos.checked_mul(1_000_000_000)?;
        let mut scale: i128 = 100_000_000;
        for b in frac.bytes().take(9) {
            nanos += i128::from(b - b'0') * scale;
            scale /= 10;
        }
        let nanos = scale_by(nanos, suffix)?;
        Some(Quantity(if neg { -nanos } else { nanos }))
    }
}

fn scale_by(nanos: i128, suffix: &str) -> Option<i128> {
    let binary = |p: u32| nanos.checked_mul(1i128 << (10 * p));
    let decimal = |e: i32| {
        if e >= 0 {
            nanos.checked_mul(10i128.checked_pow(e.unsigned_abs())?)
        } else {
            Some(nanos / 10i128.pow(e.unsigned_abs()))
        }
    };
    match suffix {
        "" => Some(nanos),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        exp => {
            let e: i32 = exp.strip_prefix(['e', 'E'])?.parse().ok()?;
            if e.abs() > 18 {
                return None;
            }
            decimal(e)
        }
    }
}

/// Registers `url` and `quantity` with their member functions.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(url_type())?;
    env.add_type(quantity_type())?;
    env.add_overload("url", "url_string", vec![STRING_TYPE], url)?;
    for (name, f) in [
        ("getScheme", get_scheme as cel::common::functions::Function),
        ("getHost", get_host),
        ("getHostname", get_hostname),
        ("getPort", get_port),
        ("getEscapedPath", get_escaped_path),
        ("getQuery", get_query),
    ] {
        env.add_member_overload(name, &format!("url_{name}"), url_type(), vec![], f)?;
    }
    env.add_overload("quantity", "quantity_string", vec![STRING_TYPE], quantity)?;
    let q = || quantity_type();
    env.add_member_overload("isInteger", "quantity_isInteger", q(), vec![], q_is_integer)?;
    env.add_member_overload("asInteger", "quantity_asInteger", q(), vec![], q_as_integer)?;
    env.add_member_overload("asApproximateFloat", "quantity_asApproximateFloat", q(), vec![], q_as_float)?;
    env.add_member_overload("sign", "quantity_sign", q(), vec![], q_sign)?;
    env.add_member_overload("compareTo", "quantity_compareTo", q(), vec![q()], q_compare)?;
    env.add_member_overload("isGreaterThan", "quantity_isGreaterThan", q(), vec![q()], q_greater)?;
    env.add_member_overload("isLessThan", "quantity_isLessThan", q(), vec![q()], q_less)?;
    env.add_member_overload("add", "quantity_add", q(), vec![q()], q_add)?;
    env.add_member_overload("add", "quantity_add_int", q(), vec![INT_TYPE], q_add_int)?;
    env.add_member_overload("sub", "quantity_sub", q(), vec![q()], q_sub)?;
    env.add_member_overload("sub", "quantity_sub_int", q(), vec![INT_TYPE], q_sub_int)?;
    semver_extension(env)
}

fn semver_extension(env: &mut Env) -> Result<(), DeclarationError> {
    let s = semver_type;
    env.add_type(s())?;
    env.add_overload("semver", "semver_string", vec![STRING_TYPE], semver_of)?;
    env.add_overload("isSemver", "isSemver_string", vec![STRING_TYPE], is_semver)?;
    env.add_member_overload("major", "semver_major", s(), vec![], sv_major)?;
    env.add_member_overload("minor", "semver_minor", s(), vec![], sv_minor)?;
    env.add_member_overload("patch", "semver_patch", s(), vec![], sv_patch)?;
    env.add_member_overload("compareTo", "semver_compareTo", s(), vec![s()], sv_compare)?;
    env.add_member_overload("isGreaterThan", "semver_isGreaterThan", s(), vec![s()], sv_greater)?;
    env.add_member_overload("isLessThan", "semver_isLessThan", s(), vec![s()], sv_less)?;
    Ok(())
}

fn semver_of<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let parsed = semver::Version::parse(string_arg("semver", &v[0])?).map_err(|e| fail("semver", &e.to_string()))?;
    out(Value::Opaque(Arc::new(Semver(parsed))))
}

fn is_semver<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    out(Value::Bool(semver::Version::parse(string_arg("isSemver", &v[0])?).is_ok()))
}

fn version<'a>(function: &str, v: &'a Value) -> Result<&'a semver::Version, cel::ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Semver>().map(|s| &s.0).ok_or_else(|| fail(function, "not a semver")),
        _ => Err(fail(function, "not a semver")),
    }
}

fn sv_part<'b, 'v>(args: Args<'b, 'v>, function: &str, part: fn(&semver::Version) -> u64) -> Out<'b, 'v> {
    let v = values(args)?;
    let n = part(version(function, &v[0])?);
    out(Value::Int(i64::try_from(n).map_err(|_| fail(function, "overflow"))?))
}

fn sv_major<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_part(args, "major", |v| v.major)
}
fn sv_minor<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_part(args, "minor", |v| v.minor)
}
fn sv_patch<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_part(args, "patch", |v| v.patch)
}

fn sv_order<'b, 'v>(args: Args<'b, 'v>, function: &str, f: fn(Ordering) -> Value) -> Out<'b, 'v> {
    let v = values(args)?;
    out(f(version(function, &v[0])?.cmp(version(function, &v[1])?)))
}

fn sv_compare<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_order(args, "compareTo", |o| Value::Int(o as i64))
}
fn sv_greater<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_order(args, "isGreaterThan", |o| Value::Bool(o == Ordering::Greater))
}
fn sv_less<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    sv_order(args, "isLessThan", |o| Value::Bool(o == Ordering::Less))
}

fn url<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let s = string_arg("url", &v[0])?;
    let parsed = Url::parse(s).ok_or_else(|| fail("url", "URL parse error during conversion from string"))?;
    out(Value::Opaque(Arc::new(parsed)))
}

fn with_url<'b, 'v>(args: Args<'b, 'v>, function: &str, get: fn(&Url) -> Value) -> Out<'b, 'v> {
    let v = values(args)?;
    match &v[0] {
        Value::Opaque(o) => match o.downcast_ref::<Url>() {
            Some(u) => out(get(u)),
            None => Err(fail(function, "receiver is not a URL")),
        },
        _ => Err(fail(function, "receiver is not a URL")),
    }
}

fn text(s: &str) -> Value {
    Value::String(Arc::new(s.to_string()))
}

fn get_scheme<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getScheme", |u| text(&u.scheme))
}
fn get_host<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getHost", |u| text(&u.host))
}
fn get_hostname<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getHostname", |u| text(u.hostname()))
}
fn get_port<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getPort", |u| text(u.port()))
}
fn get_escaped_path<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getEscapedPath", |u| text(&u.path))
}
fn get_query<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    with_url(args, "getQuery", Url::query_map)
}

fn quantity<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let s = string_arg("quantity", &v[0])?;
    let q = Quantity::parse(s).ok_or_else(|| fail("quantity", "quantities must match the regular expression"))?;
    out(Value::Opaque(Arc::new(q)))
}

fn nanos(function: &str, v: &Value) -> Result<i128, cel::ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Quantity>().map(|q| q.0).ok_or_else(|| fail(function, "not a quantity")),
        Value::Int(i) => i128::from(*i).checked_mul(1_000_000_000).ok_or_else(|| fail(function, "overflow")),
        _ => Err(fail(function, "not a quantity")),
    }
}

fn unary<'b, 'v>(args: Args<'b, 'v>, function: &str, f: fn(i128) -> Option<Value>) -> Out<'b, 'v> {
    let v = values(args)?;
    let n = nanos(function, &v[0])?;
    out(f(n).ok_or_else(|| fail(function, "cannot convert value to integer"))?)
}

fn binary<'b, 'v>(args: Args<'b, 'v>, function: &str, f: fn(i128, i128) -> Option<Value>) -> Out<'b, 'v> {
    let v = values(args)?;
    let (a, b) = (nanos(function, &v[0])?, nanos(function, &v[1])?);
    out(f(a, b).ok_or_else(|| fail(function, "overflow"))?)
}

fn q_is_integer<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    unary(args, "isInteger", |n| Some(Value::Bool(n % 1_000_000_000 == 0 && i64::try_from(n / 1_000_000_000).is_ok())))
}
fn q_as_integer<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    unary(args, "asInteger", |n| {
        (n % 1_000_000_000 == 0).then(|| i64::try_from(n / 1_000_000_000).ok().map(Value::Int)).flatten()
    })
}
fn q_as_float<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    unary(args, "asApproximateFloat", |n| Some(Value::Float(n as f64 / 1e9)))
}
fn q_sign<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    unary(args, "sign", |n| Some(Value::Int(n.signum() as i64)))
}
fn q_compare<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    binary(args, "compareTo", |a, b| {
        Some(Value::Int(match a.cmp(&b) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }))
    })
}
fn q_greater<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    binary(args, "isGreaterThan", |a, b| Some(Value::Bool(a > b)))
}
fn q_less<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    binary(args, "isLessThan", |a, b| Some(Value::Bool(a < b)))
}
fn q_add<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    binary(args, "add", |a, b| a.checked_add(b).map(|n| Value::Opaque(Arc::new(Quantity(n)))))
}
fn q_add_int<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    q_add(args)
}
fn q_sub<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    binary(args, "sub", |a, b| a.checked_sub(b).map(|n| Value::Opaque(Arc::new(Quantity(n)))))
}
fn q_sub_int<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    q_sub(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quantities_and_urls() {
        let q = |s: &str| Quantity::parse(s).map(|q| q.0);
        assert_eq!(q("1"), Some(1_000_000_000));
        assert_eq!(q("100m"), Some(100_000_000));
        assert_eq!(q("1.5Gi"), Some(1_610_612_736_000_000_000));
        assert_eq!(q("2e3"), Some(2_000_000_000_000));
        assert_eq!(q("-4k"), Some(-4_000_000_000_000));
        assert_eq!(q("abc"), None);
        assert_eq!(q("1Zi"), None);
        let u = Url::parse("https://user@example.com:8443/a%20b?x=1&x=2&y").expect("url");
        assert_eq!(
            (u.scheme.as_str(), u.hostname(), u.port(), u.path.as_str()),
            ("https", "example.com", "8443", "/a%20b")
        );
        assert_eq!(Url::parse("https://[::1]:80/").map(|u| u.hostname().to_string()).as_deref(), Some("::1"));
        assert!(Url::parse("not a url").is_none());
    }
}
