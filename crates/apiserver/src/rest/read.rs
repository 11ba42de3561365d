//! get, list and the start of a watch.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use drydock_api::selector::Selector as LabelSelector;
use drydock_api::tenancy::LogicalClusterName;
use serde_json::json;

use super::{Api, Target, parse_rv};
use crate::error::{ApiError, ApiResult};
use crate::registry::Resource;
use crate::selector::FieldSelector;
use crate::store::watch::{EventFilter, Expired, Scope, Subscription};
use crate::store::{ObjKey, ObjMeta, Stored};

/// Query options of list and watch.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
    pub send_initial_events: bool,
}

/// One page of a list.
pub struct ListResult {
    pub items: Vec<Arc<Stored>>,
    /// Logical cluster of each item, for lists across every cluster (`/clusters/*`); else empty.
    pub clusters: Vec<Arc<str>>,
    pub rev: u64,
    pub continue_token: Option<String>,
}

/// A watch ready to stream: objects to announce as ADDED first (when no revision was
/// given), then the subscription's replay and live events after `after`.
pub struct WatchStart {
    pub initial: Vec<Arc<Stored>>,
    /// Logical cluster of each initial object (wildcard watches); else empty.
    pub initial_clusters: Vec<Arc<str>>,
    pub after: u64,
    pub subscription: Subscription,
}

/// Namespace, label and field filtering of one request, for lists and watches alike.
pub struct ObjectFilter {
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
    /// Stored field paths, matching `ObjMeta::fields`.
    selectable: Vec<String>,
    map_field: Option<fn(&str) -> String>,
}

impl ObjectFilter {
    fn field(&self, name: &str, namespace: &str, path: &str, meta: &ObjMeta) -> Option<String> {
        match path {
            "metadata.name" => Some(name.to_string()),
            "metadata.namespace" => Some(namespace.to_string()),
            other => {
                let stored = self.map_field.map_or_else(|| other.to_string(), |f| f(other));
                let i = self.selectable.iter().position(|s| *s == stored)?;
                meta.fields.get(i).cloned().flatten()
            }
        }
    }

    fn matches_parts(&self, namespace: &str, name: &str, meta: &ObjMeta) -> bool {
        if self.namespace.as_deref().is_some_and(|ns| ns != namespace) {
            return false;
        }
        self.labels.matches_by(|k| meta.label(k))
            && (self.fields.is_empty() || self.fields.matches(|f| self.field(name, namespace, f, meta)))
    }
}

impl EventFilter for ObjectFilter {
    fn matches(&self, key: &ObjKey, meta: &ObjMeta) -> bool {
        self.matches_parts(&key.namespace, &key.name, meta)
    }
}

pub fn is_wildcard(t: &Target) -> bool {
    &*t.cluster == LogicalClusterName::WILDCARD
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    rv: u64,
    ns: String,
    name: String,
}

impl Api {
    pub fn get(&self, t: &Target) -> ApiResult<Arc<Stored>> {
        let name = t.name()?;
        self.store.get(&t.key(name)).ok_or_else(|| ApiError::not_found(&t.res.def, name))
    }

    /// Parses field selectors against what the resource supports.
    pub fn field_selector(&self, res: &Resource, s: &str) -> ApiResult<FieldSelector> {
        let supported = |f: &str| {
            matches!(f, "metadata.name" | "metadata.namespace") || res.def.selectable_fields.iter().any(|x| x == f)
        };
        FieldSelector::parse(s, &supported).map_err(ApiError::bad_request)
    }

    pub fn filter(&self, t: &Target, opts: &ListOptions) -> ObjectFilter {
        ObjectFilter {
            namespace: if t.res.def.namespaced { t.namespace.clone() } else { None },
            labels: opts.labels.clone(),
            fields: opts.fields.clone(),
            selectable: self.storage_selectable(&t.res).to_vec(),
            map_field: t.res.conversion.as_ref().map(|c| c.field),
        }
    }

    pub fn list(&self, t: &Target, opts: &ListOptions) -> ApiResult<ListResult> {
        let current = self.store.revision();
        if let Some(rv) = opts.resource_version.as_deref().filter(|rv| !rv.is_empty() && *rv != "0") {
            let rv = parse_rv(rv)?;
            match opts.resource_version_match.as_deref() {
                Some("Exact") if rv != current => {
                    return Err(ApiError::gone(format!(
                        "too old resource version: {rv} ({current}); only the latest revision is served for exact lists"
                    )));
                }
                _ if rv > current => {
                    return Err(ApiError::new(
                        504,
                        "Timeout",
                        format!("Too large resource version: {rv}, current resource version: {current}"),
                    ));
                }
                _ => {}
            }
        }
        let (start_after, token_rv) = match opts.continue_token.as_deref().filter(|c| !c.is_empty()) {
            Some(tok) => {
                let t: ContinueToken = URL_SAFE_NO_PAD
                    .decode(tok.trim_end_matches('='))
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .ok_or_else(|| ApiError::bad_request("continue key is not valid: malformed continue token"))?;
                (Some((t.ns, t.name)), Some(t.rv))
            }
            None => (None, None),
        };
        let filter = self.filter(t, opts);
        let ns = if t.res.def.namespaced { t.namespace.as_deref() } else { None };
        if is_wildcard(t) {
            // Across every logical cluster: no paging (the result is one consistent read).
            let mut items = Vec::new();
            let mut clusters = Vec::new();
            for c in self.store.clusters() {
                let page = self
                    .store
                    .list(&c, t.res.storage, ns, None, None, &|k, o| filter.matches_parts(&k.0, &k.1, &o.meta));
                clusters.extend(std::iter::repeat_n(c.clone(), page.items.len()));
                items.extend(page.items);
            }
            return Ok(ListResult { items, clusters, rev: current, continue_token: None });
        }
        // A single-name field selector is a point lookup.
        if let Some(name) = opts.fields.equals("metadata.name").filter(|_| start_after.is_none())
            && (ns.is_some() || !t.res.def.namespaced)
        {
            let obj = self.store.get(&t.key(name));
            let items =
                obj.into_iter().filter(|o| filter.matches_parts(ns.unwrap_or_default(), name, &o.meta)).collect();
            return Ok(ListResult { items, clusters: Vec::new(), rev: current, continue_token: None });
        }
        let page =
            self.store.list(&t.cluster, t.res.storage, ns, start_after, opts.limit.filter(|l| *l > 0), &|k, o| {
                filter.matches_parts(&k.0, &k.1, &o.meta)
            });
        let rev = token_rv.unwrap_or(page.rev);
        let continue_token = page.next.map(|(ns, name)| {
            let json = json!({"rv": rev, "ns": ns, "name": name}).to_string();
            URL_SAFE_NO_PAD.encode(json)
        });
        Ok(ListResult { items: page.items, clusters: Vec::new(), rev, continue_token })
    }

    /// Starts a watch; `Err(Ok(expired))` means the revision is too old (sent as an ERROR event).
    pub fn watch(&self, t: &Target, opts: &ListOptions) -> ApiResult<Result<WatchStart, Expired>> {
        let from = match opts.resource_version.as_deref() {
            None | Some("") | Some("0") => None,
            Some(rv) => Some(parse_rv(rv)?),
        };
        let filter = Arc::new(self.filter(t, opts));
        let scope = if is_wildcard(t) {
            Scope::AllClusters(t.res.storage)
        } else {
            Scope::Cluster(t.res.storage, t.cluster.clone())
        };
        let (initial, initial_clusters, after) = match from {
            Some(rv) if !opts.send_initial_events => (Vec::new(), Vec::new(), rv),
            _ => {
                let list = self.list(t, &ListOptions { limit: None, continue_token: None, ..opts.clone() })?;
                (list.items, list.clusters, list.rev)
            }
        };
        match self.store.hub().subscribe(scope, filter, after, false) {
            Ok(subscription) => Ok(Ok(WatchStart { initial, initial_clusters, after, subscription })),
            Err(e) => Ok(Err(e)),
        }
    }
}
