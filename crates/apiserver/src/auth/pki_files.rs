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
        let files = dir.map(|d| d.join("pki"));
        if let Some(f) = &files {
            std::fs::create_dir_all(f).with_context(|| format!("creating {}", f.display()))?;
        }
        let ca = match files.as_deref().map(|f| read_pair(f, "ca")).transpose()?.flatten() {
            Some(pem) => Authority::from_pem(&pem.cert_pem, &pem.key_pem).context("the CA in the data dir")?,
            None => {
                let ca = Authority::generate("drydock-ca")?;
                let pem = KeyAndCert { cert_pem: ca.cert_pem().into(), key_pem: ca.key_pem().into() };
                files.as_deref().map(|f| write_pair(f, "ca", &pem)).transpose()?;
                ca
            }
        };
        let serving = ca.issue(&Leaf::server("kube-apiserver", names))?;
        let kept_admin = files.as_deref().map(|f| read_pair(f, "admin")).transpose()?.flatten();
        let admin = match kept_admin.filter(still_good) {
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
