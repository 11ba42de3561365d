//! Clients for workload clusters, found as upstream does: through the
//! `<cluster>-kubeconfig` Secret next to the Cluster. Clients are cached per cluster so one
//! slow or unreachable workload cluster never blocks reconciles of another.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};
use parking_lot::Mutex;

use crate::framework::{Error, Result};

/// Resolves a kubeconfig server URL to an in-process client when the URL is the local
/// drydock API server (avoids TCP for simulated workload clusters).
pub type LocalConnector = Arc<dyn Fn(&str) -> Option<kube::Client> + Send + Sync>;

/// Annotation carrying the URL path of a workload cluster's API server when it shares a
/// host and port with others (drydock's logical clusters: `/clusters/<name>`). The
/// infrastructure cluster sets it next to `spec.controlPlaneEndpoint`; the Cluster
/// controller copies both to the Cluster; the control plane writes it into the kubeconfig.
pub use drydock_api::tenancy::ENDPOINT_PATH_ANNOTATION;

/// Name of the Secret holding a workload cluster's kubeconfig.
pub fn kubeconfig_secret_name(cluster: &str) -> String {
    format!("{cluster}-kubeconfig")
}

pub struct WorkloadClients {
    mgmt: kube::Client,
    local: Option<LocalConnector>,
    cache: Mutex<HashMap<(String, String), kube::Client>>,
}

impl WorkloadClients {
    pub fn new(mgmt: kube::Client, local: Option<LocalConnector>) -> Self {
        Self { mgmt, local, cache: Mutex::new(HashMap::new()) }
    }

    /// A client for the workload cluster `namespace/cluster`.
    pub async fn get(&self, namespace: &str, cluster: &str) -> Result<kube::Client> {
        let key = (namespace.to_string(), cluster.to_string());
        if let Some(c) = self.cache.lock().get(&key) {
            return Ok(c.clone());
        }
        let unreachable =
            |reason: String| Error::WorkloadUnreachable { cluster: format!("{namespace}/{cluster}"), reason };
        let secrets: Api<Secret> = Api::namespaced(self.mgmt.clone(), namespace);
        let secret = secrets
            .get_opt(&kubeconfig_secret_name(cluster))
            .await?
            .ok_or_else(|| unreachable("its kubeconfig secret does not exist yet".into()))?;
        let data = secret
            .data
            .as_ref()
            .and_then(|d| d.get("value"))
            .ok_or_else(|| unreachable("its kubeconfig secret has no `value` key".into()))?;
        let text = String::from_utf8(data.0.clone()).map_err(|_| unreachable("kubeconfig is not UTF-8".into()))?;
        let kc = Kubeconfig::from_yaml(&text).map_err(|e| unreachable(format!("kubeconfig does not parse: {e}")))?;
        let server =
            kc.clusters.first().and_then(|c| c.cluster.as_ref()).and_then(|c| c.server.clone()).unwrap_or_default();
        let client = match self.local.as_ref().and_then(|f| f(&server)) {
            Some(c) => c,
            None => {
                let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                    .await
                    .map_err(|e| unreachable(format!("kubeconfig is unusable: {e}")))?;
                kube::Client::try_from(config).map_err(|e| unreachable(e.to_string()))?
            }
        };
        self.cache.lock().insert(key, client.clone());
        Ok(client)
    }

    /// Drops the cached client (the cluster was deleted or its kubeconfig changed).
    pub fn forget(&self, namespace: &str, cluster: &str) {
        self.cache.lock().remove(&(namespace.to_string(), cluster.to_string()));
    }
}
