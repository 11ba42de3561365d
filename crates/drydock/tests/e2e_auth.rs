//! Secure by default, through real clients: `drydock up` serves HTTPS with a CA kept in the
//! data dir, the kubeconfig it writes carries the CA and an administrator's certificate,
//! requests without a credential get 401 (but health and version), static tokens
//! authenticate, plain HTTP is loopback only; each workload cluster has the kubeadm CAs
//! upstream generates, and its kubeconfig reaches that cluster and no other.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use common::{
    Process, free_port, generated_cluster, json, kubeconfig_of, kubectl, kubectl_bin, kubectl_ok, ready_nodes,
    spawn_drydock, spawn_drydock_with, wait,
};
use kube::config::Kubeconfig;
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

fn curl(args: &[&str]) -> (String, String) {
    let out = Command::new("curl").args(["-s", "-w", "\n%{http_code}"]).args(args).output().expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or((&text, ""));
    (code.to_string(), body.to_string())
}

fn openssl(args: &[&str]) -> String {
    let out = Command::new("openssl").args(args).output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

async fn started(dir: &Path, flags: &[&str]) -> (Process, u16, PathBuf) {
    let port = free_port();
    let process = spawn_drydock_with(dir, &format!("127.0.0.1:{port}"), flags);
    let kc = kubeconfig_of(dir).await;
    (process, port, kc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_by_default_and_only_credentials_get_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "s3cret-token,alice,1001,\"dev,ops\"\n").expect("token file");
    let (mut process, port, kc) = started(dir.path(), &["--token-auth-file", tokens.to_str().expect("path")]).await;
    let ca = dir.path().join("pki/ca.crt");
    let url = format!("https://127.0.0.1:{port}");

    // The written kubeconfig works with old and new kubectl.
    for version in ["1.27", "1.33"] {
        let out = Command::new(kubectl_bin(version))
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["get", "ns", "default", "-o", "name"])
            .output()
            .expect("kubectl");
        assert!(out.status.success(), "kubectl {version}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = std::fs::read_to_string(&kc).expect("kubeconfig");
    assert!(text.contains("certificate-authority-data") && text.contains("client-key-data"), "{text}");

    // No credential: 401 as a Status, but health and version answer.
    let ca_arg = ca.to_str().expect("path");
    let (code, body) = curl(&["--cacert", ca_arg, &format!("{url}/api/v1/namespaces/default/secrets")]);
    assert_eq!(code, "401", "{body}");
    let status: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("Unauthorized")));
    for public in ["/healthz", "/readyz", "/livez", "/version"] {
        assert_eq!(curl(&["--cacert", ca_arg, &format!("{url}{public}")]).0, "200", "{public}");
    }
    // Plain HTTP on the HTTPS port gets nothing.
    assert_ne!(curl(&[&format!("http://127.0.0.1:{port}/api")]).0, "200");

    // A static token authenticates; a wrong one is refused.
    let with_token = |token: &str| {
        let server = format!("--server={url}");
        let ca = format!("--certificate-authority={ca_arg}");
        let token = format!("--token={token}");
        Command::new(kubectl_bin("1.33"))
            .args([server.as_str(), ca.as_str(), token.as_str(), "get", "ns", "default", "-o", "name"])
            .output()
            .expect("kubectl")
    };
    // Authenticated is not authorized: alice may do what RBAC grants her.
    let refused = with_token("s3cret-token");
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(said.contains("namespaces \"default\" is forbidden: User \"alice\" cannot get resource"), "{said}");
    kubectl_ok(&kc, &["create", "clusterrolebinding", "alice-views", "--clusterrole=view", "--user=alice"], None);
    assert!(with_token("s3cret-token").status.success());
    // `kubectl auth whoami` names the user of each credential.
    let whoami = |args: &[&str]| -> Value {
        let out = Command::new(kubectl_bin("1.33")).args(args).args(["auth", "whoami", "-o", "json"]).output();
        let out = out.expect("kubectl");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("a SelfSubjectReview")
    };
    let admin = whoami(&["--kubeconfig", kc.to_str().expect("path")]);
    assert_eq!(admin["status"]["userInfo"]["username"], "kubernetes-admin");
    assert_eq!(admin["status"]["userInfo"]["groups"], serde_json::json!(["system:masters", "system:authenticated"]));
    let (server, ca_flag) = (format!("--server={url}"), format!("--certificate-authority={ca_arg}"));
    let alice = whoami(&[&server, &ca_flag, "--token=s3cret-token"]);
    assert_eq!(alice["status"]["userInfo"]["username"], "alice");
    assert_eq!(alice["status"]["userInfo"]["groups"], serde_json::json!(["dev", "ops", "system:authenticated"]));
    let refused = with_token("wrong");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Unauthorized"), "{refused:?}");

    // The certificates verify against the CA, with the right names and usages.
    let pki = dir.path().join("pki");
    let path = |f: &str| pki.join(f).to_str().expect("path").to_string();
    let verified = openssl(&["verify", "-CAfile", &path("ca.crt"), &path("apiserver.crt"), &path("admin.crt")]);
    assert_eq!(verified.matches(": OK").count(), 2, "{verified}");
    let serving =
        openssl(&["x509", "-in", &path("apiserver.crt"), "-noout", "-ext", "subjectAltName,extendedKeyUsage"]);
    for want in ["DNS:localhost", "IP Address:127.0.0.1", "TLS Web Server Authentication"] {
        assert!(serving.contains(want), "{want} in {serving}");
    }
    let admin = openssl(&["x509", "-in", &path("admin.crt"), "-noout", "-subject", "-ext", "extendedKeyUsage"]);
    assert!(admin.contains("O = system:masters, CN = kubernetes-admin"), "{admin}");
    assert!(admin.contains("TLS Web Client Authentication"), "{admin}");

    // A restart keeps the CA: a kubeconfig copied before still works.
    let ca_before = std::fs::read_to_string(&ca).expect("ca");
    let copied = dir.path().join("copied-kubeconfig");
    std::fs::copy(&kc, &copied).expect("copy");
    process.kill().expect("kill");
    process.wait().expect("wait");
    let _process = spawn_drydock_with(dir.path(), &format!("127.0.0.1:{port}"), &[]);
    kubeconfig_of(dir.path()).await;
    assert_eq!(std::fs::read_to_string(&ca).expect("ca"), ca_before, "the CA survives a restart");
    kubectl_ok(&copied, &["get", "ns", "default"], None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_is_loopback_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["up", "--plain-http", "--listen", "0.0.0.0:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("drydock up");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only on a loopback address"), "{out:?}");

    let (_process, port, kc) = started(dir.path(), &["--plain-http"]).await;
    let (code, _) = curl(&[&format!("http://127.0.0.1:{port}/api/v1/namespaces")]);
    assert_eq!(code, "200", "plain HTTP serves every request");
    assert!(std::fs::read_to_string(&kc).expect("kubeconfig").contains("server: http://"));
}

/// The decoded `key` of the Secret `name`.
fn secret_data(kc: &Path, name: &str, key: &str) -> String {
    let s = json(kc, &["get", "secret", name]);
    let data = s["data"][key].as_str().unwrap_or_else(|| panic!("{name} has no {key}: {s}"));
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data).expect("base64")).expect("utf-8")
}

/// The kubeconfig at `path`, with `change` made to its cluster entry, written to `to` (as
/// JSON, which kubectl reads as well).
fn changed(path: &Path, to: &Path, change: impl FnOnce(&mut kube::config::Cluster)) {
    let mut kc = Kubeconfig::read_from(path).expect("kubeconfig");
    change(kc.clusters[0].cluster.as_mut().expect("cluster"));
    std::fs::write(to, serde_json::to_string(&kc).expect("json")).expect("write");
}

fn decoded(b64: Option<&String>) -> String {
    let b64 = b64.expect("a base64 field");
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).expect("base64")).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_kubeconfig_reaches_its_own_cluster_and_no_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _process = spawn_drydock(dir.path(), &format!("127.0.0.1:{port}"));
    let kc = kubeconfig_of(dir.path()).await;
    // `blue` brings its own CA, as a user may; `green` gets one generated.
    let own_ca = drydock_api::pki::Authority::generate("kubernetes").expect("CA");
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: blue-ca, namespace: default, labels: {{cluster.x-k8s.io/cluster-name: blue}}}}\ntype: cluster.x-k8s.io/secret\ndata: {{tls.crt: {}, tls.key: {}}}\n",
        b64(own_ca.cert_pem()),
        b64(own_ca.key_pem())
    );
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&secret));
    for name in ["blue", "green"] {
        let manifest = generated_cluster(name, &["--worker-machine-count", "1", "--control-plane-machine-count", "1"]);
        kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    }
    let mut kubeconfigs = Vec::new();
    for name in ["blue", "green"] {
        let path = dir.path().join(format!("{name}.kubeconfig"));
        wait(&format!("{name}'s kubeconfig"), MINUTE, || {
            kubectl(&kc, &["get", "secret", &format!("{name}-kubeconfig")], None).0
        })
        .await;
        std::fs::write(&path, secret_data(&kc, &format!("{name}-kubeconfig"), "value")).expect("write");
        wait(&format!("2 Ready nodes in {name}"), 2 * MINUTE, || ready_nodes(&path) == 2).await;
        kubeconfigs.push(path);
    }
    // The CA Secrets upstream generates, with its names, types and keys.
    for purpose in ["ca", "etcd", "proxy", "sa"] {
        let s = json(&kc, &["get", "secret", &format!("green-{purpose}")]);
        assert_eq!(s["type"], "cluster.x-k8s.io/secret", "green-{purpose}");
        assert_eq!(s["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "green");
        assert!(s["data"]["tls.crt"].is_string() && s["data"]["tls.key"].is_string(), "green-{purpose}");
    }
    assert!(secret_data(&kc, "green-sa", "tls.crt").contains("PUBLIC KEY"));
    assert_eq!(secret_data(&kc, "blue-ca", "tls.crt"), own_ca.cert_pem(), "a user's CA is used as given");

    // The client certificate in blue's kubeconfig is signed by blue's own CA.
    let blue = Kubeconfig::read_from(&kubeconfigs[0]).expect("kubeconfig");
    let cluster = blue.clusters[0].cluster.clone().expect("cluster");
    let user = blue.auth_infos[0].auth_info.clone().expect("user");
    assert_eq!(decoded(cluster.certificate_authority_data.as_ref()), own_ca.cert_pem());
    assert_eq!(cluster.tls_server_name.as_deref(), Some("default.blue.clusters.drydock.internal"));
    let (ca_file, cert_file) = (dir.path().join("blue-ca.crt"), dir.path().join("blue-admin.crt"));
    std::fs::write(&ca_file, own_ca.cert_pem()).expect("write");
    std::fs::write(&cert_file, decoded(user.client_certificate_data.as_ref())).expect("write");
    let verified = openssl(&["verify", "-CAfile", ca_file.to_str().expect("p"), cert_file.to_str().expect("p")]);
    assert!(verified.contains(": OK"), "{verified}");

    // Pointed at green's cluster or at the management cluster, blue's kubeconfig is refused.
    let other = dir.path().join("elsewhere.kubeconfig");
    for elsewhere in [format!("https://127.0.0.1:{port}/clusters/default.green"), format!("https://127.0.0.1:{port}")] {
        changed(&kubeconfigs[0], &other, |c| c.server = Some(elsewhere.clone()));
        let (ok, _, err) = kubectl(&other, &["get", "nodes"], None);
        assert!(!ok && err.contains("Forbidden"), "blue's kubeconfig at {elsewhere}: {err}");
    }
    // Nor does green's endpoint take blue's certificate (trusting green's CA, asking for
    // green's name, showing blue's credentials).
    let green = Kubeconfig::read_from(&kubeconfigs[1]).expect("kubeconfig");
    let green_ca = green.clusters[0].cluster.as_ref().and_then(|c| c.certificate_authority_data.clone());
    changed(&kubeconfigs[0], &other, |c| {
        c.certificate_authority_data = green_ca;
        c.tls_server_name = Some("default.green.clusters.drydock.internal".into());
        c.server = Some(format!("https://127.0.0.1:{port}/clusters/default.green"));
    });
    assert!(!kubectl(&other, &["get", "nodes"], None).0, "green's endpoint took blue's certificate");

    // The Python client with the same files.
    let script = format!("{}/tests/python/auth_scenario.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(script)
        .arg(&kc)
        .arg(dir.path().join("pki/ca.crt"))
        .arg(&kubeconfigs[1])
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("python auth scenario passed"),
        "python (needs `pip install kubernetes`): {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// CAs as upstream and OpenSSL write them, keys in their traditional PEM forms (PKCS#1 RSA,
/// SEC1 EC): a user bringing one gets certificates that verify against it.
#[test]
fn a_users_ca_with_a_traditional_rsa_or_ec_key_signs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |f: &str| dir.path().join(f).to_str().expect("path").to_string();
    openssl(&["genrsa", "-traditional", "-out", &p("rsa.key"), "2048"]);
    openssl(&["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", &p("ec.key")]);
    for (kind, header) in [("rsa", "BEGIN RSA PRIVATE KEY"), ("ec", "BEGIN EC PRIVATE KEY")] {
        let key = std::fs::read_to_string(p(&format!("{kind}.key"))).expect("key");
        assert!(key.contains(header), "{kind}: {key}");
        let (key_file, cert_file) = (p(&format!("{kind}.key")), p(&format!("{kind}.crt")));
        openssl(&[
            "req",
            "-x509",
            "-new",
            "-key",
            &key_file,
            "-subj",
            "/CN=kubernetes",
            "-days",
            "30",
            "-out",
            &cert_file,
        ]);
        let ca_pem = std::fs::read_to_string(&cert_file).expect("cert");
        let ca = drydock_api::pki::Authority::from_pem(&ca_pem, &key).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let issued =
            ca.issue(&drydock_api::pki::Leaf::client("kubernetes-admin", &["system:masters"])).expect("issued");
        let leaf = p(&format!("{kind}-leaf.crt"));
        std::fs::write(&leaf, &issued.cert_pem).expect("write");
        assert!(openssl(&["verify", "-CAfile", &cert_file, &leaf]).contains(": OK"), "{kind}");
    }
}
