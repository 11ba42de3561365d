//! ServiceAccount tokens as kube-apiserver issues and checks them: JWTs (ES256) signed by
//! a key kept in `<data dir>/pki/sa.key`, issued by TokenRequest, bound to their
//! ServiceAccount (and to a Pod or Secret when asked), refused once expired or once what
//! they are bound to is gone. The issuer's OpenID discovery document and key set let
//! anyone outside verify them.
//!
//! A token issued in a workload cluster names it (`clusterName`, as kcp does) and is good
//! there only.

use std::path::Path;

use anyhow::Context as _;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::UserInfo;

/// Every ServiceAccount is in this group, and in `system:serviceaccounts:<namespace>`.
pub const ALL_GROUP: &str = "system:serviceaccounts";
/// kube-apiserver's usual `--service-account-issuer`.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// A TokenRequest without `expirationSeconds` gets an hour; none may ask for less than
/// ten minutes.
pub const DEFAULT_EXPIRATION_SECS: i64 = 3600;
pub const MIN_EXPIRATION_SECS: i64 = 600;
/// The key file, beside the server's certificates (kubeadm's name).
const KEY_FILE: &str = "sa.key";

/// An object a token is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectClaim {
    pub name: String,
    pub uid: String,
}

/// The claims kube-apiserver puts under `kubernetes.io`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesClaims {
    pub namespace: String,
    pub serviceaccount: ObjectClaim,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ObjectClaim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ObjectClaim>,
    /// The logical cluster the token was issued in, unless the management cluster.
    #[serde(default, rename = "clusterName", skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub nbf: i64,
    pub jti: String,
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
}

impl Claims {
    /// The user a token with these claims authenticates as.
    pub fn user(&self) -> UserInfo {
        let ns = &self.kubernetes.namespace;
        UserInfo::new(
            format!("{}{ns}:{}", super::rbac::rules::SERVICE_ACCOUNT_PREFIX, self.kubernetes.serviceaccount.name),
            self.kubernetes.serviceaccount.uid.clone(),
            [ALL_GROUP.to_string(), format!("{ALL_GROUP}:{ns}")],
        )
    }
}

/// The issuer of the tokens of `kubernetes.io/service-account-token` Secrets.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// The claims of a Secret-based token (kube-apiserver's before TokenRequest): no expiry,
/// good while its Secret holds it and its ServiceAccount exists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyClaims {
    pub iss: String,
    pub sub: String,
    #[serde(rename = "kubernetes.io/serviceaccount/namespace")]
    pub namespace: String,
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name")]
    pub secret_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name")]
    pub service_account_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid")]
    pub service_account_uid: String,
    /// The logical cluster of the Secret, unless the management cluster.
    #[serde(default, rename = "clusterName", skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
}

impl LegacyClaims {
    pub fn user(&self) -> UserInfo {
        let ns = &self.namespace;
        UserInfo::new(
            self.sub.clone(),
            self.service_account_uid.clone(),
            [ALL_GROUP.to_string(), format!("{ALL_GROUP}:{ns}")],
        )
    }
}

/// What a TokenRequest asks for, checked.
#[derive(Clone, Debug)]
pub struct TokenSpec {
    pub claims: KubernetesClaims,
    pub audiences: Vec<String>,
    pub expiration_secs: i64,
}

/// The issuer: its key, name and the audiences the server accepts.
pub struct ServiceAccountTokens {
    issuer: String,
    audiences: Vec<String>,
    encoding: EncodingKey,
    decoding: DecodingKey,
    kid: String,
    /// The public key's coordinates, base64url.
    x: String,
    y: String,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens").field("issuer", &self.issuer).field("kid", &self.kid).finish()
    }
}

impl ServiceAccountTokens {
    /// An issuer named `issuer` signing with the P-256 key `key_pem` (PKCS#8), accepting
    /// tokens for `audiences` (the issuer itself when empty, as kube-apiserver defaults).
    pub fn new(issuer: &str, audiences: Vec<String>, key_pem: &str) -> anyhow::Result<Self> {
        let key = rcgen::KeyPair::from_pem(key_pem).context("reading the service account signing key")?;
        anyhow::ensure!(
            key.algorithm() == &rcgen::PKCS_ECDSA_P256_SHA256,
            "the service account signing key must be an ECDSA P-256 key"
        );
        let point = key.public_key_raw();
        let (x, y) = point.get(1..).filter(|c| c.len() == 64).map(|c| c.split_at(32)).context("public key")?;
        let spki = rcgen::PublicKeyData::subject_public_key_info(&key);
        let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &spki));
        let audiences = if audiences.is_empty() { vec![issuer.to_string()] } else { audiences };
        Ok(Self {
            issuer: issuer.to_string(),
            audiences,
            encoding: EncodingKey::from_ec_der(&key.serialize_der()),
            decoding: DecodingKey::from_ec_der(point),
            kid,
            x: URL_SAFE_NO_PAD.encode(x),
            y: URL_SAFE_NO_PAD.encode(y),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audiences a token gets when its request names none.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Signs a token for `spec`, issued at `now` (seconds since the epoch); returns it and
    /// when it expires.
    pub fn issue(&self, spec: TokenSpec, now: i64) -> anyhow::Result<(String, i64)> {
        let exp = now + spec.expiration_secs;
        let claims = Claims {
            iss: self.issuer.clone(),
            sub: format!(
                "{}{}:{}",
                super::rbac::rules::SERVICE_ACCOUNT_PREFIX,
                spec.claims.namespace,
                spec.claims.serviceaccount.name
            ),
            aud: spec.audiences,
            exp,
            iat: now,
            nbf: now,
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes: spec.claims,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.encoding).context("signing the token")?;
        Ok((token, exp))
    }

    /// The claims of a token this issuer signed for one of the server's audiences, unless
    /// it has expired or is not yet valid. What it is bound to is checked by the caller.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let mut v = Validation::new(Algorithm::ES256);
        v.leeway = 0;
        v.validate_nbf = true;
        v.set_issuer(&[&self.issuer]);
        v.set_audience(&self.audiences);
        v.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &v).ok().map(|d| d.claims)
    }

    /// Signs the token of a `kubernetes.io/service-account-token` Secret.
    pub fn issue_legacy(&self, mut claims: LegacyClaims) -> anyhow::Result<String> {
        claims.iss = LEGACY_ISSUER.to_string();
        claims.sub = format!(
            "{}{}:{}",
            super::rbac::rules::SERVICE_ACCOUNT_PREFIX,
            claims.namespace,
            claims.service_account_name
        );
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, &claims, &self.encoding).context("signing the token")
    }

    /// The claims of a Secret-based token this issuer signed; its Secret and ServiceAccount
    /// are checked by the caller.
    pub fn verify_legacy(&self, token: &str) -> Option<LegacyClaims> {
        let mut v = Validation::new(Algorithm::ES256);
        v.validate_exp = false;
        v.validate_aud = false;
        v.set_issuer(&[LEGACY_ISSUER]);
        v.set_required_spec_claims(&["iss", "sub"]);
        jsonwebtoken::decode::<LegacyClaims>(token, &self.decoding, &v).ok().map(|d| d.claims)
    }

    /// `/.well-known/openid-configuration`.
    pub fn discovery(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "jwks_uri": format!("{}/openid/v1/jwks", self.issuer.trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    }

    /// `/openid/v1/jwks`: the public key.
    pub fn jwks(&self) -> Value {
        json!({"keys": [{
            "use": "sig", "kty": "EC", "kid": self.kid, "crv": "P-256", "alg": "ES256", "x": self.x, "y": self.y,
        }]})
    }
}

/// Whether a bearer token looks like a JWT (three base64url parts), not a static token.
pub fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3 && token.starts_with("eyJ")
}

/// A new P-256 signing key, PKCS#8 PEM.
pub fn generate_key() -> anyhow::Result<String> {
    Ok(rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .context("generating a signing key")?
        .serialize_pem())
}

/// The signing key kept in `dir/pki/sa.key`, made (and kept) on first start; a new one in
/// memory without a dir.
pub fn local_key(dir: Option<&Path>) -> anyhow::Result<String> {
    let Some(dir) = dir else { return generate_key() };
    let pki = dir.join("pki");
    std::fs::create_dir_all(&pki).with_context(|| format!("creating {}", pki.display()))?;
    let path = pki.join(KEY_FILE);
    if path.exists() {
        return std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()));
    }
    let key = generate_key()?;
    super::pki_files::write_private(&path, &key)?;
    Ok(key)
}

/// The Secret through which replicas sharing a store share their signing key.
pub const SHARED_KEY_SECRET: (&str, &str) = ("kube-system", "drydock-service-account-key");

/// The signing key every replica on `api`'s store uses: the one a replica put in
/// [`SHARED_KEY_SECRET`] first, else `local`, which this replica puts there.
pub async fn shared_key(api: &crate::rest::Api, local: String) -> anyhow::Result<String> {
    use crate::controllers::{ensure, target};
    let (ns, name) = SHARED_KEY_SECRET;
    let root = drydock_api::tenancy::LogicalClusterName::ROOT;
    let secrets = target(api, root, "", "secrets", Some(ns), None).context("Secrets are not served")?;
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": name, "namespace": ns},
        "data": {KEY_FILE: base64::engine::general_purpose::STANDARD.encode(&local)},
    });
    ensure(api, &secrets, secret).await.map_err(|e| anyhow::anyhow!("sharing the signing key: {e}"))?;
    let one = crate::rest::Target { name: Some(name.to_string()), ..secrets };
    // A consistent read: when another replica created the Secret first (the create above
    // conflicted), this replica's cache may not show it yet; on etcd the read waits until
    // the replica has caught up.
    let stored = api.read(&one, None).await.map_err(|e| anyhow::anyhow!("reading the shared signing key: {e}"))?;
    let v = api.value(&one.res, &stored).map_err(|e| anyhow::anyhow!("reading the shared signing key: {e}"))?;
    let data = v["data"][KEY_FILE].as_str().context("the shared signing key Secret has no sa.key")?;
    let pem = base64::engine::general_purpose::STANDARD.decode(data).context("the shared signing key")?;
    String::from_utf8(pem).context("the shared signing key")
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(expiration_secs: i64, audiences: Vec<String>) -> TokenSpec {
        TokenSpec {
            claims: KubernetesClaims {
                namespace: "team-a".into(),
                serviceaccount: ObjectClaim { name: "deployer".into(), uid: "sa-uid".into() },
                pod: None,
                secret: None,
                cluster_name: None,
            },
            audiences,
            expiration_secs,
        }
    }

    #[test]
    fn tokens_verify_until_they_expire() {
        let tokens = ServiceAccountTokens::new(DEFAULT_ISSUER, vec![], &generate_key().expect("key")).expect("issuer");
        let (token, exp) = tokens.issue(spec(600, tokens.audiences().to_vec()), now()).expect("issue");
        assert!(looks_like_jwt(&token));
        let claims = tokens.verify(&token).expect("a fresh token verifies");
        assert_eq!(claims.exp, exp);
        assert_eq!(claims.sub, "system:serviceaccount:team-a:deployer");
        let user = claims.user();
        assert_eq!(user.groups, ["system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"]);
        assert_eq!(user.uid, "sa-uid");
        // Issued two hours ago for one hour.
        let (old, _) = tokens.issue(spec(3600, tokens.audiences().to_vec()), now() - 7200).expect("issue");
        assert_eq!(tokens.verify(&old), None, "an expired token");
        let (other_aud, _) = tokens.issue(spec(600, vec!["vault".into()]), now()).expect("issue");
        assert_eq!(tokens.verify(&other_aud), None, "a token for another audience");
        let other_key =
            ServiceAccountTokens::new(DEFAULT_ISSUER, vec![], &generate_key().expect("key")).expect("issuer");
        assert_eq!(other_key.verify(&token), None, "another issuer's key");
        let mut tampered = token.clone();
        tampered.insert(token.find('.').expect("dot") + 5, 'x');
        assert_eq!(tokens.verify(&tampered), None);
    }

    #[test]
    fn the_key_set_names_the_signing_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = local_key(Some(dir.path())).expect("key");
        assert_eq!(local_key(Some(dir.path())).expect("again"), key, "kept across restarts");
        let tokens = ServiceAccountTokens::new("https://issuer.example", vec![], &key).expect("issuer");
        let (token, _) = tokens.issue(spec(600, vec!["https://issuer.example".into()]), now()).expect("issue");
        let header = jsonwebtoken::decode_header(&token).expect("header");
        let jwks = tokens.jwks();
        assert_eq!(header.kid.as_deref(), jwks["keys"][0]["kid"].as_str());
        assert_eq!(tokens.discovery()["jwks_uri"], "https://issuer.example/openid/v1/jwks");
        // The published coordinates verify the token on their own.
        let k = &jwks["keys"][0];
        let decoding =
            DecodingKey::from_ec_components(k["x"].as_str().expect("x"), k["y"].as_str().expect("y")).expect("jwk");
        let mut v = Validation::new(Algorithm::ES256);
        v.set_audience(&["https://issuer.example"]);
        assert!(jsonwebtoken::decode::<Claims>(&token, &decoding, &v).is_ok());
    }
}
