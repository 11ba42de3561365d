//! The `<cluster>-kubeconfig` Secret through which every controller reaches the workload
//! cluster (upstream's `reconcileKubeconfig`): cluster `<cluster>` at
//! `https://<endpoint><path>` with the cluster CA, and for a drydock logical cluster the TLS
//! server name by which the server picks that cluster's serving certificate; user
//! `<cluster>-admin` with a client certificate `CN=kubernetes-admin, O=system:masters` signed
//! by the cluster CA; context `<cluster>-admin@<cluster>`.
//!
//! Rewritten when the server moved or the client certificate expires within
//! [`RENEW_BEFORE`], and only while it is a generated secret (`cluster.x-k8s.io/secret`)
//! controlled by this control plane: any other is the user's, never touched. What was
//! written is remembered (server, renewal time), so a steady-state reconcile reads nothing.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::owner::is_controlled_by;
use drydock_api::pki::{Authority, Certificate, Leaf, PkiError};
use drydock_api::tenancy::{KubeconfigFor, LogicalClusterName};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::config::Kubeconfig;
use parking_lot::Mutex;
use serde_json::json;

use crate::Context;
use crate::framework::certificates::{self, SECRET_TYPE};
use crate::framework::write::{self, controller_ref_of};
use crate::framework::{Error, Result};
use crate::workload::{ENDPOINT_PATH_ANNOTATION, kubeconfig_secret_name};

/// A client certificate expiring sooner than this is renewed (upstream's
/// `ClientCertificateRenewalDuration`: half a year).
pub const RENEW_BEFORE: Duration = Duration::from_secs(365 * 24 * 3600 / 2);
/// The user the kubeconfig's client certificate names, and its group.
pub const ADMIN_USER: &str = "kubernetes-admin";
pub const ADMIN_GROUP: &str = "system:masters";

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
    Some(format!("https://{host}:{}{path}", ep.port()))
}

/// The TLS server name of the workload cluster a server URL addresses, when it addresses
/// one of drydock's logical clusters.
pub fn tls_server_name(server: &str) -> Option<String> {
    LogicalClusterName::from_url(server).filter(|lc| lc.workload_cluster().is_some()).map(|lc| lc.tls_server_name())
}

/// A kubeconfig with a new client certificate.
pub struct Rendered {
    pub yaml: String,
    /// When the client certificate expires.
    pub not_after: Timestamp,
}

/// A kubeconfig for `cluster` at `server`, trusting and authenticated by `ca`.
pub fn render(cluster: &str, server: &str, ca: &Authority) -> Result<Rendered, PkiError> {
    let client = ca.issue(&Leaf::client(ADMIN_USER, &[ADMIN_GROUP]))?;
    let not_after = expiry(&client.cert_pem)?;
    let user = format!("{cluster}-admin");
    let context = format!("{user}@{cluster}");
    let tls_server_name = tls_server_name(server);
    let yaml = KubeconfigFor {
        server,
        cluster,
        user: &user,
        context: &context,
        namespace: None,
        ca_pem: Some(ca.cert_pem()),
        tls_server_name: tls_server_name.as_deref(),
        client: Some(&client),
    }
    .to_yaml();
    Ok(Rendered { yaml, not_after })
}

fn expiry(cert_pem: &str) -> Result<Timestamp, PkiError> {
    let not_after = Certificate::from_pem(cert_pem)?.not_after;
    // Out of jiff's range only for absurd certificates: treat as expired (renewed).
    Ok(Timestamp::from_second(not_after).unwrap_or(Timestamp::MIN))
}

/// What is known of a cluster's kubeconfig Secret.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Known {
    server: String,
    /// When to renew its client certificate; `None` for a kubeconfig this control plane
    /// leaves alone.
    renew_at: Option<Timestamp>,
}

/// What is known per `(namespace, cluster)`.
#[derive(Default)]
pub struct Written(Mutex<HashMap<(String, String), Known>>);

/// What [`ensure`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub wrote: bool,
    /// When the client certificate is to be renewed (a reconcile is due then).
    pub renew_at: Option<Timestamp>,
}

/// Creates the kubeconfig Secret, or rewrites it when the server moved or its client
/// certificate is due for renewal.
pub async fn ensure(
    ctx: &Context,
    written: &Written,
    controller: &str,
    kcp: &KubeadmControlPlane,
    cluster: &Cluster,
    server: &str,
) -> Result<Outcome> {
    let ns = kcp.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let key = (ns.clone(), name.clone());
    let now = ctx.clock().now();
    if let Some(k) = written.0.lock().get(&key).filter(|k| k.server == server && k.renew_at.is_none_or(|t| now < t)) {
        return Ok(Outcome { wrote: false, renew_at: k.renew_at });
    }
    let api: Api<Secret> = ctx.api(&ns);
    let secret_name = kubeconfig_secret_name(&name);
    let existing = api.get_opt(&secret_name).await.map_err(Error::during(format!("reading Secret {secret_name}")))?;
    let target = Target { api: &api, controller, kcp, cluster: &name, secret_name: &secret_name, server, now };
    let known = match existing {
        None => match create(&target).await? {
            Some(renew_at) => Known { server: server.to_string(), renew_at: Some(renew_at) },
            // Created meanwhile by another writer: looked at next time.
            None => return Ok(Outcome { wrote: false, renew_at: None }),
        },
        Some(s) => match judge(&s, kcp, server, now) {
            Some(renew_at) => {
                let k = Known { server: server.to_string(), renew_at };
                written.0.lock().insert(key, k);
                return Ok(Outcome { wrote: false, renew_at });
            }
            None => {
                let renew_at = rewrite(&target).await?;
                // Clients built from the old kubeconfig have the old server or credentials.
                ctx.workload.forget(&ns, &name);
                Known { server: server.to_string(), renew_at: Some(renew_at) }
            }
        },
    };
    let renew_at = known.renew_at;
    written.0.lock().insert(key, known);
    Ok(Outcome { wrote: true, renew_at })
}

/// Forgets what was written for a cluster (its control plane is gone).
pub fn forget(written: &Written, namespace: &str, cluster: &str) {
    written.0.lock().remove(&(namespace.to_string(), cluster.to_string()));
}

/// Where a kubeconfig is written.
struct Target<'a> {
    api: &'a Api<Secret>,
    controller: &'a str,
    kcp: &'a KubeadmControlPlane,
    cluster: &'a str,
    secret_name: &'a str,
    server: &'a str,
    /// The controllers' clock's now.
    now: Timestamp,
}

impl Target<'_> {
    /// A kubeconfig signed by the cluster CA, as the Secret's `value`.
    async fn value(&self) -> Result<(ByteString, Timestamp)> {
        let ca = certificates::read_authority(self.api, self.cluster).await?.ok_or_else(|| {
            Error::Missing(format!("Secret {}", certificates::Purpose::ClusterCa.secret_name(self.cluster)))
        })?;
        let rendered = render(self.cluster, self.server, &ca)
            .map_err(Error::during(format!("rendering Secret {}", self.secret_name)))?;
        Ok((ByteString(rendered.yaml.into_bytes()), rendered.not_after))
    }
}

/// Whether an existing kubeconfig Secret stays as it is: `Some` with its renewal time
/// (`None` when it is not this control plane's to renew), or `None` when it is to be
/// rewritten (another server, a client certificate due for renewal, or unreadable).
fn judge(secret: &Secret, kcp: &KubeadmControlPlane, server: &str, now: Timestamp) -> Option<Option<Timestamp>> {
    if secret.type_.as_deref() != Some(SECRET_TYPE) || !is_controlled_by(&secret.metadata, kcp) {
        return Some(None);
    }
    let kc = certificates::text(secret, "value").and_then(|v| Kubeconfig::from_yaml(v).ok())?;
    let current = kc.clusters.first().and_then(|c| c.cluster.as_ref()).and_then(|c| c.server.as_deref());
    if current != Some(server) {
        return None;
    }
    // The soonest expiry of its client certificates; none at all is one to write.
    let renew_at = kc
        .auth_infos
        .iter()
        .filter_map(|a| a.auth_info.as_ref()?.client_certificate_data.as_deref())
        .map(|data| {
            let pem = BASE64.decode(data).ok()?;
            expiry(std::str::from_utf8(&pem).ok()?).ok()
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .min()?
        .checked_sub(SignedDuration::try_from(RENEW_BEFORE).ok()?)
        .ok()?;
    (now < renew_at).then_some(Some(renew_at))
}

/// Creates the Secret; returns when to renew it, or `None` when another writer created it.
async fn create(t: &Target<'_>) -> Result<Option<Timestamp>> {
    let (value, not_after) = t.value().await?;
    let mut s = Secret {
        type_: Some(SECRET_TYPE.to_string()),
        data: Some(BTreeMap::from([("value".to_string(), value)])),
        ..Default::default()
    };
    s.metadata.name = Some(t.secret_name.to_string());
    s.metadata.namespace = t.kcp.namespace();
    s.metadata.labels = Some(BTreeMap::from([(CLUSTER_NAME_LABEL.to_string(), t.cluster.to_string())]));
    s.metadata.owner_references = Some(vec![controller_ref_of(t.kcp)?]);
    match write::create(t.api, t.controller, &s).await {
        Ok(_) => Ok(Some(renewal(t.now, not_after))),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(None),
        Err(e) => Err(Error::during(format!("creating Secret {}", t.secret_name))(e)),
    }
}

/// Rewrites the Secret's kubeconfig in place; returns when to renew it.
async fn rewrite(t: &Target<'_>) -> Result<Timestamp> {
    let (value, not_after) = t.value().await?;
    let patch = json!({"data": {"value": value}});
    write::merge_patch(t.api, t.controller, t.secret_name, &patch)
        .await
        .map_err(Error::during(format!("updating Secret {}", t.secret_name)))?;
    Ok(renewal(t.now, not_after))
}

/// When to renew a client certificate just issued, on the controllers' clock: certificates
/// are dated by the system clock, so its remaining validity is counted from the clock's now
/// (the same instant unless tests moved the clock, which must not make every certificate
/// look due at once).
fn renewal(clock_now: Timestamp, not_after: Timestamp) -> Timestamp {
    let left = not_after.duration_since(Timestamp::now());
    SignedDuration::try_from(RENEW_BEFORE)
        .ok()
        .and_then(|d| clock_now.checked_add(left).ok()?.checked_sub(d).ok())
        .unwrap_or(Timestamp::MIN)
}

#[cfg(test)]
#[path = "kubeconfig_tests.rs"]
mod tests;
