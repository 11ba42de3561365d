//! Rendering a config into bootstrap data: files and passwords read from their secrets (and
//! file templates rendered), the cluster CAs for control plane nodes, the kubeadm document,
//! then cloud-config or Ignition.

use drydock_api::capi::kubeadm::v1beta2::FileContentFormat;
use drydock_api::capi::kubeadm::{Format, User};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;

use super::kubeadm::{self, ClusterFacts, Mode};
use super::setup::{NodeSetup, SetupFile};
use super::{State, Subject, cloud_config, ignition, template};
use crate::framework::referenced::{self, Referenced};
use crate::framework::{Error, Result};

/// Bootstrap data ready to store.
pub(super) struct Rendered {
    pub value: String,
    pub format: &'static str,
    pub note: Option<String>,
}

/// `ca_pin` is the cluster CA's hash, pinned by join discovery.
/// `token` is the join token (init data carries a placeholder no node presents).
pub(super) async fn render(
    state: &State,
    subject: &Subject<'_>,
    mode: Mode,
    ca_pin: String,
    token: Option<&str>,
) -> Result<Rendered> {
    let Subject { config, machine, cluster } = *subject;
    let spec = &config.spec;
    let ns = config.namespace().unwrap_or_default();
    let secrets: Api<Secret> = state.ctx.api(&ns);
    let mut files = Vec::new();
    // Read once, and only when a file is a template.
    let mut control_plane_version = None;
    for (i, f) in spec.files.iter().flatten().enumerate() {
        let mut resolved = match &f.content_from {
            Some(src) => Some(secret_value(&secrets, &src.secret.name, &src.secret.key).await?),
            None => None,
        };
        if f.content_format == Some(FileContentFormat::Template) {
            if control_plane_version.is_none() {
                control_plane_version = Some(control_plane_version_of(state, &ns, cluster).await?);
            }
            let text = resolved.as_deref().or(f.content.as_deref()).unwrap_or_default();
            let rendered = template::render(text, control_plane_version.as_ref().and_then(|v| v.as_deref()))
                .map_err(|e| Error::InvalidSpec(format!("spec.files[{i}] ({}): {e}", f.path)))?;
            resolved = Some(rendered);
        }
        files.push(SetupFile::from_spec(f, resolved));
    }
    let mut users: Vec<User> = Vec::new();
    for u in spec.users.iter().flatten() {
        let mut u = u.clone();
        if let Some(src) = u.passwd_from.take() {
            u.passwd = Some(secret_value(&secrets, &src.secret.name, &src.secret.key).await?);
        }
        users.push(u);
    }
    if matches!(mode, Mode::Init | Mode::Join { control_plane: true }) {
        files.extend(certificates(&secrets, &cluster.name_any()).await?);
    }
    let endpoint = cluster
        .spec
        .control_plane_endpoint
        .as_ref()
        .filter(|e| e.is_valid())
        .map(|e| format!("{}:{}", e.host(), e.port()));
    let facts = ClusterFacts {
        cluster_name: cluster.name_any(),
        endpoint,
        network: cluster.spec.cluster_network.clone(),
        version: machine.spec.version.clone(),
        token: match token {
            Some(t) => t.to_string(),
            None => kubeadm::placeholder_token(cluster.uid().as_deref().unwrap_or(&cluster.name_any())),
        },
        ca_cert_hash: Some(ca_pin),
    };
    let (path, content, command) = kubeadm::document(spec, mode, &facts)?;
    files.push(SetupFile::new(&path, "0640", content));
    let setup = NodeSetup::new(spec, files, users, command);
    Ok(match spec.format.unwrap_or_default() {
        Format::CloudConfig => Rendered { value: cloud_config::render(&setup), format: "cloud-config", note: None },
        Format::Ignition => {
            let additional = spec
                .ignition
                .as_ref()
                .and_then(|i| i.container_linux_config.as_ref())
                .and_then(|c| c.additional_config.as_deref());
            let (value, note) = ignition::render(&setup, additional);
            Rendered { value, format: "ignition", note }
        }
    })
}

/// `spec.version` of the Cluster's control plane object, when it has one.
async fn control_plane_version_of(
    state: &State,
    ns: &str,
    cluster: &drydock_api::capi::core::v1beta2::Cluster,
) -> Result<Option<String>> {
    let Some(r) = cluster.spec.control_plane_ref.as_ref() else {
        return Ok(None);
    };
    Ok(match referenced::read_versioned(&state.ctx, ns, r).await? {
        Some(Referenced::KubeadmControlPlane(kcp)) => Some(kcp.spec.version.clone()),
        Some(Referenced::Dynamic(o)) => o.data.pointer("/spec/version").and_then(|v| v.as_str()).map(String::from),
        _ => None,
    }
    .filter(|v| !v.is_empty()))
}

async fn secret_value(secrets: &Api<Secret>, name: &str, key: &str) -> Result<String> {
    let secret = secrets.get_opt(name).await?.ok_or_else(|| Error::Missing(format!("secret {name}")))?;
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| b.0.clone())
        .or_else(|| secret.string_data.as_ref().and_then(|d| d.get(key)).map(|s| s.clone().into_bytes()))
        .ok_or_else(|| Error::Missing(format!("key {key:?} of secret {name}")))?;
    String::from_utf8(bytes).map_err(|_| Error::inconsistent(format!("key {key:?} of secret {name}"), "not UTF-8"))
}

/// The cluster CAs a control plane node needs, from the `<cluster>-{ca,etcd,proxy,sa}`
/// secrets the control plane provider creates (the CA's existence was checked before; a
/// cluster that lost it since gets none: one GET, not four).
async fn certificates(secrets: &Api<Secret>, cluster: &str) -> Result<Vec<SetupFile>> {
    const PKI: &str = "/etc/kubernetes/pki";
    let sets = [
        ("ca", format!("{PKI}/ca.crt"), format!("{PKI}/ca.key")),
        ("etcd", format!("{PKI}/etcd/ca.crt"), format!("{PKI}/etcd/ca.key")),
        ("proxy", format!("{PKI}/front-proxy-ca.crt"), format!("{PKI}/front-proxy-ca.key")),
        ("sa", format!("{PKI}/sa.pub"), format!("{PKI}/sa.key")),
    ];
    let mut files = Vec::new();
    for (suffix, cert_path, key_path) in sets {
        let Some(secret) = secrets.get_opt(&format!("{cluster}-{suffix}")).await? else {
            if suffix == "ca" {
                return Ok(files);
            }
            continue;
        };
        let data = secret.data.unwrap_or_default();
        let text = |k: &str| data.get(k).and_then(|b| String::from_utf8(b.0.clone()).ok());
        if let Some(cert) = text("tls.crt") {
            files.push(SetupFile::new(&cert_path, "0640", cert));
        }
        if let Some(key) = text("tls.key") {
            files.push(SetupFile::new(&key_path, "0600", key));
        }
    }
    Ok(files)
}
