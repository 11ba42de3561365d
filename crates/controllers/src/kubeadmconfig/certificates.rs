//! The cluster certificates a config needs before its bootstrap data (upstream's lookups
//! when rendering init, control plane join and worker join data): the cluster CA Secret
//! `<cluster>-ca` must exist. Control plane nodes get the CA files ([`super::render`]);
//! workers pin the CA's public key hash in join discovery. For a Cluster without a control
//! plane provider the init config generates the missing certificates itself, as their
//! controller; otherwise the control plane provider does, and configs wait for them.
//!
//! What configs need of the CA (its pin, and the key join tokens derive from) is remembered
//! per Cluster, so later configs read no Secret; it is forgotten when the Cluster is being
//! deleted.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::condition_types::{
    CERTIFICATES_AVAILABLE, DATA_SECRET_AVAILABLE, WAITING_FOR_CONTROL_PLANE_AVAILABLE,
};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::kubeadm::v1beta2::KubeadmConfig;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::Api;
use parking_lot::Mutex;

use super::CONTROLLER;
use super::kubeadm::Mode;
use crate::Context;
use crate::framework::certificates::{Generator, Purpose, ca_cert_hash, lookup_or_generate, read_ca};
use crate::framework::write::controller_ref_of;
use crate::framework::{Error, Result};

/// v1beta1 reasons of `CertificatesAvailable` (upstream's).
pub const CERTIFICATES_GENERATION_FAILED: &str = "CertificatesGenerationFailed";
pub const CERTIFICATES_CORRUPTED: &str = "CertificatesCorrupted";
/// The v1beta1 reason while the control plane provider has not created the CA yet.
pub const WAITING_FOR_CLUSTER_CERTIFICATES: &str = "WaitingForClusterCertificates";
/// How soon to look again for a missing CA (Secrets are not watched).
pub const RECHECK: Duration = Duration::from_secs(10);

/// What the configs of a cluster need of its CA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct KnownCa {
    /// kubeadm's pin of the CA (`sha256:<hex>`) for join discovery.
    pub pin: String,
    /// The CA's private key (PEM), which join tokens derive from; `None` when the CA
    /// Secret holds no key.
    pub key: Option<Arc<str>>,
}

/// The [`KnownCa`] per `(namespace, cluster)`.
#[derive(Default)]
pub(super) struct KnownCas(Mutex<HashMap<(String, String), KnownCa>>);

impl KnownCas {
    pub fn forget(&self, namespace: &str, cluster: &str) {
        let mut known = self.0.lock();
        if !known.is_empty() {
            known.remove(&(namespace.to_string(), cluster.to_string()));
        }
    }
}

/// Whether a config in `mode` generates the cluster certificates (upstream: the init config
/// of a Cluster without a control plane provider).
pub(super) fn generates(mode: Mode, cluster: &Cluster) -> bool {
    mode == Mode::Init && cluster.spec.control_plane_ref.is_none()
}

/// The cluster CA, after generating the cluster certificates when this config is the one
/// to (`generates`); `None` while the CA does not exist.
pub(super) async fn lookup(
    ctx: &Context,
    known: &KnownCas,
    (config, cluster): (&KubeadmConfig, &Cluster),
    generates: bool,
) -> Result<Option<KnownCa>> {
    let ns = config.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let key = (ns.clone(), name.clone());
    if !generates && let Some(ca) = known.0.lock().get(&key) {
        return Ok(Some(ca.clone()));
    }
    let api: Api<Secret> = ctx.api(&ns);
    if generates {
        let generator = Generator { controller: CONTROLLER, owner: controller_ref_of(config)?, adopt: false };
        let external_etcd = config
            .spec
            .cluster_configuration
            .as_ref()
            .and_then(|c| c.etcd.as_ref())
            .is_some_and(|e| e.external.is_some());
        lookup_or_generate(&api, &ns, &name, &Purpose::control_plane(external_etcd), &generator).await?;
    }
    let Some((cert, key_pem)) = read_ca(&api, &name).await? else {
        return Ok(None);
    };
    let ca = KnownCa { pin: ca_cert_hash(&cert)?, key: key_pem.map(Arc::from) };
    known.0.lock().insert(key, ca.clone());
    Ok(Some(ca))
}

/// Records that the config waits for the cluster CA.
pub(super) fn mark_waiting(c: &mut KubeadmConfig, cluster: &str, now: &Time) {
    let message = format!("Waiting for Secret {}", Purpose::ClusterCa.secret_name(cluster));
    c.mark_false(CERTIFICATES_AVAILABLE, WAITING_FOR_CLUSTER_CERTIFICATES, Severity::Info, &message, now.clone());
    c.mark_false(DATA_SECRET_AVAILABLE, WAITING_FOR_CONTROL_PLANE_AVAILABLE, Severity::Info, &message, now.clone());
}

/// Records that the certificates could not be generated (`generating`) or read.
pub(super) fn mark_failed(c: &mut KubeadmConfig, generating: bool, e: &Error, now: &Time) {
    let (reason, severity) = if generating {
        (CERTIFICATES_GENERATION_FAILED, Severity::Warning)
    } else {
        (CERTIFICATES_CORRUPTED, Severity::Error)
    };
    c.mark_false(CERTIFICATES_AVAILABLE, reason, severity, &e.to_string(), now.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::certificates::{SECRET_TYPE, secret_for};
    use crate::framework::fake_api::FakeSecrets;
    use drydock_api::capi::common::ContractVersionedObjectReference;
    use drydock_api::pki::Authority;

    fn objects(control_plane_ref: bool) -> (KubeadmConfig, Cluster) {
        let mut config = KubeadmConfig::new("m1", Default::default());
        config.metadata.namespace = Some("ns".into());
        config.metadata.uid = Some("config-uid".into());
        let mut cluster = Cluster::new("c1", Default::default());
        cluster.metadata.namespace = Some("ns".into());
        if control_plane_ref {
            cluster.spec.control_plane_ref = Some(ContractVersionedObjectReference {
                api_group: "controlplane.cluster.x-k8s.io".into(),
                kind: "KubeadmControlPlane".into(),
                name: "cp".into(),
            });
        }
        (config, cluster)
    }

    #[tokio::test]
    async fn workers_wait_for_the_ca_then_know_it_without_reading_again() {
        let fake = FakeSecrets::new();
        let ctx = fake.context(None);
        let known = KnownCas::default();
        let (config, cluster) = objects(true);
        let subject = (&config, &cluster);
        let generates = |mode| super::generates(mode, &cluster);
        let worker = generates(Mode::Join { control_plane: false });
        assert_eq!(lookup(&ctx, &known, subject, worker).await.expect("looked"), None);
        let init = generates(Mode::Init);
        assert_eq!(lookup(&ctx, &known, subject, init).await.expect("looked"), None, "the provider makes it");
        assert_eq!(fake.count("POST"), 0);

        let ca = Authority::generate("kubernetes").expect("CA");
        let pair = drydock_api::pki::KeyAndCert { cert_pem: ca.cert_pem().into(), key_pem: ca.key_pem().into() };
        fake.insert(secret_for("ns", "c1", Purpose::ClusterCa, &pair, Default::default()));
        let found = lookup(&ctx, &known, subject, worker).await.expect("looked").expect("the CA");
        assert_eq!(found.pin, ca_cert_hash(ca.cert_pem()).expect("hash"));
        assert_eq!(found.key.as_deref(), Some(ca.key_pem()), "join tokens derive from its key");
        let gets = fake.count("GET");
        let cp = generates(Mode::Join { control_plane: true });
        assert_eq!(lookup(&ctx, &known, subject, cp).await.expect("known"), Some(found.clone()));
        assert_eq!(fake.count("GET"), gets, "known: nothing read");
        known.forget("ns", "c1");
        lookup(&ctx, &known, subject, cp).await.expect("looked");
        assert_eq!(fake.count("GET"), gets + 1);

        let mut c = config.clone();
        mark_waiting(&mut c, "c1", &ctx.clock().condition_time());
        let cond = c.get_condition(CERTIFICATES_AVAILABLE).expect("set");
        assert_eq!(cond.reason.as_deref(), Some(WAITING_FOR_CLUSTER_CERTIFICATES));
        assert_eq!(cond.message.as_deref(), Some("Waiting for Secret c1-ca"));
    }

    #[tokio::test]
    async fn an_init_config_without_a_control_plane_provider_generates_them() {
        let fake = FakeSecrets::new();
        let ctx = fake.context(None);
        let (config, cluster) = objects(false);
        let generates = super::generates(Mode::Init, &cluster);
        let found = lookup(&ctx, &KnownCas::default(), (&config, &cluster), generates).await.expect("generated");
        let pin = found.expect("the CA").pin;
        for name in ["c1-ca", "c1-etcd", "c1-proxy", "c1-sa"] {
            let s = fake.get("ns", name).expect("generated");
            assert_eq!(s.type_.as_deref(), Some(SECRET_TYPE));
            let owner = s.metadata.owner_references.unwrap_or_default();
            assert_eq!((owner[0].kind.as_str(), owner[0].uid.as_str()), ("KubeadmConfig", "config-uid"));
        }
        let ca = crate::framework::certificates::text(&fake.get("ns", "c1-ca").expect("CA"), "tls.crt")
            .map(String::from)
            .expect("a certificate");
        assert_eq!(pin, ca_cert_hash(&ca).expect("hash"));
    }
}
