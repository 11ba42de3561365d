//! Authorization and ServiceAccount tokens through real clients: a token from `kubectl
//! create token` authenticates its ServiceAccount, which can do exactly what its Role
//! grants (403 with kube-apiserver's message otherwise, in other namespaces too), `kubectl
//! auth can-i` agrees, the default aggregated roles cover Cluster API's kinds, and tokens
//! stop working once expired or once their ServiceAccount is gone; the issuer's discovery
//! document and keys verify them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{free_port, kubeconfig_of, kubectl, kubectl_bin, kubectl_ok, spawn_drydock_with};
use drydock_apiserver::auth::service_accounts::{
    DEFAULT_ISSUER, KubernetesClaims, ObjectClaim, ServiceAccountTokens, TokenSpec, now,
};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::Value;

const POLICY: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: configmap-reader, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer-reads-configmaps, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: configmap-reader}
subjects:
- {kind: ServiceAccount, name: deployer, namespace: team-a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {replicas: "3"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-b}
data: {replicas: "5"}
"#;

/// A kubeconfig that authenticates with `token` only.
fn token_kubeconfig(dir: &Path, url: &str, token: &str) -> PathBuf {
    let path = dir.join(format!("token-{}.kubeconfig", &token[token.len() - 8..]));
    let ca = dir.join("pki/ca.crt");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: drydock\n  cluster: {{server: \"{url}\", certificate-authority: \"{}\"}}\nusers:\n- name: sa\n  user: {{token: \"{token}\"}}\ncontexts:\n- name: sa\n  context: {{cluster: drydock, user: sa, namespace: team-a}}\ncurrent-context: sa\n",
        ca.display()
    );
    std::fs::write(&path, text).expect("kubeconfig");
    path
}

/// `kubectl auth can-i` with kubectl `version`: its answer and whether it said yes.
fn can_i(version: &str, kc: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(kubectl_bin(version))
        .arg("--kubeconfig")
        .arg(kc)
        .args(["auth", "can-i"])
        .args(args)
        .output()
        .expect("kubectl");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn forbidden(kc: &Path, args: &[&str], message: &str) {
    let (ok, out, err) = kubectl(kc, args, None);
    assert!(!ok, "kubectl {args:?} should be refused: {out}");
    assert!(err.contains(message), "kubectl {args:?}: {err}\nwanted: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_does_exactly_what_its_role_allows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &[]);
    let admin = kubeconfig_of(dir.path()).await;
    let url = format!("https://127.0.0.1:{port}");
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(POLICY));

    let token = kubectl_ok(&admin, &["create", "token", "deployer", "-n", "team-a", "--duration", "20m"], None);
    let token = token.trim();
    let sa = token_kubeconfig(dir.path(), &url, token);
    let me = "User \"system:serviceaccount:team-a:deployer\"";

    // What the Role grants, and nothing else.
    assert!(kubectl_ok(&sa, &["get", "configmaps", "-o", "name"], None).contains("configmap/settings"));
    kubectl_ok(&sa, &["get", "configmap", "settings", "-o", "name"], None);
    forbidden(
        &sa,
        &["get", "configmaps", "-n", "team-b"],
        &format!(
            "configmaps is forbidden: {me} cannot list resource \"configmaps\" in API group \"\" in the namespace \"team-b\""
        ),
    );
    forbidden(
        &sa,
        &["delete", "configmap", "settings"],
        &format!("configmaps \"settings\" is forbidden: {me} cannot delete resource \"configmaps\""),
    );
    forbidden(&sa, &["get", "secrets"], &format!("secrets is forbidden: {me} cannot list resource \"secrets\""));
    forbidden(&sa, &["get", "namespaces"], "at the cluster scope");
    forbidden(&sa, &["get", "--raw", "/clusters/*/api/v1/configmaps"], "at the cluster scope");
    let whoami = kubectl_ok(&sa, &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], None);
    assert_eq!(whoami, "system:serviceaccount:team-a:deployer");

    // kube-rs sees the same 403 as a Status.
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&sa).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    let client = kube::Client::try_from(config).expect("client");
    let team_a: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "team-a");
    assert_eq!(team_a.list(&Default::default()).await.expect("list team-a").items.len(), 1);
    let team_b: kube::Api<ConfigMap> = kube::Api::namespaced(client, "team-b");
    match team_b.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden")),
        other => panic!("team-b: {other:?}"),
    }

    // `kubectl auth can-i` agrees, old (JSON) and new (protobuf) alike.
    for version in ["1.27", "1.33"] {
        assert_eq!(can_i(version, &sa, &["list", "configmaps"]), (true, "yes".into()), "{version}");
        assert_eq!(can_i(version, &sa, &["get", "configmap/settings"]), (true, "yes".into()), "{version}");
        assert_eq!(can_i(version, &sa, &["delete", "configmaps"]), (false, "no".into()), "{version}");
        assert_eq!(can_i(version, &sa, &["list", "configmaps", "-n", "team-b"]), (false, "no".into()), "{version}");
        assert_eq!(can_i(version, &admin, &["delete", "nodes"]), (true, "yes".into()), "{version}");
    }
    let (_, listed) = can_i("1.33", &sa, &["--list"]);
    let configmaps = listed.lines().find(|l| l.starts_with("configmaps ")).unwrap_or_default();
    assert!(configmaps.contains("[get list watch]"), "{listed}");
    assert!(!listed.lines().any(|l| l.starts_with("secrets")), "{listed}");

    // The default aggregated roles: `view` in team-b lets it read Clusters there, not write.
    kubectl_ok(
        &admin,
        &[
            "create",
            "rolebinding",
            "deployer-views",
            "--clusterrole=view",
            "--serviceaccount=team-a:deployer",
            "-n",
            "team-b",
        ],
        None,
    );
    assert_eq!(can_i("1.33", &sa, &["list", "clusters.cluster.x-k8s.io", "-n", "team-b"]), (true, "yes".into()));
    assert_eq!(can_i("1.33", &sa, &["create", "clusters.cluster.x-k8s.io", "-n", "team-b"]), (false, "no".into()));
    assert!(kubectl_ok(&sa, &["get", "configmaps", "-n", "team-b", "-o", "name"], None).contains("settings"));
    let view: Value =
        serde_json::from_str(&kubectl_ok(&admin, &["get", "clusterrole", "view", "-o", "json"], None)).expect("json");
    let groups = view["rules"].to_string();
    assert!(groups.contains("cluster.x-k8s.io") && groups.contains("\"apps\""), "{groups}");

    // An admin of team-b may bind there what it holds, and nothing more (no escalation).
    kubectl_ok(
        &admin,
        &[
            "create",
            "rolebinding",
            "deployer-admins",
            "--clusterrole=admin",
            "--serviceaccount=team-a:deployer",
            "-n",
            "team-b",
        ],
        None,
    );
    kubectl_ok(&sa, &["create", "rolebinding", "bob-views", "--clusterrole=view", "--user=bob", "-n", "team-b"], None);
    kubectl_ok(&sa, &["create", "role", "cm-reader", "--verb=get", "--resource=configmaps", "-n", "team-b"], None);
    let not_held = "is attempting to grant RBAC permissions not currently held";
    forbidden(
        &sa,
        &[
            "create",
            "rolebinding",
            "self",
            "--clusterrole=cluster-admin",
            "--serviceaccount=team-a:deployer",
            "-n",
            "team-b",
        ],
        not_held,
    );
    forbidden(&sa, &["create", "role", "node-reader", "--verb=get", "--resource=nodes", "-n", "team-b"], not_held);
    forbidden(
        &sa,
        &["create", "clusterrolebinding", "self", "--clusterrole=view", "--serviceaccount=team-a:deployer"],
        "cannot create resource \"clusterrolebindings\"",
    );

    // The issuer's discovery document and keys verify the token.
    let get_raw =
        |path: &str| -> Value { serde_json::from_str(&kubectl_ok(&sa, &["get", "--raw", path], None)).expect("json") };
    let discovery = get_raw("/.well-known/openid-configuration");
    assert_eq!(discovery["issuer"], DEFAULT_ISSUER);
    let jwks = get_raw("/openid/v1/jwks");
    let key = &jwks["keys"][0];
    let header = jsonwebtoken::decode_header(token).expect("JWT header");
    assert_eq!(header.kid.as_deref(), key["kid"].as_str());
    let decoding =
        jsonwebtoken::DecodingKey::from_ec_components(key["x"].as_str().expect("x"), key["y"].as_str().expect("y"))
            .expect("jwk");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[DEFAULT_ISSUER]);
    let claims = jsonwebtoken::decode::<Value>(token, &decoding, &validation).expect("the token verifies").claims;
    assert_eq!(claims["sub"], "system:serviceaccount:team-a:deployer");
    assert_eq!(claims["exp"].as_i64().expect("exp") - claims["iat"].as_i64().expect("iat"), 20 * 60);

    // Tokens expire: one signed with the server's key, issued two hours ago for one, is refused.
    let uid = kubectl_ok(&admin, &["get", "sa", "deployer", "-n", "team-a", "-o", "jsonpath={.metadata.uid}"], None);
    let key_pem = std::fs::read_to_string(dir.path().join("pki/sa.key")).expect("sa.key");
    let issuer = ServiceAccountTokens::new(DEFAULT_ISSUER, vec![], &key_pem).expect("issuer");
    let spec = TokenSpec {
        claims: KubernetesClaims {
            namespace: "team-a".into(),
            serviceaccount: ObjectClaim { name: "deployer".into(), uid },
            pod: None,
            secret: None,
            cluster_name: None,
        },
        audiences: vec![DEFAULT_ISSUER.into()],
        expiration_secs: 3600,
    };
    let (fresh, _) = issuer.issue(spec.clone(), now()).expect("issue");
    kubectl_ok(&token_kubeconfig(dir.path(), &url, &fresh), &["get", "configmaps"], None);
    let (expired, _) = issuer.issue(spec, now() - 7200).expect("issue");
    forbidden(
        &token_kubeconfig(dir.path(), &url, &expired),
        &["get", "configmaps"],
        "You must be logged in to the server",
    );
    let (ok, _, err) = kubectl(&admin, &["create", "token", "deployer", "-n", "team-a", "--duration", "5m"], None);
    assert!(!ok && err.contains("may not specify a duration less than 10 minutes"), "{err}");

    // A token outlives nothing it is bound to: a Secret it was bound to, then its
    // ServiceAccount, deleted, it is refused.
    kubectl_ok(&admin, &["create", "secret", "generic", "deploy-key", "-n", "team-a"], None);
    let bound = kubectl_ok(
        &admin,
        &[
            "create",
            "token",
            "deployer",
            "-n",
            "team-a",
            "--bound-object-kind=Secret",
            "--bound-object-name=deploy-key",
        ],
        None,
    );
    let bound = token_kubeconfig(dir.path(), &url, bound.trim());
    kubectl_ok(&bound, &["get", "configmaps"], None);
    kubectl_ok(&admin, &["delete", "secret", "deploy-key", "-n", "team-a"], None);
    forbidden(&bound, &["get", "configmaps"], "You must be logged in to the server");
    kubectl_ok(&sa, &["get", "configmaps"], None);
    kubectl_ok(&admin, &["delete", "sa", "deployer", "-n", "team-a"], None);
    forbidden(&sa, &["get", "configmaps"], "You must be logged in to the server");
}

/// Asks, as the administrator, whether `user` may `verb` `resource` in `group`.
fn may(admin: &Path, user: &str, verb: &str, group: &str, resource: &str) -> bool {
    let review = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": "default"}},
    });
    let out = kubectl_ok(admin, &["create", "-f", "-", "-o", "json"], Some(&review.to_string()));
    let answer: Value = serde_json::from_str(&out).expect("a SubjectAccessReview");
    answer["status"]["allowed"].as_bool().expect("status.allowed")
}

const CAPI: &str = "cluster.x-k8s.io";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";
const BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io";
const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
const IPAM: &str = "ipam.cluster.x-k8s.io";
const CORE: &str = "system:drydock:capi-manager";
const BOOTSTRAP_USER: &str = "system:drydock:capi-kubeadm-bootstrap-manager";
const CONTROL_PLANE_USER: &str = "system:drydock:capi-kubeadm-control-plane-manager";
const IPAM_USER: &str = "system:drydock:capi-ipam-in-cluster-manager";
const PROVIDER: &str = "system:drydock:capi-in-memory-manager";
const CACHE: &str = "system:drydock:controller-manager";

/// What each component's user may do (user, verb, group, resource, allowed).
#[rustfmt::skip]
const ACCESS: &[(&str, &str, &str, &str, bool)] = &[
    (CORE, "create", CAPI, "clusters", true),
    (CORE, "patch", INFRA, "devmachines", true),
    (CORE, "create", BOOTSTRAP, "kubeadmconfigs", true),
    (CORE, "create", "", "secrets", true),
    (CORE, "update", "coordination.k8s.io", "leases", true),
    (CORE, "create", IPAM, "ipaddresses", false),
    (CORE, "delete", "", "namespaces", false),
    (CORE, "get", "", "services", true),
    (CORE, "list", "discovery.k8s.io", "endpointslices", true),
    (CORE, "create", "", "services", false),
    (CORE, "create", "rbac.authorization.k8s.io", "clusterrolebindings", false),
    (CORE, "create", "", "serviceaccounts", false),
    (CORE, "get", "infrastructure.acme.example", "acmemachines", false),
    (BOOTSTRAP_USER, "update", BOOTSTRAP, "kubeadmconfigs", true),
    (BOOTSTRAP_USER, "create", "", "secrets", true),
    (BOOTSTRAP_USER, "get", CAPI, "machines", true),
    (BOOTSTRAP_USER, "create", CAPI, "machines", false),
    (BOOTSTRAP_USER, "create", CONTROL_PLANE, "kubeadmcontrolplanes", false),
    (CONTROL_PLANE_USER, "create", CAPI, "machines", true),
    (CONTROL_PLANE_USER, "patch", CONTROL_PLANE, "kubeadmcontrolplanes", true),
    (CONTROL_PLANE_USER, "create", BOOTSTRAP, "kubeadmconfigs", true),
    (CONTROL_PLANE_USER, "create", INFRA, "inmemorymachines", true),
    (CONTROL_PLANE_USER, "delete", CAPI, "clusters", false),
    (CONTROL_PLANE_USER, "create", CAPI, "machinedeployments", false),
    (IPAM_USER, "create", IPAM, "ipaddresses", true),
    (IPAM_USER, "get", "", "secrets", false),
    (IPAM_USER, "create", CAPI, "machines", false),
    (PROVIDER, "patch", INFRA, "inmemorymachines", true),
    (PROVIDER, "create", IPAM, "ipaddressclaims", true),
    (PROVIDER, "get", "", "secrets", true),
    (PROVIDER, "create", "", "secrets", false),
    (PROVIDER, "delete", CAPI, "machines", false),
    (PROVIDER, "create", IPAM, "ipaddresses", false),
    (CACHE, "watch", CAPI, "machines", true),
    (CACHE, "list", "", "secrets", true),
    (CACHE, "patch", CAPI, "machines", false),
    (CACHE, "create", "", "secrets", false),
];

/// Each of drydock's components acts as its own user, allowed by its default role what it
/// reads and writes and no more; the caches they share only read. Roles labelled as
/// upstream's providers label theirs extend the core's and the control plane's roles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controllers_act_with_least_privilege_and_aggregate_providers_roles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{}", free_port()), &[]);
    let admin = kubeconfig_of(dir.path()).await;
    let (core, control_plane, bootstrap) = (CORE, CONTROL_PLANE_USER, BOOTSTRAP_USER);
    for (user, verb, group, resource, allowed) in ACCESS {
        assert_eq!(may(&admin, user, verb, group, resource), *allowed, "{user}: {verb} {group}/{resource}");
    }
    // A provider's ClusterRoles with upstream's labels extend the core's and the control
    // plane's roles; the aggregation controller writes what each role now aggregates.
    for (user, role, label) in [
        (core, "drydock:capi-aggregated-manager-role", "cluster.x-k8s.io/aggregate-to-manager"),
        (
            control_plane,
            "drydock:capi-kubeadm-control-plane-aggregated-manager-role",
            "kubeadm.controlplane.cluster.x-k8s.io/aggregate-to-manager",
        ),
    ] {
        let provider_role = format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: acme-for-capi\n  \
             labels: {{{label}: \"true\"}}\nrules:\n- apiGroups: [infrastructure.acme.example]\n  \
             resources: [\"*\"]\n  verbs: [get, list, watch, patch]\n"
        );
        kubectl_ok(&admin, &["apply", "-f", "-"], Some(&provider_role));
        assert!(may(&admin, user, "get", "infrastructure.acme.example", "acmemachines"), "{user}");
        assert!(!may(&admin, user, "delete", "infrastructure.acme.example", "acmemachines"), "{user}");
        assert!(!may(&admin, bootstrap, "get", "infrastructure.acme.example", "acmemachines"));
        let rules = || kubectl_ok(&admin, &["get", "clusterrole", role, "-o", "json"], None);
        common::wait("the provider's rules aggregated", Duration::from_secs(30), || {
            rules().contains("infrastructure.acme.example")
        })
        .await;
        kubectl_ok(&admin, &["delete", "clusterrole", "acme-for-capi"], None);
        common::wait("the provider's rules gone", Duration::from_secs(30), || {
            !rules().contains("infrastructure.acme.example")
        })
        .await;
        assert!(!may(&admin, user, "get", "infrastructure.acme.example", "acmemachines"), "{user}");
    }
}

/// The kubeadm bootstrap controller writes as its own user and nothing else lends it
/// rights: with its binding naming someone else, its reconciles fail (forbidden) and no
/// bootstrap data is made; with the binding back, the cluster provisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_without_its_binding_is_refused_and_recovers_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{}", free_port()), &[]);
    let admin = kubeconfig_of(dir.path()).await;
    let binding = "drydock:capi-kubeadm-bootstrap-manager-rolebinding";
    let subject = |name: &str| format!("[{{\"op\":\"replace\",\"path\":\"/subjects/0/name\",\"value\":\"{name}\"}}]");
    kubectl_ok(&admin, &["patch", "clusterrolebinding", binding, "--type=json", "-p", &subject("nobody")], None);
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(&common::generated_cluster("lonely", &[])));
    // Its reconciles fail, and the API server refused a write of Secrets (bootstrap data,
    // certificates): nobody else writing them is refused.
    let counted = |l: &str, metric: &str| {
        l.starts_with(metric) && l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v > 0.0)
    };
    common::wait("the bootstrap controller refused", Duration::from_secs(60), || {
        let m = common::scrape(&admin);
        let failed = m.lines().any(|l| {
            counted(l, "controller_runtime_reconcile_errors_total{") && l.contains("controller=\"kubeadmconfig\"")
        });
        let refused = m.lines().any(|l| {
            counted(l, "apiserver_request_total{") && l.contains("resource=\"secrets\"") && l.contains("code=\"403\"")
        });
        failed && refused
    })
    .await;
    let configs =
        kubectl_ok(&admin, &["get", "kubeadmconfigs", "-o", "jsonpath={.items[*].status.dataSecretName}"], None);
    assert_eq!(configs.trim(), "", "no bootstrap data without the role");
    kubectl_ok(&admin, &["patch", "clusterrolebinding", binding, "--type=json", "-p", &subject(BOOTSTRAP_USER)], None);
    common::wait("the cluster provisions", Duration::from_secs(120), || common::running(&admin, "lonely") >= 2).await;
}

/// `kubectl --as`: an administrator acts as any user (and sees what that user may do); a
/// user may impersonate only whom a role lets them (`impersonate` on users, groups or
/// serviceaccounts, by name); the impersonated user is who the server then sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_acts_as_another_user_when_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &[]);
    let admin = kubeconfig_of(dir.path()).await;
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(POLICY));
    let alice_reads = "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\
        \"metadata\":{\"name\":\"alice-reads\",\"namespace\":\"team-a\"},\
        \"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"configmap-reader\"},\
        \"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"User\",\"name\":\"alice\"}]}";
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(alice_reads));

    // The administrator, as alice, can do what alice can and no more.
    let listed = kubectl_ok(&admin, &["--as", "alice", "get", "configmaps", "-n", "team-a", "-o", "name"], None);
    assert!(listed.contains("configmap/settings"), "{listed}");
    forbidden(
        &admin,
        &["--as", "alice", "get", "configmaps", "-n", "team-b"],
        "User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team-b\"",
    );
    for version in ["1.27", "1.33"] {
        assert!(can_i(version, &admin, &["list", "configmaps", "-n", "team-a", "--as", "alice"]).0, "{version}");
        assert!(!can_i(version, &admin, &["list", "configmaps", "-n", "team-a", "--as", "bob"]).0, "{version}");
    }
    let who: Value = serde_json::from_str(&kubectl_ok(
        &admin,
        &["auth", "whoami", "--as", "alice", "--as-group", "devs", "-o", "json"],
        None,
    ))
    .expect("whoami");
    assert_eq!(who["status"]["userInfo"]["username"], "alice");
    assert_eq!(who["status"]["userInfo"]["groups"], serde_json::json!(["devs", "system:authenticated"]));
    let sa_name = "system:serviceaccount:team-a:deployer";
    let who: Value =
        serde_json::from_str(&kubectl_ok(&admin, &["auth", "whoami", "--as", sa_name, "-o", "json"], None))
            .expect("whoami");
    let groups = who["status"]["userInfo"]["groups"].to_string();
    assert!(groups.contains("\"system:serviceaccounts:team-a\""), "{groups}");

    // A ServiceAccount may not impersonate anyone until a role says so, and then only whom
    // it names.
    let url = format!("https://127.0.0.1:{port}");
    let token = kubectl_ok(&admin, &["create", "token", "deployer", "-n", "team-a"], None);
    let sa = token_kubeconfig(dir.path(), &url, token.trim());
    let me = format!("User \"{sa_name}\"");
    // As itself first (which also fills kubectl's discovery cache, read as itself).
    assert!(kubectl_ok(&sa, &["get", "configmaps", "-o", "name"], None).contains("configmap/settings"));
    forbidden(
        &sa,
        &["--as", "alice", "get", "configmaps"],
        &format!(
            "users \"alice\" is forbidden: {me} cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        ),
    );
    let grant = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-alice}
rules:
- {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [alice]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: deployer-impersonates-alice}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-alice}
subjects: [{kind: ServiceAccount, name: deployer, namespace: team-a}]
"#;
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(grant));
    let whoami =
        kubectl_ok(&sa, &["--as", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], None);
    assert_eq!(whoami, "alice");
    forbidden(&sa, &["--as", "bob", "get", "configmaps"], "cannot impersonate resource \"users\"");
    forbidden(
        &sa,
        &["--as", "alice", "--as-group", "system:masters", "get", "configmaps"],
        "groups \"system:masters\" is forbidden",
    );
}

/// A `kubernetes.io/service-account-token` Secret, as tools that predate TokenRequest
/// create it: it gets a token (with `ca.crt` and `namespace`) that authenticates as its
/// ServiceAccount until the Secret or the account is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_token_secret_gets_a_token_that_lives_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &[]);
    let admin = kubeconfig_of(dir.path()).await;
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(POLICY));
    let secret = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"kubernetes.io/service-account-token\",\
        \"metadata\":{\"name\":\"deployer-token\",\"namespace\":\"team-a\",\
        \"annotations\":{\"kubernetes.io/service-account.name\":\"deployer\"}}}";
    kubectl_ok(&admin, &["apply", "-f", "-"], Some(secret));
    let read = || {
        let (ok, out, _) = kubectl(&admin, &["get", "secret", "-n", "team-a", "deployer-token", "-o", "json"], None);
        serde_json::from_str::<Value>(&out).ok().filter(|_| ok).unwrap_or_default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let filled = loop {
        let s = read();
        if s["data"]["token"].is_string() {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "the token was never written: {s}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let decode = |k: &str| {
        use base64::Engine as _;
        let b = base64::engine::general_purpose::STANDARD.decode(filled["data"][k].as_str().unwrap_or_default());
        String::from_utf8(b.expect("base64")).expect("utf-8")
    };
    assert_eq!(decode("namespace"), "team-a");
    assert_eq!(decode("ca.crt"), std::fs::read_to_string(dir.path().join("pki/ca.crt")).expect("ca.crt"));
    let sa_uid = kubectl_ok(&admin, &["get", "sa", "-n", "team-a", "deployer", "-o", "jsonpath={.metadata.uid}"], None);
    assert_eq!(filled["metadata"]["annotations"]["kubernetes.io/service-account.uid"], sa_uid.as_str());

    let url = format!("https://127.0.0.1:{port}");
    let sa = token_kubeconfig(dir.path(), &url, &decode("token"));
    let whoami = kubectl_ok(&sa, &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], None);
    assert_eq!(whoami, "system:serviceaccount:team-a:deployer");
    assert!(kubectl_ok(&sa, &["get", "configmaps", "-o", "name"], None).contains("configmap/settings"));

    // Without its Secret the token is no credential.
    kubectl_ok(&admin, &["delete", "secret", "-n", "team-a", "deployer-token"], None);
    let (ok, _, err) = kubectl(&sa, &["get", "configmaps"], None);
    assert!(!ok && err.contains("Unauthorized"), "{err}");
    // A token Secret must name its ServiceAccount.
    let nameless =
        secret.replace("\"annotations\":{\"kubernetes.io/service-account.name\":\"deployer\"}", "\"labels\":{}");
    let (ok, _, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&nameless));
    assert!(!ok && err.contains("kubernetes.io/service-account.name"), "{err}");
}
