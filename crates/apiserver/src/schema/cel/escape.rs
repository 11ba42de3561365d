//! Property names as CEL sees them: names that are not CEL identifiers are escaped the
//! way kube-apiserver escapes them (`__dot__`, `__dash__`, `__slash__`,
//! `__underscores__`, `__{keyword}__`), and names that cannot be escaped are not visible.

/// Words CEL reserves; a property named like one is reached as `__word__`.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL name of property `name`, or `None` if rules cannot reach it.
pub fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let first = name.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && !name.contains("__") {
        return Some(name.to_string());
    }
    let mut out = String::with_capacity(name.len() + 8);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_like_kube_apiserver() {
        assert_eq!(escape("replicas").as_deref(), Some("replicas"));
        assert_eq!(escape("a.b").as_deref(), Some("a__dot__b"));
        assert_eq!(escape("max-surge").as_deref(), Some("max__dash__surge"));
        assert_eq!(escape("x/y").as_deref(), Some("x__slash__y"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }
}
