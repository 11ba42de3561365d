//! Bootstrap data as a node would read it: the cloud-config of a control plane and a worker
//! pass Debian's `cloud-init schema`; the control plane's carries the cluster's CA files
//! (keys readable by root alone), and the worker's pins the cluster CA's public key as
//! kubeadm computes the hash. The Ignition variant passes `ignition-validate`, Ignition's
//! own checker of its v3 specification.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use common::{Env, generated_cluster, json, kubectl_ok, wait};

const MINUTE: Duration = Duration::from_secs(60);

fn secret_value(kc: &Path, name: &str, key: &str) -> String {
    let s = json(kc, &["get", "secret", name]);
    let data = s["data"][key].as_str().unwrap_or_else(|| panic!("{name} has no {key}"));
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data).expect("base64")).expect("utf-8")
}

/// kubeadm's CA pin: `sha256:` and the SHA-256 of the CA's SubjectPublicKeyInfo.
fn ca_pin(dir: &Path, ca_pem: &str) -> String {
    let ca = dir.join("ca.crt");
    std::fs::write(&ca, ca_pem).expect("write");
    let der = dir.join("ca.spki");
    let run = |cmd: &str| {
        let out = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
        assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    run(&format!(
        "openssl x509 -in {} -noout -pubkey | openssl pkey -pubin -outform der -out {}",
        ca.display(),
        der.display()
    ));
    let sum = run(&format!("sha256sum {}", der.display()));
    format!("sha256:{}", sum.split_whitespace().next().expect("digest"))
}

/// The bootstrap data Secrets of the machines of `cluster` whose labels match `role`.
fn data_secrets(kc: &Path, cluster: &str, role: &str) -> Vec<String> {
    let v = json(kc, &["get", "kubeadmconfigs", "-l", &format!("cluster.x-k8s.io/cluster-name={cluster},{role}")]);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["status"]["dataSecretName"].as_str())
        .map(String::from)
        .collect()
}

const CONTROL_PLANE: &str = "cluster.x-k8s.io/control-plane";
const WORKER: &str = "!cluster.x-k8s.io/control-plane";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_data_is_valid_cloud_config_with_the_cluster_pki() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let manifest = generated_cluster("boot", &["--worker-machine-count", "1", "--control-plane-machine-count", "1"]);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    let secrets = |role: &str| data_secrets(&kc, "boot", role);
    let (control_plane, worker) = (CONTROL_PLANE, WORKER);
    wait("both machines' bootstrap data", MINUTE, || secrets(control_plane).len() == 1 && secrets(worker).len() == 1)
        .await;

    let ca = secret_value(&kc, "boot-ca", "tls.crt");
    for role in [control_plane, worker] {
        let name = &secrets(role)[0];
        assert_eq!(secret_value(&kc, name, "format"), "cloud-config");
        let data = secret_value(&kc, name, "value");
        let file = env.dir.path().join(format!("{name}.yaml"));
        std::fs::write(&file, &data).expect("write");
        let out = Command::new("cloud-init").args(["schema", "--config-file"]).arg(&file).output();
        let out = out.expect("cloud-init (Debian: apt-get install cloud-init)");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && said.contains("Valid cloud-config"), "{name}: {said}\n{data}");
        let doc: serde_json::Value = serde_saphyr::from_str(&data).expect("YAML");
        let files = doc["write_files"].as_array().expect("write_files");
        let file_at = |path: &str| files.iter().find(|f| f["path"] == path);
        if role == control_plane {
            let ca_file = file_at("/etc/kubernetes/pki/ca.crt").expect("the CA certificate");
            assert_eq!(ca_file["content"].as_str().map(str::trim), Some(ca.trim()));
            for key in ["ca.key", "etcd/ca.key", "front-proxy-ca.key", "sa.key"] {
                let f = file_at(&format!("/etc/kubernetes/pki/{key}")).unwrap_or_else(|| panic!("{key}"));
                assert_eq!(f["permissions"], "0600", "{key}");
            }
        } else {
            assert!(file_at("/etc/kubernetes/pki/ca.key").is_none(), "a worker gets no CA key");
            let pin = ca_pin(env.dir.path(), &ca);
            assert!(data.contains(&pin), "the worker pins {pin}:\n{data}");
            join_token_lives_in_the_workload_cluster(&env, &data).await;
        }
    }
}

/// The join data's bootstrap token has its Secret in the workload cluster, expiring within
/// the TTL, and authenticates there (only) as `system:bootstrap:<id>`.
async fn join_token_lives_in_the_workload_cluster(env: &Env, data: &str) {
    let token = data
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .map(|t| t.trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("a join token in:\n{data}"));
    let (id, _) = token.split_once('.').expect("<id>.<secret>");
    let workload = env.kubeconfig(Some("default.boot"));
    let secret = json(&workload, &["get", "secret", &format!("bootstrap-token-{id}"), "-n", "kube-system"]);
    assert_eq!(secret["type"], "bootstrap.kubernetes.io/token");
    let field = |k: &str| {
        let v = secret["data"][k].as_str().unwrap_or_else(|| panic!("{k}"));
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(v).expect("base64")).expect("utf-8")
    };
    assert_eq!(field("token-secret"), token.split_once('.').expect("token").1);
    assert_eq!(field("usage-bootstrap-authentication"), "true");
    let expires: jiff::Timestamp = field("expiration").parse().expect("RFC 3339");
    let left = expires.duration_since(jiff::Timestamp::now()).as_secs();
    assert!(left > 0 && left <= 15 * 60, "expires in {left}s");

    // A kubeconfig with the token alone, for the workload cluster and for the management one.
    let admin = kube::config::Kubeconfig::read_from(env.kubeconfig(None)).expect("kubeconfig");
    let root = admin.clusters[0].cluster.clone().expect("cluster");
    let with_token = |path: &str, name: &str| {
        let mut kc = admin.clone();
        let cluster = kc.clusters[0].cluster.as_mut().expect("cluster");
        cluster.server = Some(format!("{}{path}", root.server.clone().expect("server")));
        let user = kc.auth_infos[0].auth_info.as_mut().expect("user");
        *user = kube::config::AuthInfo { token: Some(token.clone().into()), ..Default::default() };
        let file = env.dir.path().join(name);
        std::fs::write(&file, serde_json::to_string(&kc).expect("json")).expect("write");
        file
    };
    let in_workload = with_token("/clusters/default.boot", "bootstrap-token-workload");
    let who = kubectl_ok(&in_workload, &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], None);
    assert_eq!(who, format!("system:bootstrap:{id}"));
    let in_management = with_token("", "bootstrap-token-management");
    let (ok, _, err) = common::kubectl(&in_management, &["auth", "whoami"], None);
    assert!(!ok && err.contains("You must be logged in"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignition_bootstrap_data_passes_ignition_validate() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let manifest = generated_cluster("ign", &["--worker-machine-count", "1", "--control-plane-machine-count", "1"]);
    let manifest = manifest
        .replace("  kubeadmConfigSpec:\n", "  kubeadmConfigSpec:\n    format: ignition\n")
        .replace("    spec:\n      joinConfiguration:", "    spec:\n      format: ignition\n      joinConfiguration:");
    assert_eq!(manifest.matches("format: ignition").count(), 2, "{manifest}");
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    wait("both machines' bootstrap data", MINUTE, || {
        data_secrets(&kc, "ign", CONTROL_PLANE).len() == 1 && data_secrets(&kc, "ign", WORKER).len() == 1
    })
    .await;
    let ca = secret_value(&kc, "ign-ca", "tls.crt");
    for role in [CONTROL_PLANE, WORKER] {
        let name = &data_secrets(&kc, "ign", role)[0];
        assert_eq!(secret_value(&kc, name, "format"), "ignition");
        let data = secret_value(&kc, name, "value");
        let file = env.dir.path().join(format!("{name}.ign"));
        std::fs::write(&file, &data).expect("write");
        let out = Command::new("ignition-validate").arg(&file).output();
        let out = out.expect("ignition-validate (Debian: apt-get install ignition)");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && said.trim().is_empty(), "{name}: {said}\n{data}");
        let doc: serde_json::Value = serde_json::from_str(&data).expect("JSON");
        let files = doc["storage"]["files"].as_array().expect("storage.files");
        let ca_file = files.iter().find(|f| f["path"] == "/etc/kubernetes/pki/ca.crt");
        if role == CONTROL_PLANE {
            let source = ca_file.expect("the CA certificate")["contents"]["source"].as_str().expect("source");
            assert!(source.starts_with("data:"), "{source}");
            assert!(files.iter().any(|f| f["path"] == "/etc/kubernetes/pki/ca.key" && f["mode"] == 0o600));
        } else {
            assert!(ca_file.is_none(), "a worker gets no CA files");
            let join = files.iter().find(|f| f["path"] == "/run/kubeadm/kubeadm-join-config.yaml").expect("join");
            let source = join["contents"]["source"].as_str().expect("source");
            let b64 = source.split_once("base64,").expect("a base64 data URL").1;
            let config = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
            let config = String::from_utf8(config).expect("utf-8");
            assert!(config.contains(&ca_pin(env.dir.path(), &ca)), "the worker pins the CA:\n{config}");
        }
    }
}
