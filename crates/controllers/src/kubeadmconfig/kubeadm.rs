//! The kubeadm configuration a node runs: `kubeadm init` (ClusterConfiguration and
//! InitConfiguration) for the first control plane node, `kubeadm join` (JoinConfiguration)
//! for every other node, with what the KubeadmConfig leaves empty filled from the Cluster and
//! the Machine, as upstream's bootstrap provider does.

use drydock_api::capi::core::ClusterNetwork;
use drydock_api::capi::kubeadm::{
    BootstrapTokenDiscovery, ClusterConfiguration, Discovery, JoinConfiguration, JoinControlPlane, KubeadmConfigSpec,
    Networking,
};
use serde_json::{Map, Value, json};

use super::yaml;
use crate::framework::Result;

/// Where the kubeadm configuration is written on the node.
pub(crate) const INIT_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";
pub(crate) const JOIN_CONFIG_PATH: &str = "/run/kubeadm/kubeadm-join-config.yaml";
/// Written once kubeadm succeeded (what upstream's providers look for on the node).
pub(crate) const SENTINEL_PATH: &str = "/run/cluster-api/bootstrap-success.complete";

/// What a node does with kubeadm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `kubeadm init`: the first control plane node.
    Init,
    /// `kubeadm join`, as a control plane node or a worker.
    Join { control_plane: bool },
}

/// What the configuration takes from the Cluster and Machine.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClusterFacts {
    pub cluster_name: String,
    /// `host:port` of the control plane endpoint, once valid.
    pub endpoint: Option<String>,
    pub network: Option<ClusterNetwork>,
    /// The Machine's Kubernetes version (`vX.Y.Z`).
    pub version: Option<String>,
    /// Stands in for a bootstrap token in join discovery (see [`placeholder_token`]).
    pub token: String,
}

/// kubeadm's API version for a Kubernetes version: v1beta4 from 1.31, v1beta3 before.
pub(crate) fn api_version(version: Option<&str>) -> &'static str {
    let minor = version.and_then(|v| drydock_api::capi::version::parse(v).ok()).map(|v| (v.major, v.minor));
    match minor {
        Some((1, m)) if m >= 31 => "kubeadm.k8s.io/v1beta4",
        Some((major, _)) if major > 1 => "kubeadm.k8s.io/v1beta4",
        _ => "kubeadm.k8s.io/v1beta3",
    }
}

/// The configuration file's path and content, and the command running it.
pub(crate) fn document(spec: &KubeadmConfigSpec, mode: Mode, facts: &ClusterFacts) -> Result<(String, String, String)> {
    let api = api_version(facts.version.as_deref());
    let (path, content) = match mode {
        Mode::Init => {
            let cluster = cluster_configuration(spec.cluster_configuration.clone().unwrap_or_default(), facts);
            let init = spec.init_configuration.clone().unwrap_or_default();
            let mut cluster = typed(serde_json::to_value(cluster)?, api, "ClusterConfiguration");
            let mut init = typed(serde_json::to_value(init)?, api, "InitConfiguration");
            if api.ends_with("v1beta4") {
                // v1beta4 moved the API server start timeout into InitConfiguration.timeouts.
                if let Some(t) = cluster
                    .pointer_mut("/apiServer")
                    .and_then(Value::as_object_mut)
                    .and_then(|a| a.remove("timeoutForControlPlane"))
                {
                    init["timeouts"]["controlPlaneComponentHealthCheck"] = t;
                }
                to_v1beta4(&mut cluster);
                to_v1beta4(&mut init);
            }
            (INIT_CONFIG_PATH, format!("---\n{}---\n{}", yaml::to_string(&cluster), yaml::to_string(&init)))
        }
        Mode::Join { control_plane } => {
            let join = join_configuration(spec.join_configuration.clone().unwrap_or_default(), control_plane, facts);
            let mut join = typed(serde_json::to_value(join)?, api, "JoinConfiguration");
            if api.ends_with("v1beta4") {
                if let Some(t) =
                    join.pointer_mut("/discovery").and_then(Value::as_object_mut).and_then(|d| d.remove("timeout"))
                {
                    join["timeouts"]["discovery"] = t;
                }
                to_v1beta4(&mut join);
            }
            (JOIN_CONFIG_PATH, format!("---\n{}", yaml::to_string(&join)))
        }
    };
    let verb = if mode == Mode::Init { "init" } else { "join" };
    let verbosity = spec.verbosity.map(|v| format!(" --v={v}")).unwrap_or_default();
    let command = format!(
        "kubeadm {verb} --config {path}{verbosity} && mkdir -p /run/cluster-api && echo success > {SENTINEL_PATH}"
    );
    Ok((path.to_string(), content, command))
}

fn typed(mut v: Value, api_version: &str, kind: &str) -> Value {
    if !v.is_object() {
        v = Value::Object(Map::new());
    }
    v["apiVersion"] = json!(api_version);
    v["kind"] = json!(kind);
    v
}

/// Fills the cluster-wide fields the user left empty from the Cluster and Machine.
fn cluster_configuration(mut c: ClusterConfiguration, facts: &ClusterFacts) -> ClusterConfiguration {
    if c.control_plane_endpoint.as_deref().is_none_or(str::is_empty) {
        c.control_plane_endpoint = facts.endpoint.clone();
    }
    if c.cluster_name.as_deref().is_none_or(str::is_empty) {
        c.cluster_name = Some(facts.cluster_name.clone());
    }
    if c.kubernetes_version.as_deref().is_none_or(str::is_empty) {
        c.kubernetes_version = facts.version.clone();
    }
    if let Some(n) = &facts.network {
        let net = c.networking.get_or_insert_with(Networking::default);
        let join = |r: Option<&drydock_api::capi::core::NetworkRanges>| {
            r.map(|r| r.cidr_blocks.join(",")).filter(|s| !s.is_empty())
        };
        if net.dns_domain.is_none() {
            net.dns_domain = n.service_domain.clone();
        }
        if net.service_subnet.is_none() {
            net.service_subnet = join(n.services.as_ref());
        }
        if net.pod_subnet.is_none() {
            net.pod_subnet = join(n.pods.as_ref());
        }
    }
    c.api_version = None;
    c.kind = None;
    c
}

/// Fills discovery (the control plane endpoint) and, for control plane nodes, the
/// controlPlane section.
fn join_configuration(mut j: JoinConfiguration, control_plane: bool, facts: &ClusterFacts) -> JoinConfiguration {
    let d = j.discovery.get_or_insert_with(Discovery::default);
    if d.file.is_none() {
        let t = d.bootstrap_token.get_or_insert_with(|| BootstrapTokenDiscovery {
            token: facts.token.clone(),
            unsafe_skip_ca_verification: Some(true),
            ..Default::default()
        });
        if t.api_server_endpoint.as_deref().is_none_or(str::is_empty) {
            t.api_server_endpoint = facts.endpoint.clone();
        }
    }
    if control_plane && j.control_plane.is_none() {
        j.control_plane = Some(JoinControlPlane::default());
    }
    j.api_version = None;
    j.kind = None;
    j
}

/// A stable bootstrap-token-shaped value (`[a-z0-9]{6}.[a-z0-9]{16}`) derived from the
/// Cluster's uid. drydock's simulated nodes never present it to an API server; a stable value
/// keeps the join document well-formed without minting and storing a token per machine (the
/// per-reconcile key and token generation was upstream's CPU sink).
pub(crate) fn placeholder_token(seed: &str) -> String {
    let digits = |salt: &str, n: usize| {
        let mut h = fnv1a(seed.as_bytes(), salt.as_bytes());
        let mut s = String::with_capacity(n);
        for _ in 0..n {
            let d = (h % 36) as u8;
            s.push(if d < 10 { (b'0' + d) as char } else { (b'a' + d - 10) as char });
            h /= 36;
            if h == 0 {
                h = fnv1a(s.as_bytes(), salt.as_bytes());
            }
        }
        s
    };
    format!("{}.{}", digits("id", 6), digits("secret", 16))
}

fn fnv1a(a: &[u8], b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in a.iter().chain(b"/").chain(b) {
        h ^= u64::from(*byte);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// v1beta4 lists extra arguments as `[{name, value}]` instead of a map.
fn to_v1beta4(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if (k == "extraArgs" || k == "kubeletExtraArgs")
                    && let Value::Object(args) = child
                {
                    let list: Vec<Value> = args.iter().map(|(n, val)| json!({"name": n, "value": val})).collect();
                    *child = Value::Array(list);
                } else {
                    to_v1beta4(child);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(to_v1beta4),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::NetworkRanges;

    fn facts(version: &str) -> ClusterFacts {
        ClusterFacts {
            cluster_name: "c1".into(),
            endpoint: Some("10.0.0.1:6443".into()),
            network: Some(ClusterNetwork {
                pods: Some(NetworkRanges { cidr_blocks: vec!["192.168.0.0/16".into()] }),
                services: Some(NetworkRanges { cidr_blocks: vec!["10.128.0.0/12".into()] }),
                service_domain: Some("cluster.local".into()),
                ..Default::default()
            }),
            version: Some(version.into()),
            token: placeholder_token("uid-1"),
        }
    }

    #[test]
    fn api_versions() {
        assert_eq!(api_version(Some("v1.30.2")), "kubeadm.k8s.io/v1beta3");
        assert_eq!(api_version(Some("v1.31.0")), "kubeadm.k8s.io/v1beta4");
        assert_eq!(api_version(None), "kubeadm.k8s.io/v1beta3");
    }

    #[test]
    fn init_fills_cluster_facts() {
        let spec: KubeadmConfigSpec = serde_json::from_value(json!({
            "clusterConfiguration": {"apiServer": {"certSANs": ["localhost"]}},
            "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}}},
        }))
        .unwrap();
        let (path, doc, cmd) = document(&spec, Mode::Init, &facts("v1.30.2")).unwrap();
        assert_eq!(path, INIT_CONFIG_PATH);
        assert!(cmd.starts_with("kubeadm init --config /run/kubeadm/kubeadm.yaml"), "{cmd}");
        assert!(
            doc.starts_with("---\napiServer:\n  certSANs:\n  - localhost\napiVersion: kubeadm.k8s.io/v1beta3\n"),
            "{doc}"
        );
        for want in [
            "clusterName: c1\n",
            "controlPlaneEndpoint: \"10.0.0.1:6443\"\n",
            "kind: ClusterConfiguration\n",
            "kubernetesVersion: v1.30.2\n",
            "  podSubnet: \"192.168.0.0/16\"\n",
            "  serviceSubnet: \"10.128.0.0/12\"\n",
            "  dnsDomain: cluster.local\n",
            "---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n",
            "    eviction-hard: \"nodefs.available<0%\"\n",
        ] {
            assert!(doc.contains(want), "missing {want:?} in\n{doc}");
        }
    }

    #[test]
    fn join_fills_discovery_and_control_plane() {
        let spec = KubeadmConfigSpec::default();
        let (path, doc, cmd) = document(&spec, Mode::Join { control_plane: true }, &facts("v1.30.2")).unwrap();
        assert_eq!(path, JOIN_CONFIG_PATH);
        assert!(cmd.contains("kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"));
        assert!(doc.contains("controlPlane: {}\n"), "{doc}");
        assert!(doc.contains("    apiServerEndpoint: \"10.0.0.1:6443\"\n"), "{doc}");
        assert!(doc.contains("    unsafeSkipCAVerification: true\n"), "{doc}");
        let (_, worker, _) = document(&spec, Mode::Join { control_plane: false }, &facts("v1.30.2")).unwrap();
        assert!(!worker.contains("controlPlane"));
    }

    #[test]
    fn v1beta4_lists_extra_args() {
        let spec: KubeadmConfigSpec = serde_json::from_value(json!({
            "clusterConfiguration": {"apiServer": {"extraArgs": {"a": "1"}, "timeoutForControlPlane": "4m0s"}},
        }))
        .unwrap();
        let (_, doc, _) = document(&spec, Mode::Init, &facts("v1.31.1")).unwrap();
        assert!(doc.contains("apiVersion: kubeadm.k8s.io/v1beta4\n"));
        assert!(doc.contains("  extraArgs:\n  - name: a\n    value: \"1\"\n"), "{doc}");
        assert!(doc.contains("timeouts:\n  controlPlaneComponentHealthCheck: \"4m0s\"\n"), "{doc}");
        assert!(!doc.contains("timeoutForControlPlane"));
    }

    #[test]
    fn placeholder_tokens_are_stable_and_well_formed() {
        let t = placeholder_token("uid-1");
        assert_eq!(t, placeholder_token("uid-1"));
        assert_ne!(t, placeholder_token("uid-2"));
        let (id, secret) = t.split_once('.').unwrap();
        assert_eq!((id.len(), secret.len()), (6, 16));
        assert!(t.chars().all(|c| c == '.' || c.is_ascii_digit() || c.is_ascii_lowercase()));
    }
}
