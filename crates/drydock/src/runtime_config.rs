//! `--runtime-config`: switches API versions of drydock's own kinds on and off, with
//! kube-apiserver's syntax (`group/version=false`, several separated by commas; a bare
//! `group/version` means `=true`). A version switched off is not served at all (404, and
//! gone from discovery); objects keep being stored in the storage version, which therefore
//! cannot be switched off.

use drydock_api::resource::NativeKind;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// `(group, version, served)` in the order given; later entries win.
    entries: Vec<(String, String, bool)>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RuntimeConfigError {
    #[error("--runtime-config {0:?}: expected GROUP/VERSION[=true|false]")]
    Syntax(String),
    #[error("--runtime-config {group}/{version}: no kind drydock serves has this group and version")]
    Unknown { group: String, version: String },
    #[error(
        "--runtime-config {group}/{version}=false: {version} is the storage version of {kinds}; \
         it cannot be switched off while objects are stored in it"
    )]
    Storage { group: String, version: String, kinds: String },
}

impl RuntimeConfig {
    /// Parses the values of every `--runtime-config` flag.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<Self, RuntimeConfigError> {
        let mut entries = Vec::new();
        for item in values.iter().flat_map(|v| v.as_ref().split(',')).map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item, "true"));
            let served = match value {
                "true" => true,
                "false" => false,
                _ => return Err(RuntimeConfigError::Syntax(item.to_string())),
            };
            let Some((group, version)) = key.rsplit_once('/').filter(|(g, v)| !g.is_empty() && !v.is_empty()) else {
                return Err(RuntimeConfigError::Syntax(item.to_string()));
            };
            entries.push((group.to_string(), version.to_string(), served));
        }
        Ok(Self { entries })
    }

    /// Marks the versions of `kinds` served or not as configured.
    pub fn apply(&self, kinds: &mut [NativeKind]) -> Result<(), RuntimeConfigError> {
        for (group, version, served) in &self.entries {
            let mut found = false;
            let mut stored_in = Vec::new();
            for kind in kinds.iter_mut().filter(|k| k.group() == group) {
                let kind_name = kind.kind().to_string();
                for v in kind.crd.spec.versions.iter_mut().filter(|v| v.name == *version) {
                    found = true;
                    if v.storage && !served {
                        stored_in.push(kind_name.clone());
                    }
                    v.served = *served;
                }
            }
            if !found {
                return Err(RuntimeConfigError::Unknown { group: group.clone(), version: version.clone() });
            }
            if !stored_in.is_empty() {
                return Err(RuntimeConfigError::Storage {
                    group: group.clone(),
                    version: version.clone(),
                    kinds: stored_in.join(", "),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(kinds: &[NativeKind], kind: &str, version: &str) -> bool {
        let k = kinds.iter().find(|k| k.kind() == kind).expect("kind");
        k.crd.spec.versions.iter().any(|v| v.name == version && v.served)
    }

    #[test]
    fn switches_versions_off_and_on_as_kube_apiserver_spells_them() {
        let mut kinds = drydock_api::capi::kinds();
        let rc = RuntimeConfig::parse(&["bootstrap.cluster.x-k8s.io/v1beta1=false"]).expect("parse");
        rc.apply(&mut kinds).expect("apply");
        assert!(!served(&kinds, "KubeadmConfig", "v1beta1"));
        assert!(served(&kinds, "KubeadmConfig", "v1beta2"));
        let rc =
            RuntimeConfig::parse(&["bootstrap.cluster.x-k8s.io/v1beta1=false, bootstrap.cluster.x-k8s.io/v1beta1"])
                .expect("parse");
        rc.apply(&mut kinds).expect("apply");
        assert!(served(&kinds, "KubeadmConfig", "v1beta1"), "a later entry wins");
    }

    #[test]
    fn refuses_what_it_cannot_do() {
        let mut kinds = drydock_api::capi::kinds();
        for bad in ["cluster.x-k8s.io", "cluster.x-k8s.io/v1beta2=no", "/v1=false"] {
            assert!(matches!(RuntimeConfig::parse(&[bad]), Err(RuntimeConfigError::Syntax(_))), "{bad}");
        }
        let unknown = RuntimeConfig::parse(&["example.com/v9=false"]).expect("parse");
        assert!(matches!(unknown.apply(&mut kinds), Err(RuntimeConfigError::Unknown { .. })));
        let storage = RuntimeConfig::parse(&["cluster.x-k8s.io/v1beta2=false"]).expect("parse");
        let err = storage.apply(&mut kinds).expect_err("storage version");
        assert!(err.to_string().contains("storage version of Cluster, ClusterClass, Machine, MachineSet"), "{err}");
        let storage = RuntimeConfig::parse(&["controlplane.cluster.x-k8s.io/v1beta2=false"]).expect("parse");
        let err = storage.apply(&mut kinds).expect_err("storage version");
        assert!(err.to_string().contains("storage version of KubeadmControlPlane"), "{err}");
    }
}
