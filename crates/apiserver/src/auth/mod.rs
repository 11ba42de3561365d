//! Who a request comes from, decided as kube-apiserver decides it: an x509 client
//! certificate (CN the user, O its groups), else a bearer token (one from the static token
//! file, or a ServiceAccount token), else nobody, which is 401 everywhere but the health and
//! version endpoints. What they may then do is RBAC's to say ([`rbac`]).
//!
//! The TLS listener ([`tls`]) says per connection which CA its client certificates were
//! checked against ([`Scope`]): the server's own, or the CA of one workload cluster, whose
//! connections reach that cluster's logical cluster and nothing else. Plain HTTP (an explicit
//! choice, loopback only) is the old insecure port: every request is an administrator.

pub mod bootstrap_tokens;
pub mod pki_files;
pub mod rbac;
pub mod service_accounts;
pub mod tls;
pub mod tokens;

use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine as _;

use drydock_api::tenancy::LogicalClusterName;

use crate::error::ApiError;

/// The group that may do anything (kube-apiserver's privileged group).
pub const MASTERS_GROUP: &str = "system:masters";
/// Every authenticated user is in this group.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// An authenticated user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user in `groups`, plus [`AUTHENTICATED_GROUP`].
    pub fn new(name: impl Into<String>, uid: impl Into<String>, groups: impl IntoIterator<Item = String>) -> Self {
        let mut groups: Vec<String> = groups.into_iter().collect();
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        Self { name: name.into(), uid: uid.into(), groups }
    }

    /// The identity of requests from inside this process (the controllers and provider).
    pub fn in_process() -> Self {
        Self::new("system:drydock", "", [MASTERS_GROUP.to_string()])
    }

    /// The identity of one of drydock's controller components when it runs in-process:
    /// what its default role grants, no more.
    pub fn component(c: drydock_api::components::Component) -> Self {
        Self::new(c.user(), "", [])
    }

    /// The identity the in-process controllers' shared caches read as.
    pub fn controller_cache() -> Self {
        Self::new(drydock_api::components::CACHE_USER, "", [])
    }

    /// The identity of every request over plain HTTP.
    pub fn insecure() -> Self {
        Self::new("system:admin", "", [MASTERS_GROUP.to_string()])
    }
}

/// Whose CA the client certificates of a connection were checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The server's own CA: the management cluster and, for its administrators, every
    /// logical cluster.
    Root,
    /// The CA of one workload cluster: that logical cluster only.
    Cluster(LogicalClusterName),
}

/// A connection as the listener saw it: where from, which scope, and the user its client
/// certificate names (already verified).
#[derive(Clone, Debug)]
pub struct Peer {
    pub remote: SocketAddr,
    pub scope: Scope,
    pub certificate_user: Option<UserInfo>,
}

/// Authenticates requests with what the server was given (the static tokens, the
/// ServiceAccount token issuer).
#[derive(Clone, Debug, Default)]
pub struct Authenticator {
    pub tokens: tokens::StaticTokens,
    pub service_accounts: Option<Arc<service_accounts::ServiceAccountTokens>>,
}

/// What authentication reads of the store: the uid of a core object (a ServiceAccount, or
/// the Pod or Secret a token is bound to), if it exists.
pub trait Objects {
    fn uid(&self, cluster: &LogicalClusterName, plural: &str, namespace: &str, name: &str) -> Option<String>;
    /// The whole object (a bootstrap token's Secret).
    fn object(
        &self,
        cluster: &LogicalClusterName,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> Option<serde_json::Value>;
}

impl Authenticator {
    /// The user of a request on a connection seen as `peer` (none: plain HTTP), with
    /// `authorization` its Authorization header, addressing the logical cluster `cluster`
    /// at `path`. Errors are 401 (no or a bad credential) and 403 (a workload cluster's
    /// credential used elsewhere).
    pub fn authenticate(
        &self,
        peer: Option<&Peer>,
        authorization: Option<&str>,
        cluster: &LogicalClusterName,
        path: &str,
        objects: &dyn Objects,
    ) -> Result<Option<UserInfo>, ApiError> {
        let Some(peer) = peer else { return Ok(Some(UserInfo::insecure())) };
        if let Scope::Cluster(own) = &peer.scope
            && own != cluster
        {
            return Err(ApiError::new(
                403,
                "Forbidden",
                format!("this connection is to the workload cluster {own}: it reaches no other"),
            ));
        }
        let bearer = authorization.and_then(|h| h.strip_prefix("Bearer ")).map(str::trim);
        let user = match (&peer.certificate_user, bearer) {
            (Some(user), _) => Some(user.clone()),
            (None, Some(token)) if service_accounts::looks_like_jwt(token) => {
                Some(self.service_account(token, cluster, objects).ok_or_else(unauthorized)?)
            }
            // The static tokens are the management cluster's.
            (None, Some(token)) if let Some(u) = self.static_user(token, &peer.scope) => Some(u),
            (None, Some(token)) if bootstrap_tokens::looks_like(token) => {
                Some(bootstrap_tokens::user(token, cluster, objects).ok_or_else(unauthorized)?)
            }
            (None, Some(_)) => return Err(unauthorized()),
            (None, None) => None,
        };
        match user {
            Some(u) => Ok(Some(u)),
            None if public(path) => Ok(None),
            None => Err(unauthorized()),
        }
    }
}

impl Authenticator {
    /// The user of a static token, on a connection to the management cluster.
    fn static_user(&self, token: &str, scope: &Scope) -> Option<UserInfo> {
        if matches!(scope, Scope::Cluster(_)) { None } else { self.tokens.user(token) }
    }

    /// The ServiceAccount a token names, if the token is valid in `cluster` and what it is
    /// bound to still exists with the uid it was issued for.
    fn service_account(&self, token: &str, cluster: &LogicalClusterName, objects: &dyn Objects) -> Option<UserInfo> {
        let issuer = self.service_accounts.as_ref()?;
        let Some(claims) = issuer.verify(token) else {
            return issuer.verify_legacy(token).and_then(|c| legacy_user(&c, token, cluster, objects));
        };
        let k = &claims.kubernetes;
        let issued_in = k.cluster_name.as_deref().unwrap_or(LogicalClusterName::ROOT);
        // `/clusters/*` is the management cluster's view of every cluster.
        let root = LogicalClusterName::root();
        let cluster = if cluster.is_wildcard() { &root } else { cluster };
        if issued_in != cluster.as_str() {
            return None;
        }
        let exists = |plural: &str, o: &service_accounts::ObjectClaim| {
            objects.uid(cluster, plural, &k.namespace, &o.name).as_deref() == Some(o.uid.as_str())
        };
        let bound = [("pods", &k.pod), ("secrets", &k.secret)];
        (exists("serviceaccounts", &k.serviceaccount)
            && bound.iter().all(|(p, o)| o.as_ref().is_none_or(|o| exists(p, o))))
        .then(|| claims.user())
    }
}

/// The ServiceAccount of a Secret-based token, while the Secret (in the token's logical
/// cluster) still holds that very token and the ServiceAccount exists with its uid.
fn legacy_user(
    c: &service_accounts::LegacyClaims,
    token: &str,
    cluster: &LogicalClusterName,
    objects: &dyn Objects,
) -> Option<UserInfo> {
    let root = LogicalClusterName::root();
    let cluster = if cluster.is_wildcard() { &root } else { cluster };
    if c.cluster_name.as_deref().unwrap_or(LogicalClusterName::ROOT) != cluster.as_str() {
        return None;
    }
    let secret = objects.object(cluster, "secrets", &c.namespace, &c.secret_name)?;
    let held = secret["data"]["token"].as_str().and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok());
    let sa_uid = objects.uid(cluster, "serviceaccounts", &c.namespace, &c.service_account_name);
    (held.as_deref() == Some(token.as_bytes()) && sa_uid.as_deref() == Some(c.service_account_uid.as_str()))
        .then(|| c.user())
}

/// kube-apiserver's answer to a request without a valid credential.
pub fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// Paths anyone may read (kube-apiserver's `system:public-info-viewer`), in any logical
/// cluster.
fn public(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match LogicalClusterName::split_segments(&segments) {
        Some((_, [first, ..])) if matches!(*first, "healthz" | "livez" | "readyz") => true,
        Some((_, ["version"])) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
