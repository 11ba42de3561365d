//! The cluster certificates (`<cluster>-ca`, `-etcd`, `-proxy`, `-sa`), looked up or
//! generated as upstream's control plane does (its `LookupOrGenerate`) once the Cluster's
//! infrastructure is ready, before the kubeconfig and the first Machine: missing ones are
//! generated with the control plane as their controller, user-provided ones are used as
//! they are, and generated ones found with another controller are taken over.
//!
//! What is known to exist is remembered per cluster, so a steady-state reconcile reads no
//! Secret; [`forget`] drops it when the control plane goes.

use std::collections::HashSet;

use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::v1beta2_conditions::names::{CERTIFICATES_AVAILABLE, INTERNAL_ERROR_REASON};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::Api;
use parking_lot::Mutex;

use super::{CONTROLLER, State};
use crate::Context;
use crate::framework::certificates::{Generator, Purpose, lookup_or_generate};
use crate::framework::write::controller_ref_of;
use crate::framework::{Error, Result};

/// The v1beta1 reason of `CertificatesAvailable` when they could not be looked up or made.
pub const CERTIFICATES_GENERATION_FAILED: &str = "CertificatesGenerationFailed";

/// Clusters `(namespace, cluster)` whose certificates exist.
#[derive(Default)]
pub struct Known(Mutex<HashSet<(String, String)>>);

/// Makes sure the cluster's certificates exist. Returns the names of the secrets created.
pub async fn ensure(
    ctx: &Context,
    known: &Known,
    controller: &str,
    kcp: &KubeadmControlPlane,
    cluster: &str,
) -> Result<Vec<String>> {
    let ns = kcp.namespace().unwrap_or_default();
    let key = (ns.clone(), cluster.to_string());
    if known.0.lock().contains(&key) {
        return Ok(Vec::new());
    }
    let api: Api<Secret> = ctx.api(&ns);
    let generator = Generator { controller, owner: controller_ref_of(kcp)?, adopt: true };
    let purposes = Purpose::control_plane(kcp.spec.has_external_etcd());
    let created = lookup_or_generate(&api, &ns, cluster, &purposes, &generator).await?;
    known.0.lock().insert(key);
    Ok(created)
}

/// Forgets a cluster's certificates (its control plane is gone).
pub fn forget(known: &Known, namespace: &str, cluster: &str) {
    known.0.lock().remove(&(namespace.to_string(), cluster.to_string()));
}

/// Makes sure the cluster's certificates exist before anything needs them; when they cannot
/// be, says so on the control plane and fails the reconcile.
pub(super) async fn reconcile(
    s: &State,
    api: &Api<KubeadmControlPlane>,
    kcp: &KubeadmControlPlane,
    cluster: &str,
) -> Result<()> {
    let e = match ensure(&s.ctx, &s.certificates, CONTROLLER, kcp, cluster).await {
        Ok(created) => {
            if !created.is_empty() {
                tracing::debug!(cluster, secrets = ?created, "generated the cluster certificates");
            }
            return Ok(());
        }
        Err(e) => e,
    };
    let mut want = kcp.clone();
    mark_failed(&mut want, &e, &s.ctx.clock().condition_time());
    s.write(api, kcp, &want).await?;
    Err(e)
}

/// Records on the control plane that its certificates are unavailable because of `e`.
pub fn mark_failed(kcp: &mut KubeadmControlPlane, e: &Error, now: &Time) {
    let message = e.to_string();
    kcp.mark_false(
        drydock_api::capi::condition_types::CERTIFICATES_AVAILABLE,
        CERTIFICATES_GENERATION_FAILED,
        Severity::Warning,
        &message,
        now.clone(),
    );
    kcp.set_v1beta2(Observed::unknown(CERTIFICATES_AVAILABLE, INTERNAL_ERROR_REASON, message), now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::certificates::{SECRET_TYPE, TLS_CRT, TLS_KEY, authority, secret_for};
    use crate::framework::fake_api::FakeSecrets;
    use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
    use drydock_api::pki::{Authority, Certificate};

    fn control_plane() -> KubeadmControlPlane {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.metadata.namespace = Some("ns".into());
        kcp.metadata.uid = Some("kcp-uid".into());
        kcp
    }

    #[tokio::test]
    async fn generates_the_missing_certificates_as_upstream_names_them() {
        let fake = FakeSecrets::new();
        let ctx = fake.context(None);
        let (known, kcp) = (Known::default(), control_plane());
        let created = ensure(&ctx, &known, "test", &kcp, "c1").await.expect("generated");
        assert_eq!(created, ["c1-ca", "c1-etcd", "c1-proxy", "c1-sa"]);
        for (name, cn) in [("c1-ca", "kubernetes"), ("c1-etcd", "etcd-ca"), ("c1-proxy", "front-proxy-ca")] {
            let s = fake.get("ns", name).expect("created");
            assert_eq!(s.type_.as_deref(), Some(SECRET_TYPE));
            assert_eq!(
                s.metadata.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)).map(String::as_str),
                Some("c1")
            );
            let refs = s.metadata.owner_references.clone().unwrap_or_default();
            assert_eq!(refs.len(), 1);
            assert_eq!(
                (refs[0].kind.as_str(), refs[0].uid.as_str(), refs[0].controller),
                ("KubeadmControlPlane", "kcp-uid", Some(true))
            );
            let keys: Vec<&String> = s.data.as_ref().expect("data").keys().collect();
            assert_eq!(keys, [TLS_CRT, TLS_KEY]);
            let ca = authority(&s).expect("a usable CA");
            let cert = Certificate::from_pem(ca.cert_pem()).expect("parses");
            assert_eq!((cert.common_name.as_str(), cert.is_ca), (cn, true));
        }
        let sa = fake.get("ns", "c1-sa").expect("created");
        let text = |k: &str| String::from_utf8(sa.data.as_ref().expect("data")[k].0.clone()).expect("UTF-8");
        assert!(text(TLS_CRT).starts_with("-----BEGIN PUBLIC KEY-----"));
        assert!(text(TLS_KEY).contains("PRIVATE KEY-----"));

        // Known now: the next reconcile reads nothing.
        let gets = fake.count("GET");
        assert!(ensure(&ctx, &known, "test", &kcp, "c1").await.expect("known").is_empty());
        assert_eq!(fake.count("GET"), gets);
        // Forgotten (the control plane went): each create is refused as the Secret exists,
        // which is then read and used; none is replaced.
        let before: Vec<_> = ["c1-ca", "c1-etcd", "c1-proxy", "c1-sa"].map(|n| fake.get("ns", n)).into();
        forget(&known, "ns", "c1");
        assert!(ensure(&ctx, &known, "test", &kcp, "c1").await.expect("found").is_empty());
        assert_eq!((fake.count("GET"), fake.count("POST")), (gets + 4, 8));
        let after: Vec<_> = ["c1-ca", "c1-etcd", "c1-proxy", "c1-sa"].map(|n| fake.get("ns", n)).into();
        assert_eq!(before, after);
    }

    #[tokio::test]
    async fn uses_user_certificates_and_reports_a_bad_ca() {
        let fake = FakeSecrets::new();
        let ctx = fake.context(None);
        let (known, kcp) = (Known::default(), control_plane());
        let users_ca = Authority::generate("my-ca").expect("CA");
        let pair =
            drydock_api::pki::KeyAndCert { cert_pem: users_ca.cert_pem().into(), key_pem: users_ca.key_pem().into() };
        let mut s = secret_for("ns", "c1", Purpose::ClusterCa, &pair, Default::default());
        s.type_ = Some("Opaque".into());
        s.metadata.owner_references = None;
        fake.insert(s.clone());
        let created = ensure(&ctx, &known, "test", &kcp, "c1").await.expect("generated the others");
        assert_eq!(created, ["c1-etcd", "c1-proxy", "c1-sa"]);
        let kept = fake.get("ns", "c1-ca").expect("exists");
        assert_eq!((kept.type_, kept.data, kept.metadata.owner_references), (s.type_, s.data, None), "left as it is");

        // A CA secret whose key does not load is an error naming it, and nothing is cached.
        let mut bad = secret_for("ns", "c2", Purpose::ClusterCa, &pair, Default::default());
        bad.data.as_mut().expect("data").insert(TLS_KEY.into(), k8s_openapi::ByteString(b"garbage".to_vec()));
        fake.insert(bad);
        let err = ensure(&ctx, &known, "test", &kcp, "c2").await.expect_err("a bad CA");
        assert!(err.to_string().contains("Secret c2-ca"), "{err}");
        let mut want = kcp.clone();
        mark_failed(&mut want, &err, &ctx.clock().condition_time());
        let c = want.v1beta2_condition(CERTIFICATES_AVAILABLE).expect("set");
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("Unknown", INTERNAL_ERROR_REASON));
        let gets = fake.count("GET");
        assert!(ensure(&ctx, &known, "test", &kcp, "c2").await.is_err());
        assert!(fake.count("GET") > gets, "a failed lookup is not remembered");
    }

    #[tokio::test]
    async fn a_certificate_created_meanwhile_is_used() {
        let fake = FakeSecrets::new();
        let ctx = fake.context(None);
        let (known, kcp) = (Known::default(), control_plane());
        let theirs = Purpose::ClusterCa.generate().expect("CA");
        let racing = secret_for("ns", "c1", Purpose::ClusterCa, &theirs, controller_ref_of(&kcp).expect("ref"));
        fake.race_on_create(racing);
        let created = ensure(&ctx, &known, "test", &kcp, "c1").await.expect("generated");
        assert_eq!(created, ["c1-etcd", "c1-proxy", "c1-sa"], "the CA was created by the other reconcile");
        let ca = authority(&fake.get("ns", "c1-ca").expect("exists")).expect("CA");
        assert_eq!(ca.cert_pem(), theirs.cert_pem);
    }
}
