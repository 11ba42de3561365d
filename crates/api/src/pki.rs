//! Certificates as a kubeadm cluster has them: certificate authorities, serving certificates
//! and client certificates whose subject names the user (CN) and its groups (O). Keys are
//! ECDSA P-256 (kubeadm's `ECDSA-P256` encryption algorithm): generating one costs tens of
//! microseconds, where RSA 2048 costs tens of milliseconds for every cluster of a fleet.

mod key_formats;

use std::net::IpAddr;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use time::OffsetDateTime;

/// How long a certificate authority is valid (kubeadm: ten years).
pub const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// How long a leaf certificate is valid (kubeadm: one year).
pub const LEAF_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// Certificates are valid from a little before they are made, for clocks slightly behind.
const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// A certificate could not be made or read.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct PkiError {
    what: String,
    reason: String,
}

impl PkiError {
    fn new(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self { what: what.into(), reason: reason.to_string() }
    }
}

/// A PEM certificate and its PEM private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyAndCert {
    pub cert_pem: String,
    pub key_pem: String,
}

/// What a leaf certificate is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    /// A TLS server (serverAuth).
    Server,
    /// A TLS client (clientAuth).
    Client,
}

/// A leaf certificate to issue.
#[derive(Clone, Debug)]
pub struct Leaf<'a> {
    pub common_name: &'a str,
    /// Subject organizations: a client certificate's groups.
    pub organizations: &'a [&'a str],
    /// Subject alternative names: DNS names and IP addresses (serving certificates).
    pub names: &'a [String],
    pub usage: Usage,
    pub validity: Duration,
}

impl<'a> Leaf<'a> {
    /// A client certificate for `user` in `groups`, valid for [`LEAF_VALIDITY`].
    pub fn client(user: &'a str, groups: &'a [&'a str]) -> Self {
        Self { common_name: user, organizations: groups, names: &[], usage: Usage::Client, validity: LEAF_VALIDITY }
    }

    /// A serving certificate for `names` (DNS names or IP addresses), valid for
    /// [`LEAF_VALIDITY`].
    pub fn server(common_name: &'a str, names: &'a [String]) -> Self {
        Self { common_name, organizations: &[], names, usage: Usage::Server, validity: LEAF_VALIDITY }
    }
}

/// A certificate authority: its certificate, its key, and what signs with them.
pub struct Authority {
    pem: KeyAndCert,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").field("cert_pem", &self.pem.cert_pem).finish_non_exhaustive()
    }
}

impl Authority {
    /// A new self-signed certificate authority called `common_name`.
    pub fn generate(common_name: &str) -> Result<Self, PkiError> {
        let what = || format!("generating the certificate authority {common_name}");
        let key = KeyPair::generate().map_err(|e| PkiError::new(what(), e))?;
        let mut params = CertificateParams::default();
        params.distinguished_name = subject(common_name, &[]);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        validity(&mut params, CA_VALIDITY);
        let cert = params.self_signed(&key).map_err(|e| PkiError::new(what(), e))?;
        let pem = KeyAndCert { cert_pem: cert.pem(), key_pem: key.serialize_pem() };
        Ok(Self { pem, issuer: Issuer::new(params, key) })
    }

    /// The certificate authority of a PEM certificate and key (one a user brought, or one
    /// kept from an earlier start). The key may be PKCS#8, PKCS#1 (RSA) or SEC1 (EC).
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, PkiError> {
        let what = "reading a certificate authority";
        let key = KeyPair::from_pem(&key_formats::to_pkcs8_pem(key_pem)?).map_err(|e| PkiError::new(what, e))?;
        let info = Certificate::from_pem(cert_pem)?;
        if !info.is_ca {
            return Err(PkiError::new(what, format!("the certificate of {:?} is not a CA", info.common_name)));
        }
        let issuer = Issuer::from_ca_cert_pem(cert_pem, key).map_err(|e| PkiError::new(what, e))?;
        Ok(Self { pem: KeyAndCert { cert_pem: cert_pem.to_string(), key_pem: key_pem.to_string() }, issuer })
    }

    pub fn cert_pem(&self) -> &str {
        &self.pem.cert_pem
    }

    pub fn key_pem(&self) -> &str {
        &self.pem.key_pem
    }

    /// A new key and a certificate for it signed by this authority.
    pub fn issue(&self, leaf: &Leaf<'_>) -> Result<KeyAndCert, PkiError> {
        let what = || format!("issuing a certificate for {}", leaf.common_name);
        let key = KeyPair::generate().map_err(|e| PkiError::new(what(), e))?;
        let mut params = CertificateParams::default();
        params.distinguished_name = subject(leaf.common_name, leaf.organizations);
        params.subject_alt_names = leaf
            .names
            .iter()
            .map(|n| match n.parse::<IpAddr>() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => n.clone().try_into().map(SanType::DnsName),
            })
            .collect::<Result<_, _>>()
            .map_err(|e| PkiError::new(what(), e))?;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        params.extended_key_usages = vec![match leaf.usage {
            Usage::Server => ExtendedKeyUsagePurpose::ServerAuth,
            Usage::Client => ExtendedKeyUsagePurpose::ClientAuth,
        }];
        params.use_authority_key_identifier_extension = true;
        validity(&mut params, leaf.validity);
        let cert = params.signed_by(&key, &self.issuer).map_err(|e| PkiError::new(what(), e))?;
        Ok(KeyAndCert { cert_pem: cert.pem(), key_pem: key.serialize_pem() })
    }
}

/// A new key pair alone (a service account signing key): the private key and the public
/// key, both PEM.
pub fn key_pair() -> Result<KeyAndCert, PkiError> {
    let key = KeyPair::generate().map_err(|e| PkiError::new("generating a key pair", e))?;
    Ok(KeyAndCert { cert_pem: key.public_key_pem(), key_pem: key.serialize_pem() })
}

fn subject(common_name: &str, organizations: &[&str]) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    for o in organizations {
        dn.push(DnType::OrganizationName, *o);
    }
    dn.push(DnType::CommonName, common_name);
    dn
}

fn validity(params: &mut CertificateParams, valid_for: Duration) {
    let now = OffsetDateTime::now_utc();
    params.not_before = now - BACKDATE;
    params.not_after = now + valid_for;
}

/// What a certificate says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Certificate {
    pub common_name: String,
    pub organizations: Vec<String>,
    pub is_ca: bool,
    /// The end of its validity, in seconds since the Unix epoch.
    pub not_after: i64,
}

impl Certificate {
    /// The first certificate of a PEM document.
    pub fn from_pem(pem: &str) -> Result<Self, PkiError> {
        let what = "reading a PEM certificate";
        let (_, pem) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).map_err(|e| PkiError::new(what, e))?;
        Self::from_der(&pem.contents)
    }

    /// A DER certificate.
    pub fn from_der(der: &[u8]) -> Result<Self, PkiError> {
        let (_, cert) =
            x509_parser::parse_x509_certificate(der).map_err(|e| PkiError::new("reading a certificate", e))?;
        let subject = cert.subject();
        let text = |a: &x509_parser::x509::AttributeTypeAndValue<'_>| a.as_str().ok().map(str::to_string);
        Ok(Self {
            common_name: subject.iter_common_name().find_map(text).unwrap_or_default(),
            organizations: subject.iter_organization().filter_map(text).collect(),
            is_ca: cert.is_ca(),
            not_after: cert.validity().not_after.timestamp(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_certificate_names_its_user_and_groups() {
        let ca = Authority::generate("kubernetes").expect("CA");
        let issued = ca.issue(&Leaf::client("kubernetes-admin", &["system:masters"])).expect("issued");
        let cert = Certificate::from_pem(&issued.cert_pem).expect("parses");
        assert_eq!(cert.common_name, "kubernetes-admin");
        assert_eq!(cert.organizations, vec!["system:masters".to_string()]);
        assert!(!cert.is_ca);
        let ca_cert = Certificate::from_pem(ca.cert_pem()).expect("CA parses");
        assert!(ca_cert.is_ca);
        assert!(ca_cert.not_after > cert.not_after, "the CA outlives what it issues");
    }

    #[test]
    fn a_kept_authority_signs_again_and_a_leaf_is_not_one() {
        let ca = Authority::generate("etcd-ca").expect("CA");
        let again = Authority::from_pem(ca.cert_pem(), ca.key_pem()).expect("reloaded");
        let names = ["localhost".to_string(), "127.0.0.1".to_string()];
        let served = again.issue(&Leaf::server("etcd", &names)).expect("issued");
        assert_eq!(Certificate::from_pem(&served.cert_pem).expect("parses").common_name, "etcd");
        let err = Authority::from_pem(&served.cert_pem, &served.key_pem).expect_err("a leaf is no CA");
        assert!(err.to_string().contains("not a CA"), "{err}");
        assert!(Authority::from_pem("garbage", ca.key_pem()).is_err());
    }
}
