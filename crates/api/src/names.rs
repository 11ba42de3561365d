//! apimachinery's name and label syntax checks, with kube-apiserver's messages: DNS-1123
//! labels and subdomains, qualified names (label and annotation keys), label values, and
//! the path-segment rule every object name obeys. Each returns every problem found (none
//! when the value is valid), as apimachinery's `validation.Is*` functions do.

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_MAX: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// apimachinery's `RegexError`: the message, examples and the regex that failed.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: String = examples.iter().map(|e| format!("'{e}', ")).collect::<Vec<_>>().join(" or ");
    format!("{msg} (e.g. {examples}regex used for validation is '{fmt}')")
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_dns_label_shape(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_dns_subdomain_shape(s: &str) -> bool {
    s.split('.').all(is_dns_label_shape)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, the shape of label names and values.
fn is_qualified_token(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Problems with `s` as a DNS-1123 label (lowercase alphanumerics and `-`, at most 63).
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !is_dns_label_shape(s) {
        if is_dns_subdomain_shape(s) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, &["my-name", "123-abc"]));
        }
    }
    errs
}

const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/// Problems with `s` as a DNS-1035 label (a DNS-1123 label starting with a letter, at most
/// 63), the shape of CRD names (plural, singular, short names, categories).
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !is_dns_label_shape(s) || !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        errs.push(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, &["my-name", "abc-123"]));
    }
    errs
}

/// Problems with `s` as a DNS-1123 subdomain (dot-separated labels, at most 253).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !is_dns_subdomain_shape(s) {
        errs.push(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// Problems with `s` as a qualified name (`[prefix/]name`), the shape of label and
/// annotation keys and of finalizers.
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let name_error = || regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"]);
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(dns1123_subdomain_errors(prefix).into_iter().map(|e| format!("prefix part {e}")));
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_error()
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !is_qualified_token(name) {
        errs.push(format!("name part {}", name_error()));
    }
    errs
}

/// Problems with `s` as a label value (empty, or at most 63 qualified-token characters).
pub fn label_value_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !s.is_empty() && !is_qualified_token(s) {
        errs.push(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, &["MyValue", "my_value", "12345"]));
    }
    errs
}

/// Problems with `s` as an object name in a URL path: not `.` or `..`, no `/` or `%`
/// (apimachinery's `IsValidPathSegmentName`).
pub fn path_segment_name_errors(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"].iter().filter(|c| s.contains(*c)).map(|c| format!("may not contain '{c}'")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels() {
        assert!(dns1123_label_errors("my-name").is_empty());
        assert!(!dns1123_label_errors("My-name").is_empty());
        assert!(!dns1123_label_errors("-a").is_empty());
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert!(!dns1123_label_errors(&"a".repeat(64)).is_empty());
        assert!(dns1123_subdomain_errors("example.com").is_empty());
        assert!(dns1123_subdomain_errors("my-name.example").is_empty());
        assert!(!dns1123_subdomain_errors("example..com").is_empty());
        assert!(!dns1123_subdomain_errors("My-Name").is_empty());
        assert!(qualified_name_errors("cluster.x-k8s.io/cluster-name").is_empty());
        assert!(qualified_name_errors("node-role.kubernetes.io/worker").is_empty());
        assert!(qualified_name_errors("MyName").is_empty());
        assert!(!qualified_name_errors("/name").is_empty());
        assert!(!qualified_name_errors("a/b/c").is_empty());
        assert!(!qualified_name_errors("Bad_Prefix/name").is_empty());
        assert!(!qualified_name_errors("").is_empty());
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("my_value.1").is_empty());
        assert!(!label_value_errors("-x").is_empty());
        assert!(!label_value_errors("a b").is_empty());
        assert!(!label_value_errors(&"a".repeat(64)).is_empty());
        assert_eq!(path_segment_name_errors(".."), ["may not be '..'"]);
        assert_eq!(path_segment_name_errors("a/b%"), ["may not contain '/'", "may not contain '%'"]);
    }

    #[test]
    fn messages_are_apimachinerys() {
        assert_eq!(
            dns1123_label_errors("A"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            qualified_name_errors("bad key!"),
            [
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(qualified_name_errors("/x"), ["prefix part must be non-empty"]);
    }
}
