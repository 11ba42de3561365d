//! The `<cluster>-kubeconfig` Secret through which every controller reaches the workload
//! cluster. Simulated clusters are served by drydock itself over plain HTTP, so the
//! kubeconfig has a server URL and no credentials (no certificates are generated: upstream
//! paid for RSA key generation in every reconcile at scale).

use std::collections::{BTreeMap, HashMap};

use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::owner::controller_ref;
use drydock_api::tenancy::KubeconfigFor;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use parking_lot::Mutex;
use serde_json::json;

use crate::Context;
use crate::framework::{Error, Result, write};
use crate::workload::{ENDPOINT_PATH_ANNOTATION, kubeconfig_secret_name};

/// Secret type of Cluster API's generated secrets.
pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// The API server URL of a Cluster: its control plane endpoint plus the endpoint path the
/// infrastructure published (drydock's `/clusters/<name>`). `None` until the endpoint is set.
pub fn server_url(cluster: &Cluster) -> Option<String> {
    let ep = cluster.spec.control_plane_endpoint.as_ref()?;
    if !ep.is_valid() {
        return None;
    }
    let path = cluster.annotations().get(ENDPOINT_PATH_ANNOTATION).map(String::as_str).unwrap_or_default();
    let host = ep.host();
    let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_string() };
    Some(format!("http://{host}:{}{path}", ep.port()))
}

/// A kubeconfig for `cluster` at `server`.
pub fn render(cluster: &str, server: &str) -> String {
    let user = format!("{cluster}-admin");
    let context = format!("{user}@{cluster}");
    KubeconfigFor { server, cluster, user: &user, context: &context, namespace: None, ..Default::default() }.to_yaml()
}

/// Servers already written per `(namespace, cluster)`, so a steady-state reconcile does not
/// read the Secret again.
#[derive(Default)]
pub struct Servers(Mutex<HashMap<(String, String), String>>);

/// Creates the kubeconfig Secret, or rewrites it when the server moved. Returns true when
/// it wrote something.
pub async fn ensure(
    ctx: &Context,
    servers: &Servers,
    controller: &str,
    kcp: &KubeadmControlPlane,
    cluster: &Cluster,
    server: &str,
) -> Result<bool> {
    let ns = kcp.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let key = (ns.clone(), name.clone());
    if servers.0.lock().get(&key).map(String::as_str) == Some(server) {
        return Ok(false);
    }
    let api: Api<Secret> = ctx.api(&ns);
    let secret_name = kubeconfig_secret_name(&name);
    let value = ByteString(render(&name, server).into_bytes());
    let wrote = match api.get_opt(&secret_name).await? {
        None => {
            let mut s = Secret {
                type_: Some(SECRET_TYPE.to_string()),
                data: Some(BTreeMap::from([("value".to_string(), value)])),
                ..Default::default()
            };
            s.metadata.name = Some(secret_name.clone());
            s.metadata.namespace = Some(ns.clone());
            s.metadata.labels = Some(BTreeMap::from([(CLUSTER_NAME_LABEL.to_string(), name.clone())]));
            s.metadata.owner_references = controller_ref(kcp).map(|r| vec![r]);
            match write::create(&api, controller, &s).await {
                Ok(_) => true,
                Err(kube::Error::Api(e)) if e.code == 409 => false,
                Err(e) => return Err(Error::during(format!("creating {secret_name}"))(e)),
            }
        }
        Some(s) if s.data.as_ref().and_then(|d| d.get("value")) == Some(&value) => false,
        Some(_) => {
            let patch = json!({"data": {"value": value}});
            write::merge_patch(&api, controller, &secret_name, &patch)
                .await
                .map_err(Error::during(format!("updating {secret_name}")))?;
            // Clients built from the old kubeconfig point at the old server.
            ctx.workload.forget(&ns, &name);
            true
        }
    };
    servers.0.lock().insert(key, server.to_string());
    Ok(wrote)
}

/// Forgets what was written for a cluster (its control plane is gone).
pub fn forget(servers: &Servers, namespace: &str, cluster: &str) {
    servers.0.lock().remove(&(namespace.to_string(), cluster.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::APIEndpoint;
    use kube::config::Kubeconfig;

    #[test]
    fn urls_and_rendering() {
        let mut c = Cluster::new("c", Default::default());
        assert_eq!(server_url(&c), None);
        c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("10.0.0.1".into()), port: None });
        assert_eq!(server_url(&c), None, "no port: not an endpoint yet");
        c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("127.0.0.1".into()), port: Some(6443) });
        assert_eq!(server_url(&c).as_deref(), Some("http://127.0.0.1:6443"));
        c.annotations_mut().insert(ENDPOINT_PATH_ANNOTATION.into(), "/clusters/ns.c".into());
        assert_eq!(server_url(&c).as_deref(), Some("http://127.0.0.1:6443/clusters/ns.c"));
        c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("::1".into()), port: Some(80) });
        assert_eq!(server_url(&c).as_deref(), Some("http://[::1]:80/clusters/ns.c"));

        let kc = Kubeconfig::from_yaml(&render("c", "http://127.0.0.1:6443/clusters/ns.c")).unwrap();
        let server = kc.clusters[0].cluster.as_ref().unwrap().server.clone();
        assert_eq!(server.as_deref(), Some("http://127.0.0.1:6443/clusters/ns.c"));
        assert_eq!(kc.current_context.as_deref(), Some("c-admin@c"));
    }
}
