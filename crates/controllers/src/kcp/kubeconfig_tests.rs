use std::sync::Arc;

use super::*;
use crate::framework::certificates::{Purpose, secret_for};
use crate::framework::fake_api::FakeSecrets;
use crate::workload::LocalConnector;
use drydock_api::capi::core::v1beta2::APIEndpoint;
use drydock_api::pki::KeyAndCert;
use parking_lot::Mutex;

const SERVER: &str = "https://127.0.0.1:6443/clusters/ns.c1";

fn control_plane(uid: &str) -> KubeadmControlPlane {
    let mut kcp = KubeadmControlPlane::new("cp", Default::default());
    kcp.metadata.namespace = Some("ns".into());
    kcp.metadata.uid = Some(uid.into());
    kcp
}

fn cluster() -> Cluster {
    let mut c = Cluster::new("c1", Default::default());
    c.metadata.namespace = Some("ns".into());
    c
}

/// A CA the user brought: a Secret `c1-ca` of type Opaque.
fn users_ca(fake: &FakeSecrets) -> Authority {
    let ca = Authority::generate("users-ca").expect("CA");
    let pair = KeyAndCert { cert_pem: ca.cert_pem().into(), key_pem: ca.key_pem().into() };
    let mut s = secret_for("ns", "c1", Purpose::ClusterCa, &pair, Default::default());
    s.type_ = Some("Opaque".into());
    s.metadata.owner_references = None;
    fake.insert(s);
    ca
}

fn value(fake: &FakeSecrets) -> Kubeconfig {
    let s = fake.get("ns", "c1-kubeconfig").expect("written");
    Kubeconfig::from_yaml(certificates::text(&s, "value").expect("a value")).expect("parses")
}

fn client_cert(kc: &Kubeconfig) -> String {
    let data = kc.auth_infos[0].auth_info.as_ref().and_then(|a| a.client_certificate_data.clone()).expect("a cert");
    String::from_utf8(BASE64.decode(data).expect("base64")).expect("PEM")
}

/// Whether `cert_pem`'s signature verifies with `ca_pem`'s public key, issuer and subject
/// matching.
fn signed_by(cert_pem: &str, ca_pem: &str) -> bool {
    let (_, ca) = x509_parser::pem::parse_x509_pem(ca_pem.as_bytes()).expect("PEM");
    let ca = ca.parse_x509().expect("CA");
    let (_, leaf) = x509_parser::pem::parse_x509_pem(cert_pem.as_bytes()).expect("PEM");
    let leaf = leaf.parse_x509().expect("certificate");
    leaf.issuer() == ca.subject() && leaf.verify_signature(Some(ca.public_key())).is_ok()
}

#[test]
fn urls_and_rendering() {
    let mut c = cluster();
    assert_eq!(server_url(&c), None);
    c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("10.0.0.1".into()), port: None });
    assert_eq!(server_url(&c), None, "no port: not an endpoint yet");
    c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("127.0.0.1".into()), port: Some(6443) });
    assert_eq!(server_url(&c).as_deref(), Some("https://127.0.0.1:6443"));
    c.annotations_mut().insert(ENDPOINT_PATH_ANNOTATION.into(), "/clusters/ns.c1".into());
    assert_eq!(server_url(&c).as_deref(), Some(SERVER));
    c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("::1".into()), port: Some(80) });
    assert_eq!(server_url(&c).as_deref(), Some("https://[::1]:80/clusters/ns.c1"));

    let ca = Authority::generate("kubernetes").expect("CA");
    let kc = Kubeconfig::from_yaml(&render("c1", SERVER, &ca).expect("rendered").yaml).expect("parses");
    let named = &kc.clusters[0];
    let cl = named.cluster.as_ref().expect("cluster");
    assert_eq!((named.name.as_str(), cl.server.as_deref()), ("c1", Some(SERVER)));
    assert_eq!(cl.tls_server_name.as_deref(), Some("ns.c1.clusters.drydock.internal"));
    let ca_data = BASE64.decode(cl.certificate_authority_data.as_deref().expect("CA data")).expect("base64");
    assert_eq!(ca_data, ca.cert_pem().as_bytes());
    assert_eq!(kc.auth_infos[0].name, "c1-admin");
    assert_eq!(kc.current_context.as_deref(), Some("c1-admin@c1"));
    let ctx = kc.contexts[0].context.as_ref().expect("context");
    assert_eq!((ctx.cluster.as_str(), ctx.user.as_deref()), ("c1", Some("c1-admin")));
    let cert = client_cert(&kc);
    let parsed = Certificate::from_pem(&cert).expect("parses");
    assert_eq!(
        (parsed.common_name.as_str(), parsed.organizations.as_slice()),
        (ADMIN_USER, &[ADMIN_GROUP.to_string()][..])
    );
    assert!(signed_by(&cert, ca.cert_pem()));
    assert!(!signed_by(&cert, Authority::generate("kubernetes").expect("CA").cert_pem()), "another CA's key");
    assert!(kc.auth_infos[0].auth_info.as_ref().is_some_and(|a| a.client_key_data.is_some()), "with its key");

    // A server that is no logical cluster of drydock's gets no TLS server name.
    let plain =
        Kubeconfig::from_yaml(&render("c1", "https://10.0.0.1:6443", &ca).expect("rendered").yaml).expect("parses");
    assert_eq!(plain.clusters[0].cluster.as_ref().and_then(|c| c.tls_server_name.clone()), None);
}

/// Connects every workload URL to the fake, recording the URLs asked for.
fn connector(fake: &FakeSecrets, urls: &Arc<Mutex<Vec<String>>>) -> LocalConnector {
    let (client, urls) = (fake.client(), urls.clone());
    Arc::new(move |url: &str| {
        urls.lock().push(url.to_string());
        Some(client.clone())
    })
}

#[tokio::test]
async fn writes_once_signed_by_the_users_ca_then_reads_nothing_until_the_server_moves() {
    let fake = FakeSecrets::new();
    let urls = Arc::new(Mutex::new(Vec::new()));
    let ctx = fake.context(Some(connector(&fake, &urls)));
    let (written, kcp, c) = (Written::default(), control_plane("kcp-uid"), cluster());
    let ca = users_ca(&fake);

    let out = ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("written");
    assert!(out.wrote);
    let s = fake.get("ns", "c1-kubeconfig").expect("created");
    assert_eq!(s.type_.as_deref(), Some(SECRET_TYPE));
    assert_eq!(s.metadata.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)).map(String::as_str), Some("c1"));
    assert!(is_controlled_by(&s.metadata, &kcp));
    let kc = value(&fake);
    assert!(signed_by(&client_cert(&kc), ca.cert_pem()), "the client certificate is signed by the user's CA");
    let renew_at = out.renew_at.expect("a renewal time");
    let lead = renew_at.duration_since(ctx.clock().now());
    assert!(lead > SignedDuration::from_hours(24 * 182) && lead < SignedDuration::from_hours(24 * 183), "{lead:?}");

    // Steady state: nothing read, nothing written.
    let requests = (fake.count("GET"), fake.count("POST"), fake.count("PATCH"));
    let again = ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("known");
    assert_eq!(again, Outcome { wrote: false, renew_at: Some(renew_at) });
    assert_eq!((fake.count("GET"), fake.count("POST"), fake.count("PATCH")), requests);

    // The workload client is built once, from the kubeconfig, then the server moves: the
    // kubeconfig is rewritten and the cached client forgotten.
    ctx.workload.get("ns", "c1").await.expect("a client");
    ctx.workload.get("ns", "c1").await.expect("cached");
    assert_eq!(*urls.lock(), [SERVER]);
    let moved = "https://127.0.0.2:6443/clusters/ns.c1";
    assert!(ensure(&ctx, &written, "test", &kcp, &c, moved).await.expect("rewritten").wrote);
    assert_eq!(fake.count("PATCH"), 1);
    assert_eq!(value(&fake).clusters[0].cluster.as_ref().and_then(|c| c.server.as_deref()), Some(moved));
    ctx.workload.get("ns", "c1").await.expect("a new client");
    assert_eq!(*urls.lock(), [SERVER, moved]);
}

#[tokio::test]
async fn renews_the_client_certificate_half_a_year_before_it_expires() {
    let fake = FakeSecrets::new();
    let ctx = fake.context(None);
    let (written, kcp, c) = (Written::default(), control_plane("kcp-uid"), cluster());
    users_ca(&fake);
    let first = ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("written");
    let old = client_cert(&value(&fake));

    ctx.clock().advance(Duration::from_secs(180 * 24 * 3600));
    assert!(!ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("not yet").wrote);
    ctx.clock().advance(Duration::from_secs(3 * 24 * 3600));
    let gets = fake.count("GET");
    let renewed = ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("renewed");
    assert!(renewed.wrote && renewed.renew_at > first.renew_at, "{renewed:?} after {first:?}");
    assert_eq!(fake.count("PATCH"), 1);
    let new = client_cert(&value(&fake));
    assert_ne!(new, old);
    assert_eq!(value(&fake).clusters[0].cluster.as_ref().and_then(|c| c.server.as_deref()), Some(SERVER));
    // Read once to judge it (and once for the CA), then known again.
    assert_eq!(fake.count("GET"), gets + 2);
    assert!(!ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("known").wrote);
    assert_eq!(fake.count("GET"), gets + 2);

    // After a restart (nothing known), a kubeconfig due for renewal is found by reading it.
    ctx.clock().advance(Duration::from_secs(183 * 24 * 3600));
    assert!(ensure(&ctx, &Written::default(), "test", &kcp, &c, SERVER).await.expect("renewed").wrote);
    assert_eq!(fake.count("PATCH"), 2);
}

#[tokio::test]
async fn kubeconfigs_it_does_not_control_are_left_alone() {
    let fake = FakeSecrets::new();
    let ctx = fake.context(None);
    let (kcp, c) = (control_plane("kcp-uid"), cluster());
    users_ca(&fake);
    let secret = |type_: &str, owner: &KubeadmControlPlane, value: &str| {
        let mut s = Secret {
            type_: Some(type_.into()),
            data: Some(BTreeMap::from([("value".to_string(), ByteString(value.as_bytes().to_vec()))])),
            ..Default::default()
        };
        s.metadata.name = Some("c1-kubeconfig".into());
        s.metadata.namespace = Some("ns".into());
        s.metadata.owner_references = controller_ref_of(owner).ok().map(|r| vec![r]);
        s
    };
    // The user's (another type), and a generated one controlled by another control plane.
    for s in [secret("Opaque", &kcp, "not even YAML"), secret(SECRET_TYPE, &control_plane("other"), "x")] {
        fake.insert(s);
        let written = Written::default();
        assert_eq!(
            ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("left"),
            Outcome { wrote: false, renew_at: None }
        );
        let gets = fake.count("GET");
        ensure(&ctx, &written, "test", &kcp, &c, SERVER).await.expect("known");
        assert_eq!(fake.count("GET"), gets, "known to be left alone");
    }
    assert_eq!((fake.count("POST"), fake.count("PATCH")), (0, 0));

    // Its own kubeconfig without credentials (as written before certificates existed) is
    // rewritten with them.
    let old =
        KubeconfigFor { server: SERVER, cluster: "c1", user: "c1-admin", context: "c1-admin@c1", ..Default::default() };
    fake.insert(secret(SECRET_TYPE, &kcp, &old.to_yaml()));
    assert!(ensure(&ctx, &Written::default(), "test", &kcp, &c, SERVER).await.expect("rewritten").wrote);
    assert!(!client_cert(&value(&fake)).is_empty());
}

#[tokio::test]
async fn waits_for_the_cluster_ca() {
    let fake = FakeSecrets::new();
    let ctx = fake.context(None);
    let err = ensure(&ctx, &Written::default(), "test", &control_plane("kcp-uid"), &cluster(), SERVER)
        .await
        .expect_err("no CA yet");
    assert!(err.is_missing() && err.to_string().contains("c1-ca"), "{err}");
    assert_eq!(fake.count("POST"), 0);
}
