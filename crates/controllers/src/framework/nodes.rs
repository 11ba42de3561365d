//! The Nodes of every workload cluster through one watch.
//!
//! drydock's API server serves `/clusters/*/api/v1/nodes`: a list and watch across all its
//! logical clusters, each object annotated with the logical cluster it lives in. One such
//! watch replaces a watch per workload cluster (10,000 clusters would otherwise mean 10,000
//! watches), and lets the Machine and MachineHealthCheck controllers react to Node changes
//! instead of polling workload clusters.
//!
//! Node names are unique only within a workload cluster, so the store is keyed by (logical
//! cluster, name); a kube-rs reflector store, keyed by name alone, would mix them up.
//! Against an API server without the wildcard path (a plain kube-apiserver) the watch
//! reports itself [`NodeSync::Unavailable`] and callers read Nodes through their workload
//! cluster clients instead.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::{NODE_CLUSTER_NAMESPACE_ANNOTATION, NODE_MACHINE_ANNOTATION};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::{Mutex, RwLock};
use tokio::sync::{mpsc, watch};

use super::index::{Changes, Index};
use crate::Context;

pub use drydock_api::tenancy::CLUSTER_ANNOTATION;

/// Whether the store can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeSync {
    /// The initial list has not been loaded yet.
    Pending,
    /// The store holds every Node (as of the last event).
    Synced,
    /// The API server does not serve the wildcard path: read Nodes per workload cluster.
    Unavailable,
}

#[derive(Default)]
struct NodesOfCluster {
    by_name: HashMap<String, Arc<Node>>,
    /// providerID → names of the Nodes carrying it (more than one is a conflict to report).
    by_provider: HashMap<String, BTreeSet<String>>,
}

impl NodesOfCluster {
    /// Adds or replaces a Node; true when it is new.
    fn insert(&mut self, node: Arc<Node>) -> bool {
        let name = node.metadata.name.clone().unwrap_or_default();
        let old = self.by_name.insert(name.clone(), node.clone());
        if let Some(old) = &old {
            self.unlink(&name, provider_id(old));
        }
        if let Some(pid) = provider_id(&node) {
            self.by_provider.entry(pid.to_string()).or_default().insert(name);
        }
        old.is_none()
    }

    fn remove(&mut self, name: &str) -> Option<Arc<Node>> {
        let old = self.by_name.remove(name)?;
        self.unlink(name, provider_id(&old));
        Some(old)
    }

    fn unlink(&mut self, name: &str, pid: Option<&str>) {
        if let Some(pid) = pid
            && let Some(names) = self.by_provider.get_mut(pid)
        {
            names.remove(name);
            if names.is_empty() {
                self.by_provider.remove(pid);
            }
        }
    }
}

fn provider_id(n: &Node) -> Option<&str> {
    n.spec.as_ref().and_then(|s| s.provider_id.as_deref()).filter(|p| !p.is_empty())
}

/// The logical cluster a Node read through the wildcard path lives in.
pub fn logical_cluster_of(n: &Node) -> Option<&str> {
    lc_annotation(&n.metadata)
}

/// The logical cluster a cross-cluster list or watch says an object lives in.
pub fn lc_annotation(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<&str> {
    meta.annotations.as_ref().and_then(|a| a.get(CLUSTER_ANNOTATION)).map(String::as_str)
}

/// Nodes by logical cluster, kept current by one cross-cluster watch.
pub struct WorkloadNodes {
    api: Api<Node>,
    clusters: RwLock<HashMap<String, NodesOfCluster>>,
    /// Nodes in the store.
    count: AtomicUsize,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Arc<Node>>>>,
    started: AtomicBool,
    /// A wait for the initial list timed out.
    gave_up: AtomicBool,
    sync: watch::Sender<NodeSync>,
}

/// What a lookup by providerID found.
#[derive(Debug)]
pub enum Found {
    None,
    One(Arc<Node>),
    /// Several Nodes carry the providerID (their names).
    Conflict(Vec<String>),
}

impl WorkloadNodes {
    /// `client` addresses every logical cluster (its base path ends in `/clusters/*`).
    pub fn new(client: kube::Client) -> Arc<Self> {
        Arc::new(Self {
            api: Api::all(client),
            clusters: RwLock::new(HashMap::new()),
            count: AtomicUsize::new(0),
            subscribers: Mutex::new(Vec::new()),
            started: AtomicBool::new(false),
            gave_up: AtomicBool::new(false),
            sync: watch::channel(NodeSync::Pending).0,
        })
    }

    /// The client addressing every logical cluster, for other cross-cluster watches.
    pub fn all_clusters_client(&self) -> kube::Client {
        self.api.clone().into_client()
    }

    /// The Machine whose Node is `node` of logical cluster `cluster`, as the annotations its
    /// Machine put on the Node name it.
    pub fn machine_of(&self, cluster: &str, node: &str) -> Option<ObjectRef<Machine>> {
        let n = self.get(cluster, node)?;
        let a = n.metadata.annotations.as_ref()?;
        let (ns, name) = (a.get(NODE_CLUSTER_NAMESPACE_ANNOTATION)?, a.get(NODE_MACHINE_ANNOTATION)?);
        Some(ObjectRef::new(name).within(ns))
    }

    /// A stream of changed and deleted Nodes (a deleted one is no longer in the store).
    pub fn subscribe(&self) -> impl Stream<Item = Arc<Node>> + Send + 'static {
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers.lock().push(tx);
        tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
    }

    /// Starts the watch (once).
    pub fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move { this.run().await });
    }

    /// How many Nodes the store holds.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn sync(&self) -> NodeSync {
        *self.sync.borrow()
    }

    /// Waits (at most `limit`) for the initial list; true when the store can be used. Once a
    /// wait timed out, later calls answer at once (a watch that cannot list must not slow
    /// every reconcile down).
    pub async fn ready_within(&self, limit: Duration) -> bool {
        match self.sync() {
            NodeSync::Synced => return true,
            NodeSync::Unavailable => return false,
            NodeSync::Pending if self.gave_up.load(Ordering::Relaxed) => return false,
            NodeSync::Pending => {}
        }
        let mut rx = self.sync.subscribe();
        let synced = tokio::time::timeout(limit, rx.wait_for(|s| *s != NodeSync::Pending)).await;
        if synced.is_err() {
            self.gave_up.store(true, Ordering::Relaxed);
        }
        matches!(synced, Ok(Ok(s)) if *s == NodeSync::Synced)
    }

    /// The Node `name` of logical cluster `cluster`.
    pub fn get(&self, cluster: &str, name: &str) -> Option<Arc<Node>> {
        self.clusters.read().get(cluster)?.by_name.get(name).cloned()
    }

    /// The Node of logical cluster `cluster` whose `spec.providerID` is `provider_id`.
    pub fn by_provider_id(&self, cluster: &str, provider_id: &str) -> Found {
        let clusters = self.clusters.read();
        let Some(c) = clusters.get(cluster) else {
            return Found::None;
        };
        match c.by_provider.get(provider_id) {
            None => Found::None,
            Some(names) if names.len() == 1 => {
                names.iter().next().and_then(|n| c.by_name.get(n)).cloned().map_or(Found::None, Found::One)
            }
            Some(names) => Found::Conflict(names.iter().cloned().collect()),
        }
    }

    async fn run(&self) {
        let mut events = watcher(self.api.clone(), watcher::Config::default()).default_backoff().boxed();
        // Objects of a (re)list in progress; swapped in whole when it completes.
        let mut relist: Option<HashMap<String, NodesOfCluster>> = None;
        while let Some(ev) = events.next().await {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    if self.sync() == NodeSync::Pending && not_served(&e) {
                        tracing::info!(error = %e, "no cross-cluster Node watch; Nodes are read per workload cluster");
                        self.sync.send_replace(NodeSync::Unavailable);
                        return;
                    }
                    tracing::warn!(error = %e, "workload Node watch error; retrying");
                    continue;
                }
            };
            match ev {
                watcher::Event::Init => relist = Some(HashMap::new()),
                watcher::Event::InitApply(n) => {
                    let n = slim(n);
                    if let (Some(r), Some(lc)) = (relist.as_mut(), logical_cluster_of(&n).map(str::to_string)) {
                        r.entry(lc).or_default().insert(Arc::new(n));
                    }
                }
                watcher::Event::InitDone => {
                    let fresh = relist.take().unwrap_or_default();
                    let changed = self.replace_all(fresh);
                    self.sync.send_replace(NodeSync::Synced);
                    self.publish(changed);
                }
                watcher::Event::Apply(n) => {
                    let n = Arc::new(slim(n));
                    if let Some(lc) = logical_cluster_of(&n) {
                        if self.clusters.write().entry(lc.to_string()).or_default().insert(n.clone()) {
                            self.count.fetch_add(1, Ordering::Relaxed);
                        }
                        self.publish(vec![n]);
                    }
                }
                watcher::Event::Delete(n) => {
                    let n = Arc::new(slim(n));
                    if let Some(lc) = logical_cluster_of(&n) {
                        let mut clusters = self.clusters.write();
                        if let Some(c) = clusters.get_mut(lc) {
                            if c.remove(n.metadata.name.as_deref().unwrap_or_default()).is_some() {
                                self.count.fetch_sub(1, Ordering::Relaxed);
                            }
                            if c.by_name.is_empty() {
                                clusters.remove(lc);
                            }
                        }
                        drop(clusters);
                        self.publish(vec![n]);
                    }
                }
            }
        }
    }

    /// Installs a complete list; returns the Nodes that are new, changed or gone.
    fn replace_all(&self, fresh: HashMap<String, NodesOfCluster>) -> Vec<Arc<Node>> {
        let mut clusters = self.clusters.write();
        let mut changed = Vec::new();
        for (lc, c) in &fresh {
            let old = clusters.get(lc);
            for (name, n) in &c.by_name {
                let same = old
                    .and_then(|o| o.by_name.get(name))
                    .is_some_and(|o| o.metadata.resource_version == n.metadata.resource_version);
                if !same {
                    changed.push(n.clone());
                }
            }
        }
        for (lc, c) in clusters.iter() {
            let gone = fresh.get(lc);
            changed.extend(
                c.by_name
                    .iter()
                    .filter(|(name, _)| gone.is_none_or(|f| !f.by_name.contains_key(*name)))
                    .map(|(_, n)| n.clone()),
            );
        }
        self.count.store(fresh.values().map(|c| c.by_name.len()).sum(), Ordering::Relaxed);
        *clusters = fresh;
        changed
    }

    fn publish(&self, nodes: Vec<Arc<Node>>) {
        let mut subs = self.subscribers.lock();
        // A gone subscriber (its controller stopped) is dropped.
        subs.retain(|s| nodes.iter().all(|n| s.send(n.clone()).is_ok()));
    }

    /// Installs `nodes` directly (tests).
    #[cfg(test)]
    pub(crate) fn load(&self, nodes: Vec<Node>) {
        let mut fresh: HashMap<String, NodesOfCluster> = HashMap::new();
        for n in nodes {
            if let Some(lc) = logical_cluster_of(&n).map(str::to_string) {
                fresh.entry(lc).or_default().insert(Arc::new(slim(n)));
            }
        }
        self.replace_all(fresh);
        self.sync.send_replace(NodeSync::Synced);
    }
}

/// A 404 or 405 on the initial list: the server has no wildcard path.
pub(crate) fn not_served(e: &watcher::Error) -> bool {
    matches!(e, watcher::Error::InitialListFailed(kube::Error::Api(s)) if s.code == 404 || s.code == 405)
}

/// What the store keeps of a Node: everything but managedFields and the image list, which
/// no controller reads and which dominate a real Node's size.
fn slim(mut n: Node) -> Node {
    n.metadata.managed_fields = None;
    if let Some(s) = n.status.as_mut() {
        s.images = None;
    }
    n
}

impl WorkloadNodes {
    /// The logical cluster of a Node from this watch, when what `digest` summarises of it
    /// (given whether it is gone from the store) changed since `gates` last saw it.
    pub fn changed<'n>(
        &self,
        gates: &Changes<u64>,
        n: &'n Node,
        digest: impl Fn(&Node, bool) -> u64,
    ) -> Option<&'n str> {
        let lc = logical_cluster_of(n)?;
        let name = n.metadata.name.as_deref().unwrap_or_default();
        let gone = self.get(lc, name).is_none();
        let exists = |k: &str| k.split_once('/').is_some_and(|(c, n)| self.get(c, n).is_some());
        gates.changed(format!("{lc}/{name}"), digest(n, gone), self.len(), exists).then_some(lc)
    }
}

/// The "namespace" of providerIDs in an index of Machines by providerID (they span namespaces).
pub const PROVIDER_KEYS: &str = "*";

/// The logical cluster of drydock's API server hosting a Cluster's workload cluster (from the
/// endpoint path its infrastructure reported), if it is hosted that way.
pub fn logical_cluster(c: &Cluster) -> Option<&str> {
    let path = c.metadata.annotations.as_ref()?.get(crate::workload::ENDPOINT_PATH_ANNOTATION)?;
    let name = path.trim_end_matches('/').strip_prefix("/clusters/")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// Records a Machine's providerID in an index read by [`machine_of_node`].
pub fn record_provider_id(by_provider: &Index, m: &Machine) {
    if let (Some(pid), Some(ns), Some(name)) =
        (m.spec.provider_id.as_deref(), m.metadata.namespace.as_deref(), m.metadata.name.as_deref())
    {
        by_provider.record(PROVIDER_KEYS, pid, &format!("{ns}/{name}"));
    }
}

/// The Machine a workload Node (read through the cross-cluster watch, in logical cluster
/// `lc`) belongs to: named by the annotations its Machine put on it, else the Machine with
/// its providerID whose Cluster lives in `lc`. `by_provider` maps providerIDs to Machines.
pub fn machine_of_node(ctx: &Context, by_provider: &Index, lc: &str, n: &Node) -> Option<ObjectRef<Machine>> {
    let machines = &ctx.informers.machines.store;
    let clusters = &ctx.informers.clusters.store;
    let in_lc = |m: &Machine| {
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        clusters.get(&ObjectRef::new(&m.spec.cluster_name).within(ns)).is_some_and(|c| logical_cluster(&c) == Some(lc))
    };
    let annotations = n.metadata.annotations.as_ref();
    let named = |k: &str| annotations.and_then(|a| a.get(k));
    if let (Some(ns), Some(name)) = (named(NODE_CLUSTER_NAMESPACE_ANNOTATION), named(NODE_MACHINE_ANNOTATION)) {
        let r = ObjectRef::new(name).within(ns);
        if machines.get(&r).is_some_and(|m| in_lc(&m)) {
            return Some(r);
        }
    }
    let pid = n.spec.as_ref().and_then(|s| s.provider_id.as_deref())?;
    let of = |key: &str| key.split_once('/').and_then(|(ns, m)| machines.get(&ObjectRef::new(m).within(ns)));
    by_provider
        .members(PROVIDER_KEYS, pid, |k| of(k).is_some_and(|m| m.spec.provider_id.as_deref() == Some(pid)))
        .iter()
        .filter_map(|k| of(k))
        .find(|m| in_lc(m))
        .map(|m| ObjectRef::from_obj(m.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(lc: &str, name: &str, pid: &str, rv: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "resourceVersion": rv, "annotations": {CLUSTER_ANNOTATION: lc},
                         "managedFields": [{"manager": "x"}]},
            "spec": {"providerID": pid},
        }))
        .expect("node")
    }

    /// A store that is never started (its client points nowhere).
    pub(crate) fn offline() -> Arc<WorkloadNodes> {
        let url = "http://127.0.0.1:9".parse().expect("url");
        WorkloadNodes::new(kube::Client::try_from(kube::Config::new(url)).expect("client"))
    }

    #[tokio::test]
    async fn keyed_by_cluster_and_provider_id() {
        let w = offline();
        w.load(vec![node("a", "n1", "p://1", "1"), node("b", "n1", "p://1", "2"), node("a", "n2", "p://2", "3")]);
        assert!(w.ready_within(Duration::from_millis(1)).await);
        assert_eq!(w.get("a", "n1").and_then(|n| n.metadata.resource_version.clone()).as_deref(), Some("1"));
        assert_eq!(w.get("b", "n1").and_then(|n| n.metadata.resource_version.clone()).as_deref(), Some("2"));
        assert!(w.get("a", "n1").is_some_and(|n| n.metadata.managed_fields.is_none()));
        assert!(matches!(w.by_provider_id("a", "p://2"), Found::One(n) if n.metadata.name.as_deref() == Some("n2")));
        assert!(matches!(w.by_provider_id("b", "p://2"), Found::None));
        assert!(matches!(w.by_provider_id("c", "p://2"), Found::None));

        // A relist reports what changed or vanished, and a Node whose providerID changed
        // moves in the index.
        let mut sub = w.subscribe();
        let mut fresh: HashMap<String, NodesOfCluster> = HashMap::new();
        fresh.entry("a".into()).or_default().insert(Arc::new(node("a", "n1", "p://1", "1")));
        fresh.entry("a".into()).or_default().insert(Arc::new(node("a", "n2", "p://1", "4")));
        let changed = w.replace_all(fresh);
        w.publish(changed);
        let mut names = Vec::new();
        for _ in 0..2 {
            let n = sub.next().await.expect("event");
            names.push(format!(
                "{}/{}",
                logical_cluster_of(&n).unwrap_or_default(),
                n.metadata.name.clone().unwrap_or_default()
            ));
        }
        names.sort();
        assert_eq!(names, ["a/n2", "b/n1"]);
        assert!(matches!(w.by_provider_id("a", "p://1"), Found::Conflict(v) if v == ["n1", "n2"]));
        assert!(matches!(w.by_provider_id("a", "p://2"), Found::None));
        assert!(w.get("b", "n1").is_none());
    }
}
