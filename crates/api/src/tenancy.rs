//! Logical clusters of drydock's API server: their names, how paths address them, the
//! well-known keys around them, and kubeconfigs pointing at them.
//!
//! The server serves kcp-style logical clusters: `/clusters/<name>/...` addresses the logical
//! cluster `<name>`, unprefixed paths the root cluster, and `/clusters/*/...` lists and
//! watches one resource across every logical cluster. Each simulated workload cluster is the
//! logical cluster `<namespace>.<cluster>` of the management cluster's Cluster.

use std::fmt;

use crate::pki::KeyAndCert;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::config::{AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};

/// API group of the `LogicalCluster` kind.
pub const TENANCY_GROUP: &str = "tenancy.drydock.dev";
/// Version of the `LogicalCluster` kind.
pub const TENANCY_VERSION: &str = "v1alpha1";
/// Kind whose objects (in the root cluster) make logical clusters exist.
pub const LOGICAL_CLUSTER_KIND: &str = "LogicalCluster";
/// Plural of [`LOGICAL_CLUSTER_KIND`].
pub const LOGICAL_CLUSTER_PLURAL: &str = "logicalclusters";

/// Label on a LogicalCluster that makes its API server unreachable: every request to it
/// but the health, version and OpenAPI endpoints is answered 503 (a simulated outage).
pub const UNREACHABLE_LABEL: &str = "tenancy.drydock.dev/unreachable";

/// Annotation naming the logical cluster of an object returned by a wildcard read.
pub const CLUSTER_ANNOTATION: &str = "tenancy.drydock.dev/cluster";

/// Annotation carrying the URL path of a workload cluster's API server when it shares a
/// host and port with others (drydock's logical clusters: `/clusters/<name>`). The
/// infrastructure cluster sets it next to `spec.controlPlaneEndpoint`; the Cluster
/// controller copies both to the Cluster; the control plane writes it into the kubeconfig.
pub const ENDPOINT_PATH_ANNOTATION: &str = "infrastructure.drydock.dev/control-plane-endpoint-path";

/// DNS suffix of the TLS server name of a workload cluster's logical cluster
/// (`<namespace>.<cluster>.<suffix>`): the name its kubeconfig asks for (`tls-server-name`),
/// by which the server picks the serving certificate signed by that cluster's own CA.
pub const TLS_SERVER_NAME_SUFFIX: &str = "clusters.drydock.internal";

/// Path prefix of a logical cluster.
const PATH_PREFIX: &str = "/clusters/";

/// The name of a logical cluster.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogicalClusterName(String);

impl LogicalClusterName {
    /// The name of the cluster served at the unprefixed paths.
    pub const ROOT: &str = "root";
    /// The name that addresses every logical cluster (lists and watches only).
    pub const WILDCARD: &str = "*";

    /// The logical cluster called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The root cluster.
    pub fn root() -> Self {
        Self::new(Self::ROOT)
    }

    /// Every logical cluster at once.
    pub fn wildcard() -> Self {
        Self::new(Self::WILDCARD)
    }

    /// The logical cluster simulating the workload cluster of the Cluster `namespace/cluster`.
    /// Namespaces are DNS labels (no dots), so the first dot separates the two unambiguously.
    pub fn for_cluster(namespace: &str, cluster: &str) -> Self {
        Self(format!("{namespace}.{cluster}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Cluster (namespace, name) whose workload cluster this logical cluster simulates.
    pub fn workload_cluster(&self) -> Option<(&str, &str)> {
        self.0.split_once('.').filter(|(ns, name)| !ns.is_empty() && !name.is_empty())
    }

    /// The TLS server name of this logical cluster (see [`TLS_SERVER_NAME_SUFFIX`]).
    pub fn tls_server_name(&self) -> String {
        format!("{}.{TLS_SERVER_NAME_SUFFIX}", self.0)
    }

    /// The logical cluster a TLS server name asks for, if it is one of theirs.
    pub fn from_tls_server_name(name: &str) -> Option<Self> {
        let lc = Self::new(name.strip_suffix(TLS_SERVER_NAME_SUFFIX)?.strip_suffix('.')?);
        lc.workload_cluster().is_some().then_some(lc)
    }

    pub fn is_root(&self) -> bool {
        self.0 == Self::ROOT
    }

    pub fn is_wildcard(&self) -> bool {
        self.0 == Self::WILDCARD
    }

    /// The path prefix addressing this logical cluster: `/clusters/<name>`.
    pub fn path(&self) -> String {
        format!("{PATH_PREFIX}{}", self.0)
    }

    /// The logical cluster a path of exactly the form `/clusters/<name>` (a trailing slash
    /// allowed) addresses.
    pub fn from_path(path: &str) -> Option<Self> {
        Self::name_in_path(path).map(Self::new)
    }

    /// The name [`Self::from_path`] finds in `path`, borrowed.
    pub fn name_in_path(path: &str) -> Option<&str> {
        let name = path.strip_prefix(PATH_PREFIX)?.trim_end_matches('/');
        (!name.is_empty() && !name.contains('/')).then_some(name)
    }

    /// The logical cluster a URL's path addresses (`http://host:port/clusters/<name>`).
    pub fn from_url(url: &str) -> Option<Self> {
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        Self::from_path(&rest[rest.find('/')?..])
    }

    /// Splits a request path's segments into the logical cluster they address and the rest:
    /// `["clusters", name, rest..]` addresses `name`, anything else the root cluster. `None`
    /// when the path is `/clusters` with no name.
    pub fn split_segments<S: AsRef<str>>(segments: &[S]) -> Option<(Self, &[S])> {
        match segments {
            [first, name, rest @ ..] if first.as_ref() == "clusters" => Some((Self::new(name.as_ref()), rest)),
            [first] if first.as_ref() == "clusters" => None,
            all => Some((Self::root(), all)),
        }
    }
}

impl fmt::Display for LogicalClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for LogicalClusterName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for LogicalClusterName {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for LogicalClusterName {
    fn from(name: String) -> Self {
        Self(name)
    }
}

/// A kubeconfig with one cluster, one user and one context selecting both.
#[derive(Clone, Copy, Debug, Default)]
pub struct KubeconfigFor<'a> {
    /// The API server URL (possibly with a `/clusters/<name>` path).
    pub server: &'a str,
    /// Name of the cluster entry.
    pub cluster: &'a str,
    /// Name of the user entry.
    pub user: &'a str,
    /// Name of the context, also the current context.
    pub context: &'a str,
    /// Default namespace of the context, if any.
    pub namespace: Option<&'a str>,
    /// The CA (PEM) the server's certificate is checked against.
    pub ca_pem: Option<&'a str>,
    /// The name the server's certificate is checked for, when not the URL's host.
    pub tls_server_name: Option<&'a str>,
    /// The user's client certificate and key (PEM).
    pub client: Option<&'a KeyAndCert>,
}

impl KubeconfigFor<'_> {
    /// The kubeconfig.
    pub fn build(&self) -> Kubeconfig {
        Kubeconfig {
            api_version: Some("v1".into()),
            kind: Some("Config".into()),
            clusters: vec![NamedCluster {
                name: self.cluster.into(),
                cluster: Some(Cluster {
                    server: Some(self.server.into()),
                    certificate_authority_data: self.ca_pem.map(|pem| BASE64.encode(pem)),
                    tls_server_name: self.tls_server_name.map(Into::into),
                    ..Cluster::default()
                }),
                ..NamedCluster::default()
            }],
            auth_infos: vec![NamedAuthInfo {
                name: self.user.into(),
                auth_info: Some(AuthInfo {
                    client_certificate_data: self.client.map(|c| BASE64.encode(&c.cert_pem)),
                    client_key_data: self.client.map(|c| BASE64.encode(&c.key_pem).into()),
                    ..AuthInfo::default()
                }),
                ..NamedAuthInfo::default()
            }],
            contexts: vec![NamedContext {
                name: self.context.into(),
                context: Some(Context {
                    cluster: self.cluster.into(),
                    user: Some(self.user.into()),
                    namespace: self.namespace.map(Into::into),
                    ..Context::default()
                }),
                ..NamedContext::default()
            }],
            current_context: Some(self.context.into()),
            ..Kubeconfig::default()
        }
    }

    /// The kubeconfig as YAML.
    pub fn to_yaml(&self) -> String {
        serde_saphyr::to_string(&self.build()).expect("a kubeconfig serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        let lc = LogicalClusterName::for_cluster("default", "c1");
        assert_eq!(lc.as_str(), "default.c1");
        assert_eq!(lc.path(), "/clusters/default.c1");
        assert_eq!(LogicalClusterName::from_path("/clusters/default.c1/"), Some(lc.clone()));
        assert_eq!(LogicalClusterName::from_url("http://127.0.0.1:6443/clusters/default.c1"), Some(lc));
        assert_eq!(LogicalClusterName::from_path("/clusters/"), None);
        assert_eq!(LogicalClusterName::from_path("/clusters/a/b"), None);
        assert_eq!(LogicalClusterName::from_url("http://127.0.0.1:6443"), None);
        assert_eq!(LogicalClusterName::wildcard().path(), "/clusters/*");
        assert!(LogicalClusterName::root().is_root() && LogicalClusterName::wildcard().is_wildcard());
        let (lc, rest) = LogicalClusterName::split_segments(&["clusters", "x", "api"]).unwrap();
        assert_eq!((lc.as_str(), rest), ("x", &["api"][..]));
        let (lc, rest) = LogicalClusterName::split_segments(&["api", "v1"]).unwrap();
        assert_eq!((lc.as_str(), rest.len()), ("root", 2));
        assert!(LogicalClusterName::split_segments(&["clusters"]).is_none());
    }

    #[test]
    fn kubeconfig_round_trips() {
        let yaml = KubeconfigFor {
            server: "http://127.0.0.1:6443/clusters/ns.c",
            cluster: "c",
            user: "c-admin",
            context: "c-admin@c",
            namespace: Some("default"),
            ..Default::default()
        }
        .to_yaml();
        let kc = Kubeconfig::from_yaml(&yaml).unwrap();
        assert_eq!(kc.current_context.as_deref(), Some("c-admin@c"));
        assert_eq!(
            kc.clusters[0].cluster.as_ref().unwrap().server.as_deref(),
            Some("http://127.0.0.1:6443/clusters/ns.c")
        );
        let ctx = kc.contexts[0].context.as_ref().unwrap();
        assert_eq!(
            (ctx.cluster.as_str(), ctx.user.as_deref(), ctx.namespace.as_deref()),
            ("c", Some("c-admin"), Some("default"))
        );
        assert_eq!(kc.auth_infos[0].name, "c-admin");
    }

    #[test]
    fn workload_clusters_have_tls_server_names() {
        let lc = LogicalClusterName::for_cluster("default", "c1");
        assert_eq!(lc.workload_cluster(), Some(("default", "c1")));
        assert_eq!(lc.tls_server_name(), "default.c1.clusters.drydock.internal");
        assert_eq!(LogicalClusterName::from_tls_server_name(&lc.tls_server_name()), Some(lc));
        assert_eq!(LogicalClusterName::from_tls_server_name("localhost"), None);
        assert_eq!(LogicalClusterName::from_tls_server_name("x.clusters.drydock.internal"), None);
    }

    #[test]
    fn kubeconfig_with_credentials() {
        let client = KeyAndCert { cert_pem: "CERT".into(), key_pem: "KEY".into() };
        let yaml = KubeconfigFor {
            server: "https://127.0.0.1:6443",
            cluster: "c",
            user: "u",
            context: "c",
            ca_pem: Some("CA"),
            tls_server_name: Some("ns.c.clusters.drydock.internal"),
            client: Some(&client),
            ..Default::default()
        }
        .to_yaml();
        let kc = Kubeconfig::from_yaml(&yaml).unwrap();
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some(BASE64.encode("CA").as_str()));
        assert_eq!(cluster.tls_server_name.as_deref(), Some("ns.c.clusters.drydock.internal"));
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate_data.as_deref(), Some(BASE64.encode("CERT").as_str()));
    }
}
