//! Bootstrap tokens (`<id>.<secret>`) as kube-apiserver authenticates them: the Secret
//! `kube-system/bootstrap-token-<id>` of the logical cluster addressed, of type
//! `bootstrap.kubernetes.io/token`, allowed for authentication and not expired, holds the
//! secret. The user is `system:bootstrap:<id>` in `system:bootstrappers` and the Secret's
//! `auth-extra-groups`. Cluster API's kubeadm bootstrap writes them into workload clusters.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use drydock_api::tenancy::LogicalClusterName;

use super::{Objects, UserInfo};

const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";

/// `[a-z0-9]{6}.[a-z0-9]{16}`, split.
fn parse(token: &str) -> Option<(&str, &str)> {
    let ok = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    token.split_once('.').filter(|(id, secret)| ok(id, 6) && ok(secret, 16))
}

/// The user `token` authenticates as in `cluster`, if it is a valid bootstrap token there.
pub fn user(token: &str, cluster: &LogicalClusterName, objects: &dyn Objects) -> Option<UserInfo> {
    let (id, secret) = parse(token)?;
    let s = objects.object(cluster, "secrets", "kube-system", &format!("bootstrap-token-{id}"))?;
    if s["type"] != SECRET_TYPE {
        return None;
    }
    let data = |k: &str| -> Option<String> {
        let v = s["data"][k].as_str()?;
        String::from_utf8(STANDARD.decode(v).ok()?).ok()
    };
    let held = data("token-secret")?;
    // Compared in constant time: how much of a guess matched must not show in the timing.
    let differs =
        held.len() != secret.len() || held.bytes().zip(secret.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) != 0;
    if differs
        || data("token-id").as_deref() != Some(id)
        || data("usage-bootstrap-authentication").as_deref() != Some("true")
    {
        return None;
    }
    if let Some(expiration) = data("expiration") {
        let expires: jiff::Timestamp = expiration.parse().ok()?;
        if expires <= jiff::Timestamp::now() {
            return None;
        }
    }
    let mut groups = vec!["system:bootstrappers".to_string()];
    groups.extend(data("auth-extra-groups").iter().flat_map(|g| g.split(',')).map(|g| g.trim().to_string()));
    Some(UserInfo::new(format!("system:bootstrap:{id}"), "", groups))
}

/// Whether `token` has a bootstrap token's shape.
pub fn looks_like(token: &str) -> bool {
    parse(token).is_some()
}

#[cfg(test)]
pub(super) fn secret(id: &str, secret: &str, expiration: &str) -> serde_json::Value {
    let b = |s: &str| serde_json::Value::String(STANDARD.encode(s));
    serde_json::json!({"type": SECRET_TYPE, "data": {
        "token-id": b(id), "token-secret": b(secret), "expiration": b(expiration),
        "usage-bootstrap-authentication": b("true"), "auth-extra-groups": b("system:bootstrappers:kubeadm:default-node-token"),
    }})
}
