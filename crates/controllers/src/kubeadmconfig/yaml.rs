//! A small YAML writer for bootstrap documents (cloud-config, kubeadm configuration): block
//! style, multi-line strings as literal blocks, and any string that could read as something
//! else (a number, a boolean, a null, or YAML syntax) double-quoted with JSON escapes, which
//! YAML's double-quoted style understands.

use serde_json::Value;

/// `value` as a YAML document (no `---` marker), ending with a newline.
pub(crate) fn to_string(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => write_list(&mut out, a, 0),
        other => {
            write_inline(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

/// Top-level keys in the given order (serde_json maps are sorted; documents such as
/// cloud-config read better with their sections in a fixed order).
pub(crate) fn ordered(entries: &[(&str, Value)]) -> String {
    let mut out = String::new();
    for (k, v) in entries {
        write_entry(&mut out, k, v, 0);
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn write_map(out: &mut String, m: &serde_json::Map<String, Value>, level: usize) {
    for (k, v) in m {
        indent(out, level);
        write_entry_rest(out, k, v, level);
    }
}

fn write_entry(out: &mut String, k: &str, v: &Value, level: usize) {
    indent(out, level);
    write_entry_rest(out, k, v, level);
}

/// `key: value` after the indentation of `level` has been written.
fn write_entry_rest(out: &mut String, k: &str, v: &Value, level: usize) {
    out.push_str(&scalar(k));
    out.push(':');
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, level + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_list(out, a, level);
        }
        other => {
            out.push(' ');
            write_inline(out, other, level + 2);
            out.push('\n');
        }
    }
}

fn write_list(out: &mut String, a: &[Value], level: usize) {
    for item in a {
        indent(out, level);
        out.push('-');
        if !matches!(item, Value::Array(inner) if !inner.is_empty()) {
            out.push(' ');
        }
        match item {
            Value::Object(m) if !m.is_empty() => {
                // First entry on the dash's line, the rest aligned under it.
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        indent(out, level + 2);
                    }
                    write_entry_rest(out, k, v, level + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_list(out, inner, level + 2);
            }
            other => {
                write_inline(out, other, level + 2);
                out.push('\n');
            }
        }
    }
}

/// A scalar or empty collection after `key: ` or `- `; multi-line strings become literal
/// blocks indented to `level`.
fn write_inline(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) if is_block(s) => write_block(out, s, level),
        Value::String(s) => out.push_str(&scalar(s)),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// Multi-line text without characters a literal block cannot carry.
fn is_block(s: &str) -> bool {
    s.contains('\n') && !s.contains('\r') && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
}

fn write_block(out: &mut String, s: &str, level: usize) {
    out.push('|');
    // An explicit indentation indicator when the first line starts with a space.
    if s.trim_start_matches('\n').starts_with(' ') {
        out.push('2');
    }
    let trailing = s.len() - s.trim_end_matches('\n').len();
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    let body = if trailing == 1 { &s[..s.len() - 1] } else { s.trim_end_matches('\n') };
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, level);
            out.push_str(line);
        }
    }
    // Keep-chomping blocks carry their extra trailing newlines as empty lines.
    for _ in 1..trailing.max(1) {
        out.push('\n');
    }
}

/// A string as a plain scalar when that reads back as the same string, else double-quoted.
pub(crate) fn scalar(s: &str) -> String {
    if is_plain(s) { s.to_string() } else { serde_json::Value::String(s.to_string()).to_string() }
}

fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    // Numbers, signs and YAML indicators at the start change the meaning.
    if !(first.is_ascii_alphabetic() || first == '/' || first == '_') {
        return false;
    }
    if !s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-' | '+' | '@' | '=')) {
        return false;
    }
    // YAML 1.1 booleans and nulls (cloud-init's parser is YAML 1.1).
    const RESERVED: &[&str] = &["y", "n", "yes", "no", "true", "false", "on", "off", "null"];
    !RESERVED.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_quote_what_would_change_type() {
        assert_eq!(scalar("kubeadm"), "kubeadm");
        assert_eq!(scalar("v1.30.2"), "v1.30.2");
        assert_eq!(scalar("/run/kubeadm/kubeadm.yaml"), "/run/kubeadm/kubeadm.yaml");
        assert_eq!(scalar("0640"), "\"0640\"");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("On"), "\"On\"");
        assert_eq!(scalar(""), "\"\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("root:root"), "\"root:root\"");
        assert_eq!(scalar("- x"), "\"- x\"");
        assert_eq!(scalar("say \"hi\""), "\"say \\\"hi\\\"\"");
    }

    #[test]
    fn documents() {
        let v = json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}, "taints": []},
            "list": [{"a": 1, "b": "x"}, "plain", ["nested"]],
            "empty": {},
        });
        let text = to_string(&v);
        assert_eq!(
            text,
            "apiVersion: kubeadm.k8s.io/v1beta3\nempty: {}\nlist:\n- a: 1\n  b: x\n- plain\n-\n  - nested\nnodeRegistration:\n  kubeletExtraArgs:\n    eviction-hard: \"nodefs.available<0%\"\n  taints: []\n"
        );
    }

    #[test]
    fn literal_blocks_keep_content_exactly() {
        let with_newline = ordered(&[("content", json!("line 1\n  line 2\n"))]);
        assert_eq!(with_newline, "content: |\n  line 1\n    line 2\n");
        let without = ordered(&[("content", json!("a\nb"))]);
        assert_eq!(without, "content: |-\n  a\n  b\n");
        let extra = ordered(&[("content", json!("a\n\n"))]);
        assert_eq!(extra, "content: |+\n  a\n\n");
        let leading = ordered(&[("content", json!(" a\nb\n"))]);
        assert_eq!(leading, "content: |2\n   a\n  b\n");
        let in_list = to_string(&json!([{"path": "/x", "content": "a\nb\n"}]));
        assert_eq!(in_list, "- content: |\n    a\n    b\n  path: /x\n");
        let carriage = ordered(&[("content", json!("a\r\nb"))]);
        assert_eq!(carriage, "content: \"a\\r\\nb\"\n");
    }
}
