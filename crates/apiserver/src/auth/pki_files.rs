//! The server's own certificates, kept in `<data dir>/pki/`: a CA made on first start, a
//! serving certificate for the names clients use, and the administrator's client
//! certificate the written kubeconfig carries.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use drydock_api::pki::{Authority, Certificate, KeyAndCert, Leaf};

/// The administrator's user name and group (kubeadm's `kubernetes-admin`).
pub const ADMIN_USER: &str = "kubernetes-admin";
const ADMIN_GROUPS: &[&str] = &[super::MASTERS_GROUP];
/// A client certificate this close to its end is replaced at start.
const RENEW_BEFORE_SECS: i64 = 90 * 24 * 3600;

/// The CA, the serving certificate and the administrator's client certificate.
#[derive(Debug)]
pub struct ServerPki {
    pub ca: Authority,
    pub serving: KeyAndCert,
    pub admin: KeyAndCert,
}

impl ServerPki {
    /// Reads the CA from `dir/pki` (making and keeping one on first start; in memory only
    /// without a dir), issues a serving certificate for `names` (DNS names and IP
    /// addresses), and reuses the administrator's certificate unless it ends within 90 days.
    pub fn load_or_create(dir: Option<&Path>, names: &[String]) -> anyhow::Result<Self> {
        Self::with_ca(dir, names, local_ca(dir)?)
    }

    /// As [`Self::load_or_create`] with the CA `ca` (one the replicas share), kept in
    /// `dir/pki` in place of another; the administrator's certificate follows it.
    pub fn with_ca(dir: Option<&Path>, names: &[String], ca_pem: KeyAndCert) -> anyhow::Result<Self> {
        let ca = Authority::from_pem(&ca_pem.cert_pem, &ca_pem.key_pem).context("the server's CA")?;
        let files = pki_dir(dir)?;
        let kept_ca = files.as_deref().map(|f| read_pair(f, "ca")).transpose()?.flatten();
        let same_ca = kept_ca.as_ref() == Some(&ca_pem);
        if let (Some(f), false) = (&files, same_ca) {
            write_pair(f, "ca", &ca_pem)?;
        }
        let serving = ca.issue(&Leaf::server("kube-apiserver", names))?;
        let kept_admin = files.as_deref().map(|f| read_pair(f, "admin")).transpose()?.flatten();
        let admin = match kept_admin.filter(|a| same_ca && still_good(a)) {
            Some(a) => a,
            None => ca.issue(&Leaf::client(ADMIN_USER, ADMIN_GROUPS))?,
        };
        if let Some(f) = &files {
            write_pair(f, "apiserver", &serving)?;
            write_pair(f, "admin", &admin)?;
        }
        Ok(Self { ca, serving, admin })
    }
}

/// `dir/pki`, created, if there is a dir.
fn pki_dir(dir: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    let files = dir.map(|d| d.join("pki"));
    if let Some(f) = &files {
        std::fs::create_dir_all(f).with_context(|| format!("creating {}", f.display()))?;
    }
    Ok(files)
}

/// The CA kept in `dir/pki`, made (and kept) on first start.
pub fn local_ca(dir: Option<&Path>) -> anyhow::Result<KeyAndCert> {
    let files = pki_dir(dir)?;
    if let Some(pem) = files.as_deref().map(|f| read_pair(f, "ca")).transpose()?.flatten() {
        return Ok(pem);
    }
    let ca = Authority::generate("drydock-ca")?;
    let pem = KeyAndCert { cert_pem: ca.cert_pem().into(), key_pem: ca.key_pem().into() };
    files.as_deref().map(|f| write_pair(f, "ca", &pem)).transpose()?;
    Ok(pem)
}

/// The Secret through which replicas sharing a store share their CA.
pub const SHARED_CA_SECRET: (&str, &str) = ("kube-system", "drydock-serving-ca");

/// The CA every replica on the store `client` reaches uses: the one a replica put in
/// [`SHARED_CA_SECRET`] first, else `local`, which this replica puts there. Anyone who may
/// read Secrets in `kube-system` may read it, as they may read every other credential.
pub async fn shared_ca(client: kube::Client, local: KeyAndCert) -> anyhow::Result<KeyAndCert> {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::Secret;
    let (ns, name) = SHARED_CA_SECRET;
    let secrets: kube::Api<Secret> = kube::Api::namespaced(client, ns);
    let of = |s: Secret| -> anyhow::Result<KeyAndCert> {
        let data = s.data.unwrap_or_default();
        let text = |k: &str| {
            data.get(k)
                .and_then(|v| String::from_utf8(v.0.clone()).ok())
                .with_context(|| format!("Secret {ns}/{name} has no {k}"))
        };
        Ok(KeyAndCert { cert_pem: text("tls.crt")?, key_pem: text("tls.key")? })
    };
    if let Some(found) = secrets.get_opt(name).await.context("reading the shared CA")? {
        return of(found);
    }
    let mut secret = Secret {
        type_: Some("kubernetes.io/tls".into()),
        data: Some(
            [("tls.crt", &local.cert_pem), ("tls.key", &local.key_pem)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.clone().into_bytes())))
                .collect(),
        ),
        ..Default::default()
    };
    secret.metadata.name = Some(name.into());
    match secrets.create(&Default::default(), &secret).await {
        Ok(_) => Ok(local),
        // Another replica shared its CA first.
        Err(kube::Error::Api(e)) if e.code == 409 => of(secrets.get(name).await.context("reading the shared CA")?),
        Err(e) => Err(e).context("sharing the CA"),
    }
}

/// Whether a kept administrator certificate parses and has more than 90 days left.
fn still_good(pem: &KeyAndCert) -> bool {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Certificate::from_pem(&pem.cert_pem)
        .is_ok_and(|c| c.not_after - RENEW_BEFORE_SECS > i64::try_from(now).unwrap_or(i64::MAX))
}

fn paths(dir: &Path, base: &str) -> (PathBuf, PathBuf) {
    (dir.join(format!("{base}.crt")), dir.join(format!("{base}.key")))
}

/// `base.crt` and `base.key` of `dir`, if both are there.
fn read_pair(dir: &Path, base: &str) -> anyhow::Result<Option<KeyAndCert>> {
    let (crt, key) = paths(dir, base);
    if !crt.exists() || !key.exists() {
        return Ok(None);
    }
    let read = |p: &Path| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()));
    Ok(Some(KeyAndCert { cert_pem: read(&crt)?, key_pem: read(&key)? }))
}

/// Writes `base.crt` and `base.key` (readable by the owner alone) into `dir`.
fn write_pair(dir: &Path, base: &str, pem: &KeyAndCert) -> anyhow::Result<()> {
    let (crt, key) = paths(dir, base);
    std::fs::write(&crt, &pem.cert_pem).with_context(|| format!("writing {}", crt.display()))?;
    write_private(&key, &pem.key_pem)
}

/// Writes `text` to `path`, readable by its owner alone (a key, or a kubeconfig holding one).
pub fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    // An older file keeps its mode through `truncate`.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .and_then(|()| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_kept_and_the_certificates_follow_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        let first = ServerPki::load_or_create(Some(dir.path()), &names).expect("first start");
        let again = ServerPki::load_or_create(Some(dir.path()), &names).expect("second start");
        assert_eq!(first.ca.cert_pem(), again.ca.cert_pem(), "the CA survives a restart");
        assert_eq!(first.admin, again.admin, "a good administrator certificate is kept");
        let admin = Certificate::from_pem(&again.admin.cert_pem).expect("admin");
        assert_eq!(
            (admin.common_name.as_str(), admin.organizations.as_slice()),
            (ADMIN_USER, &["system:masters".to_string()][..])
        );
        let mode = std::fs::metadata(dir.path().join("pki/ca.key")).expect("ca.key").permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o077, 0, "keys are private");
        assert!(ServerPki::load_or_create(None, &names).is_ok(), "no data dir: in memory");
    }
}
