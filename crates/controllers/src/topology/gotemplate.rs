//! Go `text/template` rendering for ClusterClass patches (`enabledIf`, `valueFrom.template`)
//! on the `gtmpl` engine, plus the sprig functions classes commonly use (`semverCompare`
//! among them).
//!
//! Data is shaped as upstream's engine sees it after decoding the variables from JSON:
//! objects are maps, so a missing key prints `<no value>` and is false in `if` instead of
//! failing, and `null` is no value. Known differences from Go, all from `gtmpl`: `range`
//! over a map visits keys in no fixed order (Go sorts them), `and`/`or` evaluate every
//! argument (Go stops early), `range … else` runs the `else` branch even after items, a list
//! or map printed as is shows a debug form (Go's `[a b]`, `map[k:v]`; `printf "%v"`,
//! `toJson` and `toYaml` print them properly), and numbers print as written (`1000000`,
//! where Go's float64 prints `1e+06`).

use gtmpl::{Context, Func, FuncError, Template, Value as Tv};
use serde_json::{Map, Value};

/// Renders `text` with `data` as dot. Errors read like Go's: `template: NAME:LINE: ...`.
pub(super) fn render(name: &str, text: &str, data: &Map<String, Value>) -> Result<String, String> {
    let mut tmpl = Template::with_name(name);
    tmpl.add_funcs(FUNCS);
    tmpl.parse(text).map_err(|e| e.to_string())?;
    let dot = Tv::Map(data.iter().map(|(k, v)| (k.clone(), to_gtmpl(v))).collect());
    tmpl.render(&Context::from(dot)).map_err(|e| format!("template: {name}: {e}"))
}

/// Renders a `valueFrom.template` and reads the output as upstream does, as YAML 1.1 (Go's
/// `sigs.k8s.io/yaml`): `yes` and `on` are booleans, `0755` is octal, an empty output is null.
pub(super) fn render_value(name: &str, text: &str, data: &Map<String, Value>) -> Result<Value, String> {
    let out = render(name, text, data)?;
    let mut options = serde_saphyr::Options::default();
    options.legacy_octal_numbers = true;
    options.with_snippet = false;
    serde_saphyr::from_str_with_options(&out, options)
        .map_err(|e| format!("{name}: the rendered value is not YAML: {e}"))
}

/// Functions added to gtmpl's builtins. `len` and `eq` replace builtins that differ from Go's
/// (`len` rejects maps; `eq` requires all arguments equal where Go wants any of them).
const FUNCS: &[(&str, Func)] = &[
    ("len", len as Func),
    ("eq", eq as Func),
    ("default", default as Func),
    ("empty", empty as Func),
    ("quote", quote as Func),
    ("squote", squote as Func),
    ("lower", lower as Func),
    ("upper", upper as Func),
    ("trim", trim as Func),
    ("trimPrefix", trim_prefix as Func),
    ("trimSuffix", trim_suffix as Func),
    ("contains", contains as Func),
    ("hasPrefix", has_prefix as Func),
    ("hasSuffix", has_suffix as Func),
    ("replace", replace as Func),
    ("join", join as Func),
    ("list", list as Func),
    ("toJson", to_json as Func),
    ("toYaml", to_yaml as Func),
    ("semverCompare", semver_compare as Func),
];

fn to_gtmpl(v: &Value) -> Tv {
    match v {
        Value::Null => Tv::NoValue,
        Value::Bool(b) => Tv::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Tv::from(u),
            (None, Some(i)) => Tv::from(i),
            _ => Tv::from(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Tv::String(s.clone()),
        Value::Array(a) => Tv::Array(a.iter().map(to_gtmpl).collect()),
        Value::Object(m) => Tv::Map(m.iter().map(|(k, v)| (k.clone(), to_gtmpl(v))).collect()),
    }
}

fn to_serde(v: &Tv) -> Value {
    match v {
        Tv::NoValue | Tv::Nil | Tv::Function(_) => Value::Null,
        Tv::Bool(b) => Value::Bool(*b),
        Tv::String(s) => Value::String(s.clone()),
        Tv::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Value::from(u),
            (None, Some(i), _) => Value::from(i),
            (.., f) => f.and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number),
        },
        Tv::Array(a) => Value::Array(a.iter().map(to_serde).collect()),
        // Sorted keys, so the output is stable.
        Tv::Map(m) | Tv::Object(m) => {
            let mut keys: Vec<_> = m.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), to_serde(&m[k]))).collect())
        }
    }
}

/// sprig's `strval`: strings as they are, anything else as printed.
fn strval(v: &Tv) -> String {
    match v {
        Tv::String(s) => s.clone(),
        Tv::NoValue | Tv::Nil => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

/// sprig's `empty`: the zero value of its type (or no value at all).
fn is_empty(v: &Tv) -> bool {
    match v {
        Tv::NoValue | Tv::Nil => true,
        Tv::Bool(b) => !b,
        Tv::String(s) => s.is_empty(),
        Tv::Array(a) => a.is_empty(),
        Tv::Map(m) | Tv::Object(m) => m.is_empty(),
        Tv::Number(n) => n.as_u64() == Some(0) || n.as_f64() == Some(0.0),
        Tv::Function(_) => false,
    }
}

fn exactly<'v, const N: usize>(name: &str, args: &'v [Tv]) -> Result<&'v [Tv; N], FuncError> {
    args.try_into().map_err(|_| FuncError::ExactlyXArgs(name.to_owned(), N))
}

fn str_fn(name: &str, args: &[Tv], f: impl Fn(&str) -> String) -> Result<Tv, FuncError> {
    let [s] = exactly::<1>(name, args)?;
    Ok(Tv::String(f(&strval(s))))
}

fn pred_fn(name: &str, args: &[Tv], f: impl Fn(&str, &str) -> bool) -> Result<Tv, FuncError> {
    let [a, s] = exactly::<2>(name, args)?;
    Ok(Tv::Bool(f(&strval(s), &strval(a))))
}

fn len(args: &[Tv]) -> Result<Tv, FuncError> {
    match exactly::<1>("len", args)? {
        [Tv::String(s)] => Ok(Tv::from(s.len())),
        [Tv::Array(a)] => Ok(Tv::from(a.len())),
        [Tv::Map(m) | Tv::Object(m)] => Ok(Tv::from(m.len())),
        [other] => Err(FuncError::Generic(format!("len of type without length: {other}"))),
    }
}

/// `eq A B C…`: A equals any of the others.
fn eq(args: &[Tv]) -> Result<Tv, FuncError> {
    match args {
        [first, rest @ ..] if !rest.is_empty() => Ok(Tv::Bool(rest.contains(first))),
        _ => Err(FuncError::AtLeastXArgs("eq".into(), 2)),
    }
}

/// `default D GIVEN`: GIVEN unless empty, else D (GIVEN usually comes from a pipe).
fn default(args: &[Tv]) -> Result<Tv, FuncError> {
    match args {
        [] => Err(FuncError::AtLeastXArgs("default".into(), 1)),
        [d] => Ok(d.clone()),
        [d, given, ..] => Ok(if is_empty(given) { d.clone() } else { given.clone() }),
    }
}

fn empty(args: &[Tv]) -> Result<Tv, FuncError> {
    let [v] = exactly::<1>("empty", args)?;
    Ok(Tv::Bool(is_empty(v)))
}

fn quote(args: &[Tv]) -> Result<Tv, FuncError> {
    let quoted: Vec<String> = args
        .iter()
        .filter(|a| !matches!(a, Tv::NoValue | Tv::Nil))
        .map(|a| Value::String(strval(a)).to_string())
        .collect();
    Ok(Tv::String(quoted.join(" ")))
}

fn squote(args: &[Tv]) -> Result<Tv, FuncError> {
    let quoted: Vec<String> =
        args.iter().filter(|a| !matches!(a, Tv::NoValue | Tv::Nil)).map(|a| format!("'{}'", strval(a))).collect();
    Ok(Tv::String(quoted.join(" ")))
}

fn lower(args: &[Tv]) -> Result<Tv, FuncError> {
    str_fn("lower", args, str::to_lowercase)
}

fn upper(args: &[Tv]) -> Result<Tv, FuncError> {
    str_fn("upper", args, str::to_uppercase)
}

fn trim(args: &[Tv]) -> Result<Tv, FuncError> {
    str_fn("trim", args, |s| s.trim().to_owned())
}

fn trim_prefix(args: &[Tv]) -> Result<Tv, FuncError> {
    let [p, s] = exactly::<2>("trimPrefix", args)?;
    let (p, s) = (strval(p), strval(s));
    Ok(Tv::String(s.strip_prefix(p.as_str()).unwrap_or(&s).to_owned()))
}

fn trim_suffix(args: &[Tv]) -> Result<Tv, FuncError> {
    let [p, s] = exactly::<2>("trimSuffix", args)?;
    let (p, s) = (strval(p), strval(s));
    Ok(Tv::String(s.strip_suffix(p.as_str()).unwrap_or(&s).to_owned()))
}

fn contains(args: &[Tv]) -> Result<Tv, FuncError> {
    pred_fn("contains", args, |s, sub| s.contains(sub))
}

fn has_prefix(args: &[Tv]) -> Result<Tv, FuncError> {
    pred_fn("hasPrefix", args, |s, p| s.starts_with(p))
}

fn has_suffix(args: &[Tv]) -> Result<Tv, FuncError> {
    pred_fn("hasSuffix", args, |s, p| s.ends_with(p))
}

/// `replace OLD NEW SRC`, every occurrence.
fn replace(args: &[Tv]) -> Result<Tv, FuncError> {
    let [old, new, src] = exactly::<3>("replace", args)?;
    Ok(Tv::String(strval(src).replace(&strval(old), &strval(new))))
}

/// `join SEP LIST`.
/// sprig's `semverCompare CONSTRAINT VERSION` (classes gate patches on the Kubernetes
/// version with it).
fn semver_compare(args: &[Tv]) -> Result<Tv, FuncError> {
    let [constraint, version] = exactly::<2>("semverCompare", args)?;
    super::semver_constraint::satisfies(&strval(constraint), &strval(version)).map(Tv::Bool).map_err(FuncError::Generic)
}

fn join(args: &[Tv]) -> Result<Tv, FuncError> {
    let [sep, list] = exactly::<2>("join", args)?;
    let items: Vec<String> = match list {
        Tv::Array(a) => a.iter().filter(|v| !matches!(v, Tv::NoValue | Tv::Nil)).map(strval).collect(),
        other => vec![strval(other)],
    };
    Ok(Tv::String(items.join(&strval(sep))))
}

/// `list A B ...`: its arguments as a list (sprig's).
fn list(args: &[Tv]) -> Result<Tv, FuncError> {
    Ok(Tv::Array(args.to_vec()))
}

fn to_json(args: &[Tv]) -> Result<Tv, FuncError> {
    let [v] = exactly::<1>("toJson", args)?;
    Ok(Tv::String(to_serde(v).to_string()))
}

/// Helm's `toYaml`: block YAML without the final newline.
fn to_yaml(args: &[Tv]) -> Result<Tv, FuncError> {
    let [v] = exactly::<1>("toYaml", args)?;
    let yaml = serde_saphyr::to_string(&to_serde(v)).map_err(|e| FuncError::Generic(e.to_string()))?;
    Ok(Tv::String(yaml.trim_end_matches('\n').to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn vars() -> Map<String, Value> {
        let v = json!({
            "builtin": {"cluster": {"name": "c1", "namespace": "ns"}, "controlPlane": {"replicas": 3}},
            "etcdImageTag": "3.5.9",
            "empty": "",
            "flag": true,
            "off": false,
            "list": ["a", "b", "c"],
            "m": {"k": "v", "n": 2},
            "n": 7,
            "nothing": null,
        });
        v.as_object().cloned().unwrap()
    }

    fn r(t: &str) -> String {
        render("t", t, &vars()).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    #[test]
    fn fields_and_missing_keys_render_as_go_does() {
        assert_eq!(r("{{ .builtin.cluster.name }}/{{ .builtin.cluster.namespace }}"), "c1/ns");
        assert_eq!(r("tag: {{ .etcdImageTag }}"), "tag: 3.5.9");
        assert_eq!(r("{{ .builtin.controlPlane.replicas }} {{ .n }} {{ .flag }}"), "3 7 true");
        // A missing map key is `<no value>`, falsy, and not an error (Go's default missingkey).
        assert_eq!(r("{{ .missing }}"), "<no value>");
        assert_eq!(r("{{ .nothing }}"), "<no value>");
        assert_eq!(r("{{ if .missing }}yes{{ else }}no{{ end }}"), "no");
        assert_eq!(r("{{- /* a comment */ -}}  {{- .n -}}  "), "7");
    }

    #[test]
    fn conditions_and_comparisons() {
        assert_eq!(r("{{ if .flag }}on{{ end }}{{ if .off }}off{{ end }}"), "on");
        assert_eq!(r("{{ if .empty }}x{{ else if .flag }}y{{ else }}z{{ end }}"), "y");
        assert_eq!(r(r#"{{ ne .empty "" }} {{ ne .etcdImageTag "" }}"#), "false true");
        assert_eq!(r(r#"{{ eq .builtin.cluster.name "c1" }} {{ eq .etcdImageTag "x" "3.5.9" }}"#), "true true");
        assert_eq!(r(r#"{{ and .flag (eq .n 7) }} {{ and .flag .off }} {{ or .empty "d" }}"#), "true false d");
        assert_eq!(r("{{ not .off }} {{ lt .n 10 }} {{ gt .n 10 }}"), "true true false");
    }

    #[test]
    fn range_printf_index_len() {
        assert_eq!(r("{{ range .list }}- {{ . }}\n{{ end }}"), "- a\n- b\n- c\n");
        assert_eq!(r("{{ range $i, $v := .list }}{{ $i }}={{ $v }},{{ end }}"), "0=a,1=b,2=c,");
        assert_eq!(r(r#"{{ printf "%s-%d" .builtin.cluster.name .n }}"#), "c1-7");
        assert_eq!(r(r#"{{ index .m "k" }} {{ index .list 1 }} {{ index .m "nope" }}"#), "v b <no value>");
        assert_eq!(r("{{ len .list }} {{ len .m }} {{ len .etcdImageTag }}"), "3 2 5");
        assert_eq!(r("{{ with .m }}{{ .k }}{{ end }}"), "v");
    }

    #[test]
    fn sprig_functions() {
        assert_eq!(
            r(r#"{{ .empty | default "x" }} {{ .missing | default "y" }} {{ default "z" .etcdImageTag }}"#),
            "x y 3.5.9"
        );
        assert_eq!(r(r#"{{ quote .etcdImageTag "a\"b" }} {{ squote .n }}"#), r#""3.5.9" "a\"b" '7'"#);
        assert_eq!(r(r#"{{ upper "ab" }} {{ lower "AB" }} {{ trim "  x " }}"#), "AB ab x");
        assert_eq!(
            r(
                r#"{{ contains "5.9" .etcdImageTag }} {{ hasPrefix "3." .etcdImageTag }} {{ hasSuffix "x" .etcdImageTag }}"#
            ),
            "true true false"
        );
        assert_eq!(
            r(
                r#"{{ replace "." "-" .etcdImageTag }} {{ trimPrefix "3." .etcdImageTag }} {{ trimSuffix ".9" .etcdImageTag }}"#
            ),
            "3-5-9 5.9 3.5"
        );
        assert_eq!(r(r#"{{ join "," .list }} {{ empty .empty }} {{ empty .n }}"#), "a,b,c true false");
        assert_eq!(r("{{ toJson .m }}"), r#"{"k":"v","n":2}"#);
        // `n` is quoted: YAML 1.1 would read it as a boolean (Go's YAML quotes it too).
        assert_eq!(r("{{ toYaml .m }}"), "k: v\n\"n\": 2");
        assert_eq!(r(r#"{{ if semverCompare ">= v1.24" "v1.33.0" }}new{{ end }}"#), "new");
        assert_eq!(r(r#"v1{{ if semverCompare "< v1.25" "v1.33.0" }}beta1{{ end }}"#), "v1");
    }

    #[test]
    fn values_read_as_yaml_1_1() {
        let value = |t: &str| render_value("v", t, &vars());
        assert_eq!(value("").unwrap(), Value::Null);
        assert_eq!(value("{{ .etcdImageTag }}").unwrap(), json!("3.5.9"));
        assert_eq!(value("{{ .n }}").unwrap(), json!(7));
        assert_eq!((value("on").unwrap(), value("yes").unwrap()), (json!(true), json!(true)));
        assert_eq!(value("0755").unwrap(), json!(493));
        assert_eq!(value("a: [1, \"2\"]\nb: ~").unwrap(), json!({"a": [1, "2"], "b": null}));
        let err = value("a: [1").unwrap_err();
        assert!(err.starts_with("v: the rendered value is not YAML: ") && !err.contains('\n'), "{err}");
    }

    #[test]
    fn errors_carry_gtmpl_messages() {
        let parse = render("enabledIf", "{{ nope .x }}", &vars()).unwrap_err();
        assert!(parse.starts_with("template: enabledIf:"), "{parse}");
        assert!(parse.contains("nope"), "{parse}");
        let unclosed = render("t", "{{ if .flag }}x", &vars()).unwrap_err();
        assert!(unclosed.contains("template: t"), "{unclosed}");
        let exec = render("t", "{{ .etcdImageTag.field }}", &vars()).unwrap_err();
        assert!(exec.starts_with("template: t: "), "{exec}");
    }
}
