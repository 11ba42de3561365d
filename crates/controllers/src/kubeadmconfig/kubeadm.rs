//! The kubeadm configuration a node runs: `kubeadm init` (ClusterConfiguration and
//! InitConfiguration) for the first control plane node, `kubeadm join` (JoinConfiguration)
//! for every other node, with what the KubeadmConfig leaves empty filled from the Cluster and
//! the Machine, as upstream's bootstrap provider does.
//!
//! The KubeadmConfig (v1beta2) is shaped like kubeadm's v1beta4 API: flags as `{name, value}`
//! lists, timeouts in whole seconds under `timeouts`. For Kubernetes 1.31+ the document is
//! kubeadm v1beta4 (durations instead of seconds, validity periods instead of days); before,
//! kubeadm v1beta3, which takes flags as maps and has no `timeouts` (the control plane health
//! check is `apiServer.timeoutForControlPlane` there, the TLS bootstrap timeout
//! `discovery.timeout`) nor any other v1beta4 addition (those are left out).

use drydock_api::capi::conversion::seconds_to_duration;
use drydock_api::capi::core::v1beta2::ClusterNetwork;
use drydock_api::capi::kubeadm::JoinControlPlane;
use drydock_api::capi::kubeadm::v1beta2::{
    ClusterConfiguration, InitConfiguration, JoinConfiguration, KubeadmConfigSpec, Timeouts,
};
use serde_json::{Map, Value, json};

use super::yaml;
use crate::framework::Result;

/// Where the kubeadm configuration is written on the node.
pub(crate) const INIT_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";
pub(crate) const JOIN_CONFIG_PATH: &str = "/run/kubeadm/kubeadm-join-config.yaml";
/// Written once kubeadm succeeded (what upstream's providers look for on the node).
pub(crate) const SENTINEL_PATH: &str = "/run/cluster-api/bootstrap-success.complete";

const V1BETA3: &str = "kubeadm.k8s.io/v1beta3";
const V1BETA4: &str = "kubeadm.k8s.io/v1beta4";

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
    /// The cluster CA's pin (`sha256:<hex>`), when there is a CA to pin.
    pub ca_cert_hash: Option<String>,
}

/// kubeadm's API version for a Kubernetes version: v1beta4 from 1.31, v1beta3 before.
pub(crate) fn api_version(version: Option<&str>) -> &'static str {
    let minor = version.and_then(|v| drydock_api::capi::version::parse(v).ok()).map(|v| (v.major, v.minor));
    match minor {
        Some((1, m)) if m >= 31 => V1BETA4,
        Some((major, _)) if major > 1 => V1BETA4,
        _ => V1BETA3,
    }
}

/// The configuration file's path and content, and the command running it.
pub(crate) fn document(spec: &KubeadmConfigSpec, mode: Mode, facts: &ClusterFacts) -> Result<(String, String, String)> {
    let api = api_version(facts.version.as_deref());
    let v1beta4 = api == V1BETA4;
    let (path, content) = match mode {
        Mode::Init => {
            let mut init = spec.init_configuration.clone().unwrap_or_default();
            let timeouts = init.timeouts.take().unwrap_or_default();
            let cluster = spec.cluster_configuration.clone().unwrap_or_default();
            let mut cluster = typed(cluster_configuration(cluster, facts, v1beta4)?, api, "ClusterConfiguration");
            let mut init = typed(init_configuration(init, v1beta4)?, api, "InitConfiguration");
            if v1beta4 {
                put_timeouts(&mut init, &timeouts);
            } else if let Some(t) = seconds_to_duration(timeouts.control_plane_component_health_check_seconds) {
                // kubeadm v1beta3 has the API server's start-up timeout in ClusterConfiguration.
                cluster["apiServer"]["timeoutForControlPlane"] = json!(t);
            }
            (INIT_CONFIG_PATH, format!("---\n{}---\n{}", yaml::to_string(&cluster), yaml::to_string(&init)))
        }
        Mode::Join { control_plane } => {
            let mut join = spec.join_configuration.clone().unwrap_or_default();
            let timeouts = join.timeouts.take().unwrap_or_default();
            let join = join_configuration(join, control_plane, facts);
            let mut join = typed(serde_json::to_value(join)?, api, "JoinConfiguration");
            node_registration(&mut join, v1beta4);
            if v1beta4 {
                put_timeouts(&mut join, &timeouts);
            } else if let Some(t) = seconds_to_duration(timeouts.tls_bootstrap_seconds) {
                // kubeadm v1beta3's discovery timeout also bounds the TLS bootstrap.
                join["discovery"]["timeout"] = json!(t);
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

/// The ClusterConfiguration document: the spec's settings plus what v1beta2 always takes
/// from the Cluster and Machine (name, version, networking; the endpoint when unset).
fn cluster_configuration(c: ClusterConfiguration, facts: &ClusterFacts, v1beta4: bool) -> Result<Value> {
    let endpoint = c.control_plane_endpoint.clone().filter(|e| !e.is_empty()).or_else(|| facts.endpoint.clone());
    let validity = [
        ("certificateValidityPeriod", c.certificate_validity_period_days),
        ("caCertificateValidityPeriod", c.ca_certificate_validity_period_days),
    ];
    let mut v = serde_json::to_value(c)?;
    if let Value::Object(m) = &mut v {
        for k in ["certificateValidityPeriodDays", "caCertificateValidityPeriodDays"] {
            m.remove(k);
        }
        if !v1beta4 {
            m.remove("encryptionAlgorithm");
        }
    }
    if let Some(e) = endpoint {
        v["controlPlaneEndpoint"] = json!(e);
    }
    v["clusterName"] = json!(facts.cluster_name);
    if let Some(version) = &facts.version {
        v["kubernetesVersion"] = json!(version);
    }
    if let Some(n) = &facts.network {
        let mut net = Map::new();
        let ranges = |r: Option<&drydock_api::capi::core::v1beta2::NetworkRanges>| {
            r.map(|r| r.cidr_blocks.join(",")).filter(|s| !s.is_empty())
        };
        let fields = [
            ("dnsDomain", n.service_domain.clone()),
            ("serviceSubnet", ranges(n.services.as_ref())),
            ("podSubnet", ranges(n.pods.as_ref())),
        ];
        for (k, val) in fields {
            if let Some(val) = val {
                net.insert(k.into(), json!(val));
            }
        }
        v["networking"] = Value::Object(net);
    }
    if v1beta4 {
        for (k, days) in validity {
            if let Some(d) = days.filter(|d| *d > 0) {
                // A Go duration, as kubeadm reads it: days in hours.
                v[k] = json!(format!("{}h0m0s", i64::from(d) * 24));
            }
        }
    } else {
        for component in ["/apiServer", "/controllerManager", "/scheduler", "/etcd/local"] {
            if let Some(Value::Object(c)) = v.pointer_mut(component) {
                args_to_map(c, "extraArgs");
                // kubeadm v1beta3 has no extra environment variables.
                c.remove("extraEnvs");
            }
        }
    }
    Ok(v)
}

fn init_configuration(i: InitConfiguration, v1beta4: bool) -> Result<Value> {
    let mut v = serde_json::to_value(i)?;
    if let Some(Value::Array(tokens)) = v.get_mut("bootstrapTokens") {
        for t in tokens.iter_mut().filter_map(Value::as_object_mut) {
            // kubeadm takes the lifetime as a Go duration.
            let ttl = t.remove("ttlSeconds").and_then(|s| s.as_i64()).and_then(|s| i32::try_from(s).ok());
            if let Some(d) = seconds_to_duration(ttl) {
                t.insert("ttl".into(), json!(d));
            }
        }
    }
    node_registration(&mut v, v1beta4);
    Ok(v)
}

/// `nodeRegistration` of an init or join document as the API version takes it.
fn node_registration(v: &mut Value, v1beta4: bool) {
    if v1beta4 {
        return;
    }
    if let Some(Value::Object(n)) = v.get_mut("nodeRegistration") {
        args_to_map(n, "kubeletExtraArgs");
        n.remove("imagePullSerial");
    }
}

/// A `[{name, value}]` flag list as the map kubeadm v1beta3 takes: of repeated names the
/// last wins (a map has each name once).
fn args_to_map(m: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(list)) = m.get(key) else {
        return;
    };
    let mut args = Map::new();
    for a in list {
        if let Some(name) = a.get("name").and_then(Value::as_str) {
            args.insert(name.to_string(), a.get("value").cloned().unwrap_or_else(|| json!("")));
        }
    }
    m.insert(key.to_string(), Value::Object(args));
}

/// kubeadm v1beta4's `timeouts`, as Go durations, when any is set.
fn put_timeouts(v: &mut Value, t: &Timeouts) {
    let fields = [
        ("controlPlaneComponentHealthCheck", t.control_plane_component_health_check_seconds),
        ("kubeletHealthCheck", t.kubelet_health_check_seconds),
        ("kubernetesAPICall", t.kubernetes_api_call_seconds),
        ("etcdAPICall", t.etcd_api_call_seconds),
        ("tlsBootstrap", t.tls_bootstrap_seconds),
        ("discovery", t.discovery_seconds),
    ];
    let timeouts: Map<String, Value> =
        fields.into_iter().filter_map(|(k, s)| seconds_to_duration(s).map(|d| (k.to_string(), json!(d)))).collect();
    if !timeouts.is_empty() {
        v["timeouts"] = Value::Object(timeouts);
    }
}

/// Fills discovery (the control plane endpoint, a token and, unless verification is
/// skipped, the CA pin; with no CA to pin, verification is skipped as upstream does) and,
/// for control plane nodes, the controlPlane section.
fn join_configuration(mut j: JoinConfiguration, control_plane: bool, facts: &ClusterFacts) -> JoinConfiguration {
    let d = j.discovery.get_or_insert_default();
    if d.file.is_none() {
        let t = d.bootstrap_token.get_or_insert_default();
        if t.ca_cert_hashes.as_ref().is_none_or(Vec::is_empty) && t.unsafe_skip_ca_verification != Some(true) {
            match &facts.ca_cert_hash {
                Some(pin) => t.ca_cert_hashes = Some(vec![pin.clone()]),
                None => t.unsafe_skip_ca_verification = Some(true),
            }
        }
        if t.token.as_deref().is_none_or(str::is_empty) {
            t.token = Some(facts.token.clone());
        }
        if t.api_server_endpoint.as_deref().is_none_or(str::is_empty) {
            t.api_server_endpoint = facts.endpoint.clone();
        }
    }
    if control_plane && j.control_plane.is_none() {
        j.control_plane = Some(JoinControlPlane::default());
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::NetworkRanges;

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
            ca_cert_hash: None,
        }
    }

    fn spec(v: Value) -> KubeadmConfigSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn api_versions() {
        assert_eq!(api_version(Some("v1.30.2")), "kubeadm.k8s.io/v1beta3");
        assert_eq!(api_version(Some("v1.31.0")), "kubeadm.k8s.io/v1beta4");
        assert_eq!(api_version(None), "kubeadm.k8s.io/v1beta3");
    }

    #[test]
    fn init_fills_cluster_facts() {
        let spec = spec(json!({
            "clusterConfiguration": {"apiServer": {"certSANs": ["localhost"]}},
            "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [{"name": "eviction-hard", "value": "nodefs.available<0%"}]}},
        }));
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
    fn join_pins_the_cluster_ca_unless_told_otherwise() {
        let pinned = ClusterFacts { ca_cert_hash: Some("sha256:ab".into()), ..facts("v1.30.2") };
        let worker = Mode::Join { control_plane: false };
        let (_, doc, _) = document(&KubeadmConfigSpec::default(), worker, &pinned).unwrap();
        assert!(doc.contains("    caCertHashes:\n    - \"sha256:ab\"\n"), "{doc}");
        assert!(!doc.contains("unsafeSkipCAVerification"), "{doc}");
        // The user's pins, or the user's choice to skip verification, stay.
        let theirs =
            spec(json!({"joinConfiguration": {"discovery": {"bootstrapToken": {"caCertHashes": ["sha256:x"]}}}}));
        let (_, doc, _) = document(&theirs, worker, &pinned).unwrap();
        assert!(doc.contains("sha256:x") && !doc.contains("sha256:ab"), "{doc}");
        let skip =
            spec(json!({"joinConfiguration": {"discovery": {"bootstrapToken": {"unsafeSkipCAVerification": true}}}}));
        let (_, doc, _) = document(&skip, worker, &pinned).unwrap();
        assert!(!doc.contains("caCertHashes"), "{doc}");
    }

    #[test]
    fn join_fills_a_missing_token_only() {
        let spec =
            spec(json!({"joinConfiguration": {"discovery": {"bootstrapToken": {"caCertHashes": ["sha256:x"]}}}}));
        let (_, doc, _) = document(&spec, Mode::Join { control_plane: false }, &facts("v1.30.2")).unwrap();
        assert!(doc.contains(&format!("    token: {}\n", placeholder_token("uid-1"))), "{doc}");
        assert!(!doc.contains("unsafeSkipCAVerification"), "{doc}");
    }

    #[test]
    fn v1beta4_lists_extra_args() {
        let spec = spec(json!({
            "clusterConfiguration": {"apiServer": {"extraArgs": [{"name": "a", "value": "1"}]}},
            "initConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 240}},
        }));
        let (_, doc, _) = document(&spec, Mode::Init, &facts("v1.31.1")).unwrap();
        assert!(doc.contains("apiVersion: kubeadm.k8s.io/v1beta4\n"));
        assert!(doc.contains("  extraArgs:\n  - name: a\n    value: \"1\"\n"), "{doc}");
        assert!(doc.contains("timeouts:\n  controlPlaneComponentHealthCheck: \"4m0s\"\n"), "{doc}");
        assert!(!doc.contains("timeoutForControlPlane"));
    }

    #[test]
    fn v1beta4_durations_and_additions() {
        let spec = spec(json!({
            "clusterConfiguration": {
                "certificateValidityPeriodDays": 365,
                "encryptionAlgorithm": "ECDSA-P256",
                "etcd": {"local": {"extraEnvs": [{"name": "E", "value": "1"}]}},
            },
            "initConfiguration": {"bootstrapTokens": [{"token": "abcdef.0123456789abcdef", "ttlSeconds": 900}]},
            "joinConfiguration": {"timeouts": {"tlsBootstrapSeconds": 90, "discoverySeconds": 300}},
        }));
        let (_, init, _) = document(&spec, Mode::Init, &facts("v1.31.1")).unwrap();
        for want in [
            "certificateValidityPeriod: \"8760h0m0s\"\n",
            "encryptionAlgorithm: ECDSA-P256\n",
            "    extraEnvs:\n    - name: E\n",
            "  ttl: \"15m0s\"\n",
        ] {
            assert!(init.contains(want), "missing {want:?} in\n{init}");
        }
        assert!(!init.contains("Days") && !init.contains("ttlSeconds"), "{init}");
        let (_, join, _) = document(&spec, Mode::Join { control_plane: false }, &facts("v1.31.1")).unwrap();
        assert!(join.contains("timeouts:\n  discovery: \"5m0s\"\n  tlsBootstrap: \"1m30s\"\n"), "{join}");
    }

    #[test]
    fn v1beta3_maps_args_and_moves_timeouts() {
        let spec = spec(json!({
            "clusterConfiguration": {
                "certificateValidityPeriodDays": 365,
                "encryptionAlgorithm": "ECDSA-P256",
                "controllerManager": {"extraArgs": [{"name": "x", "value": "1"}, {"name": "x", "value": "2"}],
                                      "extraEnvs": [{"name": "E", "value": "1"}]},
            },
            "initConfiguration": {
                "timeouts": {"controlPlaneComponentHealthCheckSeconds": 240, "kubeletHealthCheckSeconds": 60},
                "nodeRegistration": {"imagePullSerial": true, "imagePullPolicy": "Never"},
            },
            "joinConfiguration": {"timeouts": {"tlsBootstrapSeconds": 90, "discoverySeconds": 300}},
        }));
        let (_, init, _) = document(&spec, Mode::Init, &facts("v1.30.2")).unwrap();
        for want in [
            "controllerManager:\n  extraArgs:\n    x: \"2\"\n",
            "apiServer:\n  timeoutForControlPlane: \"4m0s\"\n",
            "  imagePullPolicy: Never\n",
        ] {
            assert!(init.contains(want), "missing {want:?} in\n{init}");
        }
        for absent in ["timeouts", "Validity", "encryptionAlgorithm", "extraEnvs", "imagePullSerial"] {
            assert!(!init.contains(absent), "{absent} in\n{init}");
        }
        let (_, join, _) = document(&spec, Mode::Join { control_plane: false }, &facts("v1.30.2")).unwrap();
        assert!(join.contains("  timeout: \"1m30s\"\n"), "{join}");
        assert!(!join.contains("timeouts"), "{join}");
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
