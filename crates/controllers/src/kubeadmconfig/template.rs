//! File content with `contentFormat: Template`: Go text/template syntax over one variable,
//! `.controlPlane.version` (the Kubernetes version of the Cluster's control plane, when its
//! control plane object has `spec.version`).
//!
//! drydock renders the part of the language that one variable makes useful: the variable
//! itself, `if` on `.controlPlane` or `.controlPlane.version` with `else` and `end`, comments,
//! and the `{{-` / `-}}` whitespace trims. Any other action fails the render, naming it,
//! rather than writing a file that differs from what Go would have produced.

/// Why a template could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TemplateError {
    #[error("unclosed action at byte {0}")]
    Unclosed(usize),
    #[error("unsupported action {{{{{0}}}}} (only .controlPlane.version, if, else and end are rendered)")]
    Unsupported(String),
    #[error("{{{{{0}}}}} without a matching if")]
    Unmatched(&'static str),
    #[error("if without end")]
    MissingEnd,
    #[error(".controlPlane.version is not known: the Cluster's control plane has no spec.version")]
    NoVersion,
}

/// One `{{ ... }}` action or the text between actions.
enum Token<'a> {
    Text(&'a str),
    Action(&'a str),
}

/// Splits `text` into text and actions, applying the trim markers.
fn tokens(text: &str) -> Result<Vec<Token<'_>>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    let mut trim_next = false;
    while let Some(open) = rest.find("{{") {
        let inner_start = open + 2;
        let close = rest[inner_start..].find("}}").ok_or(TemplateError::Unclosed(offset + open))? + inner_start;
        let mut inner = &rest[inner_start..close];
        let mut before = &rest[..open];
        if trim_next {
            before = before.trim_start();
        }
        // A trim marker is a dash next to the braces with white space on its other side.
        if let Some(i) = inner.strip_prefix('-').filter(|i| i.starts_with(char::is_whitespace)) {
            before = before.trim_end();
            inner = i;
        }
        trim_next = false;
        if let Some(i) = inner.strip_suffix('-').filter(|i| i.ends_with(char::is_whitespace)) {
            trim_next = true;
            inner = i;
        }
        out.push(Token::Text(before));
        out.push(Token::Action(inner.trim()));
        offset += close + 2;
        rest = &rest[close + 2..];
    }
    out.push(Token::Text(if trim_next { rest.trim_start() } else { rest }));
    Ok(out)
}

/// Renders `text` with the control plane's version, when known.
pub(crate) fn render(text: &str, version: Option<&str>) -> Result<String, TemplateError> {
    let version = version.filter(|v| !v.is_empty());
    let mut out = String::new();
    // For each open `if`: whether its current branch is rendered, and whether `else` was seen.
    let mut branches: Vec<(bool, bool)> = Vec::new();
    let active = |b: &[(bool, bool)]| b.iter().all(|(on, _)| *on);
    for token in tokens(text)? {
        let action = match token {
            Token::Text(t) => {
                if active(&branches) {
                    out.push_str(t);
                }
                continue;
            }
            Token::Action(a) => a,
        };
        if action.starts_with("/*") && action.ends_with("*/") {
            continue;
        }
        let words: Vec<&str> = action.split_whitespace().collect();
        match words.as_slice() {
            [".controlPlane.version"] => {
                if active(&branches) {
                    out.push_str(version.ok_or(TemplateError::NoVersion)?);
                }
            }
            ["if", ".controlPlane" | ".controlPlane.version"] => branches.push((version.is_some(), false)),
            ["else"] => match branches.last_mut() {
                Some((on, seen_else @ false)) => {
                    *on = !*on;
                    *seen_else = true;
                }
                _ => return Err(TemplateError::Unmatched("else")),
            },
            ["end"] => {
                branches.pop().ok_or(TemplateError::Unmatched("end"))?;
            }
            _ => return Err(TemplateError::Unsupported(action.to_string())),
        }
    }
    if !branches.is_empty() {
        return Err(TemplateError::MissingEnd);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_version() {
        assert_eq!(render("v={{ .controlPlane.version }}", Some("v1.29.0")).unwrap(), "v=v1.29.0");
        assert_eq!(render("plain {{.controlPlane.version}}!", Some("v1.29.0")).unwrap(), "plain v1.29.0!");
        assert_eq!(render("no actions\n", None).unwrap(), "no actions\n");
        assert_eq!(render("{{ .controlPlane.version }}", None), Err(TemplateError::NoVersion));
    }

    #[test]
    fn conditions_comments_and_trims() {
        let t = "a\n  {{- if .controlPlane }} {{ .controlPlane.version }}{{ else }} none{{ end -}}\n  b";
        assert_eq!(render(t, Some("v1.30.0")).unwrap(), "a v1.30.0b");
        assert_eq!(render(t, None).unwrap(), "a noneb");
        assert_eq!(render("x{{/* note */}}y", None).unwrap(), "xy");
        let nested = "{{ if .controlPlane }}{{ if .controlPlane.version }}in{{ end }}{{ end }}";
        assert_eq!(render(nested, Some("v1")).unwrap(), "in");
    }

    #[test]
    fn refuses_what_it_cannot_render() {
        assert_eq!(render("{{ .controlPlane.version ", None), Err(TemplateError::Unclosed(0)));
        assert!(matches!(render("{{ .nonExistent }}", None), Err(TemplateError::Unsupported(_))));
        assert!(matches!(render("{{ printf \"%s\" 1 }}", None), Err(TemplateError::Unsupported(_))));
        assert_eq!(render("{{ end }}", None), Err(TemplateError::Unmatched("end")));
        assert_eq!(render("{{ if .controlPlane }}x", None), Err(TemplateError::MissingEnd));
        assert_eq!(
            render("{{ if .controlPlane }}{{ else }}{{ else }}{{ end }}", None),
            Err(TemplateError::Unmatched("else"))
        );
    }
}
