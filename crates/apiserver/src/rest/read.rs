//! get, list and the start of a watch.

use std::sync::Arc;

use drydock_api::selector::Selector as LabelSelector;
use drydock_api::tenancy::LogicalClusterName;

use super::list_options::{Continue, ListOptions};
use super::{Api, Target, parse_rv};
use crate::error::{ApiError, ApiResult};
use crate::registry::Resource;
use crate::selector::FieldSelector;
use crate::store::watch::{EventFilter, Scope, Subscription};
use crate::store::{ListQuery, ObjKey, ObjMeta, Stored};

/// One page of a list.
pub struct ListResult {
    pub items: Vec<Arc<Stored>>,
    /// Logical cluster of each item, for lists across every cluster (`/clusters/*`); else empty.
    pub clusters: Vec<Arc<str>>,
    pub rev: u64,
    pub continue_token: Option<String>,
    /// Matches past this page (`metadata.remainingItemCount`), given when no selector filters.
    pub remaining: Option<u64>,
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

impl Api {
    /// The current state of an object, durable or not: for the server's own loops and the
    /// preconditions of writes. Clients read through [`Api::read`].
    pub fn get(&self, t: &Target) -> ApiResult<Arc<Stored>> {
        let name = t.name()?;
        self.store.get(&t.key(name)).ok_or_else(|| ApiError::not_found(&t.res.def, name))
    }

    /// A client's get: durable state, not older than `resource_version` when one is given.
    pub async fn read(&self, t: &Target, resource_version: Option<&str>) -> ApiResult<Arc<Stored>> {
        let name = t.name()?;
        if let Some(rv) = resource_version.filter(|rv| !rv.is_empty() && *rv != "0") {
            self.reach(parse_rv(rv)?).await?;
        }
        self.store.get_durable(&t.key(name)).await.ok_or_else(|| ApiError::not_found(&t.res.def, name))
    }

    /// Waits (bounded) until the store has durably reached `rv`; 504 otherwise.
    async fn reach(&self, rv: u64) -> ApiResult<()> {
        self.store.reach(rv).await.map_err(|current| ApiError::too_large_resource_version(rv, current))
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

    /// A client's list: one page of durable state, current or of the revision asked for.
    pub async fn list(&self, t: &Target, opts: &ListOptions) -> ApiResult<ListResult> {
        opts.validate(false)?;
        let across = self.across_namespaces(t);
        let token = match opts.continue_token() {
            Some(tok) => {
                if opts.rv_given() {
                    return Err(ApiError::bad_request(
                        "specifying resource version is not allowed when using continue",
                    ));
                }
                Some(Continue::decode(tok, self.list_namespace(t), across)?)
            }
            None => None,
        };
        let at = match &token {
            Some(c) if c.rv > 0 => At::Exact(c.rv.unsigned_abs()),
            Some(_) => At::Latest,
            None => self.list_revision(opts).await?,
        };
        // Like the watch cache, a list at any revision ("0") is served whole.
        let limit = if opts.rv() == Some("0") && token.is_none() { None } else { opts.limit.filter(|l| *l > 0) };
        let after = token.as_ref().map(|c| c.after.clone());
        self.list_at(t, opts, at, after, limit).await.map_err(|HistoryExpired| match &token {
            Some(c) => expired_continue(c, across),
            None => ApiError::gone("The resourceVersion for the provided list is too old."),
        })
    }

    /// Which state a list without continue token reads.
    async fn list_revision(&self, opts: &ListOptions) -> ApiResult<At> {
        let Some(rv) = opts.rv().filter(|_| opts.rv_given()) else {
            return Ok(At::Latest);
        };
        let rv = parse_rv(rv)?;
        self.reach(rv).await?;
        Ok(if opts.exact() { At::Exact(rv) } else { At::Latest })
    }

    /// The namespace a list is confined to, if any.
    fn list_namespace<'t>(&self, t: &'t Target) -> Option<&'t str> {
        if t.res.def.namespaced { t.namespace.as_deref() } else { None }
    }

    /// Whether continue keys name the namespace (a namespaced list across namespaces).
    fn across_namespaces(&self, t: &Target) -> bool {
        t.res.def.namespaced && t.namespace.is_none()
    }

    /// One page at `at`, starting after `after`.
    async fn list_at(
        &self,
        t: &Target,
        opts: &ListOptions,
        at: At,
        after: Option<(String, String)>,
        limit: Option<usize>,
    ) -> Result<ListResult, HistoryExpired> {
        let filter = self.filter(t, opts);
        let ns = self.list_namespace(t);
        if is_wildcard(t) {
            return Ok(self.list_all_clusters(t, &filter).await);
        }
        // A single-name field selector of the current state is a point lookup.
        if let (At::Latest, None, Some(name)) = (at, &after, opts.fields.equals("metadata.name"))
            && (ns.is_some() || !t.res.def.namespaced)
        {
            let obj = self.store.get_durable(&t.key(name)).await;
            let items =
                obj.into_iter().filter(|o| filter.matches_parts(ns.unwrap_or_default(), name, &o.meta)).collect();
            let rev = self.store.durable_revision();
            return Ok(ListResult { items, clusters: Vec::new(), rev, continue_token: None, remaining: None });
        }
        let q = ListQuery {
            cluster: &t.cluster,
            res: t.res.storage,
            namespace: ns,
            after,
            limit,
            count_rest: !opts.selects(),
        };
        let keep = |k: &(String, String), o: &Stored| filter.matches_parts(&k.0, &k.1, &o.meta);
        let page = match at {
            At::Latest => self.store.list_durable(&q, &keep).await,
            At::Exact(rv) => self.store.list_at(&q, rv, &keep).await.map_err(|_| HistoryExpired)?,
        };
        let across = self.across_namespaces(t);
        let continue_token = page.next.map(|after| Continue { rv: page.rev as i64, after }.encode(across));
        Ok(ListResult {
            items: page.items,
            clusters: Vec::new(),
            rev: page.rev,
            continue_token,
            remaining: page.remaining,
        })
    }

    /// The current durable state across every logical cluster, unpaged.
    async fn list_all_clusters(&self, t: &Target, filter: &ObjectFilter) -> ListResult {
        let ns = self.list_namespace(t);
        let keep = |k: &(String, String), o: &Stored| filter.matches_parts(&k.0, &k.1, &o.meta);
        let (items, clusters, rev) = self
            .store
            .read_durable(|| {
                let mut items = Vec::new();
                let mut clusters = Vec::new();
                let mut rev = 0;
                for c in self.store.clusters() {
                    let q = ListQuery { cluster: &c, res: t.res.storage, namespace: ns, ..ListQuery::default() };
                    let page = self.store.list(&q, &keep);
                    rev = rev.max(page.rev);
                    clusters.extend(std::iter::repeat_n(c.clone(), page.items.len()));
                    items.extend(page.items);
                }
                ((items, clusters, rev), rev)
            })
            .await;
        ListResult { items, clusters, rev, continue_token: None, remaining: None }
    }

    /// Starts a watch. `Ok(Err(e))` is an error sent as the stream's one ERROR event (a
    /// revision too old or not reached in time), as kube-apiserver's watch cache does.
    pub async fn watch(&self, t: &Target, opts: &ListOptions) -> ApiResult<Result<WatchStart, ApiError>> {
        opts.validate(true)?;
        let from = match opts.rv().filter(|_| opts.rv_given()) {
            Some(rv) => Some(parse_rv(rv)?),
            None => None,
        };
        if let Some(rv) = from
            && let Err(e) = self.reach(rv).await
        {
            return Ok(Err(e));
        }
        let filter = Arc::new(self.filter(t, opts));
        let scope = if is_wildcard(t) {
            Scope::AllClusters(t.res.storage)
        } else {
            Scope::Cluster(t.res.storage, t.cluster.clone())
        };
        let (initial, initial_clusters, after) = if opts.sends_initial_events() {
            let Ok(list) = self.list_at(t, opts, At::Latest, None, None).await else {
                return Err(ApiError::internal("the current state could not be listed"));
            };
            // In (namespace, name) order, as client-go's watch-list expects (across logical
            // clusters: cluster by cluster).
            (list.items, list.clusters, list.rev)
        } else {
            (Vec::new(), Vec::new(), from.unwrap_or_else(|| self.store.durable_revision()))
        };
        match self.store.hub().subscribe(scope, filter, after, false) {
            Ok(subscription) => Ok(Ok(WatchStart { initial, initial_clusters, after, subscription })),
            Err(e) => {
                let requested = opts.rv().unwrap_or_default();
                Ok(Err(ApiError::gone(format!("too old resource version: {requested} ({})", e.oldest))))
            }
        }
    }
}

/// Which state a list reads.
#[derive(Clone, Copy, Debug)]
enum At {
    /// The latest durable state.
    Latest,
    /// Exactly this revision, rebuilt from the retained history.
    Exact(u64),
}

/// The retained history no longer reaches the revision a list asked for.
struct HistoryExpired;

/// 410 for a continue token whose snapshot left the history, carrying a token that goes on
/// from the same key at the latest revision.
fn expired_continue(c: &Continue, across: bool) -> ApiError {
    let mut e = ApiError::gone(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    e.list_continue = Some(Continue { rv: -1, after: c.after.clone() }.encode(across));
    e
}
