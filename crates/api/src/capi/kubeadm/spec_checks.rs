//! Defaulting and validation of [`KubeadmConfigSpec`], shared by KubeadmConfig,
//! KubeadmConfigTemplate, KubeadmControlPlane and KubeadmControlPlaneTemplate.

use std::collections::BTreeSet;

use super::cloud_init::{Encoding, Format, SecretKeySource};
use super::config::KubeadmConfigSpec;
use super::node_configuration::{ImagePullPolicy, NodeRegistrationOptions};
use crate::admission::{FieldError, FieldPath};
use crate::capi::duration;

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

/// Checks of a kubeadm config spec at `path`.
pub(crate) fn validate_config_spec(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_files(spec, path);
    errs.extend(validate_users(spec, path));
    errs.extend(validate_durations(spec, path));
    errs.extend(validate_format(spec, path));
    errs
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

fn validate_durations(spec: &KubeadmConfigSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(api) = spec.cluster_configuration.as_ref().and_then(|c| c.api_server.as_ref()) {
        let p = path.child("clusterConfiguration").child("apiServer").child("timeoutForControlPlane");
        errs.extend(duration::validate_field(api.timeout_for_control_plane.as_deref(), &p));
    }
    if let Some(init) = &spec.init_configuration {
        for (i, t) in init.bootstrap_tokens.iter().flatten().enumerate() {
            let p = path.child("initConfiguration").child("bootstrapTokens").index(i).child("ttl");
            errs.extend(duration::validate_field(t.ttl.as_deref(), &p));
        }
    }
    if let Some(d) = spec.join_configuration.as_ref().and_then(|j| j.discovery.as_ref()) {
        let p = path.child("joinConfiguration").child("discovery").child("timeout");
        errs.extend(duration::validate_field(d.timeout.as_deref(), &p));
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
    if spec.use_experimental_retry_join == Some(true) {
        errs.push(FieldError::forbidden(path.child("useExperimentalRetryJoin"), NOT_WITH_IGNITION));
    }
    for (i, f) in spec.files.iter().flatten().enumerate() {
        if matches!(f.encoding, Some(Encoding::Gzip | Encoding::GzipBase64)) {
            errs.push(FieldError::forbidden(path.child("files").index(i).child("encoding"), NOT_WITH_IGNITION));
        }
    }
    if let Some(disks) = &spec.disk_setup {
        let p = path.child("diskSetup");
        for (i, part) in disks.partitions.iter().flatten().enumerate() {
            if let Some(t) = part.table_type.as_deref().filter(|t| *t != "gpt") {
                errs.push(FieldError::invalid(
                    p.child("partitions").index(i).child("tableType"),
                    t,
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
        let mut s = spec(
            json!({ "initConfiguration": {}, "joinConfiguration": { "nodeRegistration": { "imagePullPolicy": "Always" } } }),
        );
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
                json!({ "joinConfiguration": { "discovery": { "timeout": "5 min" } } }),
                vec!["spec.joinConfiguration.discovery.timeout"],
            ),
            (
                json!({ "format": "ignition", "useExperimentalRetryJoin": true, "users": [ { "name": "u", "inactive": true } ],
                        "files": [ { "path": "/a", "encoding": "gzip" } ],
                        "diskSetup": { "partitions": [ { "device": "/dev/sda", "layout": true, "tableType": "mbr" } ],
                                       "filesystems": [ { "device": "/dev/sda1", "filesystem": "ext4", "label": "d", "partition": "auto", "replaceFS": "ntfs" } ] } }),
                vec![
                    "spec.users[0].inactive",
                    "spec.useExperimentalRetryJoin",
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
    }
}
