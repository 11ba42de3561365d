//! The options of list and watch, the combinations kube-apiserver refuses, and continue
//! tokens.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use drydock_api::FieldError;
use drydock_api::selector::Selector as LabelSelector;

use crate::error::{ApiError, ApiResult};
use crate::selector::FieldSelector;

const EXACT: &str = "Exact";
const NOT_OLDER_THAN: &str = "NotOlderThan";

/// Query options of list and watch.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
    /// `sendInitialEvents`, when given.
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    /// The resourceVersion given, unless empty.
    pub fn rv(&self) -> Option<&str> {
        self.resource_version.as_deref().filter(|s| !s.is_empty())
    }

    /// The continue token given, unless empty.
    pub fn continue_token(&self) -> Option<&str> {
        self.continue_token.as_deref().filter(|s| !s.is_empty())
    }

    /// Whether a revision N (not "" nor "0") was asked for.
    pub fn rv_given(&self) -> bool {
        self.rv().is_some_and(|rv| rv != "0")
    }

    /// Whether `resourceVersionMatch=Exact`, or the legacy `limit` with a revision, asks for
    /// exactly that revision.
    pub fn exact(&self) -> bool {
        match self.resource_version_match.as_deref() {
            Some(m) => m == EXACT,
            None => self.limit.is_some_and(|l| l > 0),
        }
    }

    /// Whether a watch starts with the current state as ADDED events: when asked, and by
    /// default for watches without a revision.
    pub fn sends_initial_events(&self) -> bool {
        self.send_initial_events.unwrap_or(!self.rv_given())
    }

    /// Whether label or field selectors filter the result.
    pub fn selects(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty()
    }

    /// Refuses the combinations kube-apiserver refuses (422 on `ListOptions`).
    pub fn validate(&self, watch: bool) -> ApiResult<()> {
        let errors = if watch { self.watch_errors() } else { self.list_errors() };
        if errors.is_empty() { Ok(()) } else { Err(ApiError::invalid_list_options(&errors)) }
    }

    fn list_errors(&self) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(m) = self.resource_version_match.as_deref() {
            if self.rv().is_none() {
                errs.push(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"));
            }
            if self.continue_token().is_some() {
                errs.push(forbidden("resourceVersionMatch is forbidden when continue is provided"));
            }
            if m != EXACT && m != NOT_OLDER_THAN {
                errs.push(FieldError::not_supported("resourceVersionMatch", m, &[EXACT, NOT_OLDER_THAN, ""]));
            }
            if m == EXACT && self.rv() == Some("0") {
                errs.push(forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
            }
        }
        if self.send_initial_events.is_some() {
            errs.push(FieldError::forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
        }
        errs
    }

    fn watch_errors(&self) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let m = self.resource_version_match.as_deref();
        if self.send_initial_events.is_some() && m != Some(NOT_OLDER_THAN) {
            errs.push(forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
        }
        if let Some(m) = m {
            if self.send_initial_events.is_none() {
                errs.push(forbidden(
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != NOT_OLDER_THAN {
                errs.push(FieldError::not_supported("resourceVersionMatch", m, &[NOT_OLDER_THAN]));
            }
            if self.continue_token().is_some() {
                errs.push(forbidden("resourceVersionMatch is forbidden when continue is provided"));
            }
        }
        errs
    }
}

fn forbidden(detail: &str) -> FieldError {
    FieldError::forbidden("resourceVersionMatch", detail)
}

/// Where a paged list goes on: the revision it reads (-1: the latest, no longer consistent)
/// and the key after which the next page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Continue {
    pub rv: i64,
    pub after: (String, String),
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TokenJson {
    v: String,
    rv: i64,
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

impl Continue {
    /// The token as kube-apiserver words it: the start key is relative to the listed prefix
    /// (`<namespace>/<name>` across namespaces, else `<name>`) followed by a NUL, so the
    /// next page starts just after the last key returned.
    pub fn encode(&self, across_namespaces: bool) -> String {
        let (ns, name) = &self.after;
        let key = if across_namespaces { format!("{ns}/{name}") } else { name.clone() };
        let json = serde_json::json!({"v": TOKEN_VERSION, "rv": self.rv, "start": format!("{key}\u{0}")});
        URL_SAFE_NO_PAD.encode(json.to_string())
    }

    /// Reads a token of a list in `namespace` (`None` across namespaces or for
    /// cluster-scoped resources, with `across_namespaces` telling which).
    pub fn decode(token: &str, namespace: Option<&str>, across_namespaces: bool) -> ApiResult<Self> {
        let invalid =
            |why: &str| ApiError::bad_request(format!("invalid continue token: continue key is not valid{why}"));
        let bytes = URL_SAFE_NO_PAD.decode(token.trim_end_matches('=')).map_err(|e| invalid(&format!(": {e}")))?;
        let t: TokenJson = serde_json::from_slice(&bytes).map_err(|e| invalid(&format!(": {e}")))?;
        if t.v != TOKEN_VERSION {
            return Err(invalid(&format!(": server does not recognize this encoded key version: {}", t.v)));
        }
        if t.rv == 0 || t.rv < -1 {
            return Err(invalid(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)"));
        }
        let key = t.start.strip_suffix('\u{0}').unwrap_or(&t.start);
        if key.is_empty() {
            return Err(invalid(": encoded start key empty (version meta.k8s.io/v1)"));
        }
        let after = if across_namespaces {
            let (ns, name) = key.split_once('/').ok_or_else(|| invalid(""))?;
            (ns.to_string(), name.to_string())
        } else {
            (namespace.unwrap_or_default().to_string(), key.to_string())
        };
        Ok(Self { rv: t.rv, after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_relative_to_the_listed_prefix() {
        let c = Continue { rv: 42, after: ("ns".into(), "a".into()) };
        assert_eq!(Continue::decode(&c.encode(true), None, true).unwrap(), c);
        assert_eq!(Continue::decode(&c.encode(false), Some("ns"), false).unwrap(), c);
        let raw = URL_SAFE_NO_PAD.decode(c.encode(false)).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(v["start"], "a\u{0}");
        assert_eq!(v["v"], "meta.k8s.io/v1");
    }

    #[test]
    fn bad_tokens_are_400() {
        for bad in ["%%%", "bm90IGpzb24", &URL_SAFE_NO_PAD.encode(r#"{"v":"x","rv":1,"start":"a"}"#)] {
            let e = Continue::decode(bad, None, true).unwrap_err();
            assert_eq!(e.code, 400, "{bad}");
            assert!(e.message.starts_with("invalid continue token: continue key is not valid"), "{}", e.message);
        }
    }
}
