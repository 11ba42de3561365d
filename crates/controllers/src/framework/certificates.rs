//! The cluster certificates Cluster API's kubeadm providers keep beside a Cluster in the
//! management cluster: Secrets `<cluster>-ca`, `-etcd`, `-proxy` (certificate authorities)
//! and `-sa` (the service account signing key pair), of type `cluster.x-k8s.io/secret`.
//!
//! Whoever generates them (the control plane provider, or the bootstrap provider of a
//! cluster without one) looks each up first: only missing ones are generated, and ones a
//! user created beforehand are used as they are. Keys are ECDSA P-256 (`drydock_api::pki`).

use std::collections::BTreeMap;

use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::owner::get_controller;
use drydock_api::pki::{self, Authority, KeyAndCert, PkiError};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::Api;
use serde_json::json;

use super::write;
use super::{Error, Result};

/// Secret type of the secrets Cluster API generates (a Secret of another type is the
/// user's: used, never changed).
pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";
/// Key of a certificate (or public key) in a certificate secret.
pub const TLS_CRT: &str = "tls.crt";
/// Key of the private key in a certificate secret.
pub const TLS_KEY: &str = "tls.key";

/// What a cluster certificate secret is for; its name is `<cluster>-<suffix>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The cluster CA: signs the API server's serving certificate and client certificates.
    ClusterCa,
    EtcdCa,
    FrontProxyCa,
    /// The service account token signing key pair (`tls.crt` holds the public key).
    ServiceAccount,
}

impl Purpose {
    pub fn suffix(self) -> &'static str {
        match self {
            Self::ClusterCa => "ca",
            Self::EtcdCa => "etcd",
            Self::FrontProxyCa => "proxy",
            Self::ServiceAccount => "sa",
        }
    }

    pub fn secret_name(self, cluster: &str) -> String {
        format!("{cluster}-{}", self.suffix())
    }

    /// The common name of the certificate authority, `None` for the bare key pair.
    fn authority_name(self) -> Option<&'static str> {
        match self {
            Self::ClusterCa => Some("kubernetes"),
            Self::EtcdCa => Some("etcd-ca"),
            Self::FrontProxyCa => Some("front-proxy-ca"),
            Self::ServiceAccount => None,
        }
    }

    /// The certificates a control plane needs. With external etcd the etcd CA is the
    /// user's to bring, so it is not generated.
    pub fn control_plane(external_etcd: bool) -> Vec<Self> {
        let mut all = vec![Self::ClusterCa, Self::EtcdCa, Self::FrontProxyCa, Self::ServiceAccount];
        if external_etcd {
            all.retain(|p| *p != Self::EtcdCa);
        }
        all
    }

    /// New material for this purpose: a self-signed CA, or a key pair.
    pub fn generate(self) -> Result<KeyAndCert, PkiError> {
        match self.authority_name() {
            Some(cn) => {
                let ca = Authority::generate(cn)?;
                Ok(KeyAndCert { cert_pem: ca.cert_pem().to_string(), key_pem: ca.key_pem().to_string() })
            }
            None => pki::key_pair(),
        }
    }
}

/// The Secret holding `pair` for `purpose`, controlled by `owner`.
pub fn secret_for(
    namespace: &str,
    cluster: &str,
    purpose: Purpose,
    pair: &KeyAndCert,
    owner: OwnerReference,
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(purpose.secret_name(cluster)),
            namespace: Some(namespace.to_string()),
            labels: Some(BTreeMap::from([(CLUSTER_NAME_LABEL.to_string(), cluster.to_string())])),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        type_: Some(SECRET_TYPE.to_string()),
        data: Some(BTreeMap::from([
            (TLS_CRT.to_string(), ByteString(pair.cert_pem.clone().into_bytes())),
            (TLS_KEY.to_string(), ByteString(pair.key_pem.clone().into_bytes())),
        ])),
        ..Default::default()
    }
}

/// A key of a Secret as text.
pub fn text<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret.data.as_ref()?.get(key).and_then(|b| std::str::from_utf8(&b.0).ok())
}

fn secret_name(secret: &Secret) -> &str {
    secret.metadata.name.as_deref().unwrap_or_default()
}

/// The certificate authority a CA Secret holds (both keys, and a CA certificate).
pub fn authority(secret: &Secret) -> Result<Authority> {
    let name = secret_name(secret);
    let (Some(cert), Some(key)) = (text(secret, TLS_CRT), text(secret, TLS_KEY)) else {
        return Err(Error::inconsistent(format!("Secret {name}"), format!("needs both {TLS_CRT} and {TLS_KEY}")));
    };
    Authority::from_pem(cert, key).map_err(|e| Error::inconsistent(format!("Secret {name}"), e.to_string()))
}

/// Checks a found secret is usable for `purpose`: the cluster CA must load as an authority
/// (everything signed for the cluster depends on it); the others need their certificate
/// (an external etcd CA comes without its key).
fn check(secret: &Secret, purpose: Purpose) -> Result<()> {
    if purpose == Purpose::ClusterCa {
        return authority(secret).map(drop);
    }
    match text(secret, TLS_CRT) {
        Some(_) => Ok(()),
        None => Err(Error::inconsistent(format!("Secret {}", secret_name(secret)), format!("has no {TLS_CRT}"))),
    }
}

/// Who generates missing certificates, and whether it takes over existing generated ones.
pub struct Generator<'a> {
    /// The controller, for write metrics.
    pub controller: &'a str,
    /// The controller reference generated secrets get.
    pub owner: OwnerReference,
    /// Move the controller reference of found `cluster.x-k8s.io/secret` secrets to `owner`
    /// (upstream's control plane does, so a bootstrap config's deletion no longer takes them).
    pub adopt: bool,
}

/// Looks up the certificates of `purposes` for `cluster`, generating the missing ones.
/// Returns the names of the secrets it created.
pub async fn lookup_or_generate(
    api: &Api<Secret>,
    namespace: &str,
    cluster: &str,
    purposes: &[Purpose],
    generator: &Generator<'_>,
) -> Result<Vec<String>> {
    let mut created = Vec::new();
    for &purpose in purposes {
        let name = purpose.secret_name(cluster);
        // Create first: on a new cluster (the common case, thousands at once in a fleet)
        // that is one request per Secret instead of two; a key pair costs microseconds.
        let pair = purpose.generate().map_err(Error::during(format!("generating Secret {name}")))?;
        let s = secret_for(namespace, cluster, purpose, &pair, generator.owner.clone());
        let found = match write::create(api, generator.controller, &s).await {
            Ok(_) => {
                created.push(name);
                continue;
            }
            // There already: a user's, or an earlier or concurrent reconcile's. Use it.
            Err(kube::Error::Api(e)) if e.code == 409 => api
                .get_opt(&name)
                .await
                .map_err(Error::during(format!("reading Secret {name}")))?
                .ok_or_else(|| Error::Missing(format!("Secret {name} (deleted right after it was found)")))?,
            Err(e) => return Err(Error::during(format!("creating Secret {name}"))(e)),
        };
        check(&found, purpose)?;
        if generator.adopt {
            adopt(api, generator, &found).await?;
        }
    }
    Ok(created)
}

/// Makes `generator.owner` the controller of a generated secret found with another (or
/// none). Secrets of other types are the user's and keep their owners.
async fn adopt(api: &Api<Secret>, generator: &Generator<'_>, secret: &Secret) -> Result<()> {
    let owner = &generator.owner;
    if secret.type_.as_deref() != Some(SECRET_TYPE)
        || get_controller(&secret.metadata).is_some_and(|c| c.uid == owner.uid)
    {
        return Ok(());
    }
    let mut refs: Vec<OwnerReference> = secret
        .metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|r| r.controller != Some(true) && r.uid != owner.uid)
        .cloned()
        .collect();
    refs.push(owner.clone());
    let name = secret_name(secret);
    // Conditional on the version read: a concurrent change makes this fail and retry.
    let patch = json!({"metadata": {"ownerReferences": refs, "resourceVersion": secret.metadata.resource_version}});
    write::merge_patch(api, generator.controller, name, &patch)
        .await
        .map_err(Error::during(format!("adopting Secret {name}")))?;
    Ok(())
}

/// The cluster CA's certificate and, when the secret holds it, its key (PEM) from
/// `<cluster>-ca`; `None` while that secret does not exist.
pub async fn read_ca(api: &Api<Secret>, cluster: &str) -> Result<Option<(String, Option<String>)>> {
    let name = Purpose::ClusterCa.secret_name(cluster);
    let Some(secret) = api.get_opt(&name).await.map_err(Error::during(format!("reading Secret {name}")))? else {
        return Ok(None);
    };
    match text(&secret, TLS_CRT) {
        Some(cert) => Ok(Some((cert.to_string(), text(&secret, TLS_KEY).map(String::from)))),
        None => Err(Error::inconsistent(format!("Secret {name}"), format!("has no {TLS_CRT}"))),
    }
}

/// The cluster CA (certificate and key) from `<cluster>-ca`, `None` while that secret does
/// not exist.
pub async fn read_authority(api: &Api<Secret>, cluster: &str) -> Result<Option<Authority>> {
    let name = Purpose::ClusterCa.secret_name(cluster);
    let found = api.get_opt(&name).await.map_err(Error::during(format!("reading Secret {name}")))?;
    found.as_ref().map(authority).transpose()
}

/// kubeadm's pin of a CA for join discovery: `sha256:` and the lowercase hex SHA-256 of the
/// certificate's SubjectPublicKeyInfo.
pub fn ca_cert_hash(cert_pem: &str) -> Result<String> {
    let bad = |e: String| Error::inconsistent("the cluster CA certificate", e);
    let (_, pem) = x509_parser::pem::parse_x509_pem(cert_pem.as_bytes()).map_err(|e| bad(e.to_string()))?;
    let cert = pem.parse_x509().map_err(|e| bad(e.to_string()))?;
    let digest = ring::digest::digest(&ring::digest::SHA256, cert.public_key().raw);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::fake_api::FakeSecrets;
    use drydock_api::pki::Certificate;

    fn owner(uid: &str) -> OwnerReference {
        OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1beta2".into(),
            kind: "KubeadmControlPlane".into(),
            name: "cp".into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    #[test]
    fn generated_material_matches_its_purpose() {
        for (purpose, cn) in [
            (Purpose::ClusterCa, "kubernetes"),
            (Purpose::EtcdCa, "etcd-ca"),
            (Purpose::FrontProxyCa, "front-proxy-ca"),
        ] {
            let pair = purpose.generate().expect("generated");
            let cert = Certificate::from_pem(&pair.cert_pem).expect("a certificate");
            assert_eq!((cert.common_name.as_str(), cert.is_ca), (cn, true));
        }
        let sa = Purpose::ServiceAccount.generate().expect("generated");
        assert!(sa.cert_pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{}", sa.cert_pem);
        assert!(sa.key_pem.contains("PRIVATE KEY"));
        assert_eq!(Purpose::control_plane(true), [Purpose::ClusterCa, Purpose::FrontProxyCa, Purpose::ServiceAccount]);
    }

    #[test]
    fn ca_hash_pins_the_public_key() {
        let ca = Authority::generate("kubernetes").expect("CA");
        let hash = ca_cert_hash(ca.cert_pem()).expect("hash");
        assert_eq!(hash.len(), "sha256:".len() + 64);
        assert!(hash.starts_with("sha256:") && hash[7..].chars().all(|c| c.is_ascii_hexdigit() && !c.is_uppercase()));
        // Re-signing the same key keeps the pin; another key changes it.
        let again = Authority::from_pem(ca.cert_pem(), ca.key_pem()).expect("reloaded");
        assert_eq!(ca_cert_hash(again.cert_pem()).expect("hash"), hash);
        let other = Authority::generate("kubernetes").expect("CA");
        assert_ne!(ca_cert_hash(other.cert_pem()).expect("hash"), hash);
        assert!(ca_cert_hash("not a certificate").is_err());
    }

    #[tokio::test]
    async fn adoption_moves_the_controller_of_generated_secrets_only() {
        let fake = FakeSecrets::new();
        let api: Api<Secret> = Api::namespaced(fake.client(), "ns");
        let pair = Purpose::ClusterCa.generate().expect("CA");
        let mut ours = secret_for("ns", "c1", Purpose::ClusterCa, &pair, owner("config-uid"));
        ours.metadata
            .owner_references
            .as_mut()
            .expect("refs")
            .push(OwnerReference { controller: None, ..owner("cluster-uid") });
        fake.insert(ours);
        let mut users = secret_for("ns", "c1", Purpose::FrontProxyCa, &pair, owner("config-uid"));
        users.type_ = Some("Opaque".into());
        fake.insert(users);
        let generator = Generator { controller: "test", owner: owner("kcp-uid"), adopt: true };
        let purposes = [Purpose::ClusterCa, Purpose::FrontProxyCa];
        let created = lookup_or_generate(&api, "ns", "c1", &purposes, &generator).await.expect("looked up");
        assert!(created.is_empty());
        let uids = |name: &str| -> Vec<(String, Option<bool>)> {
            let s = fake.get("ns", name).expect("exists");
            s.metadata.owner_references.unwrap_or_default().into_iter().map(|r| (r.uid, r.controller)).collect()
        };
        assert_eq!(uids("c1-ca"), [("cluster-uid".to_string(), None), ("kcp-uid".to_string(), Some(true))]);
        assert_eq!(uids("c1-proxy"), [("config-uid".to_string(), Some(true))], "a user's secret keeps its owners");
        // Adopted once: a second look writes nothing.
        let patches = fake.count("PATCH");
        lookup_or_generate(&api, "ns", "c1", &purposes, &generator).await.expect("looked up");
        assert_eq!(fake.count("PATCH"), patches);
    }
}
