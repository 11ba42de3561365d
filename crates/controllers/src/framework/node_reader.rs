//! Reading a workload cluster's Nodes: from the cross-cluster Node store when it covers the
//! cluster (its changes trigger reconciles), else from the cluster's API.

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::nodes::{Found, WorkloadNodes, logical_cluster};
use super::{Error, Result};
use crate::Context;

/// How long a reconcile waits for the cross-cluster Node watch to load at startup before
/// reading the workload cluster directly.
const STORE_WAIT: Duration = Duration::from_secs(5);

/// Where a Machine's Node is read from.
pub enum NodeReader {
    /// The cross-cluster Node store; its changes trigger reconciles.
    Watched { nodes: Arc<WorkloadNodes>, cluster: String },
    /// The workload cluster's API; nothing reports changes.
    Api(Box<Api<Node>>),
}

impl NodeReader {
    /// The Node store when it covers this Cluster's workload cluster, else its API.
    pub async fn of(ctx: &Context, cluster: &Cluster) -> Result<Self> {
        if let (Some(nodes), Some(lc)) = (ctx.informers.nodes.as_ref(), logical_cluster(cluster))
            && nodes.ready_within(STORE_WAIT).await
        {
            return Ok(Self::Watched { nodes: nodes.clone(), cluster: lc.to_string() });
        }
        Ok(Self::Api(Box::new(workload_nodes(ctx, cluster).await?)))
    }

    pub fn is_watched(&self) -> bool {
        matches!(self, Self::Watched { .. })
    }

    /// When to look again while waiting for a Node change: never with a watch (its events
    /// trigger), else after `every`.
    pub fn recheck(&self, every: Duration) -> Option<Duration> {
        (!self.is_watched()).then_some(every)
    }

    pub async fn get(&self, name: &str) -> Result<Option<Arc<Node>>> {
        match self {
            Self::Watched { nodes, cluster } => Ok(nodes.get(cluster, name)),
            Self::Api(api) => Ok(api.get_opt(name).await?.map(Arc::new)),
        }
    }

    /// The Node whose `spec.providerID` is `provider_id`; more than one is an error.
    pub async fn find(&self, provider_id: &str) -> Result<Option<Arc<Node>>> {
        match self {
            Self::Watched { nodes, cluster } => match nodes.by_provider_id(cluster, provider_id) {
                Found::None => Ok(None),
                Found::One(n) => Ok(Some(n)),
                Found::Conflict(names) => {
                    Err(Error::inconsistent(format!("Nodes {names:?}"), format!("all have providerID {provider_id:?}")))
                }
            },
            Self::Api(api) => Ok(find_by_provider_id(api, provider_id).await?.map(Arc::new)),
        }
    }

    /// The Machine's Node: by `status.nodeRef`, else by providerID.
    pub async fn of_machine(&self, m: &Machine) -> Result<Option<Arc<Node>>> {
        match (node_ref_name(m), m.spec.provider_id.as_deref()) {
            (Some(name), _) => self.get(name).await,
            (None, Some(pid)) => self.find(pid).await,
            (None, None) => Ok(None),
        }
    }

    /// The key of a Node among those a controller wrote (watched Nodes only).
    pub fn written_key(&self, name: &str) -> Option<String> {
        match self {
            Self::Watched { cluster, .. } => Some(format!("{cluster}/{name}")),
            Self::Api(_) => None,
        }
    }
}

/// The Node API of a Cluster's workload cluster (for writes, and reads without a watch).
pub async fn workload_nodes(ctx: &Context, cluster: &Cluster) -> Result<Api<Node>> {
    let client = ctx.workload.get(&cluster.namespace().unwrap_or_default(), &cluster.name_any()).await?;
    Ok(Api::all(client))
}

/// The Node whose `spec.providerID` is `provider_id`; more than one is an error.
pub async fn find_by_provider_id(nodes: &Api<Node>, provider_id: &str) -> Result<Option<Node>> {
    let selector = format!("spec.providerID={}", escape_field_value(provider_id));
    let mut list = nodes.list(&ListParams::default().fields(&selector)).await?.items;
    match list.len() {
        0 => Ok(None),
        1 => Ok(list.pop()),
        n => Err(Error::inconsistent(format!("{n} Nodes"), format!("all have providerID {provider_id:?}"))),
    }
}

/// Field selector values escape `\`, `,` and `=`.
fn escape_field_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The name in a Machine's `status.nodeRef`.
pub fn node_ref_name(m: &Machine) -> Option<&str> {
    m.node_name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selector_escaping() {
        assert_eq!(escape_field_value("in-memory://m1"), "in-memory://m1");
        assert_eq!(escape_field_value("a=b,c\\"), "a\\=b\\,c\\\\");
    }
}
