use super::*;

fn peer(scope: Scope, user: Option<UserInfo>) -> Peer {
    Peer { remote: "127.0.0.1:1".parse().expect("addr"), scope, certificate_user: user }
}

/// A store with nothing in it.
struct NoObjects;

impl Objects for NoObjects {
    fn uid(&self, _: &LogicalClusterName, _: &str, _: &str, _: &str) -> Option<String> {
        None
    }
    fn object(&self, _: &LogicalClusterName, _: &str, _: &str, _: &str) -> Option<serde_json::Value> {
        None
    }
}

/// One bootstrap token Secret in every cluster.
struct OneBootstrapToken(serde_json::Value);

impl Objects for OneBootstrapToken {
    fn uid(&self, _: &LogicalClusterName, _: &str, _: &str, _: &str) -> Option<String> {
        None
    }
    fn object(&self, _: &LogicalClusterName, plural: &str, ns: &str, name: &str) -> Option<serde_json::Value> {
        (plural == "secrets" && ns == "kube-system" && name == "bootstrap-token-abcdef").then(|| self.0.clone())
    }
}

#[test]
fn bootstrap_tokens_authenticate_until_they_expire() {
    let a = authn();
    let cluster = LogicalClusterName::new("default.w1");
    let p = peer(Scope::Cluster(cluster.clone()), None);
    let good = OneBootstrapToken(bootstrap_tokens::secret("abcdef", "0123456789abcdef", "2999-01-01T00:00:00Z"));
    let bearer = Some("Bearer abcdef.0123456789abcdef");
    let user = a.authenticate(Some(&p), bearer, &cluster, "/api", &good).expect("valid").expect("a user");
    assert_eq!(user.name, "system:bootstrap:abcdef");
    assert_eq!(
        user.groups,
        ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", AUTHENTICATED_GROUP]
    );
    let wrong = Some("Bearer abcdef.0123456789abcdee");
    assert_eq!(a.authenticate(Some(&p), wrong, &cluster, "/api", &good).map_err(|e| e.code), Err(401));
    let expired = OneBootstrapToken(bootstrap_tokens::secret("abcdef", "0123456789abcdef", "2020-01-01T00:00:00Z"));
    assert_eq!(a.authenticate(Some(&p), bearer, &cluster, "/api", &expired).map_err(|e| e.code), Err(401));
    assert_eq!(a.authenticate(Some(&p), bearer, &cluster, "/api", &NoObjects).map_err(|e| e.code), Err(401));
}

fn authn() -> Authenticator {
    let tokens = tokens::StaticTokens::parse("# users\nsecret-token,alice,1001,\"dev,ops\"\nother,bob,1002\n")
        .expect("token file");
    Authenticator { tokens, service_accounts: None }
}

#[test]
fn anonymous_requests_reach_only_health_and_version() {
    let a = authn();
    let root = LogicalClusterName::root();
    let p = peer(Scope::Root, None);
    for path in ["/healthz", "/livez/ping", "/readyz", "/version", "/version/"] {
        assert_eq!(a.authenticate(Some(&p), None, &root, path, &NoObjects), Ok(None), "{path}");
    }
    for path in ["/api/v1/secrets", "/", "/apis", "/metrics", "/versions"] {
        let err = a.authenticate(Some(&p), None, &root, path, &NoObjects).expect_err(path);
        assert_eq!((err.code, err.reason, err.message.as_str()), (401, "Unauthorized", "Unauthorized"));
    }
}

#[test]
fn certificates_and_tokens_name_users() {
    let a = authn();
    let root = LogicalClusterName::root();
    let cert_user = UserInfo::new("kubernetes-admin", "", ["system:masters".to_string()]);
    let p = peer(Scope::Root, Some(cert_user.clone()));
    assert_eq!(a.authenticate(Some(&p), None, &root, "/api", &NoObjects), Ok(Some(cert_user)));
    let p = peer(Scope::Root, None);
    let alice =
        a.authenticate(Some(&p), Some("Bearer secret-token"), &root, "/api", &NoObjects).expect("alice").expect("user");
    assert_eq!((alice.name.as_str(), alice.uid.as_str()), ("alice", "1001"));
    assert_eq!(alice.groups, ["dev", "ops", AUTHENTICATED_GROUP]);
    let bob = a.authenticate(Some(&p), Some("Bearer other"), &root, "/api", &NoObjects).expect("bob").expect("user");
    assert_eq!(bob.groups, [AUTHENTICATED_GROUP]);
    // A wrong token is refused even where anonymous requests are not.
    let err = a.authenticate(Some(&p), Some("Bearer wrong"), &root, "/healthz", &NoObjects).expect_err("bad token");
    assert_eq!(err.code, 401);
}

#[test]
fn a_workload_clusters_connection_reaches_that_cluster_only() {
    let a = authn();
    let own = LogicalClusterName::for_cluster("ns", "c1");
    let user = UserInfo::new("kubernetes-admin", "", ["system:masters".to_string()]);
    let p = peer(Scope::Cluster(own.clone()), Some(user.clone()));
    assert_eq!(a.authenticate(Some(&p), None, &own, "/clusters/ns.c1/api", &NoObjects), Ok(Some(user)));
    for other in [LogicalClusterName::root(), LogicalClusterName::for_cluster("ns", "c2")] {
        let err = a.authenticate(Some(&p), None, &other, "/api", &NoObjects).expect_err("another cluster");
        assert_eq!(err.code, 403, "{other}");
    }
    // The management cluster's tokens mean nothing to a workload cluster.
    let p = peer(Scope::Cluster(own.clone()), None);
    let err = a.authenticate(Some(&p), Some("Bearer secret-token"), &own, "/api", &NoObjects).expect_err("token");
    assert_eq!(err.code, 401);
}

#[test]
fn plain_http_is_the_insecure_port() {
    let a = authn();
    let root = LogicalClusterName::root();
    // Plain HTTP connections carry no Peer.
    assert_eq!(a.authenticate(None, None, &root, "/api", &NoObjects), Ok(Some(UserInfo::insecure())));
}

#[test]
fn token_files_are_checked() {
    assert!(tokens::StaticTokens::parse("only,two").is_err());
    assert!(tokens::StaticTokens::parse(",user,1").is_err());
    assert!(tokens::StaticTokens::parse("t,a,1\nt,b,2").is_err());
    let t = tokens::StaticTokens::parse("t,\"a, the admin\",1,\"g\"").expect("quoted");
    assert_eq!(t.user("t").expect("user").name, "a, the admin");
}
