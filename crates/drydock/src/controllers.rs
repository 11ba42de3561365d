//! The Cluster API controllers and the in-memory provider, started either in-process beside
//! drydock's API server (`drydock up`) or on their own against the API server a kubeconfig
//! names (`drydock controllers`).

use std::sync::Arc;

use crate::api_faults::ApiFaults;
use anyhow::Context as _;
use drydock_api::tenancy::{LogicalClusterName, TENANCY_GROUP};
use drydock_apiserver::ApiServer;
use drydock_apiserver::auth::UserInfo;
use drydock_controllers::workload::{LocalConnector, WorkloadClients};
use drydock_controllers::{Component, Context, Settings};
use drydock_provider_inmemory::{Host, ProviderContext};
use tokio::task::JoinHandle;

/// Starts the controllers and the provider in-process: every client, the workload
/// clusters' included, calls `server` without a connection.
/// `endpoint` (host, port) is where the workload clusters' API endpoints are advertised.
/// On the management cluster each component (core, kubeadm bootstrap, kubeadm control
/// plane, IPAM, the provider) acts as its own user, allowed what its role grants, and their
/// shared caches read as `system:drydock:controller-manager`; in a workload cluster they act
/// as its administrator, as the cluster's kubeconfig would make them. The provider's
/// simulated machines (`Host`) act as the server. With `faults` (chaos runs), the
/// controllers' calls to the management and workload clusters go through them.
pub fn start_in_process(
    server: &Arc<ApiServer>,
    endpoint: (String, u16),
    settings: Settings,
    faults: Option<Arc<ApiFaults>>,
) -> JoinHandle<()> {
    let as_user = |user: UserInfo| match &faults {
        Some(f) => f.wrap(server.client_as(None, user)),
        None => server.client_as(None, user),
    };
    let cache = as_user(UserInfo::controller_cache());
    let srv = server.clone();
    let cut_off = faults.clone();
    // Workload clusters hosted by this very server are reached in-process. They are
    // recognised by their logical cluster path, not the port: a restart on another port
    // leaves older kubeconfig secrets pointing at the previous one.
    let local: LocalConnector = Arc::new(move |url: &str| {
        let name = LogicalClusterName::from_url(url)?;
        srv.hosts(&name).then(|| match &cut_off {
            Some(f) => f.wrap_cluster(srv.client(Some(&name)), name.as_str()),
            None => srv.client(Some(&name)),
        })
    });
    let ctx = Context::with_workload_nodes(
        cache.clone(),
        WorkloadClients::new(cache, Some(local)),
        settings,
        Some(server.client_as(Some(&LogicalClusterName::wildcard()), UserInfo::controller_cache())),
    );
    // The simulated machines write into their workload clusters what those clusters' own
    // components (kubelet, kubeadm, etcd) would: as the server itself, not as a manager.
    let host = Host { client: server.client(None), endpoint_host: endpoint.0, endpoint_port: endpoint.1 };
    spawn(&ctx, host, |c| ctx.acting_as(as_user(UserInfo::component(c))))
}

/// Starts the controllers and the provider against the API server `config` names. On a
/// drydock API server the workload clusters' Nodes are watched through `/clusters/*` and
/// the provider hosts its workload clusters there; another API server has no logical
/// clusters, so the provider's clusters cannot come up (said in the log).
pub async fn start_remote(config: kube::Config, settings: Settings) -> anyhow::Result<JoinHandle<()>> {
    let url = config.cluster_url.clone();
    let mgmt = kube::Client::try_from(config.clone()).context("building the API client")?;
    let hosts_clusters =
        serves_logical_clusters(&mgmt).await.with_context(|| format!("reading the API groups of {url}"))?;
    let nodes = if hosts_clusters {
        let mut all = config;
        let base = url.to_string();
        all.cluster_url = format!("{}{}", base.trim_end_matches('/'), LogicalClusterName::wildcard().path())
            .parse()
            .context("the URL of every workload cluster")?;
        Some(kube::Client::try_from(all).context("building the workload clusters' client")?)
    } else {
        tracing::warn!(
            server = %url,
            "the API server serves no logical clusters ({TENANCY_GROUP}): the in-memory provider's workload clusters need a drydock API server"
        );
        None
    };
    let ctx = Context::with_workload_nodes(mgmt.clone(), WorkloadClients::new(mgmt.clone(), None), settings, nodes);
    let secure = url.scheme_str() == Some("https");
    let host = Host {
        client: mgmt,
        endpoint_host: url.host().unwrap_or("127.0.0.1").trim_matches(['[', ']']).to_string(),
        endpoint_port: url.port_u16().unwrap_or(if secure { 443 } else { 80 }),
    };
    // One kubeconfig, one identity: every component acts as its user.
    Ok(spawn(&ctx, host, |_| ctx.clone()))
}

/// Starts the components' controllers and the provider's, each on the context `as_` gives
/// it, sharing `ctx`'s caches.
fn spawn(ctx: &Arc<Context>, host: Host, as_: impl Fn(Component) -> Arc<Context>) -> JoinHandle<()> {
    let provider = Arc::new(ProviderContext { ctx: as_(Component::InMemory), host });
    let mut controllers = drydock_controllers::controllers(&as_);
    controllers.extend(drydock_provider_inmemory::controllers(provider));
    tokio::spawn(drydock_controllers::start(ctx.clone(), controllers))
}

/// Whether the server's discovery lists drydock's tenancy group (logical clusters).
async fn serves_logical_clusters(client: &kube::Client) -> Result<bool, kube::Error> {
    let groups = client.list_api_groups().await?;
    Ok(groups.groups.iter().any(|g| g.name == TENANCY_GROUP))
}
