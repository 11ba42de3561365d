//! Runtime Extensions end to end: the test runs its own extension (HTTPS with a CA of its
//! own) answering discovery, DiscoverVariables, GeneratePatches and ValidateTopology; an
//! ExtensionConfig registers it and is discovered (by URL, and by a Service reference
//! reached at the Service's EndpointSlice with its CA injected from a Secret); a ClusterClass whose only patch is
//! external lists the discovered variable; a topology Cluster setting it provisions with
//! the generated patches on its objects, is patched again when the variable changes, and
//! reports the extension's refusal in `TopologyReconciled`; an upgrade follows the plan of
//! the class's GenerateUpgradePlan extension.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::header::CONTENT_TYPE;
use axum::routing::post;
use base64::Engine;
use common::watch::{first_where, record};
use common::{Env, condition, json, kubectl, kubectl_ok, running, wait, wait_or_report};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::api::Api;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

const WAIT: Duration = Duration::from_secs(120);
const CONFIG: &str = "test-extension";
const HOOKS: &str = "/hooks.runtime.cluster.x-k8s.io/v1alpha1";
/// The value the extension refuses to generate patches for.
const REFUSED: &str = "registry.invalid/refused";

/// What the extension was sent: the settings of each GeneratePatches request.
#[derive(Default)]
struct Seen {
    generate_settings: Vec<Value>,
}

type Shared = Arc<Mutex<Seen>>;

/// A TLS listener for axum: each accepted connection is handshaken first.
struct TlsListener {
    tcp: TcpListener,
    tls: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else { continue };
            if let Ok(tls) = self.tls.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// The Service the extension is also reached through, and the name its certificate holds.
const SERVICE: &str = "test-extension";
const SERVICE_HOST: &str = "test-extension.default.svc";

/// A CA and a serving certificate for 127.0.0.1 and the Service's name signed by it:
/// (CA PEM, acceptor).
fn tls() -> (String, TlsAcceptor) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "test-extension-ca");
    let ca_pem = ca_params.self_signed(&ca_key).expect("CA").pem();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string(), SERVICE_HOST.to_string()]).expect("params");
    params.distinguished_name.push(DnType::CommonName, "test-extension");
    let cert = params.signed_by(&key, &issuer).expect("serving certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let der_key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], der_key)
        .expect("server config");
    (ca_pem, TlsAcceptor::from(Arc::new(config)))
}

/// Starts the extension; returns its base URL and CA bundle (PEM).
async fn start_extension(seen: Shared) -> (String, String) {
    let (ca, tls) = tls();
    let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("https://{}", tcp.local_addr().expect("address"));
    let app = Router::new()
        .route(&format!("{HOOKS}/discovery"), post(discovery))
        .route(&format!("{HOOKS}/{{hook}}/{{handler}}"), post(handle))
        .with_state(seen);
    tokio::spawn(async move {
        let _ = axum::serve(TlsListener { tcp, tls }, app).await;
    });
    (url, ca)
}

fn answer(v: Value) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    ([(CONTENT_TYPE, "application/json")], v.to_string())
}

async fn discovery() -> impl axum::response::IntoResponse {
    let handler = |name: &str, hook: &str| {
        json!({"name": name, "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": hook},
               "timeoutSeconds": 5, "failurePolicy": "Fail"})
    };
    answer(json!({
        "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "DiscoveryResponse", "status": "Success",
        "handlers": [
            handler("discover-variables", "DiscoverVariables"),
            handler("generate-patches", "GeneratePatches"),
            handler("validate-topology", "ValidateTopology"),
            handler("upgrade-plan", "GenerateUpgradePlan"),
            // A lifecycle hook, which drydock registers and says it does not call.
            handler("before-create", "BeforeClusterCreate"),
        ],
    }))
}

async fn handle(
    State(seen): State<Shared>,
    UrlPath((hook, _handler)): UrlPath<(String, String)>,
    body: Bytes,
) -> impl axum::response::IntoResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let out = match hook.as_str() {
        "discovervariables" => json!({"status": "Success", "variables": [{
            "name": "imageRepository", "required": false,
            "schema": {"openAPIV3Schema": {"type": "string", "default": "registry.k8s.io"}},
        }]}),
        "generatepatches" => {
            seen.lock().generate_settings.push(request["settings"].clone());
            generate(&request)
        }
        "validatetopology" => json!({"status": "Success"}),
        "generateupgradeplan" => upgrade_plan(&request),
        other => json!({"status": "Failure", "message": format!("unknown hook {other}")}),
    };
    answer(out)
}

/// The control plane's template gets `imageRepository` (a JSON patch), the workers' machine
/// templates a start-up jitter (a JSON merge patch); the refused value fails the call.
fn generate(request: &Value) -> Value {
    let variables = request["variables"].as_array().cloned().unwrap_or_default();
    let image = variables.iter().find(|v| v["name"] == "imageRepository").map(|v| v["value"].clone());
    let Some(image) = image else {
        return json!({"status": "Failure", "message": "imageRepository is not set"});
    };
    if image == REFUSED {
        return json!({"status": "Failure", "message": format!("imageRepository {image} is refused by the test extension")});
    }
    let b64 = |v: Value| base64::engine::general_purpose::STANDARD.encode(v.to_string());
    let mut items = Vec::new();
    for item in request["items"].as_array().into_iter().flatten() {
        let (kind, holder) = (&item["object"]["kind"], &item["holderReference"]["kind"]);
        if kind == "KubeadmControlPlaneTemplate" {
            let ops = json!([{"op": "add", "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
                              "value": image}]);
            items.push(json!({"uid": item["uid"], "patchType": "JSONPatch", "patch": b64(ops)}));
        } else if kind == "DevMachineTemplate" && holder == "MachineDeployment" {
            let merge = json!({"spec": {"template": {"spec": {"backend": {"inMemory": {"vm": {"provisioning": {"startupJitter": "0.1"}}}}}}}});
            items.push(json!({"uid": item["uid"], "patchType": "JSONMergePatch", "patch": b64(merge)}));
        }
    }
    json!({"status": "Success", "items": items})
}

/// One version per minor on the way (patch 3), then the target.
fn upgrade_plan(request: &Value) -> Value {
    let minor = |v: &Value| v.as_str().and_then(|v| v.split('.').nth(1)).and_then(|m| m.parse::<u32>().ok());
    let (Some(from), Some(to)) =
        (minor(&request["fromControlPlaneKubernetesVersion"]), minor(&request["toKubernetesVersion"]))
    else {
        return json!({"status": "Failure", "message": "versions missing"});
    };
    let mut steps: Vec<Value> = (from + 1..to).map(|m| json!({"version": format!("v1.{m}.3")})).collect();
    steps.push(json!({"version": request["toKubernetesVersion"]}));
    json!({"status": "Success", "controlPlaneUpgrades": steps})
}

fn extension_config(url: &str, ca: &str) -> String {
    named_config(CONFIG, url, ca)
}

fn named_config(name: &str, url: &str, ca: &str) -> String {
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca);
    format!(
        "apiVersion: runtime.cluster.x-k8s.io/v1beta2\nkind: ExtensionConfig\nmetadata:\n  name: {name}\n\
         spec:\n  clientConfig:\n    url: {url}\n    caBundle: {bundle}\n  settings:\n    origin: config\n    level: one\n"
    )
}

/// A class in the shape of upstream's in-memory quick-start class whose one patch is
/// external, with its templates.
fn class() -> String {
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {{name: runtime-sdk, namespace: default}}
spec:
  infrastructure:
    templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevClusterTemplate, name: rsdk-cluster}}
  controlPlane:
    templateRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: rsdk-control-plane}}
    machineInfrastructure:
      templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevMachineTemplate, name: rsdk-control-plane}}
  workers:
    machineDeployments:
      - class: default-worker
        bootstrap:
          templateRef: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: rsdk-worker}}
        infrastructure:
          templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevMachineTemplate, name: rsdk-worker}}
  patches:
    - name: test-patch
      external:
        generatePatchesExtension: generate-patches.{CONFIG}
        validateTopologyExtension: validate-topology.{CONFIG}
        discoverVariablesExtension: discover-variables.{CONFIG}
        settings: {{origin: patch}}
  upgrade:
    external: {{generateUpgradePlanExtension: upgrade-plan.{CONFIG}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DevClusterTemplate
metadata: {{name: rsdk-cluster, namespace: default}}
spec: {{template: {{spec: {{backend: {{inMemory: {{}}}}}}}}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata: {{name: rsdk-control-plane, namespace: default}}
spec:
  template:
    spec:
      kubeadmConfigSpec:
        clusterConfiguration:
          apiServer: {{certSANs: [localhost, 127.0.0.1]}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {{name: rsdk-worker, namespace: default}}
spec: {{template: {{spec: {{}}}}}}
{machine}{worker}"#,
        machine = machine_template("rsdk-control-plane"),
        worker = machine_template("rsdk-worker"),
    )
}

fn machine_template(name: &str) -> String {
    format!(
        r#"---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DevMachineTemplate
metadata: {{name: {name}, namespace: default}}
spec:
  template:
    spec:
      backend:
        inMemory:
          vm: {{provisioning: {{startupDuration: "1s", startupJitter: "0.2"}}}}
          node: {{provisioning: {{startupDuration: "500ms", startupJitter: "0.2"}}}}
          apiServer: {{provisioning: {{startupDuration: "500ms", startupJitter: "0.2"}}}}
          etcd: {{provisioning: {{startupDuration: "500ms", startupJitter: "0.2"}}}}
"#
    )
}

const CLUSTER: &str = r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: rsdk, namespace: default}
spec:
  clusterNetwork:
    services: {cidrBlocks: ["10.128.0.0/12"]}
    pods: {cidrBlocks: ["192.168.0.0/16"]}
  topology:
    classRef: {name: runtime-sdk}
    version: v1.31.0
    controlPlane: {replicas: 1}
    workers:
      machineDeployments: [{class: default-worker, name: md-0, replicas: 1}]
    variables: [{name: imageRepository, value: registry.example/one}]
"#;

/// The one object of a kind that the topology made for the Cluster.
fn owned(kc: &Path, resource: &str) -> Vec<Value> {
    let selector = "cluster.x-k8s.io/cluster-name=rsdk,topology.cluster.x-k8s.io/owned";
    json(kc, &["get", resource, "-l", selector])["items"].as_array().cloned().unwrap_or_default()
}

fn image_repository(kc: &Path) -> Value {
    let kcps = owned(kc, "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io");
    kcps.first()
        .map_or(Value::Null, |k| k["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["imageRepository"].clone())
}

/// Sets the Cluster's `imageRepository` (wherever admission put it in the list).
fn set_image(kc: &Path, value: &str) {
    let cluster = json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "rsdk"]);
    let vars = cluster["spec"]["topology"]["variables"].as_array().cloned().unwrap_or_default();
    let index = vars.iter().position(|v| v["name"] == "imageRepository").expect("imageRepository is set");
    let patch = format!(r#"[{{"op":"replace","path":"/spec/topology/variables/{index}/value","value":"{value}"}}]"#);
    kubectl_ok(kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/rsdk", "--type", "json", "-p", &patch], None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_runtime_sdk_external_patches_and_variables_come_from_the_extension() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let seen = Shared::default();
    let (url, ca) = start_extension(seen.clone()).await;

    // Admission as upstream's webhook: only https URLs.
    let plain = extension_config(&url.replace("https://", "http://"), &ca);
    let (ok, _, stderr) = kubectl(&kc, &["apply", "-f", "-"], Some(&plain));
    assert!(!ok && stderr.contains("'https' is the only allowed URL scheme"), "{stderr}");

    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&extension_config(&url, &ca)));
    let ext = |kc: &Path| json(kc, &["get", "extensionconfigs.v1beta2.runtime.cluster.x-k8s.io", CONFIG]);
    wait("the ExtensionConfig discovered", WAIT, || condition(&ext(&kc), "Discovered")["status"] == "True").await;
    let discovered = ext(&kc);
    let names: Vec<&str> =
        discovered["status"]["handlers"].as_array().into_iter().flatten().filter_map(|h| h["name"].as_str()).collect();
    let want = ["discover-variables", "generate-patches", "validate-topology", "upgrade-plan", "before-create"]
        .map(|h| format!("{h}.{CONFIG}"));
    assert_eq!(names, want, "{discovered:#}");
    let message = condition(&discovered, "Discovered")["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains("does not call lifecycle hooks") && message.ends_with(&format!("before-create.{CONFIG}")),
        "the uncalled lifecycle handler is named: {message}"
    );
    // v1alpha1 readers see the same handlers.
    let alpha = json(&kc, &["get", "extensionconfigs.v1alpha1.runtime.cluster.x-k8s.io", CONFIG]);
    assert_eq!(alpha["status"]["handlers"], discovered["status"]["handlers"]);
    untrusted_ca_is_not_discovered(&kc, &url).await;
    a_service_reference_is_reached_at_its_endpoints(&kc, &url, &ca).await;

    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&class()));
    let cc = |kc: &Path| json(kc, &["get", "clusterclasses.v1beta2.cluster.x-k8s.io", "runtime-sdk"]);
    wait("the class's variables discovered", WAIT, || condition(&cc(&kc), "VariablesReady")["status"] == "True").await;
    let variables = cc(&kc)["status"]["variables"].clone();
    assert_eq!(variables[0]["name"], "imageRepository", "{variables:#}");
    assert_eq!(variables[0]["definitions"][0]["from"], "test-patch", "{variables:#}");

    kubectl_ok(&kc, &["apply", "-f", "-"], Some(CLUSTER));
    provisioned(&kc).await;
    assert_eq!(image_repository(&kc), "registry.example/one");
    let workers = owned(&kc, "devmachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io");
    let jitters: Vec<Value> = workers
        .iter()
        .map(|t| t["spec"]["template"]["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupJitter"].clone())
        .collect();
    assert!(
        jitters.contains(&json!("0.1")) && jitters.contains(&json!("0.2")),
        "worker patched, control plane not: {jitters:?}"
    );
    // The patch's settings win over the ExtensionConfig's; the others pass through.
    let settings = seen.lock().generate_settings.first().cloned().unwrap_or_default();
    assert_eq!(settings, json!({"origin": "patch", "level": "one"}));

    set_image(&kc, "registry.example/two");
    wait("the control plane patched again", WAIT, || image_repository(&kc) == "registry.example/two").await;

    set_image(&kc, REFUSED);
    let cluster = |kc: &Path| json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "rsdk"]);
    wait_or_report(
        "TopologyReconciled False with the extension's message",
        WAIT,
        || {
            let c = condition(&cluster(&kc), "TopologyReconciled");
            c["status"] == "False"
                && c["reason"] == "ReconcileFailed"
                && c["message"].as_str().is_some_and(|m| m.contains("is refused by the test extension"))
        },
        || format!("{:#}", condition(&cluster(&kc), "TopologyReconciled")),
    )
    .await;
    let message = condition(&cluster(&kc), "TopologyReconciled")["message"].clone();
    assert!(message.as_str().is_some_and(|m| m.contains("generate-patches.test-extension")), "{message}");
    wait("a Warning Event for the refusal", WAIT, || {
        let events = json(&kc, &["get", "events.v1.events.k8s.io"]);
        events["items"].as_array().into_iter().flatten().any(|e| {
            e["reason"] == "TopologyReconcileFailed"
                && e["type"] == "Warning"
                && e["note"].as_str().is_some_and(|n| n.contains("is refused by the test extension"))
        })
    })
    .await;
    assert_eq!(image_repository(&kc), "registry.example/two", "nothing applied from a failed reconcile");

    set_image(&kc, "registry.example/three");
    upgrades_through_the_extensions_plan(&env, &kc).await;
}

/// v1.31 to v1.33 in one change (admission leaves the steps to the extension): the
/// control plane passes through the extension's v1.32.3.
async fn upgrades_through_the_extensions_plan(env: &Env, kc: &Path) {
    let cp = record(Api::<KubeadmControlPlane>::default_namespaced(env.client()), |k| k.spec.version.clone());
    wait("the control plane settled at registry.example/three", WAIT, || {
        image_repository(kc) == "registry.example/three" && first_where(&cp, |v| v == "v1.31.0").is_some()
    })
    .await;
    let patch = r#"{"spec":{"topology":{"version":"v1.33.0"}}}"#;
    kubectl_ok(kc, &["patch", "clusters.v1beta2.cluster.x-k8s.io/rsdk", "--type", "merge", "-p", patch], None);
    wait("the control plane at v1.33.0", WAIT, || first_where(&cp, |v| v == "v1.33.0").is_some()).await;
    let (step, last) = (first_where(&cp, |v| v == "v1.32.3"), first_where(&cp, |v| v == "v1.33.0"));
    assert!(step.is_some() && step < last, "through v1.32.3 first: {:?}", cp.lock().map(|s| s.clone()));
    provisioned(kc).await;
}

/// The caBundle is all the client trusts: the same extension under another CA's bundle
/// is not discovered, and the condition says why.
async fn untrusted_ca_is_not_discovered(kc: &Path, url: &str) {
    let (other_ca, _) = tls();
    kubectl_ok(kc, &["apply", "-f", "-"], Some(&named_config("untrusted", url, &other_ca)));
    let get = || json(kc, &["get", "extensionconfigs.v1beta2.runtime.cluster.x-k8s.io", "untrusted"]);
    wait("the untrusted ExtensionConfig not discovered", WAIT, || {
        let c = condition(&get(), "Discovered");
        c["status"] == "False" && c["reason"] == "NotDiscovered"
    })
    .await;
    let message = condition(&get(), "Discovered")["message"].clone();
    assert!(
        message.as_str().is_some_and(|m| m.contains("discovery of untrusted") && m.contains("certificate")),
        "{message}"
    );
    assert!(get()["status"].get("handlers").is_none(), "no handlers from a failed discovery");
}

/// An ExtensionConfig naming a Service (no URL) reaches the extension at the Service's
/// ready endpoints, verifying the certificate for `<name>.<namespace>.svc`: no cluster DNS
/// is needed. Its CA bundle is injected from a Secret named by its annotation; until the
/// Secret exists, `Discovered` says so.
async fn a_service_reference_is_reached_at_its_endpoints(kc: &Path, url: &str, ca: &str) {
    let port = url.rsplit(':').next().expect("the extension's port");
    let objects = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {SERVICE}, namespace: default}}\n\
         spec:\n  ports: [{{name: https, port: 443, targetPort: {port}}}]\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
         metadata: {{name: {SERVICE}-1, namespace: default, labels: {{kubernetes.io/service-name: {SERVICE}}}}}\n\
         addressType: IPv4\nports: [{{name: https, port: {port}, protocol: TCP}}]\n\
         endpoints:\n- addresses: [10.255.0.1]\n  conditions: {{ready: false}}\n\
         - addresses: [127.0.0.1]\n  conditions: {{ready: true}}\n"
    );
    kubectl_ok(kc, &["apply", "-f", "-"], Some(&objects));
    let config = format!(
        "apiVersion: runtime.cluster.x-k8s.io/v1beta2\nkind: ExtensionConfig\nmetadata:\n  name: by-service\n\
         \x20 annotations: {{runtime.cluster.x-k8s.io/inject-ca-from-secret: default/{SERVICE}-ca}}\n\
         spec:\n  clientConfig:\n    service: {{namespace: default, name: {SERVICE}}}\n"
    );
    kubectl_ok(kc, &["apply", "-f", "-"], Some(&config));
    let get = || json(kc, &["get", "extensionconfigs.v1beta2.runtime.cluster.x-k8s.io", "by-service"]);
    wait_or_report(
        "Discovered False while the CA's Secret is missing",
        WAIT,
        || {
            let c = condition(&get(), "Discovered");
            c["status"] == "False" && c["message"].as_str().is_some_and(|m| m.contains("the Secret does not exist"))
        },
        || format!("{:#}", condition(&get(), "Discovered")),
    )
    .await;
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca);
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: {SERVICE}-ca, namespace: default}}\ndata: {{ca.crt: {bundle}}}\n"
    );
    kubectl_ok(kc, &["apply", "-f", "-"], Some(&secret));
    wait_or_report(
        "the ExtensionConfig discovered through its Service with the injected CA",
        WAIT,
        || condition(&get(), "Discovered")["status"] == "True",
        || format!("{:#}", condition(&get(), "Discovered")),
    )
    .await;
    let discovered = get();
    assert_eq!(discovered["spec"]["clientConfig"]["caBundle"], json!(bundle), "the Secret's ca.crt injected");
    let handlers = discovered["status"]["handlers"].as_array().map(Vec::len);
    assert_eq!(handlers, Some(5), "the same extension's handlers: {discovered:#}");
    kubectl_ok(kc, &["delete", "extensionconfig", "by-service"], None);
}

async fn provisioned(kc: &Path) {
    let cluster = |kc: &Path| json(kc, &["get", "clusters.v1beta2.cluster.x-k8s.io", "rsdk"]);
    wait_or_report(
        "2 Running Machines and TopologyReconciled of rsdk",
        WAIT,
        || running(kc, "rsdk") == 2 && condition(&cluster(kc), "TopologyReconciled")["status"] == "True",
        || format!("{:#}", condition(&cluster(kc), "TopologyReconciled")),
    )
    .await;
}
