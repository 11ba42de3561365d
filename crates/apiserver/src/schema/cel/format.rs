//! The Kubernetes `format` CEL library: `format.dns1123Label().validate(s)` and its
//! siblings, and `format.named(name)`, answering `optional.none()` for a valid string or
//! the list of problems, worded as the API server's own name checks word them.

use std::sync::Arc;

use cel::common::types::{STRING_TYPE, Type};
use cel::objects::{Opaque, OptionalValue};
use cel::{DeclarationError, Env, Value};
use drydock_api::names;

use super::library::{Args, Out, fail, out, string_arg, values};
use crate::schema::formats;

/// One named format.
#[derive(Debug, PartialEq, Eq)]
struct Format(&'static str);

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

fn format_type() -> Type {
    Type::new_opaque_type("kubernetes.NamedFormat")
}

const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// Problems with `s` in format `name`.
fn problems(name: &str, s: &str) -> Vec<String> {
    match name {
        "dns1123Label" => names::dns1123_label_errors(s),
        "dns1123Subdomain" => names::dns1123_subdomain_errors(s),
        "dns1035Label" => dns1035_label_errors(s),
        "qualifiedName" => names::qualified_name_errors(s),
        "labelValue" => names::label_value_errors(s),
        "datetime" => check(formats::valid("date-time", s), "an RFC 3339 date-time"),
        other => check(formats::valid(other, s), other),
    }
}

fn check(ok: bool, what: &str) -> Vec<String> {
    if ok { Vec::new() } else { vec![format!("must be a valid {what}")] }
}

/// A DNS-1035 label: a DNS-1123 label that starts with a letter.
fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = names::dns1123_label_errors(s);
    if errs.is_empty() && !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        errs.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character".to_string(),
        );
    }
    errs
}

macro_rules! named {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(
            fn $f<'b, 'v>(_args: Args<'b, 'v>) -> Out<'b, 'v> {
                out(Value::Opaque(Arc::new(Format($name))))
            }
        )*
        fn constructors() -> Vec<(&'static str, cel::common::functions::Function)> {
            vec![$((concat!("format.", $name), $f as cel::common::functions::Function)),*]
        }
    };
}

named!(
    dns1123_label => "dns1123Label",
    dns1123_subdomain => "dns1123Subdomain",
    dns1035_label => "dns1035Label",
    qualified_name => "qualifiedName",
    label_value => "labelValue",
    uri => "uri",
    uuid => "uuid",
    byte => "byte",
    date => "date",
    datetime => "datetime",
);

/// Registers the library.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(format_type())?;
    for (name, f) in constructors() {
        env.add_overload(name, name, vec![], f)?;
    }
    env.add_overload("format.named", "format.named_string", vec![STRING_TYPE], named_format)?;
    env.add_member_overload("validate", "format_validate", format_type(), vec![STRING_TYPE], validate)?;
    Ok(())
}

fn named_format<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let name = string_arg("format.named", &v[0])?;
    let found = NAMES.iter().find(|n| **n == name).map(|n| Value::Opaque(Arc::new(Format(n))));
    out(Value::Opaque(Arc::new(match found {
        Some(f) => OptionalValue::of(f),
        None => OptionalValue::none(),
    })))
}

fn validate<'b, 'v>(args: Args<'b, 'v>) -> Out<'b, 'v> {
    let v = values(args)?;
    let Value::Opaque(o) = &v[0] else { return Err(fail("validate", "receiver is not a format")) };
    let format = o.downcast_ref::<Format>().ok_or_else(|| fail("validate", "receiver is not a format"))?;
    let errs = problems(format.0, string_arg("validate", &v[1])?);
    let result = if errs.is_empty() {
        OptionalValue::none()
    } else {
        OptionalValue::of(Value::List(Arc::new(errs.into_iter().map(|e| Value::String(Arc::new(e))).collect())))
    };
    out(Value::Opaque(Arc::new(result)))
}
