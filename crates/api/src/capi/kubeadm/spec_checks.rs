//! Defaulting and validation of the v1beta2 [`KubeadmConfigSpec`], shared by KubeadmConfig,
//! KubeadmConfigTemplate, KubeadmControlPlane and KubeadmControlPlaneTemplate. Timeouts are
//! whole seconds in v1beta2, bounded by the schema, so no duration is parsed here.

use std::collections::BTreeSet;

use super::cloud_init::{Encoding, Format, SecretKeySource};
use super::node_configuration::ImagePullPolicy;
use super::v1beta2::{KubeadmConfigSpec, NodeRegistrationOptions, PartitionTableType};
use crate::admission::{FieldError, FieldPath};

/// Format cloud-config, and image pull policy IfNotPresent on the init and join
/// configurations that are present.
pub(crate) fn default_config_spec(spec: &mut KubeadmConfigSpec) {
    spec.format.get_or_insert(Format::CloudConfig);
    let registrations = [
        spec.init_configuration.as_mut().map(|c| &mut c.node_registration),
        spec.join_configuration.as_mut().map(|c| &mut c.node_registration),
    ];
    for reg in registrations.into_iter().flatten() {
        reg.get_or_insert_with(NodeRegistrationOptions::default)
            .image_pull_policy
            .get_or_insert(ImagePullPolicy::IfNotPresent);
    }
}

/// How long kubeadm's certificates are valid when `certificateValidityPeriodDays` is unset.
pub const DEFAULT_CERTIFICATE_VALIDITY_DAYS: i32 = 365;
/// How long the CAs Cluster API generates are valid when `caCertificateValidityPeriodDays`
/// is unset.
pub const DEFAULT_CA_CERTIFICATE_VALIDITY_DAYS: i32 = 3650;

/// Days the certificates kubeadm signs for `spec` are valid.
pub(crate) fn certificate_validity_days(spec: &KubeadmConfigSpec) -> i32 {
    let cc = spec.cluster_configuration.as_ref();
    cc.and_then(|c| c.certificate_validity_period_days).unwrap_or(DEFAULT_CERTIFICATE_VALIDITY_DAYS)
}

/// Checks of a kubeadm config spec at `path`.
pub(crate) fn validate_config_spec(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_files(spec, path);
    errs.extend(validate_users(spec, path));
    errs.extend(validate_format(spec, path));
    errs.extend(validate_certificate_validity(spec, path));
    errs
}

/// A certificate cannot outlive the CA that signs it.
fn validate_certificate_validity(spec: &KubeadmConfigSpec, path: &FieldPath) -> Option<FieldError> {
    let cc = spec.cluster_configuration.as_ref()?;
    let days = cc.certificate_validity_period_days?;
    let ca = cc.ca_certificate_validity_period_days.unwrap_or(DEFAULT_CA_CERTIFICATE_VALIDITY_DAYS);
    (days > ca).then(|| {
        FieldError::invalid(
            path.child("clusterConfiguration").child("certificateValidityPeriodDays"),
            days,
            format!("must be less than or equal to caCertificateValidityPeriodDays ({ca})"),
        )
    })
}

fn validate_secret_source(s: &SecretKeySource, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if s.name.is_empty() {
        errs.push(FieldError::required(path.child("name"), "secret name must be set"));
    }
    if s.key.is_empty() {
        errs.push(FieldError::required(path.child("key"), "secret key must be set"));
    }
    errs
}

fn validate_files(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut paths = BTreeSet::new();
    for (i, f) in spec.files.iter().flatten().enumerate() {
        let p = path.child("files").index(i);
        if f.content.is_some() && f.content_from.is_some() {
            errs.push(FieldError::invalid(
                p.as_str(),
                f.path.as_str(),
                "only one of content or contentFrom may be specified for a single file",
            ));
        }
        if let Some(src) = &f.content_from {
            errs.extend(validate_secret_source(&src.secret, &p.child("contentFrom").child("secret")));
        }
        if !paths.insert(f.path.as_str()) {
            errs.push(FieldError::invalid(
                p.child("path"),
                f.path.as_str(),
                "path property must be unique among all files",
            ));
        }
    }
    errs
}

fn validate_users(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, u) in spec.users.iter().flatten().enumerate() {
        let p = path.child("users").index(i);
        if u.passwd.is_some() && u.passwd_from.is_some() {
            errs.push(FieldError::invalid(
                p.as_str(),
                u.name.as_str(),
                "only one of passwd or passwdFrom may be specified for a single user",
            ));
        }
        if let Some(src) = &u.passwd_from {
            errs.extend(validate_secret_source(&src.secret, &p.child("passwdFrom").child("secret")));
        }
    }
    errs
}

/// Ignition can express less than cloud-init: some fields are refused with it, and the
/// Ignition settings are refused without it.
fn validate_format(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    const NOT_WITH_IGNITION: &str = "not supported when spec.format is set to \"ignition\"";
    let mut errs = Vec::new();
    if spec.format != Some(Format::Ignition) {
        if spec.ignition.is_some() {
            errs.push(FieldError::forbidden(
                path.child("ignition"),
                "allowed only if spec.format is set to \"ignition\"",
            ));
        }
        return errs;
    }
    for (i, u) in spec.users.iter().flatten().enumerate() {
        if u.inactive == Some(true) {
            errs.push(FieldError::forbidden(path.child("users").index(i).child("inactive"), NOT_WITH_IGNITION));
        }
    }
    for (i, f) in spec.files.iter().flatten().enumerate() {
        if matches!(f.encoding, Some(Encoding::Gzip | Encoding::GzipBase64)) {
            errs.push(FieldError::forbidden(path.child("files").index(i).child("encoding"), NOT_WITH_IGNITION));
        }
    }
    if let Some(disks) = &spec.disk_setup {
        let p = path.child("diskSetup");
        for (i, part) in disks.partitions.iter().flatten().enumerate() {
            if let Some(t) = part.table_type.filter(|t| *t != PartitionTableType::Gpt) {
                errs.push(FieldError::invalid(
                    p.child("partitions").index(i).child("tableType"),
                    t.as_str(),
                    "only partition type \"gpt\" is supported when spec.format is set to \"ignition\"",
                ));
            }
        }
        for (i, fs) in disks.filesystems.iter().flatten().enumerate() {
            let fp = p.child("filesystems").index(i);
            if fs.replace_fs.is_some() {
                errs.push(FieldError::forbidden(fp.child("replaceFS"), NOT_WITH_IGNITION));
            }
            if fs.partition.is_some() {
                errs.push(FieldError::forbidden(fp.child("partition"), NOT_WITH_IGNITION));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(v: serde_json::Value) -> KubeadmConfigSpec {
        serde_json::from_value(v).unwrap()
    }

    fn fields(errs: &[FieldError]) -> Vec<&str> {
        errs.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn defaults() {
        let s = json!({
            "initConfiguration": {},
            "joinConfiguration": { "nodeRegistration": { "imagePullPolicy": "Always" } },
        });
        let mut s = spec(s);
        default_config_spec(&mut s);
        assert_eq!(s.format, Some(Format::CloudConfig));
        let init = s.init_configuration.unwrap().node_registration.unwrap();
        assert_eq!(init.image_pull_policy, Some(ImagePullPolicy::IfNotPresent));
        let join = s.join_configuration.unwrap().node_registration.unwrap();
        assert_eq!(join.image_pull_policy, Some(ImagePullPolicy::Always));
    }

    #[test]
    fn checks() {
        let p = FieldPath::new("spec");
        let cases = [
            (
                json!({ "files": [ { "path": "/a", "content": "x", "contentFrom": { "secret": { "name": "s", "key": "k" } } } ] }),
                vec!["spec.files[0]"],
            ),
            (json!({ "files": [ { "path": "/a" }, { "path": "/a" } ] }), vec!["spec.files[1].path"]),
            (
                json!({ "files": [ { "path": "/a", "contentFrom": { "secret": { "name": "", "key": "k" } } } ] }),
                vec!["spec.files[0].contentFrom.secret.name"],
            ),
            (
                json!({ "users": [ { "name": "u", "passwd": "x", "passwdFrom": { "secret": { "name": "s", "key": "k" } } } ] }),
                vec!["spec.users[0]"],
            ),
            (json!({ "ignition": {} }), vec!["spec.ignition"]),
            (
                json!({ "clusterConfiguration": { "certificateValidityPeriodDays": 1000, "caCertificateValidityPeriodDays": 365 } }),
                vec!["spec.clusterConfiguration.certificateValidityPeriodDays"],
            ),
            (
                json!({ "format": "ignition", "users": [ { "name": "u", "inactive": true } ],
                        "files": [ { "path": "/a", "encoding": "gzip" } ],
                        "diskSetup": { "partitions": [ { "device": "/dev/sda", "layout": true, "tableType": "mbr" } ],
                                       "filesystems": [ { "device": "/dev/sda1", "filesystem": "ext4", "label": "d", "partition": "auto", "replaceFS": "ntfs" } ] } }),
                vec![
                    "spec.users[0].inactive",
                    "spec.files[0].encoding",
                    "spec.diskSetup.partitions[0].tableType",
                    "spec.diskSetup.filesystems[0].replaceFS",
                    "spec.diskSetup.filesystems[0].partition",
                ],
            ),
        ];
        for (v, want) in cases {
            assert_eq!(fields(&validate_config_spec(&spec(v.clone()), &p)), want, "{v}");
        }
        let ok = spec(json!({ "format": "ignition", "ignition": { "containerLinuxConfig": { "strict": true } } }));
        assert!(validate_config_spec(&ok, &p).is_empty());
        // The CA's default validity is ten years.
        let long = spec(json!({ "clusterConfiguration": { "certificateValidityPeriodDays": 1095 } }));
        assert!(validate_config_spec(&long, &p).is_empty());
        let gpt = json!({ "format": "ignition", "diskSetup": { "partitions": [ { "device": "/dev/sda", "tableType": "gpt" } ] } });
        assert!(validate_config_spec(&spec(gpt), &p).is_empty());
    }
}
